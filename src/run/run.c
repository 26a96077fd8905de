/*
 * run: `foldsweep run` on one process or on MPI ranks. Rank 0 (or the only
 * process) owns the sweep, the data, the run folder and the journal; worker
 * ranks get the canonical sweep and the data bytes once, in the setup
 * broadcast, and need no shared file system.
 */
#include "run/run.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "run/coord.h"
#include "run/gpu_driver.h"
#include "run/state.h"
#include "run/worker.h"

/* Test hook RAISE=setup|trained (util/faults.c): a scheduler's warning
 * (SIGUSR1) at that moment, delivered by the process itself so the test
 * does not race the program. */
static void test_raise(const char *when)
{
    const char *v = fs_test_fault("RAISE");
    if (v && !strcmp(v, when)) raise(SIGUSR1);
}

/* What the run is about to train, on what, and (with feature columns) the
 * model's input and its memory. */
static void print_start(FILE *out, const RunState *st, int ranks, int threads)
{
    char how[64];
    if (ranks)
        snprintf(how, sizeof how, "%d MPI ranks", ranks);
    else if (st->use_gpu)
        snprintf(how, sizeof how, "CUDA device %d", st->gpu_device);
    else
        snprintf(how, sizeof how, "%d thread%s", threads, threads == 1 ? "" : "s");
    /* tpe: the budget, not the pool of candidates it proposes from; its
     * folds to train are those of the trials proposed so far. */
    const int tpe = st->sw.sampler == FS_SAMPLER_TPE, n = tpe ? st->sw.random_n : st->sw.n_trials;
    char pool[96] = "";
    if (tpe) snprintf(pool, sizeof pool, " (tpe: proposed %d at a time from %d candidates)", st->sw.batch, st->sw.n_trials);
    char folds[48];
    data_folds_text(st->folds.n, st->sw.repeats, folds, sizeof folds);
    fprintf(out, "foldsweep: %d trial%s%s x %s, %d folds to train %s(%d already done), %s, run folder %s\n", n,
            n == 1 ? "" : "s", pool, folds, st->n_jobs, tpe ? "now " : "", st->prog.folds_earlier, how, st->dir);
    if (st->ds.feat_dim) {
        char what[256];
        sweep_features_describe(&st->sw, &st->ds, what, sizeof what);
        fprintf(out, "features: %s\n", what);
    }
}

int run_sweep(const FsRunOptions *o, FsMpi *m)
{
    FILE *out = o->out ? o->out : stdout;
    /* The caller installed these before MPI started (a scheduler's warning
     * while it starts must stop the run with exit 3, not kill it); again
     * here for a caller that did not. Worker ranks keep the handler until
     * they ignore these signals (only rank 0 decides). */
    run_signals_install();
    test_raise("setup");
    int multi = m->active && m->size > 1;
    if (multi && m->rank != 0) return run_worker(m, o);

    RunState st;
    FsRunOptions opt = *o;
    opt.ranks = multi ? m->size : 1;
    o = &opt;
    int rc = state_open(&st, o, m, out);
    if (multi) {
        /* Workers wait in this broadcast: they learn of a failure here too,
         * and the backend and GPU path asked for (the canonical sweep leaves run
         * options out). */
        int32_t status = rc == FS_EXIT_OK ? 0 : 1;
        int32_t backend = rc == FS_EXIT_OK ? st.set.backend : 0, gpu_path = rc == FS_EXIT_OK ? st.set.gpu_path : 0;
        char *text = status == 0 ? st.sw.canonical : NULL;
        uint8_t *bytes = NULL;
        uint64_t n = 0;
        FsErr err = {0};
        if (status == 0 && data_serialize(&st.ds, &bytes, &n, &err) != 0) {
            fprintf(stderr, "foldsweep: %s\n", err.msg);
            status = 1;
            rc = FS_EXIT_ERROR;
        }
        if (status == 0) status = (backend + 1) << 8 | gpu_path << 12; /* run_worker's worker_setup reads them */
        double ckpt_every = rc == FS_EXIT_OK ? st.sw.checkpoint : 0.0;
        fsmpi_bcast_setup(m, &status, &ckpt_every, &text, &bytes, &n);
        free(bytes);
    }
    if (rc != FS_EXIT_OK) {
        state_close(&st);
        return rc;
    }
    int threads = st.set.threads;
    char device[240];
    run_backend_describe(st.use_gpu, st.gpu_device, device, sizeof device);
    if (fsmpi_report_setup(m, NULL, st.use_gpu ? 0 : threads, device, o->quiet ? NULL : out) > 0) {
        fprintf(stderr, "foldsweep: a rank could not start (the reason is above); nothing was trained. Fix the "
                        "cause and rerun the same command\n");
        run_release_workers(m);
        state_close(&st);
        return FS_EXIT_ERROR;
    }
    if (!o->quiet) print_start(out, &st, multi ? m->size : 0, threads);
    double t_train = fs_now();
    rc = run_coordinate(&st, m, threads, o->worker_timeout);
    test_raise("trained");
    if (rc == FS_EXIT_OK && run_test_phase(&st, out, o->quiet) != 0) rc = FS_EXIT_ERROR;
    if (rc == FS_EXIT_OK && st.test_left) rc = FS_EXIT_INTERRUPTED; /* a signal stopped the test phase */
    double wall = fs_now() - t_train;
    /* Worker time is every rank's threads, not rank 0's alone. */
    int all_threads = multi ? m->total_threads : threads;
    rc = state_report(&st, o, out, rc, wall, all_threads > 0 ? all_threads : 1);
    int lost = st.ranks_lost;
    state_close(&st);
    if (lost) {
        /* MPI_Finalize would wait for the rank that never answered. */
        fprintf(stderr, "foldsweep: ending the job with MPI_Abort (exit %d)\n", rc);
        fflush(NULL);
        fsmpi_abort(m, rc);
    }
    return rc;
}
