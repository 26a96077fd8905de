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

/* Mean validation loss and the confusion matrix, forward only. */
FS_DEVICE static double validate(FsModel *m, const FsFoldData *fd, int eval_batch, uint64_t conf[3][3])
{
    double loss = 0.0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) conf[a][b] = 0;
    for (uint32_t s = 0; s < fd->n_valid; s += (uint32_t)eval_batch) {
        int nb = fd->n_valid - s < (uint32_t)eval_batch ? (int)(fd->n_valid - s) : eval_batch;
        step_load_batch(m, fd, fd->valid + s, nb);
        step_forward(m, nb, 0);
        loss += step_loss(m, nb, 0, conf);
    }
    return fd->n_valid ? loss / fd->n_valid : 0.0;
}

FS_DEVICE static float q3_of(uint64_t conf[3][3])
{
    uint64_t n = 0, ok = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) n += conf[a][b];
    for (int a = 0; a < 3; a++) ok += conf[a][a];
    return n ? (float)((double)ok / (double)n) : 0.0f;
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
    return m->ckpt && FS_ANY(core_checkpoint_due(m, stopping));
#else
    (void)m, (void)stopping;
    return 0;
#endif
}

/* Every thread of a block runs this loop with the same values (sums are
 * taken in the same order by each), so every branch is uniform; writes to
 * shared memory are the master's. The cancel flag is read by all and agreed
 * on with FS_ANY, since the host may raise it between two reads.
 *
 * The loop's state lives in `s` so that it can stop between two batches,
 * be written as a checkpoint (with the model buffer) and be resumed from
 * it (m->resume): the resumed fit takes the same steps on the same batches
 * and ends with the same numbers as one that never stopped. */
FS_DEVICE void fit_model(FsModel *m, const FsFoldData *fd, const FsTrainSpec *ts, FsFitResult *out)
{
    const FsNet *net = m->net;
    const long nw = net->n_params + net->n_state;
    const int B = ts->batch;
    uint64_t conf[3][3];
    FsFitStatus status = FS_FIT_OK;
    int halted = 0, div_epoch = 0;
    long div_step = 0;
    /* The fit's state, in this thread's registers; the master stores results. */
    FsFitState s;
    const int resumed = m->resume != NULL;
    if (resumed) {
        s = *m->resume;
    } else {
        s.epoch = 1;
        s.next = 0;
        s.step_in_epoch = 0;
        s.loss_sum = 0.0;
        s.epochs = s.best_epoch = 0;
        s.best_loss = INFINITY;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) s.best_conf[a][b] = 0;
        s.n_train_ex = s.n_val_ex = 0;
        s.val_seconds = s.seconds = 0.0;
        stop_init(&s.st);
        FS_PARFOR(i, fd->n_train) m->perm[i] = fd->train[i];
        FS_SYNC();
    }
    const double t_start = FS_CLOCK() - s.seconds;

    for (; s.epoch <= ts->stop.max_epochs; s.epoch++) {
        const int epoch = s.epoch;
        if (!(resumed && epoch == m->resume->epoch)) {
            FS_MASTER
            {
                /* Fisher-Yates on the model's own stream. */
                for (uint32_t i = fd->n_train; i > 1; i--) {
                    uint32_t j = fs_rng_below(&m->rng, i);
                    uint32_t tmp = m->perm[i - 1];
                    m->perm[i - 1] = m->perm[j];
                    m->perm[j] = tmp;
                }
            }
            FS_SYNC();
            s.next = 0;
            s.step_in_epoch = 0;
            s.loss_sum = 0.0;
        }
        for (; s.next < fd->n_train; s.next += (uint32_t)B, s.step_in_epoch++) {
            const int pruned = FS_ANY(m->prune && *m->prune);
            const int stop = !pruned && FS_ANY(m->cancel && *m->cancel);
            if (pruned || stop || fit_ckpt_due(m, 0)) {
                /* A pruned trial's fold is over; a stopped one is kept
                 * where it is, to be resumed. */
                s.seconds = FS_CLOCK() - t_start;
                if (!pruned) fit_save(m, &s, out);
                if (pruned || stop) {
                    status = FS_FIT_CANCELLED;
                    goto done;
                }
            }
            int nb = fd->n_train - s.next < (uint32_t)B ? (int)(fd->n_train - s.next) : B;
            step_load_batch(m, fd, m->perm + s.next, nb);
            step_forward(m, nb, 1);
            double l = step_loss(m, nb, 1, 0);
            int bad = step_backward(m, nb, ts);
            float norm = bad ? NAN : step_update(m, ts, 1);
            if (!isfinite(l) || !isfinite(norm)) {
                status = FS_FIT_DIVERGED;
                div_epoch = epoch;
                div_step = s.step_in_epoch;
                goto done;
            }
            s.loss_sum += l;
            s.n_train_ex += (uint64_t)nb;
            FS_MASTER
            {
                if (m->examples) *m->examples = s.n_train_ex;
            }
        }
#if !defined(__CUDACC__)
        FS_MASTER
        {
            if (m->ckpt) core_checkpoint_event(m, epoch);
        }
#endif
        double t_val = FS_CLOCK();
        double val_loss = validate(m, fd, ts->eval_batch, conf);
        s.n_val_ex += fd->n_valid;
        s.val_seconds += FS_CLOCK() - t_val;
        float train_loss = (float)(s.loss_sum / (fd->n_train ? fd->n_train : 1));
        s.epochs = epoch;
        FS_MASTER
        {
            if (out->curves.train_loss) {
                out->curves.train_loss[epoch - 1] = train_loss;
                out->curves.val_loss[epoch - 1] = (float)val_loss;
                out->curves.val_q3[epoch - 1] = q3_of(conf);
                out->curves.seconds[epoch - 1] = (float)(FS_CLOCK() - t_start);
            }
            if (m->progress) {
                *m->progress = epoch;
                FS_PUBLISH();
            }
        }
        if (!isfinite(val_loss)) {
            status = FS_FIT_DIVERGED;
            div_epoch = epoch;
            div_step = s.step_in_epoch;
            break;
        }
        int flags = stop_update(&s.st, &ts->stop, train_loss, (float)val_loss);
        /* Without validation examples (a refit) the last epoch is the result. */
        if ((flags & FS_STOP_IMPROVED) || fd->n_valid == 0) {
            copy_floats(m->best, m->w, nw);
            s.best_epoch = epoch;
            s.best_loss = (float)val_loss;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) s.best_conf[a][b] = conf[a][b];
        }
        if (flags & FS_STOP_HALT) {
            halted = epoch < ts->stop.max_epochs;
            break;
        }
    }
done:
    /* The result is the best validation epoch's weights. */
    if (s.best_epoch > 0) copy_floats(m->w, m->best, nw);
    FS_MASTER
    {
        out->status = status;
        out->epochs = s.epochs;
        out->best_epoch = s.best_epoch;
        out->halted_by = halted;
        out->diverged_epoch = div_epoch;
        out->diverged_step = div_step;
        out->best_val_loss = s.best_loss;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) out->best_confusion[a][b] = s.best_conf[a][b];
        out->train_examples = s.n_train_ex;
        out->val_examples = s.n_val_ex;
        out->val_seconds = s.val_seconds;
        out->seconds = FS_CLOCK() - t_start;
    }
    FS_SYNC();
}
