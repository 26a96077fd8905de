/*
 * commands.h: private to the cli module. One entry point per subcommand,
 * each taking the arguments after its name and returning an FS_EXIT_* code;
 * cli.c's table lists them with their help text.
 */
#ifndef FS_CLI_COMMANDS_H
#define FS_CLI_COMMANDS_H

#include <stdio.h>

#include "predict/predict.h" /* FsModelSet for cli_export_models */
#include "report/report.h" /* FsJournal, FsReportSpec for cli_folder_read */

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
/* export.c: a model set's files copied into out with a model.json. */
int cli_export_models(const char *run, const FsModelSet *set, const char *out, FsErr *err);
/* `foldsweep refit RUN [-o DIR]`: a trial trained on all its training proteins. */
int cli_refit(int argc, char **argv);
/* `foldsweep repair DIR`: a sound journal when a middle line is damaged. */
int cli_repair(int argc, char **argv);
/* `foldsweep report RUN [-o FILE]`: the run as one HTML page. */
int cli_report(int argc, char **argv);
/* `foldsweep evaluate MODEL... DATA...`: scores on a held-out test set. */
int cli_evaluate(int argc, char **argv);

/* Both read a run folder the same way (leaderboard.c): its journal and the
 * metric and folds from DIR/sweep.yaml, else from the journal's run record
 * (*from_journal set). Returns 0, or -1 with the error printed; on success
 * the caller closes *j. */
int cli_folder_read(const char *dir, FsJournal *j, FsReportSpec *rs, int *from_journal);

/* Prints "foldsweep: " + message to stderr (a newline is added). */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
