/*
 * stop: early-stopping criteria, exactly as Prechelt defines them in
 * "Early Stopping - But When?" (1998), plus plain patience. A maximum epoch
 * count always applies. Runs inside the per-model training loop on the CPU
 * and inside a GPU thread block, so the state is fixed-size (no malloc).
 *
 * Errors are losses (lower is better): E_va is the validation loss of the
 * epoch, E_tr the mean training loss of the epoch.
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
} FsStopState;

enum { FS_STOP_IMPROVED = 1, FS_STOP_HALT = 2 };

FS_DEVICE void stop_init(FsStopState *st);
/* Feeds epoch t's errors (t = st->epoch + 1). Returns a mask of
 * FS_STOP_IMPROVED (new best validation error: keep these weights) and
 * FS_STOP_HALT (stop after this epoch; also at max_epochs). */
FS_DEVICE int stop_update(FsStopState *st, const FsStopSpec *spec, float train_err, float val_err);

const char *stop_kind_name(FsStopKind k);
/* Checks parameters; returns 0 or -1 with a message. */
int stop_spec_check(const FsStopSpec *spec, FsErr *err);

#endif
