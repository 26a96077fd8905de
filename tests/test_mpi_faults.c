/*
 * MPI process faults through real mpirun (issue "Processes", items 12-14):
 *  - Ctrl-C (SIGINT) to mpirun: Open MPI sends every rank SIGCONT, then
 *    SIGTERM odls_base_sigkill_timeout (1 s) later, then SIGKILL 1 s after
 *    that. Rank 0 must exit 3 on its own inside that window with the
 *    in-flight folds checkpointed and the leaderboard written; a rerun
 *    resumes from the checkpoints.
 *  - A rank that fails inside Open MPI's start-up (rank 1 under ulimit -v:
 *    its shared memory cannot be mapped) or is held back past the start-up
 *    watchdog: the job ends with exit 1 naming the stage, never a hang; a
 *    start that is only slow is left alone.
 *  - A stopped worker (SIGSTOP): after --worker-timeout its folds go to the
 *    other ranks, and the run ends with exit 3 naming it; a rerun completes.
 * Every command is printed so it can be rerun by hand.
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

static int folds_in(const char *dir)
{
    char journal[400];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    return tp_count_in_file(journal, "\"kind\":\"fold\"");
}

static void wait_folds(const char *dir, int n)
{
    for (int i = 0; i < 12000 && folds_in(dir) < n; i++) usleep(5000);
}

static int log_has(const char *s)
{
    char *log = tp_read_file(log_path, NULL);
    int has = log && strstr(log, s);
    free(log);
    return has;
}


static long rank0_pid(const char *dir)
{
    char path[400];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *s = tp_read_file(path, NULL);
    char *p = s ? strstr(s, "\"pid\":") : NULL;
    long pid = p ? atol(p + 6) : -1;
    free(s);
    return pid;
}

/* A plain rerun on 2 ranks completes the folder: every fold once. */
static void resume_completes(const char *sweep, const char *dir, int folds, const char *after)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mpirun %s -np 2 '%s' run '%s' --out '%s' --quiet", tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK_MSG(sh(cmd, 300) == 0, "the rerun after %s failed:\n%s", after, tp_read_file(log_path, NULL));
    CHECK_MSG(folds_in(dir) == folds, "after %s and a rerun: %d fold records, not %d", after, folds_in(dir), folds);
}

/* Item 12: Ctrl-C to mpirun. Each rank runs under a shell that ignores the
 * signals and writes the rank's exit code, so the test sees whether rank 0
 * left with 3 by itself or was killed. */
static void test_ctrl_c(const char *sweep)
{
    char dir[320], cmd[1600], exitf[400];
    snprintf(dir, sizeof dir, "%s/ctrlc", tmp);
    snprintf(exitf, sizeof exitf, "%s/exit0", tmp);
    snprintf(cmd, sizeof cmd,
             "exec mpirun %s -np 3 sh -c 'trap \"\" TERM INT; \"$0\" \"$@\"; echo $? >%s/exit$OMPI_COMM_WORLD_RANK' "
             "'%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), tmp, FS_TEST_BIN, sweep, dir);
    pid_t pid = start(cmd);
    wait_folds(dir, 1);
    usleep(300 * 1000); /* folds in flight, past their first batches */
    double t0 = fs_now();
    printf("kill -INT %ld (mpirun, as Ctrl-C) after %d fold records\n", (long)pid, folds_in(dir));
    kill(pid, SIGINT);
    int rc = tp_wait_limited(pid, 60);
    printf("mpirun exit %d after %.2f s\n", rc, fs_now() - t0);
    char *code = tp_read_file(exitf, NULL);
    CHECK_MSG(code && atoi(code) == 3, "rank 0 did not exit 3 by itself (killed first?): %s", code ? code : "none");
    free(code);
    CHECK_MSG(log_has("interrupted"), "no 'interrupted' line:\n%s", tp_read_file(log_path, NULL));
    char path[500];
    snprintf(path, sizeof path, "%s/leaderboard.csv", dir);
    CHECK_MSG(access(path, F_OK) == 0, "no leaderboard after Ctrl-C");
    snprintf(cmd, sizeof cmd, "find '%s/checkpoints' -name '*.ckpt' | grep -q .", dir);
    CHECK_MSG(system(cmd) == 0, "no checkpoint of the folds in flight");
    int partial = folds_in(dir);
    CHECK(partial >= 1 && partial < 24);
    tr_wait_unlocked(dir);
    resume_completes(sweep, dir, 24, "Ctrl-C");
}

/* Item 13: the start-up watchdog. */
static void test_startup(const char *sweep)
{
    char dir[320], cmd[1600];
    /* The real fault: rank 1's shared memory cannot be mapped under a
     * memory limit, and both ranks waited in MPI_Comm_dup forever. A
     * little more memory (54000 here) got through MPI's start-up, and the
     * rank then could start no training thread and took jobs it never
     * trained: a hang too. Where each limit bites depends on the machine's
     * load, libraries and the binary's own size; either way the run must
     * end at once, naming what failed: the watchdog the stage, or the rank
     * its threads or the job records it could not allocate. */
    /* Limits from tight to loose, 7.5 MB apart, until the run completes:
     * the binary's own size (CUDA, HDF5 and their libraries) moves where
     * each stage fails, so no fixed limit keeps meaning the same stage.
     * Every failure must end the run at once and be named: by foldsweep
     * (the watchdog the stage, the rank its threads, job records or a
     * fold's model, or the allocator the bytes a training thread could not
     * get), or
     * by Open MPI's own start-up (a limit too tight for MPI_Init_thread:
     * PMIx, shared memory or its components, before any of foldsweep's
     * code can speak); at least one limit must
     * reach foldsweep's own handling. */
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer reserves terabytes of address space for its shadow:
     * under any ulimit -v the rank dies in ASan's own start-up, before
     * foldsweep's code runs. The plain build checks these limits. */
    printf("note: ulimit -v cases skipped under AddressSanitizer\n");
    const int first = 0, last = -1;
#else
    const int first = 45000, last = 45000 + 16 * 7500;
#endif
    int ours = 0, completed = 0;
    for (int limit = first; limit <= last && !completed; limit += 7500) {
        snprintf(dir, sizeof dir, "%s/ulimit%d", tmp, limit);
        snprintf(cmd, sizeof cmd,
                 "mpirun %s -np 2 -x FOLDSWEEP_STARTUP_TIMEOUT=5 sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then "
                 "ulimit -v %d; fi; exec \"$0\" \"$@\"' '%s' run '%s' --out '%s' --quiet",
                 tm_mpirun_flags(), limit, FS_TEST_BIN, sweep, dir);
        double t0 = fs_now();
        int rc = sh(cmd, 90);
        printf("ulimit -v %d: exit %d after %.1f s\n", limit, rc, fs_now() - t0);
        completed = rc == 0;
        if (completed) continue;
        CHECK_MSG(rc != -1, "a rank under ulimit -v %d hung", limit);
        const int named = log_has("MPI start-up did not finish within 5 s: stuck in") ||
                          log_has("could not start its training thread") || log_has("out of memory for its") ||
                          log_has("out of memory: a fold's model");
        /* Open MPI's own words for a start-up it could not finish. */
        const int by_mpi = log_has("MPI_Init") || log_has("pmix_init failed") ||
                           log_has("No components were able to be opened") ||
                           log_has("during shared memory initialization") ||
                           /* its components' libraries not mapped for want of address space; Open MPI
                            * 4.1.4 then may crash in its own start-up (SIGSEGV in mca_base_var_register
                            * under ompi_mpi_init, by gdb; at 60000 KB, once the binary grew a little) */
                           log_has("failed to map segment from shared object");
        /* A rank's smaller buffers (the sweep's expansion, a fold's
         * example list, the validation's) beyond the limit: the allocator
         * names the bytes, growing one or making one, and the rank aborts.
         * Its model buffer, the large one, is reported through the protocol
         * (named, above; test_model_no_memory). Which of them meets the
         * limit first moves with the binary's size. */
        const int by_alloc = log_has("out of memory allocating") || log_has("out of memory reallocating");
        CHECK_MSG(named || by_mpi || by_alloc,
                  "ulimit -v %d: neither foldsweep nor MPI's start-up named what failed:\n%s", limit,
                  tp_read_file(log_path, NULL));
        ours += named;
    }
    if (last >= first) {
        CHECK_MSG(completed, "the run did not complete even under ulimit -v %d", last);
        CHECK_MSG(ours > 0, "no memory limit reached foldsweep's own start-up handling (all failed in MPI_Init)");
    }

    /* Held back past the watchdog: exit 1 within seconds, the stage named. */
    snprintf(dir, sizeof dir, "%s/stuck", tmp);
    snprintf(cmd, sizeof cmd,
             "mpirun %s -np 2 -x FOLDSWEEP_TEST_STARTUP_DELAY=1:600 '%s' run '%s' --out '%s' --quiet "
             "--startup-timeout 3",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    double t0 = fs_now();
    int rc = sh(cmd, 90);
    CHECK_MSG(rc == 1, "a stuck start-up gave exit %d", rc);
    CHECK_MSG(fs_now() - t0 < 45, "a stuck start-up took %.0f s to end", fs_now() - t0);
    CHECK_MSG(log_has("rank 0 (") && log_has("stuck in MPI_Comm_dup"), "no stage named:\n%s",
              tp_read_file(log_path, NULL));

    /* Slow but healthy (rank 1 3 s late, a 20 s watchdog): the run goes on. */
    snprintf(dir, sizeof dir, "%s/slow", tmp);
    snprintf(cmd, sizeof cmd,
             "mpirun %s -np 2 -x FOLDSWEEP_TEST_STARTUP_DELAY=1:3 -x FOLDSWEEP_STARTUP_TIMEOUT=20 '%s' run '%s' "
             "--out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    CHECK_MSG(sh(cmd, 300) == 0, "a slow start failed:\n%s", tp_read_file(log_path, NULL));
    CHECK(folds_in(dir) == 24);
}

/* A worker with no memory for a fold's model (the hook fails its third
 * model buffer, as a tight `ulimit -v` did in CI): the run stops at once,
 * naming the rank, the fold and the bytes, through the protocol (no
 * abort); the folds recorded stay, and a rerun completes the sweep. */
static void test_model_no_memory(const char *sweep)
{
    char dir[320], cmd[1600];
    snprintf(dir, sizeof dir, "%s/nomem", tmp);
    snprintf(cmd, sizeof cmd,
             "mpirun %s -np 2 sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then export "
             "FOLDSWEEP_TEST_MODEL_NO_MEMORY=3; fi; exec \"$0\" \"$@\"' '%s' run '%s' --out '%s' --quiet",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    double t0 = fs_now();
    int rc = sh(cmd, 120);
    CHECK_MSG(rc == 1, "a worker out of memory: exit %d\n%s", rc, tp_read_file(log_path, NULL));
    CHECK_MSG(fs_now() - t0 < 60, "a worker out of memory took %.0f s to end the run", fs_now() - t0);
    CHECK_MSG(log_has("rank 1 cannot go on: ") && log_has("out of memory: a fold's model") && log_has(" bytes)"),
              "not named:\n%s", tp_read_file(log_path, NULL));
    CHECK_MSG(!log_has("internal error"), "an abort:\n%s", tp_read_file(log_path, NULL));
    int before = folds_in(dir);
    CHECK_MSG(before >= 0 && before < 24, "%d fold records", before);
    resume_completes(sweep, dir, 24, "a worker out of memory");
}

/* Item 14: a stopped worker. */
static void test_stopped_worker(const char *sweep)
{
    char dir[320], cmd[1600];
    snprintf(dir, sizeof dir, "%s/stopped", tmp);
    snprintf(cmd, sizeof cmd, "exec mpirun %s -np 3 '%s' run '%s' --out '%s' --quiet --threads 1 --worker-timeout 3",
             tm_mpirun_flags(), FS_TEST_BIN, sweep, dir);
    pid_t pid = start(cmd);
    wait_folds(dir, 2);
    long r0 = rank0_pid(dir);
    pid_t kids[8], victim = 0;
    int n = tm_children_of(pid, kids, 8);
    for (int k = 0; k < n && !victim; k++)
        if (kids[k] != r0) victim = kids[k];
    CHECK_MSG(victim > 0, "no worker rank found among mpirun's %d children", n);
    printf("kill -STOP %ld (a worker rank) after %d fold records\n", (long)victim, folds_in(dir));
    if (victim > 0) kill(victim, SIGSTOP);
    /* foldsweep's part ends at MPI_Abort (rank 0 says "ending the job with
     * MPI_Abort (exit 3)"); killing the stopped rank and passing the code on
     * is then mpirun's. Under load in CI, Open MPI 4.1's mpirun has twice
     * not ended (once after an ORTE_ERROR_LOG in its show_help.c): so,
     * counted from the abort, as a scheduler or a user would, the rank is
     * continued at 30 s and killed at 60 s; an mpirun still running at 90 s
     * is Open MPI's hang, killed with its ranks and said, and only its exit
     * code goes unchecked: rank 0's own code, the rank named and every fold
     * kept are checked all the same. */
    int rc = -1, aborted_at = -1, mpirun_hung = 0;
    for (int i = 0;; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (aborted_at < 0 && log_has("ending the job with MPI_Abort")) aborted_at = i;
        if (aborted_at < 0 && i == 300 * 10) break; /* no abort in 300 s: foldsweep hung */
        int since = aborted_at < 0 ? -1 : i - aborted_at;
        if (since == 300 && victim > 0) {
            printf("mpirun has not ended 30 s after the abort: SIGCONT to the stopped rank\n");
            kill(victim, SIGCONT);
        }
        if (since == 600 && victim > 0) {
            printf("mpirun has not ended 60 s after the abort: SIGKILL to the worker rank\n");
            kill(victim, SIGKILL);
        }
        if (since == 900) {
            printf("Open MPI's mpirun has not ended 90 s after foldsweep's MPI_Abort, the stopped rank killed: "
                   "killed with its ranks; its exit code is not checked this time\n");
            n = tm_children_of(pid, kids, 8);
            for (int k = 0; k < n; k++) kill(kids[k], SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            mpirun_hung = 1;
            break;
        }
        usleep(100000);
    }
    if (rc < 0 && !mpirun_hung) rc = tp_wait_limited(pid, 1);
    if (victim > 0) kill(victim, SIGCONT); /* in case mpirun left it */
    /* Open MPI 4.1's mpirun has also crashed on its own way out (SIGSEGV in
     * PMIx_server_finalize under orte_finalize, CI stop 48) after foldsweep's
     * abort: that is mpirun's teardown, not a code foldsweep chose, so it
     * counts as the hang above does, and only when the backtrace is mpirun's. */
    if (!mpirun_hung && rc > 128 && log_has("ending the job with MPI_Abort") &&
        (log_has("PMIx_server_finalize") || log_has("orte_finalize"))) {
        printf("Open MPI's mpirun crashed in its own finalize (exit %d) after foldsweep's MPI_Abort: "
               "its exit code is not checked this time\n", rc);
        mpirun_hung = 1;
    }
    CHECK_MSG(log_has("ending the job with MPI_Abort (exit 3)"), "rank 0 did not end the job with exit 3:\n%s",
              tp_read_file(log_path, NULL));
    CHECK_MSG(mpirun_hung || rc == 3, "a stopped worker gave exit %d:\n%s", rc, tp_read_file(log_path, NULL));
    CHECK_MSG(log_has("has sent nothing for") && log_has("never answered"), "the rank was not named:\n%s",
              tp_read_file(log_path, NULL));
    CHECK_MSG(folds_in(dir) == 24, "the other ranks left %d of 24 folds", folds_in(dir));
    tr_wait_unlocked(dir);
    resume_completes(sweep, dir, 24, "a stopped worker");
}

int main(void)
{
#ifndef FS_HAVE_MPI
    TEST_SKIP("this build has no MPI (apt-get install libopenmpi-dev openmpi-bin, then rebuild)");
#endif
    if (system("command -v mpirun >/dev/null 2>&1") != 0) TEST_SKIP("mpirun is not on PATH");
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    tp_tmpdir(tmp, sizeof tmp, "mpifaults");
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    char sweep[300], slow[300];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, TR_SWEEP);
    /* Folds of a few seconds each, so some are in flight when a signal comes. */
    snprintf(slow, sizeof slow, "%s/slow.yaml", tmp);
    char text[1024];
    snprintf(text, sizeof text, "%s", TR_SWEEP);
    char *e = strstr(text, "epochs: 3");
    if (e) e[8] = '9'; /* epochs: 9 */
    tp_write_text(slow, text);
    tp_write_text(log_path, "");

    test_ctrl_c(slow);
    test_startup(sweep);
    test_stopped_worker(slow);
    test_model_no_memory(sweep);

    if (!t_failures) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
