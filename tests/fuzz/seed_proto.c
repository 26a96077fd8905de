/*
 * seed_proto.c: writes fuzz_proto's seed corpus, one file per message
 * (the tag byte fuzz_proto reads first, then the message as the encoders
 * make it), so the seeds follow the protocol the tree speaks.
 * Usage: fuzz_seed_proto DIR (tests/fuzz/make-corpus runs it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"

static const char *dir;

static void save(const char *name, const FsBuf *b, int tag)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    unsigned char t = (unsigned char)(tag - FS_MSG_REQUEST);
    if (!f || fwrite(&t, 1, 1, f) != 1 || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void result(FsBuf *b, const FsWorkItem *it, FsFitStatus status, int epochs, int n_weights)
{
    FsFitResult r;
    train_result_alloc(&r, epochs);
    r.status = status;
    r.epochs = epochs;
    r.best_epoch = status == FS_FIT_OK ? epochs : 0;
    r.diverged_epoch = status == FS_FIT_DIVERGED ? epochs + 1 : 0;
    r.diverged_step = status == FS_FIT_DIVERGED ? 7 : 0;
    r.best_val_loss = 0.75f;
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) r.best_confusion[a][c] = (uint64_t)(a == c ? 40 : 3);
    r.train_examples = 900;
    r.val_examples = 129;
    r.seconds = 1.5;
    r.val_seconds = 0.25;
    for (int e = 0; e < epochs; e++) {
        r.curves.train_loss[e] = 1.0f - 0.1f * (float)e;
        r.curves.val_loss[e] = 1.1f - 0.1f * (float)e;
        r.curves.val_q3[e] = 0.5f + 0.05f * (float)e;
        r.curves.seconds[e] = 0.5f;
    }
    if (status == FS_FIT_FAILED) snprintf(r.message, sizeof r.message, "out of memory");
    if (n_weights) {
        r.weights = malloc((size_t)n_weights * sizeof(float));
        for (int i = 0; i < n_weights; i++) r.weights[i] = 0.01f * (float)i;
        r.n_weights = n_weights;
    }
    proto_encode_result(b, it, &r);
    train_result_free(&r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    FsBuf b = {0};
    FsWorkItem items[3] = {{0, 0, "0123456789abcdef", 0},
                           {1, 2, "fedcba9876543210", 0},
                           {5, FS_FOLD_PREDEFINED, "00000000deadbeef", 0}};
    proto_encode_request(&b, 2, NULL, 0);
    save("request", &b, FS_MSG_REQUEST);
    proto_encode_request(&b, 1, items, 2);
    save("request-held", &b, FS_MSG_REQUEST);
    proto_encode_trials(&b, items, 1);
    save("trials-1", &b, FS_MSG_TRIALS);
    proto_encode_trials(&b, items, 3);
    save("trials-3", &b, FS_MSG_TRIALS);
    result(&b, &items[0], FS_FIT_OK, 3, 6);
    save("result-ok", &b, FS_MSG_RESULT);
    result(&b, &items[1], FS_FIT_DIVERGED, 2, 0);
    save("result-diverged", &b, FS_MSG_RESULT);
    result(&b, &items[2], FS_FIT_FAILED, 0, 0);
    save("result-failed", &b, FS_MSG_RESULT);
    proto_encode_error(&b, "TRIALS: trial id is not 16 hex digits");
    save("error", &b, FS_MSG_ERROR);
    proto_encode_stop(&b, 0, 0);
    save("stop", &b, FS_MSG_STOP);
    proto_encode_stop(&b, 1, 3);
    save("stop-cancel", &b, FS_MSG_STOP);
    proto_encode_bye(&b, 1.5, 0.25);
    save("bye", &b, FS_MSG_BYE);
    float q3[4] = {0, 0.5f, 0.625f, 1.0f}, loss[4] = {0, 1.25f, 0.875f, 0.0f}, tl[4] = {0, 1.5f, 1.0f, 0.5f},
          sec[4] = {0, 1.0f, 2.0f, 3.5f};
    FsCurves c = {tl, loss, q3, sec};
    proto_encode_epoch(&b, &items[1], 2, 3, &c);
    save("epoch", &b, FS_MSG_EPOCH);
    proto_encode_prune(&b, &items[0]);
    save("prune", &b, FS_MSG_PRUNE);
    const uint8_t blob[5] = {1, 2, 3, 4, 5};
    proto_encode_ckpt(&b, &items[0], blob, 5);
    save("ckpt", &b, FS_MSG_CKPT);
    FsProgressItem pi[2] = {{items[0], 2, 12345}, {items[1], 0, 7}};
    proto_encode_progress(&b, pi, 2);
    save("progress", &b, FS_MSG_PROGRESS);
    proto_encode_fail(&b, "the GPU failed");
    save("fail", &b, FS_MSG_FAIL);
    proto_encode_resumed(&b, &items[1], 3, 4096, "");
    save("resumed", &b, FS_MSG_RESUMED);
    proto_encode_resumed(&b, &items[0], 0, 0, "the checkpoint is of another model");
    save("resumed-refused", &b, FS_MSG_RESUMED);
    /* A STOP that came with the TRIALS tag: proto_check's mismatch path. */
    proto_encode_stop(&b, 0, 1);
    save("stop-wrong-tag", &b, FS_MSG_TRIALS);
    buf_free(&b);
    return 0;
}
