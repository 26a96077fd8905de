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
 *
 * The same pass measures coverage: the share of the test protein's
 * residues inside near-identical local alignments (FS_COVER_SEGMENT_*) to
 * any training protein, which catches a chimera of pieces of several
 * training proteins that no single alignment makes identical. Only a
 * candidate with enough hits on one diagonal is aligned for it
 * (data_align_near), so an unrelated test protein costs what it did.
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
    double segment; /* the identity a covering segment is above */
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
    ix->segment = FS_COVER_SEGMENT_IDENTITY;
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

double data_identity_segment(FsIdentityIndex *ix, double x)
{
    return ix->segment = x > FS_COVER_SEGMENT_IDENTITY ? x : FS_COVER_SEGMENT_IDENTITY;
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
 * lower index), at most IDENT_CANDIDATES, and those hits; their best
 * counts are reset. */
static int pick_candidates(FsIdentityIndex *ix, uint32_t *cand, uint32_t *hits)
{
    int n = 0;
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

/* ---------------------------------------------------------------------- */
/* Coverage (docs/models.md, "Leakage guard"): the query's residues inside */
/* near-identical local alignments to training proteins.                  */

/* The fewest 3-mer hits on one diagonal of a candidate that can share a
 * segment with the query: the cheap test before data_align_near. A
 * segment of c columns (c >= FS_COVER_SEGMENT_MIN) has m < c / 20 of them
 * not identical pairs, so c - m identical pairs in at most m + 1 runs; the
 * longest is shortest at m = 2, c = 41: 39 pairs in 3 runs, one of 13 or
 * more, 11 hits. A run of X breaks 3-mers (as it does for the identity). */
enum { COVER_MIN_HITS = 11 };

/* The two training proteins with the longest segments, distinct, longest
 * first (len: their lengths; ties keep the first found). */
static void note_coverer(FsIdentityHit *h, uint32_t *len, int32_t p, uint32_t n)
{
    int k = h->cover_by[0] == p ? 0 : h->cover_by[1] == p ? 1 : 2;
    if (k == 2 && h->cover_by[1] >= 0 && n <= len[1]) return;
    if (k == 2) k = 1, h->cover_by[1] = p, len[1] = 0;
    if (n > len[k]) len[k] = n;
    if (len[1] > len[0]) {
        int32_t q = h->cover_by[0];
        uint32_t l = len[0];
        h->cover_by[0] = h->cover_by[1], len[0] = len[1], h->cover_by[1] = q, len[1] = l;
    }
}

/* Aligns query residues [lo, hi) against training protein p and marks the
 * alignment covered when it is a near-identical segment. Returns the
 * residues newly covered. */
static uint32_t cover_with(const FsIdentityIndex *ix, FsIdentityHit *h, uint32_t *len, uint32_t p, const uint8_t *aa,
                           uint32_t lo, uint32_t hi, uint8_t *covered)
{
    FsAlignment a;
    const FsSeqSet *s = ix->set;
    data_align_near(aa + lo, hi - lo, s->aa + s->off[p], s->off[p + 1] - s->off[p], ix->segment, &a);
    if (a.score <= 0 || a.columns < FS_COVER_SEGMENT_MIN) return 0;
    uint32_t fresh = 0;
    for (uint32_t r = lo + a.q_lo; r < lo + a.q_hi; r++) fresh += !covered[r], covered[r] = 1;
    note_coverer(h, len, (int32_t)p, a.q_hi - a.q_lo);
    return fresh;
}

/* Pushes the uncovered runs of [lo, hi) long enough to hold a segment. */
static void push_runs(const uint8_t *covered, uint32_t lo, uint32_t hi, uint32_t **stack, uint32_t *n, uint32_t *cap)
{
    for (uint32_t r = lo; r < hi;) {
        uint32_t end = r;
        while (end < hi && !covered[end]) end++;
        if (end - r >= FS_COVER_SEGMENT_MIN) {
            if (*n + 2 > *cap) *cap = 2 * *cap + 16, *stack = fs_realloc(*stack, sizeof(uint32_t) * *cap);
            (*stack)[(*n)++] = r, (*stack)[(*n)++] = end;
        }
        r = end + 1;
    }
}

/* The uncovered runs of a query that has a segment, each with its own
 * prefilter (so a chimera's second part finds its own training protein
 * when close relatives of the first fill the candidates), until no run
 * gains a segment. Each run that gains one is split into shorter runs. */
static void cover_rest(FsIdentityIndex *ix, FsIdentityHit *h, uint32_t *len, const uint8_t *aa, uint32_t n,
                       uint8_t *covered)
{
    uint32_t *stack = NULL, depth = 0, cap = 0, cand[IDENT_CANDIDATES], hits[IDENT_CANDIDATES];
    push_runs(covered, 0, n, &stack, &depth, &cap);
    while (depth) {
        uint32_t hi = stack[--depth], lo = stack[--depth], gained = 0;
        count_diagonals(ix, aa + lo, hi - lo);
        int nc = pick_candidates(ix, cand, hits);
        for (int c = 0; c < nc; c++)
            if (hits[c] >= COVER_MIN_HITS) gained += cover_with(ix, h, len, cand[c], aa, lo, hi, covered);
        if (gained) push_runs(covered, lo, hi, &stack, &depth, &cap);
    }
    free(stack);
}

/* The share of the query's residues other than X that are covered. */
static double covered_share(const uint8_t *aa, uint32_t n, const uint8_t *covered, uint32_t known)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) k += covered[i] && aa[i] < FS_AA_STANDARD;
    return known ? (double)k / known : 0.0;
}

FsIdentityHit data_identity_best(FsIdentityIndex *ix, const uint8_t *aa, uint32_t n)
{
    FsIdentityHit h = {0.0, -1, 0, known_length(aa, n), 0.0, {-1, -1}};
    uint32_t cand[IDENT_CANDIDATES], hits[IDENT_CANDIDATES], len[2] = {0, 0}, gained = 0;
    uint8_t *covered = fs_calloc((size_t)n + 1, 1);
    count_diagonals(ix, aa, n);
    int nc = pick_candidates(ix, cand, hits);
    for (int c = 0; c < nc; c++) {
        consider(&h, ix->set, cand[c], aa, n);
        if (hits[c] >= COVER_MIN_HITS) gained += cover_with(ix, &h, len, cand[c], aa, 0, n, covered);
    }
    if (gained) cover_rest(ix, &h, len, aa, n, covered);
    h.coverage = covered_share(aa, n, covered, h.length);
    free(covered);
    return h;
}

FsIdentityHit data_identity_full(const FsSeqSet *train, const uint8_t *aa, uint32_t n)
{
    FsIdentityHit h = {0.0, -1, 0, known_length(aa, n), 0.0, {-1, -1}};
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
