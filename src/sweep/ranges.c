/*
 * ranges.c: a numeric option written as a range, {low: 1e-4, high: 1e-2,
 * log: true}, {low: 16, high: 128, step: 16} or {low: 0.0, high: 0.5},
 * instead of a list of values. search.random and tpe sample it (expand.c,
 * src/sample); a grid cannot enumerate it, unless it names its points
 * (grid_points: N, which makes the range that list of values here).
 *
 * Integers take the values low, low + step, ... <= high (step 1, or 2 for
 * kernel widths, which stay odd: low odd and the step even). Floats are
 * continuous (or on a step) and rounded to float32, the trainer's type: a
 * sampled value is the float the trainer holds, and its text (the
 * shortest that reads back) is the trial config's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

static const char *const range_keys[] = {"low", "high", "step", "log", "grid_points"};
/* Keras Tuner's and Optuna's words for a range's keys, and ours. */
static const char *const range_aliases[][2] = {{"min_value", "low"}, {"max_value", "high"}, {"min", "low"},
                                               {"max", "high"},       {"sampling", "log: true"}};
#define N_RANGE_ALIASES (sizeof range_aliases / sizeof range_aliases[0])

static const char *range_alias(const char *key)
{
    for (size_t k = 0; k < N_RANGE_ALIASES; k++)
        if (!strcmp(key, range_aliases[k][0])) return range_aliases[k][1];
    return NULL;
}

int sw_is_range(const YNode *v)
{
    if (!v || v->kind != YN_MAP) return 0;
    for (int i = 0; i < v->n; i++) {
        for (size_t k = 0; k < sizeof range_keys / sizeof range_keys[0]; k++)
            if (!strcmp(v->key[i]->value, range_keys[k])) return 1;
        if (range_alias(v->key[i]->value)) return 1; /* meant as one: its parser names our word */
    }
    return 0; /* another mapping: not meant as a range, and said so by the option's own message */
}

/* low, high and step as option values (the option's own bounds and type). */
static int read_ends(int o, const YNode *v, const char *where, SwRange *r, SwErrs *e)
{
    const YNode *lo = ytree_get(v, "low"), *hi = ytree_get(v, "high"), *st = ytree_get(v, "step");
    if (!lo || !hi) {
        swerr_add(e, v->line, v->col, "%s: a range needs low and high, {low: A, high: B} (log: true to sample "
                  "in log space; step: S for integers)", where);
        return -1;
    }
    const YNode *at[2] = {lo, hi};
    double *out[2] = {&r->low, &r->high};
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        char w[128];
        SwVal x;
        snprintf(w, sizeof w, "%s.%s", where, i ? "high" : "low");
        if (sw_read_value(o, at[i], &x)) {
            sw_value_error(o, at[i], w, e);
            bad = 1;
        }
        *out[i] = sw_opts[o].type == OT_FLOAT ? (double)(float)x.d : x.d; /* as the trainer holds it */
    }
    r->step = sw_opts[o].odd ? 2 : sw_opts[o].type == OT_INT ? 1 : 0;
    double s;
    if (st && (sw_scalar_float(st, &s) || !(s > 0) || (sw_opts[o].type == OT_INT && s != floor(s)))) {
        swerr_add(e, st->line, st->col, "%s.step: expected a %s above 0", where,
                  sw_opts[o].type == OT_INT ? "whole number" : "number");
        bad = 1;
    } else if (st) {
        r->step = sw_opts[o].type == OT_FLOAT ? (double)(float)s : s;
    }
    if (st && sw_opts[o].odd && fmod(r->step, 2.0) != 0.0) {
        swerr_add(e, st->line, st->col, "%s.step: expected an even step: kernel widths stay odd, from an odd low", where);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* log: true|false; the checks between the keys. */
static int read_shape(int o, const YNode *v, const char *where, SwRange *r, SwErrs *e)
{
    const YNode *lg = ytree_get(v, "log"), *st = ytree_get(v, "step");
    if (lg && (lg->kind != YN_SCALAR || lg->quoted || (strcmp(lg->value, "true") && strcmp(lg->value, "false")))) {
        swerr_add(e, lg->line, lg->col, "%s.log: expected true or false", where);
        return -1;
    }
    r->log = lg && !strcmp(lg->value, "true");
    if (!(r->low < r->high)) {
        swerr_add(e, v->line, v->col, "%s: low must be below high (one value needs no range)", where);
        return -1;
    }
    if (r->log && !(r->low > 0)) {
        swerr_add(e, lg->line, lg->col, "%s: log: true needs low above 0", where);
        return -1;
    }
    if (r->log && st) {
        swerr_add(e, st->line, st->col, "%s: step and log: true do not go together; give one", where);
        return -1;
    }
    return 0;
}

/* grid_points: N values over the range (log-spaced with log), for a grid. */
static int grid_values(const SwRange *r, const YNode *g, const char *where, SwVal **vals, SwErrs *e)
{
    long long n;
    if (!vals) {
        swerr_add(e, g->line, g->col, "%s.grid_points: not in a layer list; write the alternatives as layer lists", where);
        return -1;
    }
    if (sw_scalar_int(g, &n) || n < 2 || n > 1000) {
        swerr_add(e, g->line, g->col, "%s.grid_points: expected an integer from 2 to 1000", where);
        return -1;
    }
    *vals = fs_calloc((size_t)n, sizeof **vals);
    int k = 0;
    for (long long i = 0; i < n; i++) {
        /* Point i of n at u = i / (n - 1); the last is high itself. */
        double x = sw_range_at(r, i + 1 == n ? 1.0 : (double)i / (double)(n - 1));
        if (k > 0 && (*vals)[k - 1].d == x) continue; /* integers that round together count once */
        (*vals)[k++] = (SwVal){.d = x, .u = (uint64_t)(x < 0 ? 0 : x), .line = g->line, .col = g->col};
    }
    return k;
}

int sw_parse_range(SwSpace *sp, int o, const YNode *v, const char *where, int alt, int layer, SwVal **vals,
                   SwErrs *e)
{
    int before = e->n;
    YNode rest = *v; /* the keys with no alias, for sw_check_keys (it reads only key[] and n) */
    const YNode *keys[64];
    rest.n = 0;
    rest.key = (YNode **)keys;
    for (int i = 0; i < v->n; i++) {
        const char *ours = range_alias(v->key[i]->value);
        if (ours)
            swerr_add(e, v->key[i]->line, v->key[i]->col, "unknown key '%s' in %s's range (foldsweep's word: %s)",
                      v->key[i]->value, where, ours);
        else if (rest.n < 64)
            keys[rest.n++] = v->key[i];
    }
    sw_check_keys(&rest, where, range_keys, (int)(sizeof range_keys / sizeof range_keys[0]), e);
    if (e->n > before) return -1;
    SwRange r = {.opt = o, .alt = alt, .layer = layer, .line = v->line, .col = v->col};
    snprintf(r.key, sizeof r.key, "%s", where);
    if (read_ends(o, v, where, &r, e) || read_shape(o, v, where, &r, e)) return -1;
    const YNode *g = ytree_get(v, "grid_points");
    if (g) {
        /* Points between the ends as written (1e-4 and 1e-2 give 0.001 between, not its float's neighbour). */
        SwRange written = r;
        sw_scalar_float(ytree_get(v, "low"), &written.low);
        sw_scalar_float(ytree_get(v, "high"), &written.high);
        return grid_values(&written, g, where, vals, e);
    }
    if (sp->n_ranges == SW_MAX_RANGES) {
        swerr_add(e, v->line, v->col, "%s: more than %d ranges in one sweep", where, SW_MAX_RANGES);
        return -1;
    }
    sp->ranges[sp->n_ranges++] = r;
    return 0;
}

double sw_range_at(const SwRange *r, double u)
{
    const double a = r->log ? log(r->low) : r->low, b = r->log ? log(r->high) : r->high;
    double x = a + u * (b - a);
    if (r->log) x = exp(x);
    x = x < r->low ? r->low : x > r->high ? r->high : x;
    if (r->step > 0) {
        /* The values low + k step <= high: u picks k evenly; log space (integers only) takes the nearest. */
        /* A float step is a float32 (0.1 is 0.100000001): a relative slack keeps high itself a value. */
        const double kmax = floor((r->high - r->low) / r->step + 1e-6);
        double k = r->log ? floor((x - r->low) / r->step + 0.5) : floor(u * (kmax + 1));
        k = k < 0 ? 0 : k > kmax ? kmax : k;
        x = r->low + k * r->step;
    }
    if (sw_opts[r->opt].type == OT_FLOAT) {
        float f = (float)x; /* the trainer's value; within [low, high], which are floats themselves */
        if ((double)f < r->low) f = (float)r->low;
        if ((double)f > r->high) f = (float)r->high;
        return (double)f;
    }
    return x;
}

void sw_range_value_text(const SwRange *r, double x, char *out, size_t n)
{
    SwVal v = {.d = x};
    sw_value_text(r->opt, &v, out, n);
}

void sw_range_canon(SwBuf *b, const SwRange *r)
{
    char lo[64], hi[64], st[64];
    sw_range_value_text(r, r->low, lo, sizeof lo);
    sw_range_value_text(r, r->high, hi, sizeof hi);
    sb_printf(b, "{low: %s, high: %s", lo, hi);
    const double step0 = sw_opts[r->opt].odd ? 2 : sw_opts[r->opt].type == OT_INT ? 1 : 0;
    if (r->step != step0) {
        if (sw_opts[r->opt].type == OT_FLOAT)
            fs_format_float(st, sizeof st, (float)r->step);
        else
            snprintf(st, sizeof st, "%lld", (long long)r->step);
        sb_printf(b, ", step: %s", st);
    }
    sb_puts(b, r->log ? ", log: true}" : "}");
}
