/*
 * fuzz_proto.c: the coordinator-worker message decoders (proto_check and
 * proto_decode_*), the bytes rank 0 and the workers take from MPI.
 *
 * Input: one byte choosing the MPI tag the message "came with" (the eight
 * kinds and two unknown tags), then the message. Every decoder sees every
 * message, since each must refuse another kind by itself. A message a
 * decoder accepts is encoded again and must decode again to the same
 * values: what rank 0 accepts, it could also have sent.
 */
#include <math.h>

#include "fuzz_util.h"
#include "mpi/mpi.h"

static FsWorkItem items[FS_PROTO_MAX_ITEMS], again[FS_PROTO_MAX_ITEMS];
/* A fold's whole curves for the encoder (proto_decode_epoch bounds first - 1 + count by these). */
static float whole[4][FS_PROTO_MAX_EPOCHS];
static float q3[FS_PROTO_MAX_EPOCHS], loss[FS_PROTO_MAX_EPOCHS], tl[FS_PROTO_MAX_EPOCHS], sec[FS_PROTO_MAX_EPOCHS],
    q3_2[FS_PROTO_MAX_EPOCHS], loss_2[FS_PROTO_MAX_EPOCHS], tl_2[FS_PROTO_MAX_EPOCHS], sec_2[FS_PROTO_MAX_EPOCHS];

static void same_items(const FsWorkItem *a, const FsWorkItem *b, int n)
{
    for (int i = 0; i < n; i++)
        FUZZ_REQUIRE(a[i].trial == b[i].trial && a[i].fold == b[i].fold && a[i].seed == b[i].seed &&
                     !strcmp(a[i].id, b[i].id));
}

static void request(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    int32_t cap, cap2;
    int k, k2;
    if (proto_decode_request(p, n, &cap, items, &k, why, sizeof why)) return;
    proto_encode_request(b, cap, items, k);
    FUZZ_REQUIRE(proto_decode_request(b->p, b->n, &cap2, again, &k2, why, sizeof why) == 0);
    FUZZ_REQUIRE(cap2 == cap && k2 == k);
    same_items(items, again, k);
}

static void trials(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    int k, k2;
    if (proto_decode_trials(p, n, items, &k, why, sizeof why)) return;
    FUZZ_REQUIRE(k >= 0 && k <= FS_PROTO_MAX_ITEMS);
    proto_encode_trials(b, items, k);
    FUZZ_REQUIRE(proto_decode_trials(b->p, b->n, again, &k2, why, sizeof why) == 0 && k2 == k);
    same_items(items, again, k);
}

static void result(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    FsWorkItem it, it2;
    FsFitResult r, r2;
    if (proto_decode_result(p, n, &it, &r, why, sizeof why)) return;
    char bad[160];
    FUZZ_REQUIRE(train_result_check(&r, bad, sizeof bad) == 0);
    FUZZ_REQUIRE(r.n_weights >= 0 && (r.n_weights == 0) == (r.weights == NULL));
    proto_encode_result(b, &it, &r);
    int rc = proto_decode_result(b->p, b->n, &it2, &r2, why, sizeof why);
    if (rc) fprintf(stderr, "re-encoded RESULT refused: %s\n", why);
    FUZZ_REQUIRE(rc == 0);
    same_items(&it, &it2, 1);
    FUZZ_REQUIRE(r2.status == r.status && r2.epochs == r.epochs && r2.best_epoch == r.best_epoch &&
                 r2.diverged_step == r.diverged_step && !strcmp(r2.message, r.message));
    FUZZ_REQUIRE(!memcmp(r2.best_confusion, r.best_confusion, sizeof r.best_confusion));
    for (int e = 0; e < r.epochs; e++)
        FUZZ_REQUIRE(!memcmp(&r2.curves.train_loss[e], &r.curves.train_loss[e], sizeof(float)) &&
                     !memcmp(&r2.curves.seconds[e], &r.curves.seconds[e], sizeof(float)));
    train_result_free(&r2);
    train_result_free(&r);
}

static void error_msg(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256], msg[1001], msg2[1001];
    if (proto_decode_error(p, n, msg, sizeof msg, why, sizeof why)) return;
    proto_encode_error(b, msg);
    FUZZ_REQUIRE(proto_decode_error(b->p, b->n, msg2, sizeof msg2, why, sizeof why) == 0 && !strcmp(msg, msg2));
    /* A short buffer truncates and stays terminated. */
    char tiny[4];
    FUZZ_REQUIRE(proto_decode_error(p, n, tiny, sizeof tiny, why, sizeof why) == 0 && strlen(tiny) < sizeof tiny);
}

static void stop(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    int32_t cancel, code, cancel2, code2;
    if (proto_decode_stop(p, n, &cancel, &code, why, sizeof why)) return;
    FUZZ_REQUIRE(code >= 0 && code <= 3);
    proto_encode_stop(b, cancel, code);
    FUZZ_REQUIRE(proto_decode_stop(b->p, b->n, &cancel2, &code2, why, sizeof why) == 0);
    FUZZ_REQUIRE(cancel2 == cancel && code2 == code);
}

static void bye(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    double k, h, k2, h2;
    if (proto_decode_bye(p, n, &k, &h, why, sizeof why)) return;
    FUZZ_REQUIRE(isfinite(k) && isfinite(h) && k >= 0 && h >= 0 && k < 1e9 && h < 1e9);
    proto_encode_bye(b, k, h);
    FUZZ_REQUIRE(proto_decode_bye(b->p, b->n, &k2, &h2, why, sizeof why) == 0 && k2 == k && h2 == h);
}

static void epoch(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    FsWorkItem it, it2;
    int32_t first, count, first2, count2;
    FsCurves c = {tl, loss, q3, sec}, c2 = {tl_2, loss_2, q3_2, sec_2};
    if (proto_decode_epoch(p, n, &it, &first, &count, &c, why, sizeof why)) return;
    FUZZ_REQUIRE(first >= 1 && count >= 1 && count <= FS_PROTO_MAX_EPOCHS);
    /* The encoder reads the curves from index first - 1 (a fold's whole
     * curves): the decoded entries copied there. */
    const size_t at = (size_t)(first - 1), nb0 = (size_t)count * sizeof(float);
    memcpy(whole[0] + at, tl, nb0);
    memcpy(whole[1] + at, loss, nb0);
    memcpy(whole[2] + at, q3, nb0);
    memcpy(whole[3] + at, sec, nb0);
    FsCurves shifted = {whole[0], whole[1], whole[2], whole[3]};
    proto_encode_epoch(b, &it, first, count, &shifted);
    FUZZ_REQUIRE(proto_decode_epoch(b->p, b->n, &it2, &first2, &count2, &c2, why, sizeof why) == 0);
    same_items(&it, &it2, 1);
    FUZZ_REQUIRE(first2 == first && count2 == count);
    size_t nb = (size_t)count * sizeof(float);
    FUZZ_REQUIRE(!memcmp(q3, q3_2, nb) && !memcmp(loss, loss_2, nb) && !memcmp(tl, tl_2, nb) && !memcmp(sec, sec_2, nb));
}

static void ckpt(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    FsWorkItem it, it2;
    const uint8_t *bytes, *bytes2;
    uint64_t nb, nb2;
    if (proto_decode_ckpt(p, n, &it, &bytes, &nb, why, sizeof why)) return;
    FUZZ_REQUIRE(bytes >= p && bytes + nb == p + n);
    proto_encode_ckpt(b, &it, bytes, nb);
    FUZZ_REQUIRE(proto_decode_ckpt(b->p, b->n, &it2, &bytes2, &nb2, why, sizeof why) == 0);
    same_items(&it, &it2, 1);
    FUZZ_REQUIRE(nb2 == nb && !memcmp(bytes, bytes2, (size_t)nb));
}

static void progress(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    static FsProgressItem a[FS_PROTO_MAX_ITEMS], a2[FS_PROTO_MAX_ITEMS];
    int k, k2;
    if (proto_decode_progress(p, n, a, &k, why, sizeof why)) return;
    proto_encode_progress(b, a, k);
    FUZZ_REQUIRE(proto_decode_progress(b->p, b->n, a2, &k2, why, sizeof why) == 0 && k2 == k);
    for (int i = 0; i < k; i++) {
        same_items(&a[i].item, &a2[i].item, 1);
        FUZZ_REQUIRE(a[i].epochs == a2[i].epochs && a[i].examples == a2[i].examples);
    }
}

static void prune(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256];
    FsWorkItem it, it2;
    if (proto_decode_prune(p, n, &it, why, sizeof why)) return;
    proto_encode_prune(b, &it);
    FUZZ_REQUIRE(proto_decode_prune(b->p, b->n, &it2, why, sizeof why) == 0);
    same_items(&it, &it2, 1);
}

static void resumed(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256], note[512], note2[512];
    FsWorkItem it, it2;
    int32_t epoch, epoch2;
    uint32_t next, next2;
    if (proto_decode_resumed(p, n, &it, &epoch, &next, note, sizeof note, why, sizeof why)) return;
    FUZZ_REQUIRE(epoch >= 0 && epoch <= FS_PROTO_MAX_EPOCHS && (epoch > 0) == (note[0] == 0));
    proto_encode_resumed(b, &it, epoch, next, note);
    FUZZ_REQUIRE(proto_decode_resumed(b->p, b->n, &it2, &epoch2, &next2, note2, sizeof note2, why, sizeof why) == 0);
    same_items(&it, &it2, 1);
    FUZZ_REQUIRE(epoch2 == epoch && next2 == next && !strcmp(note, note2));
}

static void fail_msg(const uint8_t *p, size_t n, FsBuf *b)
{
    char why[256], msg[1001], msg2[1001];
    if (proto_decode_fail(p, n, msg, sizeof msg, why, sizeof why)) return;
    proto_encode_fail(b, msg);
    FUZZ_REQUIRE(proto_decode_fail(b->p, b->n, msg2, sizeof msg2, why, sizeof why) == 0 && !strcmp(msg, msg2));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int tag = FS_MSG_REQUEST + data[0] % (FS_MSG_RESUMED - FS_MSG_REQUEST + 1);
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    char why[256];
    if (proto_check(p, n, tag, why, sizeof why) == 0) FUZZ_REQUIRE(n >= FS_PROTO_HEADER);
    (void)proto_kind_name(tag);
    FsBuf b = {0};
    request(p, n, &b);
    trials(p, n, &b);
    result(p, n, &b);
    error_msg(p, n, &b);
    stop(p, n, &b);
    bye(p, n, &b);
    epoch(p, n, &b);
    prune(p, n, &b);
    ckpt(p, n, &b);
    progress(p, n, &b);
    fail_msg(p, n, &b);
    resumed(p, n, &b);
    buf_free(&b);
    return 0;
}
