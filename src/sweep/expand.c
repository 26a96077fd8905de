/*
 * expand.c: the search space into trials. Grid points are numbered in
 * mixed radix over the dimensions (layer-list alternatives, then the
 * options in sw_opts order; the last varies fastest). `search.random: N`
 * walks a lazily shuffled permutation of those numbers (a partial
 * Fisher-Yates with a sparse swap table), so any grid size works and the
 * first M trials of random: N are the trials of random: M. A sweep with
 * ranges (ranges.c) is drawn instead: draw i, a grid point and a value in
 * each range from a stream of the seed and i, so that there too the first
 * trials stay when the budget grows; tpe gets a pool of such draws
 * (sweep_tpe_pool) to propose from. A grid refuses ranges.
 *
 * run.constraints (constraints.c) exclude a trial as it is met: it is
 * never a trial of the sweep (a random draw that breaks them is not
 * counted: the walk draws on), and sw->excluded keeps it for `plan`.
 *
 * A trial's config names only what affects its training (momentum only
 * for SGD, the leaky slope only for leaky_relu layers, ...). Grid points
 * whose configs are equal would train identically; only the first is kept.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

/* ---------------------------------------------------------------------- */
/* A small open-addressing map u64 -> u64.                                 */

typedef struct {
    uint64_t *k, *v;
    uint8_t *used;
    size_t cap, n;
} U64Map;

static size_t slot(const U64Map *m, uint64_t k)
{
    uint64_t s = k;
    size_t i = (size_t)fs_splitmix64(&s) & (m->cap - 1);
    while (m->used[i] && m->k[i] != k) i = (i + 1) & (m->cap - 1);
    return i;
}

static int map_get(const U64Map *m, uint64_t k, uint64_t *v)
{
    if (!m->cap) return 0;
    size_t i = slot(m, k);
    if (!m->used[i]) return 0;
    *v = m->v[i];
    return 1;
}

static void map_put(U64Map *m, uint64_t k, uint64_t v)
{
    if (2 * (m->n + 1) > m->cap) {
        U64Map g = {0};
        g.cap = m->cap ? 2 * m->cap : 64;
        g.k = fs_malloc(g.cap * sizeof *g.k);
        g.v = fs_malloc(g.cap * sizeof *g.v);
        g.used = fs_calloc(g.cap, 1);
        for (size_t i = 0; i < m->cap; i++)
            if (m->used[i]) map_put(&g, m->k[i], m->v[i]);
        free(m->k), free(m->v), free(m->used);
        *m = g;
    }
    size_t i = slot(m, k);
    if (!m->used[i]) m->n++;
    m->used[i] = 1;
    m->k[i] = k;
    m->v[i] = v;
}

static void map_free(U64Map *m)
{
    free(m->k), free(m->v), free(m->used);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------- */
/* Expansion                                                               */

typedef struct {
    FsSweep *sw;
    const SwSpace *sp;
    U64Map seen; /* config hash -> trial index, or EXCLUDED | its place in sw->excluded */
    int cap, cap_excluded;
} Expander;

#define EXCLUDED (UINT64_C(1) << 63)
#define NOT_KEPT UINT64_C(0xffffffff) /* an excluded trial beyond FS_SWEEP_MAX_EXCLUDED: its hash alone */

static void trial_drop(FsTrial *t) { free(t->config), free(t->at), free(t->x); }

/* The config of the trial the map holds at idx (NULL: excluded, not kept). */
static const char *seen_config(const FsSweep *sw, uint64_t idx)
{
    if (!(idx & EXCLUDED)) return sw->trials[idx].config;
    idx &= ~EXCLUDED;
    return idx == NOT_KEPT ? NULL : sw->excluded[idx].config;
}

/* t breaks run.constraints: kept for `plan` (the first FS_SWEEP_MAX_EXCLUDED), never trained. */
static void exclude(Expander *x, FsTrial *t, long params, uint64_t h)
{
    FsSweep *sw = x->sw;
    sw->n_excluded++;
    if (sw->n_excluded_kept == FS_SWEEP_MAX_EXCLUDED) {
        map_put(&x->seen, h, EXCLUDED | NOT_KEPT);
        trial_drop(t);
        return;
    }
    if (sw->n_excluded_kept == x->cap_excluded) {
        x->cap_excluded = x->cap_excluded ? 2 * x->cap_excluded : 16;
        sw->excluded = fs_realloc(sw->excluded, (size_t)x->cap_excluded * sizeof *sw->excluded);
    }
    FsExcluded *ex = &sw->excluded[sw->n_excluded_kept];
    memset(ex, 0, sizeof *ex);
    char arch[512];
    sweep_arch_summary(&t->arch, arch, sizeof arch);
    ex->arch = fs_strdup(arch);
    ex->params = params;
    ex->config = t->config;
    t->config = NULL;
    map_put(&x->seen, h, EXCLUDED | (uint64_t)sw->n_excluded_kept++);
    trial_drop(t);
}

/* Adds the trial at pt unless an equal trial exists or run.constraints
 * excludes it. Returns 1 if added. */
static int add_point(Expander *x, const SwPoint *pt)
{
    FsSweep *sw = x->sw;
    FsTrial t;
    sw_point_trial(sw, x->sp, pt, &t);
    uint64_t h = fs_fnv1a64(t.config, strlen(t.config), FS_FNV_OFFSET), idx;
    while (map_get(&x->seen, h, &idx)) {
        const char *cfg = seen_config(sw, idx);
        if (!cfg || !strcmp(cfg, t.config)) {
            trial_drop(&t);
            return 0;
        }
        h = fs_splitmix64(&h); /* a 64-bit collision of different configs: probe on */
    }
    const int constrained = sw->constraints.given && !sweep_constraints_pending(sw);
    const long params = constrained ? sweep_trial_params(&t) : 0;
    if (constrained && !sw_constraints_allow(&sw->constraints, params)) {
        exclude(x, &t, params, h);
        return 0;
    }
    if (sw->n_trials == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 64;
        sw->trials = fs_realloc(sw->trials, (size_t)x->cap * sizeof *sw->trials);
    }
    t.index = sw->n_trials;
    map_put(&x->seen, h, (uint64_t)sw->n_trials);
    sw->trials[sw->n_trials++] = t;
    return 1;
}

static uint64_t below(FsRng *r, uint64_t n)
{
    uint64_t lim = -n % n; /* rejection keeps it unbiased */
    for (;;) {
        uint64_t x = fs_rng_u64(r);
        if (x >= lim) return x % n;
    }
}

/* Grid point number g (mixed radix, the last dimension fastest). */
static void grid_point(const SwSpace *sp, uint64_t g, SwPoint *pt)
{
    memset(pt, 0, sizeof *pt);
    for (int d = SW_GRID_DIMS - 1; d >= 0; d--) {
        uint64_t n = (uint64_t)sw_grid_dim_size(sp, d);
        pt->at[d] = (int)(g % n);
        g /= n;
    }
}

/* Draw i of a sweep with ranges: a grid point and a value in each range,
 * from a stream of its own (the seed and i), so that draw i is the same
 * whatever the budget and whichever draws were kept before it. */
static void draw_point(const FsSweep *sw, const SwSpace *sp, uint64_t i, SwPoint *pt)
{
    FsRng r;
    const uint64_t words[3] = {sw->search_seed, i, 0x72616e676531ULL /* "range1": the purpose */};
    fs_rng_seed(&r, words, 3);
    grid_point(sp, below(&r, sw->grid_size), pt);
    for (int k = 0; k < sp->n_ranges; k++)
        pt->r[k] = sw_range_at(&sp->ranges[k], ldexp((double)(fs_rng_u64(&r) >> 11), -53)); /* u in [0, 1) */
}

static void note_short(FsSweep *sw, int want, uint64_t drawn, int exhausted)
{
    char note[320];
    if (exhausted)
        snprintf(note, sizeof note, "search.random asks for %d trials but the grid has only %d distinct "
                 "trials%s; all of them run", want, sw->n_trials, sw->n_excluded ? " within run.constraints" : "");
    else
        snprintf(note, sizeof note, "search.random asks for %d trials; only %d distinct ones%s were found "
                 "in %llu points sampled", want, sw->n_trials, sw->n_excluded ? " within run.constraints" : "",
                 (unsigned long long)drawn);
    sw->note = fs_strdup(note);
}

/* A grid cannot enumerate a range: each is refused where it is written. */
static int refuse_ranges(const FsSweep *sw, const SwSpace *sp, SwErrs *e)
{
    if (!sp->n_ranges || sw->random_n) return 0;
    for (int k = 0; k < sp->n_ranges; k++)
        swerr_add(e, sp->ranges[k].line, sp->ranges[k].col,
                  "%s: a range is sampled, and this sweep is a grid (no search.random); give a list of values, "
                  "[a, b, c], or grid_points: N in the range for N values from low to high, or sample it with "
                  "search: {random: N}", sp->ranges[k].key);
    return -1;
}

static void expand_grid(Expander *x, uint64_t g)
{
    SwPoint pt;
    for (uint64_t i = 0; i < g && x->sw->n_trials < FS_SWEEP_MAX_TRIALS; i++) {
        grid_point(x->sp, i, &pt);
        add_point(x, &pt);
    }
}

/* search.random over a grid: a lazily shuffled permutation of its points. */
static void expand_walk(Expander *x, uint64_t g)
{
    FsSweep *sw = x->sw;
    FsRng r;
    const uint64_t words[2] = {sw->search_seed, 0x737765657031ULL /* "sweep1": the purpose */};
    fs_rng_seed(&r, words, 2);
    U64Map perm = {0}; /* position -> grid point, where a swap moved it */
    /* Many grid points may collapse into one trial (an option unused by
     * the rest of the config); bound the walk when the grid is huge. */
    uint64_t budget = (uint64_t)sw->random_n * 1000 + 100000, i;
    SwPoint pt;
    for (i = 0; i < g && i < budget && sw->n_trials < sw->random_n; i++) {
        uint64_t j = i + below(&r, g - i), vj = j, vi = i;
        map_get(&perm, j, &vj);
        map_get(&perm, i, &vi);
        map_put(&perm, j, vi);
        grid_point(x->sp, vj, &pt);
        add_point(x, &pt);
    }
    map_free(&perm);
    if (sw->n_trials < sw->random_n) note_short(sw, sw->random_n, i, i >= g);
}

/* A sweep with ranges: draws 0, 1, ... until `want` distinct trials
 * (search.random's, or tpe's candidates). */
static void expand_draws(Expander *x, int want)
{
    FsSweep *sw = x->sw;
    const uint64_t budget = (uint64_t)want * 1000 + 100000;
    uint64_t i;
    SwPoint pt;
    for (i = 0; i < budget && sw->n_trials < want; i++) {
        draw_point(sw, x->sp, i, &pt);
        add_point(x, &pt);
    }
    if (sw->n_trials < want && sw->sampler != FS_SAMPLER_TPE) note_short(sw, want, i, 0);
}

int sweep_tpe_pool(int budget)
{
    long n = 16L * budget;
    if (n < 1024) n = 1024;
    if (n > FS_SWEEP_MAX_TRIALS) n = FS_SWEEP_MAX_TRIALS;
    return (int)n;
}

void sw_trials_free(FsSweep *sw)
{
    for (int i = 0; i < sw->n_trials; i++) trial_drop(&sw->trials[i]);
    for (int i = 0; i < sw->n_excluded_kept; i++) free(sw->excluded[i].config), free(sw->excluded[i].arch);
    free(sw->trials), free(sw->excluded), free(sw->note);
    sw->trials = NULL, sw->excluded = NULL, sw->note = NULL;
    sw->n_trials = sw->n_excluded = sw->n_excluded_kept = 0;
}

int sw_expand_again(FsSweep *sw, SwErrs *e)
{
    sw_trials_free(sw);
    return sw_expand(sw, sw->space, e);
}

/* Training options written in the file that no trial's config holds
 * (momentum with only adam, beta1 with sgd, lr_step_every without
 * lr_schedule: step, alpha with criterion: patience): the trials are what
 * they would be without them, which a Keras user tuning momentum under
 * adam would not guess. Said in sw->note; a value at its default, which
 * configs leave out, is not one. */
static void note_unused(FsSweep *sw, const SwSpace *sp)
{
    char names[400] = "", key[48];
    size_t at = 0;
    int n = 0;
    for (int o = 0; o < O_COUNT && sw->n_trials; o++) {
        if ((sw_opts[o].sec != SEC_TRAINING && sw_opts[o].sec != SEC_STOP) || !sp->opt[o].given ||
            sw_opt_hidden_default(o, &sp->opt[o]))
            continue;
        snprintf(key, sizeof key, "\"%s\":", sw_opts[o].key);
        int used = 0;
        for (int t = 0; t < sw->n_trials && !used; t++) used = strstr(sw->trials[t].config, key) != NULL;
        if (used) continue;
        if (at < sizeof names)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s.%s", n ? ", " : "",
                                   sw_section_key(sw_opts[o].sec), sw_opts[o].key);
        n++;
    }
    if (!n) return;
    char note[700];
    snprintf(note, sizeof note, "%s%s%s %s given but change%s none of the trials (an option of another optimizer, "
             "schedule or criterion than the sweep's), so no trial's config holds %s", sw->note ? sw->note : "",
             sw->note ? "; " : "", names, n == 1 ? "is" : "are", n == 1 ? "s" : "", n == 1 ? "it" : "them");
    free(sw->note);
    sw->note = fs_strdup(note);
}

int sw_expand(FsSweep *sw, const SwSpace *sp, SwErrs *e)
{
    sw_list_dims(sw, sp);
    if (refuse_ranges(sw, sp, e)) return -1;
    uint64_t g = 1;
    for (int d = 0; d < SW_GRID_DIMS; d++) {
        uint64_t n = (uint64_t)sw_grid_dim_size(sp, d);
        if (g > (UINT64_C(1) << 62) / n) {
            swerr_add(e, 1, 1, "the grid has more than 2^62 points; split the sweep");
            return -1;
        }
        g *= n;
    }
    sw->grid_size = g;
    const int whole = !sp->n_ranges && (!sw->random_n || sw->sampler == FS_SAMPLER_TPE);
    if (whole && g > FS_SWEEP_MAX_GRID) {
        swerr_add(e, 1, 1, "the grid has %llu points (more than %d); sample it with search: {random: N}",
                  (unsigned long long)g, FS_SWEEP_MAX_GRID);
        return -1;
    }
    Expander x = {.sw = sw, .sp = sp};
    if (sp->n_ranges) /* tpe: a pool of candidates drawn alike, which the run proposes from */
        expand_draws(&x, sw->sampler == FS_SAMPLER_TPE ? sweep_tpe_pool(sw->random_n) : sw->random_n);
    else if (whole) /* tpe: every candidate; the run proposes */
        expand_grid(&x, g);
    else
        expand_walk(&x, g);
    map_free(&x.seen);
    if (whole && sw->n_trials >= FS_SWEEP_MAX_TRIALS && g > (uint64_t)sw->n_trials) {
        swerr_add(e, 1, 1, "the grid has more than %d distinct trials; sample it with search: {random: N}",
                  FS_SWEEP_MAX_TRIALS);
        return -1;
    }
    const int rc = sw_constraints_check(sw, e);
    if (rc == 0) note_unused(sw, sp);
    return rc;
}
