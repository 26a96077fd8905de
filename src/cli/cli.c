/*
 * cli.c: cli_main, the top of the command line. Dispatches subcommands
 * from one table that also supplies the help text, so adding a command is
 * one row here plus its own file.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "mpi/mpi.h" /* fsmpi_built */

#ifndef FS_VERSION
#define FS_VERSION "0.1.0"
#endif

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int reader; /* only reads and prints: a reader that stops reading ends it quietly */
} CliCommand;

static const CliCommand commands[] = {
    {"run", cli_run, "train every trial of a sweep on every fold, resumably, and rank them", 0},
    {"prepare", cli_prepare, "read sequence/label files, assign folds, write a prepared fold file", 0},
    {"plan", cli_plan, "check a sweep file and its data, list the trials a run would train", 1},
    {"synth", cli_synth, "write a synthetic protein-like data set (records or FASTA)", 0},
    {"leaderboard", cli_leaderboard, "rank a run folder's trials (table, Markdown, CSV or JSON)", 1},
    {"status", cli_status, "a run folder's progress: trials done, in flight, left, ETA, best so far", 1},
    {"export", cli_export, "copy a trial's fold models out of a run folder (safetensors + model.json)", 0},
    {"predict", cli_predict, "predict secondary structure of FASTA proteins with a trial's fold models", 1},
    {"refit", cli_refit, "train a trial's configuration on all training proteins (a final model)", 0},
    {"repair", cli_repair, "write a sound journal when a line before its end is damaged (keeps the original)", 0},
    {"report", cli_report, "write a run folder's report as one self-contained HTML page (curves, effects, profile)", 0},
    {"evaluate", cli_evaluate, "score a trial's fold models on a held-out test set (Q3, SOV, MCC, leakage guard)", 1},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("foldsweep: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: foldsweep COMMAND [OPTIONS...]\n"
            "       foldsweep --help | --version | help COMMAND\n\n"
            "k-fold cross-validation sweeps of small 1D CNNs for protein secondary structure.\n\n"
            "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'foldsweep COMMAND --help' for a command's options.\n");
}

/* `foldsweep leaderboard DIR | head -1`: the reader has what it wanted.
 * Not for commands that write files or train (their work must finish). */
static void quiet_exit(int sig)
{
    (void)sig;
    _exit(0);
}

static const CliCommand *find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* The version, then the backends this build has, for scripts/quickstart
 * and for anyone asking why mpirun or --backend cuda does not do what
 * they expect. */
static void version_print(void)
{
#if defined(FS_HAVE_CUDA) && defined(FS_CUDA_STANDIN_BUILD)
    const char *cuda = "emulated on the CPU (the CUDA stand-in)";
#elif defined(FS_HAVE_CUDA)
    const char *cuda = "nvcc";
#else
    const char *cuda = "none";
#endif
    printf("foldsweep %s\n", FS_VERSION);
    printf("backends: MPI %s, CUDA %s\n", fsmpi_built() ? "yes" : "no", cuda);
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return FS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return FS_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        version_print();
        return FS_EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            usage(stdout);
            return FS_EXIT_OK;
        }
        const CliCommand *c = find(argv[2]);
        if (!c) {
            cli_error("unknown command '%s'", argv[2]);
            usage(stderr);
            return FS_EXIT_USAGE;
        }
        static char help_flag[] = "--help";
        char *help_argv[3] = {argv[2], help_flag, NULL};
        return c->run(2, help_argv);
    }
    const CliCommand *c = find(cmd);
    if (c && c->reader) signal(SIGPIPE, quiet_exit);
    if (!c) {
        cli_error("unknown command '%s'", cmd);
        usage(stderr);
        return FS_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
