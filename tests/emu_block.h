/*
 * emu_block.h: the emulated thread block's runtime (util.h declares these
 * under FS_EMULATE_BLOCK): each pthread's index, the block size, the
 * barrier, and FS_SYNC_ANY's agreement. Included once by each test executable
 * that builds the trainer's files as a block (test_block, test_ops).
 */
#ifndef FS_TEST_EMU_BLOCK_H
#define FS_TEST_EMU_BLOCK_H

#include <pthread.h>

_Thread_local int fs_emu_tid;
int fs_emu_nthreads;
pthread_barrier_t fs_emu_barrier;
static int any_flags[64];

int fs_emu_any(int x)
{
    any_flags[fs_emu_tid] = x;
    pthread_barrier_wait(&fs_emu_barrier);
    int any = 0;
    for (int t = 0; t < fs_emu_nthreads; t++) any |= any_flags[t];
    pthread_barrier_wait(&fs_emu_barrier); /* nobody overwrites a flag before all have read */
    return any;
}

#endif
