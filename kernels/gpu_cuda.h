/*
 * kernels/gpu_cuda.h: internal to the CUDA backend's host side:
 * gpu_cuda.cu (the device, the data it holds, the folds' example lists)
 * and gpu_launch.cu (capacity and the launches) share the backend's state
 * and its checked-call macro.
 */
#ifndef FS_KERNELS_GPU_CUDA_H
#define FS_KERNELS_GPU_CUDA_H

#include <cuda_runtime.h> /* or, under FOLDSWEEP_CUDA=EMULATE, the stand-in (src/gpu/emulate) */

#ifdef __cplusplus
extern "C" {
#endif
#include "data/data.h"
#include "gpu/gpu.h"
#include "train/kernel.h" /* the trainer's side: model layout, sizes, seeds, fs_fit_launch */
#ifdef __cplusplus
}
#endif

/* A CUDA call that failed: the message names file:line and the call. */
#define CU(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fs_err_set(err, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

typedef struct {
    uint32_t *d_idx; /* train then valid indices */
    uint32_t n_train, n_valid;
    uint64_t n_train_res, n_valid_res; /* their scored residues (a chain list: its chains') */
    uint64_t counts[FS_MAX_CLASSES]; /* the training residues' classes (training.class_weights) */
} FoldLists;

struct FsGpu {
    int device;
    FsGpuLimits lim;
    const FsDataset *ds;
    uint8_t *d_aa, *d_ss, *d_left, *d_right;
    void *d_feat; /* the residues' feature columns (FsDataset.feat), as stored: resident like the codes */
    /* By fold_slot: FS_FOLD_ALL (a refit) is slot 0, FS_FOLD_PREDEFINED 1,
     * fold k slot k + 2; [0] a window model's lists (residues), [1] a
     * chain model's (chains). */
    FoldLists folds[2][FS_MAX_FOLDS + 2];
    FsGpuTimes times; /* gpu_times: gpu_train's (gpu_launch.cu) and the library tier's waits (lib_train.cu) */
    FsGpuTable table; /* the library tier's back-end table (FOLDSWEEP_GPU_TABLE), where has_table */
    int has_table;
};

/* NVTX ranges (FOLDSWEEP_NVTX=ON in a CUDA build): where a GPU rank's host
 * time goes, named in Nsight Systems' timeline beside the kernels. Without
 * the option, or under the CUDA stand-in, they compile to nothing. */
#if defined(FS_NVTX) && !defined(FS_CUDA_EMULATE)
#include <nvtx3/nvToolsExt.h>
#define FS_NVTX_PUSH(name) nvtxRangePushA(name)
#define FS_NVTX_POP() nvtxRangePop()
#else
#define FS_NVTX_PUSH(name) ((void)0)
#define FS_NVTX_POP() ((void)0)
#endif

/* A fold's slot in FsGpu.folds. */
static inline int gpu_fold_slot(int fold) { return fold - FS_FOLD_ALL; }
/* The fold's example lists on the device (chains: a chain model's), uploaded the first time a job
 * needs them; NULL with err set where the fold is not one of the data's or
 * the upload failed. */
const FoldLists *gpu_fold_lists(FsGpu *g, int fold, int chains, FsErr *err);

#endif
