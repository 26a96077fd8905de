/*
 * cli: the foldsweep command line. main.c only calls cli_main; tests call
 * the same entry point in-process.
 *
 * Exit codes (FS_EXIT_*, util.h): 0 ok, 1 error (bad input, I/O), 2 usage,
 * 3 interrupted and resumable.
 */
#ifndef FS_CLI_H
#define FS_CLI_H

#include "util/util.h" /* FS_EXIT_* */

int cli_main(int argc, char **argv);

#endif
