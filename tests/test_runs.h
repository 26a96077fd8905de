/*
 * test_runs.h: what the whole-run tests (test_run, test_mpi) share: a small
 * sweep that trains in seconds, and the leaderboard of a run folder without
 * its timing columns, so two runs can be compared metric for metric.
 * Include after test_proc.h.
 */
#ifndef FS_TEST_RUNS_H
#define FS_TEST_RUNS_H

#include <dirent.h>

#include "journal/journal.h"

/* mpirun may end before a killed rank has (a sanitizer build takes long to
 * unmap its memory); the next run would then be told, rightly, that the
 * folder is in use. Waits until nothing holds the journal's lock. */
static inline void tr_wait_unlocked(const char *dir)
{
    for (int i = 0; i < 600 && journal_is_locked(dir) == 1; i++) usleep(50000);
    CHECK_MSG(journal_is_locked(dir) != 1, "%s is still locked 30 s after its job ended", dir);
}

/* 8 trials x 3 folds on a synthetic set. */
static const char *TR_SWEEP =
    "data:\n"
    "  synth: {proteins: 150, seed: 3}\n"
    "  window: 9\n"
    "  folds: 3\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: [8, 16]\n"
    "  kernel: [3, 5]\n"
    "  dense: [0, 16]\n"
    "training:\n"
    "  epochs: 3\n"
    "  batch_size: 16\n"
    "  seed: 5\n";

/* Every fold model file (fold0-2) of each trial folder under ref/models is
 * in dir/models, byte for byte; returns how many were compared. */
static inline int tr_same_models(const char *ref, const char *dir, const char *what)
{
    char models[400];
    snprintf(models, sizeof models, "%s/models", ref);
    DIR *d = opendir(models);
    int files = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        for (int k = 0; k < 3; k++) {
            char pa[800], pb[800];
            snprintf(pa, sizeof pa, "%s/models/%s/fold%d.safetensors", ref, e->d_name, k);
            snprintf(pb, sizeof pb, "%s/models/%s/fold%d.safetensors", dir, e->d_name, k);
            size_t na = 0, nb = 0;
            char *x = tp_read_file(pa, &na), *y = tp_read_file(pb, &nb);
            CHECK_MSG(x && y && na == nb && !memcmp(x, y, na), "%s: %s differs from %s", what, pb, pa);
            free(x);
            free(y);
            files++;
        }
    }
    if (d) closedir(d);
    return files;
}

/* `foldsweep leaderboard DIR --format csv` cut before the "seconds" column
 * (times differ from run to run; everything before it must not). scratch
 * is a folder for the command's output. Returns a malloc'd string. */
static inline char *tr_board(const char *dir, const char *scratch)
{
    char out[512], d[512];
    snprintf(out, sizeof out, "%s/board.csv", scratch);
    snprintf(d, sizeof d, "%s", dir);
    char *argv[] = {"foldsweep", "leaderboard", d, "--format", "csv", NULL};
    CHECK(tp_run_argv(argv, out) == 0);
    char *s = tp_read_file(out, NULL);
    if (!s) return strdup("");
    int col = 0;
    for (char *p = s; *p && *p != '\n'; p++) {
        if (!strncmp(p, ",seconds,", 9)) break;
        if (*p == ',') col++;
    }
    char *res = calloc(strlen(s) + 1, 1), *w = res;
    for (char *line = s; *line;) {
        char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        int c = 0;
        for (char *p = line; p < end && !(*p == ',' && ++c > col); p++) *w++ = *p;
        *w++ = '\n';
        line = *end ? end + 1 : end;
    }
    free(s);
    return res;
}

/* `foldsweep run SWEEP --out DIR --threads T`, both outputs to log_path;
 * the exit code. */
static inline int tr_run(const char *sweep, const char *dir, const char *threads, const char *log_path)
{
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", (char *)dir, "--threads", (char *)threads, NULL};
    return tp_run_argv(argv, log_path);
}

/* `mpirun -np NP foldsweep run SWEEP --out DIR --quiet`, both outputs to
 * log_path; the exit code. */
static inline int tr_mpirun(const char *sweep, const char *dir, int np, const char *log_path)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "mpirun %s --oversubscribe -np %d '%s' run '%s' --out '%s' --quiet >'%s' 2>&1",
             geteuid() == 0 ? "--allow-run-as-root" : "", np, FS_TEST_BIN, sweep, dir, log_path);
    printf("$ %s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Starts `foldsweep run SWEEP --out DIR --threads T --quiet`, SIGKILLs it
 * once DIR's journal holds `folds` fold records (or after 8 s), and
 * returns how many it holds then. */
static inline int tr_kill_after(const char *sweep, const char *dir, const char *threads, int folds,
                                const char *log_path)
{
    char journal[600];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", (char *)dir, "--threads", (char *)threads,
                    "--quiet", NULL};
    pid_t pid = tp_spawn(argv, log_path);
    for (int i = 0; i < 4000 && tp_count_in_file(journal, "\"kind\":\"fold\"") < folds; i++) usleep(2000);
    kill(pid, SIGKILL);
    tp_wait(pid);
    int n = tp_count_in_file(journal, "\"kind\":\"fold\"");
    printf("killed after %d fold records\n", n);
    return n;
}

#endif
