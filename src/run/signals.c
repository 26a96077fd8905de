/*
 * signals: the run's stop and cancel flags. A handler may only store to
 * volatile sig_atomic_t; on the platforms we build for that is an int, so
 * the trainer can poll it through a const volatile int pointer.
 */
#include <signal.h>
#include <string.h>

#include "run/run.h"

_Static_assert(sizeof(sig_atomic_t) == sizeof(int), "sig_atomic_t must be an int");

static volatile sig_atomic_t stop_flag, cancel_flag;

static void on_signal(int sig)
{
    (void)sig;
    /* First signal: stop dispatching, let in-flight folds finish within
     * the grace period. Second: abandon them too. */
    if (stop_flag) cancel_flag = 1;
    stop_flag = 1;
}

void run_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

const volatile int *run_stop_flag(void) { return (const volatile int *)&stop_flag; }
const volatile int *run_cancel_flag(void) { return (const volatile int *)&cancel_flag; }

void run_request_stop(int cancel_too)
{
    stop_flag = 1;
    if (cancel_too) cancel_flag = 1;
}
