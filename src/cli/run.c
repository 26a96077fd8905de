/*
 * run.c: `foldsweep run SWEEP.yaml [--out DIR] [--threads N]
 * [--backend cpu|cuda|auto] [--grace S] [--startup-timeout S]
 * [--worker-timeout S] [--restart] [--progress] [--progress-line MODE]
 * [--quiet]`. Parses the options,
 * starts MPI when a launcher started the process (the only command that
 * does) and hands the world's ranks to run_sweep (src/run), which owns the
 * run. A build without MPI started as several ranks refuses (exit 2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "mpi/mpi.h"
#include "run/run.h"
#include "sweep/sweep.h"

extern char **environ;

enum {
    OPT_OUT,
    OPT_THREADS,
    OPT_BACKEND,
    OPT_GPU_PATH,
    OPT_GRACE,
    OPT_STARTUP,
    OPT_WORKER,
    OPT_RESTART,
    OPT_PROGRESS,
    OPT_LINE,
    OPT_QUIET,
    OPT_HELP
};

static const CliOption options[] = {
    [OPT_OUT] = {"--out", "-o", "DIR",
                 "run folder (default: the sweep's run.out, else runs/<sweep name>)"},
    [OPT_THREADS] = {"--threads", "-j", "N",
                     "worker threads (default: the sweep's run.threads, else all cores)"},
    [OPT_BACKEND] = {"--backend", NULL, "B",
                     "cpu, cuda or auto (default: the sweep's run.backend)"},
    [OPT_GPU_PATH] = {"--gpu-path", NULL, "P",
                      "auto, block or library: the GPU tier that trains the models with --backend cuda "
                      "(default: the sweep's run.gpu_path; auto: block for window models, library for chain models)"},
    [OPT_GRACE] = {"--grace", NULL, "S",
                   "after SIGINT, SIGTERM or SIGUSR1 (Slurm's warning), seconds in-flight folds may finish (default 30)"},
    [OPT_STARTUP] = {"--startup-timeout", NULL, "S",
                     "under MPI, seconds MPI's start-up may take before the job ends with exit 1 naming the "
                     "stage (default FOLDSWEEP_STARTUP_TIMEOUT, else 60; 0: wait forever)"},
    [OPT_WORKER] = {"--worker-timeout", NULL, "S",
                    "under MPI, seconds a worker rank may send nothing before its folds go to other ranks "
                    "(default FOLDSWEEP_WORKER_TIMEOUT, else 120; 0: wait forever)"},
    [OPT_RESTART] = {"--restart", NULL, NULL,
                     "set the folder's earlier run aside (DIR/previous-N, nothing deleted) and start again"},
    [OPT_PROGRESS] = {"--progress", NULL, NULL,
                      "a line per finished epoch of every fold: train loss, validation loss and Q3, time"},
    [OPT_LINE] = {"--progress-line", NULL, "MODE",
                  "auto, bar or plain: the progress line redrawn in place (bar) or a plain line every 10 s "
                  "(plain, for logs); auto: bar where the output is the user's terminal (under mpirun, "
                  "mpirun's own output), else plain"},
    [OPT_QUIET] = {"--quiet", "-q", NULL, "no progress line and no summary"},
    [OPT_HELP] = {"--help", "-h", NULL, "this help"},
};

static const CliSpec spec = {
    .cmd = "run",
    .usage = "usage: foldsweep run SWEEP.yaml [--out DIR] [--threads N] [--backend cpu|cuda|auto] "
             "[--gpu-path auto|block|library] [--grace S] [--startup-timeout S] [--worker-timeout S] [--restart] [--progress] "
             "[--progress-line auto|bar|plain] [--quiet]\n",
    .about = "Trains every trial of the sweep on every fold and ranks them. Rerunning the same\n"
             "command on the same folder resumes: finished folds are kept, the rest are trained.\n",
    .epilog = cli_exit_status,
    .opts = CLI_OPTIONS(options),
    .column = 18,
    .max_args = 1,
    .extra_arg = "one sweep file only; extra argument",
    .no_arg = "missing the sweep file",
};
const CliSpec *const cli_run_spec = &spec; /* for cli.c's table */

/* Seconds from the environment variable name, else def; 0, or
 * FS_EXIT_USAGE after reporting a bad value. */
static int env_seconds(const char *name, double def, double *v)
{
    const char *t = getenv(name);
    *v = def;
    if (!t || !*t) return 0;
    char *end, what[96];
    double x = strtod(t, &end);
    if (end != t && !*end && isfinite(x) && x >= 0) return *v = x, 0;
    snprintf(what, sizeof what, "%s must be a number of seconds >= 0, not", name);
    return cli_usage_error(&spec, what, t);
}

/* 0, or FS_EXIT_USAGE after reporting the first bad value. */
static int options_read(FsRunOptions *o, const CliArgs *a, double *startup)
{
    uint64_t threads = 0; /* the sweep's choice */
    int rc;
    if ((rc = cli_whole_parse(&spec, a, OPT_THREADS, 1, 4096, &threads))) return rc;
    if ((rc = cli_real_parse(&spec, a, OPT_GRACE, 0, INFINITY, &o->grace))) return rc;
    if ((rc = env_seconds("FOLDSWEEP_STARTUP_TIMEOUT", 60.0, startup))) return rc;
    if ((rc = env_seconds("FOLDSWEEP_WORKER_TIMEOUT", 120.0, &o->worker_timeout))) return rc;
    if ((rc = cli_real_parse(&spec, a, OPT_STARTUP, 0, INFINITY, startup))) return rc;
    if ((rc = cli_real_parse(&spec, a, OPT_WORKER, 0, INFINITY, &o->worker_timeout))) return rc;
    o->threads = (int)threads;
    const char *b = a->val[OPT_BACKEND];
    o->backend = b ? sweep_backend_parse(b) : -1; /* -1: the sweep's */
    if (b && o->backend < 0) return cli_usage_error(&spec, "--backend must be cpu, cuda or auto, not", b);
    const char *g = a->val[OPT_GPU_PATH];
    o->gpu_path = -1; /* the sweep's */
    for (int i = 0; g && i < FS_GPU_PATH_COUNT; i++)
        if (!strcmp(g, train_gpu_path_name(i))) o->gpu_path = i;
    if (g && o->gpu_path < 0) return cli_usage_error(&spec, "--gpu-path must be auto, block or library, not", g);
    const char *l = a->val[OPT_LINE];
    if (!l || !strcmp(l, "auto"))
        o->progress_line = FS_LINE_AUTO;
    else if (!strcmp(l, "bar"))
        o->progress_line = FS_LINE_BAR;
    else if (!strcmp(l, "plain"))
        o->progress_line = FS_LINE_PLAIN;
    else
        return cli_usage_error(&spec, "--progress-line must be auto, bar or plain, not", l);
    o->sweep_path = a->args[0];
    o->out_dir = a->val[OPT_OUT];
    static char home[FS_PATH_MAX];
    o->home_dir = run_home_dir(o->sweep_path, home, sizeof home) ? home : NULL;
    o->quiet = a->val[OPT_QUIET] != NULL;
    o->restart = a->val[OPT_RESTART] != NULL;
    o->epoch_lines = a->val[OPT_PROGRESS] != NULL && !o->quiet;
    return 0;
}

/* A build without MPI under mpirun or srun would run the sweep once per
 * rank, every copy alone, into the same folder: refused at once (exit 2)
 * with one line naming the variable seen and the rebuild. Only rank 0 (or
 * a process whose rank is unknown, or that knows only that it is not rank
 * 0) says so: the others end as quietly. An MPI build reads the same
 * variables in fsmpi_init and starts MPI. */
static int launcher_refuse(void)
{
    FsLauncher l;
    if (fsmpi_built() || !fsmpi_launcher_several(environ, &l)) return 0;
    if (l.rank > 0 && !l.is_rank) return FS_EXIT_USAGE;
    if (l.is_rank)
        fprintf(stderr, "foldsweep: %s=%ld: a launcher (mpirun, srun) started this as rank %ld of several", l.var,
                l.value, l.value);
    else
        fprintf(stderr, "foldsweep: %s=%ld: a launcher (mpirun, srun) started %ld copies of this", l.var, l.value,
                l.value);
    fprintf(stderr, ", but this foldsweep was built without MPI, so each would run the whole sweep alone. "
                    "Rebuild with MPI (apt-get install openmpi-bin libopenmpi-dev; cmake -S . -B build "
                    "-DFOLDSWEEP_MPI=ON && cmake --build build; `build/foldsweep --version` then says MPI "
                    "yes), or run it without the launcher\n");
    return FS_EXIT_USAGE;
}

/* `--progress plain` (or =plain): --progress is the epoch lines and takes
 * no value, so the parser would call "plain" a second sweep file. Said
 * first, naming the option that does take it. */
static int progress_mode_misplaced(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        const char *v = !strncmp(argv[i], "--progress=", 11) ? argv[i] + 11
                        : !strcmp(argv[i], "--progress") && i + 1 < argc ? argv[i + 1] : NULL;
        if (v && (!strcmp(v, "auto") || !strcmp(v, "bar") || !strcmp(v, "plain"))) {
            char what[160];
            snprintf(what, sizeof what, "--progress takes no value (it adds a line per epoch); the progress line's "
                     "form is --progress-line %s, not --progress", v);
            return cli_usage_error(&spec, what, v);
        }
    }
    return 0;
}

int cli_run(int argc, char **argv)
{
    CliArgs a;
    int rc = progress_mode_misplaced(argc, argv);
    if (rc) return rc;
    rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    FsRunOptions o;
    memset(&o, 0, sizeof o);
    o.grace = 30.0;
    double startup = 0.0;
    rc = options_read(&o, &a, &startup);
    cli_args_free(&a);
    if (rc) return rc;
    if ((rc = launcher_refuse())) return rc;
    /* Before MPI starts: a scheduler's warning (SIGUSR1) or SIGTERM while it
     * does must stop the run with exit 3 and a requeue, not kill it. */
    run_signals_install();
    FsMpi m;
    fsmpi_init(&m, startup);
    rc = run_sweep(&o, &m);
    if (m.active && run_signal_ending()) {
        /* mpirun is ending the job (Ctrl-C, SIGTERM): its shutdown has
         * begun and MPI_Finalize would wait on it until the SIGKILL. Rank
         * 0 has written the journal, checkpoints and leaderboard and
         * leaves now (exit 3); workers wait for the kill that follows. */
        fflush(NULL);
        if (m.rank != 0) run_signal_wait_kill();
        return rc;
    }
    fsmpi_finalize(&m);
    return rc;
}
