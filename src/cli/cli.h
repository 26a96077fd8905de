/*
 * cli: the foldsweep command line. main.c only calls cli_main; tests call
 * the same entry point in-process.
 *
 * Exit codes: 0 ok, 1 error (bad input, I/O), 2 usage, 3 interrupted and resumable.
 */
#ifndef FS_CLI_H
#define FS_CLI_H

enum { FS_EXIT_OK = 0, FS_EXIT_ERROR = 1, FS_EXIT_USAGE = 2, FS_EXIT_INTERRUPTED = 3 };

int cli_main(int argc, char **argv);

#endif
