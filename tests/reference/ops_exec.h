/*
 * ops_exec: runs one OpsCall (ops_call.h) through the trainer's own entry
 * points. Single source like the trainer: included by tests/test_ops.c (the
 * CPU build), ops_emu.c (the emulated block, where the trainer's names are
 * renamed to its copies) and ops_gpu.cu (nvcc), each after the trainer's
 * declarations. Every thread of a block calls it; the master stores results.
 */
#ifndef FS_TESTS_OPS_EXEC_H
#define FS_TESTS_OPS_EXEC_H

#include "ops_call.h"
#include "train/layers.h"

FS_DEVICE static void ops_exec(FsModel *m, char *arena, OpsCall *c)
{
    double ret = 0.0;
    uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES];
    for (int i = 0; i < FS_MAX_CLASSES; i++)
        for (int j = 0; j < FS_MAX_CLASSES; j++) conf[i][j] = 0;
    switch (c->kind) {
    case OPS_FORWARD:
        layer_forward(m, c->layer, c->B, c->train);
        break;
    case OPS_BACKWARD: {
        /* A fused layer reports a non-finite gradient per thread; the
         * block agrees on it as step_backward does. */
        int bad = layer_backward(m, c->layer, c->B, c->fuse ? &c->opt : 0);
        ret = FS_SYNC_ANY(bad);
        break;
    }
    case OPS_LOSS:
        ret = step_loss(m, c->B, 1, conf);
        break;
    case OPS_UPDATE:
        ret = step_update(m, &c->ts, c->fused);
        break;
    case OPS_LOAD: {
        FsFoldData fd;
        fd.aa = (const uint8_t *)(arena + c->aa);
        fd.ss = (const uint8_t *)(arena + c->ss);
        fd.left = (const uint8_t *)(arena + c->left);
        fd.right = (const uint8_t *)(arena + c->right);
        fd.train = fd.valid = 0;
        fd.n_train = fd.n_valid = 0;
        step_load_batch(m, &fd, (const uint32_t *)(arena + c->idx), c->B);
        break;
    }
    case OPS_GEMM: {
        float *f = (float *)arena;
        ops_gemm(c->M, c->N, c->K, f + c->a, c->am, c->ak, f + c->b, c->bk, f + c->c, c->cm, c->cn);
        break;
    }
    }
    FS_SYNC();
    FS_MASTER
    {
        c->ret = ret;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) c->conf[i][j] = conf[i][j];
        if (m) c->step = m->step;
    }
    FS_SYNC();
}

#endif
