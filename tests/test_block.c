/*
 * The single-source trainer run as a GPU thread block would run it, but on
 * the CPU: the per-model files are compiled here with FS_EMULATE_BLOCK, so
 * FS_PARFOR strides over pthreads, FS_SYNC is a barrier, FS_MASTER is
 * thread 0 and FS_SYNC_ANY agrees across threads (train/device.h), and the GEMM takes
 * its portable tile, as on the GPU. A fit by 1, 3 and 8 emulated threads
 * must equal the CPU trainer's bitwise: a data race, a branch that threads
 * take differently, or a missing barrier changes the numbers or hangs.
 * This is the CUDA kernel's logic tested where no GPU is.
 */
#define FS_EMULATE_BLOCK 1

/* The block's copies of the per-model functions, renamed (emu_...) so that
 * they do not clash with the library's CPU build of the same files. */
#define OPS_PREFIX emu_
#include "train/rename.h"

/* The k steps whose B the block staged (train/gemm_stage.h; the master
 * counts): a fit given a staging area must have taken that path. */
static long staged_k;
#define FS_GEMM_STAGED(k) (staged_k += (k))

#include "../src/stop/stop.c"
#include "../src/train/act.c"
#include "../src/train/blocks.c"
#include "../src/train/conv.c"
#include "../src/train/dense.c"
#include "../src/train/fit.c"
#include "../src/train/gemm.c"
#include "../src/train/layers.c"
#include "../src/train/rnn.c"
#include "../src/train/attention.c"
#include "../src/train/step.c"

#include "synth/synth.h"
#include "test.h"

#include "emu_block.h"

typedef struct {
    int tid;
    FsModel *m;
    const FsFoldData *fd;
    const FsTrainSpec *ts;
    FsFitResult *out;
} Thread;

/* The block's staging area for the GEMM's B, as the fit kernel gives it
 * shared memory past the model's: stage_floats of it (0: none). 1,024
 * floats stage the 32-channel convolutions' weights in chunks, 16,384
 * whole. */
static _Alignas(64) float stage[16384];
static long stage_floats = 1024;

static void *run_thread(void *arg)
{
    Thread *t = arg;
    fs_emu_tid = t->tid;
    emu_ops_gemm_stage(stage_floats ? stage : NULL, stage_floats);
    emu_fit_model(t->m, t->fd, t->ts, t->out);
    return NULL;
}

/* One fit of job by `threads` emulated block threads; its weights (the
 * best epoch's, as the CPU's job returns them) into weights when not NULL. */
static void fit_block(const FsJob *job, int threads, FsFitResult *out, float *weights)
{
    FsNet net;
    uint32_t nt, nv;
    CHECK(train_job_check(job, &net, &nt, &nv) == 0);
    FsFoldData fd;
    uint32_t *idx = core_fold_data(job->data, job->fold, net.chain, &fd);
    size_t bytes = core_model_bytes(&net, nt);
    void *buf = fs_aligned_alloc(bytes);
    memset(buf, 0, bytes);
    FsModel m;
    core_model_bind(&m, &net, buf, nt);
    core_model_seed(&m, &net, job->spec, m.w);
    fs_emu_nthreads = threads;
    pthread_barrier_init(&fs_emu_barrier, NULL, (unsigned)threads);
    Thread t[64];
    pthread_t tid[64];
    for (int i = 0; i < threads; i++) {
        t[i] = (Thread){i, &m, &fd, job->spec, out};
        pthread_create(&tid[i], NULL, run_thread, &t[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&fs_emu_barrier);
    if (weights) memcpy(weights, m.w, sizeof(float) * (size_t)(net.n_params + net.n_state));
    free(buf);
    free(idx);
}

static void same(const char *what, const FsFitResult *a, const FsFitResult *b)
{
    CHECK_MSG(a->status == b->status && a->epochs == b->epochs && a->best_epoch == b->best_epoch,
              "%s: status %d/%d epochs %d/%d best %d/%d", what, a->status, b->status, a->epochs, b->epochs,
              a->best_epoch, b->best_epoch);
    CHECK_MSG(a->train_examples == b->train_examples && a->val_examples == b->val_examples, "%s: example counts",
              what);
    int e = a->epochs < b->epochs ? a->epochs : b->epochs;
    CHECK_MSG(memcmp(a->curves.train_loss, b->curves.train_loss, sizeof(float) * (size_t)e) == 0,
              "%s: train losses differ (first %.9g vs %.9g)", what, a->curves.train_loss[0], b->curves.train_loss[0]);
    CHECK_MSG(memcmp(a->curves.val_loss, b->curves.val_loss, sizeof(float) * (size_t)e) == 0, "%s: val losses differ",
              what);
    CHECK_MSG(memcmp(a->best_confusion, b->best_confusion, sizeof a->best_confusion) == 0, "%s: confusion differs",
              what);
    CHECK(a->best_val_loss == b->best_val_loss);
}

/* job (with spec ts) on the CPU trainer and on a block of `threads`. */
static void versus_cpu(const FsJob *job, const FsTrainSpec *ts, int threads, const char *what)
{
    FsFitResult cpu, block;
    train_result_alloc(&cpu, ts->stop.max_epochs);
    train_result_alloc(&block, ts->stop.max_epochs);
    FsJob j = *job;
    j.spec = ts;
    j.result = &cpu;
    /* The weights too: a difference of one rounding can leave the float
     * losses and the confusion as they were after an epoch. */
    float *wc = train_result_alloc_weights(&cpu, job->arch), *wb = train_result_alloc_weights(&block, job->arch);
    j.weights_out = wc;
    CHECK(train_job(&j) == 0);
    fit_block(&j, threads, &block, wb);
    same(what, &cpu, &block);
    CHECK_MSG(memcmp(wc, wb, sizeof(float) * (size_t)cpu.n_weights) == 0, "%s: the trained weights differ", what);
    printf("%s: %s, %d epochs, train loss %.6f, weights bitwise equal\n", what, train_status_name(cpu.status),
           cpu.epochs, cpu.epochs ? cpu.curves.train_loss[0] : 0.0);
    train_result_free(&cpu);
    train_result_free(&block);
}

int main(void)
{
    FsDataset ds;
    FsErr err = {0};
    CHECK_MSG(synth_generate(&ds, 60, 9, &err) == 0, "%s", err.msg);
    CHECK_MSG(data_assign_folds(&ds, 3, 1, &err) == 0, "%s", err.msg);

    /* Every layer kind, so every single-source op runs under the block;
     * 32 channels into the highway layer give the CPU's 8 x 32
     * weight-gradient tile whole tiles to compare. */
    FsArch arch;
    memset(&arch, 0, sizeof arch);
    arch.window = 11;
    arch.n_layers = 7;
    arch.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 32, .width = 5, .act = FS_ACT_SWISH};
    arch.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.9f};
    arch.layers[2] = (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = 3, .act = FS_ACT_RELU, .gate_bias = -1.0f};
    arch.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = 0.2f};
    arch.layers[4] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 16, .width = 3, .act = FS_ACT_ELU, .act_param = 1.0f};
    arch.layers[5] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 24, .act = FS_ACT_TANH};
    arch.layers[6] = (FsLayerSpec){.kind = FS_LAYER_LAYERNORM, .eps = 1e-3f};
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = 8;
    ts.eval_batch = 64;
    ts.clip_norm = 1.0f;
    ts.stop.kind = FS_STOP_PATIENCE;
    ts.stop.patience = 2;
    ts.stop.max_epochs = 3;
    ts.seed[0] = 3;

    FsFitResult ref;
    train_result_alloc(&ref, 3);
    FsJob job = {&arch, &ts, &ds, 1, &ref, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0};
    CHECK(train_job(&job) == 0);
    CHECK(ref.status == FS_FIT_OK && ref.epochs >= 1);

    /* 3 threads split work unevenly: a sanitizer build's one run. */
    /* Each with its own staging area: in chunks, none, all of B (the
     * sanitizer build runs the first: B in chunks). */
    int counts[3] = {3, 1, 8};
    long stages[3] = {1024, 0, 16384};
    for (int k = 0; k < 3 && (k == 0 || t_repeats("the blocks of 1 and 8 threads")); k++) {
        FsFitResult r;
        train_result_alloc(&r, 3);
        stage_floats = stages[k];
        const long staged_before = staged_k;
        fit_block(&job, counts[k], &r, NULL);
        CHECK_MSG((staged_k > staged_before) == (stages[k] > 0), "block of %d threads, staging area of %ld floats: %ld k steps staged",
                  counts[k], stages[k], staged_k - staged_before);
        char what[64];
        snprintf(what, sizeof what, "block of %d threads, staging %ld", counts[k], stages[k]);
        same(what, &ref, &r);
        printf("%s: %d epochs, train loss %.6f, bitwise %s\n", what, r.epochs, r.curves.train_loss[0],
               memcmp(ref.curves.train_loss, r.curves.train_loss, sizeof(float) * (size_t)r.epochs) ? "different"
                                                                                                       : "equal");
        train_result_free(&r);
    }

    stage_floats = 1024; /* in chunks */
    /* SGD with momentum (the optimizer loop is per element). */
    ts.opt = FS_OPT_SGD;
    ts.lr = 0.05f;
    versus_cpu(&job, &ts, 5, "SGD, 5 threads");
    stage_floats = 0; /* the rest as before: a staged B makes an emulated fit's barriers many times as many */
    /* No clipping: the dense layers take the fused update (dense.c), the
     * portable form of it here, the vector form in the CPU trainer. Batch 8
     * takes the CPU's 8 x 8 input-gradient tile. */
    ts.clip_norm = 0.0f;
    ts.opt = FS_OPT_ADAMW;
    ts.lr = 1e-3f;
    versus_cpu(&job, &ts, 4, "fused AdamW, 4 threads");
    ts.opt = FS_OPT_SGD;
    ts.lr = 0.05f;
    versus_cpu(&job, &ts, 4, "fused SGD, 4 threads");
    /* Batches that leave partial GEMM tiles: fewer than 4 rows, fewer
     * columns than a vector (the CPU loads whole vectors and stores part),
     * with the fused update (5) and without it (3, clipped). */
    ts.opt = FS_OPT_ADAM;
    ts.lr = 1e-3f;
    ts.stop.max_epochs = 1;
    ts.batch = 5;
    versus_cpu(&job, &ts, 3, "batch 5, fused, 3 threads");
    ts.batch = 3;
    ts.clip_norm = 1.0f;
    versus_cpu(&job, &ts, 3, "batch 3, clipped, 3 threads");
    /* A chain model's GRUs and LSTMs (src/train/rnn.c): the recurrence's steps split
     * among the threads (its chains, directions and units), one output
     * each, and its own forms of the recurrent products on the CPU. */
    FsArch chain;
    memset(&chain, 0, sizeof chain);
    chain.chain = 1;
    chain.n_layers = 4;
    chain.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 8, .width = 5, .act = FS_ACT_SWISH};
    chain.layers[1] = (FsLayerSpec){.kind = FS_LAYER_GRU, .units = 70, .bidir = 1}; /* vector steps and a tail (rnn.c) */
    chain.layers[2] = (FsLayerSpec){.kind = FS_LAYER_GRU, .units = 5};
    chain.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 8, .act = FS_ACT_RELU};
    ts.batch_residues = 512;
    FsJob cjob = job;
    cjob.arch = &chain;
    versus_cpu(&cjob, &ts, 5, "chain BiGRU-GRU, 5 threads");
    /* The LSTM's cell states and their gradients' carry (rnn.c). */
    chain.layers[1] = (FsLayerSpec){.kind = FS_LAYER_LSTM, .units = 70, .bidir = 1}; /* lanes and a tail */
    chain.layers[2] = (FsLayerSpec){.kind = FS_LAYER_LSTM, .units = 4};
    versus_cpu(&cjob, &ts, 5, "chain BiLSTM-LSTM, 5 threads");
    /* Attention (attention.c): its (row, head) items split among the
     * threads in the query and key passes, dropout's mask drawn again in
     * backward, the position biases' sums over the rows. */
    chain.layers[1] = (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 3, .key_dim = 4, .max_dist = 6, .rate = 0.1f,
                                    .eps = 1e-5f};
    chain.layers[2] = (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 1, .key_dim = 8, .max_dist = 32, .eps = 1e-5f};
    versus_cpu(&cjob, &ts, 5, "chain attention x 2, 5 threads");
    train_result_free(&ref);
    data_free(&ds);
    return test_finish();
}
