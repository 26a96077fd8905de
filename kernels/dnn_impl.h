/*
 * kernels/dnn_impl.h: internal to the library tier (kernels/dnn.cu and its
 * back ends dnn_cublas.cu, dnn_cudnn.cu): the FsDnn behind kernels/dnn.h,
 * the back ends' entry points, and the tier's own small kernels
 * (dnn_cublas.cu defines them; the cuDNN back end's interleaving shares
 * the launch helpers).
 */
#ifndef FS_KERNELS_DNN_IMPL_H
#define FS_KERNELS_DNN_IMPL_H

#include "dnn.h"

/* The scratch is carved into parts at these float boundaries (256 bytes:
 * every library's alignment wish). */
#define DNN_ALIGN(n) (((size_t)(n) + 63) / 64 * 64)

struct FsDnn {
    FsDnnBackend be;
    cudaStream_t stream;
    int tf32;
    float *scratch; /* device: im2col columns, transposed weights, packed rows */
    size_t scratch_floats;
    void *ws; /* device: the library's workspace */
    size_t ws_bytes;
    void *lib; /* the back end's handles (dnn_cublas.cu, dnn_cudnn.cu) */
};

/* What one layer needs: scratch floats and workspace bytes. */
typedef struct {
    size_t scratch_floats, ws_bytes;
} DnnNeed;

/* The cuBLAS back end (dnn_cublas.cu). */
int dnn_cublas_open(FsDnn *d, FsErr *err);
void dnn_cublas_close(FsDnn *d);
int dnn_cublas_need(FsDnn *d, const FsDnnConv *c, DnnNeed *need, FsErr *err);
int dnn_cublas_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err);
int dnn_cublas_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err);
int dnn_cublas_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err);

/* The cuDNN back end (dnn_cudnn.cu), where DNN_WITH_CUDNN: in a real build
 * where CMake found cuDNN (FS_HAVE_CUDNN), in the emulated one where the
 * cuDNN stand-in exists. */
#if defined(FS_CUDA_EMULATE)
#if defined(__has_include)
#if __has_include("../src/gpu/emulate/cudnn.h")
#define DNN_WITH_CUDNN 1
#endif
#endif
#elif defined(FS_HAVE_CUDNN)
#define DNN_WITH_CUDNN 1
#endif
#ifdef DNN_WITH_CUDNN
int dnn_cudnn_open(FsDnn *d, FsErr *err);
void dnn_cudnn_close(FsDnn *d);
void dnn_cudnn_version(char *out, size_t n);
int dnn_cudnn_need(FsDnn *d, const FsDnnConv *c, DnnNeed *need, FsErr *err);
int dnn_cudnn_fwd(FsDnn *d, const FsDnnConv *c, const float *x, const float *W, float *y, FsErr *err);
int dnn_cudnn_wgrad(FsDnn *d, const FsDnnConv *c, const float *x, const float *dy, float *gW, FsErr *err);
int dnn_cudnn_dgrad(FsDnn *d, const FsDnnConv *c, const float *dy, const float *W, float *dx, FsErr *err);
/* The cuDNN back end's layout: a group's models interleaved as channel
 * groups, interior rows [B L][G ch]. interleave: dst[r][g ch + c] =
 * src[g ss + row(r) ch + c]; deinterleave_add: dst[g ds + row(r) ch + c]
 * += src[r][g ch + c]. */
cudaError_t dnn_interleave(const FsDnnConv *c, int ch, const float *src, long ss, float *dst, cudaStream_t s);
cudaError_t dnn_deinterleave_add(const FsDnnConv *c, int ch, const float *src, float *dst, long ds, cudaStream_t s);
/* Filters in cuDNN's NHWC layout [G F][1][K][C]: Wt[(g F + f) K C + k C + c] =
 * W[g ws + (k C + c) F + f]; and a gradient in that layout added back. */
cudaError_t dnn_filter_to(const FsDnnConv *c, const float *W, float *Wt, cudaStream_t s);
cudaError_t dnn_filter_add(const FsDnnConv *c, const float *Wt, float *gW, cudaStream_t s);
#endif

/* The shape checks both back ends share: -1 with err naming what is
 * refused (dnn.cu). */
int dnn_check(const FsDnnConv *c, FsErr *err);
/* The scratch holds `floats` (grown if not, on d's stream): 0 or -1 with err. */
int dnn_scratch(FsDnn *d, size_t floats, FsErr *err);
/* The library workspace holds `bytes` (grown if not, the same way). */
int dnn_workspace(FsDnn *d, size_t bytes, FsErr *err);

/* The tier's own kernels (dnn_kernels.cu), queued on stream; the launch's error. */
/* im2col: col[g][b L + p][k C + c] = x[g xs + (b (L + 2P) + P + p + (k - K/2) dil) C + c]. */
cudaError_t dnn_im2col(const FsDnnConv *c, int C, const float *x, long xs, float *col, cudaStream_t s);
/* Interior rows packed: out[g][b L + p][c] = x[g xs + (b (L + 2P) + P + p) C + c]. */
cudaError_t dnn_pack_rows(const FsDnnConv *c, int C, const float *x, long xs, float *out, cudaStream_t s);
/* Interior rows added to: y[g ys + (b (L + 2P) + P + p) C + c] += t[g][b L + p][c]. */
cudaError_t dnn_add_rows(const FsDnnConv *c, int C, const float *t, float *y, long ys, cudaStream_t s);
/* conv_dgrad's flipped, transposed kernel: Wf[g][(j F + f) C + c] = W[g ws + ((K - 1 - j) C + c) F + f]. */
cudaError_t dnn_flip_weights(const FsDnnConv *c, const float *W, float *Wf, cudaStream_t s);
/* The cuDNN back end's layout: a group's models interleaved as channel
 * groups, interior rows [B L][G ch]. interleave: dst[r][g ch + c] =
 * src[g ss + row(r) ch + c]; deinterleave_add: dst[g ds + row(r) ch + c]
 * += src[r][g ch + c]. */
cudaError_t dnn_interleave(const FsDnnConv *c, int ch, const float *src, long ss, float *dst, cudaStream_t s);
cudaError_t dnn_deinterleave_add(const FsDnnConv *c, int ch, const float *src, float *dst, long ds, cudaStream_t s);
/* Filters in cuDNN's NHWC layout [G F][1][K][C]: Wt[(g F + f) K C + k C + c] =
 * W[g ws + (k C + c) F + f]; and a gradient in that layout added back. */
cudaError_t dnn_filter_to(const FsDnnConv *c, const float *W, float *Wt, cudaStream_t s);
cudaError_t dnn_filter_add(const FsDnnConv *c, const float *Wt, float *gW, cudaStream_t s);

#endif
