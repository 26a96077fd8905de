/*
 * test_harness.h: one model of the trainer on a data set, for tests that
 * drive its step directly (test_features_train, test_step_parts): layer
 * specs in one call, and a compiled, bound and initialised model whose
 * weights are perturbed off their initial values (so that no gradient is
 * zero by symmetry).
 */
#ifndef FS_TEST_HARNESS_H
#define FS_TEST_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "test.h"
#include "train/core.h"

static inline FsLayerSpec th_layer(FsLayerKind k, int units, int width, int dil, FsAct a)
{
    FsLayerSpec s = {0};
    s.kind = k;
    s.units = units;
    s.width = width;
    s.dilation = dil;
    s.act = a;
    s.act_param = 1.0f;
    s.eps = 1e-3f;
    s.momentum = 0.9f;
    return s;
}

typedef struct {
    FsNet net;
    FsModel m;
    FsFoldData fd;
    void *buf;
    size_t bytes;
    int B;
} Harness;

/* arch on ds at batch B (a chain model: rows for ds's longest chain). */
static inline void harness_init(Harness *h, const FsDataset *ds, const FsArch *arch, int B)
{
    FsErr err = {0};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch_residues = 4096;
    int rc = arch->chain ? train_chain_rows(arch, &ts, data_longest_chain(ds), &h->net, &err)
                         : model_compile(&h->net, arch, B, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    h->bytes = core_model_bytes(&h->net, 1);
    h->buf = fs_aligned_alloc(h->bytes);
    memset(h->buf, 0, h->bytes);
    core_model_bind(&h->m, &h->net, h->buf, 1);
    uint64_t w[2] = {42, 7};
    FsRng rng;
    fs_rng_seed(&rng, w, 2);
    model_init(&h->net, h->m.w, &rng);
    for (long i = 0; i < h->net.n_params; i++) h->m.w[i] += 0.1f * (fs_rng_uniform(&rng) - 0.5f);
    h->m.drop_key = 12345;
    FsFoldData fd = {ds->aa, ds->ss, ds->left, ds->right, NULL, 0, NULL, 0, 0, 0, ds->feat, ds->feat_dim, ds->feat_half};
    h->fd = fd;
    h->B = B;
}

#endif
