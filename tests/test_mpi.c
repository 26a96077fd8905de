/*
 * MPI runs through real mpirun: 1, 2, 3 and 4 ranks each record every
 * (trial, fold) exactly once and give the single-process leaderboard,
 * metric for metric; SIGKILL of rank 0 mid-sweep and SIGTERM mid-sweep
 * (exit 3) both resume to the same leaderboard; malformed and
 * out-of-protocol messages from a worker are each reported and rank 0
 * goes on; a worker that cannot set up ends the job within seconds with
 * its cause; refused items are queued again, and a job lost three times
 * stops the run; the progress line in mpirun's log is plain lines (the
 * ranks' terminal is Open MPI's). Every mpirun command is printed so it can
 * be rerun by hand.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_proc.h"
#include "test_mpirun.h"
#include "test_runs.h"
#include "journal/journal.h"
#include "util/util.h"


static char tmp[256], log_path[320];

static pid_t start(const char *cmd) { return tm_start(cmd, log_path); }
static int sh(const char *cmd, int limit) { return tm_sh(cmd, log_path, limit); }

static char *board(const char *dir) { return tr_board(dir, tmp); }

/* Reruns the sweep plainly on np ranks: it must complete the folder, and
 * its leaderboard must equal ref. */
static void resume_matches(const char *sweep, const char *dir, int np, const char *ref, const char *after)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mpirun %s -np %d '%s' run '%s' --out '%s' --quiet", tm_mpirun_flags(), np, FS_TEST_BIN,
             sweep, dir);
    CHECK(sh(cmd, 300) == 0);
    char *got = board(dir);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboard after %s and resume differs:\n%s\nvs\n%s", after, got, ref);
    free(got);
}

static long rank0_pid(const char *dir)
{
    char path[320];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *s = tp_read_file(path, NULL);
    char *p = s ? strstr(s, "\"pid\":") : NULL;
    long pid = p ? atol(p + 6) : -1;
    free(s);
    return pid;
}

static void wait_folds(const char *journal, int n)
{
    for (int i = 0; i < 6000 && tp_count_in_file(journal, "\"kind\":\"fold\"") < n; i++) usleep(5000);
}

int main(void)
{
#ifndef FS_HAVE_MPI
    TEST_SKIP("this build has no MPI (apt-get install libopenmpi-dev openmpi-bin, then rebuild)");
#endif
    if (system("command -v mpirun >/dev/null 2>&1") != 0) TEST_SKIP("mpirun is not on PATH");
    /* Open MPI's own allocations show up as leaks at exit in a sanitizer
     * build; the same code paths are leak-checked without MPI by test_run. */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    tp_tmpdir(tmp, sizeof tmp, "mpi");
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    char sweep[300], cmd[1200], dir[320], journal[360];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, TR_SWEEP);

    /* The reference: one process, no MPI. */
    snprintf(dir, sizeof dir, "%s/single", tmp);
    snprintf(cmd, sizeof cmd, "'%s' run '%s' --out '%s' --quiet", FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 120) == 0);
    char *ref = board(dir);
    CHECK(tp_count_in_file(log_path, "rank") == 0);

    /* 1 to 4 ranks: the same leaderboard, every fold exactly once (the
     * scenarios below run 2 and 3 ranks again). */
    for (int np = 1; np <= 4; np++) {
        if ((np == 2 || np == 4) && !t_repeats(np == 2 ? "the 2-rank run" : "the 4-rank run")) continue;
        snprintf(dir, sizeof dir, "%s/np%d", tmp, np);
        snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
        snprintf(cmd, sizeof cmd, "mpirun %s -np %d '%s' run '%s' --out '%s' --quiet", tm_mpirun_flags(), np,
                 FS_TEST_BIN, sweep, dir);
        CHECK_MSG(sh(cmd, 300) == 0, "np %d failed:\n%s", np, tp_read_file(log_path, NULL));
        CHECK_MSG(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24, "np %d: %d fold records", np,
                  tp_count_in_file(journal, "\"kind\":\"fold\""));
        CHECK(tp_count_in_file(journal, "\"kind\":\"trial\"") == 8);
        /* The run record says how many ranks ran it (the report shows it). */
        char ranks[40];
        snprintf(ranks, sizeof ranks, "\"ranks\":%d,\"backend\":\"cpu\"", np);
        CHECK_MSG(tp_count_in_file(journal, ranks) == 1, "np %d: no run record with %s", np, ranks);
        char *got = board(dir);
        CHECK_MSG(strcmp(ref, got) == 0, "np %d leaderboard differs:\n%s\nvs single process:\n%s", np, got, ref);
        free(got);
        /* The weights travel back to rank 0: the same model files, byte for byte. */
        snprintf(cmd, sizeof cmd, "diff -r '%s/single/models' '%s/models'", tmp, dir);
        CHECK_MSG(system(cmd) == 0, "np %d: model files differ from the single process's", np);
        snprintf(cmd, sizeof cmd, "%s/single/models", tmp);
        CHECK_MSG(access(cmd, F_OK) == 0, "no models folder");
    }

    /* SIGKILL of rank 0 mid-sweep: the job dies; the rerun completes it. */
    snprintf(dir, sizeof dir, "%s/kill", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 3 '%s' run '%s' --out '%s' --quiet", tm_mpirun_flags(), FS_TEST_BIN, sweep,
             dir);
    pid_t pid = start(cmd);
    wait_folds(journal, 4);
    long r0 = rank0_pid(dir);
    CHECK(r0 > 0);
    printf("kill -KILL %ld (rank 0) after %d fold records\n", r0, tp_count_in_file(journal, "\"kind\":\"fold\""));
    if (r0 > 0) kill((pid_t)r0, SIGKILL);
    CHECK(tp_wait_limited(pid, 120) != 0);
    tr_wait_unlocked(dir);
    int partial = tp_count_in_file(journal, "\"kind\":\"fold\"");
    CHECK(partial >= 4 && partial < 24);
    resume_matches(sweep, dir, 2, ref, "SIGKILL");
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);

    /* SIGTERM mid-sweep (to rank 0, as a scheduler's signal reaches it):
     * exit 3 through mpirun, a journal the rerun completes. */
    snprintf(dir, sizeof dir, "%s/term", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 3 '%s' run '%s' --out '%s' --quiet --grace 0", tm_mpirun_flags(), FS_TEST_BIN,
             sweep, dir);
    pid = start(cmd);
    wait_folds(journal, 3);
    r0 = rank0_pid(dir);
    printf("kill -TERM %ld (rank 0)\n", r0);
    if (r0 > 0) kill((pid_t)r0, SIGTERM);
    CHECK(tp_wait_limited(pid, 120) == 3);
    CHECK(tp_count_in_file(log_path, "interrupted") == 1);
    partial = tp_count_in_file(journal, "\"kind\":\"fold\"");
    CHECK(partial >= 3 && partial < 24);
    resume_matches(sweep, dir, 2, ref, "SIGTERM");
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);

    /* A worker that sends garbage first: each message reported, run intact. */
    snprintf(dir, sizeof dir, "%s/inject", tmp);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 2 -x FOLDSWEEP_TEST_INJECT=1 '%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 300) == 0);
    char *log = tp_read_file(log_path, NULL);
    const char *reasons[] = {"shorter than the", "bad magic", "protocol version 99", "header says REQUEST",
                             "capacity -5", "not a message a worker sends", "was not sent to rank 1"};
    for (size_t k = 0; k < sizeof reasons / sizeof reasons[0]; k++)
        CHECK_MSG(log && strstr(log, reasons[k]), "rank 0 did not report \"%s\"", reasons[k]);
    free(log);
    char *got = board(dir);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboard with injected messages differs");
    free(got);

    /* A worker whose setup fails: the job ends within seconds with the cause
     * (rank, host, reason) instead of spinning in a collective; the folder
     * then resumes to the reference. */
    snprintf(dir, sizeof dir, "%s/setupfail", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 3 -x FOLDSWEEP_TEST_SETUP_FAIL=2 '%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    double t0 = fs_now();
    int rc = sh(cmd, 60);
    CHECK_MSG(rc != 0 && rc != -1, "a failed worker setup gave exit %d", rc);
    CHECK_MSG(fs_now() - t0 < 30, "a failed worker setup took %.0f s to end the job", fs_now() - t0);
    log = tp_read_file(log_path, NULL);
    CHECK_MSG(log && strstr(log, "rank 2 could not start") && strstr(log, "FOLDSWEEP_TEST_SETUP_FAIL") && !strstr(log, "folds to train"),
              "no cause printed:\n%s", log ? log : "");
    free(log);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 0);
    resume_matches(sweep, dir, 3, ref, "a failed setup");

    /* A warning during setup reaches every rank before MPI is up: the
     * job exits 3 (requeue) instead of dying; after the last fold, 0. */
    snprintf(dir, sizeof dir, "%s/early", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 2 -x FOLDSWEEP_TEST_RAISE=setup '%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 120) == 3);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 0);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 2 -x FOLDSWEEP_TEST_RAISE=trained '%s' run '%s' --out '%s'",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 300) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);
    /* The profile counts every rank's threads: worker time adds up. */
    log = tp_read_file(log_path, NULL);
    char *pct = log ? strstr(log, "% of worker time") : NULL, *open = pct;
    while (open && open > log && *open != '(') open--;
    CHECK_MSG(open && *open == '(' && atof(open + 1) > 1.0 && atof(open + 1) <= 100.0, "profile: %.40s",
              open ? open : "missing");
    /* Open MPI gives the ranks a terminal of its own; mpirun's output is a
     * file, so the progress line is plain lines, no "\r" or ESC[K redraw. */
    CHECK_MSG(log && strstr(log, "| folds ") && !strchr(log, '\r') && !strchr(log, '\033'), "progress redrawn into a log:\n%s",
              log ? log : "");
    free(log);

    /* A worker that refuses an item: rank 0 sees it missing from the
     * worker's next REQUEST and queues it again; every fold once. */
    snprintf(dir, sizeof dir, "%s/refuse", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(cmd, sizeof cmd, "mpirun %s -np 3 -x FOLDSWEEP_TEST_REFUSE=1 '%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 300) == 0);
    CHECK_MSG(tp_count_in_file(log_path, "queued again") == 1, "the refused item was not queued again:\n%s",
              tp_read_file(log_path, NULL));
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);
    got = board(dir);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboard with a refused item differs");
    free(got);

    /* A worker that refuses everything: the same job comes back to it and
     * is lost three times; the run stops with exit 1 instead of waiting. */
    snprintf(dir, sizeof dir, "%s/refuseall", tmp);
    snprintf(cmd, sizeof cmd,
             "mpirun %s -np 2 -x FOLDSWEEP_TEST_REFUSE=1:all '%s' run '%s' --out '%s' --quiet --threads 1",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK(sh(cmd, 120) == 1);
    CHECK_MSG(tp_count_in_file(log_path, "was lost 3 times") == 1, "no lost-job error:\n%s",
              tp_read_file(log_path, NULL));
    resume_matches(sweep, dir, 2, ref, "the refusals");

    free(ref);
    if (!t_failures) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
