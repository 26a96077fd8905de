/*
 * signals: the run's stop and cancel flags. A handler may only store to
 * volatile sig_atomic_t; on the platforms we build for that is an int, so
 * the trainer can poll it through a const volatile int pointer.
 *
 * Under mpirun a SIGINT or SIGTERM is mpirun ending the job: Open MPI 4
 * sends every rank SIGCONT, then SIGTERM odls_base_sigkill_timeout seconds
 * later (default 1), then SIGKILL as long again after that (Ctrl-C or
 * SIGTERM to mpirun; measured, docs/slurm.md). That window, not --grace,
 * is what the ranks have: the grace is cut to fit it (none with the
 * default), and workers cancel their own folds at once (run_signal_ending).
 * mpirun's signal is told from a user's `kill` of one rank by its sender:
 * mpirun itself, or its orted on other nodes (the rank's nearest such
 * ancestor, through any wrapper script). That ancestor's standard output
 * is also where the rank's output ends up (run_launcher_tty: whether the
 * progress line may be redrawn).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run/run.h"

_Static_assert(sizeof(sig_atomic_t) == sizeof(int), "sig_atomic_t must be an int");

/* Seconds of mpirun's window kept for checkpoints, the journal and the
 * leaderboard; only what is left over is grace. */
#define FS_MPIRUN_RESERVE 5.0

static volatile sig_atomic_t stop_flag, cancel_flag, ending_flag;
/* Set at install (before any handler runs), read by the handler. */
static int under_mpirun, mpirun_cancels;
static pid_t launcher_pid = -1;
static double mpirun_window = 1.0;

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    /* First signal: stop dispatching, let in-flight folds finish within
     * the grace period. Second: abandon them too. */
    if (stop_flag) cancel_flag = 1;
    stop_flag = 1;
    /* From mpirun (or its daemon on this node: the parent) it is the end
     * of the job; from anyone else (kill -TERM of one rank) a plain stop. */
    if (under_mpirun && sig != SIGUSR1 && info && info->si_pid == launcher_pid) {
        ending_flag = 1;
        if (mpirun_cancels) cancel_flag = 1; /* no grace fits before the kill */
    }
}

/* The nearest ancestor that is mpirun or its daemon (a wrapper script
 * may stand between), else the parent: who sends mpirun's SIGTERM. */
static pid_t find_launcher(void)
{
    static const char *names[] = {"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte"};
    pid_t pid = getppid();
    for (int depth = 0; depth < 32 && pid > 1; depth++) {
        char path[64], buf[512], name[64];
        snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
        FILE *f = fopen(path, "r");
        if (!f) break;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        long parent = 0;
        if (!open || !close || close < open || sscanf(close + 1, " %*c %ld", &parent) != 1) break;
        snprintf(name, sizeof name, "%.*s", (int)(close - open - 1), open + 1);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (!strcmp(name, names[k])) return pid;
        pid = (pid_t)parent;
    }
    return getppid();
}

/* mpirun (Open MPI's ORTE or PRRTE) sets these in its ranks' environment
 * before they start; srun does not. */
static void read_launcher(void)
{
    under_mpirun = getenv("OMPI_COMM_WORLD_SIZE") != NULL;
    if (under_mpirun) launcher_pid = find_launcher();
    const char *w = getenv("OMPI_MCA_odls_base_sigkill_timeout");
    if (w && atof(w) > 0) mpirun_window = atof(w);
    mpirun_cancels = under_mpirun && mpirun_window <= FS_MPIRUN_RESERVE;
}

/* The handlers run_signals_install replaced, for run_signals_remove. */
static const int handled[] = {SIGINT, SIGTERM, SIGUSR1};
#define N_HANDLED ((int)(sizeof handled / sizeof *handled))
static struct sigaction saved[N_HANDLED];
static int installed;

void run_signals_install(void)
{
    read_launcher();
    /* Installed again (run_sweep after its caller, which installs before
     * MPI starts): a signal already caught stays caught. Installed anew
     * after run_signals_remove (the library API's next run): no stop of the
     * last run is pending. */
    if (!installed) stop_flag = cancel_flag = ending_flag = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_HANDLED; i++) sigaction(handled[i], &sa, installed ? NULL : &saved[i]);
    installed = 1;
}

void run_signals_remove(void)
{
    if (!installed) return;
    for (int i = 0; i < N_HANDLED; i++) sigaction(handled[i], &saved[i], NULL);
    installed = 0;
}

const volatile int *run_stop_flag(void) { return (const volatile int *)&stop_flag; }
const volatile int *run_cancel_flag(void) { return (const volatile int *)&cancel_flag; }
int run_signal_ending(void) { return ending_flag; }
int run_under_mpirun(void) { return under_mpirun; }
double run_mpirun_window(void) { return mpirun_window; }

int run_launcher_tty(void)
{
    if (!under_mpirun) return -1;
    /* Its fd 1 is opened again only when it is a character device (a
     * terminal, /dev/null): a pipe's or a socket's other end is left alone. */
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld/fd/1", (long)launcher_pid);
    if (launcher_pid <= 0 || stat(path, &st) != 0 || !S_ISCHR(st.st_mode)) return 0;
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return 0;
    int tty = isatty(fd);
    close(fd);
    return tty;
}

double run_signal_grace(double grace)
{
    if (!ending_flag) return grace;
    double fits = mpirun_window - FS_MPIRUN_RESERVE;
    return fits <= 0 ? 0.0 : fits < grace ? fits : grace;
}

void run_signal_wait_kill(void)
{
    /* mpirun kills the job's ranks as soon as one leaves; bounded all the
     * same, in case it does not. */
    double left = 2 * mpirun_window + 30;
    while (left > 0) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        left -= 0.1;
    }
}

void run_request_stop(int cancel_too)
{
    stop_flag = 1;
    if (cancel_too) cancel_flag = 1;
}
