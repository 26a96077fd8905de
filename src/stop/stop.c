/*
 * stop: Prechelt's early-stopping criteria (GL, PQ, UP) plus patience and a
 * maximum epoch count. The definitions and edge cases are in stop.h.
 *
 * stop_init and stop_update also run in a GPU thread block (nvcc compiles
 * this file as device code), so they use only plain float math on the
 * caller's fixed-size state: no stdio, no allocation, no globals.
 */
#include "stop/stop.h" /* FsStopSpec, FsStopState, FS_HOST_DEVICE */

#include <math.h> /* INFINITY, isfinite */

/* ---------------------------------------------------------------------- */
/* Device-safe part                                                        */

FS_HOST_DEVICE void stop_init(FsStopState *st)
{
    st->epoch = 0;
    st->e_opt = INFINITY;
    st->best_epoch = 0;
    for (int i = 0; i < FS_STOP_MAX_STRIP; i++) st->strip_tr[i] = 0.0f;
    st->last_strip_va = INFINITY;
    st->up_count = 0;
    st->gl = 0.0f;
    st->pk = -1.0f;
    st->pat_best = INFINITY;
    st->pat_epoch = 0;
}

/* GL(t) = 100 * (E_va / E_opt - 1) without 0/0 or inf/inf. */
FS_HOST_DEVICE static float stop_gl(float va, float e_opt)
{
    if (va == e_opt || !isfinite(e_opt)) return 0.0f; /* at the optimum, or no finite E_opt yet */
    if (e_opt == 0.0f) return INFINITY;                /* va > 0 = e_opt */
    return 100.0f * (va / e_opt - 1.0f);
}

/* P_k over the k training errors of the strip just completed. */
FS_HOST_DEVICE static float stop_pk(const float *tr, int k)
{
    float sum = 0.0f, mn = tr[0];
    for (int i = 0; i < k; i++) {
        sum += tr[i];
        if (tr[i] < mn) mn = tr[i];
    }
    if (!isfinite(sum)) return INFINITY;
    if (mn == 0.0f) return sum == 0.0f ? 0.0f : INFINITY;
    float pk = 1000.0f * (sum / ((float)k * mn) - 1.0f);
    /* The mean is never below the minimum; a negative value is rounding. */
    return pk > 0.0f ? pk : 0.0f;
}

FS_HOST_DEVICE int stop_update(FsStopState *st, const FsStopSpec *spec, float train_err, float val_err)
{
    int t = ++st->epoch;
    int flags = 0;
    /* Diverged values are the worst possible error (stop.h). */
    float va = isfinite(val_err) ? val_err : INFINITY;
    float tr = isfinite(train_err) ? train_err : INFINITY;

    /* E_opt(t) and the weights to keep: a strict improvement over E_opt(t-1). */
    if (va < st->e_opt) {
        st->e_opt = va;
        st->best_epoch = t;
        flags |= FS_STOP_IMPROVED;
    }
    st->gl = stop_gl(va, st->e_opt);

    /* Training strips: epochs n+1..n+k with n divisible by k. Tracked for
     * every kind so gl/pk can be logged; an unchecked strip is ignored
     * rather than indexing out of bounds. */
    int k = spec->strip;
    int at_strip_end = 0;
    st->pk = -1.0f;
    if (k >= 1 && k <= FS_STOP_MAX_STRIP) {
        st->strip_tr[(t - 1) % k] = tr;
        if (t % k == 0) {
            at_strip_end = 1;
            st->pk = stop_pk(st->strip_tr, k);
            /* UP: a rise needs a previous strip end (t - k >= 1). */
            if (t > k && va > st->last_strip_va)
                st->up_count++;
            else
                st->up_count = 0;
            st->last_strip_va = va;
        }
    }

    /* Patience has its own reference: only a gain of more than min_delta
     * moves it, while E_opt follows every strict improvement. */
    if (va < st->pat_best - spec->min_delta) {
        st->pat_best = va;
        st->pat_epoch = t;
    }

    int halt = 0;
    switch (spec->kind) {
    case FS_STOP_GL:
        halt = st->gl > spec->alpha;
        break;
    case FS_STOP_PQ:
        if (at_strip_end) {
            float q;
            if (st->pk > 0.0f)
                q = st->gl / st->pk;
            else
                q = st->gl > 0.0f ? INFINITY : 0.0f;
            halt = q > spec->alpha;
        }
        break;
    case FS_STOP_UP:
        halt = at_strip_end && st->up_count >= spec->s;
        break;
    case FS_STOP_PATIENCE:
        halt = t - st->pat_epoch >= spec->patience;
        break;
    case FS_STOP_MAX_EPOCHS:
    default:
        break;
    }
    if (t >= spec->max_epochs) halt = 1;
    if (halt) flags |= FS_STOP_HALT;
    return flags;
}

/* ---------------------------------------------------------------------- */
/* Host-only part                                                          */

/* Host only: the GPU build of this file (kernels/fit_kernel.cu) leaves
 * these out so they are not defined twice. */
#if !defined(__CUDACC__) && !defined(FS_EMULATE_BLOCK)
const char *const stop_kind_names[FS_STOP_KIND_COUNT] = {"none", "gl", "pq", "up", "patience"};

const char *stop_kind_name(FsStopKind k) { return (unsigned)k < FS_STOP_KIND_COUNT ? stop_kind_names[k] : "unknown"; }

int stop_spec_check(const FsStopSpec *spec, FsErr *err)
{
    FsStopKind kind = spec->kind;
    const char *name = stop_kind_name(kind);
    if ((unsigned)kind >= FS_STOP_KIND_COUNT) {
        fs_err_set(err, "stop: kind is %d; expected one of none, gl, pq, up, patience", (int)kind);
        return -1;
    }
    /* !(x > 0) also rejects NaN. */
    if ((kind == FS_STOP_GL || kind == FS_STOP_PQ) &&
        (!(spec->alpha > 0.0f) || !isfinite(spec->alpha))) {
        fs_err_set(err, "stop %s: alpha is %g; expected a finite number > 0", name,
                   (double)spec->alpha);
        return -1;
    }
    if ((kind == FS_STOP_PQ || kind == FS_STOP_UP) &&
        (spec->strip < 1 || spec->strip > FS_STOP_MAX_STRIP)) {
        fs_err_set(err, "stop %s: strip is %d; expected an integer in 1..%d", name, spec->strip,
                   FS_STOP_MAX_STRIP);
        return -1;
    }
    if (kind == FS_STOP_UP && spec->s < 1) {
        fs_err_set(err, "stop %s: s is %d; expected an integer >= 1", name, spec->s);
        return -1;
    }
    if (kind == FS_STOP_PATIENCE && spec->patience < 1) {
        fs_err_set(err, "stop %s: patience is %d; expected an integer >= 1", name, spec->patience);
        return -1;
    }
    if (kind == FS_STOP_PATIENCE && (!(spec->min_delta >= 0.0f) || !isfinite(spec->min_delta))) {
        fs_err_set(err, "stop %s: min_delta is %g; expected a finite number >= 0", name,
                   (double)spec->min_delta);
        return -1;
    }
    if (spec->max_epochs < 1) {
        fs_err_set(err, "stop %s: max_epochs is %d; expected an integer >= 1", name,
                   spec->max_epochs);
        return -1;
    }
    return 0;
}
#endif
