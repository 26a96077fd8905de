/*
 * The tier rule's threshold for window models (gpu_model_check under
 * run.gpu_path: auto, #44 part 1): a window model that fits a block goes to
 * the library tier once its training step is large enough that the
 * roofline puts that tier ahead. On the h200 profile a small model at
 * batch 8 stays on the block tier; raising the batch moves it to the
 * library tier at one batch and every larger one (the rule is monotone in
 * the step); run.gpu_path: block keeps it on the block tier there; a model
 * with twice the filters crosses at a smaller batch (its step's FLOP grow
 * faster than its calls, which do not grow at all). Apart from the
 * threshold, a model whose batches do not fit a block's shared memory goes
 * to the library tier under auto: a tiny model at batch 8 beside eval_batch
 * 4096 (windows of 61) on the a100 profile, below the threshold (at
 * eval_batch 8 it stays on the block tier), refused under block with the
 * shared memory named. And the shared memory a block gives its model's
 * weights (block_shared, below).
 */
#include <math.h>
#include <string.h>

#include "gpu/gpu.h"
#include "train/kernel.h"
#include "train/train.h"

#include "test.h"

/* `layers` conv layers of `filters` (width 5) over windows of `window`. */
static FsGpuTier tier_of(const FsGpuLimits *lim, int window, int layers, int filters, int batch, int eval_batch,
                         FsGpuPath path, char *why, size_t n)
{
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.window = window;
    arch.n_layers = layers;
    for (int i = 0; i < layers; i++)
        arch.layers[i] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = filters, .width = 5, .act = FS_ACT_RELU};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = batch;
    ts.eval_batch = eval_batch;
    ts.gpu_path = path;
    why[0] = 0;
    return gpu_model_check(lim, &arch, &ts, 100000, why, n);
}

static FsGpuTier tier(const FsGpuLimits *lim, int filters, int batch, FsGpuPath path)
{
    char why[512];
    FsGpuTier t = tier_of(lim, 17, 2, filters, batch, batch, path, why, sizeof why);
    CHECK_MSG(t != FS_GPU_REFUSED || path == FS_GPU_PATH_BLOCK, "%d filters, batch %d refused: %s", filters, batch,
              why);
    return t;
}

/* The smallest batch (8 .. 8192, doubling) auto sends to the library tier,
 * checked to stay there for every larger one; 0 if none. */
static int crossing(const FsGpuLimits *lim, int filters)
{
    int first = 0;
    for (int b = 8; b <= 8192; b *= 2) {
        const FsGpuTier t = tier(lim, filters, b, FS_GPU_PATH_AUTO);
        if (t == FS_GPU_LIBRARY && !first) first = b;
        CHECK_MSG(!first || t == FS_GPU_LIBRARY, "%d filters: batch %d on the library tier, batch %d not", filters,
                  first, b);
    }
    return first;
}

/* The estimate counts attention's scores, which grow with the chains
 * (FsNet.flops_pair_fwd): per residue, per residue of its chain and per
 * head, 2 x 2 x key_dim FLOP forward and 2 x 7 x key_dim backward
 * (attention.c's passes); a window model and a chain model without
 * attention are the same at any chain length. */
static void estimate_pairs(const FsGpuLimits *lim)
{
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.chain = 1;
    arch.n_layers = 3;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 16, .width = 5, .act = FS_ACT_RELU};
    arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 4, .key_dim = 6, .max_dist = 8, .eps = 1e-5f};
    arch.layers[2] = (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 2, .key_dim = 5, .max_dist = 8, .eps = 1e-5f};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.stop.max_epochs = 3;
    FsGpuEstimate at0, at100, at300;
    CHECK(gpu_estimate(lim, FS_GPU_LIBRARY, &arch, &ts, 1000, 200, 1, 0, &at0) == 0);
    CHECK(gpu_estimate(lim, FS_GPU_LIBRARY, &arch, &ts, 1000, 200, 1, 100, &at100) == 0);
    CHECK(gpu_estimate(lim, FS_GPU_LIBRARY, &arch, &ts, 1000, 200, 1, 300, &at300) == 0);
    const double hd = 4 * 6 + 2 * 5, want = 3 * 100.0 * (1000 * 18 * hd + 200 * 4 * hd);
    CHECK_MSG(at0.pair_flop == 0 && at100.pair_flop == want && at300.pair_flop == 3 * want,
              "pairs: %g %g %g, want 0, %g, %g", at0.pair_flop, at100.pair_flop, at300.pair_flop, want, 3 * want);
    CHECK_MSG(fabs(at100.flop - at0.flop - want) <= 1e-9 * at100.flop && at100.seconds > at0.seconds, "flop %g -> %g, seconds %g -> %g",
              at0.flop, at100.flop, at0.seconds, at100.seconds);
    arch.layers[1] = arch.layers[2] = (FsLayerSpec){.kind = FS_LAYER_GRU, .units = 8, .bidir = 1};
    CHECK(gpu_estimate(lim, FS_GPU_LIBRARY, &arch, &ts, 1000, 200, 1, 0, &at0) == 0);
    CHECK(gpu_estimate(lim, FS_GPU_LIBRARY, &arch, &ts, 1000, 200, 1, 300, &at300) == 0);
    CHECK(at300.pair_flop == 0 && at300.flop == at0.flop);
    arch.chain = 0;
    arch.window = 17;
    arch.n_layers = 1;
    CHECK(gpu_estimate(lim, FS_GPU_BLOCK, &arch, &ts, 1000, 200, 1, 0, &at0) == 0);
    CHECK(gpu_estimate(lim, FS_GPU_BLOCK, &arch, &ts, 1000, 200, 1, 300, &at300) == 0);
    CHECK(at300.pair_flop == 0 && at300.flop == at0.flop);
}

/* The room a block gives its model's weights (gpu_block_shared): the SM's
 * share for FS_GPU_MIN_BLOCKS blocks less the runtime's reserve and the
 * kernel's static shared memory, so that the blocks still fit the SM; and
 * the model's need within it (core_model_shared_bytes, kernel.h): its hot
 * state and weights where both fit the room, the hot state alone where
 * not, one byte decides. */
static void block_shared(const FsGpuLimits *lim, size_t expect)
{
    const size_t room = gpu_block_shared(lim);
    CHECK_MSG(room == expect, "%s: %zu bytes a block for the weights, expected %zu", lim->name, room, expect);
    CHECK((room + FS_GPU_SHARED_RESERVED + FS_GPU_STATIC_SHARED) * FS_GPU_MIN_BLOCKS <= lim->shared_per_sm);
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.window = 17;
    arch.n_layers = 2;
    for (int i = 0; i < 2; i++)
        arch.layers[i] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 16, .width = 5, .act = FS_ACT_RELU};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = ts.eval_batch = 8;
    FsNet net;
    FsErr err;
    CHECK(train_compile(&arch, &ts, 0, &net, &err) == 0);
    const size_t hot = core_model_hot_bytes(&net), w = (size_t)(net.n_params + net.n_state) * sizeof(float);
    CHECK_MSG(w > 0 && hot + w < room, "%s: a 2 x 16-filter model (%zu bytes of weights) does not fit %zu", lim->name,
              w, room);
    const size_t both = hot + FS_ALIGN64(w);
    CHECK(core_model_shared_bytes(&net, room) == both);
    CHECK(core_model_shared_bytes(&net, both) == both);
    CHECK(core_model_shared_bytes(&net, both - 1) == hot);
    arch.layers[0].units = arch.layers[1].units = 256; /* 2 x 256 filters: 1.4 MB of weights */
    CHECK(train_compile(&arch, &ts, 0, &net, &err) == 0);
    CHECK(core_model_shared_bytes(&net, room) == core_model_hot_bytes(&net));
}

int main(void)
{
    FsGpuLimits lim;
    CHECK(gpu_profile("h200", &lim) == 0);
    CHECK_MSG(tier(&lim, 32, 8, FS_GPU_PATH_AUTO) == FS_GPU_BLOCK, "a small model at batch 8 left the block tier");
    const int at32 = crossing(&lim, 32), at64 = crossing(&lim, 64);
    printf("auto's library tier from batch %d (32 filters), %d (64 filters)\n", at32, at64);
    CHECK_MSG(at32 > 8, "32 filters: no batch crosses to the library tier (%d)", at32);
    CHECK_MSG(at64 > 0 && at64 < at32, "64 filters cross at batch %d, 32 filters at %d", at64, at32);
    const FsGpuTier forced = tier(&lim, 32, at32, FS_GPU_PATH_BLOCK);
    CHECK_MSG(forced == FS_GPU_BLOCK, "run.gpu_path: block at batch %d: tier %d", at32, (int)forced);

    FsGpuLimits a100;
    char why[512];
    CHECK(gpu_profile("a100", &a100) == 0);
    CHECK_MSG(tier_of(&a100, 61, 1, 4, 8, 8, FS_GPU_PATH_AUTO, why, sizeof why) == FS_GPU_BLOCK,
              "a tiny model at batch 8 left the a100's block tier: %s", why);
    CHECK_MSG(tier_of(&a100, 61, 1, 4, 8, 4096, FS_GPU_PATH_AUTO, why, sizeof why) == FS_GPU_LIBRARY,
              "eval_batch 4096 of windows of 61 under auto: not the library tier: %s", why);
    CHECK(tier_of(&a100, 61, 1, 4, 8, 4096, FS_GPU_PATH_BLOCK, why, sizeof why) == FS_GPU_REFUSED);
    CHECK_CONTAINS(why, "bytes of shared memory per block (batch 4096 x window 61), more than the a100's");
    estimate_pairs(&lim);
    block_shared(&lim, 228 * 1024 / 4 - 2048);
    block_shared(&a100, 164 * 1024 / 4 - 2048);
    return test_finish();
}
