/*
 * cli: the foldsweep command line. main.c only calls cli_main; tests call
 * the same entry point in-process.
 *
 * Exit codes (FS_EXIT_*, util.h): 0 ok, 1 error (bad input, I/O), 2 usage,
 * 3 interrupted and resumable.
 */
#ifndef FS_CLI_H
#define FS_CLI_H

#include <stdio.h>

#include "util/util.h" /* FS_EXIT_* */

int cli_main(int argc, char **argv);

/* `foldsweep leaderboard DIR`'s output in format fmt (FsReportFormat), its
 * best top trials (0: all), to out; messages on stderr. An FS_EXIT_* code
 * (the library API's foldsweep_leaderboard too). */
int cli_leaderboard_write(const char *dir, int fmt, int top, FILE *out);
/* The run folder's learning curves, report_curves_csv's table, to out (the
 * library API's foldsweep_curves). An FS_EXIT_* code. */
int cli_curves_write(const char *dir, FILE *out);

#endif
