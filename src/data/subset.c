/*
 * subset.c: a data set cut down to some of its proteins, in place. The one
 * use: a labelled test file that marks predefined sets (FLIP's) is scored
 * on its SET=test proteins only; its training and validation proteins are
 * not test data, and the leakage guard refused the whole file for them
 * after predicting every protein.
 */
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

/* Moves the kept proteins (keep[p]) to the front of every array, in order;
 * the arrays keep their allocations (they only shrink). Before features:
 * feat must be NULL. */
static void compact(FsDataset *ds, const uint8_t *keep)
{
    uint32_t np = 0, ns = 0, nr = 0, nn = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        if (!keep[p]) continue;
        const uint32_t s0 = ds->prot_seg[p], s1 = ds->prot_seg[p + 1];
        const uint32_t r0 = ds->seg_off[s0], r1 = ds->seg_off[s1];
        const uint32_t n0 = ds->name_off[p], n1 = ds->name_off[p + 1];
        memmove(ds->aa + nr, ds->aa + r0, r1 - r0);
        memmove(ds->ss + nr, ds->ss + r0, r1 - r0);
        ds->prot_seg[np] = ns;
        for (uint32_t s = s0; s < s1; s++) ds->seg_off[ns++] = nr + (ds->seg_off[s] - r0);
        nr += r1 - r0;
        memmove(ds->names + nn, ds->names + n0, n1 - n0);
        ds->name_off[np] = nn;
        nn += n1 - n0;
        ds->prot_set[np++] = ds->prot_set[p];
    }
    ds->prot_seg[np] = ns;
    ds->seg_off[ns] = nr;
    ds->name_off[np] = nn;
    ds->n_prot = np, ds->n_seg = ns, ds->n_res = nr;
}

uint32_t data_keep_test_set(FsDataset *ds)
{
    FS_ASSERT(!ds->feat && !ds->n_folds);
    uint32_t test = 0, other = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        test += ds->prot_set[p] == FS_SET_TEST;
        other += ds->prot_set[p] == FS_SET_TRAIN || ds->prot_set[p] == FS_SET_VALID;
    }
    if (!test || !other) return 0;
    uint8_t *keep = fs_malloc(ds->n_prot);
    for (uint32_t p = 0; p < ds->n_prot; p++)
        keep[p] = ds->prot_set[p] != FS_SET_TRAIN && ds->prot_set[p] != FS_SET_VALID;
    compact(ds, keep);
    free(keep);
    data_finish(ds); /* the segments' edges, the counts and the fingerprint of what is left */
    return other;
}
