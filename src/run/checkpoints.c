/*
 * checkpoints: folds' mid-fold checkpoints in the run folder
 * (checkpoints/<trial>/fold<k>.ckpt, train/checkpoint.c's format). Rank 0
 * writes them all, durably (tmp, fsync, rename): its own folds' directly,
 * worker ranks' from CKPT messages, so worker ranks still need no shared
 * file system. A fold that starts with a checkpoint in place continues from
 * it; its recorded result removes it.
 *
 * Test hooks (util/faults.c): CKPT_STEPS, KILL_AFTER_CKPT, KILL_IN_CKPT
 * and KILL_IN_VALIDATION.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modelfile/modelfile.h"
#include "run/checkpoints.h"
#include "run/state.h"

void run_ckpt_file(char *out, size_t n, const char *trial, int fold)
{
    if (fold == FS_FOLD_PREDEFINED)
        snprintf(out, n, "checkpoints/%s/predefined.ckpt", trial);
    else
        snprintf(out, n, "checkpoints/%s/fold%d.ckpt", trial, fold);
}

static long hook_long(const char *name)
{
    const char *s = fs_test_fault(name);
    return s ? atol(s) : 0;
}

long run_ckpt_test_steps(void) { return hook_long("CKPT_STEPS"); }

static void die_now(void)
{
    fflush(NULL);
    raise(SIGKILL);
}

int run_ckpt_write(const char *dir, const char *trial, int fold, const uint8_t *bytes, uint64_t n, FsErr *err)
{
    static int count; /* checkpoints this process wrote: the test hooks count them */
    int nth = __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST);
    char rel[128], path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/checkpoints/%s", dir, trial);
    if (fs_mkdir_p(path, err) != 0) return -1;
    run_ckpt_file(rel, sizeof rel, trial, fold);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (hook_long("KILL_IN_CKPT") == nth) {
        /* What a kill in the middle of fs_write_file_atomic leaves: half a
         * tmp file beside the previous checkpoint. */
        char tmp[FS_PATH_SUFFIXED];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()); /* fs_write_file_atomic's name */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            ssize_t w = write(fd, bytes, (size_t)(n / 2));
            (void)w;
            close(fd);
        }
        die_now();
    }
    if (fs_write_file_atomic(path, bytes, (size_t)n, err) != 0) return -1;
    if (hook_long("KILL_AFTER_CKPT") == nth) die_now();
    return 0;
}

uint8_t *run_ckpt_read(const char *dir, const char *trial, int fold, uint64_t *n, char *path, size_t path_n)
{
    char rel[128];
    run_ckpt_file(rel, sizeof rel, trial, fold);
    snprintf(path, path_n, "%s/%s", dir, rel);
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && sb.st_size >= 0) {
        buf = fs_malloc((size_t)sb.st_size + 1);
        *n = fread(buf, 1, (size_t)sb.st_size, f);
    }
    fclose(f);
    return buf;
}

void run_ckpt_remove(const char *dir, const char *trial, int fold)
{
    char rel[128], path[FS_PATH_IN_DIR];
    run_ckpt_file(rel, sizeof rel, trial, fold);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "foldsweep: warning: %s: cannot remove: %s\n", path, strerror(errno));
    /* And what a write cut short by a kill left beside it (NAME.tmp.PID). */
    const char *base = strrchr(rel, '/') + 1;
    size_t nb = strlen(base);
    snprintf(path, sizeof path, "%s/checkpoints/%s", dir, trial);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > nb + 5 && !strncmp(e->d_name, base, nb) && !strncmp(e->d_name + nb, ".tmp.", 5)) {
            char tmp[FS_PATH_SUFFIXED];
            snprintf(tmp, sizeof tmp, "%s/%s", path, e->d_name);
            (void)unlink(tmp);
        }
    }
    if (d) closedir(d);
    /* The trial's folder and checkpoints/ go when empty (a user's own file
     * keeps them). */
    snprintf(path, sizeof path, "%s/checkpoints/%s", dir, trial);
    (void)rmdir(path);
    snprintf(path, sizeof path, "%s/checkpoints", dir);
    (void)rmdir(path);
}

void run_ckpt_test_event(int epoch)
{
    if (epoch > 0 && epoch == hook_long("KILL_IN_VALIDATION")) die_now();
}

/* ---------------------------------------------------------------------- */
/* Rank 0's own folds.                                                     */

static void local_save(void *ctx, const uint8_t *bytes, uint64_t n)
{
    RunCkptJob *cj = ctx;
    RunState *st = cj->st;
    const FsTrial *tr = &st->sw.trials[st->jobs[cj->job].trial];
    FsErr err = {0};
    char fold[16];
    modelfile_fold_name(st->jobs[cj->job].job.fold, fold, sizeof fold);
    if (run_ckpt_write(st->dir, tr->id, st->jobs[cj->job].job.fold, bytes, n, &err) != 0)
        fprintf(stderr, "foldsweep: warning: trial %s fold %s: checkpoint not written (%s); the fold goes on\n",
                tr->id, fold, err.msg);
}

/* Epoch 0: the fold's checkpoint was read (resumed, or refused and why). */
static void local_event(void *ctx, int epoch)
{
    RunCkptJob *cj = ctx;
    RunState *st = cj->st;
    if (epoch == 0) {
        const FsTrial *tr = &st->sw.trials[st->jobs[cj->job].trial];
        run_ckpt_report(&cj->cs, tr->id, st->jobs[cj->job].job.fold, st->prog.out, st->prog.quiet);
    }
    run_ckpt_test_event(epoch);
}

void run_ckpt_attach(RunState *st, int i)
{
    if (st->sw.checkpoint <= 0 && !run_ckpt_test_steps()) return;
    if (st->jobs[i].seed) return; /* a seed replicate's fold trains from its start again (same seeds, same result) */
    RunCkptJob *cj = &st->jobs[i].ckpt;
    FsCheckpointing *cs = &cj->cs;
    free(cj->bytes);
    memset(cj, 0, sizeof *cj);
    cj->st = st;
    cj->job = i;
    cs->every = st->sw.checkpoint;
    cs->every_steps = run_ckpt_test_steps();
    cs->save = local_save;
    cs->event = local_event;
    cs->ctx = cj;
    const FsTrial *tr = &st->sw.trials[st->jobs[i].trial];
    cj->bytes = run_ckpt_read(st->dir, tr->id, st->jobs[i].job.fold, &cj->n, cj->path, sizeof cj->path);
    cs->resume = cj->bytes;
    cs->resume_n = cj->n;
    cs->origin = cj->path;
    st->jobs[i].job.ckpt = cs;
}

void run_ckpt_detach(RunState *st, int i)
{
    RunCkptJob *cj = &st->jobs[i].ckpt;
    if (!st->jobs[i].job.ckpt) return;
    char fold[16];
    modelfile_fold_name(st->jobs[i].job.fold, fold, sizeof fold);
    if (st->jobs[i].res.status == FS_FIT_CANCELLED && cj->cs.n_saved > 0 && !st->prog.quiet && st->prog.out)
        /* A stop's checkpoint: how long it took says how much of a warning's lead it needs. */
        fprintf(st->prog.out, "foldsweep: trial %s fold %s: checkpoint kept at epoch %d (%.1f MB, %.3f s to write)\n",
                st->sw.trials[st->jobs[i].trial].id, fold, cj->cs.saved_epoch, (double)cj->cs.saved_bytes / 1e6,
                cj->cs.saved_seconds);
    free(cj->bytes);
    cj->bytes = NULL;
    st->jobs[i].job.ckpt = NULL;
}

void run_ckpt_report(const FsCheckpointing *cs, const char *trial, int fold_id, FILE *out, int quiet)
{
    char fold[16]; /* "predefined" for the predefined split's fold, as its model file names it */
    modelfile_fold_name(fold_id, fold, sizeof fold);
    if (cs->note[0])
        fprintf(stderr, "foldsweep: warning: trial %s fold %s: checkpoint ignored, the fold started afresh: %s\n",
                trial, fold, cs->note);
    else if (cs->resumed_epoch > 0 && !quiet && out)
        fprintf(out, "foldsweep: trial %s fold %s resumed from its checkpoint at epoch %d, example %u\n", trial,
                fold, cs->resumed_epoch, cs->resumed_next);
}
