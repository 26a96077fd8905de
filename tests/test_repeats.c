/*
 * Repeated k-fold (data.repeats; data_assign_repeats, fold id r * k + f):
 *
 * 1. One repeat is the plain split, bytes and fingerprint alike (so trial
 *    ids and run folders of sweeps without repeats are unchanged).
 * 2. Three repeats of 4 folds: repeat 0 is the plain split, the others
 *    differ from it; each repeat is a partition of the proteins, balanced
 *    by residues as the plain split is (loads within one protein's length);
 *    fold id r * k + f validates on repeat r's fold f and trains on the
 *    rest; k x r above 255 is refused.
 * 3. The prepared format carries the repeats (version 2; one repeat still
 *    writes version 1), back bit for bit; a header whose repeats do not
 *    multiply to its fold count is refused as corrupt.
 * 4. The sweep: data.repeats in the canonical sweep only above 1, refused
 *    out of range or with a prepared file, naming the key.
 * 5. A run with repeats: 2 through the binary (the "done when"):
 *    every complete trial in `leaderboard --format json` has 6 folds,
 *    repeats 2, q3_ci95, p_vs_best and tied_with_best; the best is tied
 *    with itself and its interval holds its mean; 1 and 2 threads give the
 *    same leaderboard, statistics included.
 */
#include "data/data.h"
#include "json/json.h"
#include "sweep/sweep.h"
#include "synth/synth.h"
#include "test_proc.h"
#include "test_sweep_expect.h"

static uint32_t plen(const FsDataset *ds, uint32_t p)
{
    return ds->seg_off[ds->prot_seg[p + 1]] - ds->seg_off[ds->prot_seg[p]];
}

static void assignment(void)
{
    FsDataset a, b;
    FsErr err = {0};
    CHECK_MSG(synth_generate(&a, 50, 7, &err) == 0 && synth_generate(&b, 50, 7, &err) == 0, "%s", err.msg);
    CHECK(data_assign_folds(&a, 4, 9, &err) == 0 && data_assign_repeats(&b, 4, 1, 9, &err) == 0);
    CHECK(!memcmp(a.prot_fold, b.prot_fold, a.n_prot) && a.fingerprint == b.fingerprint && b.n_folds == 4);
    CHECK(data_assign_repeats(&b, 4, 3, 9, &err) == 0);
    CHECK(b.n_folds == 12 && b.fold_k == 4 && b.n_repeats == 3 && b.fingerprint != a.fingerprint);
    CHECK(!memcmp(a.prot_fold, b.prot_fold, a.n_prot)); /* repeat 0 is the plain split */
    for (uint32_t r = 1; r < 3; r++) {
        int differ = 0;
        for (uint32_t p = 0; p < b.n_prot; p++) differ += data_protein_fold(&b, r, p) != data_protein_fold(&b, 0, p);
        CHECK_MSG(differ > 10, "repeat %u moves only %d of 50 proteins", r, differ);
        uint64_t load[4] = {0};
        uint32_t longest = 0;
        for (uint32_t p = 0; p < b.n_prot; p++) {
            CHECK(data_protein_fold(&b, r, p) < 4);
            load[data_protein_fold(&b, r, p)] += plen(&b, p);
            if (plen(&b, p) > longest) longest = plen(&b, p);
        }
        uint64_t lo = load[0], hi = load[0];
        for (int f = 1; f < 4; f++) lo = load[f] < lo ? load[f] : lo, hi = load[f] > hi ? load[f] : hi;
        CHECK_MSG(hi - lo <= longest, "repeat %u: fold loads %llu..%llu", r, (unsigned long long)lo,
                  (unsigned long long)hi);
        for (uint32_t f = 0; f < 4; f++) {
            const int id = (int)(r * 4 + f);
            uint32_t nv = data_examples(&b, id, 1, NULL), nt = data_examples(&b, id, 0, NULL), want = 0;
            for (uint32_t p = 0; p < b.n_prot; p++)
                if (data_protein_fold(&b, r, p) == f)
                    for (uint32_t i = b.seg_off[b.prot_seg[p]]; i < b.seg_off[b.prot_seg[p + 1]]; i++)
                        want += FS_SS_SCORED(b.ss[i]) != 0;
            CHECK(nv == want && nv + nt == data_examples(&b, FS_FOLD_ALL, 0, NULL));
        }
    }
    CHECK(data_examples(&b, 12, 1, NULL) == 0);
    CHECK(data_assign_repeats(&b, 4, 64, 9, &err) == -1);
    CHECK_CONTAINS(err.msg, "at most 255");

    /* The prepared format. */
    uint8_t *bytes = NULL, *one = NULL;
    uint64_t n = 0, n1 = 0;
    CHECK(data_serialize(&b, &bytes, &n, &err) == 0 && data_serialize(&a, &one, &n1, &err) == 0);
    CHECK(bytes[8] == 2 && one[8] == 1);
    FsDataset c;
    CHECK_MSG(data_deserialize(&c, bytes, n, "mem", &err) == 0, "%s", err.msg);
    CHECK(c.n_repeats == 3 && c.fold_k == 4 && c.n_folds == 12 && c.fingerprint == b.fingerprint &&
          !memcmp(c.prot_fold, b.prot_fold, (size_t)b.n_prot * 3));
    data_free(&c);
    bytes[280] = 5; /* 5 repeats of 4 folds for 12 fold ids; the checksum mended */
    const uint32_t crc = fs_crc32(bytes, (size_t)(n - 4), 0);
    for (int i = 0; i < 4; i++) bytes[n - 4 + (uint64_t)i] = (uint8_t)(crc >> (8 * i));
    memset(&err, 0, sizeof err);
    CHECK(data_deserialize(&c, bytes, n, "mem", &err) == -1);
    CHECK_CONTAINS(err.msg, "5 repeats of 4 folds for 12 fold ids");
    free(bytes);
    free(one);
    data_free(&a);
    data_free(&b);
}

static const char *SWEEP = "data:\n  synth: {proteins: 40, seed: 2}\n  window: 9\n  folds: 3\n  repeats: %s\n"
                           "model:\n  depth: 1\n  filters: [6, 12]\n  kernel: 3\n  dense: 8\n"
                           "training:\n  epochs: 2\n  batch_size: 16\n";

static void sweeps(void)
{
    char text[600], why[1000];
    FsSweep sw;
    snprintf(text, sizeof text, SWEEP, "1");
    CHECK_MSG(sweep_text(&sw, text, why, sizeof why) == 0, "%s", why);
    CHECK(strstr(sw.canonical, "repeats") == NULL && sweep_fold_count(&sw) == 3);
    sweep_free(&sw);
    snprintf(text, sizeof text, SWEEP, "2");
    CHECK_MSG(sweep_text(&sw, text, why, sizeof why) == 0, "%s", why);
    CHECK_CONTAINS(sw.canonical, "  repeats: 2\n");
    CHECK(sweep_fold_count(&sw) == 6);
    sweep_free(&sw);
    snprintf(text, sizeof text, SWEEP, "90");
    CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "5:");
    CHECK_CONTAINS(why, "data.repeats: 90 repeats of 3 folds make 270 folds; at most 255");
    sweep_free(&sw);
    /* run.alpha: in the canonical sweep only away from its default. */
    char with_alpha[700];
    snprintf(text, sizeof text, SWEEP, "1");
    snprintf(with_alpha, sizeof with_alpha, "%srun:\n  alpha: 0.01\n", text);
    CHECK_MSG(sweep_text(&sw, with_alpha, why, sizeof why) == 0, "%s", why);
    CHECK_CONTAINS(sw.canonical, "  alpha: 0.01\n");
    CHECK(sw.alpha == (double)0.01f);
    sweep_free(&sw);
    /* run.objectives: in the canonical sweep, each name once. */
    snprintf(with_alpha, sizeof with_alpha, "%srun:\n  objectives: [q3, params]\n", text);
    CHECK_MSG(sweep_text(&sw, with_alpha, why, sizeof why) == 0, "%s", why);
    CHECK(sw.n_objectives == 2 && sw.objectives[1] == FS_OBJ_PARAMS);
    CHECK_CONTAINS(sw.canonical, "  objectives: [q3, params]\n");
    sweep_free(&sw);
    snprintf(with_alpha, sizeof with_alpha, "%srun:\n  objectives: [q3, q3]\n", text);
    CHECK(sweep_text(&sw, with_alpha, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "(each once)");
    sweep_free(&sw);
    snprintf(with_alpha, sizeof with_alpha, "%srun:\n  objectives: [q3, size]\n", text);
    CHECK(sweep_text(&sw, with_alpha, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "run.objectives: expected a list of two or more of q3, loss, params, train_seconds");
    sweep_free(&sw);
    snprintf(with_alpha, sizeof with_alpha, "%srun:\n  alpha: 0.7\n", text);
    CHECK(sweep_text(&sw, with_alpha, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "run.alpha: expected a level above 0 and at most 0.5");
    sweep_free(&sw);
    snprintf(text, sizeof text, SWEEP, "two");
    CHECK(sweep_text(&sw, text, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "data.repeats: expected an integer from 1");
    sweep_free(&sw);
}

/* The leaderboard's JSON without the timing fields, for comparing runs. */
static char *board(const char *dir)
{
    CHECK(tp_run("leaderboard '%s' --format json", dir) == 0);
    char *s = strdup(out_text);
    for (char *p = s; (p = strstr(p, ",\"seconds\":")) != NULL;) {
        char *e = p + 11;
        while (*e && *e != ',' && *e != '}') e++;
        memmove(p, e, strlen(e) + 1);
    }
    return s;
}

static void run(void)
{
    char tmp[256], path[400], one[400], two[400], text[600];
    tp_tmpdir(tmp, sizeof tmp, "repeats");
    snprintf(path, sizeof path, "%s/s.yaml", tmp);
    snprintf(text, sizeof text, SWEEP, "2");
    tp_write_text(path, text);
    snprintf(one, sizeof one, "%s/t1", tmp);
    snprintf(two, sizeof two, "%s/t2", tmp);
    CHECK(tp_run("run '%s' -o '%s' --threads 1 --quiet", path, one) == 0);
    CHECK(tp_run("run '%s' -o '%s' --threads 2", path, two) == 0);
    /* The folds as the sweep gives them (each said "6 folds"). */
    CHECK_CONTAINS(out_text, "2 trials x 3 folds x 2 repeats, 12 folds to train");
    CHECK(tp_run("status '%s'", two) == 0);
    CHECK_CONTAINS(out_text, "sweep        2 trials x 3 folds x 2 repeats, metric q3");
    CHECK(tp_run("plan '%s'", path) == 0);
    CHECK_CONTAINS(out_text, " residues, 3 folds x 2 repeats (fingerprint ");
    char *b1 = board(one), *b2 = board(two);
    CHECK_MSG(!strcmp(b1, b2), "1 and 2 threads: leaderboards differ:\n%s\n%s", b1, b2);
    FsJsonDoc d;
    char why[200];
    CHECK_MSG(json_parse(&d, b1, strlen(b1), why, sizeof why) == 0, "%s", why);
    CHECK(d.root->n == 2);
    for (int i = 0; i < d.root->n; i++) {
        const FsJson *row = json_at(d.root, i), *ci = json_get(row, "q3_ci95"), *tied = json_get(row, "tied_with_best");
        long long reps = 0;
        double mean = NAN, lo = NAN, hi = NAN, p = NAN;
        CHECK(json_i64(json_get(row, "repeats"), &reps) == 0 && reps == 2);
        CHECK(json_get(row, "folds")->n == 6);
        CHECK(json_f64(json_get(json_get(row, "metric"), "mean"), &mean) == 0);
        CHECK(ci && ci->type == FS_JSON_ARRAY && json_f64(json_at(ci, 0), &lo) == 0 && json_f64(json_at(ci, 1), &hi) == 0);
        CHECK(json_f64(json_get(row, "p_vs_best"), &p) == 0 && p >= 0.0 && p <= 1.0);
        CHECK(tied && (tied->type == FS_JSON_TRUE || tied->type == FS_JSON_FALSE));
        CHECK_MSG(lo < mean && mean < hi, "interval [%g, %g] around %g", lo, hi, mean);
        if (i == 0) CHECK(p == 1.0 && tied->type == FS_JSON_TRUE);
    }
    json_free(&d);
    free(b1);
    free(b2);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
}

int main(void)
{
    assignment();
    sweeps();
    run();
    return test_finish();
}
