/*
 * Mid-fold checkpoints and progress through the binary (#18): a run killed
 * (SIGKILL) right after a checkpoint, during an epoch's validation, and
 * while a checkpoint is half written, on 1 process (1 and 2 threads) and on
 * 2 MPI ranks, then resumed, ends with the leaderboard and the model files
 * (best weights, byte for byte) of an uninterrupted run; the resume says
 * it continued from a checkpoint (under MPI, rank 0 says it for every rank), and no checkpoint is left at the end. A
 * damaged checkpoint is ignored with a message and the fold restarts.
 * Progress: --progress prints one line per epoch and changes no result;
 * progress.json carries an ETA within the first seconds of a run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include "test_proc.h"
#include "test_runs.h"

static char tmp[256], sweep[300], logp[300], ref[300];

/* 2 trials x 3 folds, 4 epochs: about 500 steps per fold. */
static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 150, seed: 3}\n"
    "  window: 9\n"
    "  folds: 3\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: [8, 16]\n"
    "  kernel: 3\n"
    "  dense: 16\n"
    "training:\n"
    "  epochs: 4\n"
    "  batch_size: 16\n"
    "  seed: 5\n";

static int has_checkpoints(const char *dir)
{
    char p[400];
    snprintf(p, sizeof p, "%s/checkpoints", dir);
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* The same leaderboard (timing aside) and the same model files as ref. */
static void same_as_ref(const char *dir, const char *what)
{
    char *a = tr_board(ref, tmp), *b = tr_board(dir, tmp);
    CHECK_MSG(strcmp(a, b) == 0, "%s: leaderboard differs:\n%s\nvs\n%s", what, a, b);
    free(a);
    free(b);
    CHECK(tr_same_models(ref, dir, what) == 6);
    CHECK_MSG(!has_checkpoints(dir), "%s: checkpoints left in %s", what, dir);
}

static int run_env(const char *env, const char *dir, const char *threads, int np)
{
    char cmd[2000];
    if (np > 1)
        /* Open MPI's own allocations would fail a leak check under ASan
         * (as in test_mpi); the single-process runs keep theirs. */
        snprintf(cmd, sizeof cmd,
                 "ASAN_OPTIONS=detect_leaks=0 %s mpirun %s --oversubscribe -np %d '%s' run '%s' --out '%s' >'%s' 2>&1", env,
                 geteuid() == 0 ? "--allow-run-as-root" : "", np, FS_TEST_BIN, sweep, dir, logp);
    else
        snprintf(cmd, sizeof cmd, "%s '%s' run '%s' --out '%s' --threads %s >'%s' 2>&1", env, FS_TEST_BIN, sweep,
                 dir, threads, logp);
    printf("$ %s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Killed at `kill` (an environment setting), then resumed; compared. */
static void kill_and_resume(const char *tag, const char *kill, const char *threads, int np)
{
    char dir[400], env[300];
    snprintf(dir, sizeof dir, "%s/%s", tmp, tag);
    snprintf(env, sizeof env, "FOLDSWEEP_TEST_CKPT_STEPS=60 %s", kill);
    int rc = run_env(env, dir, threads, np);
    CHECK_MSG(rc != 0, "%s: the run was not killed (exit %d)", tag, rc);
    CHECK_MSG(has_checkpoints(dir), "%s: no checkpoint before the kill", tag);
    tr_wait_unlocked(dir); /* a killed MPI rank may outlive mpirun for a moment */
    rc = run_env("FOLDSWEEP_TEST_CKPT_STEPS=60", dir, threads, np);
    CHECK_MSG(rc == 0, "%s: resume exit %d: %s", tag, rc, tp_read_file(logp, NULL));
    /* Under MPI too: rank 0 says what became of a worker's checkpoints as
     * of its own (RESUMED messages), whichever rank took the folds. */
    CHECK_MSG(tp_count_in_file(logp, "resumed from its checkpoint") >= 1, "%s: no fold resumed", tag);
    same_as_ref(dir, tag);
}

/* A predefined split's one fold is named "predefined" in the checkpoint
 * messages, as in its model file, not by its id (-1: "fold -1"). */
static void predefined_named(void)
{
    char cmd[1400], dir[400], psweep[400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' synth -o pre --proteins 60 --format fasta >/dev/null && "
             "awk '/^>/ { n++; print $0 (n %% 4 ? \" SET=train\" : \" SET=validation\"); next } { print }' "
             "pre.labels.fasta >pre.set.fasta",
             tmp, FS_TEST_BIN);
    CHECK(system(cmd) == 0);
    snprintf(psweep, sizeof psweep, "%s/pre.yaml", tmp);
    tp_write_text(psweep, "data:\n  sequences: pre.sequences.fasta\n  labels: pre.set.fasta\n  window: 9\n"
                          "  split: predefined\nmodel:\n  filters: 4\ntraining:\n  epochs: 3\n  batch_size: 16\n");
    snprintf(dir, sizeof dir, "%s/predefined", tmp);
    snprintf(cmd, sizeof cmd, "FOLDSWEEP_TEST_CKPT_STEPS=20 %s '%s' run '%s' --out '%s' --threads 1 >'%s' 2>&1",
             "FOLDSWEEP_TEST_KILL_AFTER_CKPT=2", FS_TEST_BIN, psweep, dir, logp);
    CHECK(system(cmd) != 0);
    snprintf(cmd, sizeof cmd, "FOLDSWEEP_TEST_CKPT_STEPS=20 '%s' run '%s' --out '%s' --threads 1 >'%s' 2>&1",
             FS_TEST_BIN, psweep, dir, logp);
    CHECK(system(cmd) == 0);
    CHECK_MSG(tp_count_in_file(logp, "fold predefined resumed from its checkpoint") == 1 &&
                  tp_count_in_file(logp, "fold -1") == 0,
              "%s", tp_read_file(logp, NULL));
}

int main(void)
{
    (void)TR_SWEEP;
    tp_tmpdir(tmp, sizeof tmp, "midfold");
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(logp, sizeof logp, "%s/log.txt", tmp);
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    tp_write_text(sweep, SWEEP);

    /* The reference: no checkpoints at all (run.checkpoint's default is
     * ten minutes), and --progress, which must change nothing. */
    char *run_ref[] = {"foldsweep", "run", sweep, "--out", ref, "--threads", "1", "--progress", NULL};
    CHECK(tp_run_argv(run_ref, logp) == 0);
    CHECK_MSG(tp_count_in_file(logp, " epoch ") >= 18, "--progress printed %d epoch lines",
              tp_count_in_file(logp, " epoch "));
    CHECK(tp_count_in_file(logp, "fold 2 epoch 1/4: train loss ") == 2);

    kill_and_resume("after", "FOLDSWEEP_TEST_KILL_AFTER_CKPT=11", "1", 1);
    kill_and_resume("threads2", "FOLDSWEEP_TEST_KILL_AFTER_CKPT=14", "2", 1);
    kill_and_resume("validation", "FOLDSWEEP_TEST_KILL_IN_VALIDATION=3", "1", 1);
    kill_and_resume("writing", "FOLDSWEEP_TEST_KILL_IN_CKPT=9", "1", 1);
    /* The chain: killed twice before the resume that finishes. */
    kill_and_resume("twice", "FOLDSWEEP_TEST_KILL_AFTER_CKPT=5", "1", 1);
    kill_and_resume("mpi", "FOLDSWEEP_TEST_KILL_AFTER_CKPT=13", "1", 2);
    /* A worker's RESUMED naming an example past its fold's: rank 0 drops
     * it with why and prints no such example; the run's results are the
     * reference's. Which rank takes a checkpointed fold is the run's
     * timing (rank 0's own say so as always): tried afresh, up to 4 times,
     * until the worker has taken one. */
    int dropped = 0;
    for (int attempt = 0; attempt < 4 && !dropped; attempt++) {
        char dir[400];
        snprintf(dir, sizeof dir, "%s/mpi_forged%d", tmp, attempt);
        CHECK(run_env("FOLDSWEEP_TEST_CKPT_STEPS=60 FOLDSWEEP_TEST_KILL_AFTER_CKPT=13", dir, "1", 2) != 0);
        tr_wait_unlocked(dir);
        CHECK(run_env("FOLDSWEEP_TEST_CKPT_STEPS=60 FOLDSWEEP_TEST_RESUMED_NEXT=4000000000", dir, "1", 2) == 0);
        dropped = tp_count_in_file(logp, "bad RESUMED message from rank 1 (dropped): resumed past its fold's "
                                         "training examples");
        const int own = tp_count_in_file(logp, "resumed from its checkpoint");
        printf("forged RESUMED, try %d: %d dropped, %d of rank 0's own folds resumed\n", attempt + 1, dropped, own);
        CHECK_MSG(tp_count_in_file(logp, "example 4000000000") == 0, "%s", tp_read_file(logp, NULL));
        same_as_ref(dir, "mpi_forged");
    }
    CHECK_MSG(dropped >= 1, "in 4 tries the worker resumed no checkpointed fold: the forged RESUMED was not tested");

    /* A damaged checkpoint: a flipped byte near the end; the fold starts
     * afresh with a message, and the result is still the reference's. */
    {
        char dir[400], path[800];
        snprintf(dir, sizeof dir, "%s/damaged", tmp);
        CHECK(run_env("FOLDSWEEP_TEST_CKPT_STEPS=60 FOLDSWEEP_TEST_KILL_AFTER_CKPT=3", dir, "1", 1) != 0);
        DIR *d0 = NULL;
        snprintf(path, sizeof path, "%s/checkpoints", dir);
        d0 = opendir(path);
        struct dirent *e;
        int damaged = 0;
        while (d0 && (e = readdir(d0))) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/checkpoints/%s/fold0.ckpt", dir, e->d_name);
            size_t n = 0;
            char *b = tp_read_file(path, &n);
            if (b && n > 64) {
                b[n - 40] ^= 0x21;
                tp_write_file(path, b, n, "wb");
                damaged++;
            }
            free(b);
        }
        if (d0) closedir(d0);
        CHECK(damaged == 1);
        CHECK(run_env("", dir, "1", 1) == 0);
        CHECK_MSG(tp_count_in_file(logp, "checkpoint ignored, the fold started afresh") == 1, "no message");
        CHECK(tp_count_in_file(logp, "CRC-32") == 1);
        same_as_ref(dir, "damaged");
    }

    predefined_named();

    /* progress.json: an ETA within the first seconds of a longer run, and
     * gone when the run ends. */
    {
        char dir[400], pj[500], big[300];
        snprintf(dir, sizeof dir, "%s/live", tmp);
        snprintf(pj, sizeof pj, "%s/progress.json", dir);
        snprintf(big, sizeof big, "%s/big.yaml", tmp);
        char text[800];
        snprintf(text, sizeof text, "%s", SWEEP);
        char *p = strstr(text, "epochs: 4");
        memcpy(p, "epochs: 300", 11);
        snprintf(p + 11, sizeof text - (size_t)(p + 11 - text), "\n  batch_size: 16\n  seed: 5\n");
        tp_write_text(big, text);
        char *argv[] = {"foldsweep", "run", big, "--out", dir, "--threads", "1", "--grace", "0", NULL};
        pid_t pid = tp_spawn(argv, logp);
        char *js = NULL;
        for (int i = 0; i < 80 && !js; i++) {
            usleep(100000);
            js = tp_read_file(pj, NULL);
            if (js && strstr(js, "\"eta_seconds\":-1")) free(js), js = NULL;
        }
        CHECK_MSG(js != NULL, "no progress.json with an ETA within 8 s");
        if (js) {
            printf("progress.json: %s", js);
            CHECK_CONTAINS(js, "\"examples_per_second\":");
            CHECK_CONTAINS(js, "\"flight\":\"epoch ");
            char st[600];
            snprintf(st, sizeof st, "status '%s'", dir);
            CHECK(tp_run("%s", st) == 0);
            CHECK_CONTAINS(out_text, "in flight    ");
            CHECK_CONTAINS(out_text, "examples/s");
        }
        free(js);
        kill(pid, SIGTERM);
        CHECK(tp_wait_limited(pid, 60) == 3);
        CHECK_MSG(tp_read_file(pj, NULL) == NULL, "progress.json left after the run");
        CHECK_MSG(has_checkpoints(dir), "a stopped run keeps its folds' checkpoints");
        /* And says what the stop's checkpoint cost (docs/slurm.md sizes the warning by it). */
        char *log = tp_read_file(logp, NULL);
        CHECK_MSG(log && strstr(log, "checkpoint kept at epoch ") && strstr(log, " s to write)"),
                  "no 'checkpoint kept' line in %s", logp);
        free(log);
    }
    return test_finish();
}
