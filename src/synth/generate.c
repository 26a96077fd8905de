/*
 * generate.c: synth_generate, the protein model described in synth.h.
 * Propensities are integer tables and every draw is fs_rng_below, so no
 * floating point touches the output: same seed, same bytes, any machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth/synth.h"

enum {
    LEN_MIN = 50, LEN_SPAN = 350, /* protein length 50 .. 400 */
    HELIX_MIN = 6, HELIX_MAX = 20,
    STRAND_MIN = 3, STRAND_MAX = 10,
    COIL_MIN = 2, COIL_MAX = 12,
    FAVOURED = 5500, /* of TABLE_TOTAL: the favoured group's share */
    TABLE_TOTAL = 10000,
};

/* Percentages. */
enum {
    P_BREAK = 10, P_UNKNOWN_PER_MILLE = 3, P_MASK_END = 30, MASK_MAX = 5,
    P_NCAP = 50, P_HELIX_PRO = 30, P_CCAP_GLY = 50, P_STRAND_FACE = 70,
};

/* Natural background frequencies (per mille, roughly UniProt), in
 * FS_AA_LETTERS order: A C D E F G H I K L M N P Q R S T V W Y. */
static const uint32_t background[FS_AA_STANDARD] = {83, 14, 55, 67, 39, 71, 23, 59, 58, 97,
                                                    24, 41, 47, 39, 55, 66, 53, 69, 11, 29};

/* Relative weights inside each class's favoured group (0 = not favoured). */
static const uint32_t favoured[FS_CLASSES][FS_AA_STANDARD] = {
    /*        A  C  D  E  F  G  H  I  K  L  M  N  P  Q  R  S  T  V  W  Y */
    [FS_SS_H] = {6, 0, 0, 4, 0, 0, 0, 0, 4, 6, 2, 0, 0, 2, 2, 0, 0, 0, 0, 0},
    [FS_SS_E] = {0, 2, 0, 0, 3, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 3, 6, 1, 3},
    [FS_SS_C] = {0, 0, 4, 0, 0, 6, 0, 0, 0, 0, 0, 4, 4, 0, 0, 4, 0, 0, 0, 0},
};

/* Cumulative integer tables: cum[c][a] = weight of codes 0..a. */
typedef struct {
    uint32_t cum[FS_CLASSES][FS_AA_STANDARD];
} SynthTables;

static void tables_build(SynthTables *t)
{
    for (int c = 0; c < FS_CLASSES; c++) {
        uint32_t fav_sum = 0, bg_sum = 0, w[FS_AA_STANDARD], total = 0;
        for (int a = 0; a < FS_AA_STANDARD; a++) {
            if (favoured[c][a])
                fav_sum += favoured[c][a];
            else
                bg_sum += background[a];
        }
        for (int a = 0; a < FS_AA_STANDARD; a++) {
            w[a] = favoured[c][a] ? FAVOURED * favoured[c][a] / fav_sum
                                  : (TABLE_TOTAL - FAVOURED) * background[a] / bg_sum;
            total += w[a];
            t->cum[c][a] = total;
        }
    }
}

static uint8_t draw(const SynthTables *t, int c, FsRng *r)
{
    uint32_t x = fs_rng_below(r, t->cum[c][FS_AA_STANDARD - 1]);
    uint8_t a = 0;
    while (t->cum[c][a] <= x) a++;
    return a;
}

static uint8_t code_of(char letter) { return (uint8_t)data_aa_code(letter); }

static uint8_t draw_from(const char *letters, FsRng *r)
{
    return code_of(letters[fs_rng_below(r, (uint32_t)strlen(letters))]);
}

static uint32_t uniform(FsRng *r, uint32_t lo, uint32_t hi) { return lo + fs_rng_below(r, hi - lo + 1); }

/* One protein's residues and labels into aa/ss (room for LEN_MIN +
 * LEN_SPAN); returns its length and the chain break position (0: none). */
static uint32_t protein(const SynthTables *t, FsRng *r, uint8_t *aa, uint8_t *ss, uint32_t *brk)
{
    uint32_t u1 = fs_rng_below(r, LEN_SPAN + 1), u2 = fs_rng_below(r, LEN_SPAN + 1);
    uint32_t n = LEN_MIN + (u1 < u2 ? u1 : u2), i = 0;
    int kind = FS_SS_C;
    /* Labels: segments until the length is reached. */
    while (i < n) {
        uint32_t len = kind == FS_SS_H   ? uniform(r, HELIX_MIN, HELIX_MAX)
                       : kind == FS_SS_E ? uniform(r, STRAND_MIN, STRAND_MAX)
                                         : uniform(r, COIL_MIN, COIL_MAX);
        for (uint32_t k = 0; k < len && i < n; k++) ss[i++] = (uint8_t)kind;
        kind = kind != FS_SS_C ? FS_SS_C : fs_rng_below(r, 2) ? FS_SS_H : FS_SS_E;
    }
    /* Residues: the class table, then position effects. */
    uint32_t run = 0; /* position inside the current segment */
    for (i = 0; i < n; i++) {
        run = i && ss[i] == ss[i - 1] ? run + 1 : 0;
        int c = ss[i];
        if (c == FS_SS_C && i + 1 < n && ss[i + 1] == FS_SS_H && fs_rng_below(r, 100) < P_NCAP)
            aa[i] = draw_from("STDN", r);
        else if (c == FS_SS_C && i && ss[i - 1] == FS_SS_H && fs_rng_below(r, 100) < P_CCAP_GLY)
            aa[i] = code_of('G');
        else if (c == FS_SS_H && run == 0 && fs_rng_below(r, 100) < P_HELIX_PRO)
            aa[i] = code_of('P');
        else if (c == FS_SS_E && (run & 1) && fs_rng_below(r, 100) >= P_STRAND_FACE)
            aa[i] = draw(t, FS_SS_C, r);
        else
            aa[i] = draw(t, c, r);
    }
    for (i = 0; i < n; i++)
        if (fs_rng_below(r, 1000) < P_UNKNOWN_PER_MILLE) aa[i] = FS_AA_UNKNOWN;
    if (fs_rng_below(r, 100) < P_MASK_END)
        for (uint32_t k = uniform(r, 1, MASK_MAX); k--;) ss[k] |= FS_SS_UNSCORED;
    if (fs_rng_below(r, 100) < P_MASK_END)
        for (uint32_t k = uniform(r, 1, MASK_MAX); k--;) ss[n - 1 - k] |= FS_SS_UNSCORED;
    *brk = fs_rng_below(r, 100) < P_BREAK ? uniform(r, n / 4, 3 * n / 4) : 0;
    return n;
}

int synth_generate(FsDataset *ds, uint32_t proteins, uint64_t seed, FsErr *err)
{
    memset(ds, 0, sizeof *ds);
    if (proteins == 0 || proteins > SYNTH_MAX_PROTEINS) {
        fs_err_set(err, "synth: the protein count must be 1 to %u, not %u", SYNTH_MAX_PROTEINS,
                   proteins);
        return -1;
    }
    SynthTables t;
    tables_build(&t);
    size_t cap = (size_t)proteins * 200 + 1024;
    uint32_t max_len = LEN_MIN + LEN_SPAN;
    ds->aa = fs_malloc(cap);
    ds->ss = fs_malloc(cap);
    ds->seg_off = fs_malloc((2 * (size_t)proteins + 1) * sizeof *ds->seg_off);
    ds->prot_seg = fs_malloc(((size_t)proteins + 1) * sizeof *ds->prot_seg);
    ds->name_off = fs_malloc(((size_t)proteins + 1) * sizeof *ds->name_off);
    ds->prot_set = fs_calloc(proteins, 1); /* FS_SET_NONE */
    ds->prot_fold = fs_calloc(proteins, 1);
    size_t name_cap = (size_t)proteins * 16;
    ds->names = fs_malloc(name_cap);
    ds->seg_off[0] = ds->prot_seg[0] = ds->name_off[0] = 0;
    uint64_t unknown = 0;
    for (uint32_t p = 0; p < proteins; p++) {
        if (ds->n_res + max_len > cap) {
            cap *= 2;
            ds->aa = fs_realloc(ds->aa, cap);
            ds->ss = fs_realloc(ds->ss, cap);
        }
        FsRng r;
        uint64_t words[3] = {seed, p, 0x73796e7468ull /* "synth" */};
        fs_rng_seed(&r, words, 3);
        uint32_t brk, n = protein(&t, &r, ds->aa + ds->n_res, ds->ss + ds->n_res, &brk);
        for (uint32_t i = 0; i < n; i++) unknown += ds->aa[ds->n_res + i] == FS_AA_UNKNOWN;
        if (brk) ds->seg_off[++ds->n_seg] = ds->n_res + brk;
        ds->n_res += n;
        ds->seg_off[++ds->n_seg] = ds->n_res;
        ds->prot_seg[++ds->n_prot] = ds->n_seg;
        int k = snprintf(ds->names + ds->name_off[p], 16, "synth%04u", p + 1);
        ds->name_off[p + 1] = ds->name_off[p] + (uint32_t)k + 1;
    }
    ds->aa = fs_realloc(ds->aa, ds->n_res);
    ds->ss = fs_realloc(ds->ss, ds->n_res);
    ds->seg_off = fs_realloc(ds->seg_off, (ds->n_seg + 1) * sizeof *ds->seg_off);
    ds->names = fs_realloc(ds->names, ds->name_off[proteins]);
    /* As a loader would count them: every unknown residue was an 'X'. */
    ds->stats.unknown_letters['X' - 'A'] = unknown;
    data_finish(ds);
    return 0;
}
