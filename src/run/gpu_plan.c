/*
 * gpu_plan: `foldsweep plan`'s view of the GPU path (run_gpu_plan): each
 * trial's tier by the one rule (gpu_model_check, through the GPU driver's
 * run_gpu_trial_tier), and estimates of the sweep's time on that device
 * (gpu_estimate's roofline) and on this machine's cores, so that a user
 * can choose what to rent before renting it. Estimates, not measurements:
 * docs/benchmarks.md, "GPU estimates (plan --gpu)".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "run/gpu_driver.h"
#include "run/run.h"

/* A core of the CPU trainer, dense-equivalent FLOP/s over whole fits: an
 * assumption below what docs/benchmarks.md measured (R1 at batch 8: 84
 * GFLOP/s on an AVX-512 core; chain models about 53; the AVX2 machine's
 * tile about 35), since validation and small layers run slower; to be
 * calibrated by bench/run-r1 and bench/run-chain on the machine used. */
#define FS_EST_CPU_GFLOPS 40.0
/* Attention's pairs (FsNet.flops_pair_fwd) run slower: a row of scores,
 * its exponentials and the key_dim-long sums over each pair. Measured,
 * dense-equivalent: 9.2 GFLOP/s (bench/run-rnn's FLIP model, one thread)
 * and 6 (the FLIP quality run's attention model on two threads, the pool's
 * idle thread helping; docs/quality.md), on this AVX-512 machine. */
#define FS_EST_CPU_PAIR_GFLOPS 8.0

/* Trial t's tier, FLOP and GPU seconds (all its folds; block: its folds in
 * parallel blocks, so the longest one; library: its share of its group,
 * the run's width for it). */
static void plan_trial(FsGpuPlan *p, const FsGpuLimits *lim, const FsTrial *tr, int t, int fold, uint32_t n_train,
                       uint32_t n_val)
{
    char why[512];
    p->tier[t] = run_gpu_trial_tier(lim, tr, fold, n_train, why, sizeof why);
    p->why[t] = fs_strdup(p->tier[t] == FS_GPU_REFUSED ? why : "");
    p->refused += p->tier[t] == FS_GPU_REFUSED;
    FsTrainSpec ts;
    sweep_fold_spec(&ts, tr, fold);
    FsGpuEstimate e;
    const FsGpuTier tier = p->tier[t] == FS_GPU_LIBRARY ? FS_GPU_LIBRARY : FS_GPU_BLOCK;
    const int group = p->group[t] > 0 ? p->group[t] : p->folds;
    if (gpu_estimate(lim, tier, &tr->arch, &ts, n_train, n_val, group, p->pair_len, &e) != 0) return;
    p->flop[t] = e.flop * p->folds;
    p->pair_flop[t] = e.pair_flop * p->folds;
    if (p->tier[t] == FS_GPU_REFUSED) return;
    p->gpu_s[t] = p->tier[t] == FS_GPU_LIBRARY ? e.seconds * p->folds : e.seconds;
}

/* The sweep: the block tier's folds share the device's blocks (the
 * longest fold bounds it), the library tier's groups run one after
 * another, the CPU trains every trial on all cores. */
static void plan_totals(FsGpuPlan *p, const FsGpuLimits *lim)
{
    double block_sum = 0, block_max = 0, flop = 0, pair = 0;
    for (int t = 0; t < p->n; t++) {
        flop += p->flop[t] - p->pair_flop[t];
        pair += p->pair_flop[t];
        if (p->tier[t] == FS_GPU_BLOCK) block_sum += p->gpu_s[t] * p->folds, block_max = fmax(block_max, p->gpu_s[t]);
        if (p->tier[t] == FS_GPU_LIBRARY) p->library_s += p->gpu_s[t];
    }
    p->block_s = fmax(block_sum / gpu_parallel_blocks(lim), block_max) * p->share;
    p->library_s *= p->share;
    p->cpu_s = (flop / p->cpu_gflops + pair / p->cpu_pair_gflops) * p->share / (p->cores * 1e9);
}

int run_gpu_plan(const FsSweep *sw, const FsDataset *ds, const char *profile, FsGpuPlan *p, FsErr *err)
{
    memset(p, 0, sizeof *p);
    FsGpuLimits lim;
    if (profile && gpu_profile(profile, &lim) != 0)
        return fs_err_set(err, "--gpu %s: expected one of %s", profile, gpu_profile_names()), -1;
    if (!profile && (gpu_count() == 0 || gpu_limits(0, &lim) != 0)) gpu_profile("h200", &lim);
    snprintf(p->target, sizeof p->target, "%s%s", lim.name, profile || gpu_count() == 0 ? " profile" : "");
    gpu_rates_describe(&lim, p->rates, sizeof p->rates);
    FsFolds folds = data_folds_of(sw->predefined, (int)ds->n_folds);
    const int fold = data_fold_id(&folds, 0);
    const uint32_t n_train = run_gpu_largest_fold(ds, &folds), n_val = data_examples(ds, fold, 1, NULL);
    p->n = sw->n_trials;
    p->folds = sweep_fold_count(sw);
    p->share = sw->sampler == FS_SAMPLER_TPE && sw->random_n < sw->n_trials ? (double)sw->random_n / sw->n_trials : 1;
    p->cores = run_solo_threads(0);
    p->cpu_gflops = FS_EST_CPU_GFLOPS;
    p->cpu_pair_gflops = FS_EST_CPU_PAIR_GFLOPS;
    p->pair_len = data_chain_pair_mean(ds);
    p->tier = fs_calloc((size_t)p->n + 1, sizeof *p->tier);
    p->why = fs_calloc((size_t)p->n + 1, sizeof *p->why);
    p->flop = fs_calloc((size_t)p->n + 1, sizeof *p->flop);
    p->pair_flop = fs_calloc((size_t)p->n + 1, sizeof *p->pair_flop);
    p->gpu_s = fs_calloc((size_t)p->n + 1, sizeof *p->gpu_s);
    p->group = fs_calloc((size_t)p->n + 1, sizeof *p->group);
    RunGpuGroups groups;
    if (run_gpu_groups(sw, ds, &folds, 0, &lim, &groups) == 0)
        for (int t = 0; t < p->n; t++) p->group[t] = groups.width[t];
    run_gpu_groups_free(&groups);
    for (int t = 0; t < p->n; t++) plan_trial(p, &lim, &sw->trials[t], t, fold, n_train, n_val);
    plan_totals(p, &lim);
    return 0;
}

void run_gpu_plan_free(FsGpuPlan *p)
{
    for (int t = 0; t < p->n && p->why; t++) free(p->why[t]);
    free(p->why);
    free(p->tier);
    free(p->flop);
    free(p->pair_flop);
    free(p->gpu_s);
    free(p->group);
    memset(p, 0, sizeof *p);
}
