/*
 * lib_ckpt: the GPU library tier's mid-fold checkpoints (#44), host side.
 * The tier's host (kernels/lib_train.cu) reads a model back from the
 * device at the points where its state is one the CPU trainer also
 * passes through, and this file writes and reads it with the CPU
 * trainer's own code (checkpoint.c), so there is one format:
 *
 *   an epoch's start, after its shuffle: fit_batches' state before the
 *     epoch's first batch (next 0), written when the interval is due;
 *   a stop: the model cancelled at its next step, where fit_batches
 *     writes its stop checkpoint (before the fit's end, which puts the
 *     kept epoch's weights in place of the current ones).
 *
 * A checkpoint from either backend resumes on either, and the resumed fit
 * ends with the numbers, bit for bit, of one that never stopped (under the
 * library stand-ins; on a device, as far as the device repeats itself).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/core.h"

struct FsLibCkpt {
    FsCkpt ck;
    FsCheckpointing *spec;
    FsFoldData fd;  /* the fold's host lists: a resumed order is checked against them */
    uint32_t *lists;
    uint32_t n_res;
};

FsLibCkpt *core_lib_ckpt_open(const FsJob *job, const FsNet *net)
{
    FsCheckpointing *cs = job->ckpt;
    if (!cs) return NULL;
    FsLibCkpt *c = fs_calloc(1, sizeof *c);
    c->spec = cs;
    c->lists = core_fold_data(job->data, job->fold, net->chain, &c->fd);
    c->n_res = job->data->n_res;
    c->ck = (FsCkpt){cs, job->spec, &c->fd, net, fs_now(), 0, 0, 0, 0, 0.0};
    cs->resumed_epoch = 0;
    cs->resumed_next = 0;
    cs->note[0] = 0;
    cs->n_saved = 0;
    return c;
}

/* A host mirror's FsModel as checkpoint.c reads it: its net and ckpt. */
static void mirror_bind(FsLibCkpt *c, FsModel *m)
{
    m->net = c->ck.net;
    m->ckpt = &c->ck;
}

int core_lib_ckpt_due(const FsLibCkpt *c, long step)
{
    FsModel m;
    memset(&m, 0, sizeof m);
    m.step = step;
    m.ckpt = (FsCkpt *)&c->ck; /* read only */
    return core_checkpoint_due(&m, 0);
}

int core_lib_ckpt_by_steps(const FsLibCkpt *c) { return c->spec->every_steps > 0; }

void core_lib_ckpt_save(FsLibCkpt *c, FsModel *m, const void *state, const FsFitResult *out)
{
    const FsLibState *k = state;
    mirror_bind(c, m);
    core_checkpoint_save(m, &k->s, out);
}

int core_lib_ckpt_resume(FsLibCkpt *c, FsModel *m, void *state, FsFitResult *out)
{
    FsCheckpointing *cs = c->spec;
    if (!cs->resume) return 0;
    mirror_bind(c, m);
    FsLibState *k = state;
    memset(k, 0, sizeof *k);
    char why[400];
    int resumed = 0;
    if (core_checkpoint_load(m, &c->ck, &k->s, out, c->n_res, why, sizeof why) == 0) {
        k->resumed = k->s.epoch;
        cs->resumed_epoch = k->s.epoch;
        cs->resumed_next = k->s.next;
        resumed = 1;
    } else {
        /* core_checkpoint_load takes nothing from a refused checkpoint
         * into the fit: the caller keeps the model as seeded. */
        memset(k, 0, sizeof *k);
        snprintf(cs->note, sizeof cs->note, "%s: %s", cs->origin ? cs->origin : "checkpoint", why);
    }
    if (cs->event) cs->event(cs->ctx, 0);
    return resumed;
}

void core_lib_state_at(const void *state, int *epoch, uint32_t *next, uint64_t *examples)
{
    const FsLibState *k = state;
    *epoch = k->s.epoch;
    *next = k->s.next;
    *examples = k->s.n_train_ex;
}

int core_lib_state_cancelled(const void *state) { return ((const FsLibState *)state)->status == FS_FIT_CANCELLED; }

void core_lib_ckpt_event(FsLibCkpt *c, int epoch)
{
    if (c && c->spec->event) c->spec->event(c->spec->ctx, epoch);
}

void core_lib_ckpt_close(FsLibCkpt *c)
{
    if (!c) return;
    c->spec->n_saved = c->ck.n_saved;
    c->spec->saved_epoch = c->ck.saved_epoch;
    c->spec->saved_bytes = c->ck.saved_bytes;
    c->spec->saved_seconds = c->ck.saved_seconds;
    free(c->lists);
    free(c);
}

void core_ckpt_unsupported(FsCheckpointing *cs, const char *why)
{
    if (!cs) return;
    cs->resumed_epoch = 0;
    cs->resumed_next = 0;
    cs->note[0] = 0;
    cs->n_saved = 0;
    if (!cs->resume) return;
    snprintf(cs->note, sizeof cs->note, "%s: %s", cs->origin ? cs->origin : "checkpoint", why);
    if (cs->event) cs->event(cs->ctx, 0);
}
