/*
 * leakage: the identity check of `evaluate` and the run's test section
 * (docs/models.md, "Leakage guard"). The exact guard (hashes) catches a
 * test protein identical to a training one; this one catches a chain or
 * fragment of a training protein and near-identical homologues, by each
 * test protein's highest identity to a protein the models saw, and a
 * chimera of pieces of several by its coverage (the share of its residues
 * in near-identical segments of them). The guard (predict_guard) applies
 * both, for evaluate and the run's test phase.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "predict/predict_int.h"

static void name_copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src); }

/* Test protein i's example: above max identity, or only above max coverage. */
static void note_example(FsIdentityReport *r, const FsSeqSet *seen, const FsDataset *ds, uint32_t i,
                         const FsIdentityHit *h, int by_identity)
{
    if (by_identity && r->n_first < FS_EVAL_NAMES) {
        name_copy(r->first[r->n_first].test, sizeof r->first[0].test, data_protein_name(ds, i));
        name_copy(r->first[r->n_first].train, sizeof r->first[0].train, seen->names + seen->name_off[h->protein]);
        r->first[r->n_first++].identity = h->identity;
    } else if (!by_identity && r->n_cfirst < FS_EVAL_NAMES) {
        name_copy(r->cfirst[r->n_cfirst].test, sizeof r->cfirst[0].test, data_protein_name(ds, i));
        for (int k = 0; k < 2; k++)
            name_copy(r->cfirst[r->n_cfirst].train[k], sizeof r->cfirst[0].train[0],
                      h->cover_by[k] < 0 ? "" : seen->names + seen->name_off[h->cover_by[k]]);
        r->cfirst[r->n_cfirst++].coverage = h->coverage;
    }
}

void evaluate_identity_of(FsIdentityReport *r, const FsSeqSet *seen, const FsDataset *ds, double max,
                          double max_coverage, uint8_t *over)
{
    memset(r, 0, sizeof *r);
    r->checked = 1;
    r->max = max;
    r->max_coverage = max_coverage;
    FsIdentityHit *hits = fs_malloc(sizeof *hits * ((size_t)ds->n_prot + 1));
    FsIdentityIndex *ix = data_identity_index(seen);
    r->segment = data_identity_segment(ix, max);
    data_identity_all(ix, ds, hits);
    data_identity_free(ix);
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        for (int l = 0; l < FS_IDENTITY_LEVELS; l++) r->above[l] += hits[i].identity > fs_identity_levels[l];
        int by_identity = hits[i].identity > max, by_coverage = hits[i].coverage > max_coverage;
        r->over += (uint32_t)by_identity;
        r->covered += (uint32_t)by_coverage;
        r->covered_only += (uint32_t)(by_coverage && !by_identity);
        over[i] = (uint8_t)(by_identity || by_coverage);
        if (over[i]) note_example(r, seen, ds, i, &hits[i], by_identity);
    }
    free(hits);
}

void evaluate_identity(FsIdentityReport *r, const FsEnsemble *e, const FsDataset *ds, double max,
                       double max_coverage, uint8_t *over)
{
    FsSeqSet all;
    memset(&all, 0, sizeof all);
    memset(over, 0, ds->n_prot);
    for (int k = 0; k < e->n; k++) {
        const FsSeqSet *s = e->m[k].info.seen_seqs;
        if (!s) {
            memset(r, 0, sizeof *r);
            r->max = max;
            r->max_coverage = max_coverage;
            snprintf(r->why, sizeof r->why, "model %d of %d (trial %s, written by foldsweep %s) carries no training "
                     "sequences, only whole-sequence fingerprints", k + 1, e->n, e->m[k].info.trial, e->m[k].version);
            data_seqset_free(&all);
            return;
        }
        int dup = 0;
        for (int i = 0; i < k && !dup; i++) dup = data_seqset_same(e->m[i].info.seen_seqs, s);
        if (!dup) data_seqset_append(&all, s);
    }
    evaluate_identity_of(r, &all, ds, max, max_coverage, over);
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

/* "P: 0.98 covered, by T and U" for each example only above max coverage. */
static size_t coverage_examples(const FsIdentityReport *r, char *out, size_t n)
{
    size_t at = 0;
    for (int i = 0; i < r->n_cfirst && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s: %.3f covered, by %s%s%s", i ? ", " : "", r->cfirst[i].test,
                               r->cfirst[i].coverage, r->cfirst[i].train[0], r->cfirst[i].train[1][0] ? " and " : "",
                               r->cfirst[i].train[1]);
    return at;
}

void evaluate_identity_refusal(const FsIdentityReport *r, char *out, size_t n)
{
    size_t at = 0;
    out[0] = '\0';
    if (r->over) {
        at = (size_t)snprintf(out, n, "%u test protein%s above %.2f identity to proteins the models were trained "
                              "or validated on (", r->over, r->over == 1 ? " is" : "s are", r->max);
        for (int i = 0; i < r->n_first && at < n; i++)
            at += (size_t)snprintf(out + at, n - at, "%s%s: %.3f to %s", i ? ", " : "", r->first[i].test,
                                   r->first[i].identity, r->first[i].train);
        if (at < n) at += (size_t)snprintf(out + at, n - at, "%s)", r->over > (uint32_t)r->n_first ? ", ..." : "");
    }
    if (!r->covered_only || at >= n) return;
    at += (size_t)snprintf(out + at, n - at, "%s%u %stest protein%s more than %.2f of %s residues in near-identical "
                           "local alignments (identity above %.2f over %d or more residues) to proteins the models were trained or "
                           "validated on (", at ? "; " : "", r->covered_only, r->over ? "more " : "",
                           r->covered_only == 1 ? " has" : "s have", r->max_coverage,
                           r->covered_only == 1 ? "its" : "their", r->segment, FS_COVER_SEGMENT_MIN);
    if (at < n) at += coverage_examples(r, out + at, n - at);
    if (at < n) snprintf(out + at, n - at, "%s)", r->covered_only > (uint32_t)r->n_cfirst ? ", ..." : "");
}

/* "foldsweep: " + a note or warning on f, where the caller wants them. */
static void note(FILE *f, const char *fmt, ...)
{
    if (!f) return;
    va_list ap;
    fputs("foldsweep: ", f);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

/* The refusal for proteins the models have seen (identical) or nearly
 * (above max identity): flagged counts both. It names evaluate's options:
 * the run refuses its test set before training, in its sweep's words
 * (run/state.c), and gives this guard data already screened. */
static int refuse(const FsEvaluation *ev, uint32_t flagged, FsErr *err)
{
    const char *fix = "these scores would be optimistic; pass --exclude-overlap to leave them out, or --allow-overlap "
                      "to score them anyway with the overlap reported";
    if (ev->overlap)
        return fs_err_set(err, "%s: %u test protein%s identical to proteins the models were trained or validated on "
                          "(%s%s%s%s): %s", ev->data, ev->overlap, ev->overlap == 1 ? " is" : "s are", ev->names[0],
                          ev->n_names > 1 ? ", " : "", ev->n_names > 1 ? ev->names[1] : "",
                          ev->overlap > 2 ? ", ..." : "", fix), -1;
    char what[1200];
    evaluate_identity_refusal(&ev->ident, what, sizeof what);
    return fs_err_set(err, "%s: %s (%u in all): %s", ev->data, what, flagged, fix), -1;
}

int predict_guard(FsEvaluation *ev, const FsEnsemble *e, FsDataset *ds, const FsEvalSpec *spec, FsErr *err)
{
    int unchecked = 0, rc = 0;
    uint8_t *flag = fs_calloc((size_t)ds->n_prot + 1, 1);
    evaluate_overlap(ev, e, ds, &unchecked);
    evaluate_identity(&ev->ident, e, ds, spec->max_identity, spec->max_coverage, flag);
    uint32_t flagged = evaluate_overlap_flags(e, ds, flag);
    if (spec->screened) {
        /* Refused or left out before: what the models flag is what was. */
        if (spec->overlap == FS_OVERLAP_EXCLUDE) ev->ident.left_out = flagged;
    } else if (flagged && spec->overlap == FS_OVERLAP_EXCLUDE) {
        ev->ident.left_out = evaluate_leave_out(ds, flag);
        note(spec->notes, "note: %u test protein%s identical to training proteins left out, and %u more above %g "
             "identity to one or above %g coverage", ev->overlap, ev->overlap == 1 ? "" : "s", flagged - ev->overlap,
             spec->max_identity, spec->max_coverage);
        size_t at = strlen(ev->data);
        snprintf(ev->data + at, sizeof ev->data - at, " (%u overlapping left out)", flagged);
    } else if (flagged && spec->overlap == FS_OVERLAP_REFUSE) {
        rc = refuse(ev, flagged, err);
    }
    if (rc == 0 && unchecked)
        note(spec->notes, "warning: %d model%s carry no training-protein fingerprints (saved by an older foldsweep): "
             "overlap with their training data is not checked", unchecked, unchecked == 1 ? "" : "s");
    if (rc == 0 && !ev->ident.checked)
        note(spec->notes, "warning: the identity check could not be made: %s; test proteins that are chains, "
             "fragments or close homologues of training proteins are not caught (refit or retrain with this "
             "foldsweep)", ev->ident.why);
    free(flag);
    return rc;
}
