/*
 * ops_steps: the ops of a step around the layers (included by
 * tests/test_ops.c): softmax cross-entropy, the optimizer step with
 * clipping, a batch's windows, and the bare GEMM with each stride pattern
 * the layers use.
 */

/* ---------------------------------------------------------------------- */
/* Softmax cross-entropy: per-example loss, the gradient, predictions.      */

static void loss_cases(void)
{
    LayerCase lc;
    memset(&lc, 0, sizeof lc);
    for (int i = 0; i < 4; i++) {
        const int B = batches[i], mb = B + i;
        lc.arch.window = 5;
        lc.arch.n_layers = 1;
        lc.arch.layers[0] = dense(4, FS_ACT_RELU);
        snprintf(lc.what, sizeof lc.what, "softmax cross-entropy, batch %d of %d", B, mb);
        case_setup(&lc, 1, B, mb);
        FsModel m0 = arena_model(&lc.r, lc.r.in);
        const FsLayer *y = &lc.net.layer[1];
        fill(m0.work + y->a, (long)mb * FS_CLASSES, -4.0f, 4.0f); /* logits */
        OpsCall call;
        memset(&call, 0, sizeof call);
        call.kind = OPS_LOSS;
        call.B = B;
        run_call(&lc.r, lc.what, &call);

        const RefShape ls = flat_shape(B), ds = {B, 1, 0, FS_CLASSES};
        double loss[16], lmag[16], dz[16 * FS_CLASSES], dmag[16 * FS_CLASSES], total = 0.0, ttol = 0.0;
        int pred[16];
        uint64_t conf[3][3] = {{0}};
        ref_softmax_xent(m0.work + y->a, m0.labels, B, loss, dz, pred);
        for (int b = 0; b < B; b++) {
            const float *z = m0.work + y->a + b * FS_CLASSES;
            float mx = z[0];
            for (int k = 1; k < FS_CLASSES; k++) mx = z[k] > mx ? z[k] : mx;
            /* log of a sum of 1..3 exponentials, less the label's logit */
            lmag[b] = 2.0 + fabs(z[m0.labels[b]] - mx);
            for (int k = 0; k < FS_CLASSES; k++) dmag[b * FS_CLASSES + k] = 1.0 / B;
            total += loss[b];
            ttol += (FS_CLASSES + 16) * U_ROUND * lmag[b];
            conf[m0.labels[b]][pred[b]]++;
        }
        for (int be = 0; be < BE_N; be++) {
            if (!lc.r.out[be]) continue;
            FsModel m = arena_model(&lc.r, lc.r.out[be]);
            check_tensor("per-example loss", be, ls, m.ex_loss, loss, lmag, FS_CLASSES);
            check_tensor("logit gradient", be, ds, m.work + y->d, dz, dmag, FS_CLASSES);
            int same = 1;
            for (int b = 0; b < B; b++) same &= m.ex_pred[b] == pred[b];
            CHECK_MSG(same, "%s (%s): predicted classes", lc.what, be_name[be]);
            CHECK_MSG(memcmp(conf, lc.r.call[be].conf, sizeof conf) == 0, "%s (%s): confusion", lc.what, be_name[be]);
            CHECK_MSG(fabs(lc.r.call[be].ret - total) <= ttol, "%s (%s): total loss %.9g, reference %.9g", lc.what,
                      be_name[be], lc.r.call[be].ret, total);
        }
        arena_free(&lc.r);
    }
}

/* ---------------------------------------------------------------------- */
/* The optimizer step over every parameter (or those the fused backward    */
/* left), with the global norm and clipping.                               */

static void update_case(LayerCase *lc, FsTrainSpec ts, long t, int fused, int nan)
{
    snprintf(lc->what, sizeof lc->what, "%s, weight decay %g, clip %s, step %ld%s%s", train_opt_name(ts.opt),
             ts.weight_decay, ts.clip_norm == 0.0f ? "off" : ts.clip_norm > 1e20f ? "not reached" : "reached", t,
             fused ? ", after a fused backward" : "", nan ? ", NaN gradient" : "");
    case_setup(lc, 0, ts.batch, ts.batch);
    lc->r.sc.step = t - 1;
    lc->r.sc.lr = ts.lr;
    FsModel m0 = arena_model(&lc->r, lc->r.in);
    const FsNet *net = &lc->net;
    const long n = net->n_params;
    /* What step_update owns: with fused, not the dense weight matrices. */
    unsigned char *skip = fs_calloc((size_t)n, 1);
    for (int i = 0; fused && i < net->n; i++)
        if (step_layer_fused(&net->layer[i])) memset(skip + net->layer[i].w, 1, (size_t)net->layer[i].n_w);
    double ss = 0.0, *g = fs_malloc(sizeof(double) * (size_t)n), *gerr = fs_calloc((size_t)n, sizeof(double));
    long owned = 0;
    for (long i = 0; i < n; i++) {
        g[i] = m0.g[i];
        if (!skip[i]) ss += g[i] * g[i], owned++;
    }
    const double norm = sqrt(ss);
    if (ts.clip_norm > 0.0f && ts.clip_norm < 1e20f) ts.clip_norm = (float)(0.37 * norm); /* clearly reached */
    if (nan) m0.g[irand((int)n)] = NAN;
    const double scale = ref_clip_scale(norm, ts.clip_norm);
    /* The float norm (16 lanes, chunks, in order) errs by at most (n + 2) u / 2
     * relative; so does a scale made from it. */
    const double srel = scale < 1.0 ? (owned + 16) * U_ROUND : 0.0;
    OpsCall call;
    memset(&call, 0, sizeof call);
    call.kind = OPS_UPDATE;
    call.ts = ts;
    call.fused = fused;
    run_call(&lc->r, lc->what, &call);
    for (int be = 0; be < BE_N; be++) {
        if (!lc->r.out[be]) continue;
        FsModel m = arena_model(&lc->r, lc->r.out[be]);
        const double got = lc->r.call[be].ret;
        check_same("gradients (read only)", be, m.g, m0.g, n);
        check_same("batch norm running statistics", be, m.w + n, m0.w + n, net->n_state);
        if (nan) {
            CHECK_MSG(got != got, "%s (%s): norm %g, expected NaN", lc->what, be_name[be], got);
            check_same("weights after a NaN gradient", be, m.w, m0.w, n);
            continue;
        }
        CHECK_MSG(lc->r.call[be].step == t, "%s (%s): step %ld after the update, expected %ld", lc->what,
                  be_name[be], lc->r.call[be].step, t);
        CHECK_MSG(fabs(got - norm) <= (owned + 16) * U_ROUND * norm, "%s (%s): norm %.9g, reference %.9g", lc->what,
                  be_name[be], got, norm);
        check_optimizer(lc->what, be, &ts, t, scale, srel, n, m0.w, m0.m1, m0.m2, g, gerr, m.w, m.m1, m.m2, skip);
        for (long i = 0; i < n; i++)
            if (skip[i]) {
                check_same("fused weights (step_update's to leave)", be, m.w + i, m0.w + i, 1);
                check_same("their moments", be, m.m1 + i, m0.m1 + i, 1);
                check_same("their moments", be, m.m2 + i, m0.m2 + i, 1);
            }
    }
    free(skip), free(g), free(gerr);
    arena_free(&lc->r);
}

static void update_cases(void)
{
    LayerCase lc;
    memset(&lc, 0, sizeof lc);
    lc.arch.window = 9;
    lc.arch.n_layers = 3;
    lc.arch.layers[0] = conv(13, 3, FS_ACT_SWISH);
    lc.arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
    lc.arch.layers[2] = dense(37, FS_ACT_TANH);
    const FsOptKind opts[] = {FS_OPT_SGD, FS_OPT_ADAM, FS_OPT_ADAMW};
    const float clips[] = {0.0f, 1e30f, 1.0f}; /* off, not reached, reached (set from the norm) */
    const long steps[] = {1, 2, 6};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    for (int o = 0; o < 3; o++)
        for (int d = 0; d < 2; d++)
            for (int c = 0; c < 3; c++) {
                ts.opt = opts[o];
                ts.lr = ts.opt == FS_OPT_SGD ? 0.05f : 1e-3f;
                ts.weight_decay = d ? 1e-2f : 0.0f;
                ts.clip_norm = clips[c];
                update_case(&lc, ts, steps[(o + d + c) % 3], 0, 0);
                if (c == 0) update_case(&lc, ts, steps[(o + c) % 3], 1, 0);
            }
    ts.clip_norm = 0.0f;
    update_case(&lc, ts, 3, 0, 1);
}

/* ---------------------------------------------------------------------- */
/* A batch's windows: codes and labels, exactly.                            */

static void load_cases(void)
{
    enum { NRES = 300 };
    const int windows[] = {1, 3, 9, 17, 31};
    LayerCase lc;
    memset(&lc, 0, sizeof lc);
    lc.extra = 4 * NRES + 4 * 16;
    for (int i = 0; i < 5; i++) {
        const int L = windows[i], B = batches[i % 4];
        lc.arch.window = L;
        lc.arch.n_layers = 1;
        lc.arch.layers[0] = dense(3, FS_ACT_RELU);
        snprintf(lc.what, sizeof lc.what, "batch windows, L %d, batch %d", L, B);
        case_setup(&lc, 0, B, B + 2);
        uint8_t *aa = (uint8_t *)lc.r.in + lc.r.model_bytes, *ss = aa + NRES, *left = ss + NRES, *right = left + NRES;
        uint32_t *idx = (uint32_t *)(right + NRES);
        /* Segments of 1 to 40 residues (proteins, chain breaks). */
        for (int r0 = 0; r0 < NRES;) {
            int len = 1 + irand(40);
            len = r0 + len > NRES ? NRES - r0 : len;
            for (int r = r0; r < r0 + len; r++) {
                aa[r] = (uint8_t)irand(FS_AA_INPUTS);
                ss[r] = (uint8_t)irand(8);
                left[r] = (uint8_t)(r - r0);
                right[r] = (uint8_t)(r0 + len - 1 - r);
            }
            r0 += len;
        }
        for (int b = 0; b < B; b++) idx[b] = (uint32_t)irand(NRES);
        OpsCall call;
        memset(&call, 0, sizeof call);
        call.kind = OPS_LOAD;
        call.B = B;
        call.aa = (long)lc.r.model_bytes;
        call.ss = call.aa + NRES;
        call.left = call.ss + NRES;
        call.right = call.left + NRES;
        call.idx = call.right + NRES;
        run_call(&lc.r, lc.what, &call);
        uint8_t codes[16 * 31], labels[16];
        for (int b = 0; b < B; b++) ref_load_window(aa, ss, left, right, idx[b], L, codes + b * L, labels + b);
        FsModel m0 = arena_model(&lc.r, lc.r.in);
        for (int be = 0; be < BE_N; be++) {
            if (!lc.r.out[be]) continue;
            FsModel m = arena_model(&lc.r, lc.r.out[be]);
            CHECK_MSG(memcmp(m.codes, codes, (size_t)(B * L)) == 0, "%s (%s): codes", lc.what, be_name[be]);
            CHECK_MSG(memcmp(m.labels, labels, (size_t)B) == 0, "%s (%s): labels", lc.what, be_name[be]);
            CHECK_MSG(memcmp(m.codes + B * L, m0.codes + B * L, (size_t)(2 * L)) == 0,
                      "%s (%s): codes past the batch written", lc.what, be_name[be]);
        }
        arena_free(&lc.r);
    }
}

#include "ops_gemm.c"
