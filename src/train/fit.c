/*
 * fit: the whole life of one (trial, fold) model (single source): epochs of
 * shuffled minibatches, validation, early stopping, divergence. On the GPU
 * this runs inside one thread block with no host round trip; on the CPU,
 * on one worker thread.
 */
#include <math.h>

#include "train/core.h"

FS_DEVICE static void copy_floats(float *dst, const float *src, long n)
{
    FS_PARFOR(i, n) dst[i] = src[i];
    FS_SYNC();
}

/* The examples the next batch takes from idx[0..left): `batch` of them
 * (fewer at the end), or a chain model's chains that fit its rows. */
FS_DEVICE FS_NOINLINE static int fit_batch_size(const FsModel *m, const FsFoldData *fd, const uint32_t *idx, uint32_t left,
                                    int batch)
{
    if (m->net->chain) return step_chain_batch(fd, idx, left, m->net->in_rows, m->net->pad);
    return left < (uint32_t)batch ? (int)left : batch;
}

/* Loads that batch; returns the B its layers run with (a chain batch is
 * one example of m->rows rows). */
FS_DEVICE FS_NOINLINE static int fit_load(FsModel *m, const FsFoldData *fd, const uint32_t *idx, int nb)
{
    if (!m->net->chain) {
        step_load_batch(m, fd, idx, nb);
        return nb;
    }
    step_load_chain(m, fd, idx, nb);
    return 1;
}

/* Batches in an epoch over order[0..n). */
FS_DEVICE FS_NOINLINE static long fit_steps(const FsModel *m, const FsFoldData *fd, const uint32_t *order, uint32_t n, int batch)
{
    if (!m->net->chain) return ((long)n + batch - 1) / batch;
    long steps = 0;
    for (uint32_t s = 0; s < n; steps++) s += (uint32_t)fit_batch_size(m, fd, order + s, n - s, batch);
    return steps;
}

/* Mean validation loss (per scored residue) and the confusion matrix, forward only. */
FS_DEVICE FS_NOINLINE static double validate(FsModel *m, const FsFoldData *fd, int eval_batch,
                                             uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES])
{
    /* What the loop keeps across its calls, in memory (FS_IN_MEMORY). */
    struct {
        double loss;
        uint32_t s;
        int nb, B;
    } k = {0.0, 0, 0, 0};
    /* The net's classes only: the rest of the matrix is never read. */
    for (int a = 0; a < m->net->classes; a++)
        for (int b = 0; b < m->net->classes; b++) conf[a][b] = 0;
    for (; k.s < fd->n_valid; k.s += (uint32_t)k.nb) {
        k.nb = fit_batch_size(m, fd, fd->valid + k.s, fd->n_valid - k.s, eval_batch);
        k.B = fit_load(m, fd, fd->valid + k.s, k.nb);
        FS_IN_MEMORY(&k);
        step_forward(m, k.B, 0);
        k.loss += step_loss(m, k.B, 0, conf);
        FS_IN_MEMORY(&k);
    }
    return fd->n_valid_res ? k.loss / (double)fd->n_valid_res : 0.0;
}

/* Validation Q3 (Q8 in an 8-state run: the accuracy over the net's K
 * classes, the matrix's first K rows and columns) from the confusion; with wrong set, its error 1 - Q3
 * instead, from the residues counted wrong (not 1.0f - Q3: that rounds
 * two close Q3s to one error below Q3 0.5, and the kept epoch must be the
 * first with the most residues right). 0 for no residues, as validate's
 * loss. */
FS_DEVICE static float q3_of(uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES], int K, int wrong)
{
    uint64_t n = 0, ok = 0;
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++) n += conf[a][b];
    for (int a = 0; a < K; a++) ok += conf[a][a];
    return n ? (float)((double)(wrong ? n - ok : ok) / (double)n) : 0.0f;
}

/* A checkpoint of the fit as it stands (CPU only: the GPU has no host to
 * call between batches). Every thread calls it; the master writes. */
FS_DEVICE static void fit_save(FsModel *m, const FsFitState *s, const FsFitResult *out)
{
#if !defined(__CUDACC__)
    FS_MASTER
    {
        if (m->ckpt) core_checkpoint_save(m, s, out);
    }
    FS_SYNC();
#else
    (void)m, (void)s, (void)out;
#endif
}

FS_DEVICE static int fit_ckpt_due(FsModel *m, int stopping)
{
#if !defined(__CUDACC__)
    return m->ckpt && FS_SYNC_ANY(core_checkpoint_due(m, stopping));
#else
    (void)m, (void)stopping;
    return 0;
#endif
}

/* A fresh fit's state: epoch 1, nothing trained; the order starts as the
 * fold's list (on the host the model's order is that list itself). */
FS_DEVICE static void fit_begin(FsModel *m, const FsFoldData *fd, FsFitState *s)
{
    s->epoch = 1;
    s->next = 0;
    s->step_in_epoch = 0;
    s->loss_sum = 0.0;
    s->epochs = s->best_epoch = 0;
    s->best_loss = INFINITY;
    for (int a = 0; a < FS_MAX_CLASSES; a++)
        for (int b = 0; b < FS_MAX_CLASSES; b++) s->best_conf[a][b] = 0;
    s->n_train_ex = s->n_val_ex = 0;
    s->val_seconds = s->seconds = 0.0;
    stop_init(&s->st);
    if (m->perm != fd->train) FS_PARFOR(i, fd->n_train) m->perm[i] = fd->train[i];
    FS_SYNC();
}

/* A new epoch: Fisher-Yates on the model's own stream, from the last
 * epoch's order. */
FS_DEVICE static void fit_shuffle(FsModel *m, const FsFoldData *fd, FsFitState *s)
{
    FS_MASTER
    {
        for (uint32_t i = fd->n_train; i > 1; i--) {
            uint32_t j = fs_rng_below(&m->rng, i);
            uint32_t tmp = m->perm[i - 1];
            m->perm[i - 1] = m->perm[j];
            m->perm[j] = tmp;
        }
    }
    FS_SYNC();
    s->next = 0;
    s->step_in_epoch = 0;
    s->loss_sum = 0.0;
}

/* The epoch's batches from s->next on. FS_FIT_OK when the epoch is done;
 * FS_FIT_CANCELLED when pruned, or stopped (then checkpointed first, to be
 * resumed where it is); FS_FIT_DIVERGED at a non-finite loss or gradient
 * (s says where). */
FS_DEVICE FS_NOINLINE static FsFitStatus fit_batches(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitState *s,
                                         const FsFitResult *out, double t_start)
{
    /* What the loop keeps across its calls, in memory (FS_IN_MEMORY). */
    struct {
        const FsFitResult *out;
        double t_start, l;
        long steps;
        int nb, B;
    } k;
    k.out = out;
    k.t_start = t_start;
    k.steps = fit_steps(m, fd, m->perm, fd->n_train, ts->batch);
    for (; s->next < fd->n_train; s->next += (uint32_t)k.nb, s->step_in_epoch++) {
        FS_IN_MEMORY(&k);
        const int pruned = FS_SYNC_ANY(m->prune && *m->prune);
        const int stop = !pruned && FS_SYNC_ANY(m->cancel && *m->cancel);
        if (pruned || stop || fit_ckpt_due(m, 0)) {
            s->seconds = FS_CLOCK() - k.t_start;
            if (!pruned) fit_save(m, s, k.out);
            if (pruned || stop) return FS_FIT_CANCELLED;
        }
        FS_MASTER
        {
            m->lr = train_lr_at(ts, s->epoch, s->step_in_epoch, k.steps);
        }
        FS_SYNC();
        k.nb = fit_batch_size(m, fd, m->perm + s->next, fd->n_train - s->next, ts->batch);
        /* In memory (k), as nb: a value computed here would hold a register
         * down every call below (device.h). */
        k.B = fit_load(m, fd, m->perm + s->next, k.nb);
        FS_IN_MEMORY(&k);
        step_forward(m, k.B, 1);
        k.l = step_loss(m, k.B, 1, 0);
        int bad = step_backward(m, k.B, ts);
        float norm = bad ? NAN : step_update(m, ts, 1);
        if (!isfinite(k.l) || !isfinite(norm)) return FS_FIT_DIVERGED;
        s->loss_sum += k.l;
        s->n_train_ex += m->net->chain ? (uint64_t)m->scored : (uint64_t)k.nb;
        FS_MASTER
        {
            if (m->examples) *m->examples = s->n_train_ex;
        }
    }
    return FS_FIT_OK;
}

/* The end of an epoch: validation, the curves, the stopping rule and the
 * best weights. FS_FIT_DIVERGED at a non-finite validation loss; else
 * FS_FIT_OK with *halt set when the stopping rule ends the fit. */
/* The epoch's end after its validation pass (val_loss, conf): curves,
 * progress, the stopping rule, the kept epoch. fit_epoch_end's, and the
 * GPU library tier's, which validates a group of models between (#44). */
FS_DEVICE FS_NOINLINE static FsFitStatus fit_epoch_finish(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts,
                                                          FsFitState *s, FsFitResult *out, double t_start,
                                                          double val_loss,
                                                          uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES], int *halt)
{
    const int epoch = s->epoch;
    float train_loss = (float)(s->loss_sum / (double)(fd->n_train_res ? fd->n_train_res : 1));
    s->epochs = epoch;
    FS_MASTER
    {
        if (out->curves.train_loss) {
            out->curves.train_loss[epoch - 1] = train_loss;
            out->curves.val_loss[epoch - 1] = (float)val_loss;
            out->curves.val_q3[epoch - 1] = q3_of(conf, m->net->classes, 0);
            out->curves.seconds[epoch - 1] = (float)(FS_CLOCK() - t_start);
        }
        if (m->progress) {
            *m->progress = epoch;
            FS_PUBLISH();
        }
    }
    if (!isfinite(val_loss)) return FS_FIT_DIVERGED;
    /* The stopping rule's E_va is the monitored quantity as an error
     * (lower is better): the loss, or 1 - Q3. Its strict improvements pick
     * the kept epoch, so a tie keeps the first. */
    const float e_va = ts->monitor == FS_MONITOR_Q3 ? q3_of(conf, m->net->classes, 1) : (float)val_loss;
    int flags = stop_update(&s->st, &ts->stop, train_loss, e_va);
    /* Without validation examples (a refit) the last epoch is the result. */
    if ((flags & FS_STOP_IMPROVED) || fd->n_valid == 0) {
        copy_floats(m->best, m->w, m->net->n_params + m->net->n_state);
        s->best_epoch = epoch;
        s->best_loss = (float)val_loss;
        for (int a = 0; a < m->net->classes; a++)
            for (int b = 0; b < m->net->classes; b++) s->best_conf[a][b] = conf[a][b];
    }
    *halt = (flags & FS_STOP_HALT) != 0;
    return FS_FIT_OK;
}

FS_DEVICE FS_NOINLINE static FsFitStatus fit_epoch_end(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitState *s,
                                           FsFitResult *out, double t_start, int *halt)
{
    uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES];
#if !defined(__CUDACC__)
    FS_MASTER
    {
        if (m->ckpt) core_checkpoint_event(m, s->epoch);
    }
#endif
    double t_val = FS_CLOCK();
    double val_loss = validate(m, fd, ts->eval_batch, conf);
    s->n_val_ex += fd->n_valid_res;
    s->val_seconds += FS_CLOCK() - t_val;
    return fit_epoch_finish(m, fd, ts, s, out, t_start, val_loss, conf, halt);
}

/* The fit's end: the result is the best validation epoch's weights, and
 * out says how it went. fit_model's, and the GPU library tier's (#44). */
FS_DEVICE FS_NOINLINE static void fit_end(FsModel *m, const FsTrainSpec *ts, const FsFitState *s, FsFitResult *o,
                                          int status, int halted, int div_epoch, long div_step, double t_start)
{
    if (s->best_epoch > 0) copy_floats(m->w, m->best, m->net->n_params + m->net->n_state);
    FS_MASTER
    {
        o->status = (FsFitStatus)status;
        o->epochs = s->epochs;
        o->best_epoch = s->best_epoch;
        o->monitor = ts->monitor;
        o->halted_by = halted;
        o->diverged_epoch = div_epoch;
        o->diverged_step = div_step;
        o->best_val_loss = s->best_loss;
        o->classes = m->net->classes;
        for (int a = 0; a < FS_MAX_CLASSES; a++)
            for (int b = 0; b < FS_MAX_CLASSES; b++) o->best_confusion[a][b] = s->best_conf[a][b];
        o->train_examples = s->n_train_ex;
        o->val_examples = s->n_val_ex;
        o->val_seconds = s->val_seconds;
        o->seconds = FS_CLOCK() - t_start;
    }
    FS_SYNC();
}

/* Every thread of a block runs this loop with the same values (sums are
 * taken in the same order by each), so every branch is uniform; writes to
 * shared memory are the master's. The cancel flag is read by all and agreed
 * on with FS_SYNC_ANY, since the host may raise it between two reads.
 *
 * The loop's state lives in `s` so that it can stop between two batches,
 * be written as a checkpoint (with the model buffer) and be resumed from
 * it (m->resume): the resumed fit takes the same steps on the same batches
 * and ends with the same numbers as one that never stopped. The values the
 * loop keeps across its calls wait in memory (s, and k: FS_IN_MEMORY): the
 * GEMM at the bottom of each call needs the registers (device.h). */
FS_DEVICE void fit_model(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out)
{
    struct {
        FsFitResult *out;
        double t_start;
        long div_step;
        int status, halted, div_epoch, resumed;
    } k;
    k.out = out;
    k.status = FS_FIT_OK;
    k.halted = 0, k.div_epoch = 0;
    k.div_step = 0;
    /* The fit's state, in this thread's local memory; the master stores results. */
    FsFitState s;
    k.resumed = m->resume != NULL;
    if (m->resume != NULL)
        s = *m->resume;
    else
        fit_begin(m, fd, &s);
    k.t_start = FS_CLOCK() - s.seconds;

    /* The loop's tests through FS_SYNC_ANY: the same values on every
     * thread, and so, to ptxas, a loop the block leaves together, which
     * needs no convergence barrier held across its calls (a saved one was
     * the fit kernel's only spill: tests/cuda_resources.cmake). */
    for (; FS_SYNC_ANY(s.epoch <= ts->stop.max_epochs); s.epoch++) {
        FS_IN_MEMORY(&k);
        if (!(k.resumed && s.epoch == m->resume->epoch)) fit_shuffle(m, fd, &s);
        int halt = 0;
        FsFitStatus status = fit_batches(m, fd, ts, &s, k.out, k.t_start);
        if (status == FS_FIT_OK) status = fit_epoch_end(m, fd, ts, &s, k.out, k.t_start, &halt);
        k.status = status;
        if (status == FS_FIT_DIVERGED) {
            k.div_epoch = s.epoch;
            k.div_step = s.step_in_epoch;
        }
        if (FS_SYNC_ANY(status != FS_FIT_OK)) break;
        if (FS_SYNC_ANY(halt)) {
            k.halted = s.epoch < ts->stop.max_epochs;
            break;
        }
    }
    FS_IN_MEMORY(&k);
    fit_end(m, ts, &s, k.out, k.status, k.halted, k.div_epoch, k.div_step, k.t_start);
}

/* ---------------------------------------------------------------------- */
/* The GPU library tier's ops (kernel.h: FsLibOp; #44): fit_model's loop cut
 * at its batches, so that a group of models takes each step together with
 * the libraries' convolutions between the parts (kernels/lib_train.cu).
 * The same calls in the same order as fit_model and fit_batches make, with
 * what those keep in locals kept in *st between launches. */

/* A chain batch's tensors past its rows: the libraries' convolutions run
 * over the group's row budget, and the weight gradient sums over every row,
 * so the rows after this batch's (and their pad rows, zeroed already) must
 * hold zeros in layer i's input and in its output's gradient, which a
 * longer earlier batch left behind there. A zero adds nothing to a sum. */
/* A window model's training calls run over train_batch examples: its tail
 * is the examples from the batch's B on (an epoch's last, short batch),
 * each of in_l + 2 in_pad rows (a convolution keeps its length: its
 * gradient's rows are its input's). */
FS_DEVICE static void lib_zero_tail(FsModel *m, int i, int B)
{
    const FsNet *net = m->net;
    const FsLayer *y = &net->layer[i];
    const long P = net->pad, ex = (long)y->in_l + 2 * y->in_pad;
    const long from = net->chain ? (long)m->rows + P : (long)B * ex;
    const long to = net->chain ? (long)net->in_rows + 2 * P : (long)net->train_batch * ex;
    float *x = m->work + net->layer[i - 1].a, *d = m->work + net->layer[i].d;
    const int C = net->layer[i].in_c, F = net->layer[i].out_c;
    FS_PARFOR(r, to - from)
    {
        for (int c = 0; c < C; c++) x[(from + r) * C + c] = 0.0f;
        for (int f = 0; f < F; f++) d[(from + r) * F + f] = 0.0f;
    }
    FS_SYNC();
}

/* The next training batch, or none (stepping 0); a raised flag ends the fit. */
FS_DEVICE static void lib_step(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsLibState *k, FsLibPublic *pub)
{
    if (!pub->active || k->s.next >= fd->n_train) {
        pub->stepping = 0;
        return;
    }
    const int pruned = FS_SYNC_ANY(m->prune && *m->prune);
    const int stop = !pruned && FS_SYNC_ANY(m->cancel && *m->cancel);
    if (pruned || stop) {
        k->s.seconds = FS_CLOCK() - k->t_start;
        k->status = FS_FIT_CANCELLED;
        pub->active = pub->stepping = 0;
        return;
    }
    FS_MASTER m->lr = train_lr_at(ts, k->s.epoch, k->s.step_in_epoch, k->steps);
    FS_SYNC();
    k->nb = fit_batch_size(m, fd, m->perm + k->s.next, fd->n_train - k->s.next, ts->batch);
    k->B = fit_load(m, fd, m->perm + k->s.next, k->nb);
    pub->stepping = 1;
}

/* fit_batches' end of a step: divergence, or the step counted. */
FS_DEVICE static void lib_update(FsModel *m, const FsTrainSpec *ts, FsLibState *k, FsLibPublic *pub)
{
    /* Unfused (0): the parts' backward (step_backward_part) stores every
     * gradient, a window model's dense and output layers' too, which the
     * whole step's fused backward applies itself (step_fuses). */
    const float norm = step_update(m, ts, 0);
    if (!isfinite(k->loss) || !isfinite(norm)) {
        k->status = FS_FIT_DIVERGED;
        k->div_epoch = k->s.epoch;
        k->div_step = k->s.step_in_epoch;
        pub->active = pub->stepping = 0;
        return;
    }
    k->s.loss_sum += k->loss;
    k->s.n_train_ex += m->net->chain ? (uint64_t)m->scored : (uint64_t)k->nb;
    FS_MASTER
    {
        if (m->examples) *m->examples = k->s.n_train_ex;
    }
    k->s.next += (uint32_t)k->nb;
    k->s.step_in_epoch++;
}

/* fit_model's end of an epoch, after the group's validation pass. */
FS_DEVICE static void lib_epoch_end(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out,
                                    FsLibState *k, FsLibPublic *pub)
{
    const double val_loss = fd->n_valid_res ? k->val_loss / (double)fd->n_valid_res : 0.0;
    k->s.n_val_ex += fd->n_valid_res;
    k->s.val_seconds += FS_CLOCK() - k->t_val;
    int halt = 0;
    FsFitStatus status = fit_epoch_finish(m, fd, ts, &k->s, out, k->t_start, val_loss, k->conf, &halt);
    k->status = status;
    if (status == FS_FIT_DIVERGED) {
        k->div_epoch = k->s.epoch;
        k->div_step = k->s.step_in_epoch;
    }
    int ends = status != FS_FIT_OK;
    if (!ends && halt) {
        k->halted = k->s.epoch < ts->stop.max_epochs;
        ends = 1;
    }
    if (!ends && ++k->s.epoch > ts->stop.max_epochs) ends = 1;
    if (ends) pub->active = 0;
}

FS_DEVICE static void lib_op(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out, FsLibState *k,
                             FsLibPublic *pub, int op, int layer, int part, int train)
{
    const int stepping = pub->stepping;
    switch (op) {
    case FS_LIB_BEGIN: /* the group's models, or a refilled slot's (its record zeroed) */
        if (pub->active || pub->finished) break;
        /* A resumed model's state is its checkpoint's (lib_ckpt.c), as
         * fit_model's m->resume; its time goes on from the checkpoint's. */
        if (!k->resumed) fit_begin(m, fd, &k->s);
        k->t_start = FS_CLOCK() - k->s.seconds;
        k->status = FS_FIT_OK;
        k->halted = k->div_epoch = 0;
        k->div_step = 0;
        pub->active = 1, pub->finished = 0, pub->stepping = 0;
        break;
    case FS_LIB_EPOCH:
        if (!pub->active) break;
        /* The epoch a checkpoint resumed in keeps its order and position. */
        if (k->resumed == k->s.epoch) k->resumed = 0;
        else fit_shuffle(m, fd, &k->s);
        /* The fit's time so far, for a checkpoint at this epoch's start. */
        k->s.seconds = FS_CLOCK() - k->t_start;
        k->steps = fit_steps(m, fd, m->perm, fd->n_train, ts->batch);
        pub->steps = (int)k->steps;
        pub->val_steps = (int)fit_steps(m, fd, fd->valid, fd->n_valid, ts->eval_batch);
        break;
    case FS_LIB_STEP: lib_step(m, fd, ts, k, pub); break;
    case FS_LIB_FWD:
    case FS_LIB_BWD: break; /* lib_layer_op's, without the state's copy */
    case FS_LIB_LOSS:
        if (stepping) k->loss = step_loss(m, k->B, 1, 0);
        break;
    case FS_LIB_UPDATE:
        if (stepping) lib_update(m, ts, k, pub);
        break;
    case FS_LIB_VAL_BEGIN:
        if (!pub->active) break;
        k->val_loss = 0.0;
        k->val_next = 0;
        for (int a = 0; a < m->net->classes; a++)
            for (int b = 0; b < m->net->classes; b++) k->conf[a][b] = 0;
        k->t_val = FS_CLOCK();
        break;
    case FS_LIB_VAL_STEP:
        if (!pub->active || k->val_next >= fd->n_valid) {
            pub->stepping = 0;
            break;
        }
        k->nb = fit_batch_size(m, fd, fd->valid + k->val_next, fd->n_valid - k->val_next, ts->eval_batch);
        k->B = fit_load(m, fd, fd->valid + k->val_next, k->nb);
        pub->stepping = 1;
        break;
    case FS_LIB_VAL_LOSS:
        if (!stepping) break;
        k->val_loss += step_loss(m, k->B, 0, k->conf);
        k->val_next += (uint32_t)k->nb;
        break;
    case FS_LIB_EPOCH_END:
        if (pub->active) lib_epoch_end(m, fd, ts, out, k, pub);
        break;
    case FS_LIB_FINISH:
        if (pub->active || pub->finished) break;
        fit_end(m, ts, &k->s, out, k->status, k->halted, k->div_epoch, k->div_step, k->t_start);
        pub->finished = 1;
        break;
    default: break;
    }
}

/* A layer's part of a step (FWD, BWD): most of a step's ops. They read
 * two numbers of the model's state and write none of it, so they run
 * without the copy below (the whole FsLibState, some 1.5 KB, read by
 * every thread of every op). */
FS_DEVICE static void lib_layer_op(FsModel *m, const FsLibState *st, const FsLibPublic *pub, int op, int layer,
                                   int part, int train)
{
    const int stepping = pub->stepping, B = st->B;
    if (!stepping) return;
    if (op == FS_LIB_FWD) {
        step_forward_part(m, layer, B, train, part);
        return;
    }
    step_backward_part(m, layer, B, part);
    if (part == 0 && layer < m->net->n && step_layer_gemms(m->net, layer)) lib_zero_tail(m, layer, B);
}

/* Each thread works on its own copies of the model's state and public
 * record, as fit_model's threads do on their locals (every thread computes
 * the same values), and the master stores them back; a model that has
 * just finished raises its done flag once they are in memory. */
FS_DEVICE void fit_lib_op(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out, FsLibState *st,
                          FsLibPublic *pub, int *done, int op, int layer, int part, int train)
{
    if (op == FS_LIB_FWD || op == FS_LIB_BWD) {
        lib_layer_op(m, st, pub, op, layer, part, train);
        return;
    }
    FsLibState k = *st;
    FsLibPublic p = *pub;
    const int was_finished = p.finished;
    FS_SYNC();
    lib_op(m, fd, ts, out, &k, &p, op, layer, part, train);
    FS_SYNC();
    FS_MASTER
    {
        *st = k;
        *pub = p;
    }
    if (p.finished && !was_finished) {
        FS_PUBLISH();
        FS_SYNC();
        FS_MASTER *done = 1;
    }
    FS_SYNC();
}
