/*
 * test_gpu_drive: the GPU driver's fill (run/gpu_driver.c, run_gpu_drive)
 * with the library tier's groups (#44), on the CUDA stand-in (a
 * FOLDSWEEP_CUDA=EMULATE build; skipped elsewhere, as a real device's
 * memory cannot be set) with a small device (FOLDSWEEP_EMU_MEMORY). A
 * group counts its width once and its other jobs join it free, so a
 * signature wider than the device's capacity still trains in one launch
 * (it had one model a launch: the group's first job counted as a whole
 * device); and a launch takes at most FS_GPU_FILL_QUEUE widths of a
 * signature's jobs, leaving the rest to other launches (and ranks).
 * Launches are counted by the times the driver reports (FsGpuTimes.calls:
 * gpu_train's calls); the jobs are cancelled from the start, so only the
 * fill is in question. A window model on the library tier counts the
 * libraries' scratch and workspace in its capacity, as a chain model does
 * (it counted its buffer alone): fewer of it fit than on the block tier.
 */
#include <stdlib.h>

#include "gpu/gpu.h"
#include "run/gpu_driver.h"
#include "synth/synth.h"
#include "test.h"
#include "test_emu_device.h"
#include "train/train.h"

/* The device: a few of the chain models below. */
#define DEVICE_MEMORY "16M"

typedef struct {
    FsJob *jobs;
    int n, next, done;
    long launches;
} FakeQueue;

static int fq_take(void *ctx, int *id, int wait)
{
    FakeQueue *q = ctx;
    (void)wait;
    if (q->next == q->n) return 0;
    *id = q->next++;
    return 1;
}
static void fq_done(void *ctx, int id) { (void)id, ((FakeQueue *)ctx)->done++; }
static const FsJob *fq_job(void *ctx, int id) { return &((FakeQueue *)ctx)->jobs[id]; }
static void fq_epochs(void *ctx, long e) { (void)ctx, (void)e; }
static void fq_fail(void *ctx, const FsErr *e) { (void)ctx, fprintf(stderr, "driver failed: %s\n", e->msg); }
static void fq_times(void *ctx, const FsGpuTimes *t) { ((FakeQueue *)ctx)->launches = t->calls; }

/* n chain jobs of one signature `width` wide through the driver; its
 * launches, and (*cap) the device's capacity for one of them. */
static long drive(const FsDataset *ds, int n, int width, int *cap)
{
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.chain = 1;
    arch.n_layers = 1;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.stop.max_epochs = 1;
    ts.batch_residues = 256;
    FsGpuLimits lim;
    char why[512];
    CHECK(gpu_limits(0, &lim) == 0);
    CHECK_MSG(gpu_model_check(&lim, &arch, &ts, data_examples(ds, 0, 0, NULL), why, sizeof why) == FS_GPU_LIBRARY,
              "the library tier does not take the chain job: %s", why);
    int cancel = 1;
    FsJob *jobs = fs_calloc((size_t)n, sizeof *jobs);
    FsFitResult *res = fs_calloc((size_t)n, sizeof *res);
    for (int i = 0; i < n; i++) {
        train_result_alloc(&res[i], ts.stop.max_epochs);
        jobs[i] = (FsJob){.arch = &arch, .spec = &ts, .data = ds, .fold = 0, .result = &res[i], .cancel = &cancel,
                          .lib_sig = 0, .lib_width = width};
    }
    FakeQueue fq = {jobs, n, 0, 0, 0};
    FsGpuQueue q = {fq_take, fq_done, fq_job, fq_epochs, fq_fail, &fq, fq_times};
    run_gpu_drive(0, ds, &q);
    CHECK_MSG(fq.done == n, "%d of %d jobs came back", fq.done, n);
    int cancelled = 0;
    for (int i = 0; i < n; i++) cancelled += res[i].status == FS_FIT_CANCELLED;
    CHECK_MSG(cancelled == n, "%d of %d jobs cancelled untrained", cancelled, n);
    FsErr err = {0};
    FsGpu *g = gpu_open(0, ds, &err);
    *cap = g ? gpu_capacity(g, &jobs[0]) : -1;
    gpu_close(g);
    printf("%d jobs %d wide (capacity %d): %ld launches\n", n, width, *cap, fq.launches);
    for (int i = 0; i < n; i++) train_result_free(&res[i]);
    free(res);
    free(jobs);
    return fq.launches;
}

static void window_capacity(const FsDataset *ds)
{
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.window = 9;
    arch.n_layers = 1;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    FsTrainSpec block, lib;
    train_spec_defaults(&block);
    block.stop.max_epochs = 1;
    block.gpu_path = FS_GPU_PATH_BLOCK;
    lib = block;
    lib.gpu_path = FS_GPU_PATH_LIBRARY;
    FsGpuLimits lim;
    char why[512];
    CHECK(gpu_limits(0, &lim) == 0);
    CHECK_MSG(gpu_model_check(&lim, &arch, &lib, data_examples(ds, 0, 0, NULL), why, sizeof why) == FS_GPU_LIBRARY,
              "the library tier does not take the window job: %s", why);
    FsErr err = {0};
    FsGpu *g = gpu_open(0, ds, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    if (!g) return;
    FsJob jb = {.arch = &arch, .spec = &block, .data = ds, .fold = 0}, jl = jb;
    jl.spec = &lib;
    const int cb = gpu_capacity(g, &jb), cl = gpu_capacity(g, &jl);
    printf("a window model: capacity %d on the block tier, %d on the library tier\n", cb, cl);
    CHECK_MSG(cl >= 1 && cl < cb, "capacity %d on the library tier, %d on the block tier", cl, cb);
    gpu_close(g);
}

int main(void)
{
    ted_start(DEVICE_MEMORY); /* before the stand-in first reads its settings */
    FsDataset ds;
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 6, 5, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 2, 1, &err) == 0, "%s", err.msg);
    /* 32 wide on a device that holds fewer: one launch (it was 32). */
    int cap = 0;
    long l = drive(&ds, 32, 32, &cap);
    CHECK_MSG(cap >= 1 && cap < 32, "the device holds %d of these: the test needs 1 to 31", cap);
    CHECK_MSG(l == 1, "32 jobs of a group 32 wide: %ld launches", l);
    /* 2 wide: at most 4 widths a launch, 8 jobs: 20 jobs in 3 launches. */
    l = drive(&ds, 20, 2, &cap);
    CHECK_MSG(l == 3, "20 jobs of a group 2 wide: %ld launches, expected 3 of at most 8", l);
    window_capacity(&ds);
    data_free(&ds);
    return test_finish();
}
