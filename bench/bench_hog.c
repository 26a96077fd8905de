/*
 * bench_hog: other work on the machine, for bench/run-team's contended
 * modes (issue #18 item 15, "one model on a busy machine"). Only local CPU
 * work, and every process ends by itself: each checks its own deadline,
 * and an alarm a few seconds past it ends any that did not.
 *
 *   bench_hog spin N SECONDS    N processes that burn CPU for SECONDS
 *   bench_hog burst J SECONDS   like a build: J slots, each starting short
 *                               processes one after another, each burning a
 *                               random 2 to 300 ms (log-uniform) after a
 *                               random pause of 1 to 30 ms; SECONDS in all
 *
 * The process makes itself a process group leader, so that SIGTERM to it
 * (bench/run-team ends a mode's hog with it) ends its children too. Run it
 * under `setsid` for the scheduler to treat it as another user's session
 * (an autogroup of its own, as other sessions' builds are).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static volatile double sink;

/* Burns CPU until `until` (some arithmetic, the clock read every ~50 us). */
static void burn(double until)
{
    double x = 1.0;
    while (now() < until) {
        for (int i = 0; i < 20000; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
/* Log-uniform in [lo, hi]. */
static double logu(double lo, double hi)
{
    return lo * __builtin_exp(uniform() * __builtin_log(hi / lo));
}

static void on_term(int sig)
{
    (void)sig;
    signal(SIGTERM, SIG_IGN);
    kill(0, SIGTERM); /* the group: this process's children */
    while (wait(NULL) > 0) {
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "spin") && strcmp(argv[1], "burst"))) {
        fprintf(stderr, "usage: %s spin N SECONDS | burst J SECONDS\n", argv[0]);
        return 2;
    }
    const int n = atoi(argv[2]);
    const double seconds = atof(argv[3]);
    if (n < 1 || n > 64 || !(seconds > 0.0) || seconds > 3600.0) {
        fprintf(stderr, "bench_hog: 1..64 processes, 0..3600 seconds\n");
        return 2;
    }
    setpgid(0, 0);
    signal(SIGTERM, on_term);
    alarm((unsigned)seconds + 5); /* children inherit none: they check the clock */
    const double end = now() + seconds;
    if (!strcmp(argv[1], "spin")) {
        for (int i = 0; i < n; i++)
            if (fork() == 0) {
                signal(SIGTERM, SIG_DFL);
                burn(end);
                _exit(0);
            }
        while (wait(NULL) > 0) {
        }
        return 0;
    }
    /* burst: J slots; each runs short jobs one after another. */
    pid_t slot[64] = {0};
    double pause_until[64] = {0};
    unsigned long jobs = 0;
    for (;;) {
        const double t = now();
        if (t >= end) break;
        for (int i = 0; i < n; i++) {
            if (slot[i] || t < pause_until[i]) continue;
            const double len = logu(2e-3, 0.3);
            double until = t + len < end ? t + len : end;
            const pid_t p = fork();
            if (p == 0) {
                signal(SIGTERM, SIG_DFL);
                burn(until);
                _exit(0);
            }
            if (p > 0) slot[i] = p, jobs++;
        }
        /* Reap what ended; a slot pauses before its next job. */
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0)
            for (int i = 0; i < n; i++)
                if (slot[i] == p) slot[i] = 0, pause_until[i] = now() + logu(1e-3, 30e-3);
        usleep(500);
    }
    while (wait(NULL) > 0) {
    }
    fprintf(stderr, "bench_hog: burst: %lu jobs in %.1f s\n", jobs, seconds);
    return 0;
}
