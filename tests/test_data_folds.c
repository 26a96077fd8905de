/*
 * test_data_folds.c: folds by protein (complete, disjoint, balanced,
 * deterministic), the example lists, and the memory budget of a loaded
 * dataset. Runs on a generated record file, and on UCI train if present.
 */
#include <math.h>

#include "test_data_util.h"

/* n proteins of lengths 20..419, random residues and labels, a few chain
 * breaks not expressible in records (so none here). */
static const char *synth_records(int n, uint64_t seed)
{
    size_t cap = (size_t)n * 900 + 64, len = 0;
    char *t = malloc(cap);
    for (int p = 0; p < n; p++) {
        uint32_t l = 20 + (uint32_t)(fs_splitmix64(&seed) % 400);
        len += (size_t)sprintf(t + len, ">prot%d\n", p);
        for (uint32_t i = 0; i < l; i++) t[len++] = FS_AA_LETTERS[fs_splitmix64(&seed) % 20];
        t[len++] = '\n';
        for (uint32_t i = 0; i < l; i++) t[len++] = "HEC"[fs_splitmix64(&seed) % 3];
        t[len++] = '\n';
        t[len++] = '\n';
    }
    const char *path = td_write_bytes("synth.rec", t, len);
    free(t);
    return path;
}

static uint32_t prot_len(const FsDataset *ds, uint32_t p)
{
    return ds->seg_off[ds->prot_seg[p + 1]] - ds->seg_off[ds->prot_seg[p]];
}

static void check_folds(FsDataset *ds, uint32_t k)
{
    FsErr err = {0};
    CHECK(data_assign_folds(ds, k, 42, &err) == 0);
    CHECK(ds->n_folds == k && ds->fold_seed == 42);
    uint64_t res[255] = {0}, total = 0;
    uint32_t longest = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        CHECK(ds->prot_fold[p] < k);
        res[ds->prot_fold[p]] += prot_len(ds, p);
        total += prot_len(ds, p);
        if (prot_len(ds, p) > longest) longest = prot_len(ds, p);
    }
    uint64_t lo = total, hi = 0;
    for (uint32_t f = 0; f < k; f++) {
        if (res[f] < lo) lo = res[f];
        if (res[f] > hi) hi = res[f];
    }
    CHECK_MSG(hi - lo <= longest, "fold sizes %llu..%llu, longest protein %u",
              (unsigned long long)lo, (unsigned long long)hi, longest);

    /* Per fold: validation = exactly the residues of that fold's proteins,
     * training = all other scored residues; both ascending. */
    uint32_t *tr = malloc(ds->n_res * sizeof *tr), *va = malloc(ds->n_res * sizeof *va);
    uint8_t *seen = calloc(ds->n_res, 1);
    uint32_t *owner = malloc(ds->n_res * sizeof *owner);
    for (uint32_t p = 0; p < ds->n_prot; p++)
        for (uint32_t i = ds->seg_off[ds->prot_seg[p]]; i < ds->seg_off[ds->prot_seg[p + 1]]; i++)
            owner[i] = p;
    int ok = 1;
    for (uint32_t f = 0; f < k; f++) {
        uint32_t nt = data_examples(ds, (int)f, 0, NULL), nv = data_examples(ds, (int)f, 1, NULL);
        CHECK(data_examples(ds, (int)f, 0, tr) == nt && data_examples(ds, (int)f, 1, va) == nv);
        CHECK(nt + nv == ds->stats.scored);
        for (uint32_t i = 0; i < nv; i++) {
            ok &= ds->prot_fold[owner[va[i]]] == f && FS_SS_SCORED(ds->ss[va[i]]);
            ok &= i == 0 || va[i] > va[i - 1];
            seen[va[i]]++;
        }
        for (uint32_t i = 0; i < nt; i++) {
            ok &= ds->prot_fold[owner[tr[i]]] != f;
            ok &= i == 0 || tr[i] > tr[i - 1];
        }
    }
    CHECK(ok);
    /* Every scored residue is validated exactly once over the folds. */
    int once = 1;
    for (uint32_t i = 0; i < ds->n_res; i++) once &= seen[i] == (FS_SS_SCORED(ds->ss[i]) ? 1 : 0);
    CHECK(once);
    CHECK(data_examples(ds, (int)k, 1, NULL) == 0);
    free(tr);
    free(va);
    free(seen);
    free(owner);
}

static void check_determinism(FsDataset *ds)
{
    FsErr err = {0};
    uint8_t *a = malloc(ds->n_prot), *b = malloc(ds->n_prot);
    CHECK(data_assign_folds(ds, 3, 1, &err) == 0);
    memcpy(a, ds->prot_fold, ds->n_prot);
    uint64_t fp1 = ds->fingerprint;
    CHECK(data_assign_folds(ds, 3, 2, &err) == 0);
    memcpy(b, ds->prot_fold, ds->n_prot);
    CHECK(memcmp(a, b, ds->n_prot) != 0);
    CHECK(ds->fingerprint != fp1);
    CHECK(data_assign_folds(ds, 3, 1, &err) == 0);
    CHECK(memcmp(a, ds->prot_fold, ds->n_prot) == 0);
    CHECK(ds->fingerprint == fp1 && ds->fingerprint == data_fingerprint(ds));
    free(a);
    free(b);
}

static void check_budget(const FsDataset *ds)
{
    /* 4 bytes per residue; everything else is per protein or segment. */
    uint64_t per_res = (uint64_t)ds->n_res * 4;
    uint64_t tables = 4ull * (ds->n_seg + 1) + 8ull * (ds->n_prot + 1) + 2ull * ds->n_prot +
                      ds->name_off[ds->n_prot];
    CHECK(data_bytes(ds) == per_res + tables);
    CHECK(tables < 64ull * ds->n_prot + 64);
    printf("dataset: %u residues, %llu bytes (%.2f per residue)\n", ds->n_res,
           (unsigned long long)data_bytes(ds), (double)data_bytes(ds) / ds->n_res);
}

/* SET=test proteins under k-fold: in no fold (FS_FOLD_HELD_OUT), so in
 * no fold's training or validation examples, nor a refit's, nor "in use"
 * for the leakage guard; through a prepared file too, whose reader refuses
 * a held-out protein that is not a test one. */
static void check_held_out(FsDataset *ds)
{
    FsErr err = {0};
    uint32_t held = 0;
    for (uint32_t p = 0; p < ds->n_prot; p += 7) ds->prot_set[p] = FS_SET_TEST, held++;
    CHECK(data_assign_folds(ds, 3, 11, &err) == 0);
    uint32_t *is_test = calloc(ds->n_res, sizeof *is_test), n_test_res = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const int test = ds->prot_set[p] == FS_SET_TEST;
        CHECK((data_protein_fold(ds, 0, p) == FS_FOLD_HELD_OUT) == test);
        CHECK(data_in_use(ds, p) == !test);
        for (uint32_t i = ds->seg_off[ds->prot_seg[p]]; test && i < ds->seg_off[ds->prot_seg[p + 1]]; i++)
            is_test[i] = 1, n_test_res++;
    }
    CHECK(held > 40 && n_test_res > 0);
    uint32_t total = 0;
    for (int f = FS_FOLD_ALL; f < 3; f++) {
        if (f == FS_FOLD_PREDEFINED) continue;
        uint32_t nt, nv;
        uint32_t *idx = data_fold_examples(ds, f, 0, &nt, &nv);
        int leaked = 0;
        for (uint32_t i = 0; i < nt + nv; i++) leaked += is_test[idx[i]] != 0;
        CHECK_MSG(leaked == 0, "fold %d: %d examples of SET=test proteins", f, leaked);
        if (f >= 0) total += nv;
        free(idx);
    }
    CHECK(total == data_examples(ds, FS_FOLD_ALL, 0, NULL)); /* every other scored residue validated once */
    const char *path = td_path("held.prep");
    CHECK(data_write_prepared(ds, path, &err) == 0);
    FsDataset back;
    CHECK_MSG(data_read_prepared(&back, path, &err) == 0, "%s", err.msg);
    CHECK(back.fingerprint == ds->fingerprint && data_protein_fold(&back, 0, 0) == FS_FOLD_HELD_OUT);
    data_free(&back);
    ds->prot_set[0] = FS_SET_TRAIN; /* held out but not a test protein: a forged file */
    CHECK(data_write_prepared(ds, path, &err) == 0);
    memset(&err, 0, sizeof err);
    CHECK(data_read_prepared(&back, path, &err) == -1);
    CHECK_CONTAINS(err.msg, "protein folds");
    free(is_test);
}

int main(void)
{
    FsDataset ds;
    FsErr err = {0};
    CHECK(td_load(&ds, FS_FMT_RECORDS, synth_records(300, 5), &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(ds.n_prot == 300);
    {
        /* The chain a residue sees, on average (plan's attention estimate):
         * sum of squared lengths over residues, written out here. */
        double sq = 0, n = 0;
        uint32_t longest = 0;
        for (uint32_t p = 0; p < ds.n_prot; p++) {
            const uint32_t l = prot_len(&ds, p);
            sq += (double)l * l, n += l, longest = l > longest ? l : longest;
        }
        const double mean = data_chain_pair_mean(&ds);
        CHECK_MSG(fabs(mean - sq / n) < 1e-9 * mean && mean > n / ds.n_prot && mean <= longest,
                  "pair mean %g, want %g (mean length %g, longest %u)", mean, sq / n, n / ds.n_prot, longest);
    }
    CHECK(data_assign_folds(&ds, 1, 1, &err) == -1);
    CHECK_CONTAINS(err.msg, "cannot make 1 folds");
    memset(&err, 0, sizeof err);
    CHECK(data_assign_folds(&ds, 301, 1, &err) == -1);
    CHECK_CONTAINS(err.msg, "from 300 proteins");
    check_folds(&ds, 3);
    check_folds(&ds, 10);
    check_folds(&ds, 2);
    check_determinism(&ds);
    check_budget(&ds);
    check_held_out(&ds);
    data_free(&ds);

    const char *uci = td_shared("uci/protein-secondary-structure.train");
    if (uci) {
        CHECK(td_load(&ds, FS_FMT_AUTO, uci, &err) == 0);
        check_folds(&ds, 3);
        check_folds(&ds, 5);
        check_determinism(&ds);
        check_budget(&ds);
        data_free(&ds);
    } else {
        printf("note: %s/uci absent, UCI fold checks skipped\n", FS_TEST_DATA_DIR);
    }
    return test_finish();
}
