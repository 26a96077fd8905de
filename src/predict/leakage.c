/*
 * leakage: the identity check of `evaluate` and the run's test section
 * (docs/models.md, "Leakage guard"). The exact guard (hashes) catches a
 * test protein identical to a training one; this one catches a chain or
 * fragment of a training protein and near-identical homologues, by each
 * test protein's highest identity to a protein the models saw.
 */
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"

static void name_copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src); }

void evaluate_identity_of(FsIdentityReport *r, const FsSeqSet *seen, const FsDataset *ds, double max, uint8_t *over)
{
    memset(r, 0, sizeof *r);
    r->checked = 1;
    r->max = max;
    FsIdentityHit *hits = fs_malloc(sizeof *hits * ((size_t)ds->n_prot + 1));
    FsIdentityIndex *ix = data_identity_index(seen);
    data_identity_all(ix, ds, hits);
    data_identity_free(ix);
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        for (int l = 0; l < FS_IDENTITY_LEVELS; l++) r->above[l] += hits[i].identity > fs_identity_levels[l];
        over[i] = hits[i].identity > max;
        if (!over[i]) continue;
        if (r->n_first < FS_EVAL_NAMES) {
            name_copy(r->first[r->n_first].test, sizeof r->first[0].test, data_protein_name(ds, i));
            name_copy(r->first[r->n_first].train, sizeof r->first[0].train,
                      seen->names + seen->name_off[hits[i].protein]);
            r->first[r->n_first++].identity = hits[i].identity;
        }
        r->over++;
    }
    free(hits);
}

void evaluate_identity(FsIdentityReport *r, const FsEnsemble *e, const FsDataset *ds, double max, uint8_t *over)
{
    FsSeqSet all;
    memset(&all, 0, sizeof all);
    memset(over, 0, ds->n_prot);
    for (int k = 0; k < e->n; k++) {
        const FsSeqSet *s = e->m[k].info.seen_seqs;
        if (!s) {
            memset(r, 0, sizeof *r);
            r->max = max;
            snprintf(r->why, sizeof r->why, "model %d of %d (trial %s, written by foldsweep %s) carries no training "
                     "sequences, only whole-sequence fingerprints", k + 1, e->n, e->m[k].info.trial, e->m[k].version);
            data_seqset_free(&all);
            return;
        }
        int dup = 0;
        for (int i = 0; i < k && !dup; i++) dup = data_seqset_same(e->m[i].info.seen_seqs, s);
        if (!dup) data_seqset_append(&all, s);
    }
    evaluate_identity_of(r, &all, ds, max, over);
    data_seqset_free(&all);
}

uint32_t evaluate_overlap_flags(const FsEnsemble *e, const FsDataset *ds, uint8_t *flag)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        uint64_t h = data_protein_hash(ds, i);
        for (int k = 0; k < e->n && !flag[i]; k++) flag[i] = (uint8_t)data_hash_seen(e->m[k].info.seen, e->m[k].info.n_seen, h);
        n += flag[i] != 0;
    }
    return n;
}

uint32_t evaluate_leave_out(FsDataset *ds, const uint8_t *flag)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        if (!flag[i]) continue;
        n++;
        for (uint32_t r = ds->seg_off[ds->prot_seg[i]]; r < ds->seg_off[ds->prot_seg[i + 1]]; r++)
            ds->ss[r] |= FS_SS_UNSCORED;
    }
    return n;
}

void evaluate_identity_refusal(const FsIdentityReport *r, char *out, size_t n)
{
    size_t at = (size_t)snprintf(out, n, "%u test protein%s above %.2f identity to proteins the models were trained "
                                 "or validated on (", r->over, r->over == 1 ? " is" : "s are", r->max);
    for (int i = 0; i < r->n_first && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s: %.3f to %s", i ? ", " : "", r->first[i].test,
                               r->first[i].identity, r->first[i].train);
    if (at < n) snprintf(out + at, n - at, "%s)", r->over > (uint32_t)r->n_first ? ", ..." : "");
}
