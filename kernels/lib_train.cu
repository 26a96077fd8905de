/*
 * lib_train: the GPU library tier's trainer (#44). Chain models (and, by
 * the tier rule, whatever gpu_model_check sends here) train in groups of
 * one shape signature: the same layers, widths, taps, dilations and
 * buffer layout, so that one library call serves every model of a group
 * (kernels/dnn.h), while learning rates, optimizers, dropout, activations,
 * class weights, folds and seeds are each model's own. The host runs a
 * step's sequence for the group; the tier's own kernel (fs_lib_launch,
 * kernels/lib_kernel.cu) runs the trainer's single source for each model
 * between the library calls (train/kernel.h: FsLibOp), so every model
 * computes what the CPU trainer computes for it, in its order (bit for bit
 * under the library stand-ins). The host synchronises once an epoch: to
 * learn how many steps the longest of the group's epochs takes, to hand
 * the epoch's curves to the jobs, and to collect the models that stopped.
 * A step's sixty-odd launches and library calls are one CUDA graph,
 * captured at the group's first step and replayed (lib_replay).
 *
 * Groups are formed in job order (lib_groups): a job joins the group of
 * its signature and width, else opens one. The width is the run's fixed
 * rule's (run/gpu_groups.c: from the sweep, so that a model's calls span
 * the same models at any rank count; FsJob.lib_width), or where a job has
 * none the group's jobs up to gpu_lib_group_cap(). A group's calls span
 * its width; it trains that many jobs at once; the others wait in job
 * order, and each takes the slot of a model that has ended (stopped
 * early, diverged, pruned or done) at the next epoch's start
 * (launch_refill), so the group's calls stay full until its queue is
 * empty. The groups of a call train at once, each on its own stream
 * (lib_run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib_run.h"

/* group[j]: job j's group (0, 1, ...), or -1 where the tier does not train
 * it; returns the number of groups. */
static int lib_groups(FsGpu *g, const FsJob *jobs, int n, int *group)
{
    FsNet *first = (FsNet *)fs_calloc((size_t)n + 1, sizeof(FsNet)); /* each group's first net */
    int *width = (int *)fs_calloc((size_t)n + 1, sizeof(int));        /* and its jobs' lib_width */
    int groups = 0;
    for (int j = 0; j < n; j++) {
        FsNet net;
        uint32_t nt, nv;
        char why[512];
        group[j] = -1;
        if (jobs[j].result->status == FS_FIT_FAILED) continue; /* refused already, with why */
        if (train_job_check(&jobs[j], &net, &nt, &nv) != 0) continue;
        if (gpu_job_tier(g, &jobs[j], nt, why, sizeof why) != FS_GPU_LIBRARY) continue;
        int k = 0;
        while (k < groups && !(gpu_lib_same_shape(&first[k], &net) && width[k] == jobs[j].lib_width)) k++;
        if (k == groups) width[groups] = jobs[j].lib_width, first[groups++] = net;
        group[j] = k;
    }
    free(first);
    free(width);
    return groups;
}

static int lib_op(LibRun *R, int op, int layer, int part, int train, FsErr *err)
{
    FsLibLaunch a = R->args;
    a.op = op, a.layer = layer, a.part = part, a.train = train;
    LIB_CU(fs_lib_launch(R->L->n, &a, R->L->stream), "the library tier's kernel");
    return 0;
}

/* The layers' tensors in model 0's buffer (the others one stride on). */
static float *lib_work(const LibRun *R, long off) { return R->L->models[0].work + off; }

static int lib_forward(LibRun *R, int train, FsErr *err)
{
    const FsNet *net = &R->L->nets[0];
    for (int i = 0; i < net->n; i++) {
        if (lib_op(R, FS_LIB_FWD, i, 0, train, err)) return -1;
        if (!step_layer_gemms(net, i)) continue;
        const FsLayer *y = &net->layer[i];
        FsDnn *d = R->dnn[R->be[i]];
        if (fs_dnn_conv_fwd(d, &R->conv[2 * i + !train], lib_work(R, net->layer[i - 1].a), R->L->models[0].w + y->w,
                            lib_work(R, y->a), err))
            return -1;
        if (lib_op(R, FS_LIB_FWD, i, 1, train, err)) return -1;
    }
    return 0;
}

static int lib_backward(LibRun *R, FsErr *err)
{
    const FsNet *net = &R->L->nets[0];
    if (lib_op(R, FS_LIB_BWD, net->n, 0, 1, err)) return -1;
    for (int i = net->n - 1; i >= 0; i--) {
        if (lib_op(R, FS_LIB_BWD, i, 0, 1, err)) return -1;
        if (!step_layer_gemms(net, i)) continue;
        const FsLayer *y = &net->layer[i];
        const FsModel *m0 = &R->L->models[0];
        FsDnn *d = R->dnn[R->be[i]];
        if (fs_dnn_conv_wgrad(d, &R->conv[2 * i], lib_work(R, net->layer[i - 1].a), lib_work(R, y->d), m0->g + y->w, err))
            return -1;
        if (lib_op(R, FS_LIB_BWD, i, 1, 1, err)) return -1;
        if (fs_dnn_conv_dgrad(d, &R->conv[2 * i], lib_work(R, y->d), m0->w + y->w, lib_work(R, net->layer[i - 1].d), err))
            return -1;
        if (lib_op(R, FS_LIB_BWD, i, 2, 1, err)) return -1;
    }
    return 0;
}

static int lib_train_seq(LibRun *R, FsErr *err)
{
    return lib_op(R, FS_LIB_STEP, 0, 0, 1, err) || lib_forward(R, 1, err) || lib_op(R, FS_LIB_LOSS, 0, 0, 1, err) ||
                   lib_backward(R, err) || lib_op(R, FS_LIB_UPDATE, 0, 0, 1, err)
               ? -1
               : 0;
}

static int lib_val_seq(LibRun *R, FsErr *err)
{
    return lib_op(R, FS_LIB_VAL_STEP, 0, 0, 0, err) || lib_forward(R, 0, err) ||
                   lib_op(R, FS_LIB_VAL_LOSS, 0, 0, 0, err)
               ? -1
               : 0;
}

/* *exec: seq's launches and library calls on the group's stream, captured
 * (the first time) and replayed. A call that fails while capturing is
 * named by err; the capture is then ended and dropped. */
static int lib_replay(LibRun *R, cudaGraphExec_t *exec, int (*seq)(LibRun *, FsErr *), const char *what, FsErr *err)
{
    cudaStream_t st = R->L->stream;
    if (!*exec) {
        LIB_CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), what);
        const int rc = seq(R, err);
        cudaGraph_t graph = NULL;
        const cudaError_t e = cudaStreamEndCapture(st, &graph);
        if (rc) {
            if (e == cudaSuccess && graph) cudaGraphDestroy(graph);
            return -1;
        }
        LIB_CU(e, what);
        const cudaError_t ei = cudaGraphInstantiate(exec, graph, 0);
        cudaGraphDestroy(graph);
        LIB_CU(ei, what);
    }
    LIB_CU(cudaGraphLaunch(*exec, st), what);
    return 0;
}

/* The jobs' cancel and prune flags down to their models (mapped memory,
 * read at each step); 1 when every model of the group has one raised. */
static int lib_flags(LibRun *R, const FsJob *jobs)
{
    Launch *L = R->L;
    volatile Watch *wa = (volatile Watch *)L->watch;
    int all = 1;
    for (int s = 0; s < L->n; s++) {
        const FsJob *job = &jobs[L->job[s]];
        wa[s].cancel = job->cancel && *job->cancel;
        wa[s].prune = job->prune && *job->prune;
        all &= wa[s].cancel || wa[s].prune;
    }
    return all;
}

/* Waits for the group's stream while passing the flags down, as the block
 * tier's watch does while its kernel runs: a signal reaches the models at
 * their next step, not after the epoch the host has queued. The wait
 * grows from 1 ms to 50 ms. */
static int lib_wait(LibRun *R, const FsJob *jobs, const char *what, FsErr *err)
{
    long wait_ns = 1000 * 1000;
    const double t0 = fs_now();
    FS_NVTX_PUSH("library tier: the host waits for a group's stream");
    for (;;) {
        lib_flags(R, jobs);
        const cudaError_t e = cudaStreamQuery(R->L->stream);
        if (e == cudaSuccess || e != cudaErrorNotReady) {
            R->gpu->times.kernel_seconds += fs_now() - t0;
            FS_NVTX_POP();
        }
        if (e == cudaSuccess) return 0;
        if (e != cudaErrorNotReady) LIB_CU(e, what);
        struct timespec ts = {0, wait_ns};
        nanosleep(&ts, NULL);
        if (wait_ns < 50 * 1000 * 1000) wait_ns *= 2;
    }
}

/* One epoch of the group, queued on its stream: its training steps (as
 * many as its longest epoch; a model with fewer skips the rest), then its
 * validation pass and the stopping rule (EPOCH_END). */
static int lib_queue_epoch(LibRun *R, const FsJob *jobs, FsErr *err)
{
    Launch *L = R->L;
    int steps = 0, val_steps = 0;
    for (int s = 0; s < L->n; s++) {
        volatile FsLibPublic *p = &R->pub[s];
        if (!p->active) continue;
        if (p->steps > steps) steps = p->steps;
        if (p->val_steps > val_steps) val_steps = p->val_steps;
    }
    for (int t = 0; t < steps; t++) {
        /* Every model told to stop: each ends at its next step, and the
         * steps not queued yet would only be skipped. That step is queued
         * here, in case the device has run every step queued before: a
         * model must not validate an epoch cut short. */
        if (lib_flags(R, jobs)) {
            if (lib_op(R, FS_LIB_STEP, 0, 0, 1, err)) return -1;
            break;
        }
        if (lib_replay(R, &R->train_step, lib_train_seq, "the group's training step (a CUDA graph)", err)) return -1;
    }
    if (lib_op(R, FS_LIB_VAL_BEGIN, 0, 0, 0, err)) return -1;
    for (int t = 0; t < val_steps; t++)
        if (lib_replay(R, &R->val_step, lib_val_seq, "the group's validation step (a CUDA graph)", err)) return -1;
    return lib_op(R, FS_LIB_EPOCH_END, 0, 0, 0, err);
}

/* The group's epoch once its start (the EPOCH op, queued by the caller:
 * the shuffles and batch counts) is done: the checkpoints then due, and
 * the epoch queued. The caller waits for its end (lib_wait), then has the
 * ended models finished (lib_finish). */
static int lib_epoch(LibRun *R, const FsJob *jobs, FsErr *err)
{
    if (lib_wait(R, jobs, "the epoch's start", err)) return -1;
    FS_NVTX_PUSH("library tier: checkpoints at an epoch's start");
    int rc = lib_ckpt_epoch(R, jobs, err);
    FS_NVTX_POP();
    FS_NVTX_PUSH("library tier: queue an epoch's steps");
    if (!rc) rc = lib_queue_epoch(R, jobs, err);
    FS_NVTX_POP();
    return rc;
}

/* After an epoch's end: the stop checkpoints of the models a signal
 * cancelled (read before FINISH puts their kept weights in place), then
 * the ended models' results (FINISH), awaited. */
static int lib_finish(LibRun *R, const FsJob *jobs, FsErr *err)
{
    return lib_ckpt_stops(R, jobs, err) || lib_op(R, FS_LIB_FINISH, 0, 0, 0, err) ||
                   lib_wait(R, jobs, "the fits' ends", err)
               ? -1
               : 0;
}

/* After an epoch: each model's curves to its job, the stopped ones
 * collected and recorded; 1 while any model trains on. *epochs: those
 * completed by the models still training. */
static int lib_hand(LibRun *R, const FsJob *jobs, const FsGpuWatch *w, unsigned char *ended, long *epochs,
                    FsErr *err)
{
    Launch *L = R->L;
    volatile Watch *wa = (volatile Watch *)L->watch;
    int active = 0;
    *epochs = 0;
    for (int s = 0; s < L->n; s++) {
        if (L->handed[s]) continue;
        const int seen = L->seen[s];
        if (L->done[s]) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            lib_ckpt_close(R, s); /* its outputs in the job's spec before finished() reads them */
            if (launch_collect_one(jobs, L, s, w, err) != 0) return -1;
            ended[L->job[s]] = 1;
            continue;
        }
        launch_hand(&jobs[L->job[s]], L, s, wa[s].progress);
        /* The epoch validated: the checkpoint hook's point (a test's kill). */
        if (L->seen[s] > seen && R->ck[s]) core_lib_ckpt_event(R->ck[s], L->seen[s]);
        *epochs += wa[s].progress;
        active = 1;
    }
    return active;
}

/* The group's convolutions (kernels/dnn.h), sized once: a layer with GEMMs
 * over the group's row budget, the models one stride apart, each through
 * the back end the device's table gives its training shape
 * (gpu_table_choose; cuBLAS without a table, or where the build has no
 * cuDNN), both on the group's stream. A window model's training calls span
 * its batch, not the larger eval_batch its buffers hold: at batch 8 beside
 * eval_batch 256 that is a 32nd of the work (the rows past them are never
 * read by a training step's ops). */
static int lib_setup(LibRun *R, FsErr *err)
{
    Launch *L = R->L;
    const FsNet *net = &L->nets[0];
    const long stride = (long)(L->stride / sizeof(float));
    R->conv = (FsDnnConv *)fs_calloc(2 * (size_t)net->n + 1, sizeof(FsDnnConv));
    R->be = (unsigned char *)fs_calloc((size_t)net->n + 1, 1);
    int n_conv[2] = {0, 0}, rc = 0;
    FsDnnConv *list[2];
    for (int b = 0; b < 2; b++) list[b] = (FsDnnConv *)fs_calloc(2 * (size_t)net->n + 1, sizeof(FsDnnConv));
    for (int i = 0; i < net->n; i++) {
        if (!step_layer_gemms(net, i)) continue;
        const FsLayer *y = &net->layer[i];
        /* A chain batch is one example of the row budget's rows; a window
         * batch up to train_batch (validation: max_batch) examples of the
         * layer's positions. */
        FsDnnConv c = {L->width, net->train_batch, y->in_l, y->in_pad, y->in_c, y->out_c,
                       y->spec.width, y->dil, stride, stride, stride};
        const int be = gpu_table_choose(R->gpu->has_table ? &R->gpu->table : NULL, c.G, (long)c.B * c.L, c.C, c.F,
                                         c.K, c.dil);
        R->be[i] = (unsigned char)(be == FS_DNN_CUDNN && fs_dnn_available(FS_DNN_CUDNN) ? FS_DNN_CUDNN : FS_DNN_CUBLAS);
        R->conv[2 * i] = R->conv[2 * i + 1] = c;
        R->conv[2 * i + 1].B = net->max_batch;
        list[R->be[i]][n_conv[R->be[i]]++] = R->conv[2 * i];
        list[R->be[i]][n_conv[R->be[i]]++] = R->conv[2 * i + 1];
    }
    for (int b = 0; b < 2 && !rc; b++) {
        if (!n_conv[b]) continue;
        R->dnn[b] = fs_dnn_open((FsDnnBackend)b, L->stream, 0, err);
        rc = R->dnn[b] ? fs_dnn_reserve(R->dnn[b], list[b], n_conv[b], err) : -1;
    }
    for (int b = 0; b < 2; b++) free(list[b]);
    if (rc) return -1;
    char *d_state = NULL;
    FsLibPublic *d_pub = NULL;
    LIB_CU(cudaMalloc((void **)&d_state, core_lib_state_bytes() * (size_t)L->n), "the models' state");
    /* Zero: a model not resumed from a checkpoint (FsLibState.resumed) begins afresh. */
    LIB_CU(cudaMemset(d_state, 0, core_lib_state_bytes() * (size_t)L->n), "the models' state");
    R->ck = (FsLibCkpt **)fs_calloc((size_t)L->n + 1, sizeof(FsLibCkpt *));
    R->args.state = d_state;
    LIB_CU(cudaHostAlloc((void **)&R->pub, sizeof(FsLibPublic) * (size_t)L->n, cudaHostAllocMapped),
           "the models' public records");
    memset(R->pub, 0, sizeof(FsLibPublic) * (size_t)L->n);
    LIB_CU(cudaHostGetDevicePointer((void **)&d_pub, R->pub, 0), "the models' public records");
    int *d_done = NULL;
    LIB_CU(cudaHostGetDevicePointer((void **)&d_done, (void *)L->done, 0), "the done flags");
    FsFitLaunch fit = {L->d_models, L->d_folds, L->d_specs, L->d_res, d_done, 0, 0}; /* the tier's kernel: weights in global memory, no staging area */
    R->args.fit = fit;
    R->args.pub = d_pub;
    return 0;
}

static void lib_free(LibRun *R)
{
    if (R->L->stream) cudaStreamSynchronize(R->L->stream);
    if (R->train_step) cudaGraphExecDestroy(R->train_step);
    if (R->val_step) cudaGraphExecDestroy(R->val_step);
    for (int b = 0; b < 2; b++)
        if (R->dnn[b]) fs_dnn_close(R->dnn[b]);
    free(R->be);
    for (int s = 0; R->ck && s < R->L->n; s++) lib_ckpt_close(R, s);
    free(R->ck);
    cudaFree(R->args.state);
    if (R->pub) cudaFreeHost(R->pub);
    free(R->conv);
}

static int lib_flagged(const FsJob *job) { return (job->cancel && *job->cancel) || (job->prune && *job->prune); }

/* Between epochs: each slot whose model has been collected takes the next
 * queued job (launch_refill; its state and public record zeroed, so that
 * FS_LIB_BEGIN starts it alone). A queued job whose cancel or prune flag
 * is up ends cancelled, untrained, as lib_skip's do. The slots refilled,
 * or -1 with err. */
static int lib_refill(FsGpu *g, LibRun *R, const FsJob *jobs, FsErr *err)
{
    Launch *L = R->L;
    int filled = 0;
    for (int s = 0; s < L->n && L->next_queue < L->n_queue; s++) {
        if (!L->handed[s]) continue;
        int j = -1;
        while (j < 0 && L->next_queue < L->n_queue) {
            j = L->queue[L->next_queue++];
            if (lib_flagged(&jobs[j])) jobs[j].result->status = FS_FIT_CANCELLED, j = -1;
        }
        if (j < 0) break;
        const size_t sb = core_lib_state_bytes();
        LIB_CU(cudaMemset(R->args.state + (size_t)s * sb, 0, sb), "a refilled slot's state");
        memset(&R->pub[s], 0, sizeof R->pub[s]);
        if (launch_refill(g, jobs, L, s, j, err) || lib_ckpt_start(R, jobs, s, err)) return -1;
        filled++;
    }
    return filled;
}

/* Whether every job of the selection has its cancel or prune flag raised:
 * the group is not started, and its jobs end cancelled, untrained (a
 * resumed run trains them), as a model told to stop before its first step. */
static int lib_skip(const FsJob *jobs, int n, const unsigned char *sel)
{
    for (int j = 0; j < n; j++)
        if (sel[j] && !lib_flagged(&jobs[j])) return 0;
    for (int j = 0; j < n; j++)
        if (sel[j]) jobs[j].result->status = FS_FIT_CANCELLED;
    return 1;
}

/* A group: its launch (built from the jobs sel marks), its run, whether it
 * trains on. */
typedef struct {
    Launch L;
    LibRun R;
    int live;
} LibGroup;

/* A group of job's signature `width` models wide, or fewer where the
 * device's free memory (85% of it, gpu_capacity's share) cannot hold so
 * many beside what the launch's other groups took: the run's rule
 * (run/gpu_groups.c) bounds a width by the device's whole memory, which
 * the data set and the other groups share. Said once a group, since such
 * a group's calls differ from the rule's, and with them maybe a model's
 * last bits; its fold records name the width it had. */
static int lib_fit_width(FsGpu *g, const FsJob *job, int width)
{
    FsNet net;
    uint32_t nt, nv;
    const size_t budget = launch_budget(g, job);
    if (train_job_check(job, &net, &nt, &nv) != 0 || budget == 0)
        return width; /* launch_build refuses the job, or the allocation fails, with why */
    int w = width;
    while (w > 1 && gpu_lib_group_bytes(&net, nt, w) > budget) w--;
    if (w < width && job->lib_width > 0)
        fprintf(stderr, "foldsweep: GPU %s: a library group of %d models does not fit its free memory; it trains %d wide\n",
                g->lim.name, width, w);
    return w;
}

static int lib_open(FsGpu *g, LibGroup *G, const FsJob *jobs, int n, const unsigned char *sel, FsErr *err)
{
    G->R.L = &G->L;
    G->R.gpu = g;
    /* Its jobs' width (the run's rule: FsJob.lib_width), or without one
     * the models it holds, at most the cap's; at most what memory holds. */
    int width = 0, first = -1;
    for (int j = 0; j < n && first < 0; j++)
        if (sel[j]) first = j, width = jobs[j].lib_width;
    if (first < 0) return 0;
    const int slots = lib_fit_width(g, &jobs[first], width > 0 ? width : gpu_lib_group_cap());
    int rc = launch_build(g, jobs, n, sel, FS_GPU_LIBRARY, slots, width > 0 ? slots : 0, &G->L, err);
    if (!rc && G->L.n > 0) rc = lib_setup(&G->R, err);
    for (int s = 0; !rc && s < G->L.n; s++) rc = lib_ckpt_start(&G->R, jobs, s, err);
    if (!rc && G->L.n > 0) rc = lib_op(&G->R, FS_LIB_BEGIN, 0, 0, 1, err);
    G->live = !rc && G->L.n > 0;
    return rc;
}

/* After group G's epoch: its models handed out, its freed slots refilled
 * (their models begun); G->live 0 once nothing trains and nothing waits. */
static int lib_after(FsGpu *g, LibGroup *G, const FsJob *jobs, const FsGpuWatch *w, unsigned char *ended, long *epochs,
                     FsErr *err)
{
    const int active = lib_hand(&G->R, jobs, w, ended, epochs, err);
    const int filled = active < 0 ? 0 : lib_refill(g, &G->R, jobs, err);
    if (active < 0 || filled < 0) return -1;
    if (filled > 0 && lib_op(&G->R, FS_LIB_BEGIN, 0, 0, 1, err)) return -1; /* the new models only */
    G->live = active > 0 || filled > 0;
    return 0;
}

/* The groups train at once, each on its own stream, epoch by epoch in
 * three passes: every group's epoch start queued, then each group's steps
 * queued once its start is done, then each group's end awaited and its
 * models handed out. While the host waits on one group the device runs
 * the others. */
static int lib_run(FsGpu *g, LibGroup *G, int groups, const FsJob *jobs, const FsGpuWatch *w, unsigned char *ended,
                   FsErr *err)
{
    for (;;) {
        int live = 0;
        for (int k = 0; k < groups; k++) {
            if (!G[k].live) continue;
            live = 1;
            if (lib_op(&G[k].R, FS_LIB_EPOCH, 0, 0, 1, err)) return -1;
        }
        if (!live) return 0;
        for (int k = 0; k < groups; k++)
            if (G[k].live && lib_epoch(&G[k].R, jobs, err)) return -1;
        long epochs = 0;
        for (int k = 0; k < groups; k++) {
            long e = 0;
            if (!G[k].live) continue;
            if (lib_wait(&G[k].R, jobs, "the epoch's end", err) || lib_finish(&G[k].R, jobs, err) ||
                lib_after(g, &G[k], jobs, w, ended, &e, err))
                return -1;
            epochs += e;
        }
        if (w && w->progress) w->progress(w->ctx, epochs);
    }
}

int gpu_lib_train(FsGpu *g, const FsJob *jobs, int n, const FsGpuWatch *w, unsigned char *ended, FsErr *err)
{
    int *group = (int *)fs_calloc((size_t)n + 1, sizeof(int));
    unsigned char *sel = (unsigned char *)fs_calloc((size_t)n + 1, 1);
    const int groups = lib_groups(g, jobs, n, group);
    LibGroup *G = (LibGroup *)fs_calloc((size_t)groups + 1, sizeof(LibGroup));
    int rc = 0;
    for (int k = 0; k < groups && !rc; k++) {
        for (int j = 0; j < n; j++) sel[j] = group[j] == k;
        if (!lib_skip(jobs, n, sel)) rc = lib_open(g, &G[k], jobs, n, sel, err);
    }
    if (!rc) rc = lib_run(g, G, groups, jobs, w, ended, err);
    for (int k = 0; k < groups; k++) {
        for (int j = 0; j < n && G[k].L.job_end; j++) ended[j] |= G[k].L.job_end[j];
        if (G[k].R.L) lib_free(&G[k].R);
        launch_free(&G[k].L);
    }
    free(G);
    free(group);
    free(sel);
    return rc;
}
