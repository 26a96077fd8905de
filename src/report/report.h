/*
 * report: the leaderboard of a run folder, built from its journal and the
 * sweep's metric and folds. Trials are ranked by the mean validation metric
 * over folds (Q3 at each fold's best epoch, higher first; or best
 * validation loss, lower first), ties by trial index. Complete trials come
 * first, then incomplete ones (folds still to train, ranked by the mean of
 * the folds done), then diverged ones, then failed ones: listed with their
 * reason, never dropped. The spread is the population standard deviation
 * over the folds (divide by n, numpy's default).
 *
 * Formats: aligned terminal table (at most FS_REPORT_TABLE_WIDTH columns,
 * or every column on one line), Markdown, CSV and JSON (the JSON layout is
 * a stable format: docs/leaderboard-json.md). People read Q3 in percent
 * (fs_format_percent), CSV and JSON hold the fraction.
 */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <stdio.h>

#include "journal/journal.h"
#include "metrics/metrics.h"
#include "sweep/sweep.h"

#define FS_LEADERBOARD_JSON_VERSION 1

/* FS_REPORT_TABLE fits a terminal of this many columns (long
 * architectures and notes wrap within theirs); FS_REPORT_WIDE puts each
 * trial on one line, every column whole. */
#define FS_REPORT_TABLE_WIDTH 120

typedef enum { FS_REPORT_TABLE = 0, FS_REPORT_MD, FS_REPORT_CSV, FS_REPORT_JSON, FS_REPORT_WIDE } FsReportFormat;

/* Ranking groups, in leaderboard order. */
typedef enum {
    FS_TRIAL_OK = 0,     /* every fold trained without diverging */
    FS_TRIAL_INCOMPLETE, /* some folds not in the journal yet */
    FS_TRIAL_PRUNED,     /* the sweep's pruner stopped it (a "pruned" record) */
    FS_TRIAL_DIVERGED,   /* a fold diverged */
    FS_TRIAL_FAILED      /* a failure record, or a fold that could not train */
} FsTrialStatus;

/* What the report needs from the sweep. */
typedef struct {
    FsMetricKind metric;
    int folds;      /* fold ids: k x repeats; 1 when predefined */
    int predefined; /* the single fold is FS_FOLD_PREDEFINED */
    int n_trials;   /* the sweep's trial count (0 if unknown): for status */
    /* The sweep, for each trial's values of the swept options (the CSV and
     * JSON param_ columns); NULL: none. Borrowed: it must outlive report_build. */
    const FsSweep *sweep;
    int repeats; /* data.repeats (0 or 1: one k-fold split, or not known) */
    double alpha; /* run.alpha (0: FS_ALPHA_DEFAULT) */
    int objectives[FS_OBJ_COUNT], n_objectives; /* run.objectives (0: no Pareto front) */
    /* 1: each trial's own seeds only, its seed replicates left out: the ranking
     * search.replicates chooses by (run/replicates.c). 0: replicates count. */
    int own_seeds;
} FsReportSpec;

typedef struct {
    int present; /* the fold is in the journal */
    int fold;    /* 0..k-1 or FS_FOLD_PREDEFINED */
    FsFitStatus status;
    double q3, loss; /* at the best epoch (NAN if absent); an 8-state fold's Q3 is its 8-state predictions reduced */
    double q8;       /* an 8-state fold's Q8 at the best epoch (NAN if absent or 3-state) */
    FsMetrics m;     /* per-class precision, recall, MCC and the confusion matrix at the best epoch */
    int epochs, best_epoch, diverged_epoch;
    long diverged_step;
    double seconds;
    uint64_t train_examples, val_examples; /* over its epochs: their ratio is the split's n_val / n_train */
    double val_seconds;                    /* its validation passes' time (FS_OBJ_PREDICT_US) */
    int gpu_path;                          /* FsGpuPath: the GPU tier that trained it, 0 on the CPU */
    FsObjectiveFold obj;                   /* train_result_objective's (NAN where absent) */
} FsReportFold;

typedef struct {
    int rank; /* 1-based */
    char id[FS_TRIAL_ID_LEN + 1];
    int index; /* the trial's index in the sweep (the folder's sweep, when known; else the trial
                  record's; -1 if neither) */
    int sweep_version; /* the sweep version its trial record was written under (FsTrialRecord.version:
                          1 unless the run was extended); 0 without a trial record */
    FsTrialStatus status;
    long n_params;
    const char *config;  /* canonical JSON (borrowed from the journal; "{}" if none) */
    char *arch;          /* the architecture summary from the config, whole (owned) */
    int n_done;          /* folds present */
    double mean, std;    /* of the metric over the ok folds present (NAN if none); with seeds > 1, over
                            the splits' means over the seeds (report_seeds.c, docs/statistics.md) */
    /* search.replicates (report_seeds.c): the seeds whose every fold is ok with its metric, the
     * trial's own included (1: none more, or not such a trial); with seeds > 1, split holds each
     * split's mean over them (spec.folds entries; NULL otherwise) and seed_sd the pooled
     * standard deviation across seeds within a split (NAN with one seed). */
    int seeds;
    double *split, seed_sd;
    double seconds;      /* training seconds summed over the folds present */
    /* Where its folds trained (the fold records' gpu_path): "cpu", "block",
     * "library", or "mixed" where they differ; NULL without a fold. */
    const char *gpu_path;
    FsReportFold *folds; /* spec.folds entries, in fold order */
    char reason[1100];   /* why diverged / failed / incomplete / pruned ("" if ok) */
    const FsCutRecord *cut; /* the pruning decision (borrowed from the journal), or NULL */
    /* The sweep's test section: the latest evaluation of the fold ensemble
     * and of the refit (borrowed from the journal; NULL if none). Shown,
     * never used for the ranking. */
    const FsEvalRecord *test, *test_refit;
    /* Per-class precision, recall and MCC of the ok folds' confusions pooled
     * (as the report's confusion section); pooled.n == 0: no such fold. */
    FsMetrics pooled;
    /* An 8-state trial (classes 8): the mean Q3 (reduced) and Q8 over its ok
     * folds with a best epoch (NAN if none), whatever the ranking metric. */
    int classes;
    double q3_mean, q8_mean;
    char **param; /* FsReport.n_param values of the swept options (NULL: not known, or no effect on this trial) */
    /* Against the best trial (report_ties, docs/statistics.md), for an ok
     * trial with every fold's metric, k >= 2, when rows[0] is one too:
     * the metric's 95% interval (corrected resampled variance), the paired
     * corrected t-test's p-value against rows[0], Holm-adjusted over the
     * trials compared (rows[0] itself: 1), and tied = adjusted p >=
     * the sweep's run.alpha. has_ci 0: none of these (NAN, tied -1). */
    int has_ci;
    double ci_lo, ci_hi, p_vs_best;
    int tied; /* 1 tied with the best, 0 not, -1 not compared */
    /* What the test compared, for people: the fold-by-fold difference to
     * rows[0] (this trial's minus the best's), its mean and 95% interval
     * with the corrected variance, unadjusted (NAN: not compared, or rows[0]). */
    double diff, diff_lo, diff_hi;
    /* The ok folds the mean is over (fewer than spec.folds: a pruned or
     * incomplete trial's mean, not comparable with a complete one's). */
    int n_mean;
    /* run.objectives: 1 on the Pareto front of the ok trials with every
     * fold (report_ties.c), 0 not, -1 not compared (no objectives, or not
     * such a trial). */
    int pareto;
} FsReportRow;
/* The level below which a trial is told apart from the best: run.alpha. */
double report_alpha(const FsReportSpec *spec);

typedef struct {
    FsReportSpec spec;
    FsReportRow *rows; /* in rank order */
    int n_rows;
    int has_test, has_refit; /* some row has a test result (of the ensemble, of a refit) */
    int n_folds_done; /* fold records that belong to a listed trial */
    int n_param;      /* swept options (0 without spec.sweep) */
    int n_versions;   /* sweep versions the journal records (> 1: an extended run; 0 or 1: one) */
    char **param_col; /* their column names: "param_" + the dotted sweep key, dots as '_' */
    int classes;      /* 8 when a row is an 8-state trial's (data.classes: 8), else 3 */
} FsReport;

const char *report_status_name(FsTrialStatus s);
/* A value of the metric for people: Q3 in percent with one decimal
 * (fs_format_percent, "71.2"), a loss with 4 decimals; "-" if not finite. */
char *report_metric_text(char *buf, size_t n, FsMetricKind m, double v);
/* "table", "md", "csv", "json" -> format, or -1 (FS_REPORT_WIDE is the table with --wide). */
int report_format_parse(const char *s);

/* Metric, folds and trial count; spec->sweep stays NULL (set it where the
 * param_ columns are written: they cost a few config builds per trial). */
void report_spec_from_sweep(FsReportSpec *spec, const FsSweep *sw);
/* From the latest run record; -1 if the journal has none with the fields. */
int report_spec_from_journal(FsReportSpec *spec, const FsJournal *j);

/* From DIR/sweep.yaml, or if that file is absent from the journal's latest
 * run record (*from_journal = 1). 0 or -1 with err naming the file. */
int report_spec_load(FsReportSpec *spec, const char *dir, const FsJournal *j, int *from_journal,
                     FsErr *err);

/* What the journal of a run of sw may hold (for journal_set_sweep): its
 * trial ids (ids: the caller's array of sw->n_trials, filled; NULL: ids not
 * checked), folds, pruner, and each fold's validation residues (or NULL). */
void report_journal_sweep(FsJournalSweep *js, const char **ids, const FsSweep *sw, int folds,
                          const uint64_t *val_residues);

/* A run folder as its readers see it. */
typedef struct {
    FsReportSpec spec;
    int from_journal;       /* no sweep.yaml: metric and folds from the journal's run record */
    int sweep_damaged;      /* sweep.yaml is there but does not load, or is not the journal's sweep (sweep_why) */
    int sweep_from_journal; /* ... so the journal's own record of the sweep was used */
    char sweep_why[900];
    FsSweep sweep; /* the sweep that judged the journal (spec.sweep points here), when has_sweep */
    int has_sweep;
} FsReportFolder;

/* After journal_read or journal_open of DIR: the sweep (DIR/sweep.yaml,
 * or the journal's record of it when the file is damaged or missing), its
 * spec, and the journal read again checked against it (journal_set_sweep:
 * records that do not fit are damaged lines). 0, or -1 with err (a damaged
 * sweep.yaml without a record to stand in, or a journal that cannot be read). */
int report_folder_check(FsReportFolder *f, const char *dir, FsJournal *j, FsErr *err);
/* Frees the folder's sweep (after the last report_build of f->spec). */
void report_folder_free(FsReportFolder *f);

/* Builds the ranked rows. Borrows the journal's strings: keep it open. */
void report_build(FsReport *rep, const FsJournal *j, const FsReportSpec *spec);

/* A complete trial's place in the leaderboard's order, for a caller that
 * ranks one trial at a time (the progress line's best): its row's mean as
 * report_build computes it (fold by fold) and the keys its sort compares. */
typedef struct {
    double mean;
    double key; /* lower ranks first */
    int index;
    char id[FS_TRIAL_ID_LEN + 1];
} FsReportRank;
/* 1 with *r where trial id's row is complete and ok (the rows the
 * leaderboard ranks first), else 0: one row built, not the board. */
int report_trial_rank(const FsJournal *j, const FsReportSpec *spec, const char *id, FsReportRank *r);
/* Whether a ranks before b on the leaderboard: report_build's comparison. */
int report_rank_before(const FsReportRank *a, const FsReportRank *b);
void report_free(FsReport *rep);

/* Writes the first `top` rows (top <= 0: all) in a format. */
void report_write(const FsReport *rep, FsReportFormat fmt, int top, FILE *out);

/* The architecture summary of a config, e.g. "w15 conv64x7 relu > drop0.2 >
 * dense32 relu | adam lr0.001 b8", cut with "..." to fit n bytes. The
 * longest (16 layers) fits FS_REPORT_ARCH_TEXT. */
#define FS_REPORT_ARCH_TEXT 1024
void report_arch_summary(const char *config, char *out, size_t n);

/* For the runner, at the end of a run (and after an interruption):
 * DIR/leaderboard.md, .csv and .json, each written to a temporary file,
 * fsync'd and renamed over the old one. 0 or -1 with err. */
int report_write_files(const char *dir, const FsJournal *j, const FsSweep *sw, FsErr *err);
int report_write_files_spec(const char *dir, const FsJournal *j, const FsReportSpec *spec,
                            FsErr *err);
/* Every fold's learning curves as CSV (curves.c): trial, fold, seed,
 * epoch (1-based), train_loss, val_loss, val_q3, seconds (from the fold's
 * start to the epoch's end),
 * best (1 at the fold's kept epoch) and the fold's status; a row per
 * epoch, in the journal's order. */
void report_curves_csv(FILE *out, const FsJournal *j);
/* The terminal table of the best `top` trials of the run folder dir (named
 * in the line that says how many more there are). */
void report_print_leaderboard(FILE *out, const char *dir, const FsJournal *j, const FsSweep *sw, int top);

/* ---------------------------------------------------------------------- */
/* The run as a picture (html.c): one self-contained HTML file (inline SVG,
 * CSS and a little plain JavaScript, nothing fetched) with the leaderboard,
 * each trial's learning curves, parameter effects, the time profile, the
 * best trials' confusion matrices and the run's identity. */

/* What only the runner knows (the journal does not record it; the ranks
 * and backend are in the journal's run records). */
typedef struct {
    const char *sweep_path; /* the sweep file the run was started with (NULL: not known) */
    int threads;            /* worker threads of all ranks (0: not known) */
    int live;               /* the run is going: the page says so and reloads itself */
    int planned;            /* > 0: the trials the run trains, when fewer than the sweep's (search.stop ended it) */
    const char *note;       /* a sentence for the banner (why the study stopped), or NULL / "" */
} FsReportHtmlInfo;

/* The report of run folder dir (its journal j, read or open; spec as for
 * the leaderboard) to out. info may be NULL. */
void report_html_write(FILE *out, const char *dir, const FsJournal *j, const FsReportSpec *spec,
                       const FsReportHtmlInfo *info);
/* The same, written atomically (fs_write_file_atomic) to path, or to
 * DIR/report.html when path is NULL. 0 or -1 with err. */
int report_html_write_file(const char *path, const char *dir, const FsJournal *j, const FsReportSpec *spec,
                           const FsReportHtmlInfo *info, FsErr *err);
/* For the runner: DIR/report.html of sweep sw. A live write (info->live)
 * is skipped until 5 s, or 20 times the last write's cost, have passed
 * since the last one (it runs under the run's lock), and its failure is
 * left to the next one; the final write always happens. 0 or -1 with err. */
int report_html_write_run(const char *dir, const FsJournal *j, const FsSweep *sw, const FsReportHtmlInfo *info,
                          FsErr *err);

#endif
