/*
 * blocks: a kernel launch of the CUDA stand-in. The grid's blocks are
 * dealt to host threads (FOLDSWEEP_EMU_WORKERS, default the CPU count); a
 * host thread runs one block at a time, each of the block's threads a
 * fiber with its own stack. A fiber runs until it reaches a barrier, then
 * hands over to the next; the last to arrive completes the barrier
 * (combining __syncthreads_or's flags) and goes on. So a block's threads
 * interleave only at barriers: a missing barrier shows up as a wrong
 * number (bitwise tests), a barrier some thread never reaches as a launch
 * failure, but two threads racing between barriers do not (cuda_runtime.h
 * lists what is not modelled).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "emulate.h"

_Thread_local dim3 fsemu_threadIdx, fsemu_blockIdx, fsemu_blockDim, fsemu_gridDim;

/* ---- fibers ------------------------------------------------------------- */

#define STACK_BYTES (256 * 1024)

#if defined(__x86_64__)
/* Saves the callee-saved registers on the current stack, stores the stack
 * pointer in *from, and resumes the fiber whose stack pointer is `to`
 * (System V ABI: everything else is the caller's to save). The SSE and x87
 * control words are callee-saved too, but every context here is this
 * program's, which never changes them: saving and loading them (ldmxcsr
 * is microcoded) was a third of a switch, and a block of 128 fibers
 * switches 128 times a barrier. */
void fsemu_fiber_switch(void **from, void *to);
__asm__(".text\n"
        ".globl fsemu_fiber_switch\n"
        ".type fsemu_fiber_switch,@function\n"
        "fsemu_fiber_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size fsemu_fiber_switch, .-fsemu_fiber_switch\n");
typedef struct {
    void *sp;
} Ctx;
#define CTX_SWITCH(from, to) fsemu_fiber_switch(&(from)->sp, (to)->sp)
#else
#include <ucontext.h>
typedef struct {
    ucontext_t uc;
} Ctx;
#define CTX_SWITCH(from, to) swapcontext(&(from)->uc, &(to)->uc)
#endif

typedef struct {
    Ctx ctx;
    char *stack; /* STACK_BYTES above a guard page */
    int done;
} Fiber;

/* AddressSanitizer must be told of every switch of stacks (else it takes
 * a fiber's frames for overflows of the thread's stack): before, the stack
 * switched to (NULL fake-stack slot for a context that will not resume),
 * after, where it came from. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
/* A stack used again (the next block's fiber) leaves no frames behind. */
#define ASAN_FRESH_STACK(p, n) __asan_unpoison_memory_region((p), (n))
#define ASAN_START(fake, bottom, size) __sanitizer_start_switch_fiber((fake), (bottom), (size))
#define ASAN_FINISH(fake, bottom, size) __sanitizer_finish_switch_fiber((fake), (bottom), (size))
#else
#define ASAN_FRESH_STACK(p, n) ((void)(p), (void)(n))
#define ASAN_START(fake, bottom, size) ((void)(fake), (void)(bottom), (void)(size))
#define ASAN_FINISH(fake, bottom, size) ((void)(fake), (void)(bottom), (void)(size))
#endif

/* What the launch's host threads share. */
typedef struct {
    const FsEmuLaunch *l;
    unsigned next_block;     /* atomic */
    int abort;               /* atomic: a block failed, the rest stop */
    cudaError_t error;       /* under lock */
    char why[256];
    unsigned long barriers;  /* atomic: barriers completed, all blocks */
    pthread_mutex_t lock;
} Grid;

/* One host thread's block in progress. */
typedef struct {
    Grid *grid;
    Fiber *f;
    int T, cur, arrived, done_n, or_acc, or_result;
    unsigned long gen;
    Ctx sched;
    const void *sched_bottom; /* the host thread's stack (AddressSanitizer) */
    int from_sched;           /* the last switch left the host thread */
    size_t sched_size;
    char *shared;
    size_t shared_n; /* its bytes (the launch's) */
} Block;

static _Thread_local Block *cur;

void *fsemu_dynamic_shared(void) { return cur->shared; }

int fsemu_is_shared(const void *p)
{
    const char *c = (const char *)p;
    return cur && c >= cur->shared && c < cur->shared + cur->shared_n;
}

uint64_t fsemu_globaltimer(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void grid_fail(Grid *g, cudaError_t e, const char *fmt, unsigned a, unsigned b)
{
    pthread_mutex_lock(&g->lock);
    if (g->error == cudaSuccess) {
        g->error = e;
        snprintf(g->why, sizeof g->why, fmt, a, b);
    }
    pthread_mutex_unlock(&g->lock);
    __atomic_store_n(&g->abort, 1, __ATOMIC_RELEASE);
}

/* Switches from the running context (a fiber, or the host thread when
 * b->cur is -1) to fiber t, or to the host thread when t is -1; `dying`:
 * the context left will never resume. Returns when it is resumed. */
static void switch_to(Block *b, int t, int dying)
{
    Ctx *from = b->cur >= 0 ? &b->f[b->cur].ctx : &b->sched;
    Ctx *to = t >= 0 ? &b->f[t].ctx : &b->sched;
    const void *bottom = t >= 0 ? (const void *)b->f[t].stack : b->sched_bottom;
    size_t size = t >= 0 ? STACK_BYTES : b->sched_size;
    void *fake = NULL;
    b->from_sched = b->cur < 0;
    b->cur = t;
    if (t >= 0) fsemu_threadIdx.x = (unsigned)t;
    ASAN_START(dying ? NULL : &fake, bottom, size);
    CTX_SWITCH(from, to);
    ASAN_FINISH(fake, NULL, NULL);
}

static void run_fiber(Block *b, int t) { switch_to(b, t, 0); }

/* The current fiber gives way to the next live one (itself if alone). */
static void yield_as(Block *b, int dying)
{
    int t = b->cur; /* stepped, not (cur + k) % T: a division per fiber passed was a twentieth of a launch */
    for (int k = 1; k <= b->T; k++) {
        if (++t == b->T) t = 0;
        if (!b->f[t].done) {
            if (t != b->cur) switch_to(b, t, dying);
            return;
        }
    }
}

static void yield(Block *b) { yield_as(b, 0); }

/* The block stops here: back to its host thread, this stack abandoned. */
static void abandon(Block *b) { switch_to(b, -1, 1); }

static int aborted(const Block *b) { return __atomic_load_n(&b->grid->abort, __ATOMIC_ACQUIRE); }

int fsemu_syncthreads_or(int x)
{
    Block *b = cur;
    if (aborted(b)) abandon(b);
    b->or_acc |= x != 0;
    if (++b->arrived == b->T) {
        b->or_result = b->or_acc;
        b->or_acc = 0;
        b->arrived = 0;
        b->gen++;
        unsigned long n = __atomic_add_fetch(&b->grid->barriers, 1, __ATOMIC_RELAXED);
        if (b->grid->l->fault_barrier && n == b->grid->l->fault_barrier) {
            grid_fail(b->grid, cudaErrorIllegalAddress, "injected fault (FOLDSWEEP_EMU_FAIL) in block %u at barrier %u",
                      fsemu_blockIdx.x, (unsigned)n);
            abandon(b);
        }
        return b->or_result;
    }
    if (b->done_n > 0) {
        grid_fail(b->grid, cudaErrorLaunchFailure, "block %u: thread %u waits at a barrier that an exited thread never reaches",
                  fsemu_blockIdx.x, fsemu_threadIdx.x);
        abandon(b);
    }
    unsigned long gen = b->gen;
    while (b->gen == gen) {
        yield(b);
        if (aborted(b)) abandon(b);
    }
    return b->or_result;
}

void fsemu_syncthreads(void) { (void)fsemu_syncthreads_or(0); }

/* A fiber's life: the kernel for its thread, then the next live fiber or,
 * when it was the last, the host thread. Never returns. */
static void fiber_main(void)
{
    Block *b = cur;
    /* A fiber's first run: it came from the host thread or another fiber;
     * the host thread's stack is learnt here for the way back. */
    const void *from_bottom = NULL;
    size_t from_size = 0;
    ASAN_FINISH(NULL, &from_bottom, &from_size);
    if (b->from_sched) b->sched_bottom = from_bottom, b->sched_size = from_size;
    b->grid->l->entry(b->grid->l->args);
    b->f[b->cur].done = 1;
    b->done_n++;
    if (b->arrived > 0 && b->done_n + b->arrived == b->T)
        grid_fail(b->grid, cudaErrorLaunchFailure, "block %u: thread %u exited while others wait at a barrier",
                  fsemu_blockIdx.x, fsemu_threadIdx.x);
    if (b->done_n < b->T && !aborted(b)) yield_as(b, 1);
    abandon(b);
}

#if defined(__x86_64__)
static void fiber_init(Fiber *f, Block *b)
{
    (void)b;
    ASAN_FRESH_STACK(f->stack, STACK_BYTES);
    char *top = f->stack + STACK_BYTES;
    /* Six saved registers, then the return address. */
    void **sp = (void **)(void *)(top - 64);
    memset(sp, 0, 64);
    sp[6] = (void *)fiber_main; /* the switch's ret lands here, stack 8 mod 16 as at a call */
    f->ctx.sp = sp;
    f->done = 0;
}
#else
static void fiber_init(Fiber *f, Block *b)
{
    ASAN_FRESH_STACK(f->stack, STACK_BYTES);
    getcontext(&f->ctx.uc);
    f->ctx.uc.uc_stack.ss_sp = f->stack;
    f->ctx.uc.uc_stack.ss_size = STACK_BYTES;
    f->ctx.uc.uc_link = &b->sched.uc;
    makecontext(&f->ctx.uc, fiber_main, 0);
    f->done = 0;
}
#endif

static int fibers_alloc(Block *b, int T)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    b->f = calloc((size_t)T, sizeof *b->f);
    if (!b->f) return -1;
    for (int t = 0; t < T; t++) {
        char *m = mmap(NULL, STACK_BYTES + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED) return -1;
        mprotect(m, page, PROT_NONE); /* an overflow faults instead of corrupting a neighbour */
        b->f[t].stack = m + page;
    }
    return 0;
}

static void fibers_free(Block *b, int T)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int t = 0; t < T && b->f; t++)
        if (b->f[t].stack) {
            ASAN_FRESH_STACK(b->f[t].stack, STACK_BYTES); /* the next mapping there must not inherit its frames */
            munmap(b->f[t].stack - page, STACK_BYTES + page);
        }
    free(b->f);
}

static void *worker(void *arg)
{
    Grid *g = arg;
    const FsEmuLaunch *l = g->l;
    Block b;
    memset(&b, 0, sizeof b);
    b.grid = g;
    b.T = (int)l->block;
    b.shared = calloc(1, l->shared ? l->shared : 1);
    b.shared_n = l->shared;
    if (!b.shared || fibers_alloc(&b, b.T) != 0) {
        grid_fail(g, cudaErrorLaunchOutOfResources, "no host memory for the %u threads of block %u", l->block, 0);
        free(b.shared);
        fibers_free(&b, b.T);
        return NULL;
    }
    cur = &b;
    fsemu_blockDim = (dim3){l->block, 1, 1};
    fsemu_gridDim = (dim3){l->grid, 1, 1};
    for (;;) {
        unsigned i = __atomic_fetch_add(&g->next_block, 1, __ATOMIC_RELAXED);
        if (i >= l->grid || aborted(&b)) break;
        fsemu_blockIdx = (dim3){i, 0, 0};
        b.arrived = b.done_n = b.or_acc = b.or_result = 0;
        for (int t = 0; t < b.T; t++) fiber_init(&b.f[t], &b);
        b.cur = -1;
        run_fiber(&b, 0);
    }
    cur = NULL;
    fibers_free(&b, b.T);
    free(b.shared);
    return NULL;
}

static int workers_for(unsigned grid)
{
    const char *v = getenv("FOLDSWEEP_EMU_WORKERS");
    long n = v && *v ? strtol(v, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    return (int)(n < (long)grid ? n : (long)grid);
}

/* Kernels running now, on all streams: FOLDSWEEP_EMU_VERBOSE says how
 * many each launch started beside (concurrent launches: the block tier's
 * refills, tests/gpu_emu). */
static int kernels_running;

cudaError_t fsemu_run_kernel(const FsEmuLaunch *l)
{
    const int beside = __atomic_fetch_add(&kernels_running, 1, __ATOMIC_ACQ_REL);
    if (getenv("FOLDSWEEP_EMU_VERBOSE"))
        fprintf(stderr, "foldsweep: CUDA stand-in: a launch of %u blocks starts beside %d running\n", l->grid, beside);
    Grid g;
    memset(&g, 0, sizeof g);
    g.l = l;
    pthread_mutex_init(&g.lock, NULL);
    int W = workers_for(l->grid);
    pthread_t th[64];
    int started = 0;
    fsemu_memory_open();
    for (int w = 1; w < W; w++)
        if (pthread_create(&th[started], NULL, worker, &g) == 0) started++;
    worker(&g);
    for (int w = 0; w < started; w++) pthread_join(th[w], NULL);
    fsemu_memory_close();
    __atomic_fetch_sub(&kernels_running, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_destroy(&g.lock);
    if (getenv("FOLDSWEEP_EMU_VERBOSE"))
        fprintf(stderr, "foldsweep: CUDA stand-in: the launch's %u blocks met %lu barriers\n", l->grid, g.barriers);
    if (g.error != cudaSuccess) {
        char why[300];
        snprintf(why, sizeof why, "kernel launch of %u blocks: %s", l->grid, g.why);
        fsemu_make_sticky(g.error, why);
    }
    return g.error;
}
