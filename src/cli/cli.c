/*
 * cli.c: cli_main, the top of the command line. Dispatches subcommands
 * from one table that also supplies the help text, so adding a command is
 * one row here plus its own file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

#ifndef FS_VERSION
#define FS_VERSION "0.1.0"
#endif

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} CliCommand;

static const CliCommand commands[] = {
    {"run", cli_run, "train every trial of a sweep on every fold, resumably, and rank them"},
    {"prepare", cli_prepare, "read sequence/label files, assign folds, write a prepared fold file"},
    {"plan", cli_plan, "check a sweep file and its data, list the trials a run would train"},
    {"synth", cli_synth, "write a synthetic protein-like data set (records or FASTA)"},
    {"leaderboard", cli_leaderboard, "rank a run folder's trials (table, Markdown, CSV or JSON)"},
    {"status", cli_status, "a run folder's progress: trials done, in flight, left, ETA, best so far"},
    {"export", cli_export, "copy a trial's fold models out of a run folder (safetensors + model.json)"},
    {"predict", cli_predict, "predict secondary structure of FASTA proteins with a trial's fold models"},
    {"refit", cli_refit, "train a trial's configuration on all training proteins (a final model)"},
    {"evaluate", cli_evaluate, "score a trial's fold models on a held-out test set (Q3, SOV, MCC, leakage guard)"},
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

static const CliCommand *find(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
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
        printf("foldsweep %s\n", FS_VERSION);
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
    if (!c) {
        cli_error("unknown command '%s'", cmd);
        usage(stderr);
        return FS_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
