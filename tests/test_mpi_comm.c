/*
 * test_mpi_comm: run_sweep on communicators of the caller's (run/run.h,
 * fsmpi_attach), as a program that runs MPI itself would call it. Run
 * plainly, the test starts itself under mpirun with 4 ranks; there the world
 * is split into two communicators of 2 ranks, and each runs the same sweep
 * into a folder of its own at the same time. Both must end with exit 0,
 * record every (trial, fold) once and give the single-process leaderboard:
 * each run speaks only on its own communicator, and the two never meet (a
 * message on the world's would reach the other run: a hang, stopped after
 * 180 s). The mpirun command is printed so it can be rerun by hand.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "run/run.h"
#include "test_proc.h"
#include "test_runs.h"

#ifdef FS_HAVE_MPI
/* One rank of the job: half (rank % 2) of the world runs the sweep into
 * BASE/half0 or BASE/half1. Returns run_sweep's exit code, or 1. */
static int rank_main(const char *sweep, const char *base)
{
    int provided = 0, rank = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    MPI_Comm half;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half) != MPI_SUCCESS) {
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    char dir[600];
    snprintf(dir, sizeof dir, "%s/half%d", base, rank % 2);
    FsRunOptions o;
    memset(&o, 0, sizeof o);
    o.sweep_path = sweep;
    o.out_dir = dir;
    o.threads = 1;
    o.backend = FS_BACKEND_CPU;
    o.gpu_path = -1;
    o.quiet = 1;
    o.grace = 30.0;
    FsMpi m;
    fsmpi_attach(&m, half);
    int size = m.size, rc = run_sweep(&o, &m);
    fsmpi_finalize(&m);
    if (size != 2) fprintf(stderr, "world rank %d: a context of %d ranks, not 2\n", rank, size), rc = 1;
    if (MPI_Comm_free(&half) != MPI_SUCCESS || MPI_Finalize() != MPI_SUCCESS) rc = 1;
    return rc;
}
#endif

int main(int argc, char **argv)
{
#ifndef FS_HAVE_MPI
    (void)argc, (void)argv;
    TEST_SKIP("this build has no MPI (apt-get install libopenmpi-dev openmpi-bin, then rebuild)");
#else
    if (argc == 4 && !strcmp(argv[1], "--rank")) return rank_main(argv[2], argv[3]);
#endif
    if (system("command -v mpirun >/dev/null 2>&1") != 0) TEST_SKIP("mpirun is not on PATH");
    /* Open MPI's own allocations show up as leaks at exit in a sanitizer
     * build (test_mpi does the same). */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) TEST_SKIP("cannot find this test's executable");
    self[n] = 0;
    char tmp[256], sweep[300], dir[320], cmd[6000], journal[360], log_path[320];
    tp_tmpdir(tmp, sizeof tmp, "mpi_comm");
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    tp_write_text(sweep, TR_SWEEP);

    /* The reference: one process, no MPI. */
    snprintf(dir, sizeof dir, "%s/single", tmp);
    char *single[] = {"foldsweep", "run", sweep, "--out", dir, "--quiet", NULL};
    CHECK(tp_run_argv(single, log_path) == 0);
    char *ref = tr_board(dir, tmp);

    snprintf(cmd, sizeof cmd, "exec mpirun %s -np 4 '%s' --rank '%s' '%s'",
             geteuid() == 0 ? "--allow-run-as-root --oversubscribe" : "--oversubscribe", self, sweep, tmp);
    printf("$ %s > '%s' 2>&1\n", cmd, log_path);
    fflush(stdout);
    /* A run that spoke on another communicator would wait for a message
     * that never comes: a hang, killed and failed here. */
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *sh[] = {"sh", "-c", cmd, NULL};
    pid_t pid = tp_spawn_fds("/bin/sh", sh, fd, fd);
    close(fd);
    int rc = tp_wait_limited(pid, 180);
    char *log = tp_read_file(log_path, NULL);
    CHECK_MSG(rc == 0, "mpirun: %d:\n%s", rc, log ? log : "");
    free(log);
    for (int h = 0; h < 2; h++) {
        snprintf(dir, sizeof dir, "%s/half%d", tmp, h);
        snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
        CHECK_MSG(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24, "half %d: %d fold records", h,
                  tp_count_in_file(journal, "\"kind\":\"fold\""));
        CHECK(tp_count_in_file(journal, "\"kind\":\"trial\"") == 8);
        char *got = tr_board(dir, tmp);
        CHECK_MSG(strcmp(ref, got) == 0, "half %d leaderboard differs:\n%s\nvs single process:\n%s", h, got, ref);
        free(got);
    }
    free(ref);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
    return test_finish();
}
