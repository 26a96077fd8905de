/*
 * predict: trained models put to use. Finds a trial's fold models (an
 * exported folder, a run folder and a trial by id prefix or rank, or model
 * files), loads them as an ensemble, runs it over a dataset on all threads
 * (the mean of the fold models' softmax outputs per residue, and how many
 * of them agree with it), and writes predictions as PSIPRED ss2 / horiz,
 * NetSurfP-style CSV or three-line FASTA; exports a trial's models with
 * their model.json and reads that back; scores an ensemble on a labelled
 * test set behind the leakage guard and records the look in the journal.
 * `foldsweep export`, `predict`, `refit` and `evaluate` are thin commands
 * over it, and the run's test phase evaluates through it (docs/models.md).
 */
#ifndef FS_PREDICT_H
#define FS_PREDICT_H

#include <stdio.h>

#include "data/data.h"
#include "journal/journal.h"
#include "metrics/metrics.h"
#include "modelfile/modelfile.h"
#include "report/report.h"

#define FS_PREDICT_MAX_MODELS 64
/* Run folders one --top ensemble may draw on. */
#define FS_PREDICT_MAX_RUNS 8
/* Residues a forward pass takes at once: predict's default (--batch), and
 * what evaluate and the test phase use. */
#define FS_PREDICT_BATCH 256

/* The files of one trial's fold models and what is known of the trial. */
typedef struct {
    int n;
    char path[FS_PREDICT_MAX_MODELS][2048];
    int fold[FS_PREDICT_MAX_MODELS];
    char trial[FS_TRIAL_ID_LEN + 1];
    int rank;          /* leaderboard rank, 0 if unknown (model files given directly) */
    double mean, std;  /* the trial's leaderboard metric (NAN if unknown) */
    char metric[8];
    char run[2048];    /* the run folder the models came from ("" if unknown): where looks at test data are recorded */
    /* --top K (predict_top_find): the fold ensembles of the K best trials
     * as one; 0 for one trial's models. runs: the run folders those trials
     * came from, absolute, best trial's first (each records a look at test
     * data, under run_trial: its best trial of the K). */
    int top, n_runs;
    char runs[FS_PREDICT_MAX_RUNS][2048];
    char run_trial[FS_PREDICT_MAX_RUNS][FS_TRIAL_ID_LEN + 1];
    int model_run[FS_PREDICT_MAX_MODELS]; /* each model's index in runs (-1: unknown) */
    /* Each model's fold scores as its run folder's leaderboard has them
     * (doubles: Q3 from the fold's confusion), where scored[i]; a model
     * file given directly has only its own floats (export writes those). */
    double val_q3[FS_PREDICT_MAX_MODELS], val_loss[FS_PREDICT_MAX_MODELS];
    unsigned char scored[FS_PREDICT_MAX_MODELS];
} FsModelSet;

/* Where to find models: `source` is an exported folder (model.json), a run
 * folder (journal.jsonl: the trial `trial` (an id or a unique prefix) or
 * else the one at leaderboard rank `rank`, 1 = best), or one .safetensors
 * file (call again to add more). fold >= 0 keeps only that fold's model.
 * 0, or -1 with err saying what is missing and what to do. */
int predict_find(FsModelSet *set, const char *source, const char *trial, int rank, int fold, FsErr *err);
/* --top K: the fold ensembles of the K best complete trials (status ok,
 * models kept) of run folders dirs[0..n_dirs) as one ensemble, ranked by
 * their leaderboard metric over all of them (ties: the earlier folder, then
 * its rank). The folders must share the sweep's metric and the training
 * data (fingerprint): scores on other validation data do not compare. 0,
 * or -1 with err naming the folder and what is wrong. */
int predict_top_find(FsModelSet *set, const char *const *dirs, int n_dirs, int k, FsErr *err);
/* 1 if dir is a run folder (a journal.jsonl), its absolute path into abs
 * (n bytes, which it fits); else 0. */
int predict_run_dir(const char *dir, char *abs, size_t n);
/* 1 if path looks like a model source (a folder, or a .safetensors file). */
int predict_is_model_source(const char *path);

/* "A trial by id prefix or rank" (trial.c), the one rule of --trial ID and
 * --rank N: the row of rep whose id starts with trial (when trial is not
 * NULL), else the one at rank. NULL with err (naming dir) for an ambiguous
 * prefix, an unknown id, a rank beyond the leaderboard, and, when whole is
 * set (a trial's fold models as one ensemble), a trial that is not
 * complete and ok (pruned, diverged, failed or with folds left). */
const FsReportRow *predict_trial_row(const FsReport *rep, const char *dir, const char *trial, int rank, int whole,
                                     FsErr *err);
/* The same in run folder dir's leaderboard: the trial's whole id into id
 * (n >= 17). 0, or -1 with err. */
int predict_trial_id(const char *dir, const char *trial, int rank, char *id, size_t n, FsErr *err);

/* An exported folder (export.c): the set's files copied byte for byte into
 * out (created), and out/model.json saying what they are (docs/models.md,
 * "model.json"); predict_find reads it back. run names the run folder when
 * the set does not know it. 0, or -1 with err. */
int predict_export(const char *run, const FsModelSet *set, const char *out, FsErr *err);

typedef struct {
    int n;
    FsSavedModel m[FS_PREDICT_MAX_MODELS];
    int window;
    int classes; /* every model's: 3, or 8 (DSSP-8) */
} FsEnsemble;

/* What the models of an ensemble do not share, as bits: one trial, one
 * run folder, one data fingerprint. A mixed ensemble is refused unless the
 * user says so (--mixed); a --top set's trials and runs are what was asked
 * for, and are not counted. */
enum { FS_MIX_TRIAL = 1, FS_MIX_RUN = 2, FS_MIX_DATA = 4 };
/* The bits, 0 for one trial's models. what (may be NULL) gets a sentence
 * naming the first two files that differ and how; key (may be NULL) the
 * journal's short form, "mixed: trials,runs,data" (at most 23 bytes). */
int predict_mixed(const FsEnsemble *e, const FsModelSet *set, char *what, size_t wn, char *key, size_t kn);

/* The feature columns (data.features) of ds's proteins for an ensemble
 * that reads them (features.c): from the sources its model files name, or
 * with their paths replaced by `paths` ("KIND:PATH,...", the same kinds in
 * the same order; NULL: the models'). Nothing for one-hot models (paths
 * must be NULL). 0, or -1 with err naming what differs or which file. */
int predict_features(const FsEnsemble *e, const char *paths, FsDataset *ds, FsErr *err);

/* Loads every file of the set; they must share one window. */
int predict_load(FsEnsemble *e, const FsModelSet *set, int batch, FsErr *err);
void predict_free(FsEnsemble *e);
/* The trial the set names, else the one its first model's file names. */
const char *predict_set_trial(const FsModelSet *set, const FsEnsemble *e);

/* The ensemble over every residue of ds, in residue order: probs (n_res x 3,
 * H E C, or e->classes per residue) the mean of the models' softmax, agree (n_res, may be NULL) the
 * fraction of models whose own prediction is the ensemble's. Deterministic
 * whatever the thread count (each residue's sums run over the models in
 * order). 0, or -1 with err naming the first protein and residue whose
 * probabilities are not finite (a layer overflowed): none may be written
 * or scored. */
int predict_run(const FsEnsemble *e, const FsDataset *ds, int threads, int batch, float *probs, float *agree,
                FsErr *err);

typedef enum { FS_PRED_SS2 = 0, FS_PRED_HORIZ, FS_PRED_CSV, FS_PRED_FASTA } FsPredFormat;
/* "ss2", "horiz", "csv", "fasta" -> format, or -1. */
int predict_format_parse(const char *s);
const char *predict_format_ext(FsPredFormat f);
/* The class of one residue (FS_SS_* or FS_SS8_*): argmax of its
 * `classes` probabilities, the first on a tie; predict_state is its letter. */
int predict_class(const float *p, int classes);
char predict_state(const float *p, int classes);
/* Writes protein `prot` (or every protein, prot < 0) of ds, probs having
 * `classes` (3 or 8) per residue. The CSV header is written when header is
 * set. With 8 classes: csv has the 8-state letter and its 8 probabilities
 * (p[q8_H] .. p[q8_C]) after the 3-state letter (the 8-state argmax
 * reduced) and the 3-state probabilities (sums over the reduction); fasta
 * and horiz write 8-state letters; ss2 (PSIPRED's 3-state format) the
 * reduced letter and probabilities. */
void predict_write(FILE *out, FsPredFormat fmt, const FsDataset *ds, long prot, const float *probs,
                   const float *agree, int header, int classes);

/* The names of per-protein output files within one run (names.c). */
typedef struct {
    char **slot; /* open addressing, cap a power of two */
    size_t n, cap;
} FsNameSet;
/* The file name (without extension) for protein `id`: the id with '/' and
 * '\\' as '_', and "~2", "~3", ... added when a protein of this run
 * already has that name. Returns 1 when a suffix was added. n >= 212. */
int predict_file_name(FsNameSet *s, const char *id, char *out, size_t n);
void predict_names_free(FsNameSet *s);

/* ---------------------------------------------------------------------- */
/* Evaluation on a labelled test set (evaluate.c).                         */

#define FS_EVAL_NAMES 5

/* The identity check (leakage.c): each test protein's highest identity to
 * a protein the models saw (data_identity_best), counted at the levels
 * fs_identity_levels and against the threshold (--max-identity), and its
 * coverage by near-identical segments of them, against --max-coverage. */
typedef struct {
    int checked;        /* 0: not made, why says why */
    char why[240];
    double max;         /* the threshold: proteins above it are refused or left out */
    uint32_t above[FS_IDENTITY_LEVELS];
    uint32_t over;      /* above max */
    uint32_t left_out;  /* proteins left out of the scores (--exclude-overlap) */
    int n_first;
    struct {
        char test[64], train[64];
        double identity;
    } first[FS_EVAL_NAMES]; /* the first proteins above max, and their closest training protein */
    double max_coverage;    /* proteins with more of their residues covered are refused or left out */
    double segment;         /* covered: in local alignments above this identity (data_identity_segment) */
    uint32_t covered;       /* above max_coverage (whatever their identity) */
    uint32_t covered_only;  /* of them, not above max identity */
    int n_cfirst;
    struct {
        char test[64], train[2][64]; /* the training proteins with the longest segments ("" for none) */
        double coverage;
    } cfirst[FS_EVAL_NAMES]; /* the first proteins above max_coverage and not above max */
} FsIdentityReport;

typedef struct {
    FsMetrics m;          /* scored residues: Q3, per-class precision, recall, MCC, confusion */
    FsSov sov;            /* SOV'99 over every chain */
    uint32_t proteins;    /* proteins with at least one scored residue */
    uint64_t residues, scored;
    double prot_mean, prot_median, prot_p10; /* per-protein Q3 */
    double ci_lo, ci_hi;  /* 95% bootstrap interval of Q3 over proteins */
    int reps;
    uint64_t seed;
    uint32_t overlap;     /* test proteins identical to one the models saw */
    int n_names;
    char names[FS_EVAL_NAMES][64]; /* the first of them */
    uint64_t data_fingerprint;
    FsIdentityReport ident;
    /* 8 when 8-state models were scored on 3-state labels (their argmax
     * reduced, FS_CLASS8_REDUCTION_TEXT), else 0. */
    int reduced;
    /* The data, as the output and the journal name it (the caller's words;
     * the guard adds " (N overlapping left out)" when it leaves some out). */
    char data[512];
} FsEvaluation;

/* The leakage guard: proteins of ds identical (same residue sequence) to
 * a protein any model of e was trained or validated on. Fills ev->overlap
 * and the first names; returns the count. Models without fingerprints
 * (none saved) are not checked: *unchecked counts them. */
uint32_t evaluate_overlap(FsEvaluation *ev, const FsEnsemble *e, const FsDataset *ds, int *unchecked);
/* The identity check of ds against the proteins the models of e saw (the
 * union of their distinct sets): fills r and sets over[i] for each protein
 * above max identity or above max_coverage coverage. A model without its training sequences (a file older than the
 * check) makes it impossible: r->checked 0, r->why naming the file. */
void evaluate_identity(FsIdentityReport *r, const FsEnsemble *e, const FsDataset *ds, double max,
                       double max_coverage, uint8_t *over);
/* The same against a set of proteins (the run's training data). */
void evaluate_identity_of(FsIdentityReport *r, const FsSeqSet *seen, const FsDataset *ds, double max,
                          double max_coverage, uint8_t *over);
/* Sets flag[i] for each protein of ds identical (same residues) to one a
 * model of e saw; returns how many are set now. */
uint32_t evaluate_overlap_flags(const FsEnsemble *e, const FsDataset *ds, uint8_t *flag);
/* Leaves the flagged proteins out of every score (their residues become
 * unscored); returns how many. */
uint32_t evaluate_leave_out(FsDataset *ds, const uint8_t *flag);
/* The refusal: "N test proteins are above X identity ... (P: 0.98 to T, ...)",
 * then those only above the coverage threshold (P: 0.98 covered, by T and U). */
void evaluate_identity_refusal(const FsIdentityReport *r, char *out, size_t n);
/* Scores probabilities (predict_run's, residue order, `classes` per
 * residue) against ds's labels: every metric of FsEvaluation, the bootstrap
 * with `reps` resamples from `seed`. 8-state probabilities against 3-state
 * labels are scored by the argmax reduced (ev->reduced 8). Keeps ev's
 * overlap fields. */
void evaluate_score(FsEvaluation *ev, const FsDataset *ds, const float *probs, int classes, int reps, uint64_t seed);

/* ---------------------------------------------------------------------- */
/* The evaluation pipeline of `foldsweep evaluate` and the run's test
 * phase: predict_evaluate, then predict_evaluate_record.                  */

/* The bootstrap's resamples and seed unless --resamples / --seed say
 * otherwise (the test phase always uses these). */
#define FS_EVAL_RESAMPLES 1000
#define FS_EVAL_SEED 1

/* What becomes of test proteins the models saw, or nearly (above the
 * identity threshold). */
typedef enum {
    FS_OVERLAP_REFUSE = 0,  /* an error naming them (evaluate's default) */
    FS_OVERLAP_ALLOW = 1,   /* scored, with the overlap reported (--allow-overlap) */
    FS_OVERLAP_EXCLUDE = 2, /* left out of every score, counted (--exclude-overlap) */
} FsOverlapRule;

typedef struct {
    FsOverlapRule overlap;
    /* The data was screened against the training data already (a run's
     * test set, before training: refused, or the overlap left out): the
     * guard then refuses and leaves out nothing, and only counts. */
    int screened;
    double max_identity; /* the identity threshold (FS_IDENTITY_MAX_DEFAULT) */
    double max_coverage; /* the coverage threshold (FS_COVERAGE_MAX_DEFAULT) */
    int threads;         /* of the forward pass */
    int reps;            /* bootstrap resamples, and their seed */
    uint64_t seed;
    FILE *notes;         /* where the guard's notes and warnings go ("foldsweep: note: ..."); NULL: nowhere */
} FsEvalSpec;

/* Scores ensemble e on ds: the leakage guard (predict_guard: proteins the
 * models saw refused, left out of ds's scores, or scored as spec says; the
 * overlap and the identity check counted in ev), then the ensemble over ds
 * and every score of FsEvaluation. Set ev->data first (it names the data
 * in messages). 0, or -1 with err (a refusal, or nothing left to score). */
int predict_evaluate(FsEvaluation *ev, const FsEnsemble *e, FsDataset *ds, const FsEvalSpec *spec, FsErr *err);
/* Records the look at the test data: ev of trial's `models` ("ensemble",
 * "fold K", "refit", a mixed key) by `source` ("evaluate", "test"), in j,
 * or (j NULL) in run folder run's journal, opened and closed here. */
int predict_evaluate_record(FsJournal *j, const char *run, const FsEvaluation *ev, const char *trial,
                            const char *models, const char *source, FsErr *err);
/* What the models are, for the output (models: "trial T, ensemble of 3
 * models, run R") and the journal (key: "ensemble", "fold K", "refit" or,
 * for a mixed ensemble, mixed: predict_mixed's key). fold: the one fold
 * asked for, or -1. */
void predict_evaluate_names(const FsModelSet *set, const FsEnsemble *e, int fold, const char *mixed, char *models,
                            size_t n, char *key, size_t kn);

/* "table", "md", "csv", "json" (the report formats) -> 0..3, or -1. */
int evaluate_format_parse(const char *s);
/* Writes the evaluation; models names the models (predict_evaluate_names),
 * ev->data the data; overlap: the rule it was scored under. */
void evaluate_write(FILE *out, int fmt, const FsEvaluation *ev, const char *models, FsOverlapRule overlap);

#endif
