/*
 * step: one minibatch (single source): gather the batch's windows, forward,
 * softmax cross-entropy, backward, gradient clipping and the optimizer.
 */
#include <math.h>

#include "data/data.h"
#include "train/layers.h"

FS_DEVICE void step_load_batch(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int B)
{
    const int L = m->net->arch.window, h = L / 2;
    FS_PARFOR(b, B)
    {
        uint32_t r = idx[b];
        uint8_t *c = m->codes + b * L;
        /* Positions beyond the residue's segment (protein end or chain
         * break) read the padding symbol. */
        for (int q = 0; q < L; q++) {
            int o = q - h;
            int out = (o < 0 && -o > fd->left[r]) || (o > 0 && o > fd->right[r]);
            c[q] = out ? FS_AA_PAD : fd->aa[(long)r + o];
        }
        m->labels[b] = (uint8_t)FS_SS_CLASS(fd->ss[r]);
    }
    FS_SYNC();
}

FS_DEVICE void step_forward(FsModel *m, int B, int train)
{
    for (int i = 0; i < m->net->n; i++) layer_forward(m, i, B, train);
}

FS_DEVICE double step_loss(FsModel *m, int B, int grad, uint64_t confusion[3][3])
{
    const FsLayer *y = &m->net->layer[m->net->n - 1];
    const float *z = m->work + y->a;
    float *d = m->work + y->d;
    FS_PARFOR(b, B)
    {
        const float *zb = z + b * FS_CLASSES;
        int arg = 0;
        float mx = zb[0];
        for (int k = 1; k < FS_CLASSES; k++)
            if (zb[k] > mx) {
                mx = zb[k];
                arg = k;
            }
        float e[FS_CLASSES], sum = 0.0f;
        for (int k = 0; k < FS_CLASSES; k++) {
            e[k] = expf(zb[k] - mx);
            sum += e[k];
        }
        int lab = m->labels[b];
        m->ex_loss[b] = logf(sum) - (zb[lab] - mx);
        m->ex_pred[b] = (uint8_t)arg;
        if (grad)
            for (int k = 0; k < FS_CLASSES; k++)
                d[b * FS_CLASSES + k] = (e[k] / sum - (k == lab ? 1.0f : 0.0f)) / (float)B;
    }
    FS_SYNC();
    /* Every thread sums in the same order, so all agree on the total. */
    double total = 0.0;
    for (int b = 0; b < B; b++) total += m->ex_loss[b];
    /* Each thread keeps its own copy of the confusion matrix (the caller's
     * local), all equal: no thread waits for another's. */
    if (confusion)
        for (int b = 0; b < B; b++) confusion[m->labels[b]][m->ex_pred[b]]++;
    /* Nobody loads the next batch's labels while another still reads these
     * (found by tests/test_block.c: on a GPU the confusion matrix raced). */
    FS_SYNC();
    return total;
}

FS_DEVICE void step_backward(FsModel *m, int B)
{
    const long np = m->net->n_params;
    FS_PARFOR(i, np) m->g[i] = 0.0f;
    FS_SYNC();
    for (int i = m->net->n - 1; i >= 0; i--) layer_backward(m, i, B);
}

FS_DEVICE float step_update(FsModel *m, const FsTrainSpec *ts)
{
    const long np = m->net->n_params, chunk = (np + FS_NORM_CHUNKS - 1) / FS_NORM_CHUNKS;
    float *w = m->w, *g = m->g, *m1 = m->m1, *m2 = m->m2;
    FS_PARFOR(c, FS_NORM_CHUNKS)
    {
        long lo = c * chunk, hi = lo + chunk < np ? lo + chunk : np;
        /* Sixteen lanes, summed in a fixed order at the end: an in-order
         * float sum cannot be vectorised and cost as much as Adam itself. */
        float lane[16];
        for (int j = 0; j < 16; j++) lane[j] = 0.0f;
        long i = lo;
        for (; i + 16 <= hi; i += 16)
            for (int j = 0; j < 16; j++) lane[j] += g[i + j] * g[i + j];
        for (; i < hi; i++) lane[0] += g[i] * g[i];
        float s = 0.0f;
        for (int j = 0; j < 16; j++) s += lane[j];
        m->partial[c] = s;
    }
    FS_SYNC();
    double ss = 0.0;
    for (int c = 0; c < FS_NORM_CHUNKS; c++) ss += m->partial[c];
    float norm = (float)sqrt(ss);
    if (!isfinite(norm)) return norm;
    const float scale = (ts->clip_norm > 0.0f && norm > ts->clip_norm) ? ts->clip_norm / norm : 1.0f;
    const float lr = ts->lr, wd = ts->weight_decay;
    const long t = m->step + 1;
    switch (ts->opt) {
    case FS_OPT_SGD: {
        const float mu = ts->momentum;
        FS_PARFOR(i, np)
        {
            float gi = g[i] * scale + wd * w[i];
            m1[i] = mu * m1[i] + gi;
            w[i] -= lr * m1[i];
        }
        break;
    }
    case FS_OPT_ADAM:
    case FS_OPT_ADAMW: {
        const float b1 = ts->beta1, b2 = ts->beta2, eps = ts->eps;
        const float c1 = 1.0f / (1.0f - (float)pow(b1, (double)t));
        const float c2 = 1.0f / (1.0f - (float)pow(b2, (double)t));
        const float l2 = ts->opt == FS_OPT_ADAM ? wd : 0.0f;
        const float decay = ts->opt == FS_OPT_ADAMW ? 1.0f - lr * wd : 1.0f;
        FS_PARFOR(i, np)
        {
            float gi = g[i] * scale + l2 * w[i];
            m1[i] = b1 * m1[i] + (1.0f - b1) * gi;
            m2[i] = b2 * m2[i] + (1.0f - b2) * gi * gi;
            w[i] = w[i] * decay - lr * (m1[i] * c1) / (sqrtf(m2[i] * c2) + eps);
        }
        break;
    }
    }
    FS_SYNC();
    FS_MASTER m->step = t;
    FS_SYNC();
    return norm;
}
