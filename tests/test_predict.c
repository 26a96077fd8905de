/*
 * test_predict: predict's plain FASTA reader (good and malformed input),
 * each output format against a hand-computed small example, and the
 * ensemble: the mean of its models' probabilities, their agreement, and
 * numbers that do not depend on the thread count or the batch size.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "predict/predict.h"
#include "train/train.h"
#include "test_proc.h"

static char tmp[256];

static void write_tmp(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", tmp, name);
    tp_write_text(path, text);
}

static void test_reader(void)
{
    char path[400];
    FsDataset ds;
    FsErr err = {0};
    write_tmp("ok.fasta", ">p1 first protein\nacdef\nGHIK*\n\n>p2\nMBX\nW\n", path, sizeof path);
    CHECK_MSG(data_load_sequences(&ds, path, &err) == 0, "%s", err.msg);
    CHECK(ds.n_prot == 2 && ds.n_res == 13);
    CHECK(!strcmp(data_protein_name(&ds, 0), "p1") && !strcmp(data_protein_name(&ds, 1), "p2"));
    CHECK(ds.aa[0] == 0 && ds.aa[8] == 8); /* a, K */
    CHECK(ds.aa[10] == FS_AA_UNKNOWN && ds.aa[11] == FS_AA_UNKNOWN); /* B, X */
    CHECK(ds.stats.unknown_letters['B' - 'A'] == 1 && ds.stats.unknown_letters['X' - 'A'] == 1);
    CHECK(!FS_SS_SCORED(ds.ss[0]));
    CHECK(ds.left[9] == 0 && ds.right[8] == 0 && ds.right[9] == 3); /* proteins are separate segments */
    data_free(&ds);

    /* The FASTA rule docs/models.md states and python/foldsweep_torch.py
     * follows (tests/torch_parity.py holds both to it): a UTF-8 BOM, CRLF,
     * blanks and tabs anywhere, lower case, a '*' ending a line dropped,
     * other letters as X. */
    write_tmp("rule.fasta", "\xef\xbb\xbf>p  x y\r\n m k \tv*\r\n\r\nbzU* \n>q\tz\nA\n", path, sizeof path);
    CHECK_MSG(data_load_sequences(&ds, path, &err) == 0, "%s", err.msg);
    CHECK(ds.n_prot == 2 && ds.n_res == 7);
    CHECK(!strcmp(data_protein_name(&ds, 0), "p") && !strcmp(data_protein_name(&ds, 1), "q"));
    {
        char got[8] = {0};
        for (int i = 0; i < 7; i++) got[i] = ds.aa[i] < FS_AA_STANDARD ? FS_AA_LETTERS[ds.aa[i]] : 'X';
        CHECK_MSG(!strcmp(got, "MKVXXXA"), "rule.fasta read as %s", got);
    }
    data_free(&ds);

    struct {
        const char *text, *want;
    } bad[] = {
        {">p\nM*K\n", "bad.fasta:2:2: expected an amino-acid letter, found '*'"},
        {">p\nMK**\n", "bad.fasta:2:3: expected an amino-acid letter, found '*'"},
        {">p\n*\n", "bad.fasta:1: sequence 'p' is empty"},
        {" >p\nMK\n", "bad.fasta:1:2: expected a '>' header line"},
        {"ACDE\n>p\nAC\n", "bad.fasta:1:1: expected a '>' header line"},
        {">p\nACD\nAC1E\n", "bad.fasta:3:3: expected an amino-acid letter, found '1'"},
        {">p\nAC-DE\n", "bad.fasta:2:3: expected an amino-acid letter, found '-' (aligned sequences"},
        {">a\n>b\nACD\n", "bad.fasta:1: sequence 'a' is empty"},
        {">a\nAC\n>b\n", "bad.fasta:3: sequence 'b' is empty"},
        {">\nACD\n", "bad.fasta:1:2: expected a sequence id after '>'"},
        {"\n\n", "bad.fasta"},
        {">p\nAC\xc3\xa9\n", "bad.fasta:2:3: expected an amino-acid letter, found byte 0xc3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FsErr e = {0};
        write_tmp("bad.fasta", bad[i].text, path, sizeof path);
        CHECK_MSG(data_load_sequences(&ds, path, &e) == -1, "case %zu accepted", i);
        CHECK_CONTAINS(e.msg, bad[i].want);
        data_free(&ds);
    }
}

static char *render(FsPredFormat fmt, const FsDataset *ds, long prot, const float *probs, const float *agree)
{
    char path[400];
    snprintf(path, sizeof path, "%s/out.txt", tmp);
    FILE *f = fopen(path, "w");
    predict_write(f, fmt, ds, prot, probs, agree, 1, FS_CLASSES);
    fclose(f);
    return tp_read_file(path, NULL);
}

/* Two proteins, ACD and KX, with probabilities chosen by hand. */
static void test_formats(void)
{
    char path[400];
    FsDataset ds;
    FsErr err = {0};
    write_tmp("two.fasta", ">one\nACD\n>two\nKB\n", path, sizeof path);
    CHECK(data_load_sequences(&ds, path, &err) == 0);
    const float probs[] = {0.7f, 0.2f, 0.1f,   0.1f, 0.6f, 0.3f, 0.25f, 0.25f, 0.5f,
                           0.34f, 0.33f, 0.33f, 0.05f, 0.05f, 0.9f};
    const float agree[] = {1.0f, 2.0f / 3.0f, 1.0f, 1.0f / 3.0f, 1.0f};
    CHECK(predict_state(probs, 3) == 'H' && predict_state(probs + 3, 3) == 'E' && predict_state(probs + 6, 3) == 'C');
    /* ties: the first class wins, as in training's argmax */
    const float tie[] = {0.4f, 0.4f, 0.2f};
    CHECK(predict_state(tie, 3) == 'H');

    char *s = render(FS_PRED_FASTA, &ds, -1, probs, agree);
    CHECK_MSG(s && !strcmp(s, ">one\nACD\nHEC\n>two\nKX\nHC\n"), "fasta:\n%s", s);
    free(s);

    /* NetSurfP-2.0's column order (id, seq, n, q3, p[q3_H], p[q3_E],
     * p[q3_C]) and its bare ids. */
    s = render(FS_PRED_CSV, &ds, -1, probs, agree);
    const char *csv = "id,seq,n,q3,p[q3_H],p[q3_E],p[q3_C],agree\n"
                      "one,A,1,H,0.700000,0.200000,0.100000,1.0000\n"
                      "one,C,2,E,0.100000,0.600000,0.300000,0.6667\n"
                      "one,D,3,C,0.250000,0.250000,0.500000,1.0000\n"
                      "two,K,1,H,0.340000,0.330000,0.330000,0.3333\n"
                      "two,X,2,C,0.050000,0.050000,0.900000,1.0000\n";
    CHECK_MSG(s && !strcmp(s, csv), "csv:\n%s", s);
    free(s);

    /* PSIPRED 4's files exactly: the header, a blank line, the rows; no id,
     * no foldsweep. Column order C, H, E. One protein a file. */
    s = render(FS_PRED_SS2, &ds, 0, probs, agree);
    const char *ss2 = "# PSIPRED VFORMAT (PSIPRED V4.0)\n\n"
                      "   1 A H   0.100  0.700  0.200\n"
                      "   2 C E   0.300  0.100  0.600\n"
                      "   3 D C   0.500  0.250  0.250\n";
    CHECK_MSG(s && !strcmp(s, ss2), "ss2:\n%s", s);
    free(s);
    s = render(FS_PRED_SS2, &ds, 1, probs, agree);
    CHECK_MSG(s && !strcmp(s, "# PSIPRED VFORMAT (PSIPRED V4.0)\n\n"
                              "   1 K H   0.330  0.340  0.330\n"
                              "   2 X C   0.900  0.050  0.050\n"), "ss2 (two):\n%s", s);
    free(s);

    /* Conf: floor(10 * (best - second)): 0.7-0.2 -> 5, 0.6-0.3 -> 3, 0.5-0.25 -> 2, 0.34-0.33 -> 0, 0.9-0.05 -> 8. */
    s = render(FS_PRED_HORIZ, &ds, 0, probs, agree);
    const char *horiz = "# PSIPRED HFORMAT (PSIPRED V4.0)\n"
                        "\nConf: 532\nPred: HEC\n  AA: ACD\n      \n\n";
    CHECK_MSG(s && !strcmp(s, horiz), "horiz:\n%s", s);
    free(s);
    s = render(FS_PRED_HORIZ, &ds, 1, probs, agree);
    CHECK_MSG(s && !strcmp(s, "# PSIPRED HFORMAT (PSIPRED V4.0)\n\nConf: 08\nPred: HC\n  AA: KX\n      \n\n"),
              "horiz (two):\n%s", s);
    free(s);
    data_free(&ds);

    /* horiz blocks of 60 with PSIPRED's ruler; an id with a comma is quoted in the CSV. */
    char seq[140] = ">a,\"b\"\n";
    for (int i = 0; i < 61; i++) seq[strlen(seq) + 1] = 0, seq[strlen(seq)] = 'A';
    strcat(seq, "\n");
    write_tmp("long.fasta", seq, path, sizeof path);
    CHECK(data_load_sequences(&ds, path, &err) == 0);
    float lp[61 * 3];
    for (int i = 0; i < 61; i++) lp[3 * i] = 0.05f, lp[3 * i + 1] = 0.05f, lp[3 * i + 2] = 0.9f;
    s = render(FS_PRED_HORIZ, &ds, 0, lp, NULL);
    char want[1000], c60[61], a60[61], p60[61];
    memset(c60, '8', 60), memset(a60, 'A', 60), memset(p60, 'C', 60);
    c60[60] = a60[60] = p60[60] = 0;
    snprintf(want, sizeof want,
             "# PSIPRED HFORMAT (PSIPRED V4.0)\n"
             "\nConf: %s\nPred: %s\n  AA: %s\n      %10d%10d%10d%10d%10d%10d\n\n"
             "\nConf: 8\nPred: C\n  AA: A\n      \n\n", c60, p60, a60, 10, 20, 30, 40, 50, 60);
    CHECK_MSG(s && !strcmp(s, want), "horiz (61):\n%s", s);
    free(s);
    s = render(FS_PRED_CSV, &ds, 0, lp, NULL);
    CHECK_MSG(s && strstr(s, "\n\"a,\"\"b\"\"\",A,1,C,0.050000,0.050000,0.900000,1.0000\n"), "csv quoting:\n%s", s);
    free(s);
    data_free(&ds);
}

/* Two models with random weights: the ensemble is their mean, and the
 * numbers do not move with threads or batch size. */
static void test_ensemble(void)
{
    char path[400];
    FsDataset ds;
    FsErr err = {0};
    /* 20,000 residues: several chunks of predict_run's work. */
    size_t len = 20000;
    char *text = malloc(len + 64);
    strcpy(text, ">long\n");
    uint64_t st = 7;
    for (size_t i = 0; i < len; i++) text[6 + i] = FS_AA_LETTERS[fs_splitmix64(&st) % 20];
    strcpy(text + 6 + len, "\n>short\nMKV\n");
    write_tmp("long.fasta", text, path, sizeof path);
    free(text);
    CHECK(data_load_sequences(&ds, path, &err) == 0);
    FsEnsemble e;
    memset(&e, 0, sizeof e);
    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 11;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 8, .width = 5, .act = FS_ACT_SWISH};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
    a.layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 12, .act = FS_ACT_RELU};
    a.n_layers = 3;
    e.n = 2;
    e.window = 11;
    for (int k = 0; k < 2; k++) {
        CHECK(model_compile(&e.m[k].net, &a, 256, &err) == 0);
        long nw = e.m[k].net.n_params + e.m[k].net.n_state;
        e.m[k].weights = calloc((size_t)nw, sizeof(float));
        FsRng rng;
        uint64_t words[2] = {42, (uint64_t)k};
        fs_rng_seed(&rng, words, 2);
        model_init(&e.m[k].net, e.m[k].weights, &rng);
    }
    uint32_t n = ds.n_res;
    float *p1 = malloc(sizeof(float) * 3 * n), *p2 = malloc(sizeof(float) * 3 * n);
    uint8_t *c1 = malloc(n), *c2 = malloc(n);
    uint32_t *idx = malloc(sizeof(uint32_t) * n);
    for (uint32_t i = 0; i < n; i++) idx[i] = i;
    train_predict(&e.m[0].net, e.m[0].weights, &ds, idx, n, 256, p1, c1);
    train_predict(&e.m[1].net, e.m[1].weights, &ds, idx, n, 256, p2, c2);
    float *pe = malloc(sizeof(float) * 3 * n), *ae = malloc(sizeof(float) * n);
    FsErr perr = {0};
    CHECK(predict_run(&e, &ds, 1, 256, pe, ae, &perr) == 0);
    int mean_ok = 1, agree_ok = 1, disagree = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) mean_ok &= pe[3 * i + c] == (0.0f + p1[3 * i + c] + p2[3 * i + c]) / 2.0f;
        char s = predict_state(pe + 3 * i, 3);
        int want = (int)("HEC"[c1[i]] == s) + (int)("HEC"[c2[i]] == s);
        agree_ok &= ae[i] == (float)want / 2.0f;
        disagree += c1[i] != c2[i];
    }
    CHECK(mean_ok);
    CHECK(agree_ok);
    CHECK_MSG(disagree > 0, "two random models never disagree: the agreement column is untested");
    /* Threads and batch size change nothing, bit for bit. */
    float *pt = malloc(sizeof(float) * 3 * n), *at = malloc(sizeof(float) * n);
    CHECK(predict_run(&e, &ds, 3, 256, pt, at, &perr) == 0);
    CHECK(memcmp(pt, pe, sizeof(float) * 3 * n) == 0 && memcmp(at, ae, sizeof(float) * n) == 0);
    CHECK(predict_run(&e, &ds, 2, 1, pt, at, &perr) == 0);
    CHECK(memcmp(pt, pe, sizeof(float) * 3 * n) == 0);
    CHECK(predict_run(&e, &ds, 2, 37, pt, at, &perr) == 0);
    CHECK(memcmp(pt, pe, sizeof(float) * 3 * n) == 0);
    /* Finite weights too large for a float's range (model files refuse only
     * NaN and infinite ones): the logits overflow, and the probabilities are
     * refused, naming the protein and residue, rather than written (#43). */
    for (long i = 0; i < e.m[1].net.n_params + e.m[1].net.n_state; i++) e.m[1].weights[i] = 1e30f;
    CHECK(predict_run(&e, &ds, 2, 256, pt, at, &perr) == -1);
    CHECK_CONTAINS(perr.msg, "protein long: residue 1: the models' probabilities are not finite");
    free(p1), free(p2), free(c1), free(c2), free(idx), free(pe), free(ae), free(pt), free(at);
    for (int k = 0; k < 2; k++) free(e.m[k].weights);
    data_free(&ds);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "predict");
    test_reader();
    test_formats();
    test_ensemble();
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
