/*
 * gpu_cuda: the host side of the CUDA backend (API in src/gpu/gpu.h).
 *
 * gpu_open uploads the residue arrays once; each fold's example lists are
 * uploaded the first time a job needs them. gpu_train lays out every
 * model's buffer in one device allocation (the same size table the CPU
 * uses, core_model_bytes), initialises weights on the host with the same
 * seeds as the CPU trainer, launches fs_fit_kernel with one block per
 * model, watches the models' epoch counters in mapped host memory while it
 * runs, and copies the results back. Nothing goes to the device per batch
 * or per epoch.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern "C" {
#include "data/data.h"
#include "gpu/gpu.h"
#include "train/kernel.h" /* the trainer's side: model layout, sizes, seeds, fs_fit_launch */
}

/* Threads per model. The per-model loops are a few hundred wide (GEMM tiles,
 * rows of a batch); more threads would mostly wait at barriers. */
#define FS_GPU_THREADS 128
#define FS_GPU_MAX_MODELS 4096

/* A CUDA call that failed: the message names file:line and the call. */
#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fs_err_set(err, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

typedef struct {
    uint32_t *d_idx; /* train then valid indices */
    uint32_t n_train, n_valid;
} FoldLists;

struct FsGpu {
    int device;
    const FsDataset *ds;
    uint8_t *d_aa, *d_ss, *d_left, *d_right;
    /* By fold_slot: FS_FOLD_ALL (a refit) is slot 0, FS_FOLD_PREDEFINED 1,
     * fold k slot k + 2. */
    FoldLists folds[FS_MAX_FOLDS + 2];
};

int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear: "no driver" is an answer, not an error */
        return 0;
    }
    return n;
}

void gpu_describe(int device, char *out, size_t n)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        snprintf(out, n, "no CUDA device %d", device);
        return;
    }
    snprintf(out, n, "%s, %.1f GiB, sm_%d%d, %d SMs", p.name, (double)p.totalGlobalMem / (1 << 30), p.major,
             p.minor, p.multiProcessorCount);
}

static int upload(void **dst, const void *src, size_t bytes, FsErr *err)
{
    CU(cudaMalloc(dst, bytes ? bytes : 1));
    if (bytes) CU(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return 0;
}

FsGpu *gpu_open(int device, const FsDataset *ds, FsErr *err)
{
    if (cudaSetDevice(device) != cudaSuccess) {
        fs_err_set(err, "cannot use CUDA device %d: %s", device, cudaGetErrorString(cudaGetLastError()));
        return NULL;
    }
    FsGpu *g = (FsGpu *)fs_calloc(1, sizeof *g);
    g->device = device;
    g->ds = ds;
    size_t n = ds->n_res;
    if (upload((void **)&g->d_aa, ds->aa, n, err) || upload((void **)&g->d_ss, ds->ss, n, err) ||
        upload((void **)&g->d_left, ds->left, n, err) || upload((void **)&g->d_right, ds->right, n, err)) {
        gpu_close(g);
        return NULL;
    }
    return g;
}

void gpu_close(FsGpu *g)
{
    if (!g) return;
    cudaFree(g->d_aa);
    cudaFree(g->d_ss);
    cudaFree(g->d_left);
    cudaFree(g->d_right);
    for (int i = 0; i < FS_MAX_FOLDS + 2; i++) cudaFree(g->folds[i].d_idx);
    free(g);
}

static int fold_slot(int fold) { return fold - FS_FOLD_ALL; }

static const FoldLists *fold_lists(FsGpu *g, int fold, FsErr *err)
{
    if (fold < FS_FOLD_ALL || fold >= FS_MAX_FOLDS) {
        fs_err_set(err, "fold %d is not a fold of this data (at most %d)", fold, FS_MAX_FOLDS);
        return NULL;
    }
    FoldLists *f = &g->folds[fold_slot(fold)];
    if (f->d_idx) return f;
    uint32_t nt, nv;
    uint32_t *h = data_fold_examples(g->ds, fold, &nt, &nv);
    int rc = upload((void **)&f->d_idx, h, sizeof(uint32_t) * ((size_t)nt + nv), err);
    free(h);
    if (rc) return NULL;
    f->n_train = nt;
    f->n_valid = nv;
    return f;
}

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

/* Device bytes of one job: its model buffer and its curves. */
static size_t job_bytes(const FsNet *net, uint32_t n_train, int max_epochs)
{
    return align256(core_model_bytes(net, n_train)) + align256(sizeof(float) * 4 * (size_t)max_epochs);
}

int gpu_capacity(FsGpu *g, const FsJob *job)
{
    FsNet net;
    FsErr e = {0};
    const FsTrainSpec *ts = job->spec;
    int mb = ts->batch > ts->eval_batch ? ts->batch : ts->eval_batch;
    if (model_compile(&net, job->arch, mb, &e) != 0) return 1; /* it will fail with its message */
    uint32_t nt = data_examples(g->ds, job->fold, 0, NULL);
    size_t per = job_bytes(&net, nt, ts->stop.max_epochs) + 4096;
    size_t free_b = 0, total = 0;
    if (cudaSetDevice(g->device) != cudaSuccess || cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    size_t cap = (size_t)((double)free_b * 0.85) / per;
    return cap > FS_GPU_MAX_MODELS ? FS_GPU_MAX_MODELS : (int)cap;
}

/* One launch's host and device state; freed by launch_free. */
typedef struct {
    int n;          /* models in the launch */
    int *job;       /* launch slot -> job index */
    FsNet *nets;
    FsModel *models;
    FsFoldData *folds;
    FsTrainSpec *specs;
    FsFitResult *res;
    char *d_buf;    /* every model's buffer and curves, then the arrays below */
    FsNet *d_nets;
    FsModel *d_models;
    FsFoldData *d_folds;
    FsTrainSpec *d_specs;
    FsFitResult *d_res;
    int *h_mapped;  /* n epoch counters, then the cancel flag */
    cudaStream_t stream;
} Launch;

static void launch_free(Launch *L)
{
    if (L->stream) cudaStreamDestroy(L->stream);
    cudaFree(L->d_buf);
    if (L->h_mapped) cudaFreeHost(L->h_mapped);
    free(L->job);
    free(L->nets);
    free(L->models);
    free(L->folds);
    free(L->specs);
    free(L->res);
}

static int launch_build(FsGpu *g, const FsJob *jobs, int n, Launch *L, FsErr *err)
{
    L->job = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    L->nets = (FsNet *)fs_calloc((size_t)n + 1, sizeof(FsNet));
    L->models = (FsModel *)fs_calloc((size_t)n + 1, sizeof(FsModel));
    L->folds = (FsFoldData *)fs_calloc((size_t)n + 1, sizeof(FsFoldData));
    L->specs = (FsTrainSpec *)fs_calloc((size_t)n + 1, sizeof(FsTrainSpec));
    L->res = (FsFitResult *)fs_calloc((size_t)n + 1, sizeof(FsFitResult));
    size_t *off = (size_t *)fs_calloc((size_t)n + 1, sizeof(size_t));
    uint32_t *ntr = (uint32_t *)fs_calloc((size_t)n + 1, sizeof(uint32_t));
    size_t total = 0;
    /* Jobs that cannot train are marked failed here, as on the CPU. */
    for (int j = 0; j < n; j++) {
        uint32_t nt, nv;
        int s = L->n;
        if (train_job_check(&jobs[j], &L->nets[s], &nt, &nv) != 0) continue;
        if (!fold_lists(g, jobs[j].fold, err)) {
            free(off);
            free(ntr);
            return -1;
        }
        L->job[s] = j;
        ntr[s] = nt;
        off[s] = total;
        total += job_bytes(&L->nets[s], nt, jobs[j].spec->stop.max_epochs);
        L->n++;
    }
    size_t arrays = align256(sizeof(FsNet) * (size_t)L->n) + align256(sizeof(FsModel) * (size_t)L->n) +
                    align256(sizeof(FsFoldData) * (size_t)L->n) + align256(sizeof(FsTrainSpec) * (size_t)L->n) +
                    align256(sizeof(FsFitResult) * (size_t)L->n);
    if (L->n == 0) {
        free(off);
        free(ntr);
        return 0;
    }
    CU(cudaMalloc((void **)&L->d_buf, total + arrays));
    CU(cudaMemset(L->d_buf, 0, total + arrays)); /* pad rows, gradients and moments start at zero */
    char *p = L->d_buf + total;
    L->d_nets = (FsNet *)p;
    p += align256(sizeof(FsNet) * (size_t)L->n);
    L->d_models = (FsModel *)p;
    p += align256(sizeof(FsModel) * (size_t)L->n);
    L->d_folds = (FsFoldData *)p;
    p += align256(sizeof(FsFoldData) * (size_t)L->n);
    L->d_specs = (FsTrainSpec *)p;
    p += align256(sizeof(FsTrainSpec) * (size_t)L->n);
    L->d_res = (FsFitResult *)p;
    CU(cudaHostAlloc((void **)&L->h_mapped, sizeof(int) * ((size_t)L->n + 1), cudaHostAllocMapped));
    memset(L->h_mapped, 0, sizeof(int) * ((size_t)L->n + 1));
    int *d_mapped = NULL;
    CU(cudaHostGetDevicePointer((void **)&d_mapped, L->h_mapped, 0));

    float *w = NULL;
    size_t w_cap = 0;
    for (int s = 0; s < L->n; s++) {
        const FsJob *job = &jobs[L->job[s]];
        const FsNet *net = &L->nets[s];
        FsModel *m = &L->models[s];
        /* Sizes from the host copy (core_model_bind reads them); the
         * kernel reads the net through the device copy. */
        core_model_bind(m, net, L->d_buf + off[s], ntr[s]);
        m->net = &L->d_nets[s];
        size_t nw = (size_t)(net->n_params + net->n_state);
        if (nw > w_cap) w = (float *)fs_realloc(w, sizeof(float) * (w_cap = nw));
        core_model_seed(m, net, job->spec, w);
        CU(cudaMemcpy(m->w, w, sizeof(float) * nw, cudaMemcpyHostToDevice));
        m->progress = d_mapped + s;
        m->cancel = d_mapped + L->n;
        const FoldLists *fl = &g->folds[fold_slot(job->fold)];
        FsFoldData *fd = &L->folds[s];
        fd->aa = g->d_aa;
        fd->ss = g->d_ss;
        fd->left = g->d_left;
        fd->right = g->d_right;
        fd->train = fl->d_idx;
        fd->n_train = fl->n_train;
        fd->valid = fl->d_idx + fl->n_train;
        fd->n_valid = fl->n_valid;
        L->specs[s] = *job->spec;
        float *curves = (float *)(L->d_buf + off[s] + align256(core_model_bytes(net, ntr[s])));
        int E = job->spec->stop.max_epochs;
        L->res[s].curves.train_loss = curves;
        L->res[s].curves.val_loss = curves + E;
        L->res[s].curves.val_q3 = curves + 2 * E;
        L->res[s].curves.seconds = curves + 3 * E;
    }
    free(w);
    free(off);
    free(ntr);
    CU(cudaMemcpy(L->d_nets, L->nets, sizeof(FsNet) * (size_t)L->n, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(L->d_models, L->models, sizeof(FsModel) * (size_t)L->n, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(L->d_folds, L->folds, sizeof(FsFoldData) * (size_t)L->n, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(L->d_specs, L->specs, sizeof(FsTrainSpec) * (size_t)L->n, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(L->d_res, L->res, sizeof(FsFitResult) * (size_t)L->n, cudaMemcpyHostToDevice));
    CU(cudaStreamCreate(&L->stream));
    return 0;
}

/* Waits for the kernel, reporting epochs and passing a cancel down. */
static int launch_watch(const FsJob *jobs, Launch *L, void (*progress)(void *, long), void *ctx, FsErr *err)
{
    long last = -1;
    for (;;) {
        cudaError_t e = cudaStreamQuery(L->stream);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) CU(e);
        long epochs = 0;
        for (int s = 0; s < L->n; s++) epochs += ((volatile int *)L->h_mapped)[s];
        if (progress && epochs != last) progress(ctx, epochs);
        last = epochs;
        for (int s = 0; s < L->n; s++) {
            const volatile int *c = jobs[L->job[s]].cancel;
            if (c && *c) ((volatile int *)L->h_mapped)[L->n] = 1;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int launch_collect(const FsJob *jobs, Launch *L, FsErr *err)
{
    FsFitResult *back = (FsFitResult *)fs_calloc((size_t)L->n + 1, sizeof(FsFitResult));
    cudaError_t e = cudaMemcpy(back, L->d_res, sizeof(FsFitResult) * (size_t)L->n, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(back);
        CU(e);
    }
    for (int s = 0; s < L->n; s++) {
        const FsJob *job = &jobs[L->job[s]];
        FsFitResult *r = job->result;
        FsCurves host = r->curves;
        *r = back[s];
        r->curves = host;
        int E = r->epochs;
        if (host.train_loss && E > 0) {
            CU(cudaMemcpy(host.train_loss, L->res[s].curves.train_loss, sizeof(float) * E, cudaMemcpyDeviceToHost));
            CU(cudaMemcpy(host.val_loss, L->res[s].curves.val_loss, sizeof(float) * E, cudaMemcpyDeviceToHost));
            CU(cudaMemcpy(host.val_q3, L->res[s].curves.val_q3, sizeof(float) * E, cudaMemcpyDeviceToHost));
            CU(cudaMemcpy(host.seconds, L->res[s].curves.seconds, sizeof(float) * E, cudaMemcpyDeviceToHost));
        }
        if (job->weights_out)
            CU(cudaMemcpy(job->weights_out, L->models[s].w,
                          sizeof(float) * (size_t)(L->nets[s].n_params + L->nets[s].n_state),
                          cudaMemcpyDeviceToHost));
    }
    free(back);
    return 0;
}

int gpu_train(FsGpu *g, const FsJob *jobs, int n, void (*progress)(void *ctx, long epochs), void *ctx, FsErr *err)
{
    Launch L;
    memset(&L, 0, sizeof L);
    int rc = cudaSetDevice(g->device) == cudaSuccess ? 0 : -1;
    if (rc) fs_err_set(err, "cannot use CUDA device %d", g->device);
    if (!rc) rc = launch_build(g, jobs, n, &L, err);
    if (!rc && L.n > 0) {
        cudaError_t e = fs_fit_launch(L.n, FS_GPU_THREADS, L.d_models, L.d_folds, L.d_specs, L.d_res, L.stream);
        if (e != cudaSuccess) {
            fs_err_set(err, "%s:%d: kernel launch: %s", __FILE__, __LINE__, cudaGetErrorString(e));
            rc = -1;
        }
    }
    if (!rc && L.n > 0) rc = launch_watch(jobs, &L, progress, ctx, err);
    if (!rc && L.n > 0) rc = launch_collect(jobs, &L, err);
    if (rc) {
        /* A CUDA error fails the jobs of this launch; the run records why. */
        for (int s = 0; s < L.n; s++) {
            FsFitResult *r = jobs[L.job[s]].result;
            r->status = FS_FIT_FAILED;
            snprintf(r->message, sizeof r->message, "GPU: %.900s", err->msg);
        }
    }
    launch_free(&L);
    return rc;
}
