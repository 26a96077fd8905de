/*
 * test_coverage: the leakage guard's coverage rule (#43 item 4; docs/
 * models.md, "Leakage guard"). A chimera made of half of one training
 * protein and half of another sits at 0.5 identity, under --max-identity,
 * and was scored; its coverage (the share of its residues in near-identical
 * local alignments to training proteins) is about 1, and it is refused,
 * while an unrelated protein and one with a third of its residues from a
 * training protein pass. In-process: the coverage of those, of a chimera
 * whose second part's training protein is crowded out of the prefilter's
 * candidates by 8 near-copies of the first's, and of a training protein's
 * two halves swapped. Through `foldsweep evaluate` on a model file written
 * here: the refusal naming the chimera and both training proteins,
 * --max-coverage, --exclude-overlap, the JSON and CSV counts; the sweep key
 * test.max_coverage.
 */
#include <stdint.h>

#include "data/data.h"
#include "journal/journal.h"
#include "model/model.h"
#include "modelfile/modelfile.h"
#include "sweep/sweep.h"
#include "test_proc.h"
#include "test_made_models.h"

static char tmp[256];
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next_rand(void) { return tmm_rand(&rng); }
static void random_protein(uint8_t *aa, uint32_t n) { tmm_protein(&rng, aa, n); }

/* N training proteins "train0" ...: random, but for A (200 residues) at
 * index IA, B (200) at IB and, with copies, 8 near-copies of A (one
 * substitution each) at the indices after IA. */
enum { N = 300, IA = 10, IB = 200 };
static uint8_t *aa[N];
static uint32_t len[N];

static void make_training(FsSeqSet *s, int copies)
{
    memset(s, 0, sizeof *s);
    for (int p = 0; p < N; p++) {
        len[p] = p == IA || p == IB || (copies && p > IA && p <= IA + 8) ? 200 : 50 + next_rand() % 300;
        aa[p] = malloc(len[p]);
        if (copies && p > IA && p <= IA + 8) {
            memcpy(aa[p], aa[IA], 200);
            aa[p][20 * (p - IA)] = (uint8_t)((aa[p][20 * (p - IA)] + 5) % 20);
        } else {
            random_protein(aa[p], len[p]);
        }
        FsSeqSet one;
        char name[32];
        int nl = snprintf(name, sizeof name, "train%d", p) + 1;
        uint8_t off[8] = {0};
        memcpy(off + 4, &len[p], 4); /* little-endian hosts, as the model files */
        CHECK(data_seqset_from(&one, aa[p], len[p], off, 2, name, (uint64_t)nl, name, 0) == 0);
        data_seqset_append(s, &one);
        data_seqset_free(&one);
    }
}

static void free_training(FsSeqSet *s)
{
    data_seqset_free(s);
    for (int p = 0; p < N; p++) free(aa[p]);
}

/* The chimera: A's first 100 residues, then B's last 100. */
static void chimera_of(uint8_t *q)
{
    memcpy(q, aa[IA], 100);
    memcpy(q + 100, aa[IB] + 100, 100);
}

static void test_in_process(void)
{
    FsSeqSet s;
    make_training(&s, 0);
    FsIdentityIndex *ix = data_identity_index(&s);
    uint8_t q[200];
    chimera_of(q);
    FsIdentityHit h = data_identity_best(ix, q, 200);
    CHECK_MSG(h.identity <= 0.55 && h.identity >= 0.5, "chimera identity %g", h.identity);
    CHECK_MSG(h.coverage >= 0.99, "chimera coverage %g", h.coverage);
    CHECK((h.cover_by[0] == IA && h.cover_by[1] == IB) || (h.cover_by[0] == IB && h.cover_by[1] == IA));
    /* A training protein's halves swapped: one protein, two segments. */
    memcpy(q, aa[IB] + 100, 100), memcpy(q + 100, aa[IB], 100);
    h = data_identity_best(ix, q, 200);
    CHECK_MSG(h.coverage >= 0.99 && h.cover_by[0] == IB && h.cover_by[1] == -1, "swapped: %g", h.coverage);
    /* A third from a training protein: covered 0.33, under the default. */
    memcpy(q, aa[IA] + 50, 66), random_protein(q + 66, 134);
    h = data_identity_best(ix, q, 200);
    CHECK_MSG(h.coverage > 0.3 && h.coverage < 0.4, "a third: %g (identity %g, protein %d)", h.coverage, h.identity, h.protein);
    random_protein(q, 200);
    h = data_identity_best(ix, q, 200);
    CHECK_MSG(h.coverage == 0 && h.cover_by[0] == -1, "unrelated: %g", h.coverage);
    /* 29 residues of A (under FS_COVER_SEGMENT_MIN): a chance-sized match is no segment. */
    memcpy(q + 80, aa[IA] + 10, 29);
    h = data_identity_best(ix, q, 200);
    CHECK_MSG(h.coverage == 0, "29 residues: %g", h.coverage);
    data_identity_free(ix);
    free_training(&s);

    /* 8 near-copies of A fill the candidates: B is found on the uncovered run. */
    make_training(&s, 1);
    ix = data_identity_index(&s);
    uint8_t c[210];
    memcpy(c, aa[IA], 150), memcpy(c + 150, aa[IB] + 20, 60);
    h = data_identity_best(ix, c, 210);
    CHECK_MSG(h.coverage >= 0.99, "crowded chimera coverage %g (by %d, %d)", h.coverage, h.cover_by[0], h.cover_by[1]);
    CHECK(h.cover_by[0] >= IA && h.cover_by[0] <= IA + 8); /* A or a copy: the longest segment */
    data_identity_free(ix);
    free_training(&s);
}

/* ---------------------------------------------------------------------- */
/* Through the binary                                                      */

static float small_weight(long i) { return 0.01f * (float)(i % 7); }

static void test_evaluate(void)
{
    FsSeqSet s;
    make_training(&s, 0);
    char model[320], data[320];
    snprintf(model, sizeof model, "%s/m.safetensors", tmp);
    snprintf(data, sizeof data, "%s/test.rec", tmp);
    tmm_write_model(model, 3, 4, small_weight, &s);
    uint8_t chim[200], third[200], other[150];
    chimera_of(chim);
    memcpy(third, aa[IA] + 50, 66), random_protein(third + 66, 134);
    random_protein(other, 150);
    FILE *f = fopen(data, "w");
    CHECK(f != NULL);
    if (f) {
        tmm_put_record(f, "chimera", chim, 200);
        tmm_put_record(f, "third", third, 200);
        tmm_put_record(f, "other", other, 150);
        fclose(f);
    }
    /* Refused by coverage, naming the chimera and both training proteins. */
    CHECK(tp_run("evaluate '%s' '%s'", model, data) == 1);
    CHECK_CONTAINS(err_text, "1 test protein has more than 0.50 of its residues in near-identical local alignments "
                             "(identity above 0.95 over 30 or more residues)");
    CHECK_CONTAINS(err_text, "chimera: 1.000 covered, by train");
    CHECK(strstr(err_text, "and train10") || strstr(err_text, "and train200"));
    CHECK(strstr(err_text, "third") == NULL && strstr(err_text, "other") == NULL);
    /* --max-identity 0.99 raises the segments' identity to it: the chimera's
     * stretches are identical, still covered. */
    CHECK(tp_run("evaluate '%s' '%s' --max-identity 0.99", model, data) == 1);
    CHECK_CONTAINS(err_text, "(identity above 0.99 over 30 or more residues)");
    CHECK_CONTAINS(err_text, "chimera: 1.000 covered");
    /* --max-coverage 1: scored, its identity under 0.95; the counts beside the scores. */
    CHECK(tp_run("evaluate '%s' '%s' --max-coverage 1 --format json", model, data) == 0);
    CHECK_CONTAINS(out_text, "\"max_coverage\":1,\"coverage_over\":0,\"coverage_examples\":[]");
    CHECK(tp_run("evaluate '%s' '%s' --max-coverage 0.3 --allow-overlap", model, data) == 0);
    CHECK_CONTAINS(out_text, "coverage: 2 above 0.3 (threshold; the share of a protein's residues in near-identical stretches)");
    CHECK(tp_run("evaluate '%s' '%s' --max-coverage 2", model, data) == 2);
    /* --exclude-overlap: left out and counted. */
    CHECK(tp_run("evaluate '%s' '%s' --exclude-overlap --format json", model, data) == 0);
    CHECK_CONTAINS(err_text, "and 1 more above 0.95 identity to one or above 0.5 coverage");
    CHECK_CONTAINS(out_text, "\"left_out\":1,");
    CHECK_CONTAINS(out_text, "\"coverage_over\":1,\"coverage_examples\":[{\"test\":\"chimera\",\"train\":[\"train");
    CHECK(tp_run("evaluate '%s' '%s' --allow-overlap --format csv", model, data) == 0);
    CHECK_CONTAINS(out_text, ",identity_left_out,coverage_over\n");
    CHECK_CONTAINS(out_text, ",0,1\n");
    free_training(&s);
}

/* The evaluation record keeps the coverage threshold and count. */
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
    r.identity_checked = 1;
    r.identity_max = 0.95;
    r.coverage_max = 0.5;
    r.coverage_over = 3;
    CHECK(journal_append_eval(&j, &r, &err) == 0);
    journal_close(&j);
    CHECK(journal_open(&j, dir, &err) == 0 && j.n_evals == 1);
    if (j.n_evals == 1) CHECK(j.evals[0].coverage_max == 0.5 && j.evals[0].coverage_over == 3);
    journal_close(&j);
}

/* test.max_coverage: read, defaulted, and refused out of range. */
static void test_sweep_key(void)
{
    const char *d = "data: {synth: {proteins: 30}, window: 13}\n";
    char text[512];
    FsSweep sw;
    FsErrList e = {0};
    snprintf(text, sizeof text, "%stest: {files: ts.data, max_coverage: 0.8}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) == 0);
    CHECK(sw.test_max_coverage == 0.8);
    sweep_free(&sw);
    snprintf(text, sizeof text, "%stest: {files: ts.data}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) == 0);
    CHECK(sw.test_max_coverage == FS_COVERAGE_MAX_DEFAULT);
    sweep_free(&sw);
    snprintf(text, sizeof text, "%stest: {files: ts.data, max_coverage: -1}\n", d);
    CHECK(sweep_load_string(&sw, text, "s.yaml", &e) != 0);
    CHECK(e.n == 1 && strstr(e.msg[0], "s.yaml:2:") && strstr(e.msg[0], "test.max_coverage: expected a number from 0 to 1"));
    errlist_free(&e);
    sweep_free(&sw);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "coverage");
    test_in_process();
    test_evaluate();
    test_journal();
    test_sweep_key();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
