/*
 * forward: the ensemble over a dataset, chunks of residues spread over
 * threads. Each chunk runs every fold model in order (train_predictor_run,
 * each thread with its own workspace per model) and
 * sums their probabilities in that order, so a residue's numbers are the
 * same whatever the thread count. A chunk ends where a segment (a chain)
 * does: a chain model computes the whole chain for any of its residues,
 * and one cut by a chunk's end was computed twice (4.1% of the work on
 * FLIP's first 4,000 proteins).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "train/train.h"

#define CHUNK 8192
/* A thread keeps its fold models' workspaces across chunks while they
 * take at most this much together (the first always): an ensemble of many
 * models over a very long protein would otherwise hold one workspace per
 * model on every thread where one at a time did. The rest are laid out
 * again per chunk, as train_predict does. */
#define KEEP_BYTES ((size_t)64 << 20)

typedef struct {
    const FsEnsemble *e;
    const FsDataset *ds;
    int batch;
    uint32_t most; /* residues in a chunk, at most: CHUNK and a segment's rest */
    float *probs, *agree;
    uint32_t next; /* first residue of the next chunk */
    pthread_mutex_t lock;
} Work;

static void chunk(Work *w, FsPredictor **models, uint32_t lo, uint32_t n, uint32_t *idx, float *p, uint8_t *pred,
                  uint8_t *votes)
{
    const FsEnsemble *e = w->e;
    const uint32_t K = (uint32_t)fs_classes(e->classes);
    float *out = w->probs + (size_t)lo * K;
    for (uint32_t r = 0; r < n; r++) idx[r] = lo + r;
    memset(out, 0, sizeof(float) * K * n);
    memset(votes, 0, (size_t)n * K);
    for (int k = 0; k < e->n; k++) {
        if (models[k]) train_predictor_run(models[k], idx, n, p, pred);
        else train_predict(&e->m[k].net, e->m[k].weights, w->ds, idx, n, w->batch, p, pred);
        for (uint32_t r = 0; r < K * n; r++) out[r] += p[r];
        for (uint32_t r = 0; r < n; r++) votes[r * K + pred[r]]++;
    }
    for (uint32_t r = 0; r < n; r++) {
        float *q = out + (size_t)r * K;
        for (uint32_t c = 0; c < K; c++) q[c] /= (float)e->n;
        if (w->agree) w->agree[lo + r] = (float)votes[r * K + (uint32_t)predict_class(q, (int)K)] / (float)e->n;
    }
}

static void *worker(void *arg)
{
    Work *w = arg;
    const FsDataset *ds = w->ds;
    uint32_t *idx = fs_malloc(sizeof(uint32_t) * w->most);
    float *p = fs_malloc(sizeof(float) * FS_MAX_CLASSES * w->most);
    uint8_t *pred = fs_malloc(w->most), *votes = fs_malloc((size_t)FS_MAX_CLASSES * w->most);
    /* Fold models' workspaces once per thread, not once per chunk. */
    FsPredictor **models = fs_calloc((size_t)w->e->n, sizeof *models);
    const char *hook = fs_test_fault("PREDICT_KEEP_BYTES");
    const size_t keep = hook ? (size_t)strtoull(hook, NULL, 10) : KEEP_BYTES;
    size_t kept = 0;
    for (int k = 0; k < w->e->n; k++) {
        FsPredictor *m = train_predictor_new(&w->e->m[k].net, w->e->m[k].weights, ds, w->batch);
        if (k > 0 && kept + train_predictor_bytes(m) > keep) {
            train_predictor_free(m);
            continue;
        }
        kept += train_predictor_bytes(m);
        models[k] = m;
    }
    for (;;) {
        pthread_mutex_lock(&w->lock);
        uint32_t lo = w->next;
        if (lo < ds->n_res) {
            uint32_t hi = lo + (ds->n_res - lo < CHUNK ? ds->n_res - lo : CHUNK);
            while (hi < ds->n_res && ds->left[hi] != 0) hi++; /* to the next segment's start */
            w->next = hi;
        }
        uint32_t hi = w->next;
        pthread_mutex_unlock(&w->lock);
        if (lo >= hi) break;
        chunk(w, models, lo, hi - lo, idx, p, pred, votes);
    }
    for (int k = 0; k < w->e->n; k++) train_predictor_free(models[k]); /* NULL: none kept */
    free(models);
    free(idx);
    free(p);
    free(pred);
    free(votes);
    return NULL;
}

/* The largest magnitude of residue r's feature columns (0 without any). */
static float largest_feature(const FsDataset *ds, uint32_t r)
{
    float most = 0.0f;
    for (uint32_t j = 0; j < ds->feat_dim; j++)
        if (fabsf(data_feature(ds, r, j)) > most) most = fabsf(data_feature(ds, r, j));
    return most;
}

/* Refuses probabilities that are not finite numbers rather than write or
 * score them (issue #43: a NaN feature gave every residue H and was
 * scored). Features and weights are refused at load when not finite; a
 * finite but huge feature value or weight can still overflow a layer. */
static int check_probs(const FsEnsemble *e, const FsDataset *ds, const float *probs, FsErr *err)
{
    const uint32_t K = (uint32_t)fs_classes(e->classes);
    for (size_t i = 0; i < (size_t)ds->n_res * K; i++) {
        if (isfinite(probs[i])) continue;
        const uint32_t r = (uint32_t)(i / K);
        uint32_t p = 0;
        while (p + 1 < ds->n_prot && ds->seg_off[ds->prot_seg[p + 1]] <= r) p++;
        const uint32_t first = ds->seg_off[ds->prot_seg[p]];
        char most[48] = "";
        if (ds->feat_dim) snprintf(most, sizeof most, " (its largest feature value %g)", (double)largest_feature(ds, r));
        fs_err_set(err, "protein %s: residue %u%s: the models' probabilities are not finite (%s): a value overflowed "
                        "in their forward pass, from a feature value or weight too large; nothing is written or "
                        "scored for it",
                   data_protein_name(ds, p), r - first + 1, most, isnan(probs[i]) ? "NaN" : "infinite");
        return -1;
    }
    return 0;
}

int predict_run(const FsEnsemble *e, const FsDataset *ds, int threads, int batch, float *probs, float *agree,
                FsErr *err)
{
    Work w = {e, ds, batch, CHUNK + data_longest_chain(ds), probs, agree, 0, PTHREAD_MUTEX_INITIALIZER};
    uint32_t chunks = (ds->n_res + CHUNK - 1) / CHUNK;
    if (threads > (int)chunks) threads = (int)chunks;
    if (threads < 1) threads = 1;
    pthread_t *t = fs_calloc((size_t)threads, sizeof *t);
    int started = 0;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&t[started], NULL, worker, &w) == 0) started++;
    worker(&w); /* the calling thread works too */
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    free(t);
    pthread_mutex_destroy(&w.lock);
    return check_probs(e, ds, probs, err);
}
