/*
 * predict: a trained model's forward pass over residues of a dataset, on
 * the CPU, through the same layer code that trained it (so a saved model
 * scores its validation fold exactly as training did).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/core.h"

void train_predict(const FsNet *net_in, const float *weights, const FsDataset *ds, const uint32_t *idx, uint32_t n,
                   int batch, float *probs, uint8_t *pred)
{
    FsNet net;
    FsErr err = {0};
    if (batch < 1) batch = 1;
    /* The caller's net may be compiled for another batch: the workspace is
     * laid out for this one. */
    if (model_compile(&net, &net_in->arch, batch, &err) != 0) FS_DIE("train_predict: %s", err.msg);
    size_t bytes = core_model_bytes(&net, 0);
    void *buf = fs_aligned_alloc(bytes);
    memset(buf, 0, bytes); /* pad rows stay zero */
    FsModel m;
    core_model_bind(&m, &net, buf, 0);
    memcpy(m.w, weights, sizeof(float) * (size_t)(net.n_params + net.n_state));
    FsFoldData fd = {ds->aa, ds->ss, ds->left, ds->right, NULL, 0, NULL, 0};
    const float *z = m.work + net.layer[net.n - 1].a;
    for (uint32_t s = 0; s < n; s += (uint32_t)batch) {
        int nb = n - s < (uint32_t)batch ? (int)(n - s) : batch;
        step_load_batch(&m, &fd, idx + s, nb);
        step_forward(&m, nb, 0);
        for (int b = 0; b < nb; b++) {
            const float *zb = z + b * FS_CLASSES;
            float *p = probs + ((size_t)s + (size_t)b) * FS_CLASSES;
            /* As step_loss: the first largest logit is the prediction. */
            int arg = 0;
            float mx = zb[0], sum = 0.0f;
            for (int k = 1; k < FS_CLASSES; k++)
                if (zb[k] > mx) mx = zb[k], arg = k;
            for (int k = 0; k < FS_CLASSES; k++) sum += (p[k] = expf(zb[k] - mx));
            for (int k = 0; k < FS_CLASSES; k++) p[k] /= sum;
            if (pred) pred[s + (uint32_t)b] = (uint8_t)arg;
        }
    }
    free(buf);
}
