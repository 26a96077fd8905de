/*
 * fuzz_data.h: what the data harnesses do with a dataset a reader accepted.
 * A run goes on from an accepted dataset to folds, example lists, the
 * prepared file and the stats report, so a dataset that breaks one of them
 * (or an invariant they rely on) is a reader bug even when loading
 * "succeeded".
 */
#ifndef FS_FUZZ_DATA_H
#define FS_FUZZ_DATA_H

#include "data/data.h"
#include "fuzz_util.h"

/* Example lists: in range, ascending, scored residues only. */
static inline void fuzz_check_examples(const FsDataset *ds, uint32_t *ex, uint32_t n)
{
    FUZZ_REQUIRE(n <= ds->stats.scored);
    for (uint32_t i = 0; i < n; i++) {
        FUZZ_REQUIRE(ex[i] < ds->n_res && FS_SS_SCORED(ds->ss[ex[i]]));
        FUZZ_REQUIRE(i == 0 || ex[i] > ex[i - 1]);
    }
}

static inline void fuzz_check_tables(const FsDataset *ds)
{
    /* No proteins only from a prepared file (the readers refuse that). */
    FUZZ_REQUIRE(ds->n_seg >= ds->n_prot && (ds->n_prot > 0 || ds->n_res == 0));
    FUZZ_REQUIRE(ds->seg_off[0] == 0 && ds->seg_off[ds->n_seg] == ds->n_res);
    FUZZ_REQUIRE(ds->prot_seg[0] == 0 && ds->prot_seg[ds->n_prot] == ds->n_seg);
    FUZZ_REQUIRE(ds->stats.residues == ds->n_res && ds->stats.proteins == ds->n_prot);
    FUZZ_REQUIRE(ds->stats.scored <= ds->stats.residues);
    FUZZ_REQUIRE(ds->stats.label_counts[0] + ds->stats.label_counts[1] + ds->stats.label_counts[2] ==
                 ds->stats.scored);
    for (uint32_t s = 0; s < ds->n_seg; s++) {
        FUZZ_REQUIRE(ds->seg_off[s] < ds->seg_off[s + 1]);
        for (uint32_t i = ds->seg_off[s]; i < ds->seg_off[s + 1]; i++) {
            uint32_t l = i - ds->seg_off[s], r = ds->seg_off[s + 1] - 1 - i;
            FUZZ_REQUIRE(ds->left[i] == (l < 255 ? l : 255) && ds->right[i] == (r < 255 ? r : 255));
            FUZZ_REQUIRE(ds->aa[i] <= FS_AA_UNKNOWN && FS_SS_CLASS(ds->ss[i]) < FS_CLASSES);
        }
    }
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        FUZZ_REQUIRE(ds->prot_seg[p] < ds->prot_seg[p + 1]);
        FUZZ_REQUIRE(strlen(data_protein_name(ds, p)) < ds->name_off[p + 1] - ds->name_off[p]);
        (void)data_protein_hash(ds, p);
    }
}

/* The prepared file of ds reads back as the same dataset. */
static inline void fuzz_check_roundtrip(const FsDataset *ds)
{
    uint8_t *b;
    uint64_t n;
    FsErr err = {0};
    FUZZ_REQUIRE(data_serialize(ds, &b, &n, &err) == 0);
    FsDataset back;
    int rc = data_deserialize(&back, b, n, "roundtrip", &err);
    if (rc) fprintf(stderr, "prepared round trip refused: %s\n", err.msg);
    FUZZ_REQUIRE(rc == 0);
    FUZZ_REQUIRE(back.fingerprint == ds->fingerprint && back.n_res == ds->n_res &&
                 back.n_seg == ds->n_seg && back.n_prot == ds->n_prot && back.n_folds == ds->n_folds);
    FUZZ_REQUIRE(memcmp(back.aa, ds->aa, ds->n_res) == 0 && memcmp(back.ss, ds->ss, ds->n_res) == 0);
    data_free(&back);
    free(b);
}

/* Everything a run does with an accepted dataset before training. */
static inline void fuzz_use_dataset(FsDataset *ds)
{
    fuzz_check_tables(ds);
    FUZZ_REQUIRE(ds->fingerprint == data_fingerprint(ds));
    uint32_t *ex = malloc(((size_t)ds->n_res + 1) * sizeof *ex);
    FUZZ_REQUIRE(ex != NULL);
    for (int set = FS_SET_NONE; set <= FS_SET_TEST; set++)
        fuzz_check_examples(ds, ex, data_set_examples(ds, (FsSet)set, ex));
    for (int v = 0; v <= 1; v++)
        fuzz_check_examples(ds, ex, data_examples(ds, ds->n_folds ? 0 : FS_FOLD_PREDEFINED, v, ex));
    uint64_t *seen = NULL;
    uint32_t n_seen = data_seen_hashes(ds, &seen);
    for (uint32_t i = 1; i < n_seen; i++) FUZZ_REQUIRE(seen[i - 1] < seen[i]);
    free(seen);
    data_print_stats(ds, fuzz_null(), 0);
    data_print_stats(ds, fuzz_null(), 1);
    fuzz_check_roundtrip(ds);

    /* Folds as a k-fold sweep assigns them (k = 2..5 as the data allows:
     * SET=test proteins are held out of every fold). */
    uint32_t in_folds = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) in_folds += ds->prot_set[p] != FS_SET_TEST;
    if (in_folds >= 2) {
        FsErr err = {0};
        uint32_t k = in_folds < 5 ? in_folds : 5;
        FUZZ_REQUIRE(data_assign_folds(ds, k, ds->n_res, &err) == 0);
        for (uint32_t p = 0; p < ds->n_prot; p++)
            FUZZ_REQUIRE(ds->prot_set[p] == FS_SET_TEST ? ds->prot_fold[p] == FS_FOLD_HELD_OUT : ds->prot_fold[p] < k);
        uint32_t total = 0;
        for (uint32_t f = 0; f < k; f++) {
            uint32_t n = data_examples(ds, (int)f, 1, ex);
            fuzz_check_examples(ds, ex, n);
            total += n;
            fuzz_check_examples(ds, ex, data_examples(ds, (int)f, 0, ex));
        }
        FUZZ_REQUIRE(total <= ds->stats.scored);
        fuzz_check_examples(ds, ex, data_examples(ds, FS_FOLD_ALL, 0, ex));
        fuzz_check_roundtrip(ds);
    }
    free(ex);
}

/* One input file read with a declared layout (what `--format F` does),
 * then used as a run would. A refusal must say why. */
static inline void fuzz_load_input(FsFormat fmt, const uint8_t *p, size_t n)
{
    const char *path = fuzz_write_file("input.txt", p, n);
    FsErr err = {0};
    FsFormat seen = data_detect_file(path, &err);
    FUZZ_REQUIRE((int)seen >= 0 || err.set);
    const char *inputs[1] = {path};
    FsLoadSpec spec = {fmt, inputs, 1, NULL, NULL, NULL};
    FsDataset ds;
    memset(&err, 0, sizeof err);
    if (data_load(&ds, &spec, &err) == 0) {
        FUZZ_REQUIRE(ds.n_prot > 0);
        fuzz_use_dataset(&ds);
        data_free(&ds);
    } else {
        FUZZ_REQUIRE(err.set && err.msg[0]);
    }
}

#endif
