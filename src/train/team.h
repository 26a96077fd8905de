/*
 * train/team.h: internal to the train module. Idle pool threads help the
 * models that are training (issue #18: "every core on one model").
 *
 * A thread training a model (an owner) that reaches a loop worth sharing
 * (a GEMM's tiles, the optimizer over every parameter) calls team_for: if
 * helper threads are idle, the loop's index range is published as a region
 * and split into chunks that the owner and the helpers take (team.c); the
 * owner returns when every chunk is done. The work of index i is the same
 * code whoever runs it and no two indices write the same output (a GEMM is
 * split by tiles of C, never along k), so results are bitwise identical at
 * any thread count.
 *
 * CPU only (FS_TEAM): nvcc and the emulated block (tests/test_block.c)
 * build the single-source files with FS_PARFOR strided over a block's
 * threads, so each use of team_for sits beside that loop under #ifdef
 * FS_TEAM, and both call the same per-index code.
 */
#ifndef FS_TRAIN_TEAM_H
#define FS_TRAIN_TEAM_H

#include "train/device.h"
#include "util/util.h"

#if FS_ONE_THREAD /* device.h: helpers join a model only where one thread runs its step */
#define FS_TEAM 1

/* fn(arg, lo, hi) does the work of indices lo .. hi-1. */
typedef void (*FsTeamFn)(void *arg, long lo, long hi);

/* Runs fn over [0, n) in ranges, sharing them with idle helpers when
 * `work` (the loop's cost in the GEMM's multiply-adds, about 40 to the
 * nanosecond on one core: a loop of other work converts at its measured
 * rate, and a guess within a factor of two is enough) is large enough to
 * pay for a fork and join; otherwise, or with no idle helper, fn(arg, 0,
 * n) on the calling thread. */
void team_for(long n, double work, FsTeamFn fn, void *arg);
/* The least work team_for shares (FOLDSWEEP_TEAM_MIN_WORK overrides it,
 * for tests and measurements), for loops that need more. */
double team_min_work(void);

/* For the pool (pool.c). From team_owner_begin to team_owner_end the
 * calling thread counts as training a model (it calls begin before it asks
 * its source for one), and its team_for calls may publish regions. */
void team_owner_begin(void);
void team_owner_end(void);
/* Whether helping is on (FOLDSWEEP_TEAM=0 in the environment turns it
 * off: one thread per model, idle threads block in their source). */
int team_enabled(void);
/* Helps published regions until `seconds` have passed (then returns 1, for
 * the caller to ask its source again), or returns 0 at once when
 * until_idle is set and no model is training anywhere in the process. */
int team_help(double seconds, int until_idle);

/* The busy-machine rule (team_window.c: TEAM_WINDOW_SECONDS and what follows),
 * a pure function of the clocks and the work so that tests can drive it.
 * An owner's windows: where the last began (wall clock, the thread's CPU
 * time, the work of its loops since: team_for adds each loop's estimate),
 * whether it shared a loop, the solo period it is in (until, length) and
 * the work per second of its last window without sharing (0: none yet). */
typedef struct {
    double wall, cpu, work;
    double solo_until, solo_len, solo_rate;
    int shared;
} FsTeamWindow;
/* At wall time now: 0 inside a solo period (train alone), 1 within an
 * open window (may share), 2 when a window is due to close: the caller
 * then reads its thread's CPU time, which costs a system call, and calls
 * team_window_close, which starts the next window and returns 1 (may
 * share) or 0 (the window was busy or its sharing did not pay: a solo
 * period began). */
int team_window_open(FsTeamWindow *w, double now);
int team_window_close(FsTeamWindow *w, double now, double cpu);

#endif

#endif
