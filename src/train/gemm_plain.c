/*
 * gemm_plain: the trainer's GEMM (ops_gemm, core.h) with plain strides,
 * for the library stand-ins (src/gpu/emulate: cuBLAS's and cuDNN's
 * compute), whose results must be the CPU trainer's bits. A wrapper, not
 * a second GEMM: the summation order is ops_gemm's whatever the caller.
 */
#include "train/core.h"

void core_gemm(int M, int N, int K, const float *A, long am, long ak, const float *B, long bk, float *C, long cm,
               long cn)
{
    const FsStride sam = {0, 0, am}, sak = {0, 0, ak}, sbk = {0, 0, bk}, scm = {0, 0, cm};
    ops_gemm(M, N, K, A, sam, sak, B, sbk, C, scm, cn);
}
