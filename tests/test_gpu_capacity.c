/*
 * test_gpu_capacity: what gpu_capacity promises fits. On the CUDA stand-in
 * (a FOLDSWEEP_CUDA=EMULATE build; skipped elsewhere, as a real device's
 * memory cannot be set) with a small device (FOLDSWEEP_EMU_MEMORY), a
 * launch of exactly gpu_capacity() models of a tiny architecture trains:
 * its one device allocation (the models' buffers, then the launch's arrays
 * of FsNet, FsModel, FsFoldData, FsTrainSpec and FsFitResult per model) and
 * its fold's example lists, uploaded by the launch after capacity was
 * read, fit in what was free. A tiny model is where an undercount shows:
 * the arrays are a fixed ~5,400 bytes a model, the 15% margin a share of
 * the model's own bytes, and the flat 4096 bytes capacity once counted for
 * the arrays made this launch fail (out of memory). And capacity is tight:
 * a launch of capacity / 0.85 models and a tenth more does not fit, so
 * capacity is not an arbitrarily safe guess.
 */
#include <stdlib.h>

#include "gpu/gpu.h"
#include "synth/synth.h"
#include "test.h"
#include "test_emu_device.h"
#include "train/train.h"

/* The device: small enough that capacity is some dozens of tiny models. */
#define DEVICE_MEMORY "1M"

static void tiny(FsArch *a)
{
    memset(a, 0, sizeof *a);
    a->window = 3;
    a->n_layers = 1;
    a->layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 1, .width = 1, .act = FS_ACT_RELU};
}

/* n jobs of arch on fold 0; their results allocated. */
static FsJob *jobs_of(int n, const FsArch *arch, const FsTrainSpec *ts, const FsDataset *ds, int *cancel)
{
    FsJob *jobs = fs_calloc((size_t)n, sizeof *jobs);
    for (int i = 0; i < n; i++) {
        FsFitResult *r = fs_calloc(1, sizeof *r);
        train_result_alloc(r, ts->stop.max_epochs);
        jobs[i] = (FsJob){.arch = arch, .spec = ts, .data = ds, .fold = 0, .result = r, .cancel = cancel};
    }
    return jobs;
}

static void jobs_free(FsJob *jobs, int n)
{
    for (int i = 0; i < n; i++) {
        train_result_free(jobs[i].result);
        free(jobs[i].result);
    }
    free(jobs);
}

/* A data set large beside the device: each model's buffer is mostly its
 * fold's example order, and the fold's example lists (every example of
 * the data set, uploaded once a fold, on its first launch) are more than
 * the margin. Capacity counts them: its launch fits. Cancelled from the
 * start: only the allocation is in question. */
static void big_data(void)
{
    FsDataset ds;
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 500, 2, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 2, 1, &err) == 0, "%s", err.msg);
    FsArch arch;
    tiny(&arch);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.stop.max_epochs = 1;
    FsGpu *g = gpu_open(0, &ds, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    if (!g) return;
    FsJob probe = {.arch = &arch, .spec = &ts, .data = &ds, .fold = 0};
    int cap = gpu_capacity(g, &probe);
    uint32_t nt = data_examples(&ds, 0, 0, NULL), nv = data_examples(&ds, 0, 1, NULL);
    printf("%u residues, fold 0: %u training and %u validation examples: capacity %d\n", ds.n_res, nt, nv, cap);
    CHECK_MSG(cap >= 1, "capacity %d", cap);
    int cancel = 1;
    FsJob *jobs = jobs_of(cap, &arch, &ts, &ds, &cancel);
    CHECK_MSG(gpu_train(g, jobs, cap, NULL, &err) == 0, "a launch of capacity's %d models: %s", cap, err.msg);
    int cancelled = 0;
    for (int i = 0; i < cap; i++) cancelled += jobs[i].result->status == FS_FIT_CANCELLED;
    CHECK_MSG(cancelled == cap, "%d of %d models ran and were cancelled", cancelled, cap);
    jobs_free(jobs, cap);
    gpu_close(g);
    data_free(&ds);
}

int main(void)
{
    ted_start(DEVICE_MEMORY); /* before the stand-in first reads its settings */
    FsDataset ds;
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 2, 1, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 2, 1, &err) == 0, "%s", err.msg);
    FsArch arch;
    tiny(&arch);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = 1;
    ts.eval_batch = 1;
    ts.stop.max_epochs = 1;
    FsNet net;
    CHECK_MSG(model_compile(&net, &arch, ts.batch, &err) == 0, "%s", err.msg);
    uint32_t nt = data_examples(&ds, 0, 0, NULL);
    size_t model = gpu_model_bytes(&net, nt);

    FsGpu *g = gpu_open(0, &ds, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    if (!g) return test_finish();
    FsJob probe = {.arch = &arch, .spec = &ts, .data = &ds, .fold = 0};
    int cap = gpu_capacity(g, &probe);
    printf("device %s, %zu bytes a model's buffer (%u training examples): capacity %d\n", DEVICE_MEMORY, model, nt,
           cap);
    /* Some dozens: the arrays' bytes, not the margin's rounding, decide. */
    CHECK_MSG(cap >= 10 && cap <= 1000, "capacity %d", cap);

    FsJob *jobs = jobs_of(cap, &arch, &ts, &ds, NULL);
    err = (FsErr){0};
    CHECK_MSG(gpu_train(g, jobs, cap, NULL, &err) == 0, "a launch of capacity's %d models: %s", cap, err.msg);
    int ok = 0;
    for (int i = 0; i < cap; i++) ok += jobs[i].result->status == FS_FIT_OK && jobs[i].result->epochs == 1;
    CHECK_MSG(ok == cap, "%d of %d models trained", ok, cap);
    jobs_free(jobs, cap);

    /* Capacity's slack is the 15% margin and the arrays' rounding counted
     * for one model (align256 of each array) rather than for many: a
     * launch of capacity / 0.85 models and a tenth more does not fit.
     * Cancelled from the start: only the allocation is in question. */
    int over = (int)(cap / 0.85 * 1.1) + 1, cancel = 1;
    jobs = jobs_of(over, &arch, &ts, &ds, &cancel);
    err = (FsErr){0};
    int rc = gpu_train(g, jobs, over, NULL, &err);
    CHECK_MSG(rc != 0, "%d models (capacity %d) fit: capacity is not tight", over, cap);
    CHECK_CONTAINS(err.msg, "memory");
    jobs_free(jobs, over);

    gpu_close(g);
    data_free(&ds);
    big_data();
    return test_finish();
}
