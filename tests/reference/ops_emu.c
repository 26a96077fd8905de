/*
 * ops_emu: the trainer's per-model files compiled with FS_EMULATE_BLOCK (as
 * tests/test_block.c does): FS_PARFOR strides over pthreads, FS_SYNC is a
 * barrier, FS_MASTER is thread 0, FS_SYNC_ANY agrees across threads, and the
 * GEMM takes its portable tile, as on the GPU. tests/test_ops.c runs each
 * op through ops_emu_run and compares with the reference and, bitwise,
 * with the CPU build (the vector forms claim the portable loops' sums).
 */
#define FS_EMULATE_BLOCK 1

/* This unit's copies of the per-model functions, renamed so that they do
 * not clash with the library's CPU build of the same files. */
#define OPS_PREFIX emu_
#include "train/rename.h"

/* The k steps whose B the block staged in shared memory (train/
 * gemm_stage.h; counted by the master), so that tests/test_ops.c can hold
 * that the staged path ran. */
long ops_emu_staged_k;
#define FS_GEMM_STAGED(k) (ops_emu_staged_k += (k))

#include "../../src/train/act.c"
#include "../../src/train/blocks.c"
#include "../../src/train/conv.c"
#include "../../src/train/dense.c"
#include "../../src/train/gemm.c"
#include "../../src/train/layers.c"
#include "../../src/train/rnn.c"
#include "../../src/train/attention.c"
#include "../../src/train/step.c"

#include "ops_exec.h"

#include "../emu_block.h"

typedef struct {
    int tid;
    FsModel *m;
    char *arena;
    OpsCall *call;
    long stage; /* floats of the staging area this run (emu_stage) */
} EmuThread;

/* The block's staging area for the GEMM's B, as the fit kernel gives it
 * shared memory past the model's (kernels/fit_kernel.cu). */
static _Alignas(64) float emu_stage[16384];

static void *emu_thread(void *arg)
{
    EmuThread *t = arg;
    fs_emu_tid = t->tid;
    ops_gemm_stage(t->stage ? emu_stage : NULL, t->stage);
    ops_exec(t->m, t->arena, t->call);
    return NULL;
}

void ops_emu_run(FsModel *m, char *arena, OpsCall *call, int threads)
{
    FS_ASSERT(threads >= 1 && threads <= 64);
    fs_emu_nthreads = threads;
    pthread_barrier_init(&fs_emu_barrier, NULL, (unsigned)threads);
    EmuThread t[64];
    pthread_t tid[64];
    /* No staging area, a small one (larger Bs staged in chunks: the
     * grouped-A products of ops_gemm.c need it), a large one (most Bs
     * whole), in turn from call to call: the same bits every way. */
    static const long stages[] = {0, 512, 16384};
    static int turn;
    const long stage = stages[turn++ % 3];
    for (int i = 0; i < threads; i++) {
        t[i] = (EmuThread){i, m, arena, call, stage};
        FS_ASSERT(pthread_create(&tid[i], NULL, emu_thread, &t[i]) == 0);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&fs_emu_barrier);
}
