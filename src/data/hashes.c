/*
 * hashes: one 64-bit fingerprint per protein sequence, for the leakage
 * guard (a model carries those of the proteins it was trained and
 * validated on; evaluate refuses a test protein identical to one of them).
 * The hash is FNV-1a over the residue codes of the whole protein (every
 * chain in order), so it ignores labels, masks, names and letter case, and
 * reads every non-standard letter as X, as the models do.
 */
#include <stdlib.h>

#include "data/data.h"

uint64_t data_protein_hash(const FsDataset *ds, uint32_t i)
{
    uint32_t lo = ds->seg_off[ds->prot_seg[i]], hi = ds->seg_off[ds->prot_seg[i + 1]];
    return fs_fnv1a64(ds->aa + lo, hi - lo, FS_FNV_OFFSET);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t data_seen_hashes(const FsDataset *ds, uint64_t **out)
{
    uint64_t *h = fs_malloc(sizeof(uint64_t) * ((size_t)ds->n_prot + 1));
    uint32_t n = 0;
    for (uint32_t i = 0; i < ds->n_prot; i++)
        if (data_in_use(ds, i)) h[n++] = data_protein_hash(ds, i);
    qsort(h, n, sizeof *h, cmp_u64);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || h[i] != h[k - 1]) h[k++] = h[i];
    *out = h;
    return k;
}

int data_hash_seen(const uint64_t *sorted, uint32_t n, uint64_t h)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < h) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && sorted[lo] == h;
}
