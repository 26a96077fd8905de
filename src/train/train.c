/*
 * train: host side of the CPU trainer. Lays out one model's buffer from the
 * net's size table, builds the fold's example lists, runs fit_model, and
 * spreads jobs over a pool of worker threads.
 */
#include "train/train.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train/core.h"

void train_spec_defaults(FsTrainSpec *ts)
{
    memset(ts, 0, sizeof *ts);
    ts->opt = FS_OPT_ADAM;
    ts->lr = 1e-3f;
    ts->momentum = 0.9f;
    ts->beta1 = 0.9f;
    ts->beta2 = 0.999f;
    ts->eps = 1e-7f; /* Keras' default */
    ts->batch = 8;
    ts->eval_batch = 256;
    ts->batch_residues = FS_TRAIN_BATCH_RESIDUES;
    ts->stop.kind = FS_STOP_MAX_EPOCHS;
    ts->stop.alpha = 5.0f;
    ts->stop.strip = 5;
    ts->stop.s = 3;
    ts->stop.patience = 5;
    ts->stop.max_epochs = 30;
    ts->monitor = FS_MONITOR_LOSS; /* Keras' default, and every build's before training.monitor */
    ts->lr_schedule = FS_LR_CONSTANT; /* every build's before training.lr_schedule */
    ts->lr_step_every = 10;
    ts->lr_step_factor = 0.5f;
    ts->warmup_epochs = 0;
    ts->class_weights = FS_CW_NONE;
}

const char *const train_opt_names[FS_OPT_COUNT] = {"sgd", "adam", "adamw"};
const char *const train_monitor_names[FS_MONITOR_COUNT] = {"loss", "q3"};
const char *const train_lr_schedule_names[FS_LR_SCHEDULE_COUNT] = {"constant", "step", "cosine"};
const char *const train_class_weights_names[FS_CW_COUNT] = {"none", "balanced", "explicit"};
static const char *status_names[] = {"ok", "diverged", "failed", "cancelled"};

const char *train_opt_name(FsOptKind k) { return (unsigned)k < FS_OPT_COUNT ? train_opt_names[k] : "?"; }
const char *train_monitor_name(FsMonitor m)
{
    return (unsigned)m < FS_MONITOR_COUNT ? train_monitor_names[m] : "?";
}
const char *train_lr_schedule_name(FsLrSchedule s)
{
    return (unsigned)s < FS_LR_SCHEDULE_COUNT ? train_lr_schedule_names[s] : "?";
}
const char *train_class_weights_name(FsClassWeights c)
{
    return (unsigned)c < FS_CW_COUNT ? train_class_weights_names[c] : "?";
}
const char *train_status_name(FsFitStatus s) { return (unsigned)s < 4 ? status_names[s] : "?"; }

int train_spec_check(const FsTrainSpec *ts, FsErr *err)
{
    if ((unsigned)ts->opt > FS_OPT_ADAMW) return fs_err_set(err, "optimizer: expected sgd, adam or adamw"), -1;
    if (!(ts->lr > 0.0f) || !isfinite(ts->lr))
        return fs_err_set(err, "learning rate must be a positive number, got %g", ts->lr), -1;
    if (!(ts->momentum >= 0.0f && ts->momentum < 1.0f))
        return fs_err_set(err, "momentum must be in [0, 1), got %g", ts->momentum), -1;
    if (!(ts->beta1 >= 0.0f && ts->beta1 < 1.0f) || !(ts->beta2 >= 0.0f && ts->beta2 < 1.0f))
        return fs_err_set(err, "beta1 and beta2 must be in [0, 1), got %g and %g", ts->beta1, ts->beta2), -1;
    if (!(ts->eps > 0.0f)) return fs_err_set(err, "epsilon must be > 0, got %g", ts->eps), -1;
    if (!(ts->weight_decay >= 0.0f))
        return fs_err_set(err, "weight decay must be >= 0, got %g", ts->weight_decay), -1;
    if (!(ts->clip_norm >= 0.0f))
        return fs_err_set(err, "gradient clip norm must be >= 0 (0 = off), got %g", ts->clip_norm), -1;
    if (ts->batch < 1) return fs_err_set(err, "batch size must be at least 1, got %d", ts->batch), -1;
    if (ts->batch_residues < 1 || ts->batch_residues > FS_TRAIN_MAX_BATCH_RESIDUES)
        return fs_err_set(err, "batch_residues must be from 1 to %d, got %d", FS_TRAIN_MAX_BATCH_RESIDUES,
                          ts->batch_residues),
               -1;
    if (ts->eval_batch < 1)
        return fs_err_set(err, "validation batch size must be at least 1, got %d", ts->eval_batch), -1;
    if ((unsigned)ts->monitor >= FS_MONITOR_COUNT)
        return fs_err_set(err, "monitor: expected loss or q3, got %d", (int)ts->monitor), -1;
    if ((unsigned)ts->lr_schedule >= FS_LR_SCHEDULE_COUNT)
        return fs_err_set(err, "lr_schedule: expected constant, step or cosine, got %d", (int)ts->lr_schedule), -1;
    if (ts->lr_step_every < 1 || !(ts->lr_step_factor > 0.0f && ts->lr_step_factor <= 1.0f))
        return fs_err_set(err, "lr_step_every must be >= 1 and lr_step_factor in (0, 1], got %d and %g",
                          ts->lr_step_every, ts->lr_step_factor), -1;
    if (ts->warmup_epochs < 0 || ts->warmup_epochs > FS_TRAIN_MAX_EPOCHS)
        return fs_err_set(err, "warmup_epochs must be from 0 to %d, got %d", FS_TRAIN_MAX_EPOCHS, ts->warmup_epochs), -1;
    if ((unsigned)ts->class_weights >= FS_CW_COUNT)
        return fs_err_set(err, "class_weights: expected none, balanced or explicit, got %d", (int)ts->class_weights),
               -1;
    /* Past the third, a class's weight is 0 where the run has 3 classes. */
    for (int c = 0; c < FS_MAX_CLASSES && ts->class_weights == FS_CW_EXPLICIT; c++)
        if (!(ts->class_w[c] > 0.0f && ts->class_w[c] <= FS_CW_MAX) && !(c >= FS_CLASSES && ts->class_w[c] == 0.0f))
            return fs_err_set(err, "class_weights: class %c's weight must be > 0 and at most %g, got %g",
                              fs_class_letters(ts->class_w[FS_CLASSES] > 0.0f ? FS_CLASSES8 : FS_CLASSES)[c],
                              (double)FS_CW_MAX, (double)ts->class_w[c]),
                   -1;
    return stop_spec_check(&ts->stop, err);
}

/* ---------------------------------------------------------------------- */
/* One model's buffer: floats first (64-byte aligned blocks), then bytes.  */

static size_t align64(size_t n) { return FS_ALIGN64(n); }

size_t core_model_bytes(const FsNet *net, uint32_t n_train)
{
    size_t f = sizeof(float), nw = (size_t)(net->n_params + net->n_state), np = (size_t)net->n_params;
    return align64(nw * f) * 2 + align64(np * f) * 3 + align64((size_t)net->n_work * f) +
           align64((size_t)net->n_scratch * f) + core_model_hot_bytes(net) + align64((size_t)n_train * 4);
}

size_t core_lib_state_bytes(void) { return FS_LIB_STATE_BYTES; }

void core_model_bind(FsModel *m, const FsNet *net, void *buf, uint32_t n_train)
{
    size_t f = sizeof(float), nw = (size_t)(net->n_params + net->n_state), np = (size_t)net->n_params;
    char *p = buf;
    memset(m, 0, sizeof *m);
    m->net = net;
#define TAKE(field, type, bytes)      \
    m->field = (type *)(void *)p;     \
    p += align64(bytes)
    TAKE(w, float, nw * f);
    TAKE(best, float, nw * f);
    TAKE(g, float, np * f);
    TAKE(m1, float, np * f);
    TAKE(m2, float, np * f);
    TAKE(work, float, (size_t)net->n_work * f);
    TAKE(scratch, float, (size_t)net->n_scratch * f);
    core_model_bind_hot(m, net, p);
    p += core_model_hot_bytes(net);
    TAKE(perm, uint32_t, (size_t)n_train * 4);
#undef TAKE
}

/* ---------------------------------------------------------------------- */

void train_result_alloc(FsFitResult *r, int max_epochs)
{
    memset(r, 0, sizeof *r);
    size_t n = (size_t)(max_epochs > 0 ? max_epochs : 1);
    r->curves.train_loss = fs_calloc(n, sizeof(float));
    r->curves.val_loss = fs_calloc(n, sizeof(float));
    r->curves.val_q3 = fs_calloc(n, sizeof(float));
    r->curves.seconds = fs_calloc(n, sizeof(float));
}

void train_result_free(FsFitResult *r)
{
    train_result_drop_weights(r);
    free(r->curves.train_loss);
    free(r->curves.val_loss);
    free(r->curves.val_q3);
    free(r->curves.seconds);
    memset(&r->curves, 0, sizeof r->curves);
}

int train_result_check(const FsFitResult *r, char *why, size_t why_n)
{
    if (r->epochs < 0 || r->epochs > FS_TRAIN_MAX_EPOCHS)
        return snprintf(why, why_n, "epochs %d outside 0..%d", r->epochs, FS_TRAIN_MAX_EPOCHS), -1;
    if (r->best_epoch < 0 || r->best_epoch > r->epochs)
        return snprintf(why, why_n, "best epoch %d outside 0..%d", r->best_epoch, r->epochs), -1;
    if (r->halted_by != 0 && r->halted_by != 1) return snprintf(why, why_n, "halted_by %d is not 0 or 1", r->halted_by), -1;
    if ((unsigned)r->monitor >= FS_MONITOR_COUNT)
        return snprintf(why, why_n, "monitor %d is not loss (0) or q3 (1)", (int)r->monitor), -1;
    if (r->diverged_epoch < 0 || r->diverged_epoch > r->epochs + 1)
        return snprintf(why, why_n, "diverged epoch %d outside 0..%d", r->diverged_epoch, r->epochs + 1), -1;
    if (r->diverged_step < 0) return snprintf(why, why_n, "diverged step %ld is negative", r->diverged_step), -1;
    return 0;
}

float *train_result_alloc_weights(FsFitResult *r, const FsArch *arch)
{
    FsNet net;
    FsErr err = {0};
    train_result_drop_weights(r);
    if (model_compile(&net, arch, 1, &err) != 0) return NULL;
    r->n_weights = net.n_params + net.n_state;
    r->weights = fs_calloc((size_t)(r->n_weights > 0 ? r->n_weights : 1), sizeof(float));
    return r->weights;
}

void train_result_drop_weights(FsFitResult *r)
{
    free(r->weights);
    r->weights = NULL;
    r->n_weights = 0;
}

double train_result_metric(const FsFitResult *r, FsMetricKind m)
{
    if (m == FS_METRIC_LOSS) return r->best_val_loss;
    FsMetrics q;
    metrics_from_classes(&q, r->classes, r->best_confusion);
    return m == FS_METRIC_Q8 ? q.q8 : q.q3;
}

FsObjectiveFold train_result_objective(const FsFitResult *r)
{
    return (FsObjectiveFold){train_result_metric(r, FS_METRIC_Q3), train_result_metric(r, FS_METRIC_LOSS), r->seconds,
                             r->val_seconds, r->val_examples};
}

static int job_fail(const FsJob *job, const char *msg)
{
    job->result->status = FS_FIT_FAILED;
    snprintf(job->result->message, sizeof job->result->message, "%s", msg);
    return -1;
}

/* The rows a chain model's batches need: its budget, or the longest chain
 * with its pad rows where that is more (such a chain is a batch alone). */
int train_chain_rows(const FsArch *arch, const FsTrainSpec *ts, uint32_t longest, FsNet *net, FsErr *err)
{
    if (model_compile(net, arch, ts->batch_residues, err) != 0) return -1;
    long need = (long)longest + net->pad;
    if (need <= ts->batch_residues) return 0;
    if (need > FS_TRAIN_MAX_BATCH_RESIDUES)
        return fs_err_set(err, "a chain of %u residues is longer than a chain model can hold (%d rows)", longest,
                          FS_TRAIN_MAX_BATCH_RESIDUES),
               -1;
    return model_compile(net, arch, (int)need, err);
}

int train_compile(const FsArch *arch, const FsTrainSpec *ts, uint32_t longest, FsNet *net, FsErr *err)
{
    const int max_batch = ts->batch > ts->eval_batch ? ts->batch : ts->eval_batch;
    if (arch->chain) return train_chain_rows(arch, ts, longest, net, err);
    if (model_compile(net, arch, max_batch, err) != 0) return -1;
    net->train_batch = ts->batch;
    return 0;
}

int train_job_check(const FsJob *job, FsNet *net, uint32_t *n_train, uint32_t *n_valid)
{
    FsErr err = {0};
    const FsTrainSpec *ts = job->spec;
    const FsDataset *ds = job->data;
    if (train_spec_check(ts, &err) != 0) return job_fail(job, err.msg);
    if (train_compile(job->arch, ts, data_longest_chain(ds), net, &err) != 0) return job_fail(job, err.msg);
    if ((uint32_t)job->arch->feat_dim != ds->feat_dim) {
        char why[160];
        snprintf(why, sizeof why, "the model reads %d feature columns per residue, the data has %u (data.features)",
                 job->arch->feat_dim, ds->feat_dim);
        return job_fail(job, why);
    }
    if (job->fold != FS_FOLD_PREDEFINED && job->fold != FS_FOLD_ALL &&
        (job->fold < 0 || (uint32_t)job->fold >= ds->n_folds))
        return job_fail(job, "fold out of range for the prepared data");
    *n_train = train_job_examples(job, 0);
    *n_valid = train_job_examples(job, 1);
    /* A refit (FS_FOLD_ALL) has no validation set: it trains a fixed number
     * of epochs. (A chain model's chains hold the residues: none where
     * there are none.) */
    if (*n_train == 0 || (*n_valid == 0 && job->fold != FS_FOLD_ALL))
        return job_fail(job, "fold has no training or no validation examples");
    return 0;
}

uint32_t train_job_examples(const FsJob *job, int validation)
{
    return job->arch->chain ? data_chain_examples(job->data, job->fold, validation, NULL)
                            : data_examples(job->data, job->fold, validation, NULL);
}

void core_model_seed(FsModel *m, const FsNet *net, const FsTrainSpec *ts, float *weights)
{
    /* Separate streams for initialisation, shuffling and dropout, so that
     * changing one option does not reshuffle the others. */
    uint64_t words[4] = {ts->seed[0], ts->seed[1], ts->seed[2], 1};
    FsRng init;
    fs_rng_seed(&init, words, 4);
    model_init(net, weights, &init);
    words[3] = 2;
    fs_rng_seed(&m->rng, words, 4);
    words[3] = 3;
    FsRng drop;
    fs_rng_seed(&drop, words, 4);
    m->drop_key = fs_rng_u64(&drop);
    m->step = 0;
    m->lr = ts->lr;
    m->class_weighted = 0;
    for (int c = 0; c < FS_MAX_CLASSES; c++) m->class_w[c] = 1.0f;
}

void train_class_counts(const uint8_t *ss, const uint32_t *idx, uint32_t n, uint64_t *counts)
{
    for (int c = 0; c < FS_MAX_CLASSES; c++) counts[c] = 0;
    for (uint32_t i = 0; i < n; i++) counts[FS_SS_CLASS(ss[idx[i]])]++;
}

void train_class_weights(const FsTrainSpec *ts, int classes, const uint64_t *counts, float *w)
{
    const int K = fs_classes(classes);
    uint64_t total = 0;
    for (int c = 0; c < K; c++) total += counts[c];
    const double n = (double)total;
    for (int c = 0; c < K; c++)
        w[c] = ts->class_weights == FS_CW_EXPLICIT               ? ts->class_w[c]
               : ts->class_weights == FS_CW_BALANCED && counts[c] ? (float)(n / (K * (double)counts[c]))
                                                                   : 1.0f;
}

/* The model's per-class loss weights for its fold's training examples. */
void core_model_weigh(FsModel *m, const FsNet *net, const FsTrainSpec *ts, const uint64_t counts[FS_MAX_CLASSES])
{
    m->class_weighted = ts->class_weights != FS_CW_NONE;
    train_class_weights(ts, net->classes, counts, m->class_w); /* (m->net may be a device address) */
}

uint32_t *core_fold_data(const FsDataset *ds, int fold, int chains, FsFoldData *fd)
{
    uint32_t n_train, n_valid;
    uint32_t *idx = data_fold_examples(ds, fold, chains, &n_train, &n_valid);
    FsFoldData f = {ds->aa, ds->ss, ds->left, ds->right, idx, n_train, idx + n_train, n_valid, n_train, n_valid,
                    ds->feat, ds->feat_dim, ds->feat_half};
    if (chains) {
        f.n_train_res = data_examples(ds, fold, 0, NULL);
        f.n_valid_res = data_examples(ds, fold, 1, NULL);
    }
    *fd = f;
    return idx;
}

/* The class counts of a fold's training residues (a chain model's: every
 * scored residue of its chains). */
void core_fold_class_counts(const FsFoldData *fd, int chains, uint64_t counts[FS_MAX_CLASSES])
{
    if (!chains) {
        train_class_counts(fd->ss, fd->train, fd->n_train, counts);
        return;
    }
    for (int c = 0; c < FS_MAX_CLASSES; c++) counts[c] = 0;
    for (uint32_t i = 0; i < fd->n_train; i++) {
        const uint32_t r0 = fd->train[i], len = step_chain_length(fd, r0);
        for (uint32_t r = r0; r < r0 + len; r++)
            if (FS_SS_SCORED(fd->ss[r])) counts[FS_SS_CLASS(fd->ss[r])]++;
    }
}

/* A fold's model buffer, NULL when memory is short (test hook
 * MODEL_NO_MEMORY=N: the Nth of this process). */
static void *model_alloc(size_t bytes)
{
    static int count;
    const char *v = fs_test_fault("MODEL_NO_MEMORY");
    if (v && __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) == atoi(v)) return NULL;
    return fs_aligned_try_alloc(bytes);
}

int train_job(const FsJob *job)
{
    const FsTrainSpec *ts = job->spec;
    FsNet net;
    uint32_t n_train, n_valid;
    if (train_job_check(job, &net, &n_train, &n_valid) != 0) return -1;
    FsFoldData fd;
    uint32_t *idx = core_fold_data(job->data, job->fold, net.chain, &fd);

    /* The training order is shuffled in place, epoch after epoch, and
     * nothing reads the fold's list of training examples after the fit has
     * taken it (fit.c; a checkpoint is checked against it before it
     * replaces it), so on the host the order lives in that list: a fold in
     * flight holds one 4-byte entry per example, not two (bench/run-memory). */
    size_t bytes = core_model_bytes(&net, 0);
    void *buf = model_alloc(bytes);
    if (!buf) {
        free(idx);
        job->result->status = FS_FIT_CANCELLED;
        snprintf(job->result->message, sizeof job->result->message, "out of memory: a fold's model (weights, "
                 "gradients, optimizer moments and workspace: %zu bytes) could not be allocated; give the process "
                 "more memory or fewer threads (--threads)", bytes);
        return -1;
    }
    memset(buf, 0, bytes); /* pad rows, gradients and moments start at zero */
    FsModel m;
    core_model_bind(&m, &net, buf, 0);
    m.perm = idx;
    core_model_seed(&m, &net, ts, m.w);
    uint64_t counts[FS_MAX_CLASSES];
    core_fold_class_counts(&fd, net.chain, counts);
    core_model_weigh(&m, &net, ts, counts);
    m.cancel = job->cancel;
    m.prune = job->prune;
    m.progress = job->progress;
    m.examples = job->examples;

    FsCkpt ck;
    FsFitState resume;
    FsCheckpointing *cs = job->ckpt;
    if (cs) {
        ck = (FsCkpt){cs, ts, &fd, &net, fs_now(), 0, 0, 0, 0, 0.0};
        m.ckpt = &ck;
        cs->resumed_epoch = 0;
        cs->resumed_next = 0;
        cs->note[0] = 0;
        cs->n_saved = 0;
        if (cs->resume) {
            char why[400];
            if (core_checkpoint_load(&m, &ck, &resume, job->result, job->data->n_res, why, sizeof why) == 0) {
                m.resume = &resume;
                cs->resumed_epoch = resume.epoch;
                cs->resumed_next = resume.next;
                if (m.examples) *m.examples = resume.n_train_ex;
            } else {
                /* Nothing was taken from a refused checkpoint: the fold starts afresh. */
                snprintf(cs->note, sizeof cs->note, "%s: %s", cs->origin ? cs->origin : "checkpoint", why);
            }
            if (cs->event) cs->event(cs->ctx, 0);
        }
    }

    fit_model(&m, &fd, ts, job->result);
    if (cs) {
        cs->n_saved = ck.n_saved;
        cs->saved_epoch = ck.saved_epoch;
        cs->saved_bytes = ck.saved_bytes;
        cs->saved_seconds = ck.saved_seconds;
    }
    if (job->weights_out)
        memcpy(job->weights_out, m.w, sizeof(float) * (size_t)(net.n_params + net.n_state));
    free(buf);
    free(idx);
    return 0;
}
