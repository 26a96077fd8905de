/*
 * plan.c: `foldsweep plan SWEEP.yaml [--json] [--all] [--gpu NAME]`. Checks
 * the sweep file and its data without training anything, then lists the
 * trials a run would train, with the ids it would give them, the GPU tier
 * that takes each (run_gpu_plan: the launcher's own rule, block, library or
 * refused) and estimates of the sweep's time on that GPU and on this
 * machine's CPU. A tpe sweep
 * lists the trials its first, random batches propose (run_sampler_first),
 * which every run of the sweep trains, and counts the rest of its
 * candidates, which only the results choose from: --all lists them too
 * (a pool of ranges has 1,024 or more). Exit 0 ok, 1 invalid sweep or data
 * (every problem on stderr as "foldsweep: FILE:LINE:COL: ..."), 2 usage.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "json/json.h"
#include "metrics/metrics.h" /* the metric's name */
#include "run/run.h"
#include "sweep/sweep.h"

enum { OPT_JSON, OPT_ALL, OPT_GPU, OPT_HELP };

static const CliOption options[] = {
    [OPT_JSON] = {"--json", NULL, NULL, "print the trials as one JSON array"},
    [OPT_ALL] = {"--all", NULL, NULL,
                 "with sampler: tpe, list every candidate, not only the first batches' proposals"},
    [OPT_GPU] = {"--gpu", NULL, "NAME",
                 "check the GPU path against this device profile (h200, a100) and estimate the sweep's time "
                 "on it; default: the visible CUDA device, else h200"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "plan",
    .usage = "usage: foldsweep plan SWEEP.yaml [--json] [--all] [--gpu NAME]\n",
    .about = "Checks a sweep file (every error with its line and column, all at once), loads its\n"
             "data to compute the fingerprint, and lists the trials a run would train: index, id,\n"
             "architecture, parameters, training options and the GPU tier (--backend cuda) that\n"
             "takes the trial (block, library, or why none), then estimates of the sweep's time on\n"
             "that GPU and on this machine's cores (a roofline, every epoch counted: not a\n"
             "measurement). Nothing is trained or written. A tpe sweep lists the\n"
             "trials its first batches propose at random, which every run of it trains, and\n"
             "counts the candidates tpe chooses the rest from (--all lists them too).\n"
             "The format is in docs/sweep-format.md.\n",
    .opts = CLI_OPTIONS(options),
    .column = 12,
    .max_args = 1,
    .extra_arg = "one sweep file only; extra argument",
    .no_arg = "missing the sweep file",
};
const CliSpec *const cli_plan_spec = &spec; /* for cli.c's table */

static void print_errors(FsErrList *errs)
{
    for (int i = 0; i < errs->n; i++) cli_error("%s", errs->msg[i]);
    errlist_free(errs);
}

/* The trials listed: every trial, or a tpe sweep's first proposals; and per
 * trial (by index) the batch of a fresh run that proposes it, from 1, or 0
 * where the results decide (tpe's candidates past its random batches). */
typedef struct {
    int *idx, n;
    int *batch_of;
    int first;   /* tpe's first proposals: how many */
    int batches; /* ... in how many batches */
} Listing;

static void listing_open(Listing *l, const FsSweep *sw, int all)
{
    int *first = fs_calloc((size_t)sw->n_trials + 1, sizeof(int)), *batch = fs_calloc((size_t)sw->n_trials + 1, sizeof(int));
    l->first = run_sampler_first(sw, first, batch);
    l->batches = l->first ? batch[l->first - 1] : 0;
    l->batch_of = fs_calloc((size_t)sw->n_trials + 1, sizeof(int));
    for (int k = 0; k < l->first; k++) l->batch_of[first[k]] = batch[k];
    free(batch);
    if (all || sw->sampler != FS_SAMPLER_TPE) {
        for (int t = 0; t < sw->n_trials; t++) first[t] = t;
        l->n = sw->n_trials;
    } else {
        l->n = l->first;
    }
    l->idx = first;
}

static void listing_free(Listing *l)
{
    free(l->idx);
    free(l->batch_of);
}

/* A tier's word in the listing: train's, as the journal writes it. */
static const char *tier_word(int tier) { return tier > 0 ? train_gpu_path_name(tier) : "refused"; }

/* gpu: as print_text's; without it the build has no GPU path to take any
 * trial, which each trial's "gpu" says (not the profile's verdict). */
static void print_json(const FsSweep *sw, const FsGpuPlan *g, const Listing *l, int gpu)
{
    static const char no_cuda[] = "this build has no CUDA backend (plan --gpu NAME: what the GPU path would take)";
    char arch[512], train[256];
    FsJsonOut w = {.pretty = 1, .spaced = 1}; /* a trial a line */
    json_array_begin(&w);
    for (int k = 0; k < l->n; k++) {
        const int i = l->idx[k];
        const FsTrial *t = &sw->trials[i];
        sweep_arch_summary(&t->arch, arch, sizeof arch);
        sweep_train_summary(&t->train, t->arch.chain, train, sizeof train);
        json_object_begin(&w);
        json_member_int(&w, "index", t->index);
        json_member_str(&w, "id", t->id);
        json_key(&w, "batch");
        if (l->batch_of[i])
            json_int(&w, l->batch_of[i]);
        else
            json_null(&w);
        json_member_int(&w, "params", sweep_trial_params(t));
        if (sweep_trial_receptive_field(t) == FS_RF_WHOLE_CHAIN) /* a recurrent layer's */
            json_member_str(&w, "receptive_field", "whole chain");
        else
            json_member_int(&w, "receptive_field", sweep_trial_receptive_field(t));
        json_member_str(&w, "arch", arch);
        json_member_str(&w, "training", train);
        json_key(&w, "gpu");
        json_bool(&w, gpu && g->tier[i] > 0);
        json_member_str(&w, "gpu_why", gpu ? g->why[i] : no_cuda);
        json_key(&w, "gpu_path"); /* the tier; null where none takes it */
        if (gpu && g->tier[i] > 0)
            json_str(&w, tier_word(g->tier[i]));
        else
            json_null(&w);
        json_key(&w, "gpu_group"); /* the library tier's group width; null elsewhere */
        if (gpu && g->tier[i] == FS_GPU_PATH_LIBRARY && g->group[i] > 0)
            json_int(&w, g->group[i]);
        else
            json_null(&w);
        json_key(&w, "gpu_seconds"); /* estimate: its folds on that tier */
        json_num64(&w, gpu && g->tier[i] > 0 ? g->gpu_s[i] : 0.0);
        json_key(&w, "flop");
        json_num64(&w, g->flop[i]);
        json_key(&w, "config");
        json_raw(&w, t->config);
        json_end(&w);
    }
    json_end(&w);
    json_tail(&w, "\n");
    FS_ASSERT(!json_out_error(&w)); /* a trial's config is the sweep's own JSON */
    fputs(w.p, stdout);
    json_out_free(&w);
}

/* run.constraints' exclusions, with why (they are never trained). */
static void print_excluded(const FsSweep *sw)
{
    if (!sw->n_excluded) return;
    printf("\nexcluded by run.constraints: %d trial%s, never trained%s:\n", sw->n_excluded,
           sw->n_excluded == 1 ? "" : "s", sw->n_excluded > sw->n_excluded_kept ? " (the first listed)" : "");
    char why[160];
    for (int i = 0; i < sw->n_excluded_kept; i++) {
        const FsExcluded *x = &sw->excluded[i];
        printf("  %s  %9ld  %s  (%s)\n", x->id, x->params, x->arch, sweep_excluded_why(sw, x->params, why, sizeof why));
    }
}

/* How the trials come from the sweep: the first line of the plan (all:
 * every candidate is listed). */
static void print_origin(const FsSweep *sw, int all)
{
    int ranges = 0;
    for (int d = 0; d < sw->n_dims; d++) ranges += sw->dims[d].range;
    char grid[96];
    if (ranges)
        snprintf(grid, sizeof grid, "%d range%s and a grid of %llu", ranges, ranges == 1 ? "" : "s",
                 (unsigned long long)sw->grid_size);
    else
        snprintf(grid, sizeof grid, "a grid of %llu", (unsigned long long)sw->grid_size);
    if (sw->sampler == FS_SAMPLER_TPE)
        printf("trials: %d proposed by tpe in batches of %d from %s%d candidates (%s; seed %llu)\n",
               sw->random_n < sw->n_trials ? sw->random_n : sw->n_trials, sw->batch, all ? "these " : "", sw->n_trials,
               grid, (unsigned long long)sw->search_seed);
    else if (sw->random_n)
        printf("trials: %d, sampled from %s (search.random: %d, seed %llu)\n", sw->n_trials, grid, sw->random_n,
               (unsigned long long)sw->search_seed);
    else if ((uint64_t)sw->n_trials != sw->grid_size)
        printf("trials: %d (grid of %llu; equal trials counted once%s)\n", sw->n_trials,
               (unsigned long long)sw->grid_size, sw->n_excluded ? ", those run.constraints exclude left out" : "");
    else
        printf("trials: %d\n", sw->n_trials);
}

/* The GPU path's verdict: how many trials each tier takes, and the refused
 * ones listed (one line for all of them where they share the reason). */
static void print_gpu(const FsSweep *sw, const Listing *l, const FsGpuPlan *g)
{
    int block = 0, library = 0, lo = 0, hi = 0;
    for (int i = 0; i < g->n; i++) {
        block += g->tier[i] == FS_GPU_PATH_BLOCK, library += g->tier[i] == FS_GPU_PATH_LIBRARY;
        if (g->tier[i] != FS_GPU_PATH_LIBRARY || g->group[i] <= 0) continue;
        if (!lo || g->group[i] < lo) lo = g->group[i];
        if (g->group[i] > hi) hi = g->group[i];
    }
    printf("\ngpu: on the %s (--backend cuda, run.gpu_path: %s) the block tier takes %d trial%s, the library tier %d",
           g->target, train_gpu_path_name(sw->gpu_path), block, block == 1 ? "" : "s", library);
    /* The library tier's groups: how many models share its calls (run/gpu_groups.c). */
    if (lo == hi && lo)
        printf(" (in groups %d wide)", lo);
    else if (lo)
        printf(" (in groups %d to %d wide)", lo, hi);
    if (!g->refused) {
        printf("\n");
        return;
    }
    int same = 1;
    for (int i = 1; i < sw->n_trials && same; i++) same = !strcmp(g->why[i], g->why[0]);
    if (g->refused == sw->n_trials && same) {
        printf("; it refuses all %d (run them with --backend cpu): %s\n", g->refused, g->why[0]);
        return;
    }
    printf("; it refuses %d of %d (run them with --backend cpu):\n", g->refused, sw->n_trials);
    int listed = 0;
    for (int k = 0; k < l->n; k++) {
        const int i = l->idx[k];
        if (g->why[i][0]) printf("  %5d  %s  %s\n", sw->trials[i].index, sw->trials[i].id, g->why[i]), listed++;
    }
    if (listed < g->refused) printf("  and %d of the candidates not listed (plan --all lists them)\n", g->refused - listed);
}

/* A time for people: seconds, minutes or hours. */
static void duration(double s, char *out, size_t n)
{
    if (s < 10) snprintf(out, n, "%.2f s", s);
    else if (s < 100) snprintf(out, n, "%.0f s", s);
    else if (s < 6000) snprintf(out, n, "%.1f min", s / 60);
    else snprintf(out, n, "%.1f h", s / 3600);
}

/* The sweep's time on the GPU (gpu: shown) beside the CPU's: estimates. */
static void print_estimate(const FsSweep *sw, const FsGpuPlan *g, int gpu)
{
    char cpu[32], block[32], library[32], total[32];
    duration(g->cpu_s, cpu, sizeof cpu);
    printf("\nestimate (a roofline from each trial's FLOP and bytes, not a measurement; every epoch to "
           "training.epochs,\nno early stopping or pruning; docs/benchmarks.md \"GPU estimates\"):\n");
    if (g->share < 1)
        printf("  tpe trains %d of the %d candidates: their mean, times %d\n", sw->random_n, sw->n_trials, sw->random_n);
    double pair = 0;
    for (int t = 0; t < g->n; t++) pair += g->pair_flop[t];
    char pairs[160] = "";
    if (pair > 0)
        snprintf(pairs, sizeof pairs, "; attention's pairs %g, over chains of %.0f residues as a residue sees them",
                 g->cpu_pair_gflops, g->pair_len);
    printf("  cpu: %s on this machine's %d core%s (%g GFLOP/s a core assumed%s)\n", cpu, g->cores,
           g->cores == 1 ? "" : "s", g->cpu_gflops, pairs);
    if (!gpu) return;
    duration(g->block_s + g->library_s, total, sizeof total);
    duration(g->block_s, block, sizeof block);
    duration(g->library_s, library, sizeof library);
    printf("  gpu: %s on the %s (block tier %s, library tier %s%s)\n", total, g->target, block, library,
           g->refused ? "; the refused trials not counted" : "");
    printf("  gpu rates: %s\n", g->rates);
}

/* A tpe sweep's listing of its first proposals: what the rest are. */
static void print_unlisted(const FsSweep *sw, const Listing *l)
{
    if (l->n == sw->n_trials) return;
    const int budget = sw->random_n < sw->n_trials ? sw->random_n : sw->n_trials, more = budget > l->n;
    printf("\nlisted: %s %d proposals (%d batch%s at random: every run of this sweep and seed trains them); ",
           more ? "the first" : "all", l->n, l->batches, l->batches == 1 ? "" : "es");
    if (more)
        printf("tpe proposes the other %d from their results, out of the %d candidates not listed", budget - l->n,
               sw->n_trials - l->n);
    else
        printf("the other %d candidates are not listed", sw->n_trials - l->n);
    printf(" (plan --all lists all %d)\n", sw->n_trials);
}

/* What the sweep and its data are, before the listing. */
static void print_header(const FsSweep *sw, const FsDataset *ds, const Listing *l)
{
    char folds[48];
    data_folds_text((int)ds->n_folds, sw->repeats, folds, sizeof folds);
    printf("sweep: %s\n", sw->path);
    printf("data: %u proteins, %u residues, ", ds->n_prot, ds->n_res);
    if (sw->predefined)
        printf("predefined train/validation split");
    else
        printf("%s", folds);
    printf(" (fingerprint %016llx)\n", (unsigned long long)ds->fingerprint);
    if (ds->feat_dim) {
        char what[256];
        sweep_features_describe(sw, ds, what, sizeof what);
        printf("features: %s\n", what);
    }
    print_origin(sw, l->n == sw->n_trials);
    if (sw->prune.kind != FS_PRUNER_NONE)
        printf("pruner: %s (trials clearly behind stop early; docs/sweep-format.md)\n", prune_kind_name(sw->prune.kind));
    if (sw->replicate_seeds)
        printf("replicates: the top %d trials train again with %d more seeds: at most %d more folds after the sweep's\n",
               sw->replicate_top, sw->replicate_seeds - 1, run_replicates_jobs(sw, sweep_fold_count(sw)));
    if (sw->note) printf("note: %s\n", sw->note);
    if (sw->has_test)
        printf("test: %s, the top %d trials' fold ensembles%s, evaluated when every fold is trained\n",
               sw->test_sequences ? sw->test_sequences : sw->n_test_inputs ? sw->test_inputs[0] : "?", sw->test_top,
               sw->test_refit ? " and their refits" : "");
    printf("metric: %s\n\n", metrics_kind_name(sw->metric));
}

/* gpu: whether the GPU path's column and verdict are shown (a build with
 * the CUDA backend, or --gpu NAME asked for them). */
static void print_text(const FsSweep *sw, const FsDataset *ds, const Listing *l, const FsGpuPlan *g, int gpu)
{
    print_header(sw, ds, l);
    printf("%5s  %-16s  %9s  %s%s\n", "index", "id", "params", gpu ? "gpu      gpu time  " : "",
           "architecture | training");
    char arch[512], train[256];
    for (int k = 0; k < l->n; k++) {
        const int i = l->idx[k];
        const FsTrial *t = &sw->trials[i];
        sweep_arch_summary(&t->arch, arch, sizeof arch);
        sweep_train_summary(&t->train, t->arch.chain, train, sizeof train);
        char cell[80] = "", time[32];
        duration(g->gpu_s[i], time, sizeof time);
        if (gpu) snprintf(cell, sizeof cell, "%-7s  %8s  ", tier_word(g->tier[i]), g->tier[i] > 0 ? time : "-");
        printf("%5d  %s  %9ld  %s%s | %s\n", t->index, t->id, sweep_trial_params(t), cell, arch, train);
    }
    print_unlisted(sw, l);
    print_excluded(sw);
    if (gpu)
        print_gpu(sw, l, g);
    else
        printf("\ngpu: this build has no CUDA backend (plan --gpu h200 shows what the GPU path would take)\n");
    print_estimate(sw, g, gpu);
}

int cli_plan(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *path = a.args[0];
    const int json = a.val[OPT_JSON] != NULL, all = a.val[OPT_ALL] != NULL;
    char gpu[64] = "";
    if (a.val[OPT_GPU]) snprintf(gpu, sizeof gpu, "%s", a.val[OPT_GPU]);
    cli_args_free(&a);

    FsSweep sw;
    FsErrList errs = {0};
    if (sweep_load_file(&sw, path, &errs)) {
        print_errors(&errs);
        return FS_EXIT_ERROR;
    }
    FsDataset ds;
    if (sweep_load_data(&sw, &ds, &errs)) {
        print_errors(&errs);
        sweep_free(&sw);
        return FS_EXIT_ERROR;
    }
    if (sweep_bind_data(&sw, &ds, &errs) != 0) {
        print_errors(&errs);
        sweep_free(&sw);
        data_free(&ds);
        return FS_EXIT_ERROR;
    }
    FsGpuPlan g;
    FsErr err = {0};
    int refused = run_gpu_plan(&sw, &ds, gpu[0] ? gpu : NULL, &g, &err);
    if (refused < 0) {
        cli_error("%s", err.msg);
        rc = FS_EXIT_USAGE;
    }
    Listing l = {0};
    if (refused >= 0) {
        listing_open(&l, &sw, all);
#ifdef FS_HAVE_CUDA
        const int shown = 1;
#else
        const int shown = gpu[0] != 0;
#endif
        if (json) print_json(&sw, &g, &l, shown);
        else print_text(&sw, &ds, &l, &g, shown);
    }
    listing_free(&l);
    run_gpu_plan_free(&g);
    data_free(&ds);
    sweep_free(&sw);
    return refused < 0 ? rc : FS_EXIT_OK;
}
