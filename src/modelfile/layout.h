/*
 * modelfile/layout.h: private to the modelfile module. The list of
 * tensors of a net's PyTorch state dict and the index maps between
 * PyTorch's layouts and foldsweep's weight buffer.
 */
#ifndef FS_MODELFILE_LAYOUT_H
#define FS_MODELFILE_LAYOUT_H

#include <stdint.h>

#include "model/model.h"

typedef enum {
    LAYOUT_VECTOR = 0, /* copied as it is */
    LAYOUT_CONV,       /* [F][C][K] <-> W[k*C + c][f] */
    LAYOUT_DENSE,      /* [U][C*L] <-> W[q*C + c][u] (flatten order differs) */
    LAYOUT_TRANSPOSE   /* [R][C] <-> W[c*ld + r] (a GRU's weights: ld, the row of all its gates) */
} LayoutKind;

typedef struct {
    char name[48];
    LayoutKind kind;
    int layer;        /* index into net->layer */
    long off;         /* floats into the weight buffer */
    int ndim;
    int64_t shape[3];
    long ld;          /* LAYOUT_TRANSPOSE: floats from one of foldsweep's rows to the next */
} LayoutEntry;

/* Upper bound of entries: eleven per layer (an attention layer). */
#define LAYOUT_MAX (11 * (FS_MAX_LAYERS + 1))

/* Fills e with the net's tensors in state-dict order; returns the count. */
int layout_plan(const FsNet *net, LayoutEntry *e, int max_entries);
long layout_numel(const LayoutEntry *e);
/* Entry e of weights w (foldsweep layout) into out (PyTorch layout), and back. */
void layout_to_torch(const FsNet *net, const LayoutEntry *e, const float *w, float *out);
void layout_from_torch(const FsNet *net, const LayoutEntry *e, const float *in, float *w);

#endif
