/*
 * test_runs.h: what the whole-run tests (test_run, test_mpi) share: a small
 * sweep that trains in seconds, the leaderboard of a run folder without
 * its timing columns, so two runs can be compared metric for metric, and
 * the one check that a sweep gives the same leaderboard on 1 and 2
 * threads, on MPI ranks and across a kill and resume (tr_same_everywhere).
 * Include after test_proc.h.
 */
#ifndef FS_TEST_RUNS_H
#define FS_TEST_RUNS_H

#include <dirent.h>

#include "journal/journal.h"
#include "test_mpirun.h"

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
    char models[420];
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

/* ---------------------------------------------------------------------- */
/* The same leaderboard everywhere                                         */

/* A run folder's leaderboard as text that no thread count, rank count or
 * resume may change (timings left out); malloc'd. */
typedef char *(*TrBoard)(const char *dir);

/* The runs of one sweep that tr_same_everywhere compares. Each goes to the
 * folder <scratch>/<tag><what>, its output to that folder's name + ".log":
 * "1" (1 thread, the reference), "2" (2 threads), "-kill" (killed on 2
 * threads, resumed on 1), "-np<ranks>" (mpirun). */
typedef struct {
    const char *sweep, *scratch, *tag;
    TrBoard board;
    int threads;          /* nonzero: the board on 2 threads too */
    int kill_folds;       /* > 0: SIGKILLed (tr_kill_after) once the journal holds this many fold records */
    const char *kill_env; /* else non-NULL: the FOLDSWEEP_TEST_* hook, set to kill_at, that SIGKILLs it */
    const char *kill_at;
    int ranks;            /* > 0: on this many MPI ranks too (said and skipped without mpirun) */
    int folds;            /* > 0: every folder's fold records at the end (a resume trains no fold twice) */
    int models;           /* > 0: every folder's fold model files are the 1-thread run's, byte for byte (this many) */
    /* Optional: an earlier sweep version each folder trains first (on 2
     * threads in the "2" folder, else on 1), so that the runs compared extend
     * it (test_extend), and the fold records each folder holds after it. */
    const char *extends;
    int extends_folds;
    /* Optional: checks of the killed folder before its resume. */
    void (*killed)(const char *dir);
    int ranks_from; /* > 0: on ranks_from..ranks MPI ranks (the fewer only where t_repeats) */
} TrSame;

static inline int tr_folds_in(const char *dir)
{
    char journal[600];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    return tp_count_in_file(journal, "\"kind\":\"fold\"");
}

/* The folder holds s->folds fold records (when s->folds > 0). */
static inline void tr_same_folds(const TrSame *s, const char *dir)
{
    if (s->folds > 0)
        CHECK_MSG(tr_folds_in(dir) == s->folds, "%s: %d fold records, not %d", dir, tr_folds_in(dir), s->folds);
}

/* Folder <tag><what> and its log. */
static inline void tr_same_paths(const TrSame *s, const char *what, char *dir, char *log)
{
    snprintf(dir, 400, "%s/%s%s", s->scratch, s->tag, what);
    snprintf(log, 420, "%s.log", dir);
}

/* The folder's board is ref, byte for byte, it holds s->folds fold records
 * and (s->models) the reference run's model files. */
static inline void tr_same_board(const TrSame *s, const char *dir, const char *ref, const char *what)
{
    char *got = s->board(dir);
    CHECK_MSG(ref && got && !strcmp(ref, got), "%s, %s:\n%s\nvs 1 thread:\n%s", s->sweep, what, got ? got : "",
              ref ? ref : "");
    tr_same_folds(s, dir);
    free(got);
    if (s->models > 0) {
        char ref_dir[400], ref_log[420];
        tr_same_paths(s, "1", ref_dir, ref_log);
        CHECK_MSG(tr_same_models(ref_dir, dir, what) == s->models, "%s, %s: not %d model files compared", s->sweep,
                  what, s->models);
    }
}

/* Folder <tag><what> and its log, trained on s->extends first (when set). */
static inline void tr_same_start(const TrSame *s, const char *what, const char *threads, char *dir, char *log)
{
    tr_same_paths(s, what, dir, log);
    if (!s->extends) return;
    CHECK(tr_run(s->extends, dir, threads, log) == 0);
    CHECK_MSG(tr_folds_in(dir) == s->extends_folds, "%s: %d fold records after %s, not %d", dir, tr_folds_in(dir),
              s->extends, s->extends_folds);
}

/* The sweep run on `threads` into <tag><what>. */
static inline void tr_same_run(const TrSame *s, const char *what, const char *threads, char *dir, char *log)
{
    tr_same_start(s, what, threads, dir, log);
    CHECK(tr_run(s->sweep, dir, threads, log) == 0);
}

/* Killed (s->kill_folds or s->kill_env) on 2 threads, s->killed, resumed on 1. */
static inline void tr_same_kill(const TrSame *s, char *dir, char *log)
{
    tr_same_start(s, "-kill", "1", dir, log);
    if (s->kill_folds > 0) {
        tr_kill_after(s->sweep, dir, "2", s->kill_folds, log);
    } else {
        setenv(s->kill_env, s->kill_at, 1);
        CHECK_MSG(tr_run(s->sweep, dir, "2", log) == 128 + SIGKILL, "%s=%s did not kill the run", s->kill_env,
                  s->kill_at);
        unsetenv(s->kill_env);
    }
    if (s->killed) s->killed(dir);
    CHECK(tr_run(s->sweep, dir, "1", log) == 0);
}

/* On s->ranks MPI ranks (a hang fails after 300 s); 0 when skipped without
 * mpirun. Open MPI's own allocations show as leaks in a sanitizer build, so
 * leak checks are off for mpirun alone. */
static inline int tr_have_mpirun(void)
{
    return system("command -v mpirun >/dev/null 2>&1") == 0;
}

static inline int tr_same_mpirun(const TrSame *s, int ranks, char *dir, char *log)
{
    if (!tr_have_mpirun()) {
        printf("mpirun is not on PATH: the %d-rank run is skipped\n", ranks);
        return 0;
    }
    char what[32], cmd[2000], *asan = getenv("ASAN_OPTIONS");
    asan = asan ? strdup(asan) : NULL;
    snprintf(what, sizeof what, "-np%d", ranks);
    tr_same_start(s, what, "1", dir, log);
    snprintf(cmd, sizeof cmd, "mpirun %s -np %d '%s' run '%s' --out '%s' --quiet", tm_mpirun_flags(), ranks,
             FS_TEST_BIN, s->sweep, dir);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    CHECK(tm_sh(cmd, log, 300) == 0);
    if (asan) setenv("ASAN_OPTIONS", asan, 1), free(asan);
    else unsetenv("ASAN_OPTIONS");
    return 1;
}

/* The sweep's leaderboard on 1 thread, and the same byte for byte on every
 * other run s asks for; returns the reference board (malloc'd) for the
 * caller's own checks. */
static inline char *tr_same_everywhere(const TrSame *s)
{
    char dir[400], log[420], what[64];
    tr_same_run(s, "1", "1", dir, log);
    char *ref = s->board(dir);
    tr_same_folds(s, dir);
    /* The killed run trains on 2 threads, the MPI run on several ranks: in
     * a sanitizer build either is the concurrent path's one run. */
    const int killed = s->kill_folds > 0 || s->kill_env;
    const int concurrent = killed || (s->ranks > 0 && tr_have_mpirun());
    if (s->threads && (!concurrent || t_repeats("the 2-thread run"))) {
        tr_same_run(s, "2", "2", dir, log);
        tr_same_board(s, dir, ref, "2 threads");
    }
    if (killed) {
        tr_same_kill(s, dir, log);
        tr_same_board(s, dir, ref, "after a SIGKILL and resume");
    }
    const int from = s->ranks_from > 0 && s->ranks_from < s->ranks && t_repeats("the runs on fewer ranks")
                         ? s->ranks_from
                         : s->ranks;
    for (int np = from; s->ranks > 0 && np <= s->ranks; np++)
        if (tr_same_mpirun(s, np, dir, log)) {
            snprintf(what, sizeof what, "%d MPI ranks", np);
            tr_same_board(s, dir, ref, what);
        }
    return ref;
}

#endif
