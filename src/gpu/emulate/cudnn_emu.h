/*
 * cudnn_emu.h: private to the cuDNN stand-in (cudnn.c, cudnn_conv.c): the
 * descriptors' contents and a convolution's shape once checked.
 */
#ifndef FS_GPU_EMULATE_CUDNN_EMU_H
#define FS_GPU_EMULATE_CUDNN_EMU_H

#include "cudnn.h"
#include "emulate.h"

struct cudnnContext {
    cudaStream_t stream;
};

struct cudnnTensorStruct {
    int set;
    cudnnDataType_t type;
    int nb; /* dims, NCHW order whatever the memory format (cuDNN's convention) */
    int dim[CUDNN_DIM_MAX];
    long stride[CUDNN_DIM_MAX];
};

struct cudnnFilterStruct {
    int set;
    cudnnDataType_t type;
    cudnnTensorFormat_t format; /* NCHW: K C R S in memory; NHWC: K R S C */
    int k, c, h, w;
};

struct cudnnConvolutionStruct {
    int set;
    int pad_h, pad_w, u, v, dil_h, dil_w;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t type;
    int groups;
    cudnnMathType_t math;
};

/* A checked 1-D convolution: N images of W positions, C channels in, K
 * out, filter width S, G groups; element strides of x (or dx), y (or dy)
 * and the filter. Tap k of an output o reads input o - pad + k dil and
 * filter tap k (S - 1 - k when flip: CUDNN_CONVOLUTION). */
typedef struct {
    int N, C, K, W, S, OW, G, pad, dil, flip;
    long xn, xc, xw, yn, yc, yw, fk, fc, fs;
    size_t x_bytes, y_bytes, w_bytes; /* extents */
} FsConvShape;

/* cudnn.c: checks x, w, conv, y as a convolution call does. */
cudnnStatus_t fsemu_conv_shape(const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                               const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
                               FsConvShape *sh);
/* The workspace each direction asks for (FOLDSWEEP_EMU_CUDNN_WS). */
size_t fsemu_cudnn_ws(int dir);
/* Whether a convolution computes algorithm `algo` of direction dir. */
cudnnStatus_t fsemu_cudnn_algo(int dir, int algo);
#define FS_CONV_FWD 0
#define FS_CONV_BWD_DATA 1
#define FS_CONV_BWD_FILTER 2

#endif
