/*
 * cli.c: cli_main, the top of the command line. Dispatches subcommands
 * from one table (cli_commands) that points at each command's options and
 * help, so the usage, `foldsweep help`, the manual page and the shell
 * completions all come from it: adding a command is one row here plus its
 * own file.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "mpi/mpi.h" /* fsmpi_built */
#include "run/run.h"  /* run_gpu_libraries */

const CliCommand cli_commands[] = {
    {"run", cli_run, &cli_run_spec, "train every trial of a sweep on every fold, resumably, and rank them", 0},
    {"prepare", cli_prepare, &cli_prepare_spec, "read sequence/label files, assign folds, write a prepared fold file", 0},
    {"plan", cli_plan, &cli_plan_spec, "check a sweep file and its data, list the trials a run would train", 1},
    {"synth", cli_synth, &cli_synth_spec, "write a synthetic protein-like data set (records or FASTA)", 0},
    {"leaderboard", cli_leaderboard, &cli_leaderboard_spec, "rank a run folder's trials (table, Markdown, CSV or JSON)", 1},
    {"status", cli_status, &cli_status_spec, "a run folder's progress: trials done, in flight, left, ETA, best so far", 1},
    {"export", cli_export, &cli_export_spec, "copy a trial's fold models out of a run folder (safetensors + model.json)", 0},
    {"predict", cli_predict, &cli_predict_spec, "predict secondary structure of FASTA proteins with a trial's fold models", 1},
    {"refit", cli_refit, &cli_refit_spec, "train a trial's configuration on all training proteins (a final model)", 0},
    {"repair", cli_repair, &cli_repair_spec, "write a sound journal when a line before its end is damaged (keeps the original)", 0},
    {"report", cli_report, &cli_report_spec, "write a run folder's report as one self-contained HTML page (curves, effects, profile)", 0},
    {"evaluate", cli_evaluate, &cli_evaluate_spec, "score a trial's fold models on a held-out test set (Q3, SOV, MCC, leakage guard)", 1},
    {"help", cli_help, &cli_help_spec, "the commands, a command's help, or the manual page (help --man)", 1},
    {"completion", cli_completion, &cli_completion_spec, "a shell completion script (bash or zsh) for the commands and options", 1},
};
const int cli_n_commands = (int)(sizeof cli_commands / sizeof cli_commands[0]);

enum { OPT_HELP, OPT_VERSION };

static const CliOption main_options[] = {
    [OPT_HELP] = {"--help", "-h", NULL, "list the commands"},
    [OPT_VERSION] = {"--version", NULL, NULL, "the version and the backends this build has (MPI, CUDA)"},
};

const CliSpec cli_main_spec = {
    .cmd = "foldsweep",
    .usage = "usage: foldsweep COMMAND [OPTIONS...]\n"
             "       foldsweep --help | --version | help COMMAND\n",
    .about = "k-fold cross-validation sweeps of small 1D CNNs for protein secondary structure.\n",
    .opts = CLI_OPTIONS(main_options),
    .column = 12,
};

const char cli_exit_status[] = "exit status: 0 done, 1 error, 2 usage, 3 interrupted (rerun the command to resume)\n";

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("foldsweep: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_output_close(FILE *f, const char *name)
{
    /* fflush retries what is buffered, so errno is the write's own reason;
     * ferror alone means an earlier write lost bytes (errno kept from it). */
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (f != stdout && fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (!bad) return 0;
    cli_error("%s: cannot write: %s", name, strerror(e));
    return -1;
}

void cli_usage_print(FILE *out)
{
    const CliSpec *s = &cli_main_spec;
    fprintf(out, "%s\n", s->usage);
    cli_text_print(out, s->about, 0, 0);
    fputs("\ncommands:\n", out);
    for (int i = 0; i < cli_n_commands; i++) {
        fprintf(out, "  %-12s ", cli_commands[i].name);
        cli_text_print(out, cli_commands[i].summary, 15, 15);
        fputc('\n', out);
    }
    fprintf(out, "\noptions:\n");
    for (int i = 0; i < s->n_opts; i++) {
        char label[64];
        cli_option_label(&s->opts[i], label, sizeof label);
        fprintf(out, "  %-*s ", s->column, label);
        cli_text_print(out, s->opts[i].help, s->column + 3, s->column + 3);
        fputc('\n', out);
    }
    fprintf(out, "\nRun '%s COMMAND --help' for a command's options.\n", fs_program());
}

/* `foldsweep leaderboard DIR | head -1`: the reader has what it wanted.
 * Not for commands that write files or train (their work must finish). */
static void quiet_exit(int sig)
{
    (void)sig;
    _exit(0);
}

const CliCommand *cli_command_find(const char *name)
{
    for (int i = 0; i < cli_n_commands; i++)
        if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
    return NULL;
}

int cli_command_unknown(const char *name)
{
    const char *names[64];
    int n = 0;
    for (int i = 0; i < cli_n_commands && n < 64; i++) names[n++] = cli_commands[i].name;
    const char *near = fs_nearest(name, names, n);
    if (near) {
        /* A near miss needs one line, not the whole list. */
        cli_error("unknown command '%s'; did you mean '%s'?", name, near);
        fprintf(stderr, "Run 'foldsweep --help' for the commands.\n");
    } else {
        cli_error("unknown command '%s'", name);
        cli_usage_print(stderr);
    }
    return FS_EXIT_USAGE;
}

/* A word starting with '-' where a command belongs. */
static int main_option_unknown(const char *arg)
{
    const char *names[CLI_MAX_OPTIONS];
    for (int i = 0; i < cli_main_spec.n_opts; i++) names[i] = cli_main_spec.opts[i].name;
    const char *near = fs_nearest(arg, names, cli_main_spec.n_opts);
    if (near)
        cli_error("unknown option '%s'; did you mean '%s'?", arg, near);
    else
        cli_error("unknown option '%s'; expected a command", arg);
    fprintf(stderr, "Run 'foldsweep --help' for the commands.\n");
    return FS_EXIT_USAGE;
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
    char libs[256];
    run_gpu_libraries(libs, sizeof libs);
    printf("GPU libraries: %s\n", libs);
}

int cli_main(int argc, char **argv)
{
    fs_program_set(argc > 0 ? argv[0] : NULL);
    if (argc < 2) {
        cli_usage_print(stderr);
        return FS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, main_options[OPT_HELP].name) || !strcmp(cmd, main_options[OPT_HELP].alias)) {
        cli_usage_print(stdout);
        return FS_EXIT_OK;
    }
    if (!strcmp(cmd, main_options[OPT_VERSION].name)) {
        version_print();
        return FS_EXIT_OK;
    }
    if (cmd[0] == '-') return main_option_unknown(cmd);
    const CliCommand *c = cli_command_find(cmd);
    if (!c) return cli_command_unknown(cmd);
    if (c->reader) signal(SIGPIPE, quiet_exit);
    return c->run(argc - 1, argv + 1);
}
