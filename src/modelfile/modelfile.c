/*
 * modelfile: saving and loading one trained model (docs/models.md).
 */
#define _GNU_SOURCE
#include "modelfile/modelfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/data.h"
#include "modelfile/layout.h"
#include "safetensors/safetensors.h"

#define MODEL_FORMAT "foldsweep-model"
#define MODEL_FORMAT_VERSION "1"
#define SEEN_TENSOR "foldsweep.seen_proteins"
#define SEQ_RESIDUES "foldsweep.seen_residues"
#define SEQ_OFFSETS "foldsweep.seen_offsets"
#define SEQ_NAMES "foldsweep.seen_names"

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */

static FsTensor byte_tensor(const char *name, const char *dtype, int64_t numel, const void *data)
{
    FsTensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    snprintf(t.dtype, sizeof t.dtype, "%s", dtype);
    t.ndim = 1;
    t.shape[0] = numel;
    t.data = data;
    return t;
}

/* The seen proteins as three tensors (the offsets little-endian, as the
 * rest of the file); returns 3. */
static int seq_tensors(FsTensor *t, const FsSeqSet *s)
{
    t[0] = byte_tensor(SEQ_RESIDUES, "U8", s->off[s->n], s->aa);
    t[1] = byte_tensor(SEQ_OFFSETS, "U32", (int64_t)s->n + 1, s->off);
    t[2] = byte_tensor(SEQ_NAMES, "U8", s->name_off[s->n], s->names);
    return 3;
}

void modelfile_serialize(const FsNet *net, const float *weights, const FsModelInfo *info, uint8_t **out,
                         uint64_t *n_out)
{
    LayoutEntry e[LAYOUT_MAX];
    FsTensor t[LAYOUT_MAX + 4];
    int n = layout_plan(net, e, LAYOUT_MAX);
    FS_ASSERT(n >= 0);
    float *buf = fs_malloc(sizeof(float) * (size_t)(net->n_params + net->n_state + 1));
    long at = 0;
    for (int i = 0; i < n; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].name = e[i].name;
        t[i].ndim = e[i].ndim;
        for (int d = 0; d < e[i].ndim; d++) t[i].shape[d] = e[i].shape[d];
        layout_to_torch(net, &e[i], weights, buf + at);
        t[i].data = buf + at;
        at += layout_numel(&e[i]);
    }
    FS_ASSERT(at == net->n_params + net->n_state);
    if (info->n_seen) {
        memset(&t[n], 0, sizeof t[n]);
        t[n].name = SEEN_TENSOR;
        snprintf(t[n].dtype, sizeof t[n].dtype, "U64");
        t[n].ndim = 1;
        t[n].shape[0] = info->n_seen;
        t[n].data = info->seen;
        n++;
    }
    if (info->seen_seqs) n += seq_tensors(t + n, info->seen_seqs);
    char *arch = modelfile_arch_json(net);
    char idx[16], fold[16], folds[16], best[16], q3[32], loss[32], fp[20], win[16], epochs[16];
    char fold_best[FS_MAX_FOLDS * 12 + 1] = "";
    snprintf(idx, sizeof idx, "%d", info->trial_index);
    modelfile_fold_name(info->fold, fold, sizeof fold);
    snprintf(folds, sizeof folds, "%d", info->folds);
    snprintf(best, sizeof best, "%d", info->best_epoch);
    snprintf(q3, sizeof q3, "%.9g", (double)info->val_q3);
    snprintf(loss, sizeof loss, "%.9g", (double)info->val_loss);
    snprintf(fp, sizeof fp, "%016" PRIx64, info->data_fingerprint);
    if (net->arch.chain)
        snprintf(win, sizeof win, "chain");
    else
        snprintf(win, sizeof win, "%d", net->arch.window);
    snprintf(epochs, sizeof epochs, "%d", info->epochs);
    for (int i = 0, k = 0; i < info->n_fold_best && i < FS_MAX_FOLDS; i++)
        k += snprintf(fold_best + k, sizeof fold_best - (size_t)k, "%s%d", i ? "," : "", info->fold_best[i]);
    FsMetaEntry meta[24] = {
        {"format", MODEL_FORMAT},      {"format_version", MODEL_FORMAT_VERSION},
        {"foldsweep_version", FS_VERSION}, {"arch", arch},
        {"config", info->config ? info->config : "{}"}, {"trial", info->trial},
        {"trial_index", idx},          {"fold", fold},
        {"folds", folds},              {"best_epoch", best},
        {"data_fingerprint", fp},      {"window", win},
        {"alphabet", FS_AA_ALPHABET},  {"classes", fs_class_letters(net->classes)},
    };
    int nm = 14;
    /* No score is written that the model does not have (a refit's). */
    if (info->features) meta[nm++] = (FsMetaEntry){"features", info->features};
    if (isfinite(info->val_q3)) meta[nm++] = (FsMetaEntry){"val_q3", q3};
    if (isfinite(info->val_loss)) meta[nm++] = (FsMetaEntry){"val_loss", loss};
    if (info->epochs > 0) {
        meta[nm++] = (FsMetaEntry){"epochs", epochs};
        meta[nm++] = (FsMetaEntry){"epochs_rule", info->epochs_rule};
        meta[nm++] = (FsMetaEntry){"fold_best_epochs", fold_best};
    }
    safetensors_serialize(t, n, meta, nm, out, n_out);
    free(arch);
    free(buf);
}

void modelfile_fold_name(int fold, char *out, size_t n)
{
    if (fold == FS_FOLD_PREDEFINED) snprintf(out, n, "predefined");
    else if (fold == FS_FOLD_ALL) snprintf(out, n, "all");
    else snprintf(out, n, "%d", fold);
}

int modelfile_fold_parse(const char *s, int *fold)
{
    char *end;
    if (!strcmp(s, "predefined")) return *fold = FS_FOLD_PREDEFINED, 0;
    if (!strcmp(s, "all")) return *fold = FS_FOLD_ALL, 0;
    long k = strtol(s, &end, 10);
    if (end == s || *end || k < 0 || k >= FS_MAX_FOLDS) return -1;
    return *fold = (int)k, 0;
}

/* A whole file, refused unless it is a regular file (a FIFO would hang). */
static int read_all(const char *path, uint8_t **out, uint64_t *n_out, FsErr *err)
{
    uint64_t n;
    int fd = safetensors_open(path, &n, err);
    if (fd < 0) return -1;
    uint8_t *bytes = fs_malloc((size_t)n + 1);
    int rc = safetensors_read_at(fd, bytes, n, 0, path, err);
    close(fd);
    if (rc != 0) return free(bytes), -1;
    *out = bytes;
    *n_out = n;
    return 0;
}

int modelfile_copy(const char *src, const char *dst, FsErr *err)
{
    uint8_t *bytes;
    uint64_t n;
    if (read_all(src, &bytes, &n, err) != 0) return -1;
    int rc = fs_write_file_atomic(dst, bytes, (size_t)n, err);
    free(bytes);
    return rc;
}

uint32_t modelfile_crc(const uint8_t *bytes, uint64_t n) { return fs_crc32(bytes, (size_t)n, 0); }

int modelfile_verify(const char *path, uint64_t bytes, uint32_t crc, char *why, size_t why_n)
{
    FsErr err = {0};
    uint64_t n;
    int fd = safetensors_open(path, &n, &err);
    size_t skip = strncmp(err.msg, path, strlen(path)) ? 0 : strlen(path) + 2; /* "PATH: " */
    if (fd < 0)
        return snprintf(why, why_n, "%s (%s)", strstr(err.msg, "cannot open") ? "missing" : "unreadable", err.msg + skip),
               -1;
    if (n != bytes) {
        close(fd);
        return snprintf(why, why_n, "%llu bytes, expected %llu", (unsigned long long)n, (unsigned long long)bytes), -1;
    }
    uint8_t buf[1 << 16];
    uint32_t c = 0;
    int rc = 0;
    for (uint64_t at = 0; at < n && rc == 0; at += sizeof buf) {
        uint64_t k = n - at < sizeof buf ? n - at : sizeof buf;
        rc = safetensors_read_at(fd, buf, k, at, path, &err);
        c = fs_crc32(buf, (size_t)k, c);
    }
    close(fd);
    if (rc) return snprintf(why, why_n, "cannot be read"), -1;
    if (c != crc) return snprintf(why, why_n, "checksum %08x, expected %08x", (unsigned)c, (unsigned)crc), -1;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Reading                                                                 */

static int meta_int(const FsSafetensors *st, const char *key, int lo, int hi, int *out)
{
    const char *v = safetensors_meta(st, key);
    char *end;
    if (!v || !*v) return -1;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

static int check_format(const FsSafetensors *st, const char *origin, FsErr *err)
{
    const char *fmt = safetensors_meta(st, "format"), *ver = safetensors_meta(st, "format_version");
    if (!fmt || strcmp(fmt, MODEL_FORMAT) != 0)
        return fs_err_set(err, "%s: not a foldsweep model (metadata \"format\" is not \"%s\")", origin, MODEL_FORMAT), -1;
    if (!ver || strcmp(ver, MODEL_FORMAT_VERSION) != 0)
        return fs_err_set(err, "%s: model format version %s; this foldsweep reads %s", origin, ver ? ver : "(none)",
                          MODEL_FORMAT_VERSION),
               -1;
    return 0;
}

/* Every tensor the architecture needs, with its dtype and shape, is in the
 * file: checked before anything is allocated for the weights, so their
 * size is the file's own (bounded by its bytes), never the metadata's say-so. */
static int check_tensors(const FsSafetensors *st, const LayoutEntry *e, int ne, const char *origin, FsErr *err)
{
    int extra = (safetensors_find(st, SEEN_TENSOR) != NULL) + (safetensors_find(st, SEQ_RESIDUES) != NULL) +
                (safetensors_find(st, SEQ_OFFSETS) != NULL) + (safetensors_find(st, SEQ_NAMES) != NULL);
    if (st->n_tensors != ne + extra)
        return fs_err_set(err, "%s: %d tensors, the architecture has %d", origin, st->n_tensors - extra, ne), -1;
    for (int i = 0; i < ne; i++) {
        const FsTensor *t = safetensors_find(st, e[i].name);
        int same = t && !strcmp(t->dtype, "F32") && t->ndim == e[i].ndim;
        for (int d = 0; same && d < e[i].ndim; d++) same = t->shape[d] == e[i].shape[d];
        if (!same) /* the reader's message: which tensor, what it is, what was expected */
            return safetensors_get_f32(st, e[i].name, e[i].ndim, e[i].shape, NULL, origin, err);
    }
    return 0;
}

static int read_seen(FsModelInfo *in, const FsSafetensors *st, const char *origin, FsErr *err)
{
    const FsTensor *seen = safetensors_find(st, SEEN_TENSOR);
    if (!seen) return 0;
    if (strcmp(seen->dtype, "U64") != 0 || seen->ndim != 1 || seen->shape[0] > (1 << 28))
        return fs_err_set(err, "%s: tensor '%s': expected a 1-D U64 tensor", origin, SEEN_TENSOR), -1;
    in->n_seen = (uint32_t)seen->shape[0];
    in->seen = fs_malloc(sizeof(uint64_t) * ((size_t)in->n_seen + 1));
    if (in->n_seen) memcpy(in->seen, seen->data, sizeof(uint64_t) * in->n_seen);
    for (uint32_t i = 1; i < in->n_seen; i++)
        if (in->seen[i] <= in->seen[i - 1])
            return fs_err_set(err, "%s: tensor '%s': fingerprints not sorted and distinct", origin, SEEN_TENSOR), -1;
    return 0;
}

/* The seen proteins' three tensors, all or none; their sizes are the
 * tensors' own (within the file's bytes), checked by data_seqset_from. */
static int read_seqs(FsModelInfo *in, const FsSafetensors *st, const char *origin, FsErr *err)
{
    const FsTensor *r = safetensors_find(st, SEQ_RESIDUES), *o = safetensors_find(st, SEQ_OFFSETS),
                   *nm = safetensors_find(st, SEQ_NAMES);
    if (!r && !o && !nm) return 0;
    if (!r || !o || !nm || strcmp(r->dtype, "U8") || strcmp(o->dtype, "U32") || strcmp(nm->dtype, "U8") ||
        r->ndim != 1 || o->ndim != 1 || nm->ndim != 1)
        return fs_err_set(err, "%s: tensors '%s' (1-D U8), '%s' (1-D U32) and '%s' (1-D U8) go together", origin,
                          SEQ_RESIDUES, SEQ_OFFSETS, SEQ_NAMES), -1;
    char why[160];
    FsSeqSet *s = fs_calloc(1, sizeof *s);
    if (data_seqset_from(s, r->data, (uint64_t)r->shape[0], o->data, (uint64_t)o->shape[0], nm->data,
                         (uint64_t)nm->shape[0], why, sizeof why) != 0) {
        free(s);
        return fs_err_set(err, "%s: the seen proteins' tensors: %s", origin, why), -1;
    }
    in->seen_seqs = s;
    return 0;
}

/* Weights must be numbers: a NaN or an infinity would predict NaN for
 * every residue (a diverged model, or damage that kept the CRC-less file). */
static int check_finite(const float *w, long n, const char *name, const char *origin, FsErr *err)
{
    for (long k = 0; k < n; k++)
        if (!isfinite(w[k]))
            return fs_err_set(err, "%s: tensor '%s': element %ld is %s; expected finite weights (a diverged model, or "
                              "a damaged file)", origin, name, k, isnan(w[k]) ? "NaN" : "infinite"),
                   -1;
    return 0;
}

static int read_weights(FsSavedModel *m, const FsSafetensors *st, const char *origin, FsErr *err)
{
    LayoutEntry e[LAYOUT_MAX];
    int ne = layout_plan(&m->net, e, LAYOUT_MAX);
    if (check_tensors(st, e, ne, origin, err) || read_seen(&m->info, st, origin, err) ||
        read_seqs(&m->info, st, origin, err))
        return -1;
    long total = m->net.n_params + m->net.n_state;
    m->weights = fs_calloc((size_t)total + 1, sizeof(float));
    float *tmp = fs_malloc(sizeof(float) * ((size_t)total + 1));
    int rc = 0;
    for (int i = 0; i < ne && rc == 0; i++) {
        rc = safetensors_get_f32(st, e[i].name, e[i].ndim, e[i].shape, tmp, origin, err) ||
             check_finite(tmp, layout_numel(&e[i]), e[i].name, origin, err);
        if (rc == 0) layout_from_torch(&m->net, &e[i], tmp, m->weights);
    }
    free(tmp);
    return rc ? -1 : 0;
}

static void read_info(FsSavedModel *m, const FsSafetensors *st)
{
    FsModelInfo *in = &m->info;
    const char *v;
    if ((v = safetensors_meta(st, "trial"))) snprintf(in->trial, sizeof in->trial, "%s", v);
    if (!(v = safetensors_meta(st, "fold")) || modelfile_fold_parse(v, &in->fold) != 0) in->fold = 0;
    (void)meta_int(st, "trial_index", 0, 1 << 30, &in->trial_index);
    (void)meta_int(st, "folds", 1, 1 << 20, &in->folds);
    (void)meta_int(st, "best_epoch", 0, 1 << 24, &in->best_epoch);
    in->val_q3 = in->val_loss = NAN;
    /* A refit has no validation scores: earlier builds wrote 0 for them. */
    if ((v = safetensors_meta(st, "val_q3")) && in->fold != FS_FOLD_ALL) in->val_q3 = strtof(v, NULL);
    if ((v = safetensors_meta(st, "val_loss")) && in->fold != FS_FOLD_ALL) in->val_loss = strtof(v, NULL);
    if (meta_int(st, "epochs", 1, 1 << 24, &in->epochs) == 0) {
        if ((v = safetensors_meta(st, "epochs_rule"))) snprintf(in->epochs_rule, sizeof in->epochs_rule, "%s", v);
        char *end; /* "3,5,4" */
        for (v = safetensors_meta(st, "fold_best_epochs"); v && in->n_fold_best < FS_MAX_FOLDS;
             v = *end == ',' ? end + 1 : NULL) {
            long e = strtol(v, &end, 10);
            if (end == v || e < 0 || e > (1 << 24)) break;
            in->fold_best[in->n_fold_best++] = (int)e;
        }
    }
    if ((v = safetensors_meta(st, "data_fingerprint"))) in->data_fingerprint = strtoull(v, NULL, 16);
    in->config = fs_strdup((v = safetensors_meta(st, "config")) ? v : "{}");
    in->features = (v = safetensors_meta(st, "features")) ? fs_strdup(v) : NULL;
    snprintf(m->version, sizeof m->version, "%s", (v = safetensors_meta(st, "foldsweep_version")) ? v : "?");
}

/* A parsed safetensors file as a model; st is freed here. */
static int model_from(FsSavedModel *m, FsSafetensors *st, const char *origin, int max_batch, FsErr *err)
{
    FsErr e2 = {0};
    FsArch arch;
    const char *arch_json = safetensors_meta(st, "arch");
    int rc = check_format(st, origin, err);
    if (rc == 0 && (!arch_json || modelfile_arch_parse(&arch, arch_json, &e2) != 0 ||
                    model_compile(&m->net, &arch, max_batch, &e2) != 0)) {
        fs_err_set(err, "%s: metadata %s", origin, arch_json ? e2.msg : "lacks \"arch\"");
        rc = -1;
    }
    if (rc == 0) rc = read_weights(m, st, origin, err);
    if (rc == 0) read_info(m, st);
    /* The sources must be there and readable exactly when the net reads
     * feature columns: predict takes new proteins' columns from them. */
    FsFeatSpec spec;
    if (rc == 0 && (m->info.features != NULL) != (arch.feat_dim > 0)) {
        fs_err_set(err, "%s: metadata %s", origin,
                   arch.feat_dim ? "lacks \"features\" (the arch reads feature columns)"
                                 : "has \"features\" but the arch reads no feature columns");
        rc = -1;
    } else if (rc == 0 && m->info.features) {
        if (modelfile_features_parse(&spec, m->info.features, &e2) != 0) {
            fs_err_set(err, "%s: metadata %s", origin, e2.msg);
            rc = -1;
        } else {
            modelfile_features_free(&spec);
        }
    }
    safetensors_free(st);
    if (rc != 0) modelfile_free(m);
    return rc;
}

int modelfile_parse(FsSavedModel *m, uint8_t *bytes, uint64_t n, const char *origin, int max_batch, FsErr *err)
{
    FsSafetensors st;
    memset(m, 0, sizeof *m);
    if (safetensors_parse(&st, bytes, n, origin, err) != 0) return -1;
    return model_from(m, &st, origin, max_batch, err);
}

int modelfile_load(FsSavedModel *m, const char *path, int max_batch, FsErr *err)
{
    FsSafetensors st;
    memset(m, 0, sizeof *m);
    if (safetensors_read(&st, path, err) != 0) return -1;
    return model_from(m, &st, path, max_batch, err);
}

void modelfile_free(FsSavedModel *m)
{
    free(m->weights);
    free(m->info.seen);
    if (m->info.seen_seqs) data_seqset_free(m->info.seen_seqs);
    free(m->info.seen_seqs);
    free(m->info.config);
    free(m->info.features);
    memset(m, 0, sizeof *m);
}
