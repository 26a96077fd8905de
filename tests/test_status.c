/*
 * test_status: `foldsweep status` tells a run that is going from one that
 * is not. A finished run is "finished"; one with folds missing and no run
 * going is "interrupted" with the command that resumes it, its begun
 * trials interrupted, not in flight; a run holding the journal's lock (here
 * a child process of the test, as a real run holds it) is "running", and
 * "stopped" while its process is suspended. --json gives one object with
 * every field docs/cli.md documents (and no other); --watch redraws while a
 * run goes, ends by itself when none is going, and ends cleanly on Ctrl-C.
 * And the run's own progress line counts the journal's folds on a resume
 * ("folds 4/4", not "0/0").
 */
#include <limits.h>
#include <sys/stat.h>
#include <time.h>

#include "journal/journal.h"
#include "json/json.h"
#include "test_proc.h"

static char tmp[256], dir[320], sweep[320];

static const char SWEEP[] = "data:\n  inputs: set.txt\n  window: 7\n  folds: 2\nmodel:\n  filters: [4, 6]\n"
                            "training:\n  epochs: 1\nrun:\n  threads: 1\n";

/* The folder as a finished run leaves it, less its last fold record. */
static void drop_last_fold(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *text = tp_read_file(path, NULL);
    CHECK(text != NULL);
    if (!text) return;
    char *line = NULL;
    for (char *p = text; (p = strstr(p, "\"kind\":\"fold\"")); p++) line = p;
    CHECK(line != NULL);
    if (!line) return;
    while (line > text && line[-1] != '\n') line--;
    char *end = strchr(line, '\n');
    memmove(line, end + 1, strlen(end + 1) + 1);
    tp_write_text(path, text);
    free(text);
}

static void test_progress_line(void)
{
    CHECK(tp_run("run '%s' --out '%s'", sweep, dir) == 0);
    CHECK_CONTAINS(out_text, "| folds 4/4,");
    /* A rerun of the finished sweep trains nothing: the run's folds, not 0/0. */
    CHECK(tp_run("run '%s' --out '%s'", sweep, dir) == 0);
    CHECK_CONTAINS(out_text, "0 folds to train (4 already done)");
    CHECK_CONTAINS(out_text, "| folds 4/4,");
    drop_last_fold();
    CHECK(tp_run("run '%s' --out '%s'", sweep, dir) == 0);
    CHECK_CONTAINS(out_text, "1 folds to train (3 already done)");
    CHECK_CONTAINS(out_text, "| folds 4/4,");
}

/* The value of key in a JSON object text (one line), or NULL. */
static const FsJson *field(const FsJsonDoc *d, const char *key) { return json_get(d->root, key); }

static int field_is(const FsJsonDoc *d, const char *key, const char *want)
{
    const FsJson *v = field(d, key);
    if (!v) return 0;
    if (v->type == FS_JSON_NULL) return !strcmp(want, "null");
    return !strcmp(v->str ? v->str : "", want);
}

/* docs/cli.md's table of status --json fields: `name` in its first column. */
static int doc_fields(char names[][40], int max)
{
    char path[600];
    snprintf(path, sizeof path, "%s/docs/cli.md", FS_TEST_SRC_DIR);
    char *doc = tp_read_file(path, NULL);
    CHECK_MSG(doc != NULL, "cannot read %s", path);
    if (!doc) return 0;
    char *at = strstr(doc, "<!-- status-json-fields -->");
    CHECK_MSG(at != NULL, "%s has no status-json-fields table", path);
    int n = 0;
    for (char *p = at ? strstr(at, "\n| `") : NULL; p && n < max; p = strstr(p + 1, "\n| `")) {
        char *q = strchr(p + 4, '`');
        if (!q || q - p - 4 >= 40) break;
        memcpy(names[n], p + 4, (size_t)(q - p - 4));
        names[n][q - p - 4] = '\0';
        n++;
        char *next_line = strchr(p + 1, '\n');
        if (!next_line || strncmp(next_line, "\n|", 2)) break; /* the table ends */
    }
    free(doc);
    return n;
}

static void test_json_fields(const FsJsonDoc *d)
{
    char names[64][40];
    int n = doc_fields(names, 64);
    CHECK(n > 20);
    for (int i = 0; i < n; i++) CHECK_MSG(field(d, names[i]) != NULL, "documented field %s is missing", names[i]);
    for (const FsJson *c = d->root ? d->root->child : NULL; c; c = c->next) {
        int found = 0;
        for (int i = 0; i < n && !found; i++) found = !strcmp(c->key, names[i]);
        CHECK_MSG(found, "field %s is not documented in docs/cli.md", c->key);
    }
}

static void check_json(const char *state, const char *unfinished, const char *folds_done)
{
    CHECK(tp_run("status '%s' --json", dir) == 0);
    CHECK(tp_count(out_text, "\n") == 1);
    FsJsonDoc d;
    char why[200] = "";
    CHECK_MSG(json_parse(&d, out_text, strlen(out_text), why, sizeof why) == 0, "%s: %s", why, out_text);
    if (!d.root) return;
    CHECK_MSG(field_is(&d, "state", state), "state: %s", out_text);
    CHECK(field_is(&d, "run_folder", dir));
    CHECK(field_is(&d, "trials_total", "2") && field_is(&d, "folds_total", "4") && field_is(&d, "metric", "q3"));
    CHECK_MSG(field_is(&d, "trials_unfinished", unfinished), "%s", out_text);
    CHECK_MSG(field_is(&d, "folds_done", folds_done), "%s", out_text);
    test_json_fields(&d);
    json_free(&d);
}

/* A stand-in for a run: a child holding the journal's lock, as a run does,
 * until killed; with stop, it appends a run record (its pid) and suspends
 * itself. Returns its pid once the lock is held. */
static pid_t lock_holder(int stop)
{
    int p[2];
    CHECK(pipe(p) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        FsJournal j;
        FsErr err = {0};
        if (journal_open(&j, dir, &err) != 0) _exit(1);
        if (stop && journal_append_run(&j, 2, 2, "q3", 0, &err) != 0) _exit(1);
        if (write(p[1], "x", 1) != 1) _exit(1);
        if (stop) raise(SIGSTOP);
        for (;;) pause();
    }
    char c;
    close(p[1]);
    CHECK(read(p[0], &c, 1) == 1);
    close(p[0]);
    if (stop) { /* the stop comes after the byte: wait until it has happened */
        int st;
        CHECK(waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st));
    }
    return pid;
}

static void end_holder(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void test_states(void)
{
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "state        finished\n");
    CHECK_CONTAINS(out_text, "folds        4 of 4\n");
    check_json("finished", "0", "4");

    /* No run going, a fold missing: interrupted, and how to resume. */
    drop_last_fold();
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "1 interrupted, 0 left");
    CHECK(strstr(out_text, "in flight") == NULL);
    /* The command names the program as it was invoked (a path here) and
     * the file the run was started with (it said "foldsweep run SWEEP.yaml"). */
    char want[6000], abs[PATH_MAX], moved[400];
    CHECK(realpath(sweep, abs) != NULL);
    snprintf(want, sizeof want, "interrupted (no run is going); resume with: %s run %s --out %s\n", FS_TEST_BIN, abs,
             dir);
    CHECK_CONTAINS(out_text, want);
    /* The file gone: status writes SWEEP.yaml in its place and says what it stands for. */
    snprintf(moved, sizeof moved, "%s.moved", sweep);
    CHECK(rename(sweep, moved) == 0);
    CHECK(tp_run("status '%s'", dir) == 0);
    snprintf(want, sizeof want, "interrupted (no run is going); resume with: %s run SWEEP.yaml --out %s\n"
             "             (SWEEP.yaml: the file it was started with; ", FS_TEST_BIN, dir);
    CHECK_CONTAINS(out_text, want);
    CHECK(rename(moved, sweep) == 0);
    check_json("interrupted", "1", "3");

    pid_t holder = lock_holder(0);
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "state        running");
    CHECK_CONTAINS(out_text, "1 in flight, 0 left");
    check_json("running", "1", "3");
    end_holder(holder);

    holder = lock_holder(1);
    CHECK(tp_run("status '%s'", dir) == 0);
    snprintf(want, sizeof want, "state        stopped: the run's process (pid %ld) is suspended", (long)holder);
    CHECK_CONTAINS(out_text, want);
    check_json("stopped", "1", "3");
    end_holder(holder);
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "state        interrupted");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_watch(void)
{
    /* No run going: one frame, at once. */
    double t0 = now_s();
    CHECK(tp_run("status --watch '%s'", dir) == 0);
    CHECK(now_s() - t0 < 5);
    CHECK(tp_count(out_text, "run folder ") == 1);
    CHECK(tp_run("status --watch 1 '%s'", dir) == 0); /* a number after --watch is its value */
    CHECK(tp_count(out_text, "run folder ") == 1);
    CHECK(tp_run("status '%s' --watch 0", dir) == 2);
    CHECK_CONTAINS(err_text, "--watch must be a number from 0.1 to 86400, not 0");
    CHECK(tp_run("status '%s' --watch=soon", dir) == 2);

    /* A run going: frames until it ends, then the last one, by itself. */
    char log[400];
    snprintf(log, sizeof log, "%s/watch.txt", tmp);
    pid_t holder = lock_holder(0);
    char *argv[] = {"foldsweep", "status", dir, "--watch", "0.2", NULL};
    pid_t w = tp_spawn(argv, log);
    usleep(1000 * 1000);
    end_holder(holder);
    t0 = now_s();
    CHECK(tp_wait_limited(w, 10) == 0);
    CHECK(now_s() - t0 < 3);
    char *text = tp_read_file(log, NULL);
    CHECK(text && tp_count(text, "run folder ") >= 3);
    CHECK(text && tp_count(text, "state        running") >= 2);
    const char *last = text ? strstr(text, "state        interrupted") : NULL;
    CHECK_MSG(last && !strstr(last + 1, "state        running"), "the last frame is not the ended run's:\n%s", text);
    free(text);

    /* Ctrl-C: ends at once, exit 0, with whole frames only. */
    holder = lock_holder(0);
    char *argv2[] = {"foldsweep", "status", dir, "--watch", "--json", NULL};
    w = tp_spawn(argv2, log);
    usleep(700 * 1000);
    t0 = now_s();
    kill(w, SIGINT);
    CHECK(tp_wait_limited(w, 10) == 0);
    CHECK(now_s() - t0 < 2);
    end_holder(holder);
    text = tp_read_file(log, NULL);
    CHECK(text && tp_count(text, "\n") >= 1);
    for (char *p = text, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        CHECK_MSG(nl != NULL, "a torn last frame: %s", p);
        if (!nl) break;
        FsJsonDoc d;
        CHECK_MSG(json_parse(&d, p, (size_t)(nl - p), NULL, 0) == 0, "not one JSON object a line: %.*s",
                  (int)(nl - p), p);
        CHECK(field_is(&d, "state", "running"));
        json_free(&d);
    }
    free(text);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "status");
    snprintf(dir, sizeof dir, "%s/r", tmp);
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, SWEEP);
    CHECK(tp_run("synth -o '%s/set.txt' --proteins 40", tmp) == 0);
    test_progress_line();
    /* test_progress_line left the run finished again. */
    test_states();
    test_watch();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
