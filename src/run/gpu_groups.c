/*
 * gpu_groups: the library tier's fixed rule for its groups (#44). Which
 * trials share library calls (a signature: gpu_lib_same_shape of their
 * compiled nets) and how many models wide a group's calls are, decided
 * from the sweep alone, so that every rank count, every timing and every
 * resume gives a model calls of the same width: cuBLAS and cuDNN choose a
 * kernel, and with it a sum's order, by the shapes they are given, the
 * batch count among them, so a model trained in a group of 3 could differ
 * in its last bits from the same model in a group of 24.
 *
 * The width: the signature's jobs in the sweep (its trials times the
 * folds); where the run proposes trials in batches (search.sampler: tpe,
 * search.stop) a trial's own folds, since which trials of a signature
 * train together is not known before they are proposed. At most
 * gpu_lib_group_cap() (FS_GPU_LIB_GROUP_MAX), and at most what 85% of the
 * device's memory holds. Seed replicates train at their trial's width. A
 * group in a launch trains up to its width's models at once and queues the
 * rest (refill); where a rank holds fewer, the calls still span the width,
 * the other slots' buffers staying zero.
 */
#include <stdlib.h>
#include <string.h>

#include "run/gpu_driver.h"

/* The widest group of w models or fewer that fits 85% of the device's
 * memory less what is resident beside it (the data set, every fold's
 * example lists) and a sixteenth for the CUDA context and the rest: a
 * fixed figure, so that every rank on the same device model computes the
 * same (lib_fit_width narrows a group further only where the free memory
 * at its launch cannot hold it, and says so). At least 1. */
static int fit_width(const FsGpuLimits *lim, const FsDataset *ds, const FsFolds *folds, const FsNet *net,
                     uint32_t n_train, int w)
{
    const size_t held = gpu_resident_bytes(ds, folds->n) + lim->memory / 16;
    const size_t budget = held < lim->memory ? (lim->memory - held) / 100 * 85 : 0;
    while (w > 1 && gpu_lib_group_bytes(net, n_train, w) > budget) w--;
    return w;
}

int run_gpu_groups(const FsSweep *sw, const FsDataset *ds, const FsFolds *folds, int device, const FsGpuLimits *on,
                   RunGpuGroups *out)
{
    memset(out, 0, sizeof *out);
    FsGpuLimits lim;
    if (on)
        lim = *on;
    else if (gpu_limits(device, &lim) != 0)
        return -1;
    const int n = sw->n_trials, fold = data_fold_id(folds, 0);
    const uint32_t longest = data_longest_chain(ds), n_train = run_gpu_largest_fold(ds, folds);
    out->sig = fs_calloc((size_t)n + 1, sizeof(int));
    out->width = fs_calloc((size_t)n + 1, sizeof(int));
    FsNet *first = NULL; /* each signature's first net, in trial order (grown as signatures come) */
    int *trials = NULL;  /* per signature: its trials */
    int sigs = 0, cap_sigs = 0;
    for (int t = 0; t < n; t++) {
        FsTrainSpec ts;
        FsNet net;
        FsErr err = {0};
        sweep_fold_spec(&ts, &sw->trials[t], fold);
        out->sig[t] = -1;
        if (train_compile(&sw->trials[t].arch, &ts, longest, &net, &err) != 0) continue; /* it fails with why */
        int k = 0;
        while (k < sigs && !gpu_lib_same_shape(&first[k], &net)) k++;
        if (k == sigs) {
            if (sigs == cap_sigs) {
                cap_sigs = cap_sigs ? 2 * cap_sigs : 16;
                first = fs_realloc(first, sizeof(FsNet) * (size_t)cap_sigs);
                trials = fs_realloc(trials, sizeof(int) * (size_t)cap_sigs);
            }
            trials[sigs] = 0;
            first[sigs++] = net;
        }
        out->sig[t] = k;
        trials[k]++;
    }
    const long per_trial = sweep_fold_count(sw);
    const int cap = gpu_lib_group_cap(), batched = sweep_proposes_in_batches(sw);
    for (int t = 0; t < n; t++) {
        const int k = out->sig[t];
        if (k < 0) continue;
        const long jobs = per_trial * (batched ? 1 : trials[k]);
        out->width[t] = fit_width(&lim, ds, folds, &first[k], n_train, jobs < cap ? (int)jobs : cap);
    }
    out->n = n;
    free(first);
    free(trials);
    return 0;
}

void run_gpu_groups_free(RunGpuGroups *g)
{
    free(g->sig);
    free(g->width);
    memset(g, 0, sizeof *g);
}

void run_gpu_group_job(const RunGpuGroups *g, int trial, FsJob *job)
{
    const int ok = g->sig && trial >= 0 && trial < g->n && g->sig[trial] >= 0;
    job->lib_sig = ok ? g->sig[trial] : 0;
    job->lib_width = ok ? g->width[trial] : 0;
}
