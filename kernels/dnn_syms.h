/*
 * kernels/dnn_syms.h: cuBLAS and cuDNN reached through dlopen (real CUDA
 * builds). The binary links neither library: the CUDA runtime is linked
 * statically so that a node with a driver and no toolkit runs foldsweep,
 * and one without a GPU runs the CPU backend; a linked libcublas (and its
 * gigabyte of mappings) would make every start, even `--version` on a
 * CPU node, need the toolkit's libraries. fs_dnn_load opens the back
 * end's library the first time the library tier needs it, or says why it
 * cannot. The back ends (dnn_cublas.cu, dnn_cudnn.cu) are written against
 * the libraries' own API: after this header, each call they make goes
 * through the table. Under FOLDSWEEP_CUDA=EMULATE the stand-ins are linked
 * and called directly.
 */
#ifndef FS_KERNELS_DNN_SYMS_H
#define FS_KERNELS_DNN_SYMS_H

#include "dnn_impl.h"

/* The back end's library loaded (once): 0, or -1 with err naming the
 * library and the loader's reason. */
int fs_dnn_load(FsDnnBackend be, FsErr *err);

#if !defined(FS_CUDA_EMULATE)
#include <cublas_v2.h>
#ifdef DNN_WITH_CUDNN
#include <cudnn.h>
#endif

#define FS_CUBLAS_SYMS(X)                                                                               \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetWorkspace_v2) X(cublasSetMathMode) \
    X(cublasSgemmStridedBatched) X(cublasGetStatusString)
#define FS_CUDNN_SYMS(X)                                                                                 \
    X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnGetVersion)          \
    X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensor4dDescriptor)        \
    X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor)        \
    X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor)                            \
    X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType)  \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)            \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) X(cudnnGetConvolutionForwardWorkspaceSize)         \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnGetConvolutionBackwardFilterWorkspaceSize)   \
    X(cudnnConvolutionForward) X(cudnnConvolutionBackwardData) X(cudnnConvolutionBackwardFilter)

/* Each entry typed as the library's own declaration says. */
#define FS_SYM_FIELD(f) decltype(&::f) f;
struct FsDnnSyms {
    FS_CUBLAS_SYMS(FS_SYM_FIELD)
#ifdef DNN_WITH_CUDNN
    FS_CUDNN_SYMS(FS_SYM_FIELD)
#endif
};
#undef FS_SYM_FIELD
extern struct FsDnnSyms fs_dnn_syms;

/* The calls through the table (not in dnn_syms.cu, which fills it). */
#ifndef FS_DNN_SYMS_TABLE
#define cublasCreate_v2 (*fs_dnn_syms.cublasCreate_v2)
#define cublasDestroy_v2 (*fs_dnn_syms.cublasDestroy_v2)
#define cublasSetStream_v2 (*fs_dnn_syms.cublasSetStream_v2)
#define cublasSetWorkspace_v2 (*fs_dnn_syms.cublasSetWorkspace_v2)
#define cublasSetMathMode (*fs_dnn_syms.cublasSetMathMode)
#define cublasSgemmStridedBatched (*fs_dnn_syms.cublasSgemmStridedBatched)
#define cublasGetStatusString (*fs_dnn_syms.cublasGetStatusString)
#ifdef DNN_WITH_CUDNN
#define cudnnCreate (*fs_dnn_syms.cudnnCreate)
#define cudnnDestroy (*fs_dnn_syms.cudnnDestroy)
#define cudnnSetStream (*fs_dnn_syms.cudnnSetStream)
#define cudnnGetErrorString (*fs_dnn_syms.cudnnGetErrorString)
#define cudnnGetVersion (*fs_dnn_syms.cudnnGetVersion)
#define cudnnCreateTensorDescriptor (*fs_dnn_syms.cudnnCreateTensorDescriptor)
#define cudnnDestroyTensorDescriptor (*fs_dnn_syms.cudnnDestroyTensorDescriptor)
#define cudnnSetTensor4dDescriptor (*fs_dnn_syms.cudnnSetTensor4dDescriptor)
#define cudnnCreateFilterDescriptor (*fs_dnn_syms.cudnnCreateFilterDescriptor)
#define cudnnDestroyFilterDescriptor (*fs_dnn_syms.cudnnDestroyFilterDescriptor)
#define cudnnSetFilter4dDescriptor (*fs_dnn_syms.cudnnSetFilter4dDescriptor)
#define cudnnCreateConvolutionDescriptor (*fs_dnn_syms.cudnnCreateConvolutionDescriptor)
#define cudnnDestroyConvolutionDescriptor (*fs_dnn_syms.cudnnDestroyConvolutionDescriptor)
#define cudnnSetConvolution2dDescriptor (*fs_dnn_syms.cudnnSetConvolution2dDescriptor)
#define cudnnSetConvolutionGroupCount (*fs_dnn_syms.cudnnSetConvolutionGroupCount)
#define cudnnSetConvolutionMathType (*fs_dnn_syms.cudnnSetConvolutionMathType)
#define cudnnGetConvolutionForwardAlgorithm_v7 (*fs_dnn_syms.cudnnGetConvolutionForwardAlgorithm_v7)
#define cudnnGetConvolutionBackwardDataAlgorithm_v7 (*fs_dnn_syms.cudnnGetConvolutionBackwardDataAlgorithm_v7)
#define cudnnGetConvolutionBackwardFilterAlgorithm_v7 (*fs_dnn_syms.cudnnGetConvolutionBackwardFilterAlgorithm_v7)
#define cudnnGetConvolutionForwardWorkspaceSize (*fs_dnn_syms.cudnnGetConvolutionForwardWorkspaceSize)
#define cudnnGetConvolutionBackwardDataWorkspaceSize (*fs_dnn_syms.cudnnGetConvolutionBackwardDataWorkspaceSize)
#define cudnnGetConvolutionBackwardFilterWorkspaceSize (*fs_dnn_syms.cudnnGetConvolutionBackwardFilterWorkspaceSize)
#define cudnnConvolutionForward (*fs_dnn_syms.cudnnConvolutionForward)
#define cudnnConvolutionBackwardData (*fs_dnn_syms.cudnnConvolutionBackwardData)
#define cudnnConvolutionBackwardFilter (*fs_dnn_syms.cudnnConvolutionBackwardFilter)
#endif
#endif
#endif

#endif
