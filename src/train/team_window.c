/*
 * team_window: the owner's busy-machine rule (team.h's FsTeamWindow), a
 * pure function of the clocks and the work so that test_team can drive it
 * with made-up ones; team.c asks it before each loop it might share.
 */
#include "train/team.h"

/* A busy machine (other sessions' builds and tests, bursts of short
 * processes): the kernel shares the CPU between sessions (autogroups)
 * before threads, so a helper that spins or waits for work lowers what its
 * owner gets, and the two are seldom on their cores at once. Each owner
 * measures, over windows of TEAM_WINDOW_SECONDS, the share of the wall
 * time its thread was on a core; a window below TEAM_MIN_SHARE (the owner
 * lost its core, sharing or not) is a busy machine, and the owner trains
 * alone for TEAM_SOLO_MIN_SECONDS, twice as long for each busy window in a
 * row (the solo period's own window included: a machine still busy at its
 * end extends it without trying to share), up to TEAM_SOLO_MAX_SECONDS.
 * Only a clean window that shared halves the period again: a solo window
 * is clean whenever one thread fits beside the other work, which says
 * nothing of whether two do, and halving on it made the owner retry every
 * other window beside one CPU-bound process (38% of its loops shared, at
 * 0.90 times one thread). So under steady contention the owner probes for
 * one window in every TEAM_SOLO_MAX_SECONDS, and within that long of the
 * contention ending it shares again. Measured on 2 cores beside a burst of
 * short processes: sharing ran at 0.44 times one thread. */
#define TEAM_WINDOW_SECONDS 40e-3
/* A window that shared must train at least this many times as fast as the
 * last window that did not (work per wall second, from team_for's
 * estimates), or it too counts as busy. The CPU share alone misses it: an
 * owner that spins for a helper's chunk is on its core, and beside a burst
 * of short processes (two at a time, 2-300 ms each, on 2 cores) the owner
 * kept its share while shared loops ran at 0.44 times one thread. */
#define TEAM_SHARE_GAIN 1.0
#define TEAM_MIN_SHARE 0.8
#define TEAM_SOLO_MIN_SECONDS 50e-3
#define TEAM_SOLO_MAX_SECONDS 0.8

int team_window_open(FsTeamWindow *w, double now)
{
    if (now < w->solo_until) return 0;
    if (w->wall == 0.0) return 2;
    return now - w->wall < TEAM_WINDOW_SECONDS ? 1 : 2;
}

int team_window_close(FsTeamWindow *w, double now, double cpu)
{
    if (w->wall == 0.0) {
        w->wall = now, w->cpu = cpu, w->work = 0.0;
        return 1;
    }
    const double share = (cpu - w->cpu) / (now - w->wall), rate = w->work / (now - w->wall);
    const int shared = w->shared;
    w->wall = now, w->cpu = cpu, w->work = 0.0, w->shared = 0;
    /* Sharing that did not pay (TEAM_SHARE_GAIN) counts as a busy window. */
    const int unpaid = shared && w->solo_rate > 0.0 && rate < TEAM_SHARE_GAIN * w->solo_rate;
    if (!shared) w->solo_rate = rate;
    if (share < TEAM_MIN_SHARE || unpaid) {
        w->solo_len = w->solo_len > 0.0 ? 2.0 * w->solo_len : TEAM_SOLO_MIN_SECONDS;
        if (w->solo_len > TEAM_SOLO_MAX_SECONDS) w->solo_len = TEAM_SOLO_MAX_SECONDS;
        w->solo_until = now + w->solo_len;
        return 0;
    }
    if (shared) w->solo_len = w->solo_len * 0.5 >= TEAM_SOLO_MIN_SECONDS ? w->solo_len * 0.5 : 0.0;
    return 1;
}
