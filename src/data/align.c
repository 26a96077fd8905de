/*
 * align: Smith-Waterman local alignment with affine gaps (Gotoh), BLOSUM62
 * and BLAST's protein gap costs (11 to open, 1 per residue), for the
 * identity check (identity.c). It counts the identical residue pairs of
 * the best-scoring alignment as it goes (each cell carries the count of
 * the path it keeps), so it needs one row of memory and no traceback.
 * Ties keep the diagonal, then the horizontal gap, then the vertical one,
 * and the first cell (row by row) of the best score.
 *
 * data_align_near is the coverage check's (identity.c): a local alignment
 * scored for near-identity, not homology, so that a near-identical stretch
 * is not diluted by the chance pairs BLOSUM62 would add at its ends.
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

enum { GAP_OPEN = 11, GAP_EXTEND = 1, X_SCORE = -1 };

/* BLOSUM62 (Henikoff & Henikoff 1992) in FS_AA_LETTERS order (the
 * column heads); X (FS_AA_UNKNOWN) scores X_SCORE against anything. */
static const int8_t blosum62[FS_AA_STANDARD][FS_AA_STANDARD] = {
    /*        A   C   D   E   F   G   H   I   K   L   M   N   P   Q   R   S   T   V   W   Y */
    /* A */ { 4,  0, -2, -1, -2,  0, -2, -1, -1, -1, -1, -2, -1, -1, -1,  1,  0,  0, -3, -2},
    /* C */ { 0,  9, -3, -4, -2, -3, -3, -1, -3, -1, -1, -3, -3, -3, -3, -1, -1, -1, -2, -2},
    /* D */ {-2, -3,  6,  2, -3, -1, -1, -3, -1, -4, -3,  1, -1,  0, -2,  0, -1, -3, -4, -3},
    /* E */ {-1, -4,  2,  5, -3, -2,  0, -3,  1, -3, -2,  0, -1,  2,  0,  0, -1, -2, -3, -2},
    /* F */ {-2, -2, -3, -3,  6, -3, -1,  0, -3,  0,  0, -3, -4, -3, -3, -2, -2, -1,  1,  3},
    /* G */ { 0, -3, -1, -2, -3,  6, -2, -4, -2, -4, -3,  0, -2, -2, -2,  0, -2, -3, -2, -3},
    /* H */ {-2, -3, -1,  0, -1, -2,  8, -3, -1, -3, -2,  1, -2,  0,  0, -1, -2, -3, -2,  2},
    /* I */ {-1, -1, -3, -3,  0, -4, -3,  4, -3,  2,  1, -3, -3, -3, -3, -2, -1,  3, -3, -1},
    /* K */ {-1, -3, -1,  1, -3, -2, -1, -3,  5, -2, -1,  0, -1,  1,  2,  0, -1, -2, -3, -2},
    /* L */ {-1, -1, -4, -3,  0, -4, -3,  2, -2,  4,  2, -3, -3, -2, -2, -2, -1,  1, -2, -1},
    /* M */ {-1, -1, -3, -2,  0, -3, -2,  1, -1,  2,  5, -2, -2,  0, -1, -1, -1,  1, -1, -1},
    /* N */ {-2, -3,  1,  0, -3,  0,  1, -3,  0, -3, -2,  6, -2,  0,  0,  1,  0, -3, -4, -2},
    /* P */ {-1, -3, -1, -1, -4, -2, -2, -3, -1, -3, -2, -2,  7, -1, -2, -1, -1, -2, -4, -3},
    /* Q */ {-1, -3,  0,  2, -3, -2,  0, -3,  1, -2,  0,  0, -1,  5,  1,  0, -1, -2, -2, -1},
    /* R */ {-1, -3, -2,  0, -3, -2,  0, -3,  2, -2, -1,  0, -2,  1,  5, -1, -1, -3, -3, -2},
    /* S */ { 1, -1,  0,  0, -2,  0, -1, -2,  0, -2, -1,  1, -1,  0, -1,  4,  1, -2, -3, -2},
    /* T */ { 0, -1, -1, -1, -2, -2, -2, -1, -1, -1, -1,  0, -1, -1, -1,  1,  5,  0, -2, -2},
    /* V */ { 0, -1, -3, -2, -1, -3, -3,  3, -2,  1,  1, -3, -2, -2, -3, -2,  0,  4, -3, -1},
    /* W */ {-3, -2, -4, -3,  1, -2, -2, -3, -3, -2, -1, -4, -4, -2, -3, -3, -2, -3, 11,  2},
    /* Y */ {-2, -2, -3, -2,  3, -3,  2, -1, -2, -1, -1, -2, -3, -1, -2, -2, -2, -1,  2,  7},
};

static int score_of(uint8_t a, uint8_t b)
{
    return a < FS_AA_STANDARD && b < FS_AA_STANDARD ? blosum62[a][b] : X_SCORE;
}

/* Scores of query residue a against every code (the query profile). */
static void profile_of(uint8_t a, int32_t *prof)
{
    for (int b = 0; b <= FS_AA_UNKNOWN; b++) prof[b] = score_of(a, (uint8_t)b);
}

uint32_t data_align_identical(const uint8_t *q, uint32_t nq, const uint8_t *t, uint32_t nt, int32_t *score)
{
    /* Per column j: H and its path's identical pairs (the previous row's,
     * then this row's), and the vertical gap state F with its pairs. */
    int32_t *H = fs_calloc(4 * ((size_t)nt + 1), sizeof(int32_t)), *I = H + nt + 1, *F = I + nt + 1, *FI = F + nt + 1;
    const int32_t open = GAP_OPEN + GAP_EXTEND, none = -(1 << 28);
    for (uint32_t j = 0; j <= nt; j++) F[j] = none;
    int32_t best = 0, best_id = 0, prof[FS_AA_UNKNOWN + 1];
    for (uint32_t i = 0; i < nq; i++) {
        int32_t diag = 0, diag_id = 0, left = 0, left_id = 0, e = none, e_id = 0, a = q[i];
        profile_of(q[i], prof);
        for (uint32_t j = 1; j <= nt; j++) {
            int32_t up = H[j], up_id = I[j], b = t[j - 1];
            int32_t f_ext = F[j] - GAP_EXTEND, f_open = up - open;
            F[j] = f_ext > f_open ? f_ext : f_open;
            FI[j] = f_ext > f_open ? FI[j] : up_id;
            int32_t e_ext = e - GAP_EXTEND, e_open = left - open;
            e_id = e_ext > e_open ? e_id : left_id;
            e = e_ext > e_open ? e_ext : e_open;
            int32_t h = diag + prof[b], h_id = diag_id + (a == b && a < FS_AA_STANDARD);
            h_id = e > h ? e_id : h_id;
            h = e > h ? e : h;
            h_id = F[j] > h ? FI[j] : h_id;
            h = F[j] > h ? F[j] : h;
            h_id = h > 0 ? h_id : 0;
            h = h > 0 ? h : 0;
            best_id = h > best ? h_id : best_id;
            best = h > best ? h : best;
            diag = up, diag_id = up_id;
            H[j] = left = h;
            I[j] = left_id = h_id;
        }
    }
    free(H);
    if (score) *score = best;
    return (uint32_t)best_id;
}

/* One cell's path for data_align_near: its score, identical pairs,
 * columns (pairs and gap positions) and first query residue. */
typedef struct {
    int32_t h, id, cols, start;
} Path;

/* p extended by one column scoring s, identical or not. */
static Path step_of(Path p, int32_t s, int same)
{
    p.h += s, p.id += same, p.cols++;
    return p;
}

void data_align_near(const uint8_t *q, uint32_t nq, const uint8_t *t, uint32_t nt, double identity, FsAlignment *out)
{
    /* A column scores SAME for an identical pair, OTHER for any other pair
     * or gap position, 0 for a pair with an X: a path scores above 0
     * exactly when its identity (over its columns without X) is above
     * `identity`, and the best one is the highest-scoring
     * near-identical stretch. H: the previous row's paths, then this
     * row's; a cell at 0 starts the next row's diagonal (its start). */
    const int32_t SAME = (int32_t)(1000 * (1 - identity) + 0.5), OTHER = -(int32_t)(1000 * identity + 0.5);
    Path *H = fs_calloc((size_t)nt + 1, sizeof(Path)), best = {0, 0, 0, 0};
    uint32_t best_end = 0;
    for (uint32_t i = 0; i < nq; i++) {
        Path diag = {0, 0, 0, (int32_t)i}, left = {0, 0, 0, (int32_t)i + 1};
        const int a = q[i];
        for (uint32_t j = 1; j <= nt; j++) {
            const int b = t[j - 1], x = a >= FS_AA_STANDARD || b >= FS_AA_STANDARD;
            Path up = H[j], h = step_of(diag, x ? 0 : a == b ? SAME : OTHER, !x && a == b);
            Path e = step_of(left, OTHER, 0), f = step_of(up, OTHER, 0);
            h = e.h > h.h ? e : h;
            h = f.h > h.h ? f : h;
            if (h.h <= 0) h = (Path){0, 0, 0, (int32_t)i + 1};
            if (h.h > best.h) best = h, best_end = i + 1;
            diag = up;
            H[j] = left = h;
        }
    }
    free(H);
    *out = (FsAlignment){best.h, (uint32_t)best.id, (uint32_t)best.cols, (uint32_t)best.start,
                         best.h > 0 ? best_end : (uint32_t)best.start};
}
