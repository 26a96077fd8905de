/*
 * proto_encode: writing the coordinator-worker messages (proto.c reads
 * them; the two halves of each message's layout sit in the same order in
 * both files, and test_proto round-trips every kind).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi.h"

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */

void buf_free(FsBuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void put(FsBuf *b, const void *v, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = fs_realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}

/* The project targets little-endian machines (x86-64, aarch64): values are
 * copied as they are; a static check guards the assumption. */
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE float and double expected");
static void put_u32(FsBuf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(FsBuf *b, int32_t v) { put(b, &v, 4); }
static void put_u64(FsBuf *b, uint64_t v) { put(b, &v, 8); }
static void put_f32(FsBuf *b, float v) { put(b, &v, 4); }
static void put_f64(FsBuf *b, double v) { put(b, &v, 8); }

static void begin(FsBuf *b, FsMsgKind kind)
{
    b->n = 0;
    put_u32(b, FS_PROTO_MAGIC);
    put_u32(b, FS_PROTO_VERSION);
    put_u32(b, (uint32_t)kind);
    put_u32(b, 0); /* payload length, set by end() */
}

static void end(FsBuf *b)
{
    uint32_t len = (uint32_t)(b->n - FS_PROTO_HEADER);
    memcpy(b->p + 12, &len, 4);
}

static void put_item(FsBuf *b, const FsWorkItem *it)
{
    put_i32(b, it->trial);
    put_i32(b, it->fold);
    put(b, it->id, FS_TRIAL_ID_LEN);
    put_i32(b, it->seed);
}

void proto_encode_request(FsBuf *b, int32_t capacity, const FsWorkItem *held, int n_held)
{
    begin(b, FS_MSG_REQUEST);
    put_i32(b, capacity);
    put_i32(b, n_held);
    for (int i = 0; i < n_held; i++) put_item(b, &held[i]);
    end(b);
}

void proto_encode_trials(FsBuf *b, const FsWorkItem *items, int n)
{
    begin(b, FS_MSG_TRIALS);
    put_i32(b, n);
    for (int i = 0; i < n; i++) put_item(b, &items[i]);
    end(b);
}

void proto_encode_result(FsBuf *b, const FsWorkItem *item, const FsFitResult *r)
{
    begin(b, FS_MSG_RESULT);
    put_item(b, item);
    put_i32(b, (int32_t)r->status);
    put_i32(b, r->epochs);
    put_i32(b, r->best_epoch);
    put_i32(b, r->halted_by);
    put_i32(b, (int32_t)r->monitor);
    put_i32(b, r->diverged_epoch);
    put_u64(b, (uint64_t)r->diverged_step);
    put_f32(b, r->best_val_loss);
    const int K = fs_classes(r->classes);
    put_i32(b, K);
    for (int i = 0; i < K; i++)
        for (int k = 0; k < K; k++) put_u64(b, r->best_confusion[i][k]);
    put_u64(b, r->train_examples);
    put_u64(b, r->val_examples);
    put_f64(b, r->seconds);
    put_f64(b, r->val_seconds);
    put_i32(b, r->gpu_path);
    put_i32(b, r->gpu_group);
    int ne = r->curves.train_loss ? r->epochs : 0;
    put_i32(b, ne);
    for (int e = 0; e < ne; e++) {
        put_f32(b, r->curves.train_loss[e]);
        put_f32(b, r->curves.val_loss[e]);
        put_f32(b, r->curves.val_q3[e]);
        put_f32(b, r->curves.seconds[e]);
    }
    uint32_t ml = (uint32_t)strnlen(r->message, sizeof r->message - 1);
    put_u32(b, ml);
    put(b, r->message, ml);
    /* The best weights, for rank 0's model file (none unless the fold
     * trained to a best epoch). */
    uint64_t nw = r->status == FS_FIT_OK && r->best_epoch > 0 && r->weights ? (uint64_t)r->n_weights : 0;
    put_u64(b, nw);
    if (nw) put(b, r->weights, nw * sizeof(float));
    end(b);
}

static void put_text(FsBuf *b, const char *message)
{
    uint32_t ml = (uint32_t)strlen(message);
    if (ml > 1000) ml = 1000;
    put_u32(b, ml);
    put(b, message, ml);
}

static void encode_text(FsBuf *b, int kind, const char *message)
{
    begin(b, kind);
    put_text(b, message);
    end(b);
}

void proto_encode_error(FsBuf *b, const char *message) { encode_text(b, FS_MSG_ERROR, message); }
void proto_encode_fail(FsBuf *b, const char *message) { encode_text(b, FS_MSG_FAIL, message); }

void proto_encode_stop(FsBuf *b, int32_t cancel, int32_t exit_code)
{
    begin(b, FS_MSG_STOP);
    put_i32(b, cancel);
    put_i32(b, exit_code);
    end(b);
}

void proto_encode_bye(FsBuf *b, double gpu_kernel_seconds, double gpu_host_seconds)
{
    begin(b, FS_MSG_BYE);
    put_f64(b, gpu_kernel_seconds);
    put_f64(b, gpu_host_seconds);
    end(b);
}

void proto_encode_epoch(FsBuf *b, const FsWorkItem *item, int32_t first, int32_t n, const FsCurves *c)
{
    begin(b, FS_MSG_EPOCH);
    put_item(b, item);
    put_i32(b, first);
    put_i32(b, n);
    for (int i = first - 1; i < first - 1 + n; i++) {
        put_f32(b, c->val_q3[i]);
        put_f32(b, c->val_loss[i]);
        put_f32(b, c->train_loss[i]);
        put_f32(b, c->seconds[i]);
    }
    end(b);
}

void proto_encode_prune(FsBuf *b, const FsWorkItem *item)
{
    begin(b, FS_MSG_PRUNE);
    put_item(b, item);
    end(b);
}

void proto_encode_ckpt(FsBuf *b, const FsWorkItem *item, const uint8_t *bytes, uint64_t n)
{
    begin(b, FS_MSG_CKPT);
    put_item(b, item);
    put_u64(b, n);
    put(b, bytes, (size_t)n);
    end(b);
}

void proto_encode_progress(FsBuf *b, const FsProgressItem *items, int n)
{
    begin(b, FS_MSG_PROGRESS);
    put_i32(b, n);
    for (int i = 0; i < n; i++) {
        put_item(b, &items[i].item);
        put_i32(b, items[i].epochs);
        put_u64(b, items[i].examples);
    }
    end(b);
}

void proto_encode_resumed(FsBuf *b, const FsWorkItem *item, int32_t epoch, uint32_t next, const char *note)
{
    begin(b, FS_MSG_RESUMED);
    put_item(b, item);
    put_i32(b, epoch);
    put_u32(b, next);
    put_text(b, note);
    end(b);
}
