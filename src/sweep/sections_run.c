/*
 * sections_run.c: the `run` and `search` sections (single values, never
 * grid dimensions, like `data`'s in sections.c): the metric, objectives,
 * stopping, pruning and the sampler's settings.
 */
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

const char *const sw_run_keys[SW_N_RUN_KEYS] = {"backend",    "gpu_path", "threads",    "out",
                                                "metric",     "keep_models", "checkpoint", "alpha",
                                                "objectives", "constraints"};
const char *const sw_search_keys[SW_N_SEARCH_KEYS] = {"random", "seed",  "pruner",    "sampler",
                                                      "batch",  "stop",  "replicates"};

/* ---------------------------------------------------------------------- */
/* run, search                                                             */

/* run.objectives: two or more distinct names of metrics_objective_names. */
static void parse_objectives(FsSweep *sw, const YNode *v, SwErrs *e)
{
    const char *want = "run.objectives: expected a list of two or more of q3, loss, params, train_seconds, predict_us";
    if (v->kind != YN_SEQ || v->n < 2 || v->n > FS_OBJ_COUNT) {
        swerr_add(e, v->line, v->col, "%s", want);
        return;
    }
    for (int i = 0; i < v->n; i++) {
        const YNode *c = v->item[i];
        int o = -1;
        for (int k = 0; c->kind == YN_SCALAR && k < FS_OBJ_COUNT; k++)
            if (!strcmp(c->value, metrics_objective_names[k])) o = k;
        for (int k = 0; o >= 0 && k < sw->n_objectives; k++)
            if (sw->objectives[k] == o) o = -2;
        if (o < 0) {
            swerr_add(e, c->line, c->col, "%s%s", want, o == -2 ? " (each once)" : "");
            sw->n_objectives = 0;
            return;
        }
        sw->objectives[sw->n_objectives++] = o;
    }
}

/* run.gpu_path: auto, block or library (train_gpu_path_name's words). */
static void parse_gpu_path(FsSweep *sw, const YNode *v, SwErrs *e)
{
    const char *names[FS_GPU_PATH_COUNT];
    int k = -1;
    for (int i = 0; i < FS_GPU_PATH_COUNT; i++) {
        names[i] = train_gpu_path_name(i);
        if (v->kind == YN_SCALAR && !strcmp(v->value, names[i])) k = i;
    }
    if (k >= 0) {
        sw->gpu_path = k;
        return;
    }
    const char *near = v->kind == YN_SCALAR ? fs_nearest(v->value, names, FS_GPU_PATH_COUNT) : NULL;
    swerr_add(e, v->line, v->col, "run.gpu_path: expected auto, block or library%s%s%s",
              near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

void sw_parse_run(FsSweep *sw, const YNode *r, SwErrs *e)
{
    if (r->kind != YN_MAP) {
        swerr_add(e, r->line, r->col,
                  "run: expected a mapping (backend, gpu_path, threads, out, metric, keep_models, checkpoint, alpha, "
                  "objectives, constraints)");
        return;
    }
    sw_check_keys(r, "run", sw_run_keys, SW_N_RUN_KEYS, e);
    const YNode *v;
    if ((v = ytree_get(r, "objectives"))) parse_objectives(sw, v, e);
    if ((v = ytree_get(r, "constraints"))) sw_parse_constraints(sw, ytree_key(r, "constraints"), v, e);
    if ((v = ytree_get(r, "backend"))) {
        int k = -1;
        for (int i = 0; i <= FS_BACKEND_CUDA && v->kind == YN_SCALAR; i++)
            if (!strcmp(v->value, sweep_backend_name((FsBackend)i))) k = i;
        if (k < 0)
            swerr_add(e, v->line, v->col, "run.backend: expected cpu, cuda or auto");
        else
            sw->backend = (FsBackend)k;
    }
    if ((v = ytree_get(r, "gpu_path"))) parse_gpu_path(sw, v, e);
    long long t;
    if ((v = ytree_get(r, "threads"))) {
        if (sw_scalar_int(v, &t) || t < 0 || t > 4096)
            swerr_add(e, v->line, v->col, "run.threads: expected an integer from 0 (all cores) to 4096");
        else
            sw->threads = (int)t;
    }
    if ((v = ytree_get(r, "keep_models"))) {
        if (v->kind == YN_SCALAR && !strcmp(v->value, "all"))
            sw->keep_models = FS_KEEP_ALL;
        else if (v->kind == YN_SCALAR && !strcmp(v->value, "none"))
            sw->keep_models = 0;
        else if (sw_scalar_int(v, &t) || t < 0 || t > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, v->line, v->col, "run.keep_models: expected all, none or the number of best trials "
                      "whose fold models are kept (0 to %d)", FS_SWEEP_MAX_TRIALS);
        else
            sw->keep_models = (int)t;
    }
    if ((v = ytree_get(r, "checkpoint"))) {
        char *end = NULL;
        double sec = v->kind == YN_SCALAR ? strtod(v->value, &end) : 0.0;
        if (v->kind == YN_SCALAR && !strcmp(v->value, "off"))
            sw->checkpoint = 0.0;
        else if (v->kind != YN_SCALAR || end == v->value || *end || !(sec >= 1.0 && sec <= 1e7))
            swerr_add(e, v->line, v->col, "run.checkpoint: expected off or the seconds of a fold's training "
                      "between its checkpoints (1 to 10000000; default 600)");
        else
            sw->checkpoint = sec;
    }
    if ((v = ytree_get(r, "alpha"))) {
        double a;
        if (sw_scalar_float(v, &a) || !(a > 0.0 && a <= 0.5))
            swerr_add(e, v->line, v->col, "run.alpha: expected a level above 0 and at most 0.5 (default 0.05): a "
                      "trial is tied with the best while its adjusted p-value is at least this");
        else
            sw->alpha = (double)(float)a; /* as the canonical text writes it */
    }
    const char *s;
    if ((v = ytree_get(r, "out")) && (s = sw_file_name(v, "run.out", e))) sw->out_dir = fs_strdup(s);
    if ((v = ytree_get(r, "metric"))) {
        int k = v->kind == YN_SCALAR ? metrics_kind_parse(v->value) : -1;
        sw->metric_given = 1;
        if (k == FS_METRIC_Q8 && sw->classes != FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: q8 ranks 8-state runs (data.classes: 8); expected q3 or loss");
        else if (k == FS_METRIC_Q3 && sw->classes == FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: an 8-state run (data.classes: 8) ranks by q8 (validation "
                      "accuracy over the 8 states, the default) or loss; its Q3 from the reduced predictions is "
                      "reported too");
        else if (k >= 0)
            sw->metric = (FsMetricKind)k;
        else if (sw->classes == FS_CLASSES8)
            swerr_add(e, v->line, v->col, "run.metric: expected q8 (validation accuracy over the 8 states, higher is "
                      "better) or loss (validation cross-entropy, lower is better)");
        else
            swerr_add(e, v->line, v->col, "run.metric: expected q3 (validation accuracy, higher is better) "
                      "or loss (validation cross-entropy, lower is better)");
    }
}

/* Optuna's classes for our sampler and pruner values, for the hint:
 * ours, or NULL; what is "Sampler" or "Pruner" (a sampler's name as a
 * pruner gets none). SuccessiveHalvingPruner is the rule ASHA runs. */
static const char *optuna_value(const YNode *v, const char *what)
{
    static const char *const names[][2] = {{"TPESampler", "tpe"},
                                           {"RandomSampler", "random"},
                                           {"MedianPruner", "median"},
                                           {"SuccessiveHalvingPruner", "asha"},
                                           {"NopPruner", "none"}};
    for (size_t i = 0; v && v->kind == YN_SCALAR && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(v->value, names[i][0]) && strstr(names[i][0], what)) return names[i][1];
    return NULL;
}

/* search.pruner: a rule name, or {kind: NAME, its parameters}. */
static void parse_pruner(FsSweep *sw, const YNode *v, SwErrs *e)
{
    static const char *const *const kinds = prune_kind_names;
    static const char *const keys[] = {"kind", "warmup", "min_trials", "min_epochs", "reduction", "z"};
    FsPruneSpec *ps = &sw->prune;
    *ps = (FsPruneSpec){FS_PRUNER_NONE, 1, 4, 1, 3, 2.0};
    const YNode *k = v->kind == YN_MAP ? ytree_get(v, "kind") : v;
    if (v->kind == YN_MAP) sw_check_keys(v, "search.pruner", keys, 6, e);
    int kind = -1;
    for (int i = 0; k && k->kind == YN_SCALAR && i < FS_PRUNER_COUNT; i++)
        if (!strcmp(k->value, kinds[i])) kind = i;
    if (kind < 0) {
        const YNode *at = k ? k : v;
        const char *ours = optuna_value(at, "Pruner");
        const char *near = ours ? NULL : at->kind == YN_SCALAR ? fs_nearest(at->value, kinds, FS_PRUNER_COUNT) : NULL;
        if (ours)
            swerr_add(e, at->line, at->col, "search.pruner: expected none, median, asha or folds (Optuna's %s is "
                      "foldsweep's %s)", at->value, ours);
        else
            swerr_add(e, at->line, at->col, "search.pruner: expected none, median, asha or folds%s%s%s",
                      near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return;
    }
    ps->kind = (FsPrunerKind)kind;
    if (kind == FS_PRUNER_FOLDS) ps->min_trials = 3;
    if (v->kind != YN_MAP) return;
    struct { const char *key; int *out; int lo, hi; int for_kind; } ints[] = {
        {"warmup", &ps->warmup, 1, FS_TRAIN_MAX_EPOCHS, FS_PRUNER_MEDIAN},
        {"min_trials", &ps->min_trials, 1, FS_SWEEP_MAX_TRIALS, -1},
        {"min_epochs", &ps->min_epochs, 1, FS_TRAIN_MAX_EPOCHS, FS_PRUNER_ASHA},
        {"reduction", &ps->reduction, 2, 100, FS_PRUNER_ASHA}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const YNode *x = ytree_get(v, ints[i].key);
        long long n;
        if (!x) continue;
        if (ints[i].for_kind >= 0 && ints[i].for_kind != kind)
            swerr_add(e, x->line, x->col, "search.pruner.%s: has no effect with %s; remove it", ints[i].key, kinds[kind]);
        else if (sw_scalar_int(x, &n) || n < ints[i].lo || n > ints[i].hi)
            swerr_add(e, x->line, x->col, "search.pruner.%s: expected an integer from %d to %d", ints[i].key,
                      ints[i].lo, ints[i].hi);
        else
            *ints[i].out = (int)n;
    }
    const YNode *z = ytree_get(v, "z");
    double zv;
    if (z && kind != FS_PRUNER_FOLDS)
        swerr_add(e, z->line, z->col, "search.pruner.z: has no effect with %s; remove it", kinds[kind]);
    else if (z && (sw_scalar_float(z, &zv) || zv < 0 || zv > 10))
        swerr_add(e, z->line, z->col, "search.pruner.z: expected a number from 0 to 10");
    else if (z)
        ps->z = (float)zv; /* kept as a float, as the canonical text writes it */
}

/* search.replicates: {top: N, seeds: S}, both required. */
static void parse_replicates(FsSweep *sw, const YNode *v, SwErrs *e)
{
    static const char *const keys[] = {"top", "seeds"};
    const YNode *t = v->kind == YN_MAP ? ytree_get(v, "top") : NULL;
    const YNode *s = v->kind == YN_MAP ? ytree_get(v, "seeds") : NULL;
    long long top, seeds;
    if (v->kind == YN_MAP) sw_check_keys(v, "search.replicates", keys, 2, e);
    if (!t || sw_scalar_int(t, &top) || top < 1 || top > FS_SWEEP_MAX_TRIALS)
        swerr_add(e, (t ? t : v)->line, (t ? t : v)->col, "search.replicates: expected {top: N, seeds: S}, top from 1 to "
                  "%d: the best N trials train again with more seeds", FS_SWEEP_MAX_TRIALS);
    else if (!s || sw_scalar_int(s, &seeds) || seeds < 2 || seeds > FS_MAX_SEEDS)
        swerr_add(e, (s ? s : v)->line, (s ? s : v)->col, "search.replicates: expected seeds from 2 to %d: the seeds "
                  "each of the top trials trains with, its own included", FS_MAX_SEEDS);
    else
        sw->replicate_top = (int)top, sw->replicate_seeds = (int)seeds;
}

void sw_parse_search(FsSweep *sw, const YNode *s, SwErrs *e)
{
    if (s->kind != YN_MAP) {
        swerr_add(e, s->line, s->col, "search: expected {random: N, seed: S, sampler: random|tpe, pruner: RULE}");
        return;
    }
    sw_check_keys(s, "search", sw_search_keys, SW_N_SEARCH_KEYS, e);
    const YNode *v;
    long long n;
    if ((v = ytree_get(s, "pruner"))) parse_pruner(sw, v, e);
    if ((v = ytree_get(s, "replicates"))) parse_replicates(sw, v, e);
    sw->batch = 8;
    if ((v = ytree_get(s, "sampler"))) {
        if (v->kind == YN_SCALAR && !strcmp(v->value, "random"))
            sw->sampler = FS_SAMPLER_RANDOM;
        else if (v->kind == YN_SCALAR && !strcmp(v->value, "tpe"))
            sw->sampler = FS_SAMPLER_TPE;
        else if (optuna_value(v, "Sampler"))
            swerr_add(e, v->line, v->col, "search.sampler: expected random or tpe (Optuna's %s is foldsweep's %s)",
                      v->value, optuna_value(v, "Sampler"));
        else
            swerr_add(e, v->line, v->col, "search.sampler: expected random or tpe (tree-structured Parzen estimators)");
        if (!ytree_get(s, "random"))
            swerr_add(e, v->line, v->col, "search.sampler: needs search.random, the number of trials to train");
    }
    if ((v = ytree_get(s, "stop"))) {
        const YNode *a = v->kind == YN_MAP ? ytree_get(v, "after") : NULL;
        static const char *const stop_keys[] = {"after"};
        if (v->kind == YN_MAP) sw_check_keys(v, "search.stop", stop_keys, 1, e);
        if (!ytree_get(s, "random"))
            swerr_add(e, v->line, v->col, "search.stop: needs search.random (a budget of trials to stop short of)");
        else if (!a || sw_scalar_int(a, &n) || n < 1 || n > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, (a ? a : v)->line, (a ? a : v)->col, "search.stop: expected {after: N}, N from 1 to %d: the "
                      "study ends once N trials in a row did not beat the best by more than its standard error",
                      FS_SWEEP_MAX_TRIALS);
        else
            sw->stop_after = (int)n;
    }
    if ((v = ytree_get(s, "batch"))) {
        if (sw->sampler != FS_SAMPLER_TPE && !ytree_get(s, "stop"))
            swerr_add(e, v->line, v->col, "search.batch: only with sampler: tpe or search.stop; remove it");
        else if (sw_scalar_int(v, &n) || n < 1 || n > 4096)
            swerr_add(e, v->line, v->col, "search.batch: expected an integer from 1 to 4096");
        else
            sw->batch = (int)n;
    }

    if ((v = ytree_get(s, "random"))) {
        if (sw_scalar_int(v, &n) || n < 1 || n > FS_SWEEP_MAX_TRIALS)
            swerr_add(e, v->line, v->col, "search.random: expected an integer from 1 to %d", FS_SWEEP_MAX_TRIALS);
        else
            sw->random_n = (int)n;
        if (sw->sampler == FS_SAMPLER_GRID) sw->sampler = FS_SAMPLER_RANDOM;
    } else if (!ytree_get(s, "pruner") && !ytree_get(s, "replicates")) {
        swerr_add(e, s->line, s->col, "search: missing 'random' (the number of trials to sample)");
    }
    if ((v = ytree_get(s, "seed")) && sw_scalar_u64(v, &sw->search_seed))
        swerr_add(e, v->line, v->col, "search.seed: expected a whole number from 0 to 2^64-1");
}
