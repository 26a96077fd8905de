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
/* An ok trial with every fold of its own seeds: its seed replicates in j
 * (report_seeds.c) as row->seeds, split, seed_sd, and its mean and std
 * over the splits' seed means (left as they are with one seed). */
void report_seeds(FsReportRow *row, const FsJournal *j, const FsReportSpec *spec);
/* report_versions.c: each row's index in sw, the folder's sweep (by trial
 * id, when sw's ids are known: an extended run's kept trials have the new
 * sweep's index, not the one their record was written with). */
void report_sweep_index(FsReport *rep, const FsSweep *sw);
/* A fold's value of the ranking metric (Q3, Q8 or the loss at its best epoch). */
static inline double report_fold_metric(const FsReportSpec *spec, const FsReportFold *f)
{
    return spec->metric == FS_METRIC_LOSS ? f->loss : spec->metric == FS_METRIC_Q8 ? f->q8 : f->q3;
}

/* The report's classes: 8 when a row is an 8-state trial's, else 3. */
static inline int report_classes(const FsReport *rep) { return fs_classes(rep->classes); }

#endif
