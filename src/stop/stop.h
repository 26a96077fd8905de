/*
 * stop: early-stopping criteria, exactly as Prechelt defines them in
 * "Early Stopping - But When?" (1998), plus plain patience. A maximum epoch
 * count always applies. Runs inside the per-model training loop on the CPU
 * and inside a GPU thread block, so the state is fixed-size (no malloc).
 *
 * Errors are lower-is-better: E_va is the epoch's validation error the
 * trainer monitors (training.monitor: the validation loss, or 1 - Q3, the
 * fraction of validation residues predicted wrong), E_tr the epoch's mean
 * training loss. A strict improvement of E_va marks the epoch to keep, so
 * of equal values the first is kept.
 *
 * Definitions (epoch t is 1-based; k = spec->strip):
 *   E_opt(t) = min_{t' <= t} E_va(t')
 *   GL(t)    = 100 * (E_va(t) / E_opt(t) - 1)
 *   P_k(t)   = 1000 * (sum_{t'=t-k+1..t} E_tr(t') / (k * min_{t'=t-k+1..t} E_tr(t')) - 1),
 *              only at strip ends (t divisible by k)
 *   GL_alpha: halt after the first t with GL(t) > alpha.
 *   PQ_alpha: halt after the first strip end t with GL(t) / P_k(t) > alpha.
 *             P_k == 0 (training error flat over the strip) makes the
 *             quotient +inf when GL > 0 and 0 when GL == 0.
 *   UP_s:     halt after the strip end t at which E_va(t) > E_va(t-k) for the
 *             s-th successive strip end (the first strip end has no t-k and
 *             never counts as a rise; an equal or lower value resets the count).
 *   PATIENCE: halt when t - (last epoch whose E_va was below the patience
 *             reference by more than min_delta) reaches `patience`.
 * max_epochs applies to every kind.
 *
 * Edge cases, chosen so no comparison ever sees a NaN:
 *   - A non-finite E_va (NaN, +-inf: the model diverged) counts as +inf, the
 *     worst error: never an improvement, GL = +inf once a finite E_opt
 *     exists, a rise for UP, no progress for PATIENCE.
 *   - A non-finite E_tr counts as +inf; P_k is then +inf (so PQ's quotient
 *     is 0: a diverging training run is not "progress has stalled").
 *   - Until a finite E_va has been seen (E_opt = +inf), GL = 0.
 *   - E_opt == 0 with E_va > 0 gives GL = +inf; E_va == E_opt gives GL = 0.
 *   - P_k is clamped at 0 from below (float rounding of sum vs k * min).
 */
#ifndef FS_STOP_H
#define FS_STOP_H

#include "util/util.h"

typedef enum {
    FS_STOP_MAX_EPOCHS = 0, /* train to max_epochs, keep the best epoch */
    FS_STOP_GL,             /* GL_alpha: generalization loss > alpha (percent) */
    FS_STOP_PQ,             /* PQ_alpha: GL / P_k > alpha at the end of a strip */
    FS_STOP_UP,             /* UP_s: validation error rose in s successive strips */
    FS_STOP_PATIENCE        /* no improvement > min_delta for `patience` epochs */
} FsStopKind;
#define FS_STOP_KIND_COUNT 5
/* The criteria's names in FsStopKind order, as the sweep format spells
 * them ("none": no early stop, train to max_epochs); host only. */
extern const char *const stop_kind_names[FS_STOP_KIND_COUNT];

#define FS_STOP_MAX_STRIP 64

typedef struct {
    FsStopKind kind;
    float alpha;      /* GL, PQ */
    int strip;        /* k: training strip length for PQ and UP (Prechelt uses 5) */
    int s;            /* UP_s */
    int patience;     /* PATIENCE */
    float min_delta;  /* PATIENCE: an improvement must exceed this */
    int max_epochs;   /* always applies, >= 1 */
} FsStopSpec;

typedef struct {
    int epoch;                         /* epochs seen so far */
    float e_opt;                       /* lowest validation error so far */
    int best_epoch;                    /* epoch (1-based) of e_opt */
    float strip_tr[FS_STOP_MAX_STRIP]; /* training errors of the current strip */
    float last_strip_va;               /* E_va at the end of the previous strip */
    int up_count;                      /* successive strips with rising E_va */
    float gl, pk;                      /* last GL(t) and P_k(t) (P_k < 0 when not at a strip end) */
    float pat_best;                    /* PATIENCE: reference error (moves only by > min_delta) */
    int pat_epoch;                     /* PATIENCE: epoch of pat_best (0: none yet) */
} FsStopState;

enum { FS_STOP_IMPROVED = 1, FS_STOP_HALT = 2 };

FS_HOST_DEVICE void stop_init(FsStopState *st);
/* Feeds epoch t's errors (t = st->epoch + 1). Returns a mask of
 * FS_STOP_IMPROVED (new best validation error: keep these weights) and
 * FS_STOP_HALT (stop after this epoch; also at max_epochs). */
FS_HOST_DEVICE int stop_update(FsStopState *st, const FsStopSpec *spec, float train_err, float val_err);

/* Host only from here on. */
const char *stop_kind_name(FsStopKind k);
/* Checks parameters (only those the kind uses, plus max_epochs); returns 0
 * or -1 with a message naming the parameter and what was expected. */
int stop_spec_check(const FsStopSpec *spec, FsErr *err);

#endif
