/*
 * checkpoint: a fold's fit as bytes, and back (host side of the CPU
 * trainer). A checkpoint is a safetensors file:
 *
 *   weights, best   F32 [n_params + n_state]  current and best-epoch weights
 *   m1, m2          F32 [n_params]            optimizer moments
 *   perm            U32 [n_train]             the epoch's training order
 *   rng             U64 [4]                   the shuffling stream
 *   state           U64 [16]                  FsFitState's numbers, bit-exact
 *   best_confusion  U64 [3, 3]
 *   stop            U8  [sizeof FsStopState]  the stopping rule's state
 *   curves          F32 [4, epochs]           train loss, val loss, val Q3, seconds
 *
 * with metadata naming the format, the fold's seeds and sizes (a checkpoint
 * of another trial, fold, data or program is refused) and a CRC-32 of the
 * tensor bytes (a damaged file is refused). Everything is stored exactly,
 * so a resumed fit takes the same steps as one that never stopped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors/safetensors.h"
#include "train/core.h"

enum {
    ST_EPOCH, ST_NEXT, ST_STEP_IN_EPOCH, ST_LOSS_SUM, ST_EPOCHS, ST_BEST_EPOCH, ST_BEST_LOSS, ST_TRAIN_EX,
    ST_VAL_EX, ST_VAL_SECONDS, ST_SECONDS, ST_STEP
};
#define ST_WORDS 16
#define N_TENSORS 10
#define N_META 7

static uint64_t bits_d(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static double d_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
static uint64_t bits_f(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float f_bits(uint64_t w)
{
    uint32_t u = (uint32_t)w;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int core_checkpoint_due(FsModel *m, int stopping)
{
    FsCkpt *c = m->ckpt;
    if (stopping) return 1;
    if (c->spec->every_steps > 0) return m->step - c->last_step >= c->spec->every_steps;
    return c->spec->every > 0 && fs_now() - c->last_time >= c->spec->every;
}

void core_checkpoint_event(FsModel *m, int epoch)
{
    FsCkpt *c = m->ckpt;
    if (c->spec->event) c->spec->event(c->spec->ctx, epoch);
}

/* The metadata: what the checkpoint belongs to. Values in v (N_META x 80). */
static void ckpt_meta(const FsCkpt *c, FsMetaEntry *meta, char v[][80], uint32_t crc, int epoch)
{
    static const char *const keys[N_META] = {"format", "version", "fold_seed", "sizes", "stop_bytes", "epoch",
                                              "crc32"};
    snprintf(v[0], 80, "%s", FS_CKPT_FORMAT);
    snprintf(v[1], 80, "%s", FS_CKPT_VERSION);
    snprintf(v[2], 80, "%016" PRIx64 " %016" PRIx64 " %016" PRIx64, c->ts->seed[0], c->ts->seed[1], c->ts->seed[2]);
    snprintf(v[3], 80, "%ld %ld %" PRIu32 " %" PRIu32 " %d %d", c->net->n_params, c->net->n_state, c->fd->n_train,
             c->fd->n_valid, c->ts->batch, c->ts->stop.max_epochs);
    snprintf(v[4], 80, "%zu", sizeof(FsStopState));
    snprintf(v[5], 80, "%d", epoch);
    snprintf(v[6], 80, "%08" PRIx32, crc);
    for (int i = 0; i < N_META; i++) meta[i] = (FsMetaEntry){keys[i], v[i]};
}

static uint64_t tensor_bytes(const FsTensor *t)
{
    uint64_t e = !strcmp(t->dtype, "U64") ? 8 : !strcmp(t->dtype, "U8") ? 1 : 4;
    return e * safetensors_numel(t);
}

static void set_tensor(FsTensor *t, const char *name, const char *dt, const void *data, int64_t d0, int64_t d1)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    snprintf(t->dtype, sizeof t->dtype, "%s", dt);
    t->ndim = d1 >= 0 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1 >= 0 ? d1 : 0;
    t->data = data;
}

void core_checkpoint_save(FsModel *m, const FsFitState *s, const FsFitResult *out)
{
    FsCkpt *c = m->ckpt;
    const double t0 = fs_now();
    const FsNet *net = m->net;
    const long nw = net->n_params + net->n_state;
    uint64_t st[ST_WORDS] = {0};
    st[ST_EPOCH] = (uint64_t)s->epoch;
    st[ST_NEXT] = s->next;
    st[ST_STEP_IN_EPOCH] = (uint64_t)s->step_in_epoch;
    st[ST_LOSS_SUM] = bits_d(s->loss_sum);
    st[ST_EPOCHS] = (uint64_t)s->epochs;
    st[ST_BEST_EPOCH] = (uint64_t)s->best_epoch;
    st[ST_BEST_LOSS] = bits_f(s->best_loss);
    st[ST_TRAIN_EX] = s->n_train_ex;
    st[ST_VAL_EX] = s->n_val_ex;
    st[ST_VAL_SECONDS] = bits_d(s->val_seconds);
    st[ST_SECONDS] = bits_d(s->seconds);
    st[ST_STEP] = (uint64_t)m->step;
    const int ne = s->epochs;
    float *curves = fs_malloc(sizeof(float) * 4 * (size_t)(ne > 0 ? ne : 1));
    const float *src[4] = {out->curves.train_loss, out->curves.val_loss, out->curves.val_q3, out->curves.seconds};
    for (int k = 0; k < 4; k++)
        for (int e = 0; e < ne; e++) curves[k * ne + e] = src[k] ? src[k][e] : 0.0f;
    FsTensor t[N_TENSORS];
    set_tensor(&t[0], "weights", "F32", m->w, nw, -1);
    set_tensor(&t[1], "best", "F32", m->best, nw, -1);
    set_tensor(&t[2], "m1", "F32", m->m1, net->n_params, -1);
    set_tensor(&t[3], "m2", "F32", m->m2, net->n_params, -1);
    set_tensor(&t[4], "perm", "U32", m->perm, c->fd->n_train, -1);
    set_tensor(&t[5], "rng", "U64", m->rng.s, 4, -1);
    set_tensor(&t[6], "state", "U64", st, ST_WORDS, -1);
    uint64_t conf[FS_MAX_CLASSES * FS_MAX_CLASSES]; /* the net's classes by its classes, packed */
    const int K = net->classes;
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++) conf[a * K + b] = s->best_conf[a][b];
    set_tensor(&t[7], "best_confusion", "U64", conf, K, K);
    set_tensor(&t[8], "stop", "U8", &s->st, (int64_t)sizeof s->st, -1);
    set_tensor(&t[9], "curves", "F32", curves, 4, ne);
    /* The data section is the tensors' bytes in order: its CRC. */
    uint32_t crc = 0;
    for (int i = 0; i < N_TENSORS; i++) crc = fs_crc32(t[i].data, (size_t)tensor_bytes(&t[i]), crc);
    char v[N_META][80];
    FsMetaEntry meta[N_META];
    ckpt_meta(c, meta, v, crc, s->epoch);
    uint8_t *bytes;
    uint64_t nb;
    safetensors_serialize(t, N_TENSORS, meta, N_META, &bytes, &nb);
    free(curves);
    c->spec->save(c->spec->ctx, bytes, nb);
    free(bytes);
    c->last_time = fs_now();
    c->last_step = m->step;
    c->n_saved++;
    c->saved_epoch = s->epoch;
    c->saved_bytes = nb;
    c->saved_seconds = c->last_time - t0;
}

/* ---------------------------------------------------------------------- */
/* Reading one back.                                                       */

/* A tensor of the expected dtype and element count, or NULL with why. */
static const FsTensor *want(const FsSafetensors *f, const char *name, const char *dt, uint64_t numel, char *why,
                            size_t n)
{
    const FsTensor *t = safetensors_find(f, name);
    if (!t) return snprintf(why, n, "no tensor \"%s\"", name), NULL;
    if (strcmp(t->dtype, dt) != 0) return snprintf(why, n, "tensor \"%s\" is %s, expected %s", name, t->dtype, dt), NULL;
    if (safetensors_numel(t) != numel)
        return snprintf(why, n, "tensor \"%s\" has %" PRIu64 " elements, expected %" PRIu64, name,
                        safetensors_numel(t), numel), NULL;
    return t;
}

/* Every entry of perm is one of the fold's training examples, once. */
static int perm_ok(const uint32_t *perm, const FsFoldData *fd, uint32_t n_res)
{
    size_t words = ((size_t)n_res + 63) / 64;
    uint64_t *bits = fs_calloc(words ? words : 1, 8);
    int ok = 1;
    for (uint32_t i = 0; i < fd->n_train; i++) bits[fd->train[i] / 64] |= 1ull << (fd->train[i] % 64);
    for (uint32_t i = 0; i < fd->n_train && ok; i++) {
        uint32_t r = perm[i];
        if (r >= n_res || !(bits[r / 64] >> (r % 64) & 1)) ok = 0;
        else bits[r / 64] &= ~(1ull << (r % 64));
    }
    free(bits);
    return ok;
}

static void copy_out(const FsTensor *t, void *dst)
{
    memcpy(dst, t->data, (size_t)tensor_bytes(t));
}

/* Every tensor of f, of its dtype and size for this fold (t[N_TENSORS]),
 * the metadata its own, and the CRC right; st gets the state words.
 * 0, or -1 with why. */
static int ckpt_check(const FsSafetensors *f, const FsCkpt *c, const FsNet *net, const FsTensor **t, uint64_t *st,
                      char *why, size_t why_n)
{
    const uint64_t nw = (uint64_t)(net->n_params + net->n_state), np = (uint64_t)net->n_params;
    char v[N_META][80];
    FsMetaEntry meta[N_META];
    const char *fmt = safetensors_meta(f, "format"), *ver = safetensors_meta(f, "version");
    if (!fmt || strcmp(fmt, FS_CKPT_FORMAT) != 0 || !ver || strcmp(ver, FS_CKPT_VERSION) != 0)
        return snprintf(why, why_n, "not a version %s %s", FS_CKPT_VERSION, FS_CKPT_FORMAT), -1;
    ckpt_meta(c, meta, v, 0, 0);
    for (int i = 2; i <= 4; i++) {
        const char *have = safetensors_meta(f, meta[i].key);
        if (!have || strcmp(have, meta[i].value) != 0)
            return snprintf(why, why_n, "its %s (%s) are not this fold's (%s)", meta[i].key, have ? have : "absent",
                            meta[i].value),
                   -1;
    }
    if (!(t[0] = want(f, "weights", "F32", nw, why, why_n)) || !(t[1] = want(f, "best", "F32", nw, why, why_n)) ||
        !(t[2] = want(f, "m1", "F32", np, why, why_n)) || !(t[3] = want(f, "m2", "F32", np, why, why_n)) ||
        !(t[4] = want(f, "perm", "U32", c->fd->n_train, why, why_n)) ||
        !(t[5] = want(f, "rng", "U64", 4, why, why_n)) || !(t[6] = want(f, "state", "U64", ST_WORDS, why, why_n)) ||
        !(t[7] = want(f, "best_confusion", "U64", (uint64_t)net->classes * (uint64_t)net->classes, why, why_n)) ||
        !(t[8] = want(f, "stop", "U8", sizeof(FsStopState), why, why_n)))
        return -1;
    copy_out(t[6], st);
    const uint64_t ne = st[ST_EPOCHS];
    if (!(t[9] = want(f, "curves", "F32", 4 * ne, why, why_n))) return -1;
    uint32_t crc = 0;
    for (int i = 0; i < N_TENSORS; i++) crc = fs_crc32(t[i]->data, (size_t)tensor_bytes(t[i]), crc);
    char crc_text[16];
    snprintf(crc_text, sizeof crc_text, "%08" PRIx32, crc);
    const char *have_crc = safetensors_meta(f, "crc32");
    if (!have_crc || strcmp(have_crc, crc_text) != 0)
        return snprintf(why, why_n, "its tensors do not match their CRC-32 (damaged)"), -1;
    const int max_e = c->ts->stop.max_epochs;
    if (st[ST_EPOCH] < 1 || st[ST_EPOCH] > (uint64_t)max_e || st[ST_NEXT] >= c->fd->n_train ||
        ne != st[ST_EPOCH] - 1 || st[ST_BEST_EPOCH] > ne || st[ST_STEP_IN_EPOCH] > c->fd->n_train)
        return snprintf(why, why_n, "its epoch %" PRIu64 ", example %" PRIu64 " and %" PRIu64 " epochs done are impossible",
                        st[ST_EPOCH], st[ST_NEXT], ne),
               -1;
    return 0;
}

/* An accepted checkpoint into the model, the fit's state and the curves so far. */
static void ckpt_apply(FsModel *m, const FsTensor **t, const uint64_t *st, FsFitState *s, FsFitResult *out)
{
    const uint64_t ne = st[ST_EPOCHS];
    copy_out(t[0], m->w);
    copy_out(t[1], m->best);
    copy_out(t[2], m->m1);
    copy_out(t[3], m->m2);
    copy_out(t[5], m->rng.s);
    uint64_t conf[FS_MAX_CLASSES * FS_MAX_CLASSES];
    const int K = m->net->classes;
    copy_out(t[7], conf);
    for (int a = 0; a < FS_MAX_CLASSES; a++)
        for (int b = 0; b < FS_MAX_CLASSES; b++) s->best_conf[a][b] = a < K && b < K ? conf[a * K + b] : 0;
    copy_out(t[8], &s->st);
    s->epoch = (int)st[ST_EPOCH];
    s->next = (uint32_t)st[ST_NEXT];
    s->step_in_epoch = (long)st[ST_STEP_IN_EPOCH];
    s->loss_sum = d_bits(st[ST_LOSS_SUM]);
    s->epochs = (int)ne;
    s->best_epoch = (int)st[ST_BEST_EPOCH];
    s->best_loss = f_bits(st[ST_BEST_LOSS]);
    s->n_train_ex = st[ST_TRAIN_EX];
    s->n_val_ex = st[ST_VAL_EX];
    s->val_seconds = d_bits(st[ST_VAL_SECONDS]);
    s->seconds = d_bits(st[ST_SECONDS]);
    m->step = (long)st[ST_STEP];
    float *curves = fs_malloc(sizeof(float) * 4 * (size_t)(ne ? ne : 1));
    copy_out(t[9], curves);
    float *dst[4] = {out->curves.train_loss, out->curves.val_loss, out->curves.val_q3, out->curves.seconds};
    for (int k = 0; k < 4; k++)
        for (uint64_t e = 0; e < ne && dst[k]; e++) dst[k][e] = curves[k * ne + e];
    free(curves);
}

int core_checkpoint_load(FsModel *m, FsCkpt *c, FsFitState *s, FsFitResult *out, uint32_t n_res, char *why,
                         size_t why_n)
{
    const FsCheckpointing *spec = c->spec;
    FsSafetensors f;
    FsErr err = {0};
    uint8_t *copy = fs_malloc((size_t)(spec->resume_n ? spec->resume_n : 1));
    memcpy(copy, spec->resume, (size_t)spec->resume_n);
    /* Named by the caller, who prefixes the origin to why. */
    if (safetensors_parse(&f, copy, spec->resume_n, "", &err) != 0)
        return snprintf(why, why_n, "%s", err.msg[0] == ':' ? err.msg + 2 : err.msg), -1;
    const FsTensor *t[N_TENSORS];
    uint64_t st[ST_WORDS];
    int rc = ckpt_check(&f, c, m->net, t, st, why, why_n);
    if (rc == 0) {
        uint32_t *perm = fs_malloc(sizeof(uint32_t) * ((size_t)c->fd->n_train + 1));
        copy_out(t[4], perm);
        /* Checked against the fold's list before it replaces it (on the
         * host the model's order is that list). */
        if (!perm_ok(perm, c->fd, n_res)) {
            snprintf(why, why_n, "its training order is not a permutation of this fold's training examples");
            rc = -1;
        } else {
            memcpy(m->perm, perm, sizeof(uint32_t) * c->fd->n_train);
            ckpt_apply(m, t, st, s, out);
        }
        free(perm);
    }
    safetensors_free(&f);
    return rc;
}
