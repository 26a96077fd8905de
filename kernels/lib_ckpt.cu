/*
 * lib_ckpt: the library tier's mid-fold checkpoints (#44), the device's
 * side: a model read back into a host mirror at the points
 * train/lib_ckpt.c names (an epoch's start, a stop), and a checkpoint's
 * state put in place before a model begins. The format, the interval and
 * the checks are the CPU trainer's (train/checkpoint.c, through
 * train/lib_ckpt.c); this file only moves bytes. The copies run on the
 * launch's copy stream while the group's own stream is idle, so the other
 * groups train on meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "lib_run.h"

/* A host mirror of slot s's model: w, best, m1, m2 and perm in one host
 * block (returned, for the caller to free), with the sizes each holds. */
typedef struct {
    FsModel m;
    void *block;
    size_t nw, np, nt;
} Mirror;

static void mirror_open(const Launch *L, int s, Mirror *h)
{
    const FsNet *net = &L->nets[s];
    memset(h, 0, sizeof *h);
    h->nw = (size_t)(net->n_params + net->n_state);
    h->np = (size_t)net->n_params;
    h->nt = L->folds[s].n_train;
    float *b = (float *)fs_malloc(sizeof(float) * (2 * h->nw + 2 * h->np + h->nt) + 4);
    h->block = b;
    h->m.w = b;
    h->m.best = b + h->nw;
    h->m.m1 = b + 2 * h->nw;
    h->m.m2 = h->m.m1 + h->np;
    h->m.perm = (uint32_t *)(void *)(h->m.m2 + h->np);
}

/* The mirror's arrays from (down 0) or to (down 1) the device's model.
 * 0, or -1 with err. */
static int mirror_copy(const Launch *L, int s, Mirror *h, int down, FsErr *err)
{
    const FsModel *d = &L->models[s]; /* its device pointers */
    void *dev[5] = {d->w, d->best, d->m1, d->m2, d->perm};
    void *host[5] = {h->m.w, h->m.best, h->m.m1, h->m.m2, h->m.perm};
    const size_t bytes[5] = {4 * h->nw, 4 * h->nw, 4 * h->np, 4 * h->np, 4 * h->nt};
    for (int i = 0; i < 5; i++) {
        if (!bytes[i]) continue;
        if (down)
            LIB_CU(cudaMemcpyAsync(dev[i], host[i], bytes[i], cudaMemcpyHostToDevice, L->copy), "a checkpoint's model");
        else
            LIB_CU(cudaMemcpyAsync(host[i], dev[i], bytes[i], cudaMemcpyDeviceToHost, L->copy), "a checkpoint's model");
    }
    LIB_CU(cudaStreamSynchronize(L->copy), "a checkpoint's model");
    return 0;
}

/* Slot s's fit state (FsLibState, core_lib_state_bytes) from or to the
 * device. */
static int state_copy(const LibRun *R, int s, void *host, int down, FsErr *err)
{
    const size_t sb = core_lib_state_bytes();
    char *dev = R->args.state + (size_t)s * sb;
    cudaStream_t st = R->L->copy;
    if (down)
        LIB_CU(cudaMemcpyAsync(dev, host, sb, cudaMemcpyHostToDevice, st), "a checkpoint's fit state");
    else
        LIB_CU(cudaMemcpyAsync(host, dev, sb, cudaMemcpyDeviceToHost, st), "a checkpoint's fit state");
    LIB_CU(cudaStreamSynchronize(st), "a checkpoint's fit state");
    return 0;
}

/* The device's FsModel of slot s (its stream and step move as it trains). */
static int model_read(const Launch *L, int s, FsModel *dm, FsErr *err)
{
    LIB_CU(cudaMemcpyAsync(dm, &L->d_models[s], sizeof *dm, cudaMemcpyDeviceToHost, L->copy), "a model's step");
    LIB_CU(cudaStreamSynchronize(L->copy), "a model's step");
    return 0;
}

/* Slot s's model, as it stands, into a checkpoint (state: its fit state,
 * read already). */
static int ckpt_write(LibRun *R, const FsJob *jobs, int s, const void *state, FsErr *err)
{
    Launch *L = R->L;
    Mirror h;
    FsModel dm;
    mirror_open(L, s, &h);
    int rc = model_read(L, s, &dm, err) || mirror_copy(L, s, &h, 0, err) ? -1 : 0;
    if (!rc) {
        h.m.rng = dm.rng;
        h.m.step = dm.step;
        core_lib_ckpt_save(R->ck[s], &h.m, state, jobs[L->job[s]].result);
    }
    free(h.block);
    return rc;
}

int lib_ckpt_start(LibRun *R, const FsJob *jobs, int s, FsErr *err)
{
    Launch *L = R->L;
    const FsJob *job = &jobs[L->job[s]];
    lib_ckpt_close(R, s);
    R->ck[s] = core_lib_ckpt_open(job, &L->nets[s]);
    if (!R->ck[s] || !job->ckpt->resume) return 0;
    Mirror h;
    mirror_open(L, s, &h);
    void *state = fs_calloc(1, core_lib_state_bytes());
    int rc = 0;
    if (core_lib_ckpt_resume(R->ck[s], &h.m, state, job->result)) {
        /* The slot's stream and step as the checkpoint left them; the
         * device's FsModel is still the host's copy (nothing ran yet). */
        L->models[s].rng = h.m.rng;
        L->models[s].step = h.m.step;
        rc = mirror_copy(L, s, &h, 1, err) || state_copy(R, s, state, 1, err) ? -1 : 0;
        const cudaError_t e =
            rc ? cudaSuccess : cudaMemcpy(&L->d_models[s], &L->models[s], sizeof(FsModel), cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
            rc = -1, fs_err_set(err, "%s:%d: cudaMemcpy (a resumed model): %s", __FILE__, __LINE__,
                                cudaGetErrorString(e));
        /* Its epochs so far are the job's already (the checkpoint's
         * curves): the watch starts from them. */
        int epoch;
        uint32_t next;
        uint64_t examples;
        core_lib_state_at(state, &epoch, &next, &examples);
        volatile Watch *wa = (volatile Watch *)L->watch;
        wa[s].progress = epoch - 1;
        wa[s].examples = examples;
        L->seen[s] = epoch - 1;
        __atomic_thread_fence(__ATOMIC_RELEASE); /* the curves (the job's already) before the count */
        if (job->progress) *job->progress = epoch - 1;
        if (job->examples) *job->examples = examples;
    }
    free(state);
    free(h.block);
    return rc;
}

int lib_ckpt_epoch(LibRun *R, const FsJob *jobs, FsErr *err)
{
    Launch *L = R->L;
    void *state = NULL;
    int rc = 0;
    for (int s = 0; s < L->n && !rc; s++) {
        if (!R->ck[s] || !R->pub[s].active) continue;
        /* The model's step from the device only where the interval is in
         * steps (a test's hook): by time, no copy a model an epoch. */
        FsModel dm;
        dm.step = 0;
        if (core_lib_ckpt_by_steps(R->ck[s]) && model_read(L, s, &dm, err)) {
            rc = -1;
            break;
        }
        if (!core_lib_ckpt_due(R->ck[s], dm.step)) continue;
        if (!state) state = fs_malloc(core_lib_state_bytes());
        rc = state_copy(R, s, state, 0, err) || ckpt_write(R, jobs, s, state, err) ? -1 : 0;
    }
    free(state);
    return rc;
}

int lib_ckpt_stops(LibRun *R, const FsJob *jobs, FsErr *err)
{
    Launch *L = R->L;
    void *state = NULL;
    int rc = 0;
    for (int s = 0; s < L->n && !rc; s++) {
        const FsJob *job = &jobs[L->job[s]];
        if (!R->ck[s] || R->pub[s].active || R->pub[s].finished || L->handed[s]) continue;
        if (job->prune && *job->prune) continue; /* a pruned fold keeps no checkpoint, as on the CPU */
        if (!state) state = fs_malloc(core_lib_state_bytes());
        if (state_copy(R, s, state, 0, err)) rc = -1;
        else if (core_lib_state_cancelled(state)) {
            /* The checkpoint's curves are the job's: its epochs handed first. */
            launch_hand(job, L, s, ((volatile Watch *)L->watch)[s].progress);
            rc = ckpt_write(R, jobs, s, state, err);
        }
    }
    free(state);
    return rc;
}

void lib_ckpt_close(LibRun *R, int s)
{
    if (!R->ck || !R->ck[s]) return;
    core_lib_ckpt_close(R->ck[s]);
    R->ck[s] = NULL;
}
