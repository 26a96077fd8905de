/*
 * constraints.c: run.constraints, {params: {min: A, max: B}}. A trial
 * outside them is excluded as the expansion meets it (expand.c): it is no
 * trial of the sweep, so the run never trains it and the leaderboard never
 * lists it; `plan` lists it with the reason. A random or tpe draw that
 * breaks them does not count toward search.random: the sampler draws on,
 * deterministically. The constraints are part of the canonical sweep
 * (they decide which trials exist).
 */
#include <limits.h>
#include <string.h>

#include "sweep/sweep_int.h"

static const char *const WANT = "run.constraints: expected {params: {min: N, max: N}} (either bound; params is a "
                                "trial's parameter count, as plan shows it)";

/* A bound: a whole number from 1 to 10^12. */
static int read_bound(const YNode *v, long *out, SwErrs *e, const char *where)
{
    long long n;
    if (sw_scalar_int(v, &n) || n < 1 || n > 1000000000000LL) {
        swerr_add(e, v->line, v->col, "%s: expected a whole number of parameters from 1 to 10^12", where);
        return -1;
    }
    *out = (long)n;
    return 0;
}

void sw_parse_constraints(FsSweep *sw, const YNode *key, const YNode *v, SwErrs *e)
{
    static const char *const keys[] = {"params"}, *const bounds[] = {"min", "max"};
    FsConstraints *c = &sw->constraints;
    *c = (FsConstraints){.params_min = 0, .params_max = LONG_MAX, .line = key->line, .col = key->col};
    if (v->kind != YN_MAP || v->n == 0) {
        swerr_add(e, v->line, v->col, "%s", WANT);
        return;
    }
    int before = e->n;
    sw_check_keys(v, "run.constraints", keys, 1, e);
    const YNode *p = ytree_get(v, "params");
    if (!p) return;
    if (p->kind != YN_MAP || p->n == 0) {
        swerr_add(e, p->line, p->col, "%s", WANT);
        return;
    }
    sw_check_keys(p, "run.constraints.params", bounds, 2, e);
    const YNode *lo = ytree_get(p, "min"), *hi = ytree_get(p, "max");
    if (lo) read_bound(lo, &c->params_min, e, "run.constraints.params.min");
    if (hi) read_bound(hi, &c->params_max, e, "run.constraints.params.max");
    if (e->n == before && c->params_min > c->params_max)
        swerr_add(e, p->line, p->col, "run.constraints.params: min (%ld) is above max (%ld)", c->params_min,
                  c->params_max);
    c->given = e->n == before;
}

int sw_constraints_allow(const FsConstraints *c, long params)
{
    return !c->given || (params >= c->params_min && params <= c->params_max);
}

/* The feature columns' count (and with it the first layer's parameters) is
 * known only with the data; sweep_bind_columns applies the constraints then. */
int sweep_constraints_pending(const FsSweep *sw)
{
    return sw->constraints.given && sw->features.n > 0 && sw->feat_dim == 0;
}

int sw_constraints_check(const FsSweep *sw, SwErrs *e)
{
    if (sw->n_trials > 0 || !sw->n_excluded) return 0;
    swerr_add(e, sw->constraints.line, sw->constraints.col,
              "run.constraints: they exclude every trial of the sweep (%d met%s); widen the bounds", sw->n_excluded,
              sw->feat_dim > 0 ? ", the first layer's weights for the data's feature columns counted" : "");
    return -1;
}

const char *sweep_excluded_why(const FsSweep *sw, long params, char *buf, size_t n)
{
    const FsConstraints *c = &sw->constraints;
    if (!n) return buf;
    buf[0] = '\0';
    if (!c->given) return buf;
    if (params < c->params_min)
        snprintf(buf, n, "params %ld < run.constraints.params.min %ld", params, c->params_min);
    else if (params > c->params_max)
        snprintf(buf, n, "params %ld > run.constraints.params.max %ld", params, c->params_max);
    return buf;
}

void sw_constraints_canon(SwBuf *b, const FsConstraints *c)
{
    if (!c->given) return;
    sb_puts(b, "  constraints: {params: {");
    if (c->params_min > 0) sb_printf(b, "min: %ld%s", c->params_min, c->params_max < LONG_MAX ? ", " : "");
    if (c->params_max < LONG_MAX) sb_printf(b, "max: %ld", c->params_max);
    sb_puts(b, "}}\n");
}
