/*
 * commands.h: private to the cli module. One entry point per subcommand,
 * each taking the arguments after its name and returning an FS_EXIT_* code;
 * cli.c's table lists them with their help text.
 */
#ifndef FS_CLI_COMMANDS_H
#define FS_CLI_COMMANDS_H

#include <stdio.h>

#include "cli/args.h" /* CliSpec */
#include "report/report.h" /* FsJournal, FsReportFolder for cli_folder_read */
#include "run/run.h"       /* FsStudyStop */

/* `foldsweep run SWEEP.yaml ...` (run.c; the work is run_sweep in src/run). */
int cli_run(int argc, char **argv);

/* `foldsweep prepare ...`: argv[0] is "prepare". */
int cli_prepare(int argc, char **argv);
/* `foldsweep plan SWEEP.yaml [--json]`: checks a sweep and lists its trials. */
int cli_plan(int argc, char **argv);
/* `foldsweep synth ...`: writes the synthetic data set (src/synth). */
int cli_synth(int argc, char **argv);
/* `foldsweep leaderboard DIR` and `foldsweep status DIR`: read a run folder. */
int cli_leaderboard(int argc, char **argv);
int cli_status(int argc, char **argv);
/* `foldsweep export RUN -o DIR` and `foldsweep predict MODEL... INPUT...`. */
int cli_export(int argc, char **argv);
int cli_predict(int argc, char **argv);
/* `foldsweep refit RUN [-o DIR]`: a trial trained on all its training proteins. */
int cli_refit(int argc, char **argv);
/* `foldsweep repair DIR`: a sound journal when a middle line is damaged. */
int cli_repair(int argc, char **argv);
/* `foldsweep report RUN [-o FILE]`: the run as one HTML page. */
int cli_report(int argc, char **argv);
/* After evaluate or refit recorded into run folder dir: its report.html,
 * where it has one, written again to show it (a failure is a warning). */
void cli_report_refresh(const char *dir);
/* `foldsweep evaluate MODEL... DATA...`: scores on a held-out test set. */
int cli_evaluate(int argc, char **argv);

/* Both read a run folder the same way (leaderboard.c): its journal and the
 * sweep, metric and folds from DIR/sweep.yaml, else from the journal's run
 * record (f->from_journal set). Returns 0, or -1 with the error printed; on
 * success the caller frees *f (report_folder_free) and closes *j. */
int cli_folder_read(const char *dir, FsJournal *j, FsReportFolder *f);
/* Whether search.stop ended the folder's study (run_study_replay on its
 * sweep and journal); stopped 0 without a sweep. */
void cli_folder_study(const FsReportFolder *f, const FsJournal *j, FsStudyStop *out);

/* `foldsweep help [COMMAND | --man]` (help.c: the manual page too) and
 * `foldsweep completion bash|zsh` (completion.c). */
int cli_help(int argc, char **argv);
int cli_completion(int argc, char **argv);

/* Each command's options and help (CliSpec), defined in its own file next
 * to its parser; cli.c's table points at them. */
extern const CliSpec *const cli_run_spec, *const cli_prepare_spec, *const cli_plan_spec, *const cli_synth_spec,
    *const cli_leaderboard_spec, *const cli_status_spec, *const cli_export_spec, *const cli_predict_spec,
    *const cli_refit_spec, *const cli_repair_spec, *const cli_report_spec, *const cli_evaluate_spec,
    *const cli_help_spec, *const cli_completion_spec;

/* The one table of the command line (cli.c): what `foldsweep --help`
 * lists, what dispatches, and what the manual page and the shell
 * completions are generated from. */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const CliSpec *const *spec; /* the command's options and help */
    const char *summary;        /* one line, for the command list */
    int reader; /* only reads and prints: a reader that stops reading ends it quietly */
} CliCommand;

extern const CliCommand cli_commands[];
extern const int cli_n_commands;
/* The program's own options (--help, --version), its usage and its one-line
 * description; and the exit codes as the help and the manual page say them. */
extern const CliSpec cli_main_spec;
extern const char cli_exit_status[];

/* The command named name, or NULL. */
const CliCommand *cli_command_find(const char *name);
/* "unknown command 'NAME'" with a suggestion when one is near, on stderr;
 * returns FS_EXIT_USAGE. */
int cli_command_unknown(const char *name);
/* foldsweep's usage: the commands and the program's options. */
void cli_usage_print(FILE *out);
/* The end of a command's output: flushes f (named name in the message) and,
 * unless it is stdout, closes it. 0, or -1 after "NAME: cannot write:
 * REASON" on stderr. */
int cli_output_close(FILE *f, const char *name);

/* Prints "foldsweep: " + message to stderr (a newline is added). */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
