/*
 * identity: a test protein's highest sequence identity to the proteins a
 * model saw (docs/models.md, "Leakage guard"). Aligning every test protein
 * against every training protein costs hours on FLIP, so a k-mer prefilter
 * picks the candidates: every 3-mer of the test protein is looked up in an
 * index of the training proteins' 3-mers, the hits are counted per
 * (training protein, diagonal), and the training proteins with the most
 * hits on one diagonal (IDENT_CANDIDATES of them) are aligned in full
 * (align.c). A protein contained in a training one, or a homologue above
 * half identity, shares long runs of 3-mers on one diagonal and is always
 * among them; for weak homologues (the 0.25 level) the prefilter can miss
 * what a full search finds (bench/bench_identity measures both).
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

const double fs_identity_levels[FS_IDENTITY_LEVELS] = {0.25, 0.5, FS_IDENTITY_MAX_DEFAULT};

enum { IDENT_K = 3, IDENT_KMERS = FS_AA_STANDARD * FS_AA_STANDARD * FS_AA_STANDARD, IDENT_CANDIDATES = 8 };

typedef struct {
    uint32_t protein, pos;
} Posting;

struct FsIdentityIndex {
    const FsSeqSet *set;
    uint32_t *start; /* [IDENT_KMERS+1] into post */
    Posting *post;
    /* Scratch for one query: (protein, diagonal) -> hits, open addressing. */
    uint64_t *key;
    uint32_t *count, cap, used;
    uint32_t *best;    /* [set->n] the most hits on one diagonal */
    uint32_t *touched; /* proteins with best > 0 */
    uint32_t n_touched;
};

/* The 3-mer at s (codes), or -1 when it holds an X. */
static int kmer_at(const uint8_t *s)
{
    if (s[0] >= FS_AA_STANDARD || s[1] >= FS_AA_STANDARD || s[2] >= FS_AA_STANDARD) return -1;
    return (s[0] * FS_AA_STANDARD + s[1]) * FS_AA_STANDARD + s[2];
}

FsIdentityIndex *data_identity_index(const FsSeqSet *train)
{
    FsIdentityIndex *ix = fs_calloc(1, sizeof *ix);
    ix->set = train;
    ix->start = fs_calloc(IDENT_KMERS + 1, sizeof(uint32_t));
    for (uint32_t p = 0; p < train->n; p++)
        for (uint32_t r = train->off[p]; r + IDENT_K <= train->off[p + 1]; r++) {
            int k = kmer_at(train->aa + r);
            if (k >= 0) ix->start[k + 1]++;
        }
    for (int k = 0; k < IDENT_KMERS; k++) ix->start[k + 1] += ix->start[k];
    ix->post = fs_malloc(sizeof(Posting) * ((size_t)ix->start[IDENT_KMERS] + 1));
    uint32_t *fill = fs_malloc(sizeof(uint32_t) * IDENT_KMERS);
    memcpy(fill, ix->start, sizeof(uint32_t) * IDENT_KMERS);
    for (uint32_t p = 0; p < train->n; p++)
        for (uint32_t r = train->off[p]; r + IDENT_K <= train->off[p + 1]; r++) {
            int k = kmer_at(train->aa + r);
            if (k >= 0) ix->post[fill[k]++] = (Posting){p, r - train->off[p]};
        }
    free(fill);
    ix->best = fs_calloc((size_t)train->n + 1, sizeof(uint32_t));
    ix->touched = fs_malloc(sizeof(uint32_t) * ((size_t)train->n + 1));
    ix->cap = 1u << 12;
    ix->key = fs_malloc(sizeof(uint64_t) * ix->cap);
    ix->count = fs_malloc(sizeof(uint32_t) * ix->cap);
    return ix;
}

void data_identity_free(FsIdentityIndex *ix)
{
    if (!ix) return;
    free(ix->start), free(ix->post), free(ix->key), free(ix->count), free(ix->best), free(ix->touched);
    free(ix);
}

static uint32_t slot_of(const FsIdentityIndex *ix, uint64_t key)
{
    uint32_t s = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (ix->cap - 1);
    while (ix->key[s] != UINT64_MAX && ix->key[s] != key) s = (s + 1) & (ix->cap - 1);
    return s;
}

static void clear_table(FsIdentityIndex *ix)
{
    memset(ix->key, 0xff, sizeof(uint64_t) * ix->cap);
    ix->used = 0;
}

/* Doubles the table, keeping its counts. */
static void grow_table(FsIdentityIndex *ix)
{
    uint64_t *key = ix->key;
    uint32_t *count = ix->count, cap = ix->cap;
    ix->cap = cap * 2;
    ix->key = fs_malloc(sizeof(uint64_t) * ix->cap);
    ix->count = fs_malloc(sizeof(uint32_t) * ix->cap);
    clear_table(ix);
    for (uint32_t s = 0; s < cap; s++) {
        if (key[s] == UINT64_MAX) continue;
        uint32_t t = slot_of(ix, key[s]);
        ix->key[t] = key[s];
        ix->count[t] = count[s];
        ix->used++;
    }
    free(key), free(count);
}

/* One hit of training protein p on diagonal d (offset by the query's length). */
static void count_hit(FsIdentityIndex *ix, uint32_t p, uint32_t d)
{
    if (2 * (ix->used + 1) > ix->cap) grow_table(ix);
    uint64_t key = (uint64_t)p << 32 | d;
    uint32_t s = slot_of(ix, key);
    if (ix->key[s] == UINT64_MAX) ix->key[s] = key, ix->count[s] = 0, ix->used++;
    uint32_t c = ++ix->count[s];
    if (ix->best[p] == 0) ix->touched[ix->n_touched++] = p;
    if (c > ix->best[p]) ix->best[p] = c;
}

/* The hits of every 3-mer of the query on every (protein, diagonal). */
static void count_diagonals(FsIdentityIndex *ix, const uint8_t *aa, uint32_t n)
{
    clear_table(ix);
    ix->n_touched = 0;
    for (uint32_t i = 0; i + IDENT_K <= n; i++) {
        int k = kmer_at(aa + i);
        if (k < 0) continue;
        for (uint32_t e = ix->start[k]; e < ix->start[k + 1]; e++)
            count_hit(ix, ix->post[e].protein, ix->post[e].pos + n - i);
    }
}

/* The touched proteins with the most hits on one diagonal (ties: the
 * lower index), at most IDENT_CANDIDATES; their best counts are reset. */
static int pick_candidates(FsIdentityIndex *ix, uint32_t *cand)
{
    int n = 0;
    uint32_t hits[IDENT_CANDIDATES];
    for (uint32_t t = 0; t < ix->n_touched; t++) {
        uint32_t p = ix->touched[t], c = ix->best[p];
        ix->best[p] = 0;
        if (n == IDENT_CANDIDATES && (c < hits[n - 1] || (c == hits[n - 1] && p > cand[n - 1]))) continue;
        int at = n < IDENT_CANDIDATES ? n++ : n - 1;
        while (at > 0 && (hits[at - 1] < c || (hits[at - 1] == c && cand[at - 1] > p))) {
            hits[at] = hits[at - 1], cand[at] = cand[at - 1];
            at--;
        }
        hits[at] = c, cand[at] = p;
    }
    return n;
}

/* The query's residues other than X: the identity's denominator. */
static uint32_t known_length(const uint8_t *aa, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) k += aa[i] < FS_AA_STANDARD;
    return k;
}

/* Aligns the query against training protein p; keeps the higher identity
 * (ties: the lower index). */
static void consider(FsIdentityHit *best, const FsSeqSet *s, uint32_t p, const uint8_t *aa, uint32_t n)
{
    uint32_t id = data_align_identical(aa, n, s->aa + s->off[p], s->off[p + 1] - s->off[p], NULL);
    double x = best->length ? (double)id / best->length : 0.0;
    if (best->protein < 0 || x > best->identity || (x == best->identity && (int32_t)p < best->protein))
        best->identity = x, best->protein = (int32_t)p, best->identical = id;
}

FsIdentityHit data_identity_best(FsIdentityIndex *ix, const uint8_t *aa, uint32_t n)
{
    FsIdentityHit h = {0.0, -1, 0, known_length(aa, n)};
    uint32_t cand[IDENT_CANDIDATES];
    count_diagonals(ix, aa, n);
    int nc = pick_candidates(ix, cand);
    for (int c = 0; c < nc; c++) consider(&h, ix->set, cand[c], aa, n);
    return h;
}

FsIdentityHit data_identity_full(const FsSeqSet *train, const uint8_t *aa, uint32_t n)
{
    FsIdentityHit h = {0.0, -1, 0, known_length(aa, n)};
    for (uint32_t p = 0; p < train->n; p++) consider(&h, train, p, aa, n);
    return h;
}

void data_identity_all(FsIdentityIndex *ix, const FsDataset *ds, FsIdentityHit *hits)
{
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        uint32_t lo = ds->seg_off[ds->prot_seg[i]], hi = ds->seg_off[ds->prot_seg[i + 1]];
        hits[i] = data_identity_best(ix, ds->aa + lo, hi - lo);
    }
}
