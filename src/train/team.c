/*
 * team: idle pool threads help the models that are training (team.h).
 *
 * Each owner (a thread inside train_job, from the pool) holds a slot. To
 * share a loop it writes the loop into its slot, opens it, and works
 * through its chunks; it returns once every chunk is done. The chunks are
 * dealt into lanes, one per thread expected (the owner and the idle
 * helpers): the owner takes lane 0's from the front, a helper the lane of
 * its helper number, and a thread whose lane is empty takes the others'
 * from their backs. So on two threads each works on the same half of
 * every loop at every step, and that half of the weights, moments and
 * activations stays in its core's cache: chunks handed out in turn (or
 * from both ends of one range, where the meeting point moves from step to
 * step) cost more in cache traffic between cores than they saved (R1 at
 * batch 8; Adam over the larger model's parameters ran slower on two
 * threads than on one). Helpers (pool threads whose source has nothing for
 * them) spin over the open slots for a while after their last chunk, since
 * an owner opens regions every few hundred microseconds while it trains,
 * then sleep until an owner opens one.
 *
 * A slot's fields are the owner's: it writes them only while the slot is
 * closed and no helper is inside (users == 0). A helper enters (users++)
 * before it reads `open`, so an owner that closes and then sees users == 0
 * knows that every later helper will see the slot closed (sequentially
 * consistent order of the two pairs of accesses). A helper's chunk reaches
 * the owner through `helper_done` (release, then acquire).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "train/team.h"
#include "train/train.h"

#define TEAM_SLOTS 64
#define TEAM_LANES 8
/* A shared loop is cut into at least this many chunks per thread that may
 * work on it, and into chunks of at most TEAM_MAX_CHUNK_WORK (about 50
 * microseconds), so that the owner, done with its own, waits little for
 * the last chunk a helper took. */
#define TEAM_CHUNKS_PER_THREAD 16
#define TEAM_MAX_CHUNK_WORK 2097152.0
/* No chunk smaller than this (multiply-adds, a few microseconds): taking a
 * chunk moves a shared cache line between cores. */
#define TEAM_MIN_CHUNK_WORK 131072.0
/* Below this much work (about 25 microseconds) a fork and join, and the
 * cache lines its data then crosses between cores, cost about what they
 * save. R1's lone fold at batch 8 on two threads, against one thread per
 * model: sharing loops down to 65,536 ran it at 0.5 to 1.2 times the speed
 * from run to run; from here (GEMMs from 8 million, gemm.c) at 0.98 to
 * 1.14 times, in five runs. */
#define TEAM_MIN_WORK_DEFAULT 1048576.0
/* After its last chunk a helper spins this long before it sleeps: the
 * gaps between an owner's regions (activations, batch statistics) are
 * shorter than a wake-up. */
#define TEAM_SPIN_SECONDS 500e-6
/* A sleeping helper wakes at least this often, to see whether it may end. */
#define TEAM_NAP_SECONDS 2e-3
/* An owner that waited this long for a helper's chunk (the helper lost its
 * core to another process mid-chunk: a shared machine, where such waits
 * last a scheduler time slice, 0.5 to 3 ms measured) trains alone for
 * TEAM_SOLO_FACTOR times the wait, so that stalls cost under a tenth of
 * the time when the machine stays busy, and little helping is lost to a
 * single one. */
#define TEAM_STALL_SECONDS 200e-6
#define TEAM_SOLO_FACTOR 10.0

typedef struct {
    /* Each lane's chunks not yet taken: [head, tail) as head << 32 | tail. */
    _Atomic unsigned long long lane[TEAM_LANES];
    _Atomic int open;
    _Atomic int users;
    _Atomic long helper_done;
    _Atomic int taken;
    int lanes;
    long n, grain, n_chunks;
    FsTeamFn fn;
    void *arg;
} __attribute__((aligned(128))) TeamSlot;

static TeamSlot slots[TEAM_SLOTS];

/* Shared counters, each on its own cache line: owners read idle and
 * sleepers on every shared loop. */
static struct {
    _Atomic int v;
} __attribute__((aligned(128))) idle, sleepers, trainers, n_slots;

static _Atomic unsigned long long st_regions, st_chunks, st_helper_chunks, st_stalls;
/* Where the time goes under contention (FOLDSWEEP_TEAM_STATS=1's line,
 * bench/run-team): owners' waits for helpers' chunks (nanoseconds, and
 * regions that waited at all), loops run alone while a stall's solo period
 * lasted, helpers' spinning without work (nanoseconds), their naps and the
 * owners' wake-ups of sleepers. */
static _Atomic unsigned long long st_wait_ns, st_waits, st_solo_loops, st_spin_ns, st_naps, st_wakes, st_busy;

static pthread_mutex_t nap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nap_cv;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int enabled = 1;
static double min_work = TEAM_MIN_WORK_DEFAULT;
static int share_always; /* FOLDSWEEP_TEST_TEAM_SHARE */

static _Thread_local TeamSlot *my_slot;
static _Thread_local int in_region; /* a loop inside a shared loop runs inline */
static _Thread_local FsTeamWindow win; /* the owner's busy-machine rule (team_window_*) */

static void team_print_stats(void)
{
    FsTeamStats s;
    train_team_stats(&s);
    fprintf(stderr,
            "foldsweep: team: %llu regions, %llu chunks, %llu by helpers, %llu stalls; waited %.3f s in %llu "
            "regions, %llu loops alone after stalls or busy windows (%llu busy), helpers spun %.3f s, %llu naps, "
            "%llu wake-ups\n",
            s.regions, s.chunks, s.helper_chunks, s.stalls, 1e-9 * (double)atomic_load(&st_wait_ns),
            atomic_load(&st_waits), atomic_load(&st_solo_loops), atomic_load(&st_busy),
            1e-9 * (double)atomic_load(&st_spin_ns),
            atomic_load(&st_naps), atomic_load(&st_wakes));
}

static void team_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&nap_cv, &ca);
    pthread_condattr_destroy(&ca);
    const char *v = getenv("FOLDSWEEP_TEAM");
    if (v && !strcmp(v, "0")) enabled = 0;
    /* For measuring the threshold (bench/run-team); not a user setting. */
    v = getenv("FOLDSWEEP_TEAM_MIN_WORK");
    if (v && atof(v) >= 0.0) min_work = atof(v);
    /* test_team asks whether helping is wired, whatever the machine's
     * load: beside other work the busy-machine rule trains alone, rightly. */
    share_always = fs_test_fault("TEAM_SHARE") != NULL;
    /* Whether helping happened in a whole run (tests/test_team.c). */
    v = getenv("FOLDSWEEP_TEAM_STATS");
    if (v && !strcmp(v, "1")) atexit(team_print_stats);
}

int team_enabled(void)
{
    pthread_once(&once, team_init);
    return enabled;
}

double team_min_work(void)
{
    pthread_once(&once, team_init);
    return min_work;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void wake_all(void)
{
    pthread_mutex_lock(&nap_lock);
    pthread_cond_broadcast(&nap_cv);
    pthread_mutex_unlock(&nap_lock);
}

void team_owner_begin(void)
{
    atomic_fetch_add(&trainers.v, 1);
    /* A new window at the first shared loop: time spent helping or
     * waiting for a job is not the owner's. */
    memset(&win, 0, sizeof win);
    if (!team_enabled()) return;
    for (int i = 0; i < TEAM_SLOTS; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&slots[i].taken, &free_, 1)) {
            my_slot = &slots[i];
            /* Helpers scan slots [0, n_slots). */
            int n = atomic_load(&n_slots.v);
            while (n < i + 1 && !atomic_compare_exchange_weak(&n_slots.v, &n, i + 1)) {
            }
            return;
        }
    }
    /* More owners than slots: this one trains alone. */
}

void team_owner_end(void)
{
    if (my_slot) {
        /* A helper may still be leaving the last region. */
        while (atomic_load(&my_slot->users) > 0) cpu_relax();
        atomic_store(&my_slot->taken, 0);
        my_slot = NULL;
    }
    /* Helpers whose source has ended leave when nothing trains. */
    if (atomic_fetch_sub(&trainers.v, 1) == 1 && atomic_load(&sleepers.v) > 0) wake_all();
}

/* Takes a chunk from the front of lane k (front) or from its back, or
 * returns -1 when the lane is empty. */
static long lane_take(TeamSlot *s, int k, int front)
{
    unsigned long long v = atomic_load_explicit(&s->lane[k], memory_order_relaxed);
    for (;;) {
        const unsigned long long head = v >> 32, tail = v & 0xffffffffULL;
        if (head >= tail) return -1;
        const unsigned long long nv = front ? v + (1ULL << 32) : v - 1;
        if (atomic_compare_exchange_weak_explicit(&s->lane[k], &v, nv, memory_order_relaxed, memory_order_relaxed))
            return front ? (long)head : (long)tail - 1;
    }
}

/* The next chunk for a thread of lane `mine`: its own lane's, else
 * another's from the back; -1 when every chunk is taken. */
static long take_chunk(TeamSlot *s, int mine)
{
    long c = lane_take(s, mine, 1);
    for (int k = 1; c < 0 && k < s->lanes; k++) c = lane_take(s, (mine + k) % s->lanes, 0);
    return c;
}

/* Runs chunks of s's region until none is left (or, for a helper with a
 * deadline, until it passes). Returns the number run. */
static long run_chunks(TeamSlot *s, int mine, int owner, double deadline)
{
    long ran = 0, c;
    const long n = s->n, grain = s->grain;
    while ((deadline <= 0.0 || ran == 0 || fs_now() < deadline) && (c = take_chunk(s, mine)) >= 0) {
        const long lo = c * grain, hi = lo + grain < n ? lo + grain : n;
        s->fn(s->arg, lo, hi);
        if (!owner) atomic_fetch_add_explicit(&s->helper_done, 1, memory_order_release);
        ran++;
    }
    return ran;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether the owner may share now (team_window_*), counted for the stats. */
static int may_share(void)
{
    if (share_always) return 1;
    const double now = fs_now();
    int open = team_window_open(&win, now);
    if (open == 2) {
        open = team_window_close(&win, now, thread_cpu());
        if (!open) atomic_fetch_add_explicit(&st_busy, 1, memory_order_relaxed);
    }
    if (!open) atomic_fetch_add_explicit(&st_solo_loops, 1, memory_order_relaxed);
    return open;
}

void team_for(long n, double work, FsTeamFn fn, void *arg)
{
    TeamSlot *s = my_slot;
    int helpers;
    if (s && !in_region) win.work += work;
    if (!s || in_region || n < 2 || work < min_work ||
        (helpers = atomic_load_explicit(&idle.v, memory_order_relaxed)) == 0 || !may_share()) {
        fn(arg, 0, n);
        return;
    }
    win.shared = 1;
    double chunks = (double)(helpers + 1) * TEAM_CHUNKS_PER_THREAD;
    if (chunks < work / TEAM_MAX_CHUNK_WORK) chunks = work / TEAM_MAX_CHUNK_WORK;
    if (chunks > work / TEAM_MIN_CHUNK_WORK) chunks = work / TEAM_MIN_CHUNK_WORK;
    if (chunks < 2.0) chunks = 2.0;
    if (chunks > (double)n) chunks = (double)n;
    /* The last region's helpers have all left before its fields change. */
    while (atomic_load(&s->users) > 0) cpu_relax();
    s->fn = fn;
    s->arg = arg;
    s->n = n;
    s->grain = (n + (long)chunks - 1) / (long)chunks;
    s->n_chunks = (n + s->grain - 1) / s->grain;
    /* A lane per thread expected, chunks dealt in order. */
    s->lanes = helpers + 1 < TEAM_LANES ? helpers + 1 : TEAM_LANES;
    if (s->lanes > s->n_chunks) s->lanes = (int)s->n_chunks;
    for (int k = 0; k < s->lanes; k++) {
        const unsigned long long lo = (unsigned long long)(s->n_chunks * k / s->lanes),
                                 hi = (unsigned long long)(s->n_chunks * (k + 1) / s->lanes);
        atomic_store_explicit(&s->lane[k], lo << 32 | hi, memory_order_relaxed);
    }
    atomic_store_explicit(&s->helper_done, 0, memory_order_relaxed);
    atomic_store(&s->open, 1);
    if (atomic_load(&sleepers.v) > 0) {
        wake_all();
        atomic_fetch_add_explicit(&st_wakes, 1, memory_order_relaxed);
    }
    in_region = 1;
    const long mine = run_chunks(s, 0, 1, 0.0);
    in_region = 0;
    /* Every chunk is taken; those not run here are helpers': wait for
     * them (they are short). */
    const long theirs = s->n_chunks - mine;
    double t_wait = 0.0;
    int stalled = 0;
    const double t_begin = atomic_load_explicit(&s->helper_done, memory_order_acquire) < theirs ? fs_now() : 0.0;
    for (unsigned spins = 0; atomic_load_explicit(&s->helper_done, memory_order_acquire) < theirs; spins++) {
        cpu_relax();
        /* A helper preempted mid-chunk (a shared machine): let it run. */
        if ((spins & 1023) == 1023) {
            const double now = fs_now();
            if (t_wait == 0.0) t_wait = now;
            else if (now - t_wait > TEAM_STALL_SECONDS) {
                const double until = now + TEAM_SOLO_FACTOR * (now - t_wait);
                if (until > win.solo_until) win.solo_until = until;
                stalled = 1;
            }
            sched_yield();
        }
    }
    if (t_begin > 0.0) {
        atomic_fetch_add_explicit(&st_wait_ns, (unsigned long long)(1e9 * (fs_now() - t_begin)), memory_order_relaxed);
        atomic_fetch_add_explicit(&st_waits, 1, memory_order_relaxed);
    }
    if (stalled) atomic_fetch_add_explicit(&st_stalls, 1, memory_order_relaxed);
    atomic_store(&s->open, 0);
    atomic_fetch_add_explicit(&st_regions, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st_chunks, (unsigned long long)s->n_chunks, memory_order_relaxed);
}

/* One pass over the open slots, helping each; returns chunks run. A
 * helper's lane comes from its number, the same in every region, so that
 * it works on the same part of every loop. */
static long help_scan(unsigned *start, unsigned helper, double deadline)
{
    const int ns = atomic_load(&n_slots.v);
    long ran = 0;
    for (int k = 0; k < ns; k++) {
        TeamSlot *s = &slots[(*start + (unsigned)k) % (unsigned)ns];
        if (!atomic_load_explicit(&s->open, memory_order_relaxed)) continue;
        atomic_fetch_add(&s->users, 1);
        if (atomic_load(&s->open)) {
            const int lanes = s->lanes, mine = lanes > 1 ? 1 + (int)(helper % (unsigned)(lanes - 1)) : 0;
            long r = run_chunks(s, mine, 0, deadline);
            if (r) atomic_fetch_add_explicit(&st_helper_chunks, (unsigned long long)r, memory_order_relaxed);
            ran += r;
        }
        atomic_fetch_sub(&s->users, 1);
        if (deadline > 0.0 && ran && fs_now() >= deadline) break;
    }
    /* Spread helpers over owners: the next pass starts one slot later. */
    (*start)++;
    return ran;
}

/* Whether an open region has chunks not yet taken. (A region whose
 * chunks are all taken needs no helper: its owner, when it has lost its
 * core on a busy machine, may hold it open for a time slice, and a helper
 * spinning on it meanwhile takes CPU from its own owner. Lanes past a
 * region's count are empty: every region ends with all chunks taken.) */
static int any_chunks(void)
{
    const int ns = atomic_load(&n_slots.v);
    for (int k = 0; k < ns; k++) {
        if (!atomic_load(&slots[k].open)) continue;
        for (int l = 0; l < TEAM_LANES; l++) {
            const unsigned long long v = atomic_load_explicit(&slots[k].lane[l], memory_order_relaxed);
            if ((v >> 32) < (v & 0xffffffffULL)) return 1;
        }
    }
    return 0;
}

int team_help(double seconds, int until_idle)
{
    static _Atomic unsigned helper_ids;
    static _Thread_local unsigned start, helper;
    static _Thread_local int have_start;
    if (!team_enabled()) return 0;
    if (!have_start) helper = start = atomic_fetch_add(&helper_ids, 1), have_start = 1;
    /* When this thread last ran a chunk, kept across calls: the pool calls
     * team_help every POOL_POLL_SECONDS while it waits for a job, and a
     * spin counted from each call's start burned a quarter of a core while
     * an owner trained alone (its spin is only worth it right after work:
     * the next region is then near). On a busy machine that quarter came
     * out of the owner's share: 2 threads ran at 0.75 times 1 thread beside
     * two CPU-bound processes, with 99.7% of loops alone. */
    static _Thread_local double last_work;
    const double deadline = fs_now() + seconds;
    double spin_from = 0.0;
    int ret = 1;
    atomic_fetch_add(&idle.v, 1);
    for (;;) {
        if (help_scan(&start, helper, deadline)) {
            last_work = fs_now();
            if (spin_from > 0.0) {
                atomic_fetch_add_explicit(&st_spin_ns, (unsigned long long)(1e9 * (last_work - spin_from)),
                                          memory_order_relaxed);
                spin_from = 0.0;
            }
            if (last_work >= deadline) break;
            continue;
        }
        const double now = fs_now();
        if (now >= deadline) break;
        const int training = atomic_load(&trainers.v) > 0;
        if (until_idle && !training) {
            ret = 0;
            break;
        }
        if (training && now - last_work < TEAM_SPIN_SECONDS) {
            for (int i = 0; i < 64; i++) cpu_relax();
            if (spin_from == 0.0) spin_from = now;
            continue;
        }
        if (spin_from > 0.0) {
            atomic_fetch_add_explicit(&st_spin_ns, (unsigned long long)(1e9 * (now - spin_from)), memory_order_relaxed);
            spin_from = 0.0;
        }
        atomic_fetch_add_explicit(&st_naps, 1, memory_order_relaxed);
        /* Nothing to help for a while: sleep until an owner opens a
         * region (it wakes sleepers) or the nap ends. The owner writes a
         * region's lanes before it opens it and reads sleepers after: it
         * wakes this thread, or this thread sees the chunks. */
        pthread_mutex_lock(&nap_lock);
        atomic_fetch_add(&sleepers.v, 1);
        if (!any_chunks() && !(until_idle && atomic_load(&trainers.v) == 0)) {
            double wake = now + TEAM_NAP_SECONDS < deadline ? now + TEAM_NAP_SECONDS : deadline;
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double rest = wake - now;
            ts.tv_sec += (time_t)rest;
            ts.tv_nsec += (long)((rest - (double)(time_t)rest) * 1e9);
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&nap_cv, &nap_lock, &ts);
        }
        atomic_fetch_sub(&sleepers.v, 1);
        pthread_mutex_unlock(&nap_lock);
    }
    if (spin_from > 0.0)
        atomic_fetch_add_explicit(&st_spin_ns, (unsigned long long)(1e9 * (fs_now() - spin_from)), memory_order_relaxed);
    atomic_fetch_sub(&idle.v, 1);
    return ret;
}

void train_team_stats(FsTeamStats *s)
{
    s->regions = atomic_load(&st_regions);
    s->chunks = atomic_load(&st_chunks);
    s->helper_chunks = atomic_load(&st_helper_chunks);
    s->stalls = atomic_load(&st_stalls);
}
