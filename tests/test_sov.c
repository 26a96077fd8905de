/*
 * test_sov: SOV'99 on small chains worked out by hand from the definition
 * (the arithmetic is in the comment of each case), against a brute-force
 * "every pair of segments" version on random chains, on 100k and 1M
 * residues for speed; then quantiles and the bootstrap interval of Q3.
 *
 * Notation: segments as [first-last] (0-based residues), len = last -
 * first + 1; for a pair, minov = overlap length, maxov = union span,
 * delta = min(maxov - minov, minov, len1/2, len2/2) (integer halves),
 * term = (minov + delta) / maxov * len1, added once per pair to the
 * numerator, len1 to N; an observed segment without a partner adds len1
 * to N only.
 */
#include <stdint.h>
#include <time.h>

#include "metrics/metrics.h"
#include "util/util.h"

#include "test.h"

enum { H = 0, E = 1, C = 2, ALL = 3 };
enum { MAXN = 64 };

static void sov_parse(const char *s, uint8_t *out)
{
    for (size_t i = 0; s[i]; i++) out[i] = s[i] == 'H' ? H : s[i] == 'E' ? E : C;
}

/* SOV of one chain given as strings; mask "1"/"0" per residue or NULL. */
static FsSov sov_chain(const char *obs, const char *pred, const char *mask)
{
    uint8_t o[MAXN], p[MAXN], m[MAXN];
    size_t n = strlen(obs);
    CHECK(n == strlen(pred) && n <= MAXN);
    sov_parse(obs, o);
    sov_parse(pred, p);
    if (mask)
        for (size_t i = 0; i < n; i++) m[i] = mask[i] == '1';
    FsSov s = {0};
    metrics_sov_add(&s, o, p, mask ? m : NULL, (uint32_t)n);
    return s;
}

static void check_sov(const FsSov *s, int cls, double want)
{
    double got = metrics_sov(s, cls);
    if (isnan(want))
        CHECK_MSG(isnan(got), "class %d: %.9g, want NAN", cls, got);
    else
        CHECK_MSG(fabs(got - want) <= 1e-12, "class %d: %.12g, want %.12g", cls, got, want);
}

static void test_hand_cases(void)
{
    /* obs  CCCHHHHHCCC: C[0-2] H[3-7] C[8-10]
     * pred CCHHHHCCCCC: C[0-1] H[2-5] C[6-10]
     * H: H[3-7] x H[2-5]: minov 3 ([3-5]), maxov 6 ([2-7]),
     *    delta = min(3, 3, 5/2 = 2, 4/2 = 2) = 2, term (3+2)/6*5 = 25/6; N 5
     *    SOV_H = (25/6)/5 = 5/6
     * C: C[0-2] x C[0-1]: minov 2, maxov 3, delta = min(1, 2, 1, 1) = 1,
     *    term (2+1)/3*3 = 3; N 3
     *    C[8-10] x C[6-10]: minov 3, maxov 5, delta = min(2, 3, 1, 2) = 1,
     *    term (3+1)/5*3 = 2.4; N 3
     *    SOV_C = 5.4/6 = 0.9
     * E: no observed E, N 0: NAN
     * all: (25/6 + 5.4) / (5 + 6) = (287/30)/11 = 287/330 */
    FsSov a = sov_chain("CCCHHHHHCCC", "CCHHHHCCCCC", NULL);
    CHECK_NEAR(a.num[H], 25.0 / 6.0, 1e-12);
    CHECK_NEAR(a.den[H], 5, 0);
    CHECK_NEAR(a.num[C], 5.4, 1e-12);
    CHECK_NEAR(a.den[C], 6, 0);
    CHECK(a.num[E] == 0 && a.den[E] == 0);
    check_sov(&a, H, 5.0 / 6.0);
    check_sov(&a, E, NAN);
    check_sov(&a, C, 0.9);
    check_sov(&a, ALL, 287.0 / 330.0);

    /* One observed helix, the prediction split in two (one s1, two s2);
     * segments of length 1 at both chain ends.
     * obs  CHHHHHHHHC: C[0] H[1-8] C[9]
     * pred CHHHCCHHHC: C[0] H[1-3] C[4-5] H[6-8] C[9]
     * H: H[1-8] x H[1-3]: minov 3, maxov 8, delta = min(5, 3, 4, 1) = 1,
     *    term (3+1)/8*8 = 4; N 8
     *    H[1-8] x H[6-8]: the same, term 4; N 8 (len1 counted per pair)
     *    SOV_H = 8/16 = 0.5
     * C: C[0] x C[0]: minov 1, maxov 1, delta = min(0, 1, 0, 0) = 0, term 1; N 1
     *    C[9] x C[9]: term 1; N 1 (pred C[4-5] overlaps no observed C)
     *    SOV_C = 2/2 = 1
     * all: (8 + 2)/(16 + 2) = 5/9 */
    FsSov b = sov_chain("CHHHHHHHHC", "CHHHCCHHHC", NULL);
    CHECK_NEAR(b.num[H], 8, 1e-12);
    CHECK_NEAR(b.den[H], 16, 0);
    CHECK_NEAR(b.num[C], 2, 1e-12);
    CHECK_NEAR(b.den[C], 2, 0);
    check_sov(&b, H, 0.5);
    check_sov(&b, E, NAN);
    check_sov(&b, C, 1.0);
    check_sov(&b, ALL, 5.0 / 9.0);

    /* An observed strand with no overlap (S'), and one predicted coil
     * overlapping two observed ones.
     * obs  CCEEEECCCC: C[0-1] E[2-5] C[6-9]
     * pred CCCCCCCCCC: C[0-9]
     * E: E[2-5] in S'(E): N 4, numerator 0, SOV_E = 0
     * C: C[0-1] x C[0-9]: minov 2, maxov 10, delta = min(8, 2, 1, 5) = 1,
     *    term (2+1)/10*2 = 0.6; N 2
     *    C[6-9] x C[0-9]: minov 4, maxov 10, delta = min(6, 4, 2, 5) = 2,
     *    term (4+2)/10*4 = 2.4; N 4
     *    SOV_C = 3/6 = 0.5
     * all: 3/(4 + 6) = 0.3 */
    FsSov c = sov_chain("CCEEEECCCC", "CCCCCCCCCC", NULL);
    CHECK_NEAR(c.num[E], 0, 0);
    CHECK_NEAR(c.den[E], 4, 0);
    CHECK_NEAR(c.num[C], 3, 1e-12);
    CHECK_NEAR(c.den[C], 6, 0);
    check_sov(&c, H, NAN);
    check_sov(&c, E, 0.0);
    check_sov(&c, C, 0.5);
    check_sov(&c, ALL, 0.3);

    /* Segments touching both ends; the last observed helix has no partner.
     * obs  HHHCCHHH: H[0-2] C[3-4] H[5-7]
     * pred HHHHCCCC: H[0-3] C[4-7]
     * H: H[0-2] x H[0-3]: minov 3, maxov 4, delta = min(1, 3, 1, 2) = 1,
     *    term (3+1)/4*3 = 3; N 3
     *    H[5-7]: no predicted H overlaps it, S': N 3
     *    SOV_H = 3/6 = 0.5
     * C: C[3-4] x C[4-7]: minov 1, maxov 5 ([3-7]), delta = min(4, 1, 1, 2) = 1,
     *    term (1+1)/5*2 = 0.8; N 2
     *    SOV_C = 0.4
     * all: (3 + 0.8)/(6 + 2) = 0.475 */
    FsSov d = sov_chain("HHHCCHHH", "HHHHCCCC", NULL);
    CHECK_NEAR(d.den[H], 6, 0);
    check_sov(&d, H, 0.5);
    check_sov(&d, E, NAN);
    check_sov(&d, C, 0.4);
    check_sov(&d, ALL, 0.475);

    /* A masked residue inside an observed helix. Unmasked first:
     * obs  CHHHHHHHC: C[0] H[1-7] C[8]
     * pred CHHHHHCCC: C[0] H[1-5] C[6-8]
     * H: H[1-7] x H[1-5]: minov 5, maxov 7, delta = min(2, 5, 3, 2) = 2,
     *    term (5+2)/7*7 = 7; N 7, SOV_H = 1
     * C: C[0] x C[0]: term 1; N 1
     *    C[8] x C[6-8]: minov 1, maxov 3, delta = min(2, 1, 0, 1) = 0,
     *    term 1/3*1 = 1/3; N 1
     *    SOV_C = (4/3)/2 = 2/3
     * all: (7 + 4/3)/(7 + 2) = 25/27 */
    FsSov e0 = sov_chain("CHHHHHHHC", "CHHHHHCCC", NULL);
    check_sov(&e0, H, 1.0);
    check_sov(&e0, C, 2.0 / 3.0);
    check_sov(&e0, ALL, 25.0 / 27.0);
    /* Residue 4 masked (its states, E here, are ignored: no E segment):
     * obs  CHHH.HHHC: C[0] H[1-3] H[5-7] C[8]
     * pred CHHH.HCCC: C[0] H[1-3] H[5] C[6-8]
     * H: H[1-3] x H[1-3]: minov 3 = maxov, delta = min(0, ...) = 0, term 3; N 3
     *    H[5-7] x H[5]: minov 1, maxov 3, delta = min(2, 1, 1, 0) = 0,
     *    term 1/3*3 = 1; N 3
     *    SOV_H = 4/6 = 2/3
     * C: as unmasked, 2/3
     * all: (4 + 4/3)/(6 + 2) = 2/3 */
    FsSov e1 = sov_chain("CHHHEHHHC", "CHHHEHCCC", "111101111");
    CHECK_NEAR(e1.num[H], 4, 1e-12);
    CHECK_NEAR(e1.den[H], 6, 0);
    CHECK(e1.den[E] == 0 && e1.num[E] == 0);
    check_sov(&e1, H, 2.0 / 3.0);
    check_sov(&e1, E, NAN);
    check_sov(&e1, C, 2.0 / 3.0);
    check_sov(&e1, ALL, 2.0 / 3.0);

    /* All correct: every pair has minov = maxov = len1, delta 0, term len1. */
    FsSov f = sov_chain("CCHHHHCCEEEECCEH", "CCHHHHCCEEEECCEH", NULL);
    check_sov(&f, H, 1.0);
    check_sov(&f, E, 1.0);
    check_sov(&f, C, 1.0);
    check_sov(&f, ALL, 1.0);
    CHECK_NEAR(f.den[H], 5, 0);
    CHECK_NEAR(f.den[E], 5, 0);
    CHECK_NEAR(f.den[C], 6, 0);

    /* All wrong: obs H[0-2] E[3-5] C[6-8], pred E[0-2] C[3-5] H[6-8]; no
     * pair, every observed segment in S': N 3 each, numerators 0. */
    FsSov g = sov_chain("HHHEEECCC", "EEECCCHHH", NULL);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(g.den[k], 3, 0);
        check_sov(&g, k, 0.0);
    }
    check_sov(&g, ALL, 0.0);

    /* Masked first and last residues: obs .HHHC. pred .HHCC. gives
     * H[1-3] x H[1-2]: minov 2, maxov 3, delta = min(1, 2, 1, 1) = 1,
     * term (2+1)/3*3 = 3; N 3 -> SOV_H = 1; C[4] x C[3-4]: minov 1,
     * maxov 2, delta = min(1, 1, 0, 1) = 0, term 1/2; N 1 -> SOV_C = 0.5;
     * all: 3.5/4. */
    FsSov h = sov_chain("EHHHCE", "HHHCCH", "011110");
    check_sov(&h, H, 1.0);
    check_sov(&h, E, NAN);
    check_sov(&h, C, 0.5);
    check_sov(&h, ALL, 3.5 / 4.0);

    /* Two chains accumulate by summing numerators and N:
     * H: (25/6 + 8)/(5 + 16) = (73/6)/21 = 73/126
     * C: (5.4 + 2)/(6 + 2) = 7.4/8 = 0.925
     * all: (287/30 + 10)/(11 + 18) = (587/30)/29 = 587/870 */
    FsSov ab = {0};
    uint8_t o1[11], p1[11], o2[10], p2[10];
    sov_parse("CCCHHHHHCCC", o1);
    sov_parse("CCHHHHCCCCC", p1);
    sov_parse("CHHHHHHHHC", o2);
    sov_parse("CHHHCCHHHC", p2);
    metrics_sov_add(&ab, o1, p1, NULL, 11);
    metrics_sov_add(&ab, o2, p2, NULL, 10);
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(ab.num[k], a.num[k] + b.num[k], 1e-12);
        CHECK(ab.den[k] == a.den[k] + b.den[k]);
    }
    check_sov(&ab, H, 73.0 / 126.0);
    check_sov(&ab, E, NAN);
    check_sov(&ab, C, 0.925);
    check_sov(&ab, ALL, 587.0 / 870.0);
}

static void test_degenerate(void)
{
    uint8_t o[4] = {H, H, E, C}, m0[4] = {0, 0, 0, 0};
    FsSov s = {0};
    metrics_sov_add(&s, o, o, m0, 4); /* everything masked */
    metrics_sov_add(&s, o, o, NULL, 0);
    metrics_sov_add(&s, NULL, o, NULL, 4);
    metrics_sov_add(&s, o, NULL, NULL, 4);
    metrics_sov_add(NULL, o, o, NULL, 4);
    for (int k = 0; k <= ALL; k++) check_sov(&s, k, NAN);
    check_sov(&s, -1, NAN);
    check_sov(&s, 4, NAN);
    CHECK(isnan(metrics_sov(NULL, ALL)));

    /* One residue: C[0] x C[0], term 1, N 1. */
    uint8_t one = C;
    FsSov t = {0};
    metrics_sov_add(&t, &one, &one, NULL, 1);
    check_sov(&t, C, 1.0);
    check_sov(&t, ALL, 1.0);

    /* States above 2 (bad input) make segments no state counts:
     * obs H H 7 7 H, pred H 9 9 H H: H[0-1] x H[0]: minov 1, maxov 2,
     * delta = min(1, 1, 1, 0) = 0, term 1/2*2 = 1; N 2. H[4] x H[3-4]:
     * minov 1, maxov 2, delta = min(1, 1, 0, 1) = 0, term 1/2; N 1.
     * SOV_H = 1.5/3 = 0.5. */
    uint8_t bo[5] = {H, H, 7, 7, H}, bp[5] = {H, 9, 9, H, H};
    FsSov u = {0};
    metrics_sov_add(&u, bo, bp, NULL, 5);
    check_sov(&u, H, 0.5);
    check_sov(&u, E, NAN);
    check_sov(&u, C, NAN);
    check_sov(&u, ALL, 0.5);
}

/* ---- brute force straight from the definition, for random chains ---- */

typedef struct {
    uint32_t a, b; /* first, last residue */
    uint8_t st;
} Seg;

static int brute_segments(const uint8_t *st, const uint8_t *sc, uint32_t n, Seg *out)
{
    int m = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (sc && !sc[k]) continue;
        if (m > 0 && out[m - 1].b == k - 1 && out[m - 1].st == st[k] && (!sc || sc[k - 1]))
            out[m - 1].b = k;
        else
            out[m++] = (Seg){k, k, st[k]};
    }
    return m;
}

static void brute_sov(FsSov *s, const uint8_t *o, const uint8_t *p, const uint8_t *sc, uint32_t n)
{
    Seg so[MAXN], sp[MAXN];
    int no = brute_segments(o, sc, n, so), np = brute_segments(p, sc, n, sp);
    for (int i = 0; i < no; i++) {
        if (so[i].st > 2) continue;
        int any = 0;
        double len1 = so[i].b - so[i].a + 1;
        for (int j = 0; j < np; j++) {
            if (sp[j].st != so[i].st || sp[j].b < so[i].a || sp[j].a > so[i].b) continue;
            any = 1;
            double len2 = sp[j].b - sp[j].a + 1;
            double minov = fmin(so[i].b, sp[j].b) - fmax(so[i].a, sp[j].a) + 1;
            double maxov = fmax(so[i].b, sp[j].b) - fmin(so[i].a, sp[j].a) + 1;
            double delta = fmin(fmin(maxov - minov, minov),
                                fmin(floor(len1 / 2), floor(len2 / 2)));
            s->num[so[i].st] += (minov + delta) / maxov * len1;
            s->den[so[i].st] += len1;
        }
        if (!any) s->den[so[i].st] += len1;
    }
}

static void test_against_brute_force(void)
{
    FsRng r;
    const uint64_t seed = 12345;
    fs_rng_seed(&r, &seed, 1);
    int bad = 0;
    for (int it = 0; it < 5000; it++) {
        uint32_t n = fs_rng_below(&r, MAXN + 1);
        uint8_t o[MAXN], p[MAXN], sc[MAXN];
        /* Long runs, so segments of many lengths occur; now and then a
         * state above 2, and masks in some chains. */
        uint8_t so = 0, sp = 0;
        int masked = fs_rng_below(&r, 2);
        for (uint32_t k = 0; k < n; k++) {
            if (fs_rng_below(&r, 4) == 0) so = (uint8_t)fs_rng_below(&r, 3);
            if (fs_rng_below(&r, 4) == 0) sp = (uint8_t)fs_rng_below(&r, 3);
            o[k] = fs_rng_below(&r, 50) == 0 ? 5 : so;
            p[k] = fs_rng_below(&r, 50) == 0 ? 6 : sp;
            sc[k] = masked ? fs_rng_below(&r, 8) != 0 : 1;
        }
        FsSov fast = {0}, slow = {0};
        metrics_sov_add(&fast, o, p, masked ? sc : NULL, n);
        brute_sov(&slow, o, p, masked ? sc : NULL, n);
        for (int k = 0; k < 3; k++)
            if (fabs(fast.num[k] - slow.num[k]) > 1e-9 || fast.den[k] != slow.den[k]) bad++;
    }
    CHECK_MSG(bad == 0, "%d mismatches with the brute force", bad);
}

static void test_long(void)
{
    /* 100k residues with protein-like segment lengths, predicted as the
     * truth with noise; and 1M residues of alternating H/C against an
     * all-H prediction (one s2 overlapping 500k s1: quadratic code would
     * take minutes). */
    enum { N1 = 100000, N2 = 1000000 };
    uint8_t *o = malloc(N2), *p = malloc(N2), *sc = malloc(N2);
    CHECK(o && p && sc);
    if (!o || !p || !sc) return;
    FsRng r;
    const uint64_t seed = 7;
    fs_rng_seed(&r, &seed, 1);
    uint8_t st = C;
    for (uint32_t k = 0; k < N1; k++) {
        if (fs_rng_below(&r, 8) == 0) st = (uint8_t)fs_rng_below(&r, 3);
        o[k] = st;
        p[k] = fs_rng_below(&r, 4) == 0 ? (uint8_t)fs_rng_below(&r, 3) : st;
        sc[k] = fs_rng_below(&r, 100) != 0;
    }
    clock_t t0 = clock();
    FsSov s = {0};
    metrics_sov_add(&s, o, p, sc, N1);
    for (int k = 0; k <= ALL; k++) {
        double v = metrics_sov(&s, k);
        CHECK_MSG(v >= 0.0 && v <= 1.0, "class %d: %g", k, v);
    }
    for (uint32_t k = 0; k < N2; k++) {
        o[k] = k % 2 ? C : H;
        p[k] = H;
    }
    FsSov w = {0};
    metrics_sov_add(&w, o, p, NULL, N2);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    /* Each H[k] x H[0-999999]: minov 1, maxov 1e6, delta = min(.., 1, 0, ..) = 0,
     * term 1e-6; 500k of them over N 500k: SOV_H = 1e-6. C: all S', 0. */
    check_sov(&w, H, 1e-6);
    check_sov(&w, C, 0.0);
    CHECK_MSG(secs < 5.0, "%.2f s for 1.1M residues", secs);
    printf("sov: 1.1M residues in %.3f s\n", secs);
    free(o);
    free(p);
    free(sc);
}

/* ---- quantiles and bootstrap ---- */

static void test_quantile(void)
{
    double odd[3] = {5, 1, 3};
    CHECK(metrics_quantile(odd, 3, 0.5) == 3.0); /* sorted 1 3 5, position 1 */
    CHECK(odd[0] == 5 && odd[1] == 1 && odd[2] == 3); /* left as it was */
    double even[4] = {4, 1, 3, 2};
    CHECK(metrics_quantile(even, 4, 0.5) == 2.5); /* position 1.5: 2 + 0.5*(3-2) */
    double ten[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    CHECK_NEAR(metrics_quantile(ten, 10, 0.1), 1.9, 1e-12); /* position 0.9: 1 + 0.9 */
    CHECK_NEAR(metrics_quantile(ten, 10, 0.9), 9.1, 1e-12); /* position 8.1: 9 + 0.1 */
    CHECK(metrics_quantile(ten, 10, 0.0) == 1.0);
    CHECK(metrics_quantile(ten, 10, 1.0) == 10.0);
    CHECK(metrics_quantile(ten, 10, -0.5) == 1.0); /* clamped */
    CHECK(metrics_quantile(ten, 10, 7.0) == 10.0);
    CHECK(ten[0] == 10 && ten[9] == 1);
    double five[5] = {50, 10, 40, 20, 30};
    CHECK(metrics_quantile(five, 5, 0.25) == 20.0);             /* position 1 */
    CHECK_NEAR(metrics_quantile(five, 5, 0.3), 22.0, 1e-12);    /* position 1.2 */
    CHECK_NEAR(metrics_quantile(five, 5, 0.975), 49.0, 1e-12);  /* position 3.9: 40 + 0.9*10 */
    CHECK_NEAR(metrics_quantile(five, 5, 0.025), 11.0, 1e-12);  /* position 0.1: 10 + 0.1*10 */
    double one = 0.7;
    CHECK(metrics_quantile(&one, 1, 0.3) == 0.7);
    double withnan[3] = {1, NAN, 2};
    CHECK(isnan(metrics_quantile(withnan, 3, 0.5)));
    CHECK(isnan(metrics_quantile(ten, 0, 0.5)));
    CHECK(isnan(metrics_quantile(ten, -3, 0.5)));
    CHECK(isnan(metrics_quantile(NULL, 3, 0.5)));
    CHECK(isnan(metrics_quantile(ten, 10, NAN)));
    double inf[3] = {1, 2, INFINITY};
    CHECK(metrics_quantile(inf, 3, 0.5) == 2.0);
    CHECK(metrics_quantile(inf, 3, 0.75) == INFINITY); /* between 2 and inf */
    double ninf[2] = {1, -INFINITY};
    CHECK(metrics_quantile(ninf, 2, 0.5) == -INFINITY);
    double both[2] = {INFINITY, -INFINITY};
    CHECK(isnan(metrics_quantile(both, 2, 0.5)));
    CHECK(metrics_quantile(both, 2, 1.0) == INFINITY);
}

static void test_bootstrap(void)
{
    enum { NP = 300 };
    uint64_t cor[NP], tot[NP], sc = 0, st = 0;
    FsRng r;
    const uint64_t seed = 99;
    fs_rng_seed(&r, &seed, 1);
    for (int i = 0; i < NP; i++) {
        tot[i] = 50 + fs_rng_below(&r, 450);
        uint32_t pct = 60 + fs_rng_below(&r, 30); /* per-protein Q3 60..89% */
        cor[i] = tot[i] * pct / 100;
        sc += cor[i];
        st += tot[i];
    }
    double point = (double)sc / (double)st;
    double lo1, hi1, lo2, hi2, lo3, hi3;
    CHECK(metrics_bootstrap_q3(cor, tot, NP, 2000, 1, &lo1, &hi1) == 0);
    CHECK(metrics_bootstrap_q3(cor, tot, NP, 2000, 1, &lo2, &hi2) == 0);
    CHECK(memcmp(&lo1, &lo2, sizeof lo1) == 0 && memcmp(&hi1, &hi2, sizeof hi1) == 0);
    CHECK(metrics_bootstrap_q3(cor, tot, NP, 2000, 2, &lo3, &hi3) == 0);
    CHECK(lo3 != lo1 || hi3 != hi1);
    CHECK_NEAR(lo3, lo1, 0.005);
    CHECK_NEAR(hi3, hi1, 0.005);
    CHECK_MSG(lo1 <= point && point <= hi1, "%g <= %g <= %g", lo1, point, hi1);
    CHECK_MSG(lo1 < hi1 && hi1 - lo1 < 0.05, "interval %g..%g", lo1, hi1);
    printf("bootstrap: Q3 %.4f, 95%% %.4f..%.4f (seed 2: %.4f..%.4f)\n", point, lo1, hi1, lo3,
           hi3);

    /* Every protein at Q3 0.75: every resample is exactly 0.75. */
    uint64_t c4[4] = {30, 60, 90, 3}, t4[4] = {40, 80, 120, 4};
    double lo, hi;
    CHECK(metrics_bootstrap_q3(c4, t4, 4, 500, 5, &lo, &hi) == 0);
    CHECK(lo == 0.75 && hi == 0.75);
    CHECK(metrics_bootstrap_q3(c4, t4, 1, 10, 5, &lo, &hi) == 0);
    CHECK(lo == 0.75 && hi == 0.75);

    /* Bad arguments: -1, bounds NAN. */
    CHECK(metrics_bootstrap_q3(c4, t4, 0, 100, 5, &lo, &hi) == -1);
    CHECK(isnan(lo) && isnan(hi));
    CHECK(metrics_bootstrap_q3(c4, t4, 4, 0, 5, &lo, &hi) == -1);
    CHECK(metrics_bootstrap_q3(NULL, t4, 4, 10, 5, &lo, &hi) == -1);
    CHECK(metrics_bootstrap_q3(c4, t4, 4, 10, 5, NULL, &hi) == -1);
    /* Nothing scored anywhere: every resample skipped, NAN bounds. */
    uint64_t z[2] = {0, 0};
    CHECK(metrics_bootstrap_q3(z, z, 2, 10, 5, &lo, &hi) == 0);
    CHECK(isnan(lo) && isnan(hi));
}

int main(void)
{
    test_hand_cases();
    test_degenerate();
    test_against_brute_force();
    test_long();
    test_quantile();
    test_bootstrap();
    return test_finish();
}
