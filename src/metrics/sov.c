/*
 * sov: SOV'99 segment overlap (Zemla et al., Proteins 34:220-223, 1999),
 * accumulated over chains; the definitions and the masking rule are in
 * metrics.h.
 *
 * One pass, O(n), no allocation. The pairs (s1, s2) of an observed and a
 * predicted segment in the same state that overlap are exactly the maximal
 * runs of scored residues where obs == pred: inside such a run neither
 * segment can change (both stay in one state), at its end one of them ends,
 * and two intervals intersect in one interval. So a pair starts where
 * obs[k] == pred[k] and an observed or a predicted segment starts at k, and
 * then k = max(start(s1), start(s2)). Each segment's end is found once, when
 * it starts, by scanning ahead, so every residue is read a bounded number of
 * times however the segments nest (a naive "for each s1, every s2" would be
 * O(segments^2), too slow for 100k-residue test sets).
 */
#include "metrics/metrics.h"

#include <math.h>   /* NAN */
#include <stddef.h> /* NULL */

static int sov_scored(const uint8_t *scored, uint32_t k) { return scored == NULL || scored[k] != 0; }

/* Last residue of the segment of st[] that starts at k. */
static uint32_t sov_segment_end(const uint8_t *st, const uint8_t *scored, uint32_t n, uint32_t k)
{
    uint32_t e = k;
    while (e + 1 < n && sov_scored(scored, e + 1) && st[e + 1] == st[k]) e++;
    return e;
}

static uint32_t sov_min(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t sov_max(uint32_t a, uint32_t b) { return a > b ? a : b; }

void metrics_sov_add(FsSov *s, const uint8_t *obs, const uint8_t *pred, const uint8_t *scored,
                     uint32_t n)
{
    if (s == NULL || obs == NULL || pred == NULL) return;
    /* Summed per chain first, so a chain adds the same amounts whatever was
     * accumulated before it. */
    double num[FS_CLASSES] = {0}, den[FS_CLASSES] = {0};
    uint32_t os = 0, oe = 0, ps = 0, pe = 0; /* current observed / predicted segment */
    int paired = 0; /* the current observed segment overlaps a predicted one of its state */
    for (uint32_t k = 0; k < n; k++) {
        if (!sov_scored(scored, k)) continue;
        int after_gap = k == 0 || !sov_scored(scored, k - 1);
        int obs_starts = after_gap || obs[k - 1] != obs[k];
        int pred_starts = after_gap || pred[k - 1] != pred[k];
        if (obs_starts) {
            os = k;
            oe = sov_segment_end(obs, scored, n, k);
            paired = 0;
        }
        if (pred_starts) {
            ps = k;
            pe = sov_segment_end(pred, scored, n, k);
        }
        uint8_t c = obs[k];
        if (c >= FS_CLASSES) continue; /* a state no SOV counts */
        uint32_t len1 = oe - os + 1;
        if (pred[k] == c && (obs_starts || pred_starts)) {
            /* A new pair; its overlap is [k, min(oe, pe)]. */
            uint32_t len2 = pe - ps + 1;
            uint32_t minov = sov_min(oe, pe) - k + 1;
            uint32_t maxov = sov_max(oe, pe) - sov_min(os, ps) + 1;
            uint32_t delta = sov_min(sov_min(maxov - minov, minov), sov_min(len1 / 2, len2 / 2));
            num[c] += (double)(minov + delta) / (double)maxov * (double)len1;
            den[c] += (double)len1; /* once per pair */
            paired = 1;
        }
        if (k == oe && !paired) den[c] += (double)len1; /* S'(c): no overlap at all */
    }
    for (int i = 0; i < FS_CLASSES; i++) {
        s->num[i] += num[i];
        s->den[i] += den[i];
    }
}

double metrics_sov(const FsSov *s, int cls)
{
    if (s == NULL) return NAN;
    if (cls >= 0 && cls < FS_CLASSES) return s->den[cls] > 0 ? s->num[cls] / s->den[cls] : NAN;
    if (cls != FS_CLASSES) return NAN;
    double num = 0, den = 0;
    for (int c = 0; c < FS_CLASSES; c++) num += s->num[c], den += s->den[c];
    return den > 0 ? num / den : NAN;
}
