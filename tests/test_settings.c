/*
 * test_settings: run_settings, the one place where a run's threads,
 * backend, folder and keep_models are decided (src/run/settings.c), and
 * that what it decides is what runs. The threads a command starts are
 * counted for real: this test links with pthread_create wrapped
 * (tests/CMakeLists.txt) and calls cli_main in-process.
 *  1. run_settings on made-up machines: --threads over run.threads over
 *     the machine; alone, every core; under MPI the node's share (none for
 *     rank 0 when the ranks outnumber the cores, at least one for a
 *     worker); one process's own work (solo), every core; --backend over
 *     run.backend; --out over run.out over runs/<name>; keep_models.
 *  2. `run --threads 1` of a sweep with a test section (the ensemble's and
 *     the refit's evaluation, the refit's training) starts no thread more
 *     than the same run without one: its evaluations used every core.
 *  3. `refit --threads 1` and `evaluate --threads 1` start none; without
 *     --threads the refit's one model has every core (a helper on each
 *     other core) and evaluate runs on every core.
 */
#include <pthread.h>
#include <sys/stat.h>
#include <stdatomic.h>

#include "cli/cli.h"
#include "run/run.h"
#include "test_proc.h"

/* ---------------------------------------------------------------------- */
/* Threads started, counted (-Wl,--wrap=pthread_create).                   */

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static atomic_int started;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    int rc = __real_pthread_create(t, a, fn, arg);
    if (rc == 0) atomic_fetch_add(&started, 1);
    return rc;
}

/* cli_main on the words of line (space-separated, no quoting), in this
 * process; the threads it started go to *threads. Its exit code. */
static int command(const char *line, int *threads)
{
    char buf[2048], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "foldsweep %s", line);
    printf("in-process: %s\n", buf);
    for (char *w = strtok(buf, " "); w && argc < 31; w = strtok(NULL, " ")) argv[argc++] = w;
    argv[argc] = NULL;
    fflush(stdout);
    int before = atomic_load(&started);
    int rc = cli_main(argc, argv);
    fflush(stdout);
    *threads = atomic_load(&started) - before;
    printf("  -> exit %d, %d thread%s started\n", rc, *threads, *threads == 1 ? "" : "s");
    return rc;
}

/* ---------------------------------------------------------------------- */
/* 1: the rules, on made-up machines.                                      */

static FsMpi machine(int rank, int size, int on_node, int cores)
{
    FsMpi m;
    memset(&m, 0, sizeof m);
    m.active = size > 1;
    m.rank = rank, m.size = size, m.local_size = on_node, m.node_cores = cores;
    return m;
}

static void test_rules(void)
{
    FsSweep sw;
    memset(&sw, 0, sizeof sw);
    sw.backend = FS_BACKEND_AUTO;
    sw.keep_models = 10;
    FsRunOptions o = {.sweep_path = "sweeps/my.grid.yaml", .backend = -1};
    FsRunSettings s;
    FsMpi alone = machine(0, 1, 1, 16), rank0 = machine(0, 4, 4, 16), worker = machine(2, 4, 4, 16);
    FsMpi crowded0 = machine(0, 8, 8, 4), crowded = machine(5, 8, 8, 4);

    run_settings(&s, &o, &sw, &alone);
    CHECK(s.threads == 16 && s.solo_threads == 16);
    CHECK(s.backend == FS_BACKEND_AUTO && s.keep_models == 10);
    CHECK_MSG(!strcmp(s.out_dir, "runs/my"), "%s", s.out_dir);
    run_settings(&s, &o, &sw, &rank0);
    CHECK(s.threads == 4 && s.solo_threads == 16);
    run_settings(&s, &o, &sw, &worker);
    CHECK(s.threads == 4);
    run_settings(&s, &o, &sw, &crowded0);
    CHECK(s.threads == 0 && s.solo_threads == 4); /* rank 0 only coordinates */
    run_settings(&s, &o, &sw, &crowded);
    CHECK(s.threads == 1);

    /* The sweep's run section, then the command line over it. */
    char out[] = "elsewhere";
    sw.threads = 3, sw.backend = FS_BACKEND_CPU, sw.out_dir = out, sw.keep_models = FS_KEEP_ALL;
    run_settings(&s, &o, &sw, &crowded0);
    CHECK(s.threads == 3 && s.solo_threads == 3);
    CHECK(s.backend == FS_BACKEND_CPU && s.keep_models == FS_KEEP_ALL && !strcmp(s.out_dir, "elsewhere"));
    o.threads = 2, o.backend = FS_BACKEND_CUDA, o.out_dir = "mine";
    run_settings(&s, &o, &sw, &alone);
    CHECK(s.threads == 2 && s.solo_threads == 2);
    CHECK(s.backend == FS_BACKEND_CUDA && !strcmp(s.out_dir, "mine"));

    /* No sweep (evaluate, predict): the threads alone. */
    FsRunOptions bare = {.backend = -1};
    run_settings(&s, &bare, NULL, &alone);
    CHECK(s.threads == 16 && s.solo_threads == 16);
    bare.threads = 5;
    run_settings(&s, &bare, NULL, &alone);
    CHECK(s.solo_threads == 5);
    CHECK(run_solo_threads(5) == 5);
    FsMpi here;
    fsmpi_alone(&here);
    CHECK(run_solo_threads(0) == here.node_cores && here.node_cores >= 1);
}

/* The out folder of a run folder's saved sweep: `run DIR/sweep.yaml`
 * resumes DIR (status says it does; it started a run in runs/sweep). */
/* The progress line: redrawn only where the output is the user's
 * terminal; under mpirun a rank's terminal is Open MPI's own, and
 * mpirun's output decides (-1: not under mpirun). --progress-line wins. */
static void test_progress_line(void)
{
    CHECK(run_progress_redraw(FS_LINE_AUTO, 1, -1) == 1);
    CHECK(run_progress_redraw(FS_LINE_AUTO, 0, -1) == 0);
    CHECK(run_progress_redraw(FS_LINE_AUTO, 1, 0) == 0); /* mpirun ... > log */
    CHECK(run_progress_redraw(FS_LINE_AUTO, 1, 1) == 1); /* mpirun on the user's terminal */
    CHECK(run_progress_redraw(FS_LINE_AUTO, 0, 1) == 0);
    CHECK(run_progress_redraw(FS_LINE_BAR, 0, 0) == 1);
    CHECK(run_progress_redraw(FS_LINE_PLAIN, 1, -1) == 0);
}

static void test_home(const char *tmp)
{
    char dir[300], path[400], home[400];
    snprintf(dir, sizeof dir, "%s/r2", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    tp_write_text(path, "# a run folder's saved sweep\n");
    CHECK(run_home_dir(path, home, sizeof home) == 0); /* no journal: not a run folder */
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    tp_write_text(path, "");
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    CHECK(run_home_dir(path, home, sizeof home) == 1 && !strcmp(home, dir));
    snprintf(path, sizeof path, "%s/other.yaml", dir); /* the user's own file beside it */
    CHECK(run_home_dir(path, home, sizeof home) == 0);

    FsSweep sw;
    memset(&sw, 0, sizeof sw);
    FsRunOptions o = {.sweep_path = "x/r2/sweep.yaml", .backend = -1, .home_dir = "x/r2"};
    FsRunSettings s;
    FsMpi alone = machine(0, 1, 1, 2);
    run_settings(&s, &o, &sw, &alone);
    CHECK_MSG(!strcmp(s.out_dir, "x/r2"), "%s", s.out_dir);
    char out[] = "from-run-out";
    sw.out_dir = out; /* run.out, then --out, still win */
    run_settings(&s, &o, &sw, &alone);
    CHECK(!strcmp(s.out_dir, "from-run-out"));
    o.out_dir = "given";
    run_settings(&s, &o, &sw, &alone);
    CHECK(!strcmp(s.out_dir, "given"));
}

/* ---------------------------------------------------------------------- */
/* 2, 3: the threads the commands start.                                   */

static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 60, seed: 3}\n"
    "  window: 7\n"
    "  folds: 2\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: [4, 8]\n"
    "  kernel: 3\n"
    "training:\n"
    "  epochs: 1\n"
    "  batch_size: 16\n"
    "  seed: 5\n";

static void test_commands(const char *tmp)
{
    char sweep[300], sweep_t[300], test_rec[300], a[300], b[300], text[2000], line[1500];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(sweep_t, sizeof sweep_t, "%s/t.yaml", tmp);
    snprintf(test_rec, sizeof test_rec, "%s/test.rec", tmp);
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    /* 60 test proteins: about 20,000 residues, several of predict_run's
     * chunks, so an evaluation on more threads would start more. */
    CHECK(tp_run("synth -o '%s' --proteins 60 --seed 99", test_rec) == 0);
    tp_write_text(sweep, SWEEP);
    snprintf(text, sizeof text, "%stest:\n  inputs: [test.rec]\n  top: 1\n  refit: true\n", SWEEP);
    tp_write_text(sweep_t, text);
    int cores = run_solo_threads(0), plain, with_test, n;
    if (cores < 2) printf("note: one core: parts 2 and 3 cannot tell --threads 1 from every core here\n");

    snprintf(line, sizeof line, "run %s --out %s --threads 1 --quiet", sweep, a);
    CHECK(command(line, &plain) == 0);
    snprintf(line, sizeof line, "run %s --out %s --threads 1 --quiet", sweep_t, b);
    CHECK(command(line, &with_test) == 0);
    snprintf(line, sizeof line, "%s/journal.jsonl", b);
    CHECK(tp_count_in_file(line, "\"source\":\"test\"") == 2); /* the ensemble and the refit */
    CHECK_MSG(with_test == plain, "the test phase started %d threads beyond the run's %d on --threads 1",
              with_test - plain, plain);

    /* A finished folder run again: nothing trained, so no profile of zeros. */
    CHECK(tp_run("run '%s' --out '%s' --threads 1", sweep, a) == 0);
    CHECK_CONTAINS(out_text, "0 folds to train");
    CHECK_MSG(!strstr(out_text, "profile:") && strstr(out_text, "training thread"), "%s", out_text);

    /* --out into a folder of someone's own files: refused, nothing written there. */
    char mine[300];
    snprintf(mine, sizeof mine, "%s/mine", tmp);
    CHECK(mkdir(mine, 0755) == 0);
    snprintf(line, sizeof line, "%s/sweep.yaml", mine);
    tp_write_text(line, "# my own notes\n");
    CHECK(tp_run("run '%s' --out '%s' --threads 1 --quiet", sweep, mine) == 1);
    CHECK_CONTAINS(err_text, "holds 1 file (sweep.yaml) but no journal.jsonl: not a run folder");
    CHECK(tp_count_in_file(line, "# my own notes") == 1);
    snprintf(line, sizeof line, "%s/journal.jsonl", mine);
    CHECK(access(line, F_OK) != 0);

    snprintf(line, sizeof line, "refit %s --rank 1 --threads 1", a);
    CHECK(command(line, &n) == 0 && n == 0);
    snprintf(line, sizeof line, "refit %s --rank 2", a);
    CHECK(command(line, &n) == 0);
    CHECK_MSG(n == cores - 1, "the refit's one model got %d helpers, not one on each other core (%d)", n, cores - 1);
    snprintf(line, sizeof line, "evaluate %s %s --threads 1", a, test_rec);
    CHECK(command(line, &n) == 0 && n == 0);
    snprintf(line, sizeof line, "evaluate %s %s", a, test_rec);
    CHECK(command(line, &n) == 0);
    CHECK_MSG(cores < 2 || (n >= 1 && n <= cores - 1), "evaluate started %d threads on %d cores", n, cores);
}

int main(void)
{
    char tmp[256];
    tp_tmpdir(tmp, sizeof tmp, "settings");
    unsetenv("FOLDSWEEP_TEAM"); /* =0 would keep the refit's helpers away */
    test_rules();
    test_progress_line();
    test_home(tmp);
    test_commands(tmp);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
