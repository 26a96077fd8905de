/*
 * ops_layers_fwd: the forward pass of each layer kind against the
 * reference (part of ops_layers.c). Magnitudes: a matrix product's are the
 * product on absolute values; an activation adds its own roundings (at
 * most 16 u of max(1, alpha) + |out|) to lip times its input's error.
 */

static void forward_linear(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const FsLayerSpec *s = &y->spec;
    const RefShape os = out_shape(y, lc->B);
    const long no = ref_size(os), n = fwd_terms(y);
    const float *W = m0->w + y->w, *b = m0->w + y->b;
    float *ax = abs_copy(x, ref_size(xs)), *aW = abs_copy(W, y->n_w), *ab = abs_copy(b, y->out_c);
    double *z = fs_calloc((size_t)no, sizeof(double)), *zm = fs_calloc((size_t)no, sizeof(double));
    if (s->kind == FS_LAYER_CONV) {
        ref_conv_forward(x, xs, W, b, s->width, os, z);
        ref_conv_forward(ax, xs, aW, ab, s->width, os, zm);
    } else {
        ref_dense_forward(x, xs, W, b, y->out_c, z);
        ref_dense_forward(ax, xs, aW, ab, y->out_c, zm);
    }
    Expect *eo = expect(X, "output", IN_WORK, y->a, os, n, 1);
    Expect *es = s->act == FS_ACT_SWISH ? expect(X, "swish sigmoid", IN_WORK, y->z, os, n, 1) : NULL;
    for (long o = 0; o < no; o++) { /* pad rows too: act(0) = 0, and pads are checked to be 0 */
        eo->ref[o] = ref_act(s->act, s->act_param, z[o]);
        eo->mag[o] = lip(s) * zm[o] + fabs(eo->ref[o]) + maxd(1.0, fabs(s->act_param));
        if (!es) continue;
        es->ref[o] = ref_sigmoid(z[o]);
        es->mag[o] = 0.25 * zm[o] + 1.0;
    }
    free(ax), free(aW), free(ab), free(z), free(zm);
}

/* Per channel: the mean, its terms' magnitude (mean of |x|), 1/sqrt(var + eps). */
static void forward_batchnorm(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, int train, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const int C = y->out_c;
    double *rm = fs_calloc((size_t)C, sizeof(double)), *rv = fs_calloc((size_t)C, sizeof(double));
    for (int c = 0; c < C; c++) {
        rm[c] = m0->w[y->s_mean + c];
        rv[c] = m0->w[y->s_var + c];
    }
    /* The batch statistics are double sums, then a few float operations:
     * 8 more roundings is generous. */
    const long n = 8;
    Expect *eo = expect(X, "output", IN_WORK, y->a, xs, n, 1), *ex = expect(X, "x-hat", IN_WORK, y->z, xs, n, 1);
    Expect *em = expect(X, "mean", IN_WORK, y->bn_mean, flat_shape(C), n, 0);
    Expect *ei = expect(X, "1/std", IN_WORK, y->bn_istd, flat_shape(C), n, 0);
    Expect *erm = expect(X, "running mean", IN_W, y->s_mean, flat_shape(C), n, 0);
    Expect *erv = expect(X, "running variance", IN_W, y->s_var, flat_shape(C), n, 0);
    const float *gamma = m0->w + y->w, *beta = m0->w + y->b;
    const float mom = y->spec.momentum;
    ref_batchnorm_forward(x, xs, gamma, beta, rm, rv, y->spec.eps, mom, train, eo->ref, ex->ref, em->ref, ei->ref);
    const double N = (double)xs.B * xs.L;
    for (int c = 0; c < C; c++) {
        double sabs = 0.0;
        for (int b = 0; b < xs.B; b++)
            for (int p = 0; p < xs.L; p++) sabs += fabs(x[ref_at(xs, b, p, c)]);
        double mmag = train ? sabs / N : fabs(em->ref[c]);
        em->mag[c] = mmag;
        ei->mag[c] = ei->ref[c];
        erm->ref[c] = rm[c];
        erv->ref[c] = rv[c];
        erm->mag[c] = train ? mom * fabs(m0->w[y->s_mean + c]) + (1.0 - mom) * mmag : 0.0; /* 0: exactly kept */
        double var = 1.0 / (ei->ref[c] * ei->ref[c]) - y->spec.eps; /* the batch's */
        erv->mag[c] = train ? mom * m0->w[y->s_var + c] + (1.0 - mom) * var : 0.0;
        for (int b = 0; b < xs.B; b++)
            for (int p = 0; p < xs.L; p++) {
                long o = ref_at(xs, b, p, c);
                ex->mag[o] = (fabs(x[o]) + mmag + fabs(em->ref[c])) * ei->ref[c];
                eo->mag[o] = fabs(gamma[c]) * ex->mag[o] + fabs(beta[c]);
            }
    }
    free(rm), free(rv);
}

static void forward_dropout(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, int train, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    Expect *eo = expect(X, "output", IN_WORK, y->a, xs, 0, 1), *ek = expect(X, "mask", IN_WORK, y->z, xs, 0, 1);
    for (int b = 0; b < xs.B; b++)
        for (int p = 0; p < xs.L; p++)
            for (int c = 0; c < xs.C; c++) {
                long o = ref_at(xs, b, p, c), e = ((long)b * xs.L + p) * xs.C + c;
                float k = ref_dropout_mask(m0->drop_key, m0->step, lc->li, e, y->spec.rate, train);
                ek->ref[o] = k;
                eo->ref[o] = (float)(x[o] * k); /* one float product: exact everywhere (magnitude 0) */
            }
}

static void forward_highway(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const FsLayerSpec *s = &y->spec;
    const long no = ref_size(xs), n = fwd_terms(y);
    const float *W = m0->w + y->w, *b = m0->w + y->b, *W2 = m0->w + y->w2, *b2 = m0->w + y->b2;
    Expect *eo = expect(X, "output", IN_WORK, y->a, xs, n, 1), *eh = expect(X, "H", IN_WORK, y->h, xs, n, 1);
    Expect *et = expect(X, "T", IN_WORK, y->t, xs, n, 1);
    Expect *es = s->act == FS_ACT_SWISH ? expect(X, "H's swish sigmoid", IN_WORK, y->z, xs, n, 1) : NULL;
    double *S = fs_calloc((size_t)no, sizeof(double));
    ref_highway_forward(x, xs, W, b, W2, b2, s->width, s->act, s->act_param, eo->ref, eh->ref, et->ref, S);
    float *ax = abs_copy(x, no), *aW = abs_copy(W, y->n_w), *ab = abs_copy(b, y->out_c);
    float *aW2 = abs_copy(W2, y->n_w), *ab2 = abs_copy(b2, y->out_c);
    double *hm = fs_calloc((size_t)no, sizeof(double)), *tm = fs_calloc((size_t)no, sizeof(double));
    ref_conv_forward(ax, xs, aW, ab, s->width, xs, hm);
    ref_conv_forward(ax, xs, aW2, ab2, s->width, xs, tm);
    for (long o = 0; o < no; o++) {
        double H = eh->ref[o], T = et->ref[o];
        eh->mag[o] = lip(s) * hm[o] + fabs(H) + maxd(1.0, fabs(s->act_param));
        et->mag[o] = 0.25 * tm[o] + 1.0;
        eo->mag[o] = T * eh->mag[o] + fabs(H - x[o]) * et->mag[o] + fabs(T * H) + fabs((1.0 - T) * x[o]);
        if (!es) continue;
        es->ref[o] = S[o];
        es->mag[o] = 0.25 * hm[o] + 1.0;
    }
    free(S), free(ax), free(aW), free(ab), free(aW2), free(ab2), free(hm), free(tm);
}

/* Per row (example and position): the mean over its channels, 1/sqrt(var + eps). */
static void forward_layernorm(LayerCase *lc, FsModel *m0, const float *x, RefShape xs, Expects *X)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    const int C = y->out_c;
    const long rows = (long)xs.B * xs.L;
    /* As batch norm's: double sums, then a few float operations. */
    const long n = 8;
    Expect *eo = expect(X, "output", IN_WORK, y->a, xs, n, 1), *ex = expect(X, "x-hat", IN_WORK, y->z, xs, n, 1);
    Expect *ei = expect(X, "1/std", IN_WORK, y->bn_istd, flat_shape(rows), n, 0);
    const float *gamma = m0->w + y->w, *beta = m0->w + y->b;
    ref_layernorm_forward(x, xs, gamma, beta, y->spec.eps, eo->ref, ex->ref, ei->ref);
    for (int b = 0; b < xs.B; b++)
        for (int p = 0; p < xs.L; p++) {
            const long r = (long)b * xs.L + p;
            double sabs = 0.0, mu = 0.0;
            for (int c = 0; c < C; c++) sabs += fabs(x[ref_at(xs, b, p, c)]), mu += x[ref_at(xs, b, p, c)];
            ei->mag[r] = ei->ref[r];
            for (int c = 0; c < C; c++) {
                long o = ref_at(xs, b, p, c);
                ex->mag[o] = (fabs(x[o]) + sabs / C + fabs(mu / C)) * ei->ref[r];
                eo->mag[o] = fabs(gamma[c]) * ex->mag[o] + fabs(beta[c]);
            }
        }
}

static void check_forward(LayerCase *lc, int train)
{
    const FsLayer *y = &lc->net.layer[lc->li];
    char what[256];
    snprintf(what, sizeof what, "%s, forward%s", lc->what, train ? "" : " (inference)");
    OpsCall call;
    memset(&call, 0, sizeof call);
    call.kind = OPS_FORWARD;
    call.layer = lc->li;
    call.B = lc->B;
    call.train = train;
    run_call(&lc->r, what, &call);

    FsModel m0 = arena_model(&lc->r, lc->r.in);
    RefShape xs;
    float *own;
    const float *x = case_input(lc, &m0, &xs, &own);
    Expects X = {.n = 0};
    switch (y->spec.kind) {
    case FS_LAYER_CONV:
    case FS_LAYER_DENSE:
    case FS_LAYER_OUTPUT:
        forward_linear(lc, &m0, x, xs, &X);
        break;
    case FS_LAYER_BATCHNORM:
        forward_batchnorm(lc, &m0, x, xs, train, &X);
        break;
    case FS_LAYER_LAYERNORM:
        forward_layernorm(lc, &m0, x, xs, &X);
        break;
    case FS_LAYER_DROPOUT:
        forward_dropout(lc, &m0, x, xs, train, &X);
        break;
    case FS_LAYER_HIGHWAY:
        forward_highway(lc, &m0, x, xs, &X);
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
    expects_check(lc, what, &X);
    free(own);
}
