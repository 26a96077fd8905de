/*
 * watchdog: MPI's start-up, bounded. A rank that fails inside Open MPI's
 * own start-up (its shared-memory segment cannot be mapped under a memory
 * limit, a network interface that does not answer) can leave every rank
 * waiting in MPI_Init_thread or in the first exchange (MPI_Comm_dup)
 * forever. This thread waits for fsmpi_init to finish; if it has not
 * within the timeout (--startup-timeout, FOLDSWEEP_STARTUP_TIMEOUT,
 * default 60 s) it prints which rank was stuck in which stage and ends
 * the process with exit 1: every rank has its own watchdog, and the
 * launcher ends the job once a rank is gone. It calls no MPI (only the
 * main thread does) and _exit()s, since exit handlers may wait on MPI.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mpi/watchdog.h"
#include "util/util.h" /* FS_EXIT_ERROR */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t thread;
    int running, done;
    double timeout;
    const char *stage;
} wd = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

int fsmpi_launcher_rank(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return -1;
}

static FS_NORETURN void watchdog_fire(const char *stage)
{
    char host[64] = "?";
    if (gethostname(host, sizeof host) != 0) host[0] = '?', host[1] = 0;
    host[sizeof host - 1] = 0;
    fprintf(stderr,
            "foldsweep: rank %d (%s): MPI start-up did not finish within %.0f s: stuck in %s. A rank could not set "
            "up MPI (see any Open MPI message above: shared memory, network, a memory limit); for a start that is "
            "only slow, raise --startup-timeout or FOLDSWEEP_STARTUP_TIMEOUT. Ending the job (exit 1)\n",
            fsmpi_launcher_rank(), host, wd.timeout, stage);
    fflush(NULL);
    _exit(FS_EXIT_ERROR);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)wd.timeout;
    until.tv_nsec += (long)((wd.timeout - (double)(time_t)wd.timeout) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&wd.lock);
    while (!wd.done)
        if (pthread_cond_timedwait(&wd.cv, &wd.lock, &until) != 0 && !wd.done) watchdog_fire(wd.stage);
    pthread_mutex_unlock(&wd.lock);
    return NULL;
}

void fsmpi_watchdog_start(double timeout, const char *stage)
{
    if (timeout <= 0) return;
    wd.timeout = timeout;
    wd.stage = stage;
    wd.done = 0;
    /* A small stack: under a tight address-space limit (ulimit -v) the
     * default 8 MB could itself be what fails MPI's start-up. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    wd.running = pthread_create(&wd.thread, &attr, watchdog_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

void fsmpi_watchdog_stage(const char *stage)
{
    pthread_mutex_lock(&wd.lock);
    wd.stage = stage;
    pthread_mutex_unlock(&wd.lock);
}

void fsmpi_watchdog_stop(void)
{
    if (!wd.running) return;
    pthread_mutex_lock(&wd.lock);
    wd.done = 1;
    pthread_cond_broadcast(&wd.cv);
    pthread_mutex_unlock(&wd.lock);
    pthread_join(wd.thread, NULL);
    wd.running = 0;
}
