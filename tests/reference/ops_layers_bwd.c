/*
 * ops_layers_bwd: the backward pass of each layer kind against the
 * reference (part of ops_layers.c), from the stored activations of the
 * CPU's forward. Magnitudes: the op on absolute values, the activation
 * derivative with the terms of its computation (grad_mag).
 */

static void backward_linear(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, const FsTrainSpec *fuse_ts,
                            Expects *X, double **fresh, double **fresh_mag)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const FsLayerSpec *s = &y->spec;
    const RefShape os = out_shape(y, lc->B);
    const long no = ref_size(os), rows = (long)lc->B * y->out_l;
    const int U = y->out_c, conv = s->kind == FS_LAYER_CONV;
    const float *a = m0->work + y->a, *aux = s->act == FS_ACT_SWISH ? m0->work + y->z : NULL, *d = m0->work + y->d;
    double *dz = fs_calloc((size_t)no, sizeof(double)), *dzm = fs_calloc((size_t)no, sizeof(double));
    for (long o = 0; o < no; o++) { /* pad rows of d are 0, so are theirs */
        double sg = aux ? aux[o] : 0.0;
        dz[o] = d[o] * ref_act_grad(s->act, s->act_param, a[o], sg);
        dzm[o] = fabs(d[o]) * grad_mag(s->act, s->act_param, a[o], sg);
    }
    const float *W = m0->w + y->w, *gW0 = m0->g + y->w, *gb0 = m0->g + y->b;
    float *ax = abs_copy(x, ref_size(xs)), *aW = abs_copy(W, y->n_w);
    Expect *egb = expect(X, "bias gradient", IN_G, y->b, flat_shape(U), rows + 1, 0);
    for (int u = 0; u < U; u++) egb->ref[u] = gb0[u], egb->mag[u] = fabs(gb0[u]);
    /* Fused: the weights' gradient is never stored; it goes, from zero,
     * into the optimizer (the caller checks that). */
    double *gw = fs_calloc((size_t)y->n_w, sizeof(double)), *gwm = fs_calloc((size_t)y->n_w, sizeof(double));
    if (!fuse_ts) {
        Expect *egw = expect(X, "weight gradient", IN_G, y->w, flat_shape(y->n_w), rows + 1, 0);
        for (long i = 0; i < y->n_w; i++) egw->ref[i] = gW0[i], egw->mag[i] = fabs(gW0[i]);
        free(gw), free(gwm);
        gw = egw->ref, gwm = egw->mag;
    } else {
        *fresh = gw, *fresh_mag = gwm;
    }
    Expect *edx = NULL;
    if (!y->gather) {
        const FsLayer *prev = &lc->net.layer[lc->li - 1];
        edx = expect(X, "input gradient", IN_WORK, prev->d, xs, conv ? (long)s->width * U : U, 1);
    }
    if (conv) {
        ref_conv_wgrad(x, xs, dz, os, s->width, gw, egb->ref);
        ref_conv_wgrad(ax, xs, dzm, os, s->width, gwm, egb->mag);
        if (edx) ref_conv_dgrad(W, s->width, dz, os, xs, edx->ref);
        if (edx) ref_conv_dgrad(aW, s->width, dzm, os, xs, edx->mag);
    } else {
        ref_dense_backward(x, xs, W, dz, U, gw, egb->ref, edx ? edx->ref : NULL);
        ref_dense_backward(ax, xs, aW, dzm, U, gwm, egb->mag, edx ? edx->mag : NULL);
    }
    free(dz), free(dzm), free(ax), free(aW);
}

static void backward_batchnorm(LayerCase *lc, FsModel *m0, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const int C = y->out_c;
    const long N = (long)xs.B * xs.L;
    const float *d = m0->work + y->d, *xhat = m0->work + y->z, *istd = m0->work + y->bn_istd, *gamma = m0->w + y->w;
    Expect *edx = expect(X, "input gradient", IN_WORK, lc->net.layer[lc->li - 1].d, xs, N + 8, 1);
    Expect *egg = expect(X, "gamma gradient", IN_G, y->w, flat_shape(C), N + 1, 0);
    Expect *egb = expect(X, "beta gradient", IN_G, y->b, flat_shape(C), N + 1, 0);
    for (int c = 0; c < C; c++) {
        egg->ref[c] = m0->g[y->w + c], egg->mag[c] = fabs(m0->g[y->w + c]);
        egb->ref[c] = m0->g[y->b + c], egb->mag[c] = fabs(m0->g[y->b + c]);
    }
    ref_batchnorm_backward(d, xhat, istd, gamma, xs, edx->ref, egg->ref, egb->ref);
    for (int c = 0; c < C; c++) {
        double sd = 0.0, sdx = 0.0;
        for (int b = 0; b < xs.B; b++)
            for (int p = 0; p < xs.L; p++) {
                long o = ref_at(xs, b, p, c);
                sd += fabs(d[o]);
                sdx += fabs((double)d[o] * xhat[o]);
            }
        egg->mag[c] += sdx;
        egb->mag[c] += sd;
        for (int b = 0; b < xs.B; b++)
            for (int p = 0; p < xs.L; p++) {
                long o = ref_at(xs, b, p, c);
                edx->mag[o] = fabs(gamma[c]) * istd[c] * (fabs(d[o]) + sd / N + fabs(xhat[o]) * sdx / N);
            }
    }
}

static void backward_layernorm(LayerCase *lc, FsModel *m0, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const int C = y->out_c;
    const long rows = (long)xs.B * xs.L;
    const float *d = m0->work + y->d, *xhat = m0->work + y->z, *istd = m0->work + y->bn_istd, *gamma = m0->w + y->w;
    Expect *edx = expect(X, "input gradient", IN_WORK, lc->net.layer[lc->li - 1].d, xs, (long)C + 8, 1);
    Expect *egg = expect(X, "gamma gradient", IN_G, y->w, flat_shape(C), rows + 1, 0);
    Expect *egb = expect(X, "beta gradient", IN_G, y->b, flat_shape(C), rows + 1, 0);
    for (int c = 0; c < C; c++) {
        egg->ref[c] = m0->g[y->w + c], egg->mag[c] = fabs(m0->g[y->w + c]);
        egb->ref[c] = m0->g[y->b + c], egb->mag[c] = fabs(m0->g[y->b + c]);
    }
    ref_layernorm_backward(d, xhat, istd, gamma, xs, edx->ref, egg->ref, egb->ref);
    for (int b = 0; b < xs.B; b++)
        for (int p = 0; p < xs.L; p++) {
            const long r = (long)b * xs.L + p;
            double sg = 0.0, sgx = 0.0;
            for (int c = 0; c < C; c++) {
                long o = ref_at(xs, b, p, c);
                sg += fabs((double)d[o] * gamma[c]);
                sgx += fabs((double)d[o] * gamma[c] * xhat[o]);
                egg->mag[c] += fabs((double)d[o] * xhat[o]);
                egb->mag[c] += fabs(d[o]);
            }
            for (int c = 0; c < C; c++) {
                long o = ref_at(xs, b, p, c);
                edx->mag[o] = istd[r] * (fabs((double)d[o] * gamma[c]) + sg / C + fabs(xhat[o]) * sgx / C);
            }
        }
}

static void backward_dropout(LayerCase *lc, FsModel *m0, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const float *d = m0->work + y->d;
    Expect *edx = expect(X, "input gradient", IN_WORK, lc->net.layer[lc->li - 1].d, xs, 0, 1);
    for (int b = 0; b < xs.B; b++)
        for (int p = 0; p < xs.L; p++)
            for (int c = 0; c < xs.C; c++) {
                long o = ref_at(xs, b, p, c), e = ((long)b * xs.L + p) * xs.C + c;
                edx->ref[o] = (float)(d[o] * ref_dropout_mask(m0->drop_key, m0->step, lc->li, e, y->spec.rate, 1));
            }
}

static void backward_highway(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const FsLayerSpec *s = &y->spec;
    const int K = s->width, C = y->out_c;
    const long no = ref_size(xs), rows = (long)xs.B * xs.L;
    const float *H = m0->work + y->h, *T = m0->work + y->t, *d = m0->work + y->d;
    const float *S = s->act == FS_ACT_SWISH ? m0->work + y->z : NULL, *W = m0->w + y->w, *W2 = m0->w + y->w2;
    Expect *edx = expect(X, "input gradient", IN_WORK, lc->net.layer[lc->li - 1].d, xs, 2L * K * C + 1, 1);
    Expect *eg[4] = {expect(X, "H weight gradient", IN_G, y->w, flat_shape(y->n_w), rows + 1, 0),
                     expect(X, "H bias gradient", IN_G, y->b, flat_shape(C), rows + 1, 0),
                     expect(X, "T weight gradient", IN_G, y->w2, flat_shape(y->n_w), rows + 1, 0),
                     expect(X, "T bias gradient", IN_G, y->b2, flat_shape(C), rows + 1, 0)};
    for (int k = 0; k < 4; k++)
        for (long i = 0; i < eg[k]->s.L; i++) {
            eg[k]->ref[i] = m0->g[eg[k]->off + i];
            eg[k]->mag[i] = fabs(m0->g[eg[k]->off + i]);
        }
    ref_highway_backward(x, H, T, S, d, xs, W, W2, K, s->act, s->act_param, edx->ref, eg[0]->ref, eg[1]->ref,
                         eg[2]->ref, eg[3]->ref);
    double *hm = fs_calloc((size_t)no, sizeof(double)), *tm = fs_calloc((size_t)no, sizeof(double));
    double *dxm2 = fs_calloc((size_t)no, sizeof(double));
    for (long o = 0; o < no; o++) {
        hm[o] = fabs(d[o]) * T[o] * grad_mag(s->act, s->act_param, H[o], S ? S[o] : 0.0);
        tm[o] = fabs(d[o]) * (fabs(H[o]) + fabs(x[o])) * T[o] * (1.0 - T[o]);
    }
    float *ax = abs_copy(x, no), *aW = abs_copy(W, y->n_w), *aW2 = abs_copy(W2, y->n_w);
    ref_conv_wgrad(ax, xs, hm, xs, K, eg[0]->mag, eg[1]->mag);
    ref_conv_wgrad(ax, xs, tm, xs, K, eg[2]->mag, eg[3]->mag);
    ref_conv_dgrad(aW, K, hm, xs, xs, edx->mag);
    ref_conv_dgrad(aW2, K, tm, xs, xs, dxm2);
    for (long o = 0; o < no; o++) edx->mag[o] += dxm2[o] + fabs(d[o]) * (1.0 - T[o]);
    free(hm), free(tm), free(dxm2), free(ax), free(aW), free(aW2);
}

static void check_backward(LayerCase *lc, const FsTrainSpec *fuse_ts)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const long t = lc->r.sc.step + 1;
    char what[256];
    snprintf(what, sizeof what, "%s, backward%s%s", lc->what, fuse_ts ? ", fused with " : "",
             fuse_ts ? train_opt_name(fuse_ts->opt) : "");
    OpsCall call;
    memset(&call, 0, sizeof call);
    call.kind = OPS_BACKWARD;
    call.layer = lc->li;
    call.B = lc->B;
    call.fuse = fuse_ts != NULL;
    if (fuse_ts) call.opt = step_opt(fuse_ts, t, 1.0f, fuse_ts->lr); /* as step_backward makes it */
    const long fused_before = fs_dense_fused_calls;
    run_call(&lc->r, what, &call);
    CHECK_MSG(fs_dense_fused_calls == fused_before + (fuse_ts != NULL), "%s: the CPU's fused path ran %ld times",
              what, fs_dense_fused_calls - fused_before);

    FsModel m0 = arena_model(&lc->r, lc->r.in);
    RefShape xs;
    float *own;
    const float *x = case_input(lc, &m0, &xs, &own);
    Expects X = {.n = 0};
    double *fresh = NULL, *fresh_mag = NULL;
    switch (y->spec.kind) {
    case FS_LAYER_CONV:
    case FS_LAYER_DENSE:
    case FS_LAYER_OUTPUT:
        backward_linear(lc, &m0, x, xs, fuse_ts, &X, &fresh, &fresh_mag);
        break;
    case FS_LAYER_BATCHNORM:
        backward_batchnorm(lc, &m0, xs, &X);
        break;
    case FS_LAYER_LAYERNORM:
        backward_layernorm(lc, &m0, xs, &X);
        break;
    case FS_LAYER_DROPOUT:
        backward_dropout(lc, &m0, xs, &X);
        break;
    case FS_LAYER_HIGHWAY:
        backward_highway(lc, &m0, x, xs, &X);
        break;
    case FS_LAYER_ADD: /* no reference here: test_grad and test_chain check adds by finite differences */
        CHECK_MSG(0, "%s: the ops reference has no add layer", what);
        break;
    case FS_LAYER_GRU: /* a chain model's alone: test_rnn checks them against ref_gru.c, ref_lstm.c and ref_attention.c */
    case FS_LAYER_ATTENTION:
    case FS_LAYER_LSTM:
        CHECK_MSG(0, "%s: the ops reference has no recurrent or attention layer (test_rnn)", what);
        break;
    }
    for (int be = 0; be < BE_N; be++) {
        if (!lc->r.out[be]) continue;
        CHECK_MSG(lc->r.call[be].ret == 0.0, "%s (%s): a finite gradient reported as not finite", what, be_name[be]);
        if (!fresh) continue;
        /* The fused update: no stored weight gradient, the bias (and every
         * other parameter) left to step_update, the weights stepped. */
        FsModel m = arena_model(&lc->r, lc->r.out[be]);
        const long nw = y->n_w, U = y->out_c;
        double *gerr = fs_malloc(sizeof(double) * (size_t)nw);
        for (long i = 0; i < nw; i++) gerr[i] = (double)(lc->B + 1 + 16) * U_ROUND * fresh_mag[i];
        check_same("fused: weight gradient (not stored)", be, m.g + y->w, m0.g + y->w, nw);
        check_same("fused: bias", be, m.w + y->b, m0.w + y->b, U);
        check_same("fused: bias moments", be, m.m1 + y->b, m0.m1 + y->b, U);
        check_same("fused: bias moments", be, m.m2 + y->b, m0.m2 + y->b, U);
        check_optimizer(what, be, fuse_ts, t, 1.0, 0.0, nw, m0.w + y->w, m0.m1 + y->w, m0.m2 + y->w, fresh, gerr,
                        m.w + y->w, m.m1 + y->w, m.m2 + y->w, NULL);
        free(gerr);
    }
    expects_check(lc, what, &X);
    free(fresh), free(fresh_mag), free(own);
}
