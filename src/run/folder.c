/*
 * folder: the run folder's files other than the journal: the canonical
 * sweep that guards it (a damaged one is named as such), setting an earlier
 * run aside; and the journal checked against the sweep and the data. (The folder itself
 * is created by fs_mkdir_p.)
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "run/state.h"

char *run_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *s = fs_malloc(cap);
    while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) s = fs_realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = 0;
    return s;
}

int run_folder_set_aside(const char *dir, FsJournal *j, FILE *out, FsErr *err)
{
    char aside[FS_PATH_IN_DIR], from[FS_PATH_IN_DIR], to[FS_PATH_SUFFIXED];
    struct stat sb;
    int n = 1;
    do snprintf(aside, sizeof aside, "%s/previous-%d", dir, n++);
    while (lstat(aside, &sb) == 0 && n < 100000);
    if (mkdir(aside, 0777) != 0) return fs_err_set(err, "%s: cannot create: %s", aside, strerror(errno)), -1;
    DIR *d = opendir(dir);
    if (!d) return fs_err_set(err, "%s: cannot list: %s", dir, strerror(errno)), -1;
    int moved = 0, rc = 0;
    struct dirent *e;
    /* The journal goes last: its lock keeps other runs out meanwhile (its
     * holder's note stays: this run holds it still). */
    while ((e = readdir(d)) && rc == 0) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strncmp(e->d_name, "previous-", 9) ||
            !strcmp(e->d_name, "journal.jsonl") || !strcmp(e->d_name, "journal.lock"))
            continue;
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", aside, e->d_name);
        if (rename(from, to) != 0) rc = (fs_err_set(err, "%s: cannot move to %s: %s", from, aside, strerror(errno)), -1);
        moved++;
    }
    closedir(d);
    snprintf(from, sizeof from, "%s/journal.jsonl", dir);
    snprintf(to, sizeof to, "%s/journal.jsonl", aside);
    if (rc == 0 && rename(from, to) != 0)
        rc = (fs_err_set(err, "%s: cannot move to %s: %s", from, aside, strerror(errno)), -1);
    if (rc != 0) return -1;
    fs_sync_dir(dir);
    fs_sync_dir(aside);
    journal_close(j);
    if (journal_open(j, dir, err) != 0) return -1;
    if (out) fprintf(out, "restart: the earlier run in %s (%d files and folders) is kept in %s\n", dir, moved + 1, aside);
    return 0;
}

/* The folder's sweep.yaml does not load as a sweep: -1 with err saying so
 * and what repairs it, else 0. */
static int claim_damaged(const char *dir, const char *path, const char *old, FsErr *err)
{
    FsSweep was;
    FsErrList errs = {0};
    memset(&was, 0, sizeof was);
    if (sweep_load_string(&was, old, path, &errs) == 0) {
        sweep_free(&was);
        return 0;
    }
    char why[900];
    errlist_join(&errs, why, sizeof why);
    errlist_free(&errs);
    size_t n = strlen(why);
    if (n && why[n - 1] == '\n') why[n - 1] = '\0';
    fs_err_set(err,
               "%s is damaged (it no longer loads as a sweep):\n%s\n`%s repair %s` rewrites it from the "
               "journal's own record of the sweep (keeping the damaged file); then rerun",
               path, why, fs_program(), dir);
    return -1;
}

int run_folder_claim(const char *dir, const FsSweep *sw, char **old_out, int *fresh, FsErr *err)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    char *old = run_read_file(path);
    *old_out = NULL;
    *fresh = old == NULL;
    if (!old) return 0;
    if (strcmp(old, sw->canonical) && claim_damaged(dir, path, old, err) != 0) return free(old), -1;
    char diff[2048];
    if (sweep_diff(old, sw->canonical, diff, sizeof diff) == 0) return free(old), 0;
    /* An extension: every change must leave the trials trained as they were. */
    int n = sweep_diff_fixed(old, sw->canonical, diff, sizeof diff);
    if (n > 0) {
        free(old);
        fs_err_set(err,
                   "%s holds a different sweep, and %d of the changes alter the trials it has trained, so the run "
                   "cannot extend it:\n%sUse another --out folder, rerun the sweep it holds, or add --restart to "
                   "set this folder's run aside (kept in %s/previous-N) and start again",
                   dir, n, diff, dir);
        return -1;
    }
    *old_out = old;
    return 0;
}

int run_folder_write_sweep(const char *dir, const FsSweep *sw, FsErr *err)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    return fs_write_file_atomic(path, sw->canonical, strlen(sw->canonical), err);
}

static int cmp_id(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* An extension drops trials the journal holds: the changes that may have
 * dropped them are named. */
static int dropped_by_extension(const char *dir, const char *old, const FsSweep *sw, int unknown, const char *first,
                                FsErr *err)
{
    char diff[2048];
    sweep_diff(old, sw->canonical, diff, sizeof diff);
    fs_err_set(err,
               "%s holds a different sweep, and this one no longer has %d trial%s that the folder has trained "
               "(trial %s%s), so the run cannot extend it: an extension keeps every trained trial (a changed "
               "epochs, seed or other training option, a removed value, or search.random over another grid or "
               "with a smaller budget gives other trials). The changes:\n%sPut back what those trials need, use "
               "another --out folder, or add --restart to set this folder's run aside (kept in %s/previous-N) "
               "and start again",
               dir, unknown, unknown == 1 ? "" : "s", first, unknown > 1 ? ", ..." : "", diff, dir);
    return -1;
}

int run_folder_check_trials(const char *dir, const FsJournal *j, const FsSweep *sw, const char *old, FsErr *err)
{
    /* The same sweep.yaml and the same data give the same trial ids, so a
     * trial record with an id this sweep does not have was written by a
     * foldsweep that computed ids differently: ids hash the trial config's
     * text, and builds before the shortest float text wrote 0.3 as
     * 0.300000012. Resuming would train every trial again beside the old
     * records (two rows each in the leaderboard), so it is refused. */
    if (j->n_trials == 0) return 0;
    const char **ids = fs_malloc(sizeof *ids * ((size_t)sw->n_trials + 1));
    for (int t = 0; t < sw->n_trials; t++) ids[t] = sw->trials[t].id;
    qsort(ids, (size_t)sw->n_trials, sizeof *ids, cmp_id);
    int unknown = 0;
    const char *first = NULL;
    for (int i = 0; i < j->n_trials; i++) {
        const char *key = j->trials[i].trial;
        if (!bsearch(&key, ids, (size_t)sw->n_trials, sizeof *ids, cmp_id) && !unknown++) first = key;
    }
    free(ids);
    if (!unknown) return 0;
    if (old) return dropped_by_extension(dir, old, sw, unknown, first, err);
    fs_err_set(err,
               "%s: the journal names %d trial%s that this sweep does not have (trial %s%s), though its "
               "sweep.yaml and data match: the folder was written by an earlier foldsweep, which computed trial "
               "ids from float settings written as 0.300000012 rather than 0.3. Its results stay readable "
               "(leaderboard, status, report, export, predict); to run the sweep with this version, use another "
               "--out folder, or add --restart to set this folder's run aside (kept in %s/previous-N) and start "
               "again",
               dir, unknown, unknown == 1 ? "" : "s", first, unknown > 1 ? ", ..." : "", dir);
    return -1;
}

int run_folder_sense(RunState *st, const char *old, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    uint64_t val[FS_MAX_FOLDS];
    for (int k = 0; k < st->folds.n; k++) val[k] = data_examples(&st->ds, data_fold_id(&st->folds, k), 1, NULL);
    const char **ids = fs_calloc((size_t)sw->n_trials + 1, sizeof *ids);
    FsJournalSweep js;
    /* A journal from before sweep records that is extended records the
     * sweep its trials were trained under first (its first version). */
    if (old && !st->j.sweep_text && journal_append_sweep(&st->j, old, val, st->folds.n, err) != 0) return free(ids), -1;
    report_journal_sweep(&js, ids, sw, st->folds.n, val);
    js.canonical = sw->canonical;
    int rc = journal_set_sweep(&st->j, &js, err);
    free(ids);
    if (rc != 0) return -1;
    return journal_append_sweep(&st->j, sw->canonical, val, st->folds.n, err);
}

/* FOLDSWEEP_TEST_CLAIM_PAUSE=PATH: the run holds the journal's lock and
 * has not yet looked at the folder: it says so (PATH.reached) and waits
 * for PATH, so a test can start a second run at exactly this moment. */
static void claim_pause(void)
{
    const char *go = fs_test_fault("CLAIM_PAUSE");
    if (!go) return;
    char reached[FS_PATH_SUFFIXED];
    snprintf(reached, sizeof reached, "%s.reached", go);
    FILE *f = fopen(reached, "w");
    if (f) fclose(f);
    for (int i = 0; access(go, F_OK) != 0; i++) {
        if (i == 12000) FS_DIE("test hook CLAIM_PAUSE: %s did not appear in 120 s", go);
        usleep(10000);
    }
}

int run_folder_foreign(const char *dir, FsJournal *j, FsErr *err)
{
    claim_pause();
    if (!j->fresh) return 0; /* a run's journal: its records, or a run held it */
    DIR *d = opendir(dir);
    if (!d) return 0; /* made by journal_open, so gone since: the next step says so */
    char first[256] = "";
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "journal.jsonl") ||
            !strcmp(e->d_name, "journal.lock"))
            continue;
        if (!n++) snprintf(first, sizeof first, "%s", e->d_name);
    }
    closedir(d);
    if (!n) return 0;
    int made = j->created;
    journal_discard(j);
    return fs_err_set(err, "%s holds %d file%s (%s%s) but %s: not a run folder, and the run would write its own "
                      "files among them (sweep.yaml over one of the same name); give --out a new or empty folder",
                      dir, n, n == 1 ? "" : "s", first, n > 1 ? ", ..." : "",
                      made ? "no journal.jsonl" : "an empty journal.jsonl that no run has written"), -1;
}
