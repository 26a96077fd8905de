/*
 * kernels/lib_run.h: internal to the library tier's host side: one
 * group's run, shared by its trainer (lib_train.cu) and its checkpoints
 * (lib_ckpt.cu).
 */
#ifndef FS_KERNELS_LIB_RUN_H
#define FS_KERNELS_LIB_RUN_H

#include "dnn.h"
#include "gpu_launch.h"

/* One group's run: its launch (the models, one stride apart), its back
 * end, its models' state and public records. */
typedef struct {
    Launch *L;
    FsGpu *gpu; /* its device: the waits are counted in its times (gpu_times) */
    FsDnn *dnn[2];     /* by FsDnnBackend: cuBLAS, cuDNN (opened where a layer uses it) */
    unsigned char *be; /* per layer: its back end (the device's table: gpu_table_choose; cuBLAS without) */
    FsLibLaunch args;
    FsLibPublic *pub; /* host side of args.pub */
    /* Per layer: its convolutions over the group, a training step's
     * (conv[2i]: a window model's batch_size examples, FsNet.train_batch)
     * and a validation step's (conv[2i + 1]: max_batch, its eval_batch).
     * A chain model's are the same: its batch is its row budget. */
    FsDnnConv *conv;
    /* A training step and a validation step, each captured once as a CUDA
     * graph and replayed: the same launches and library calls every step
     * (what differs, each model's batch and state, is in device memory),
     * without the host issuing some sixty calls a step. */
    cudaGraphExec_t train_step, val_step;
    /* Per slot: its job's mid-fold checkpoints (train/lib_ckpt.c), or NULL. */
    FsLibCkpt **ck;
} LibRun;

#define LIB_CU(call, what)                                                                           \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fs_err_set(err, "%s:%d: %s (%s): %s", __FILE__, __LINE__, #call, (what), cudaGetErrorString(e_)); \
            return -1;                                                                               \
        }                                                                                            \
    } while (0)

/* Slot s's checkpointing opened for its job (a fresh slot: before its
 * BEGIN), and its job's resume bytes, if any, put in place on the device:
 * the model's arrays, stream, step and fit state, its watch and curves.
 * 0, or -1 with err. */
int lib_ckpt_start(LibRun *R, const FsJob *jobs, int s, FsErr *err);
/* At an epoch's start (its shuffle done, the group's stream idle): each
 * training model whose interval is due writes a checkpoint. */
int lib_ckpt_epoch(LibRun *R, const FsJob *jobs, FsErr *err);
/* After an epoch (before FINISH): each model a stop signal cancelled
 * writes its stop checkpoint, as the CPU trainer does. */
int lib_ckpt_stops(LibRun *R, const FsJob *jobs, FsErr *err);
/* Slot s's checkpointing closed (its outputs to the job's spec). */
void lib_ckpt_close(LibRun *R, int s);

#endif
