/*
 * test_identity.c: the identity check of the leakage guard (docs/models.md,
 * "Leakage guard"). The alignment's identity for a fragment of a training
 * protein, a homologue with a few substitutions and an unrelated protein;
 * the k-mer prefilter against the full search; through `foldsweep
 * evaluate` on a model file written here: the refusal naming the protein,
 * its identity and the training protein, the counts, --max-identity,
 * --exclude-overlap, --allow-overlap, and an old model file without the
 * training sequences; the sweep keys; the journal record; and on real data
 * (UCI training against the UCI test set and TS115), the test proteins
 * contained in training records.
 */
#include <stdint.h>

#include "data/data.h"
#include "journal/journal.h"
#include "model/model.h"
#include "modelfile/modelfile.h"
#include "predict/predict.h"
#include "sweep/sweep.h"
#include "test_proc.h"
#include "test_made_models.h"

static char tmp[256];
static uint64_t rng = 88172645463325252ull;

static uint32_t next_rand(void) { return tmm_rand(&rng); }
static void random_protein(uint8_t *aa, uint32_t n) { tmm_protein(&rng, aa, n); }

/* A set of proteins from residue codes, named "train0", "train1", ... */
static void set_of(FsSeqSet *s, uint8_t *const *aa, const uint32_t *len, uint32_t n)
{
    memset(s, 0, sizeof *s);
    for (uint32_t p = 0; p < n; p++) {
        FsSeqSet one;
        char name[32];
        int nl = snprintf(name, sizeof name, "train%u", p) + 1;
        uint8_t off[8] = {0};
        memcpy(off + 4, &len[p], 4); /* little-endian hosts, as the model files */
        CHECK(data_seqset_from(&one, aa[p], len[p], off, 2, name, (uint64_t)nl, name, 0) == 0);
        data_seqset_append(s, &one);
        data_seqset_free(&one);
    }
}

static double identity_of(const uint8_t *q, uint32_t nq, const uint8_t *t, uint32_t nt)
{
    uint32_t known = 0;
    for (uint32_t i = 0; i < nq; i++) known += q[i] < FS_AA_STANDARD;
    return (double)data_align_identical(q, nq, t, nt, NULL) / known;
}

/* The training protein T (300), its fragment (80), a homologue (its
 * first 200 with 6 substitutions), and an unrelated protein (200). */
static uint8_t T[300], frag[80], homolog[200], unrelated[200];

static void make_queries(void)
{
    random_protein(T, 300);
    memcpy(frag, T + 50, 80);
    memcpy(homolog, T, 200);
    for (int s = 0; s < 6; s++) homolog[20 + 30 * s] = (uint8_t)((homolog[20 + 30 * s] + 7) % 20);
    random_protein(unrelated, 200);
}

static void test_align(void)
{
    CHECK_NEAR(identity_of(frag, 80, T, 300), 1.0, 0);
    CHECK_NEAR(identity_of(homolog, 200, T, 300), 194.0 / 200.0, 1e-12);
    double u = identity_of(unrelated, 200, T, 300);
    CHECK_MSG(u < 0.25, "unrelated: %g", u);
    /* X is neither identical nor counted: a fragment with an X is still contained. */
    uint8_t fx[80];
    memcpy(fx, frag, 80);
    fx[40] = FS_AA_UNKNOWN;
    CHECK_NEAR(identity_of(fx, 80, T, 300), 1.0, 0);
    /* A gap: the fragment with 3 residues deleted still aligns (77 identical of 77). */
    uint8_t gapped[77];
    memcpy(gapped, frag, 40), memcpy(gapped + 40, frag + 43, 37);
    CHECK_NEAR(identity_of(gapped, 77, T, 300), 1.0, 0);
    int32_t score;
    CHECK(data_align_identical(frag, 80, T, 300, &score) == 80 && score > 300);
}

/* 300 random training proteins with T at index 123; the prefilter finds
 * what the full search finds for the fragment, the homologue and 20
 * homologues at about 60% identity. */
static void test_prefilter(void)
{
    enum { N = 300 };
    uint8_t *aa[N];
    uint32_t len[N];
    for (int p = 0; p < N; p++) {
        len[p] = p == 123 ? 300 : 50 + next_rand() % 350;
        aa[p] = malloc(len[p]);
        if (p == 123) memcpy(aa[p], T, 300);
        else random_protein(aa[p], len[p]);
    }
    FsSeqSet s;
    set_of(&s, aa, len, N);
    FsIdentityIndex *ix = data_identity_index(&s);
    FsIdentityHit h = data_identity_best(ix, frag, 80);
    CHECK(h.protein == 123 && h.identity == 1.0 && h.identical == 80 && h.length == 80);
    h = data_identity_best(ix, homolog, 200);
    CHECK(h.protein == 123 && fabs(h.identity - 0.97) < 1e-12);
    h = data_identity_best(ix, unrelated, 200);
    FsIdentityHit f = data_identity_full(&s, unrelated, 200);
    CHECK_MSG(h.identity < 0.25 && f.identity < 0.25, "unrelated: %g (full %g)", h.identity, f.identity);
    for (int q = 0; q < 20; q++) {
        int p = (int)(next_rand() % N);
        uint8_t mut[400];
        memcpy(mut, aa[p], len[p]);
        for (uint32_t i = 0; i < len[p]; i++)
            if (next_rand() % 10 < 4) mut[i] = (uint8_t)(next_rand() % 20);
        h = data_identity_best(ix, mut, len[p]);
        f = data_identity_full(&s, mut, len[p]);
        CHECK_MSG(h.protein == f.protein && h.identity == f.identity && h.protein == p,
                  "homologue of %d: prefilter %d %g, full %d %g", p, h.protein, h.identity, f.protein, f.identity);
    }
    data_identity_free(ix);
    data_seqset_free(&s);
    for (int p = 0; p < N; p++) free(aa[p]);
}

/* ---------------------------------------------------------------------- */
/* Through the binary                                                      */

static float small_weight(long i) { return 0.01f * (float)(i % 7); }

/* A JSON number after "key": in text, or -1. */
static double json_after(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(text, k);
    return p ? atof(p + strlen(k)) : -1;
}

static void test_evaluate(void)
{
    enum { N = 40 };
    uint8_t *aa[N];
    uint32_t len[N];
    for (int p = 0; p < N; p++) {
        len[p] = p == 7 ? 300 : 100 + next_rand() % 200;
        aa[p] = malloc(len[p]);
        if (p == 7) memcpy(aa[p], T, 300);
        else random_protein(aa[p], len[p]);
    }
    FsSeqSet s;
    set_of(&s, aa, len, N);
    char model[320], old[320], data[320];
    snprintf(model, sizeof model, "%s/m.safetensors", tmp);
    snprintf(old, sizeof old, "%s/old.safetensors", tmp);
    snprintf(data, sizeof data, "%s/test.rec", tmp);
    tmm_write_model(model, 3, 4, small_weight, &s);
    tmm_write_model(old, 3, 4, small_weight, NULL);
    uint8_t other[150];
    random_protein(other, 150);
    FILE *f = fopen(data, "w");
    CHECK(f != NULL);
    if (!f) return;
    tmm_put_record(f, "frag", frag, 80);
    tmm_put_record(f, "homolog", homolog, 200);
    tmm_put_record(f, "unrelated", unrelated, 200);
    tmm_put_record(f, "other", other, 150);
    fclose(f);

    /* Refused, naming the proteins, their identity and the training protein. */
    CHECK(tp_run("evaluate '%s' '%s'", model, data) == 1);
    CHECK_CONTAINS(err_text, "2 test proteins are above 0.95 identity");
    CHECK_CONTAINS(err_text, "frag: 1.000 to train7");
    CHECK_CONTAINS(err_text, "homolog: 0.970 to train7");
    CHECK_CONTAINS(err_text, "--exclude-overlap");
    /* A higher threshold lets the homologue through, not the fragment. */
    CHECK(tp_run("evaluate '%s' '%s' --max-identity 0.99", model, data) == 1);
    CHECK_CONTAINS(err_text, "1 test protein is above 0.99 identity");
    CHECK(strstr(err_text, "homolog") == NULL);
    CHECK(tp_run("evaluate '%s' '%s' --max-identity 1.5", model, data) == 2);
    /* --exclude-overlap: left out and counted; the counts at each level. */
    CHECK(tp_run("evaluate '%s' '%s' --exclude-overlap --format json", model, data) == 0);
    CHECK_CONTAINS(err_text, "and 2 more above 0.95 identity");
    CHECK_CONTAINS(out_text, "\"identity\":{\"checked\":true,\"max\":0.95,\"above\":{\"0.25\":2,\"0.5\":2,\"0.95\":2}");
    CHECK(json_after(out_text, "left_out") == 2 && json_after(out_text, "proteins") == 2);
    CHECK_CONTAINS(out_text, "{\"test\":\"frag\",\"train\":\"train7\",\"identity\":1}");
    /* --allow-overlap: scored, the counts beside the scores. */
    CHECK(tp_run("evaluate '%s' '%s' --allow-overlap", model, data) == 0);
    CHECK_CONTAINS(out_text, "identity to training proteins: 2 above 0.25, 2 above 0.5, 2 above 0.95");
    CHECK(tp_run("evaluate '%s' '%s' --allow-overlap --format csv", model, data) == 0);
    CHECK_CONTAINS(out_text, ",identity_above_0.25,identity_above_0.5,identity_above_0.95,identity_left_out,"
                             "coverage_over\n");
    CHECK_CONTAINS(out_text, ",2,2,2,0,2\n"); /* the fragment and the homologue are covered too */
    /* An old model file: evaluated, but the check is said not to be made, and why. */
    CHECK(tp_run("evaluate '%s' '%s' --format json", old, data) == 0);
    CHECK_CONTAINS(err_text, "the identity check could not be made: model 1 of 1");
    CHECK_CONTAINS(err_text, "carries no training sequences");
    CHECK_CONTAINS(out_text, "\"identity\":{\"checked\":false,\"why\":\"model 1 of 1");
    /* A damaged offsets tensor is refused with the file named. */
    data_seqset_free(&s);
    for (int p = 0; p < N; p++) free(aa[p]);
}

/* The sweep keys of the test section. */
static void test_sweep_keys(void)
{
    const char *d = "data: {synth: {proteins: 30}, window: 13}\n";
    char text[512];
    FsSweep sw;
    FsErrList e = {0};
    snprintf(text, sizeof text, "%stest: {files: ts.data, max_identity: 0.3, exclude_overlap: true}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) == 0);
    CHECK(sw.test_max_identity == 0.3 && sw.test_exclude_overlap == 1);
    sweep_free(&sw);
    snprintf(text, sizeof text, "%stest: {files: ts.data}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) == 0);
    CHECK(sw.test_max_identity == FS_IDENTITY_MAX_DEFAULT && sw.test_exclude_overlap == 0);
    sweep_free(&sw);
    snprintf(text, sizeof text, "%stest: {files: ts.data, max_identity: 2, exclude_overlap: yes}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) != 0);
    CHECK(e.n == 2 && strstr(e.msg[0], "test.max_identity: expected a number from 0 to 1") &&
          strstr(e.msg[1], "test.exclude_overlap: expected true or false"));
    errlist_free(&e);
    sweep_free(&sw);
}

/* The evaluation record keeps the counts; a record without them reads as "not recorded". */
static void test_journal(void)
{
    FsJournal j;
    FsErr err = {0};
    char dir[320];
    snprintf(dir, sizeof dir, "%s/run", tmp);
    CHECK(fs_mkdir_p(dir, &err) == 0 && journal_open(&j, dir, &err) == 0);
    FsEvalRecord r;
    memset(&r, 0, sizeof r);
    snprintf(r.trial, sizeof r.trial, "0123456789abcdef");
    snprintf(r.models, sizeof r.models, "ensemble");
    snprintf(r.source, sizeof r.source, "evaluate");
    snprintf(r.data, sizeof r.data, "t.rec");
    r.q3 = 0.5;
    r.identity_checked = 1;
    r.identity_max = 0.9;
    r.identity_above[0] = 7, r.identity_above[1] = 5, r.identity_above[2] = 3, r.identity_left_out = 4;
    CHECK(journal_append_eval(&j, &r, &err) == 0);
    r.identity_checked = 0;
    CHECK(journal_append_eval(&j, &r, &err) == 0);
    journal_close(&j);
    CHECK(journal_open(&j, dir, &err) == 0 && j.n_evals == 2);
    if (j.n_evals == 2) {
        const FsEvalRecord *a = &j.evals[0], *b = &j.evals[1];
        CHECK(a->identity_checked == 1 && a->identity_max == 0.9 && a->identity_above[0] == 7 &&
              a->identity_above[1] == 5 && a->identity_above[2] == 3 && a->identity_left_out == 4);
        CHECK(b->identity_checked == 0);
    }
    journal_close(&j);
}

/* ---------------------------------------------------------------------- */
/* Real data                                                               */

static int load_shared(FsDataset *ds, const char *rel, FsFormat fmt)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", FS_TEST_DATA_DIR, rel);
    if (access(path, R_OK) != 0) return -1;
    const char *in[] = {path};
    FsLoadSpec spec = {fmt, in, 1, NULL, NULL, NULL};
    FsErr err = {0};
    int rc = data_load(ds, &spec, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

/* Test proteins above each level against UCI training, and the prefilter
 * against the full search on every one of them. */
static void count_against(const FsSeqSet *train, const FsDataset *test, const char *what, int full, uint32_t *above,
                          uint32_t *contained)
{
    FsIdentityIndex *ix = data_identity_index(train);
    memset(above, 0, sizeof(uint32_t) * FS_IDENTITY_LEVELS);
    *contained = 0;
    for (uint32_t i = 0; i < test->n_prot; i++) {
        uint32_t lo = test->seg_off[test->prot_seg[i]], hi = test->seg_off[test->prot_seg[i + 1]];
        FsIdentityHit h = data_identity_best(ix, test->aa + lo, hi - lo);
        FsIdentityHit f = full ? data_identity_full(train, test->aa + lo, hi - lo) : h;
        CHECK_MSG(h.identity == f.identity || h.identity < fs_identity_levels[0],
                  "%s %s: prefilter %.3f, full %.3f", what, data_protein_name(test, i), h.identity, f.identity);
        for (int l = 0; l < FS_IDENTITY_LEVELS; l++) above[l] += h.identity > fs_identity_levels[l];
        *contained += h.identity == 1.0;
        if (h.identity > fs_identity_levels[0])
            printf("  %s %s (%u residues): %.3f to %s\n", what, data_protein_name(test, i), hi - lo, h.identity,
                   train->names + train->name_off[h.protein]);
    }
    printf("%s against UCI training: %u above 0.25, %u above 0.5, %u above 0.95, %u contained\n", what, above[0],
           above[1], above[2], *contained);
    data_identity_free(ix);
}

/* FLIP's test set (364 proteins; SET=test), as a UCI-trained model's test
 * set: one protein is a near-copy of a UCI training record (measured:
 * 6pgz-B, 164 residues, 0.982). Three of FLIP's training chains are
 * verbatim substrings of UCI records (62-223 residues; bench/bench_identity
 * counts them on the whole set). */
static void test_flip(const FsSeqSet *seen)
{
    char path[600], cmd[1400], seq[700], lab[700], msk[700];
    snprintf(path, sizeof path, "%s/flip/splits.zip", FS_TEST_DATA_DIR);
    if (access(path, R_OK) != 0 || system("unzip -v >/dev/null 2>&1") != 0) {
        printf("note: FLIP or unzip absent, FLIP checks skipped\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "unzip -q -o '%s' -d '%s'", path, tmp);
    CHECK(system(cmd) == 0);
    snprintf(seq, sizeof seq, "%s/splits/sequences.fasta", tmp);
    snprintf(lab, sizeof lab, "%s/splits/sampled.fasta", tmp);
    snprintf(msk, sizeof msk, "%s/splits/mask.fasta", tmp);
    FsDataset ds;
    FsErr err = {0};
    FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, seq, lab, msk};
    int loaded = data_load(&ds, &spec, &err) == 0;
    CHECK_MSG(loaded, "%s", err.msg);
    if (!loaded) return;
    FsIdentityIndex *ix = data_identity_index(seen);
    uint32_t n = 0, above = 0;
    for (uint32_t i = 0; i < ds.n_prot; i++) {
        if (ds.prot_set[i] != FS_SET_TEST) continue;
        uint32_t lo = ds.seg_off[ds.prot_seg[i]], hi = ds.seg_off[ds.prot_seg[i + 1]];
        FsIdentityHit h = data_identity_best(ix, ds.aa + lo, hi - lo);
        n++;
        if (h.identity <= FS_IDENTITY_MAX_DEFAULT) continue;
        above++;
        printf("  FLIP test %s (%u residues): %.3f to %s\n", data_protein_name(&ds, i), hi - lo, h.identity,
               seen->names + seen->name_off[h.protein]);
        CHECK(!strcmp(data_protein_name(&ds, i), "6pgz-B") && fabs(h.identity - 0.982) < 5e-4);
    }
    CHECK(n == 364 && above == 1);
    data_identity_free(ix);
    data_free(&ds);
}

static void test_real(void)
{
    FsDataset train, test, ts;
    FsErr err = {0};
    if (load_shared(&train, "uci/protein-secondary-structure.train", FS_FMT_UCI) != 0) {
        printf("note: %s/uci absent, real-data checks skipped\n", FS_TEST_DATA_DIR);
        return;
    }
    CHECK(data_assign_folds(&train, 3, 1, &err) == 0);
    FsSeqSet seen;
    data_seqset_of(&seen, &train);
    CHECK(seen.n == 91);
    uint32_t above[FS_IDENTITY_LEVELS], contained;
    if (load_shared(&test, "uci/protein-secondary-structure.test", FS_FMT_UCI) == 0) {
        count_against(&seen, &test, "UCI test", 1, above, &contained);
        /* Measured: 4 above 0.25 (0.31-0.37), none above 0.5. */
        CHECK(above[0] == 4 && above[1] == 0 && above[2] == 0 && contained == 0);
        data_free(&test);
    }
    if (load_shared(&ts, "ts115/TS115_HHblits.csv", FS_FMT_CSV) == 0) {
        count_against(&seen, &ts, "TS115", 0, above, &contained);
        CHECK(above[1] == 0 && contained == 0);
        data_free(&ts);
    }
    test_flip(&seen);
    data_seqset_free(&seen);
    data_free(&train);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "identity");
    make_queries();
    test_align();
    test_prefilter();
    test_evaluate();
    test_sweep_keys();
    test_journal();
    test_real();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
