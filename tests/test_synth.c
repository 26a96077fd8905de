/*
 * test_synth.c: the synthetic data set. Same seed, same bytes (and a
 * prefix of a larger set is the smaller set); another seed, other bytes;
 * sizes, segment lengths, label fractions, unknowns, masks and breaks in
 * the documented ranges; record and FASTA files load back to the same
 * residues and labels; `foldsweep synth` end to end with its exit codes.
 */
#include "synth/synth.h"
#include "test_data_util.h"
#include "test_proc.h"

static int same_content(const FsDataset *a, const FsDataset *b)
{
    return a->n_res == b->n_res && a->n_seg == b->n_seg && a->n_prot == b->n_prot &&
           !memcmp(a->aa, b->aa, a->n_res) && !memcmp(a->ss, b->ss, a->n_res) &&
           !memcmp(a->seg_off, b->seg_off, (a->n_seg + 1) * sizeof *a->seg_off) &&
           !memcmp(a->prot_seg, b->prot_seg, (a->n_prot + 1) * sizeof *a->prot_seg) &&
           !memcmp(a->names, b->names, a->name_off[a->n_prot]) &&
           a->fingerprint == b->fingerprint;
}

static void test_determinism(void)
{
    FsDataset a, b, c, small;
    FsErr err = {0};
    CHECK(synth_generate(&a, 300, 1, &err) == 0);
    CHECK(synth_generate(&b, 300, 1, &err) == 0);
    CHECK(synth_generate(&c, 300, 2, &err) == 0);
    CHECK(synth_generate(&small, 50, 1, &err) == 0);
    CHECK(same_content(&a, &b));
    CHECK(a.fingerprint != c.fingerprint);
    CHECK(a.n_res != c.n_res || memcmp(a.aa, c.aa, a.n_res) != 0);
    /* Each protein has its own stream: 50 proteins are the first 50 of 300. */
    uint32_t n50 = small.n_res;
    CHECK(a.seg_off[a.prot_seg[50]] == n50);
    CHECK(!memcmp(a.aa, small.aa, n50) && !memcmp(a.ss, small.ss, n50));
    /* Seed 1's residues and labels are pinned: integer draws only, so every
     * machine and build gives these bytes, and a change to the model shows. */
    uint64_t h = fs_fnv1a64(a.aa, a.n_res, FS_FNV_OFFSET);
    h = fs_fnv1a64(a.ss, a.n_res, h);
    printf("seed 1, 300 proteins: %u residues, %u segments, content hash %016llx\n", a.n_res,
           a.n_seg, (unsigned long long)h);
    CHECK(a.n_res == 51473 && a.n_seg == 327);
    CHECK(h == 0x782c4f8252abacc6ull);
    data_free(&a);
    data_free(&b);
    data_free(&c);
    data_free(&small);

    CHECK(synth_generate(&a, 0, 1, &err) == -1);
    CHECK_CONTAINS(err.msg, "protein count");
    data_free(&a);
}

/* Runs of one label inside a protein are whole segments (two segments of
 * one class are never adjacent), except where the protein's end cuts one. */
static void check_runs(const FsDataset *ds, uint32_t a, uint32_t z, int *bad_runs)
{
    static const uint32_t lo[3] = {6, 3, 2}, hi[3] = {20, 10, 12};
    for (uint32_t i = a; i < z;) {
        uint32_t j = i;
        int c = FS_SS_CLASS(ds->ss[i]);
        while (j < z && FS_SS_CLASS(ds->ss[j]) == c) j++;
        uint32_t n = j - i;
        if (n > hi[c] || (n < lo[c] && j != z)) (*bad_runs)++;
        i = j;
    }
}

static void test_shape(void)
{
    FsDataset ds;
    FsErr err = {0};
    const uint32_t N = 300;
    CHECK(synth_generate(&ds, N, 1, &err) == 0);
    const FsDataStats *st = &ds.stats;
    CHECK(ds.n_prot == N && st->proteins == N);
    int bad_len = 0, bad_seg = 0, bad_mask = 0, bad_runs = 0, bad_name = 0;
    uint32_t breaks = 0;
    for (uint32_t p = 0; p < N; p++) {
        uint32_t a = ds.seg_off[ds.prot_seg[p]], z = ds.seg_off[ds.prot_seg[p + 1]];
        uint32_t segs = ds.prot_seg[p + 1] - ds.prot_seg[p];
        bad_len += z - a < 50 || z - a > 400;
        bad_seg += segs < 1 || segs > 2;
        breaks += segs == 2;
        for (uint32_t i = a; i < z; i++)
            bad_mask += !FS_SS_SCORED(ds.ss[i]) && i - a >= 5 && z - 1 - i >= 5;
        check_runs(&ds, a, z, &bad_runs);
        char want[32];
        snprintf(want, sizeof want, "synth%04u", p + 1);
        bad_name += strcmp(data_protein_name(&ds, p), want) != 0;
    }
    CHECK(bad_len == 0 && bad_seg == 0 && bad_runs == 0 && bad_name == 0);
    CHECK_MSG(bad_mask == 0, "%d unscored residues away from the termini", bad_mask);
    CHECK_MSG(breaks >= 10 && breaks <= 60, "%u chain breaks (expected ~30)", breaks);
    double mean_len = (double)ds.n_res / N;
    CHECK_MSG(mean_len > 130 && mean_len < 210, "mean length %.1f (expected ~167)", mean_len);
    double unscored = (double)(st->residues - st->scored) / (double)st->residues;
    CHECK_MSG(unscored > 0.002 && unscored < 0.03, "unscored fraction %.4f", unscored);
    double unknown = (double)st->unknown / (double)st->residues;
    CHECK_MSG(unknown > 0.0005 && unknown < 0.01, "unknown fraction %.4f", unknown);
    CHECK(st->unknown_letters['X' - 'A'] == st->unknown);
    for (int c = 0; c < 3; c++) {
        double f = (double)st->label_counts[c] / (double)st->scored;
        printf("class %c: %.3f\n", "HEC"[c], f);
        CHECK_MSG(f >= 0.15 && f <= 0.60, "class %d fraction %.3f", c, f);
    }
    /* Propensities: each class's favoured residues are over-represented in it. */
    static const char *fav[3] = {"ALEKMQR", "VIYFWTC", "GPNDS"};
    for (int c = 0; c < 3; c++) {
        uint64_t in = 0, all = 0;
        for (uint32_t i = 0; i < ds.n_res; i++) {
            if (FS_SS_CLASS(ds.ss[i]) != c || ds.aa[i] >= FS_AA_STANDARD) continue;
            all++;
            in += strchr(fav[c], FS_AA_LETTERS[ds.aa[i]]) != NULL;
        }
        double f = (double)in / (double)all;
        CHECK_MSG(f > 0.45 && f < 0.8, "class %d favoured fraction %.3f", c, f);
    }
    data_free(&ds);
}

/* ds with segments joined (and masks cleared if unmask): what a layout
 * without breaks (and masks) can carry. */
static void flatten(const FsDataset *src, FsDataset *dst, int unmask)
{
    memset(dst, 0, sizeof *dst);
    dst->n_res = src->n_res;
    dst->n_seg = dst->n_prot = src->n_prot;
    dst->aa = malloc(src->n_res);
    dst->ss = malloc(src->n_res);
    memcpy(dst->aa, src->aa, src->n_res);
    for (uint32_t i = 0; i < src->n_res; i++)
        dst->ss[i] = unmask ? FS_SS_CLASS(src->ss[i]) : src->ss[i];
    dst->seg_off = malloc((src->n_prot + 1) * sizeof *dst->seg_off);
    dst->prot_seg = malloc((src->n_prot + 1) * sizeof *dst->prot_seg);
    for (uint32_t p = 0; p <= src->n_prot; p++) {
        dst->seg_off[p] = src->seg_off[src->prot_seg[p]];
        dst->prot_seg[p] = p;
    }
    dst->prot_set = calloc(src->n_prot, 1);
    dst->prot_fold = calloc(src->n_prot, 1);
    dst->name_off = malloc((src->n_prot + 1) * sizeof *dst->name_off);
    memcpy(dst->name_off, src->name_off, (src->n_prot + 1) * sizeof *dst->name_off);
    dst->names = malloc(src->name_off[src->n_prot]);
    memcpy(dst->names, src->names, src->name_off[src->n_prot]);
    data_finish(dst);
}

static void test_round_trip(void)
{
    FsDataset ds, back, flat;
    FsErr err = {0};
    CHECK(synth_generate(&ds, 120, 5, &err) == 0);
    CHECK(ds.n_seg > ds.n_prot && ds.stats.scored < ds.stats.residues);

    /* Records: breaks joined, masks dropped; residues and labels identical. */
    const char *rec = td_path("rt.rec");
    CHECK_MSG(synth_write(&ds, rec, &err) == 0, "%s", err.msg);
    for (int fmt = FS_FMT_AUTO; fmt <= FS_FMT_RECORDS; fmt += FS_FMT_RECORDS) {
        CHECK_MSG(td_load(&back, (FsFormat)fmt, rec, &err) == 0, "%s", err.msg);
        CHECK(back.n_res == ds.n_res && back.n_prot == ds.n_prot && back.n_seg == ds.n_prot);
        CHECK(!memcmp(back.aa, ds.aa, ds.n_res));
        int same = 1;
        for (uint32_t i = 0; i < ds.n_res; i++) same &= back.ss[i] == FS_SS_CLASS(ds.ss[i]);
        CHECK(same);
        CHECK(!memcmp(back.names, ds.names, ds.name_off[ds.n_prot]));
        CHECK(back.stats.unknown == ds.stats.unknown);
        flatten(&ds, &flat, 1);
        CHECK(back.fingerprint == flat.fingerprint);
        data_free(&flat);
        data_free(&back);
    }
    uint64_t unmasked, joined;
    synth_losses(&ds, FS_FMT_RECORDS, &unmasked, &joined);
    CHECK(unmasked == ds.stats.residues - ds.stats.scored && joined == ds.n_seg - ds.n_prot);

    /* FASTA set: masks kept, so only the breaks differ. */
    const char *s = td_path("rt.seq.fasta"), *l = td_path("rt.lab.fasta"),
               *m = td_path("rt.mask.fasta");
    CHECK_MSG(synth_write_fasta(&ds, s, l, m, &err) == 0, "%s", err.msg);
    FsLoadSpec spec = {.format = FS_FMT_FASTA, .sequences = s, .labels = l, .mask = m};
    CHECK_MSG(data_load(&back, &spec, &err) == 0, "%s", err.msg);
    CHECK(back.n_res == ds.n_res && !memcmp(back.aa, ds.aa, ds.n_res) &&
          !memcmp(back.ss, ds.ss, ds.n_res));
    CHECK(back.stats.scored == ds.stats.scored);
    flatten(&ds, &flat, 0);
    CHECK(back.fingerprint == flat.fingerprint);
    data_free(&flat);
    data_free(&back);
    synth_losses(&ds, FS_FMT_FASTA, &unmasked, &joined);
    CHECK(unmasked == 0 && joined == ds.n_seg - ds.n_prot);
    data_free(&ds);

    /* A set without breaks comes back bit-identical from a FASTA set. */
    uint64_t seed = 1;
    for (;; seed++) {
        CHECK(synth_generate(&ds, 4, seed, &err) == 0);
        if (ds.n_seg == ds.n_prot && ds.stats.scored < ds.stats.residues) break;
        data_free(&ds);
    }
    CHECK(synth_write_fasta(&ds, s, l, m, &err) == 0);
    CHECK_MSG(data_load(&back, &spec, &err) == 0, "%s", err.msg);
    CHECK_MSG(back.fingerprint == ds.fingerprint, "seed %llu", (unsigned long long)seed);
    data_free(&back);
    data_free(&ds);

    /* An unwritable path is an error with the path, not a crash. */
    CHECK(synth_generate(&ds, 2, 1, &err) == 0);
    memset(&err, 0, sizeof err);
    CHECK(synth_write(&ds, "/nonexistent-dir/x.rec", &err) == -1);
    CHECK_CONTAINS(err.msg, "/nonexistent-dir/x.rec");
    data_free(&ds);
}

/* ---------------------------------------------------------------------- */
/* The command, through the built binary.                                  */

/* Both files exist, are not empty and hold the same bytes. */
static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = tp_read_file(a, &na), *y = tp_read_file(b, &nb);
    int same = x && y && na > 0 && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static void test_cli(void)
{
    const char *o = td_path("cli.rec"), *o2 = td_path("cli2.rec");
    CHECK(tp_run("--help") == 0);
    CHECK_CONTAINS(out_text, "synth");
    CHECK(tp_run("synth --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep synth");
    CHECK_CONTAINS(out_text, "--proteins");
    CHECK(tp_run("help synth") == 0);
    CHECK_CONTAINS(out_text, "--format");

    CHECK(tp_run("synth") == 2);
    CHECK_CONTAINS(err_text, "missing -o OUT");
    CHECK_CONTAINS(err_text, "usage: foldsweep synth");
    CHECK(tp_run("synth -o '%s' --proteins 0", o) == 2);
    CHECK_CONTAINS(err_text, "--proteins");
    CHECK(tp_run("synth -o '%s' --proteins 12x", o) == 2);
    CHECK(tp_run("synth -o '%s' --seed=-1", o) == 2);
    CHECK_CONTAINS(err_text, "--seed");
    CHECK(tp_run("synth -o '%s' --format csv", o) == 2);
    CHECK_CONTAINS(err_text, "--format must be records or fasta");
    CHECK(tp_run("synth -o '%s' --bogus", o) == 2);
    CHECK_CONTAINS(err_text, "unknown option --bogus");
    CHECK(tp_run("synth -o '%s' extra", o) == 2);
    CHECK_CONTAINS(err_text, "unexpected argument extra");
    CHECK(tp_run("synth -o") == 2);
    CHECK_CONTAINS(err_text, "missing value for -o");
    CHECK(tp_run("synth -o /nonexistent-dir/x.rec --proteins 3") == 1);
    CHECK_CONTAINS(err_text, "/nonexistent-dir/x.rec");

    /* Defaults: 300 proteins, seed 1, the same bytes as the library writes. */
    CHECK(tp_run("synth -o '%s'", o) == 0);
    CHECK_CONTAINS(out_text, "proteins          300");
    CHECK_CONTAINS(out_text, "labels (scored)");
    CHECK_CONTAINS(out_text, "wrote ");
    CHECK_CONTAINS(out_text, "breaks joined");
    FsDataset ds;
    FsErr err = {0};
    CHECK(synth_generate(&ds, 300, 1, &err) == 0);
    CHECK(synth_write(&ds, o2, &err) == 0);
    CHECK(same_file(o, o2));
    data_free(&ds);
    CHECK(tp_run("synth -o '%s' --proteins 300 --seed 1", o2) == 0 && same_file(o, o2));
    CHECK(tp_run("synth -o '%s' --seed 2", o2) == 0 && !same_file(o, o2));

    CHECK(tp_run("synth -o '%s' -n 40 --seed=7 --json", o) == 0);
    CHECK_CONTAINS(out_text, "\"proteins\": 40");
    CHECK(tp_run("prepare --format records -o '%s' '%s'", td_path("cli.prep"), o) == 0);
    CHECK_CONTAINS(out_text, "proteins          40");

    /* FASTA: three files named from the prefix, read by prepare with the mask. */
    const char *pre = td_path("cli");
    CHECK(tp_run("synth -o '%s' --format fasta --proteins 25", pre) == 0);
    CHECK_CONTAINS(out_text, "cli.mask.fasta");
    static char json_synth[sizeof out_text];
    CHECK(tp_run("synth -o '%s' --format=fasta --proteins 25 --json", pre) == 0);
    snprintf(json_synth, sizeof json_synth, "%s", out_text);
    CHECK(tp_run("prepare -o '%s' --sequences '%s.sequences.fasta' --labels '%s.labels.fasta' "
              "--mask '%s.mask.fasta' --json",
              td_path("cli.prep"), pre, pre, pre) == 0);
    /* Same scored-residue and label counts as generated (masks survived). */
    const char *k = strstr(json_synth, "\"scored_residues\"");
    const char *k2 = strstr(out_text, "\"scored_residues\"");
    CHECK(k && k2 && strncmp(k, k2, 40) == 0);
}

int main(void)
{
    test_determinism();
    test_shape();
    test_round_trip();
    test_cli();
    return test_finish();
}
