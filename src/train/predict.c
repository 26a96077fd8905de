/*
 * predict: a trained model's forward pass over residues of a dataset, on
 * the CPU, through the same layer code that trained it (so a saved model
 * scores its validation fold exactly as training did).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/core.h"

/* Probabilities and the prediction from one output row of logits zb (the
 * first largest logit is the prediction, as in step_loss). */
static void predict_row(const float *zb, int K, float *p, uint8_t *pred)
{
    int arg = 0;
    float mx = zb[0], sum = 0.0f;
    for (int k = 1; k < K; k++)
        if (zb[k] > mx) mx = zb[k], arg = k;
    for (int k = 0; k < K; k++) sum += (p[k] = expf(zb[k] - mx));
    for (int k = 0; k < K; k++) p[k] /= sum;
    if (pred) *pred = (uint8_t)arg;
}

/* The first residue of residue r's segment (left[] clipped to 255). */
static uint32_t chain_start(const FsDataset *ds, uint32_t r)
{
    while (ds->left[r] > 0) r -= ds->left[r];
    return r;
}

/* A chain model: idx's residues grouped by their chains (consecutive
 * entries of one chain share its pass), chains batched as in training.
 * A residue's outputs do not depend on the others in its batch (pad rows
 * between chains, batch norm's running statistics). */
static void predict_chains(FsModel *m, const FsDataset *ds, const FsFoldData *fd, const uint32_t *idx, uint32_t n,
                           float *probs, uint8_t *pred)
{
    const FsNet *net = m->net;
    const int K = net->classes;
    const float *z = m->work + net->layer[net->n - 1].a + (long)net->pad * K;
    uint32_t *starts = fs_malloc(sizeof(uint32_t) * ((size_t)n + 1));
    uint32_t *at = fs_malloc(sizeof(uint32_t) * ((size_t)n + 1)); /* each chain's first idx entry */
    uint32_t nc = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t s = chain_start(ds, idx[i]);
        if (nc == 0 || starts[nc - 1] != s) starts[nc] = s, at[nc++] = i;
    }
    at[nc] = n;
    for (uint32_t c = 0; c < nc;) {
        const int nb = step_chain_batch(fd, starts + c, nc - c, net->in_rows, net->pad);
        step_load_chain(m, fd, starts + c, nb);
        step_forward(m, 1, 0);
        long row0 = 0;
        for (int b = 0; b < nb; b++, c++) {
            for (uint32_t i = at[c]; i < at[c + 1]; i++) {
                const long row = row0 + (idx[i] - starts[c]);
                predict_row(z + row * K, K, probs + (size_t)i * K, pred ? pred + i : NULL);
            }
            row0 += (long)step_chain_length(fd, starts[c]) + net->pad;
        }
    }
    free(starts);
    free(at);
}

struct FsPredictor {
    FsNet net;
    FsModel m;
    void *buf;
    size_t bytes;
    const FsDataset *ds;
    FsFoldData fd;
    int batch;
};

FsPredictor *train_predictor_new(const FsNet *net_in, const float *weights, const FsDataset *ds, int batch)
{
    FsPredictor *p = fs_calloc(1, sizeof *p);
    FsErr err = {0};
    p->batch = batch < 1 ? 1 : batch;
    /* The caller's net may be compiled for another batch: the workspace is
     * laid out for this one (a chain model's: its default budget, or the
     * data's longest chain). */
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    if (net_in->arch.chain ? train_chain_rows(&net_in->arch, &ts, data_longest_chain(ds), &p->net, &err) != 0
                           : model_compile(&p->net, &net_in->arch, p->batch, &err) != 0)
        FS_DIE("train_predict: %s", err.msg);
    if ((uint32_t)p->net.arch.feat_dim != ds->feat_dim)
        FS_DIE("train_predict: the model reads %d feature columns, the data has %u", p->net.arch.feat_dim,
               ds->feat_dim);
    p->bytes = core_model_bytes(&p->net, 0);
    p->buf = fs_aligned_alloc(p->bytes);
    memset(p->buf, 0, p->bytes); /* pad rows stay zero: the layers write only interior rows, pass after pass */
    core_model_bind(&p->m, &p->net, p->buf, 0);
    memcpy(p->m.w, weights, sizeof(float) * (size_t)(p->net.n_params + p->net.n_state));
    p->ds = ds;
    p->fd = (FsFoldData){ds->aa, ds->ss, ds->left, ds->right, NULL, 0, NULL, 0, 0, 0, ds->feat, ds->feat_dim,
                         ds->feat_half};
    return p;
}

void train_predictor_run(FsPredictor *p, const uint32_t *idx, uint32_t n, float *probs, uint8_t *pred)
{
    const FsNet *net = &p->net;
    if (net->chain) {
        predict_chains(&p->m, p->ds, &p->fd, idx, n, probs, pred);
        return;
    }
    const float *z = p->m.work + net->layer[net->n - 1].a;
    for (uint32_t s = 0; s < n; s += (uint32_t)p->batch) {
        int nb = n - s < (uint32_t)p->batch ? (int)(n - s) : p->batch;
        step_load_batch(&p->m, &p->fd, idx + s, nb);
        step_forward(&p->m, nb, 0);
        for (int b = 0; b < nb; b++)
            predict_row(z + b * net->classes, net->classes, probs + ((size_t)s + (size_t)b) * net->classes,
                        pred ? pred + s + (uint32_t)b : NULL);
    }
}

size_t train_predictor_bytes(const FsPredictor *p) { return p->bytes; }

void train_predictor_free(FsPredictor *p)
{
    if (!p) return;
    free(p->buf);
    free(p);
}

void train_predict(const FsNet *net, const float *weights, const FsDataset *ds, const uint32_t *idx, uint32_t n,
                   int batch, float *probs, uint8_t *pred)
{
    FsPredictor *p = train_predictor_new(net, weights, ds, batch);
    train_predictor_run(p, idx, n, probs, pred);
    train_predictor_free(p);
}
