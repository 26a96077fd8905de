/*
 * ops_gemm: ops_gemm on its own (included by ops_steps.c), against its
 * contract in core.h, for the stride patterns the layers use: plain rows
 * (dense forward), two-level rows of padded tensors (convolution forward
 * and input gradient), two-level k with adjacent A rows (weight gradients:
 * the CPU's 8 x 32 tile), C stored transposed (the dense input gradient),
 * and weight gradients with a long k (k-blocked on AVX2, gemm_long.h).
 * Every element of C not in the product must be left as it was (partial
 * tiles store only their part).
 */

static long stride_extent(FsStride st, long n)
{
    return n > 0 ? ref_stride_off(st, n - 1) + 1 : 0;
}

static FsStride two_level(int g, int pad, long s)
{
    FsStride st = {g, (long)(g + 2 * pad) * s, s};
    return st;
}

static const char *const gemm_patterns[] = {"plain", "padded rows", "two-level k", "transposed C", "long k",
                                            "two-level k in A, B staged"};

/* One product of pattern pat (an index of gemm_patterns) on every backend,
 * against the reference. */
static void gemm_case(int pat, int M, int N, int K, int g, int pad)
{
    FsStride am = st_plain(K + irand(3)), ak = st_plain(1), bk = st_plain(N + irand(9)), cm = st_plain(N + irand(3));
    long cn = 1;
    if (pat == 1) {
        am = two_level(g, pad, 1 + irand(K + 2));
        cm = two_level(g, pad, N + irand(3));
    } else if (pat == 2 || pat == 4) {
        am = st_plain(1);
        ak = g ? two_level(g, pad, M + irand(5)) : st_plain(M + irand(5));
        bk = g ? two_level(g, pad, N + irand(9)) : st_plain(N + irand(9));
    } else if (pat == 5) {
        /* A dilated convolution's forward: A's k in groups (a tap's
         * channels, then the jump to the next tap), B plain with rows
         * 16-byte aligned, which the emulated block stages in chunks of a
         * whole number of groups (train/gemm_stage.h). */
        ak = two_level(g, pad, 1);
        am = st_plain(stride_extent(ak, K) + irand(3));
        bk = st_plain((N + 3) / 4 * 4 + 4 * irand(3));
    } else if (pat == 3) {
        bk = st_plain((N + 7) / 8 * 8);
        cm = st_plain(1);
        cn = M + irand(3);
    }
    /* Extents: B's rows are read up to their stride (the contract). */
    const long na = stride_extent(am, M) + stride_extent(ak, K);
    const long nb = (K > 0 ? ref_stride_off(bk, K - 1) : 0) + (bk.s > N ? bk.s : N);
    const long nc = stride_extent(cm, M) + (long)(N - 1) * cn;
    const long ob = (na + 15) / 16 * 16, oc = ob + (nb + 15) / 16 * 16, total = oc + nc + 16;
    OpsRun r;
    arena_init(&r, NULL, 0, sizeof(float) * (size_t)total);
    float *f = (float *)r.in;
    fill(f, total, -1.0f, 1.0f);
    OpsCall call;
    memset(&call, 0, sizeof call);
    call.kind = OPS_GEMM;
    call.M = M, call.N = N, call.K = K;
    call.a = 0, call.b = ob, call.c = oc;
    call.am = am, call.ak = ak, call.bk = bk, call.cm = cm, call.cn = cn;
    char what[160];
    snprintf(what, sizeof what, "gemm %s, %d x %d x %d, groups of %d", gemm_patterns[pat], M, N, K, g);
    run_call(&r, what, &call);

    /* C += A B, and its magnitudes from |A| |B| + |C|. */
    double *ref = fs_malloc(sizeof(double) * (size_t)nc), *mag = fs_malloc(sizeof(double) * (size_t)nc);
    float *aa = abs_copy(f, oc);
    unsigned char *in_c = fs_calloc((size_t)nc, 1);
    for (long j = 0; j < nc; j++) ref[j] = f[oc + j], mag[j] = fabs(f[oc + j]);
    ref_gemm(M, N, K, f, am, ak, f + ob, bk, ref, cm, cn);
    ref_gemm(M, N, K, aa, am, ak, aa + ob, bk, mag, cm, cn);
    for (int row = 0; row < M; row++)
        for (int n = 0; n < N; n++) in_c[ref_stride_off(cm, row) + n * cn] = 1;
    for (int be = 0; be < BE_N; be++) {
        if (!r.out[be]) continue;
        const float *got = (const float *)r.out[be];
        long bad = 0, moved = 0;
        for (long j = 0; j < nc; j++) {
            if (!in_c[j]) {
                moved += got[oc + j] != f[oc + j];
                continue;
            }
            double tol = (K + 1 + 16) * U_ROUND * mag[j];
            if (fabs(got[oc + j] - ref[j]) > tol && bad++ < 3)
                fprintf(stderr, "  %s (%s): C[%ld] %.9g, reference %.9g, tolerance %.3g\n", what, be_name[be], j,
                        got[oc + j], ref[j], tol);
        }
        CHECK_MSG(bad == 0, "%s (%s): %ld values of C off", what, be_name[be], bad);
        CHECK_MSG(moved == 0, "%s (%s): %ld floats outside C's elements written", what, be_name[be], moved);
        check_same("gemm: A and B (read only)", be, got, f, oc);
    }
    free(ref), free(mag), free(aa), free(in_c);
    arena_free(&r);
}

static void gemm_cases(void)
{
    static const int Ms[] = {1, 3, 4, 5, 8, 13, 33, 64}, Ns[] = {1, 3, 7, 8, 9, 16, 17, 31, 32, 33, 40};
    static const int Ks[] = {1, 2, 9, 21, 64, 100};
    for (int i = 0; i < 32; i++) {
        const int M = pick(Ms, 8), N = pick(Ns, 11), K = pick(Ks, 6), g = 1 + irand(5);
        gemm_case(i % 4, M, N, K, g, irand(3));
    }
    /* Weight gradients with a long k (the CPU's k-blocked path on AVX2,
     * gemm_long.h): whole tiles, k plain or in groups longer than a block
     * and cut mid-block, and shapes that fall back (17 columns, groups of 9). */
    static const int Ml[] = {4, 8, 64, 320}, Nl[] = {16, 32, 64}, Kl[] = {512, 700, 1500};
    for (int i = 0; i < 12; i++) {
        const int M = pick(Ml, 4), N = pick(Nl, 3), K = pick(Kl, 3), g = i % 3 == 0 ? 0 : 130 + irand(400);
        gemm_case(4, M, N, K, g, irand(3));
    }
    /* B staged in chunks under the emulated block (ops_emu.c's staging
     * areas in turn): A's k in groups, whole and partial tiles. */
    static const int Ms5[] = {5, 8, 13, 33}, Ns5[] = {4, 7, 16, 17}, Ks5[] = {64, 100, 203};
    for (int i = 0; i < 12; i++) gemm_case(5, pick(Ms5, 4), pick(Ns5, 4), pick(Ks5, 3), 1 + irand(5), irand(3));
    gemm_case(4, 8, 17, 600, 0, 0);
    gemm_case(4, 8, 16, 600, 9, 1);
    /* AVX2's 4 x 24 tiles (gemm.c, tile_full24): whole ones with plain and
     * two-level walks, and slots it leaves to the 16 + 8 split (a short
     * row block, a short last slot, C transposed). */
    gemm_case(0, 8, 48, 64, 0, 0);
    gemm_case(2, 12, 72, 21, 4, 2);
    gemm_case(0, 5, 24, 9, 0, 0);
    gemm_case(0, 8, 40, 33, 0, 0);
    gemm_case(3, 8, 48, 17, 0, 0);
}
