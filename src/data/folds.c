/*
 * folds.c: cross-validation folds by protein, the ids and slots of a
 * sweep's folds, and the example lists the trainer iterates. A protein's
 * residues all go to one fold so that no near-identical window sits on
 * both sides of a split.
 */
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

typedef struct {
    uint32_t prot, len, order;
} FoldItem;

static int by_len_then_order(const void *a, const void *b)
{
    const FoldItem *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static uint32_t protein_len(const FsDataset *ds, uint32_t p)
{
    return ds->seg_off[ds->prot_seg[p + 1]] - ds->seg_off[ds->prot_seg[p]];
}

/* One repeat's assignment into out[n_prot], balanced by residues: each
 * protein in turn to the lightest fold. The plain split (by_length) takes
 * them longest first, so the seed only breaks ties between equal lengths
 * and two seeds give nearly the same folds; a further repeat must be
 * another split, so it takes them in the seed's random order (every fold
 * still within one protein's length of the others). */
static void assign_one(const FsDataset *ds, uint32_t k, const uint64_t *words, int n_words, int by_length,
                       uint8_t *out)
{
    FoldItem *it = fs_malloc(ds->n_prot * sizeof *it);
    uint32_t *perm = fs_malloc(ds->n_prot * sizeof *perm);
    for (uint32_t i = 0; i < ds->n_prot; i++) perm[i] = i;
    FsRng rng;
    fs_rng_seed(&rng, words, n_words);
    for (uint32_t i = ds->n_prot; i > 1; i--) {
        uint32_t j = fs_rng_below(&rng, i);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        it[i].prot = perm[i];
        it[i].len = protein_len(ds, perm[i]);
        it[i].order = i;
    }
    if (by_length) qsort(it, ds->n_prot, sizeof *it, by_len_then_order);
    uint64_t load[FS_MAX_FOLDS] = {0};
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        /* After the shuffle and the sort, so that data without a test set
         * gets the folds (and the fingerprint) it always had. */
        if (ds->prot_set[it[i].prot] == FS_SET_TEST) {
            out[it[i].prot] = FS_FOLD_HELD_OUT;
            continue;
        }
        uint32_t best = 0;
        for (uint32_t f = 1; f < k; f++)
            if (load[f] < load[best]) best = f;
        load[best] += it[i].len;
        out[it[i].prot] = (uint8_t)best;
    }
    free(it);
    free(perm);
}

int data_assign_repeats(FsDataset *ds, uint32_t k, uint32_t r, uint64_t seed, FsErr *err)
{
    uint32_t held = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) held += ds->prot_set[p] == FS_SET_TEST;
    const uint32_t n = ds->n_prot - held;
    if (k < 2 || k > FS_MAX_FOLDS || k > n) {
        char also[96] = "";
        if (held) snprintf(also, sizeof also, " (and %u SET=test proteins, held out of the folds)", held);
        fs_err_set(err, "cannot make %u folds from %u proteins%s (folds must be 2..%u)", k, n, also,
                   n < FS_MAX_FOLDS ? n : FS_MAX_FOLDS);
        return -1;
    }
    if (r < 1 || (uint64_t)k * r > FS_MAX_FOLDS) {
        fs_err_set(err, "cannot repeat %u folds %u times: folds x repeats must be at most %u", k, r, FS_MAX_FOLDS);
        return -1;
    }
    free(ds->prot_fold);
    ds->prot_fold = fs_calloc((size_t)ds->n_prot * r + 1, 1);
    for (uint32_t i = 0; i < r; i++) {
        /* Repeat 0 is the plain split's own stream: r = 1 changes nothing. */
        const uint64_t words[3] = {seed, 0x666f6c6473ull /* "folds" */, i};
        assign_one(ds, k, words, i ? 3 : 2, i == 0, ds->prot_fold + (size_t)i * ds->n_prot);
    }
    ds->n_folds = k * r;
    ds->fold_k = k;
    ds->n_repeats = r;
    ds->fold_seed = seed;
    ds->fingerprint = data_fingerprint(ds);
    return 0;
}

int data_assign_folds(FsDataset *ds, uint32_t k, uint64_t seed, FsErr *err)
{
    return data_assign_repeats(ds, k, 1, seed, err);
}

/* Protein p's examples after the n already listed: its scored residues,
 * or (chains) the first residue of each of its segments that holds one. */
static uint32_t emit_protein(const FsDataset *ds, uint32_t p, uint32_t n, uint32_t *out, int chains)
{
    for (uint32_t s = ds->prot_seg[p]; s < ds->prot_seg[p + 1]; s++) {
        const uint32_t a = ds->seg_off[s], z = ds->seg_off[s + 1];
        for (uint32_t i = a; i < z; i++)
            if (FS_SS_SCORED(ds->ss[i])) {
                if (out) out[n] = chains ? a : i;
                n++;
                if (chains) break;
            }
    }
    return n;
}

int data_in_use(const FsDataset *ds, uint32_t p)
{
    /* By the fold, not the set: a prepared file from before held-out test
     * proteins has them in folds, and they are trained on there. */
    if (ds->n_folds > 0) return data_protein_fold(ds, 0, p) != FS_FOLD_HELD_OUT;
    return ds->prot_set[p] == FS_SET_TRAIN || ds->prot_set[p] == FS_SET_VALID;
}

static uint32_t examples_of(const FsDataset *ds, int fold, int validation, uint32_t *out, int chains)
{
    uint32_t n = 0;
    if (fold == FS_FOLD_ALL) {
        if (validation) return 0;
        for (uint32_t p = 0; p < ds->n_prot; p++)
            if (data_in_use(ds, p)) n = emit_protein(ds, p, n, out, chains);
        return n;
    }
    if (fold == FS_FOLD_PREDEFINED) {
        uint8_t want = validation ? FS_SET_VALID : FS_SET_TRAIN;
        for (uint32_t p = 0; p < ds->n_prot; p++)
            if (ds->prot_set[p] == want) n = emit_protein(ds, p, n, out, chains);
        return n;
    }
    if (fold < 0 || (uint32_t)fold >= ds->n_folds) return 0;
    const uint32_t k = ds->fold_k ? ds->fold_k : ds->n_folds, rep = (uint32_t)fold / k, f = (uint32_t)fold % k;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const uint32_t pf = data_protein_fold(ds, rep, p);
        if (pf != FS_FOLD_HELD_OUT && (pf == f) == (validation != 0)) n = emit_protein(ds, p, n, out, chains);
    }
    return n;
}

uint32_t data_examples(const FsDataset *ds, int fold, int validation, uint32_t *out)
{
    return examples_of(ds, fold, validation, out, 0);
}

uint32_t data_chain_examples(const FsDataset *ds, int fold, int validation, uint32_t *out)
{
    return examples_of(ds, fold, validation, out, 1);
}

uint32_t data_longest_chain(const FsDataset *ds)
{
    uint32_t most = 0;
    for (uint32_t s = 0; s < ds->n_seg; s++)
        if (ds->seg_off[s + 1] - ds->seg_off[s] > most) most = ds->seg_off[s + 1] - ds->seg_off[s];
    return most;
}

double data_chain_pair_mean(const FsDataset *ds)
{
    double sq = 0, n = 0;
    for (uint32_t s = 0; s < ds->n_seg; s++) {
        const double l = ds->seg_off[s + 1] - ds->seg_off[s];
        sq += l * l;
        n += l;
    }
    return n > 0 ? sq / n : 0;
}

FsFolds data_folds_of(int predefined, int k)
{
    FsFolds f = {predefined ? 1 : k, predefined != 0};
    return f;
}

void data_folds_text(int folds, int repeats, char *out, size_t n)
{
    if (repeats > 1 && folds % repeats == 0)
        snprintf(out, n, "%d folds x %d repeats", folds / repeats, repeats);
    else
        snprintf(out, n, "%d fold%s", folds, folds == 1 ? "" : "s");
}

int data_fold_id(const FsFolds *f, int slot)
{
    FS_ASSERT(slot >= 0 && slot < f->n);
    return f->predefined ? FS_FOLD_PREDEFINED : slot;
}

int data_fold_slot(const FsFolds *f, int fold, FsErr *err)
{
    if (f->predefined) {
        if (fold == FS_FOLD_PREDEFINED) return 0;
        fs_err_set(err, "expected fold %d (the sweep's predefined split), not fold %d", FS_FOLD_PREDEFINED, fold);
        return -1;
    }
    if (fold >= 0 && fold < f->n) return fold;
    fs_err_set(err, "expected a fold of the sweep's %d (0..%d), not fold %d", f->n, f->n - 1, fold);
    return -1;
}

uint32_t *data_fold_examples(const FsDataset *ds, int fold, int chains, uint32_t *n_train, uint32_t *n_valid)
{
    *n_train = examples_of(ds, fold, 0, NULL, chains);
    *n_valid = examples_of(ds, fold, 1, NULL, chains);
    uint32_t *idx = fs_malloc(sizeof(uint32_t) * ((size_t)*n_train + *n_valid + 1));
    examples_of(ds, fold, 0, idx, chains);
    examples_of(ds, fold, 1, idx + *n_train, chains);
    return idx;
}

uint32_t data_set_examples(const FsDataset *ds, FsSet set, uint32_t *out)
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++)
        if (ds->prot_set[p] == (uint8_t)set) n = emit_protein(ds, p, n, out, 0);
    return n;
}
