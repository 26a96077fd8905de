/*
 * report_int.h: private to the report module: what the leaderboard's
 * writers share (report_write.c: CSV, JSON and the files; report_table.c:
 * the terminal table and Markdown).
 */
#ifndef FS_REPORT_INT_H
#define FS_REPORT_INT_H

#include "report/report.h"

/* A fold's column name: "fold<s>", or "valid" for a predefined split. */
void report_fold_header(const FsReport *rep, int s, char *out, size_t n);
/* FS_REPORT_TABLE, FS_REPORT_WIDE or FS_REPORT_MD. */
void report_write_grid(const FsReport *rep, FsReportFormat fmt, int top, FILE *out);

#endif
