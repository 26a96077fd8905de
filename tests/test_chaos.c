/*
 * Chaos under real mpirun (issue #12): a sweep on 3 ranks is killed again
 * and again at random moments (SIGKILL of rank 0, of a random worker, of
 * the whole job, or a SIGTERM to rank 0), and resumed each time. The final
 * leaderboard must equal an uninterrupted single-process run's, metric for
 * metric, every (trial, fold) must have exactly one record (none trained
 * again after its record was written), and no job may hang. The random
 * schedule comes from a printed seed; FOLDSWEEP_CHAOS_SEED replays one.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal.h"
#include "test_proc.h"
#include "test_mpirun.h"
#include "test_runs.h"
#include "util/util.h"

static char tmp[256], mpirun[512];


/* Rank 0's pid: the last run record's. */
static long rank0_pid(const char *journal)
{
    char *s = tp_read_file(journal, NULL), *p = s, *last = NULL;
    while (p && (p = strstr(p, "\"kind\":\"run\""))) last = p++;
    char *pid = last ? strstr(last, "\"pid\":") : NULL;
    long v = pid ? atol(pid + 6) : -1;
    free(s);
    return v;
}

static int folds_in(const char *journal) { return tp_count_in_file(journal, "\"kind\":\"fold\""); }

static pid_t start_job(const char *sweep, const char *dir, const char *log)
{
    char *argv[] = {mpirun, "--oversubscribe", "-np", "3", FS_TEST_BIN, "run", (char *)sweep, "--out", (char *)dir,
                    "--quiet", "--grace", "1", NULL};
    char *root[] = {mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3", FS_TEST_BIN, "run", (char *)sweep,
                    "--out", (char *)dir, "--quiet", "--grace", "1", NULL};
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* the whole job can be killed at once */
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execv(mpirun, geteuid() == 0 ? root : argv);
        _exit(127);
    }
    close(fd);
    return pid;
}

int main(void)
{
#ifndef FS_HAVE_MPI
    TEST_SKIP("this build has no MPI");
#endif
    FILE *w = popen("command -v mpirun", "r");
    if (!w || !fgets(mpirun, sizeof mpirun, w)) TEST_SKIP("mpirun is not on PATH");
    pclose(w);
    mpirun[strcspn(mpirun, "\n")] = 0;
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    uint64_t seed = getenv("FOLDSWEEP_CHAOS_SEED") ? strtoull(getenv("FOLDSWEEP_CHAOS_SEED"), NULL, 10)
                                                   : (uint64_t)time(NULL);
    printf("chaos seed %llu (FOLDSWEEP_CHAOS_SEED=%llu replays it)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    FsRng rng;
    fs_rng_seed(&rng, &seed, 1);

    tp_tmpdir(tmp, sizeof tmp, "chaos");
    char sweep[300], ref_dir[300], dir[300], journal[340], log[300];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(ref_dir, sizeof ref_dir, "%s/ref", tmp);
    snprintf(dir, sizeof dir, "%s/chaos", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    tp_write_text(sweep, TR_SWEEP);
    char *ref_run[] = {"foldsweep", "run", sweep, "--out", ref_dir, "--quiet", NULL};
    CHECK(tp_run_argv(ref_run, log) == 0);
    char *ref = tr_board(ref_dir, tmp);

    static const char *const what[] = {"SIGKILL rank 0", "SIGKILL a worker", "SIGKILL the whole job",
                                       "SIGTERM rank 0"};
    int faults = 0;
    for (int round = 0; round < 8 && folds_in(journal) < 24; round++) {
        int before = folds_in(journal);
        pid_t job = start_job(sweep, dir, log);
        /* At least one new record, then a random moment up to 1.5 s on. */
        for (int i = 0; i < 3000 && folds_in(journal) <= before && waitpid(job, NULL, WNOHANG) == 0; i++)
            usleep(5000);
        usleep((useconds_t)fs_rng_below(&rng, 1500) * 1000);
        int action = (int)fs_rng_below(&rng, 4);
        pid_t kids[16];
        int n_kids = tm_children_of(job, kids, 16);
        long r0 = rank0_pid(journal);
        pid_t target = -1;
        if (action == 0 || action == 3) target = (pid_t)r0;
        if (action == 1)
            for (int k = 0; k < n_kids; k++)
                if (kids[k] != (pid_t)r0 && fs_rng_below(&rng, 2) == 0) target = kids[k];
        if (action == 1 && target < 0)
            for (int k = 0; k < n_kids; k++)
                if (kids[k] != (pid_t)r0) target = kids[k];
        printf("round %d: %d fold records; %s (pid %ld)\n", round, folds_in(journal), what[action],
               action == 2 ? (long)job : (long)target);
        fflush(stdout);
        if (action == 2) kill(-job, SIGKILL);
        else if (target > 0) kill(target, action == 3 ? SIGTERM : SIGKILL);
        faults++;
        int rc = tp_wait_limited(job, 60);
        tr_wait_unlocked(dir);
        printf("         the job ended with %d; %d fold records\n", rc, folds_in(journal));
    }
    CHECK(faults >= 1);
    /* Whatever is left, uninterrupted. */
    pid_t job = start_job(sweep, dir, log);
    CHECK(tp_wait_limited(job, 300) == 0);
    CHECK_MSG(folds_in(journal) == 24, "%d fold records (each fold must be recorded once)", folds_in(journal));
    CHECK(tp_count_in_file(journal, "\"kind\":\"model\"") == 0); /* no model file lost to a kill */
    char *got = tr_board(dir, tmp);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboard after the chaos differs:\n%s\nvs uninterrupted:\n%s", got, ref);
    free(got);
    free(ref);
    if (!t_failures) {
        char rm[400];
        snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
        if (system(rm) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
