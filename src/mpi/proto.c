/*
 * proto: the coordinator-worker messages, little-endian binary: reading
 * them (proto_encode.c writes them). Every decoder bounds each read by the
 * message length and checks each value, because a message from another
 * process is input like any file.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "mpi/mpi.h"

/* ---------------------------------------------------------------------- */
/* Reading                                                                 */

typedef struct {
    const uint8_t *p;
    size_t n, off;
    int bad;
} FsRd;

static int get(FsRd *r, void *v, size_t n)
{
    if (r->bad || n > r->n - r->off) {
        r->bad = 1;
        memset(v, 0, n);
        return -1;
    }
    memcpy(v, r->p + r->off, n);
    r->off += n;
    return 0;
}

static int32_t get_i32(FsRd *r)
{
    int32_t v;
    get(r, &v, 4);
    return v;
}

static uint32_t get_u32(FsRd *r)
{
    uint32_t v;
    get(r, &v, 4);
    return v;
}

static uint64_t get_u64(FsRd *r)
{
    uint64_t v;
    get(r, &v, 8);
    return v;
}

static float get_f32(FsRd *r)
{
    float v;
    get(r, &v, 4);
    return v;
}

static double get_f64(FsRd *r)
{
    double v;
    get(r, &v, 8);
    return v;
}

static int fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

const char *proto_kind_name(int kind)
{
    switch (kind) {
    case FS_MSG_REQUEST: return "REQUEST";
    case FS_MSG_TRIALS: return "TRIALS";
    case FS_MSG_RESULT: return "RESULT";
    case FS_MSG_ERROR: return "ERROR";
    case FS_MSG_STOP: return "STOP";
    case FS_MSG_BYE: return "BYE";
    case FS_MSG_EPOCH: return "EPOCH";
    case FS_MSG_PRUNE: return "PRUNE";
    case FS_MSG_CKPT: return "CKPT";
    case FS_MSG_PROGRESS: return "PROGRESS";
    case FS_MSG_FAIL: return "FAIL";
    case FS_MSG_RESUMED: return "RESUMED";
    default: return "unknown";
    }
}

int proto_check(const uint8_t *p, size_t n, int tag, char *why, size_t why_n)
{
    if (n < FS_PROTO_HEADER)
        return fail(why, why_n, "%zu bytes, shorter than the %d-byte header", n, FS_PROTO_HEADER);
    uint32_t h[4];
    memcpy(h, p, sizeof h);
    if (h[0] != FS_PROTO_MAGIC) return fail(why, why_n, "bad magic 0x%08x (not a foldsweep message)", h[0]);
    if (h[1] != FS_PROTO_VERSION)
        return fail(why, why_n, "protocol version %u, this build speaks %u (mixed foldsweep versions?)", h[1],
                    FS_PROTO_VERSION);
    if ((int)h[2] != tag)
        return fail(why, why_n, "header says %s but the message came with tag %d (%s)", proto_kind_name((int)h[2]),
                    tag, proto_kind_name(tag));
    if ((size_t)h[3] != n - FS_PROTO_HEADER)
        return fail(why, why_n, "payload length %u in the header, %zu received", h[3], n - FS_PROTO_HEADER);
    return 0;
}

/* Starts reading a checked message of a kind; -1 if it is not one. */
static int open_msg(FsRd *r, const uint8_t *p, size_t n, int kind, char *why, size_t why_n)
{
    if (proto_check(p, n, kind, why, why_n) != 0) return -1;
    r->p = p;
    r->n = n;
    r->off = FS_PROTO_HEADER;
    r->bad = 0;
    return 0;
}

static int close_msg(FsRd *r, const char *kind, char *why, size_t why_n)
{
    if (r->bad) return fail(why, why_n, "%s payload truncated", kind);
    if (r->off != r->n) return fail(why, why_n, "%s payload has %zu trailing bytes", kind, r->n - r->off);
    return 0;
}

static int get_item(FsRd *r, FsWorkItem *it, char *why, size_t why_n)
{
    it->trial = get_i32(r);
    it->fold = get_i32(r);
    get(r, it->id, FS_TRIAL_ID_LEN);
    it->id[FS_TRIAL_ID_LEN] = 0;
    it->seed = get_i32(r);
    if (r->bad) return -1;
    for (int i = 0; i < FS_TRIAL_ID_LEN; i++) {
        char c = it->id[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return fail(why, why_n, "trial id is not %d hex digits", FS_TRIAL_ID_LEN);
    }
    if (it->trial < 0) return fail(why, why_n, "negative trial index %d", it->trial);
    if (it->fold < FS_FOLD_PREDEFINED || it->fold >= FS_MAX_FOLDS) return fail(why, why_n, "fold %d out of range", it->fold);
    if (it->seed < 0 || it->seed >= FS_MAX_SEEDS) return fail(why, why_n, "seed %d out of range", it->seed);
    return 0;
}

int proto_decode_request(const uint8_t *p, size_t n, int32_t *capacity, FsWorkItem *held, int *n_held, char *why,
                         size_t why_n)
{
    FsRd r;
    *n_held = 0;
    if (open_msg(&r, p, n, FS_MSG_REQUEST, why, why_n)) return -1;
    *capacity = get_i32(&r);
    int32_t k = get_i32(&r);
    if (r.bad) return fail(why, why_n, "REQUEST payload truncated");
    if (*capacity < 0 || *capacity > FS_PROTO_MAX_ITEMS)
        return fail(why, why_n, "REQUEST capacity %d out of range 0..%d", *capacity, FS_PROTO_MAX_ITEMS);
    if (k < 0 || k > FS_PROTO_MAX_ITEMS)
        return fail(why, why_n, "REQUEST held count %d out of range 0..%d", k, FS_PROTO_MAX_ITEMS);
    for (int i = 0; i < k; i++)
        if (get_item(&r, &held[i], why, why_n)) return r.bad ? fail(why, why_n, "REQUEST payload truncated") : -1;
    *n_held = k;
    return close_msg(&r, "REQUEST", why, why_n);
}

int proto_decode_trials(const uint8_t *p, size_t n, FsWorkItem *items, int *n_items, char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_TRIALS, why, why_n)) return -1;
    int32_t k = get_i32(&r);
    if (r.bad || k < 0 || k > FS_PROTO_MAX_ITEMS)
        return fail(why, why_n, "TRIALS count %d out of range 0..%d", k, FS_PROTO_MAX_ITEMS);
    for (int i = 0; i < k; i++)
        if (get_item(&r, &items[i], why, why_n)) return r.bad ? fail(why, why_n, "TRIALS payload truncated") : -1;
    *n_items = k;
    return close_msg(&r, "TRIALS", why, why_n);
}

int proto_decode_result(const uint8_t *p, size_t n, FsWorkItem *item, FsFitResult *res, char *why, size_t why_n)
{
    FsRd r;
    memset(res, 0, sizeof *res);
    if (open_msg(&r, p, n, FS_MSG_RESULT, why, why_n)) return -1;
    if (get_item(&r, item, why, why_n)) return r.bad ? fail(why, why_n, "RESULT payload truncated") : -1;
    int32_t status = get_i32(&r);
    res->epochs = get_i32(&r);
    res->best_epoch = get_i32(&r);
    res->halted_by = get_i32(&r);
    int32_t monitor = get_i32(&r);
    res->diverged_epoch = get_i32(&r);
    res->diverged_step = (long)get_u64(&r);
    res->best_val_loss = get_f32(&r);
    const int32_t classes = get_i32(&r);
    if (!r.bad && classes != FS_CLASSES && classes != FS_CLASSES8)
        return fail(why, why_n, "RESULT class count %d (expected 3 or 8)", classes);
    res->classes = classes;
    for (int i = 0; i < classes && !r.bad; i++)
        for (int k = 0; k < classes; k++) res->best_confusion[i][k] = get_u64(&r);
    res->train_examples = get_u64(&r);
    res->val_examples = get_u64(&r);
    res->seconds = get_f64(&r);
    res->val_seconds = get_f64(&r);
    const int32_t gpu_path = get_i32(&r), gpu_group = get_i32(&r);
    int32_t ne = get_i32(&r);
    if (r.bad) return fail(why, why_n, "RESULT payload truncated");
    if (status < FS_FIT_OK || status > FS_FIT_CANCELLED) return fail(why, why_n, "RESULT status %d unknown", status);
    if (gpu_path < 0 || gpu_path >= FS_GPU_PATH_COUNT) return fail(why, why_n, "RESULT GPU tier %d unknown", gpu_path);
    res->gpu_path = gpu_path;
    if (gpu_group < 0 || gpu_group > FS_GPU_LIB_GROUP_MAX || (gpu_group && gpu_path != FS_GPU_PATH_LIBRARY))
        return fail(why, why_n, "RESULT GPU group width %d (expected 0, or 1 to %d on the library tier)", gpu_group,
                    FS_GPU_LIB_GROUP_MAX);
    res->gpu_group = gpu_group;
    res->status = (FsFitStatus)status;
    res->monitor = (FsMonitor)monitor; /* range-checked below (train_result_check) */
    if (res->epochs < 0 || res->epochs > FS_PROTO_MAX_EPOCHS || ne != res->epochs)
        return fail(why, why_n, "RESULT epochs %d / curve length %d inconsistent", res->epochs, ne);
    if (res->best_epoch < 0 || res->best_epoch > res->epochs)
        return fail(why, why_n, "RESULT best epoch %d outside 0..%d", res->best_epoch, res->epochs);
    if (!isfinite(res->seconds) || res->seconds < 0 || !isfinite(res->val_seconds) || res->val_seconds < 0)
        return fail(why, why_n, "RESULT seconds not a finite non-negative number");
    char bad[160];
    /* Nothing goes to the journal that its reader would refuse. */
    if (train_result_check(res, bad, sizeof bad) != 0) return fail(why, why_n, "RESULT %s", bad);
    if ((size_t)ne * 16 > r.n - r.off) return fail(why, why_n, "RESULT payload truncated in its curves");
    /* train_result_alloc clears the whole result: take only its curves. */
    FsFitResult holder;
    train_result_alloc(&holder, ne > 0 ? ne : 1);
    res->curves = holder.curves;
    for (int e = 0; e < ne; e++) {
        res->curves.train_loss[e] = get_f32(&r);
        res->curves.val_loss[e] = get_f32(&r);
        res->curves.val_q3[e] = get_f32(&r);
        res->curves.seconds[e] = get_f32(&r);
    }
    uint32_t ml = get_u32(&r);
    if (r.bad || ml >= sizeof res->message || ml > r.n - r.off) {
        train_result_free(res);
        return fail(why, why_n, "RESULT message length %u invalid", ml);
    }
    get(&r, res->message, ml);
    res->message[ml] = 0;
    uint64_t nw = get_u64(&r);
    if (r.bad || nw > (r.n - r.off) / sizeof(float) || nw > FS_PROTO_MAX_WEIGHTS) {
        train_result_free(res);
        return fail(why, why_n, "RESULT weight count %llu invalid", (unsigned long long)nw);
    }
    if (nw) {
        res->n_weights = (long)nw;
        res->weights = fs_malloc(nw * sizeof(float));
        get(&r, res->weights, nw * sizeof(float));
    }
    if (close_msg(&r, "RESULT", why, why_n)) {
        train_result_free(res);
        return -1;
    }
    return 0;
}

/* A text of at most 1000 bytes (the encoders' cap), kept to message_n - 1. */
static int get_text(FsRd *r, const char *name, char *message, size_t message_n, char *why, size_t why_n)
{
    uint32_t ml = get_u32(r);
    if (r->bad || ml > r->n - r->off || ml > 1000) return fail(why, why_n, "%s message length invalid", name);
    size_t keep = ml < message_n - 1 ? ml : message_n - 1;
    memcpy(message, r->p + r->off, keep);
    message[keep] = 0;
    r->off += ml;
    return 0;
}

static int decode_text(const uint8_t *p, size_t n, int kind, char *message, size_t message_n, char *why,
                       size_t why_n)
{
    FsRd r;
    const char *name = proto_kind_name(kind);
    if (open_msg(&r, p, n, kind, why, why_n)) return -1;
    if (get_text(&r, name, message, message_n, why, why_n)) return -1;
    return close_msg(&r, name, why, why_n);
}

int proto_decode_error(const uint8_t *p, size_t n, char *message, size_t message_n, char *why, size_t why_n)
{
    return decode_text(p, n, FS_MSG_ERROR, message, message_n, why, why_n);
}

int proto_decode_fail(const uint8_t *p, size_t n, char *message, size_t message_n, char *why, size_t why_n)
{
    return decode_text(p, n, FS_MSG_FAIL, message, message_n, why, why_n);
}

int proto_decode_stop(const uint8_t *p, size_t n, int32_t *cancel, int32_t *exit_code, char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_STOP, why, why_n)) return -1;
    *cancel = get_i32(&r);
    *exit_code = get_i32(&r);
    if (close_msg(&r, "STOP", why, why_n)) return -1;
    if (*exit_code < 0 || *exit_code > 3) return fail(why, why_n, "STOP exit code %d out of range", *exit_code);
    return 0;
}

int proto_decode_bye(const uint8_t *p, size_t n, double *gpu_kernel_seconds, double *gpu_host_seconds, char *why,
                     size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_BYE, why, why_n)) return -1;
    *gpu_kernel_seconds = get_f64(&r);
    *gpu_host_seconds = get_f64(&r);
    if (close_msg(&r, "BYE", why, why_n)) return -1;
    const double v[2] = {*gpu_kernel_seconds, *gpu_host_seconds};
    for (int i = 0; i < 2; i++)
        if (!isfinite(v[i]) || v[i] < 0 || v[i] >= 1e9)
            return fail(why, why_n, "BYE's GPU %s seconds %g are not a time of 0 to 10^9 s", i ? "host" : "kernel", v[i]);
    return 0;
}

int proto_decode_epoch(const uint8_t *p, size_t n, FsWorkItem *item, int32_t *first, int32_t *count, FsCurves *c,
                       char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_EPOCH, why, why_n)) return -1;
    if (get_item(&r, item, why, why_n)) return r.bad ? fail(why, why_n, "EPOCH payload truncated") : -1;
    *first = get_i32(&r);
    *count = get_i32(&r);
    if (r.bad) return fail(why, why_n, "EPOCH payload truncated");
    if (*first < 1 || *count < 1 || *count > FS_PROTO_MAX_EPOCHS || *first > FS_PROTO_MAX_EPOCHS - *count + 1)
        return fail(why, why_n, "EPOCH epochs %d..+%d out of range 1..%d", *first, *count, FS_PROTO_MAX_EPOCHS);
    for (int i = 0; i < *count; i++) {
        c->val_q3[i] = get_f32(&r);
        c->val_loss[i] = get_f32(&r);
        c->train_loss[i] = get_f32(&r);
        c->seconds[i] = get_f32(&r);
        if (r.bad) return fail(why, why_n, "EPOCH payload truncated");
        if (!(c->val_q3[i] >= 0.0f && c->val_q3[i] <= 1.0f))
            return fail(why, why_n, "EPOCH q3 %g out of range 0..1", (double)c->val_q3[i]);
    }
    return close_msg(&r, "EPOCH", why, why_n);
}

int proto_decode_prune(const uint8_t *p, size_t n, FsWorkItem *item, char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_PRUNE, why, why_n)) return -1;
    if (get_item(&r, item, why, why_n)) return r.bad ? fail(why, why_n, "PRUNE payload truncated") : -1;
    return close_msg(&r, "PRUNE", why, why_n);
}

int proto_decode_ckpt(const uint8_t *p, size_t n, FsWorkItem *item, const uint8_t **bytes, uint64_t *n_bytes,
                      char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_CKPT, why, why_n)) return -1;
    if (get_item(&r, item, why, why_n)) return r.bad ? fail(why, why_n, "CKPT payload truncated") : -1;
    uint64_t nb = get_u64(&r);
    if (r.bad || nb != r.n - r.off) return fail(why, why_n, "CKPT length does not match its payload");
    *bytes = r.p + r.off;
    *n_bytes = nb;
    return 0;
}

int proto_decode_progress(const uint8_t *p, size_t n, FsProgressItem *items, int *n_items, char *why, size_t why_n)
{
    FsRd r;
    *n_items = 0;
    if (open_msg(&r, p, n, FS_MSG_PROGRESS, why, why_n)) return -1;
    int32_t k = get_i32(&r);
    if (r.bad || k < 0 || k > FS_PROTO_MAX_ITEMS)
        return fail(why, why_n, "PROGRESS count %d out of range 0..%d", k, FS_PROTO_MAX_ITEMS);
    for (int i = 0; i < k; i++) {
        if (get_item(&r, &items[i].item, why, why_n)) return r.bad ? fail(why, why_n, "PROGRESS payload truncated") : -1;
        items[i].epochs = get_i32(&r);
        items[i].examples = get_u64(&r);
        if (r.bad) return fail(why, why_n, "PROGRESS payload truncated");
        if (items[i].epochs < 0 || items[i].epochs > FS_PROTO_MAX_EPOCHS)
            return fail(why, why_n, "PROGRESS epochs %d out of range 0..%d", items[i].epochs, FS_PROTO_MAX_EPOCHS);
    }
    *n_items = k;
    return close_msg(&r, "PROGRESS", why, why_n);
}

int proto_decode_resumed(const uint8_t *p, size_t n, FsWorkItem *item, int32_t *epoch, uint32_t *next, char *note,
                         size_t note_n, char *why, size_t why_n)
{
    FsRd r;
    if (open_msg(&r, p, n, FS_MSG_RESUMED, why, why_n)) return -1;
    if (get_item(&r, item, why, why_n)) return r.bad ? fail(why, why_n, "RESUMED payload truncated") : -1;
    *epoch = get_i32(&r);
    *next = get_u32(&r);
    if (r.bad) return fail(why, why_n, "RESUMED payload truncated");
    if (get_text(&r, "RESUMED", note, note_n, why, why_n) || close_msg(&r, "RESUMED", why, why_n)) return -1;
    if (*epoch < 0 || *epoch > FS_PROTO_MAX_EPOCHS)
        return fail(why, why_n, "RESUMED epoch %d out of range 0..%d", *epoch, FS_PROTO_MAX_EPOCHS);
    if ((*epoch > 0) == (note[0] != 0))
        return fail(why, why_n, "RESUMED at epoch %d %s", *epoch,
                    *epoch > 0 ? "with a refusal's reason" : "without a reason for the refusal");
    return 0;
}
