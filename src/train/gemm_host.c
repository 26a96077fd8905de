/*
 * gemm_host: the trainer's GEMM for the library stand-ins (train/kernel.h,
 * core_gemm). Host only, CPU build: gemm.c itself is also compiled into the
 * GPU kernel and the emulated block, where a host entry point cannot live.
 */
#include "train/core.h"

static FsStride plain(long s)
{
    FsStride st = {0, 0, s};
    return st;
}

void core_gemm(int M, int N, int K, const float *A, long am, long ak, const float *B, long bk, float *C, long cm,
               long cn)
{
    /* ops_gemm reads B's rows in whole vectors up to their stride: a
     * stride below N would read the next row's floats as this one's. */
    if (M <= 0 || N <= 0 || K <= 0 || bk < N) return;
    ops_gemm(M, N, K, A, plain(am), plain(ak), B, plain(bk), C, plain(cm), cn);
}
