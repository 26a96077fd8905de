/*
 * report_int.h: private to the report module: what the leaderboard's
 * writers share (report_write.c: CSV, JSON and the files; report_table.c:
 * the terminal table and Markdown; report_ties.c: which trials are tied
 * with the best; html_pareto.c: the objectives it weighs).
 */
#ifndef FS_REPORT_INT_H
#define FS_REPORT_INT_H

#include "report/report.h"

/* A fold's column name: "fold<s>", or "valid" for a predefined split. */
void report_fold_header(const FsReport *rep, int s, char *out, size_t n);
/* FS_REPORT_TABLE, FS_REPORT_WIDE or FS_REPORT_MD. */
void report_write_grid(const FsReport *rep, FsReportFormat fmt, int top, FILE *out);
/* After the ranking (report_ties.c): each row's interval, p-value against
 * rows[0] and tie (FsReportRow.has_ci ...). */
void report_ties(FsReport *rep);
/* Objective o of a row with every fold ok, as the Pareto front weighs it
 * and in its own units (Q3 as a fraction, parameters, seconds). */
double report_objective(const FsReport *rep, const FsReportRow *row, FsObjective o);

#endif
