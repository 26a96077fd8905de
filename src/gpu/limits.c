/*
 * limits: what the fit kernel needs from a device, and the device profiles
 * (built with or without CUDA: `foldsweep plan` asks where no device is).
 * The CUDA stand-in (src/gpu/emulate) builds its devices from the same
 * profiles, so an emulated refusal is the one a real H200 or A100 gives.
 * The profiles' rates feed `plan --gpu`'s estimates (gpu_estimate, a
 * roofline: docs/benchmarks.md, "GPU estimates").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "train/kernel.h"

/* The two devices foldsweep is built for (sm_80, sm_90): the vendor's
 * figures (CUDA programming guide, compute capability tables; peak FP32
 * without tensor cores and memory bandwidth from NVIDIA's data sheets:
 * H200 SXM 67 TFLOP/s, 4.8 TB/s; A100 80GB SXM 19.5 TFLOP/s, 2.0 TB/s). */
static const FsGpuLimits profiles[] = {
    {"h200", 150109880320ull, 227 * 1024, 228 * 1024, 132, 65536, 2048, 9, 0, 67.0, 4.8},
    {"a100", 85089058816ull, 163 * 1024, 164 * 1024, 108, 65536, 2048, 8, 0, 19.5, 2.0},
};
#define N_PROFILES (int)(sizeof profiles / sizeof profiles[0])

int gpu_profile(const char *name, FsGpuLimits *out)
{
    for (int i = 0; i < N_PROFILES; i++)
        if (name && strcmp(name, profiles[i].name) == 0) {
            *out = profiles[i];
            return 0;
        }
    return -1;
}

const char *gpu_profile_names(void) { return "h200, a100"; }

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

size_t gpu_model_bytes(const FsNet *net, uint32_t n_train) { return align256(core_model_bytes(net, n_train)); }

const char *gpu_tier_name(FsGpuTier t)
{
    return t == FS_GPU_BLOCK || t == FS_GPU_LIBRARY ? train_gpu_path_name((int)t) : "refused";
}

/* A device's rates: its own where known, else its compute capability's
 * profile (a device read by gpu_limits has none), else the h200's. */
static void limits_rates(const FsGpuLimits *lim, double *tflops, double *tbps)
{
    const FsGpuLimits *p = &profiles[0];
    for (int i = 0; i < N_PROFILES; i++)
        if (profiles[i].major == lim->major) p = &profiles[i];
    *tflops = lim->fp32_tflops > 0 ? lim->fp32_tflops : p->fp32_tflops;
    *tbps = lim->mem_tbps > 0 ? lim->mem_tbps : p->mem_tbps;
}

static size_t align64f(size_t n) { return (n + 63) / 64 * 64; }

size_t gpu_lib_conv_scratch_floats(long G, long rows, int C, int F, int K)
{
    const size_t r = (size_t)G * (size_t)rows;
    const size_t fwd = align64f(r * (size_t)K * (size_t)C) + align64f(r * (size_t)F);
    const size_t dgrad =
        align64f(r * (size_t)K * (size_t)F) + align64f(r * (size_t)C) + align64f((size_t)G * K * F * C);
    return fwd > dgrad ? fwd : dgrad;
}

size_t gpu_lib_group_extra_bytes(const FsNet *net, int G)
{
    size_t floats = 0;
    for (int i = 0; i < net->n; i++) {
        if (!step_layer_gemms(net, i)) continue;
        const FsLayer *y = &net->layer[i];
        const size_t f = gpu_lib_conv_scratch_floats(G, (long)net->max_batch * net->in_rows, y->in_c, y->out_c,
                                                     y->spec.width);
        if (f > floats) floats = f;
    }
    return floats * sizeof(float) + FS_GPU_LIB_CUBLAS_WS + (size_t)G * core_lib_state_bytes();
}

int gpu_lib_group_cap(void)
{
    const char *v = getenv("FOLDSWEEP_GPU_GROUP");
    const int n = v && *v ? atoi(v) : 0;
    return n >= 1 && n <= FS_GPU_LIB_GROUP_MAX ? n : FS_GPU_LIB_GROUP_MAX;
}

int gpu_lib_same_shape(const FsNet *a, const FsNet *b)
{
    if (a->chain != b->chain || a->n != b->n || a->in_rows != b->in_rows || a->pad != b->pad ||
        a->max_batch != b->max_batch || a->train_batch != b->train_batch || a->n_params != b->n_params ||
        a->n_state != b->n_state ||
        a->n_work != b->n_work || a->n_scratch != b->n_scratch || a->classes != b->classes ||
        a->out_rows != b->out_rows || a->feat_in != b->feat_in)
        return 0;
    for (int i = 0; i < a->n; i++) {
        const FsLayer *x = &a->layer[i], *y = &b->layer[i];
        if (x->op != y->op || x->gather != y->gather || x->in_c != y->in_c || x->out_c != y->out_c ||
            x->in_l != y->in_l || x->spec.width != y->spec.width || x->dil != y->dil || x->w != y->w ||
            x->b != y->b || x->a != y->a || x->d != y->d || x->in_pad != y->in_pad)
            return 0;
    }
    return 1;
}


size_t gpu_launch_arrays_bytes(int n)
{
    return align256(sizeof(FsNet) * (size_t)n) + align256(sizeof(FsModel) * (size_t)n) +
           align256(sizeof(FsFoldData) * (size_t)n) + align256(sizeof(FsTrainSpec) * (size_t)n) +
           align256(sizeof(FsFitResult) * (size_t)n);
}

size_t gpu_lib_group_bytes(const FsNet *net, uint32_t n_train, int width)
{
    return (size_t)width * gpu_model_bytes(net, n_train) + gpu_launch_arrays_bytes(width) +
           gpu_lib_group_extra_bytes(net, width);
}

size_t gpu_resident_bytes(const FsDataset *ds, int folds)
{
    const size_t n = ds->n_res, feat = (size_t)ds->feat_dim * (ds->feat_half ? 2 : 4);
    /* The residues' codes, labels, chain ends and features, then each
     * fold's example lists (a refit's and the predefined split's too), a
     * window model's and a chain model's: every example once a list. */
    return align256(n * 4 + n * feat) + (size_t)(folds + 2) * 2 * align256(n * sizeof(uint32_t));
}

/* "needs 61.2 MiB of device memory, more than 85% of the h200's 64.0 MiB":
 * MiB below a GiB, so that a small card's need and limit never read as the
 * same rounded figure. -1, for the caller's return. */
static int memory_refusal(size_t need, const FsGpuLimits *lim, const char *tier, char *why, size_t n)
{
    char a[32], b[32];
    const size_t v[2] = {need, lim->memory};
    char *out[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if (v[i] < ((size_t)1 << 30))
            snprintf(out[i], sizeof a, "%.1f MiB", (double)v[i] / (1 << 20));
        else
            snprintf(out[i], sizeof a, "%.2f GiB", (double)v[i] / (1 << 30));
    snprintf(why, n, "needs %s of device memory%s, more than 85%% of the %s's %s", a, tier, lim->name, b);
    return -1;
}

/* A chain model on the library tier: its group of one must fit the device
 * (kernels/lib_train.cu lays a group out as gpu_model_bytes each, beside
 * the libraries' scratch and workspace: gpu_lib_group_extra_bytes). */
static FsGpuTier library_check(const FsGpuLimits *lim, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                               char *why, size_t n)
{
    FsNet net;
    FsErr err = {0};
    if (train_compile(arch, ts, 0, &net, &err) != 0) return snprintf(why, n, "%s", err.msg), FS_GPU_REFUSED;
    size_t bytes = gpu_model_bytes(&net, n_train) + gpu_lib_group_extra_bytes(&net, 1);
    if (bytes > lim->memory / 100 * 85) return memory_refusal(bytes, lim, " on the library tier", why, n), FS_GPU_REFUSED;
    return FS_GPU_LIBRARY;
}

static int auto_prefers_library(const FsGpuLimits *lim, const FsNet *net, const FsTrainSpec *ts);

FsGpuTier gpu_model_check(const FsGpuLimits *lim, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                          char *why, size_t n)
{
    FsNet net;
    FsErr err = {0};
    /* The block keeps a batch's codes and labels in shared memory, a
     * window's worth per example; a chain batch's thousands of rows do not
     * fit there: chain models go to the library tier, whatever is asked. */
    if (arch->chain && ts->gpu_path == FS_GPU_PATH_BLOCK)
        return snprintf(why, n, "a chain model needs the library tier (run.gpu_path: library or auto)"),
               FS_GPU_REFUSED;
    if (arch->chain) return library_check(lim, arch, ts, n_train, why, n);
    /* A window model trains on the library tier where asked (run.gpu_path:
     * library), and under auto where it does not fit a block or where its
     * training step is large enough that the roofline puts the library
     * tier ahead (auto_prefers_library, where it fits the device). */
    if (ts->gpu_path == FS_GPU_PATH_LIBRARY) return library_check(lim, arch, ts, n_train, why, n);
    if (train_compile(arch, ts, 0, &net, &err) != 0) return snprintf(why, n, "%s", err.msg), FS_GPU_REFUSED;
    if (ts->gpu_path == FS_GPU_PATH_AUTO && auto_prefers_library(lim, &net, ts)) {
        FsGpuTier t = library_check(lim, arch, ts, n_train, why, n);
        if (t == FS_GPU_LIBRARY) return t;
    }
    /* The batch's codes, labels, losses and predictions and the reduction
     * partials live in the block's shared memory (kernels/fit_kernel.cu),
     * beside the kernel's static shared memory: the two within what a
     * block may opt in to. */
    size_t shared = core_model_hot_bytes(&net);
    const size_t most = lim->shared_optin > FS_GPU_STATIC_SHARED ? lim->shared_optin - FS_GPU_STATIC_SHARED : 0;
    if (shared > most && ts->gpu_path == FS_GPU_PATH_AUTO) return library_check(lim, arch, ts, n_train, why, n);
    if (shared > most)
        return snprintf(why, n,
                        "needs %zu bytes of shared memory per block (batch %d x window %d), more than the %s's %zu "
                        "(run.gpu_path: auto or library trains it on the library tier)",
                        shared, net.max_batch, arch->window, lim->name, most),
               FS_GPU_REFUSED;
    size_t bytes = gpu_model_bytes(&net, n_train);
    if (bytes > lim->memory / 100 * 85) return memory_refusal(bytes, lim, "", why, n), FS_GPU_REFUSED;
    return FS_GPU_BLOCK;
}

/* The estimate's assumptions, to be calibrated by scripts/gpu-check (#44
 * item 6): none is measured on the library tier yet.
 * - A block trains one model at about 4 GFLOP/s (measured: R1 at batch 8
 *   on an H200, docs/benchmarks.md "GPU: first run on a device"), and
 *   FS_GPU_MIN_BLOCKS blocks (the kernel's launch bounds) share an SM
 *   without slowing each other.
 * - The library tier reaches FS_EST_LIB_FLOP_EFF of the FP32 peak on its
 *   GEMMs and FS_EST_LIB_BW_EFF of the memory bandwidth (the issue's
 *   30-50%), whichever bounds a step, plus FS_EST_LIB_CALL_S per library
 *   or kernel call of a step replayed from a CUDA graph. */
#define FS_EST_BLOCK_GFLOPS 4.0
#define FS_EST_LIB_FLOP_EFF 0.35
#define FS_EST_LIB_BW_EFF 0.6
#define FS_EST_LIB_CALL_S 4e-6

size_t gpu_block_shared(const FsGpuLimits *lim)
{
    const size_t each = lim->shared_per_sm / FS_GPU_MIN_BLOCKS, fixed = FS_GPU_SHARED_RESERVED + FS_GPU_STATIC_SHARED;
    const size_t room = each > fixed ? each - fixed : 0;
    return room < lim->shared_optin ? room : lim->shared_optin;
}

int gpu_parallel_blocks(const FsGpuLimits *lim) { return (lim->sms > 0 ? lim->sms : 1) * FS_GPU_MIN_BLOCKS; }

void gpu_rates_describe(const FsGpuLimits *lim, char *out, size_t n)
{
    double tf, tb;
    limits_rates(lim, &tf, &tb);
    snprintf(out, n, "%g TFLOP/s FP32, %g TB/s;\n    assumed: a block %g GFLOP/s, %d blocks an SM; the library tier %.0f%% of "
                     "FP32, %.0f%% of the bandwidth, %g us a call",
             tf, tb, FS_EST_BLOCK_GFLOPS, FS_GPU_MIN_BLOCKS, FS_EST_LIB_FLOP_EFF * 100, FS_EST_LIB_BW_EFF * 100,
             FS_EST_LIB_CALL_S * 1e6);
}

/* A row's FLOP, forward only or with backward: the net's per row, and
 * attention's pairs over a chain of pair_len rows (FsNet.flops_pair_fwd). */
static double row_flop(const FsNet *net, int train, double pair_len)
{
    const double per_row = (double)(train ? net->flops_fwd + net->flops_bwd : net->flops_fwd) / net->out_rows;
    return per_row + pair_len * (double)(train ? net->flops_pair_fwd + net->flops_pair_bwd : net->flops_pair_fwd);
}

/* One library step of `group` models over `rows` rows each (forward only
 * when !train): the slower of its GEMMs and its memory traffic, plus its
 * calls. Bytes per model: the weights, their gradient and Adam's two
 * moments read and written (8 floats a parameter), and the activations
 * written forward, read backward and their gradients written (3 floats of
 * the workspace each; forward only: 1). The workspace holds max_batch
 * examples; a training step touches train_batch of them. */
static double library_step(const FsNet *net, double rows, int group, int train, double pair_len, double tflops,
                           double tbps)
{
    const double flop = group * rows * row_flop(net, train, pair_len);
    const double work = train ? (double)net->n_work * net->train_batch / net->max_batch : (double)net->n_work;
    const double bytes =
        group * 4.0 * (train ? 8.0 * (double)net->n_params + 3.0 * work : (double)net->n_params + work);
    const double t = fmax(flop / (tflops * 1e12 * FS_EST_LIB_FLOP_EFF), bytes / (tbps * 1e12 * FS_EST_LIB_BW_EFF));
    const int calls = train ? 5 * net->n + 4 : 2 * net->n;
    return t + calls * FS_EST_LIB_CALL_S;
}

/* auto's threshold for a window model that fits a block (#44 part 1): the
 * library tier where, by the estimate's own assumptions, a training step
 * costs the device less time there than on the block tier with the device
 * full of blocks, i.e. where
 *   library_step(net, batch, W) / W  <  step FLOP / (blocks x FS_EST_BLOCK_GFLOPS)
 * for W = FS_GPU_AUTO_GROUP models a group, a k-fold trial's 3 folds: the
 * narrowest group a trial commonly gets (a wider one only favours the
 * library tier more). Calls dominate a small step (some 5 a layer at
 * FS_EST_LIB_CALL_S each): on the h200 profile two conv layers of 32
 * filters over windows of 17 cross at batch 128, of 64 filters at batch 32
 * (test_gpu_tier prints them). It moves with
 * the FS_EST_* assumptions, which scripts/gpu-check's measurements are to
 * calibrate; a device may put it elsewhere. */
#define FS_GPU_AUTO_GROUP 3

static int auto_prefers_library(const FsGpuLimits *lim, const FsNet *net, const FsTrainSpec *ts)
{
    double tf, tb;
    limits_rates(lim, &tf, &tb);
    const double step_flop = (double)ts->batch * row_flop(net, 1, 0);
    const double block_s = step_flop / (gpu_parallel_blocks(lim) * FS_EST_BLOCK_GFLOPS * 1e9);
    return library_step(net, ts->batch, FS_GPU_AUTO_GROUP, 1, 0, tf, tb) / FS_GPU_AUTO_GROUP < block_s;
}

int gpu_estimate(const FsGpuLimits *lim, FsGpuTier tier, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                 uint32_t n_val, int group, double pair_len, FsGpuEstimate *out)
{
    FsNet net;
    FsErr err = {0};
    if (train_compile(arch, ts, 0, &net, &err) != 0) return -1;
    const double epochs = ts->stop.max_epochs; /* a window model's example: one residue */
    if (!arch->chain) pair_len = 0;
    out->flop = epochs * ((double)n_train * row_flop(&net, 1, pair_len) + (double)n_val * row_flop(&net, 0, pair_len));
    out->pair_flop = epochs * pair_len *
                     ((double)n_train * (double)(net.flops_pair_fwd + net.flops_pair_bwd) +
                      (double)n_val * (double)net.flops_pair_fwd);
    if (tier != FS_GPU_LIBRARY) {
        out->seconds = out->flop / (FS_EST_BLOCK_GFLOPS * 1e9);
        return 0;
    }
    double tf, tb;
    limits_rates(lim, &tf, &tb);
    if (group < 1) group = 1;
    /* A step's rows: a window model's batch, a chain model's batch budget. */
    const double step = arch->chain ? ts->batch_residues : ts->batch, eval = arch->chain ? ts->batch_residues : ts->eval_batch;
    const double steps = ceil(n_train / step), evals = ceil(n_val / eval);
    const double group_s = epochs * (steps * library_step(&net, step, group, 1, pair_len, tf, tb) +
                                     evals * library_step(&net, eval, group, 0, pair_len, tf, tb));
    out->seconds = group_s / group;
    return 0;
}
