/*
 * evaluate.c: `foldsweep evaluate MODEL... DATA...`: a trial's fold
 * ensemble (or one fold's model) scored on a labelled, held-out test set.
 * The honest number: refuses a test set that shares a protein with the
 * models' training data (unless --allow-overlap), and records every look at
 * test data in the models' run folder journal, where `status` counts them.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "journal/journal.h"
#include "predict/predict.h"
#include "run/run.h" /* run_solo_threads */

enum {
    OPT_TRIAL, OPT_RANK, OPT_FOLD, OPT_FORMAT, OPT_INPUT_FORMAT, OPT_SEQUENCES, OPT_LABELS, OPT_MASK, OPT_ALLOW, OPT_EXCLUDE,
    OPT_MAX_IDENTITY, OPT_MAX_COVERAGE, OPT_SEED, OPT_RESAMPLES, OPT_THREADS, OPT_MIXED, OPT_FEATURES, OPT_TOP, OPT_HELP
};


static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "in a run folder: this trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "in a run folder: the trial at leaderboard rank N (default 1)"},
    [OPT_FOLD] = {"--fold", NULL, "K", "only fold K's model instead of the fold ensemble"},
    [OPT_TOP] = {"--top", NULL, "K", "in run folders: the fold ensembles of the K best trials as\n"
                                     "one, ranked over every folder given (docs/models.md)"},
    [OPT_FORMAT] = {"--format", NULL, "F", "table (default), md, csv or json"},
    [OPT_INPUT_FORMAT] = {"--input-format", NULL, "F", "auto (default, per file), uci, records or csv"},
    [OPT_SEQUENCES] = {"--sequences", NULL, "S.fasta", "FASTA set: amino-acid sequences"},
    [OPT_LABELS] = {"--labels", NULL, "L.fasta", "FASTA set: labels matched by ID"},
    [OPT_MASK] = {"--mask", NULL, "M.fasta", "FASTA set: optional mask, 1 scored, 0 unscored"},
    [OPT_ALLOW] = {"--allow-overlap", NULL, NULL, "score a test set that shares proteins with the training\n"
                                                  "data (the overlap is reported beside the scores)"},
    [OPT_EXCLUDE] = {"--exclude-overlap", NULL, NULL, "score only the test proteins the models have not seen,\n"
                                                      "nor any above --max-identity or --max-coverage\n"
                                                      "(left out and counted)"},
    [OPT_MAX_IDENTITY] = {"--max-identity", NULL, "X", "refuse test proteins above this identity to a training\n"
                                                       "protein (0..1, default " CLI_TEXT(FS_IDENTITY_MAX_DEFAULT)
                                                       "; docs/models.md)"},
    [OPT_MAX_COVERAGE] = {"--max-coverage", NULL, "X", "refuse test proteins with more than this\n"
                                                       "share of their residues in near-identical\n"
                                                       "local alignments to training proteins\n"
                                                       "(identity above " CLI_TEXT(FS_COVER_SEGMENT_IDENTITY)
                                                       " or --max-identity, over\n"
                                                       CLI_TEXT(FS_COVER_SEGMENT_MIN) "+ residues; 0..1, default "
                                                       CLI_TEXT(FS_COVERAGE_MAX_DEFAULT) ")"},
    [OPT_SEED] = {"--seed", NULL, "S", "bootstrap seed (default " CLI_TEXT(FS_EVAL_SEED) ")"},
    [OPT_RESAMPLES] = {"--resamples", NULL, "N", "bootstrap resamples (default " CLI_TEXT(FS_EVAL_RESAMPLES) ")"},
    [OPT_THREADS] = {"--threads", NULL, "N", "threads (default: all cores)"},
    [OPT_MIXED] = {"--mixed", NULL, NULL, "score model files from different trials, runs or data\n"
                                          "as one ensemble (refused otherwise; recorded as mixed)"},
    [OPT_FEATURES] = {"--features", NULL, "K:P,...", "models that read feature columns: their sources for\n"
                                                     "the test proteins (as for predict; default: the files\n"
                                                     "they trained on)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "evaluate",
    .usage = "usage: foldsweep evaluate MODEL... DATA... [--format table|md|csv|json] [--allow-overlap]\n"
             "       foldsweep evaluate MODEL... --sequences S --labels L [--mask M] [...]\n",
    .about = "Scores a trial's fold ensemble (or --fold K's model) on a labelled test set: Q3 with a 95%\n"
             "bootstrap interval over proteins, SOV'99, per-class precision, recall and MCC, the\n"
             "confusion matrix and per-protein Q3. Masked residues are not scored; 8-state labels are\n"
             "reduced to 3, or for 8-state models (data.classes: 8) read as 8 states: Q8 too, the scores\n"
             "and the matrix over the 8, Q3 and SOV of the predictions reduced. 3-state labels (UCI,\n"
             "CB513) for 8-state models: Q3 and SOV of the predictions reduced. A test protein identical\n"
             "to one the models were trained or validated on,\n"
             "or above --max-identity sequence identity to one (a chain, a fragment or a close homologue),\n"
             "or with more than --max-coverage of its residues in near-identical stretches of them (a chimera),\n"
             "is refused unless --exclude-overlap (left out) or --allow-overlap (scored). Each evaluation\n"
             "is recorded in the models' run folder\n"
             "journal (foldsweep status counts them). MODEL: as for predict (docs/models.md).\n",
    .opts = CLI_OPTIONS(options),
    .column = 26,
    .max_args = -1,
    .no_arg = "missing MODEL and DATA",
};
const CliSpec *const cli_evaluate_spec = &spec; /* for cli.c's table */

/* The data's labels read as the models' classes (data_load_scoring: 3
 * states where they do not read as 8, said in a note). */
static int load_data(FsDataset *ds, const CliArgs *a, int first, int classes, const char *data, FsErr *err)
{
    int f = a->val[OPT_INPUT_FORMAT] ? data_format_parse(a->val[OPT_INPUT_FORMAT]) : FS_FMT_AUTO;
    FsLoadSpec ls = {(FsFormat)f, (const char **)a->args + first, a->n_args - first, NULL, NULL, NULL};
    if (a->val[OPT_SEQUENCES] || a->val[OPT_LABELS])
        ls = (FsLoadSpec){FS_FMT_FASTA, NULL, 0, a->val[OPT_SEQUENCES], a->val[OPT_LABELS], a->val[OPT_MASK]};
    int rc = data_load_scoring(ds, &ls, classes, err);
    if (rc == 0 && fs_classes(ds->classes) != fs_classes(classes))
        cli_error("note: %s " FS_REDUCED_NOTE, data);
    uint32_t dropped = rc == 0 ? data_keep_test_set(ds) : 0;
    if (dropped)
        cli_error("note: the data marks predefined sets: its %u SET=test proteins are scored, not its %u training "
                  "and validation ones", ds->n_prot, dropped);
    return rc;
}

/* The options, checked; n_models: the operands that are models (the rest
 * is the data). */
typedef struct {
    int rank, fold, top, fmt, n_models, fasta_set;
    uint64_t threads, seed, reps;
    double max_identity, max_coverage;
    FsOverlapRule overlap;
} Opts;

/* The options' values and the mistakes among them and the operands, in
 * the order they are reported. Returns 0, or the usage error's exit code. */
static int parse(const CliArgs *a, Opts *o)
{
    uint64_t fold = UINT64_MAX;
    *o = (Opts){.seed = FS_EVAL_SEED, .reps = FS_EVAL_RESAMPLES, .max_identity = FS_IDENTITY_MAX_DEFAULT,
              .max_coverage = FS_COVERAGE_MAX_DEFAULT};
    int rc = 0;
    o->fmt = a->val[OPT_FORMAT] ? evaluate_format_parse(a->val[OPT_FORMAT]) : 0;
    if (o->fmt < 0) rc = cli_usage_error(&spec, "unknown --format (expected table, md, csv or json):", a->val[OPT_FORMAT]);
    if (!rc) rc = cli_trial_parse(&spec, a, OPT_TRIAL, OPT_RANK, &o->rank);
    if (!rc) rc = cli_whole_parse(&spec, a, OPT_FOLD, 0, 1 << 20, &fold);
    static const int others[] = {OPT_TRIAL, OPT_RANK, OPT_FOLD, OPT_MIXED, -1};
    if (!rc) rc = cli_top_parse(&spec, a, OPT_TOP, others, FS_PREDICT_MAX_MODELS, &o->top);
    if (!rc) rc = cli_whole_parse(&spec, a, OPT_THREADS, 1, 4096, &o->threads);
    if (!rc) rc = cli_whole_parse(&spec, a, OPT_SEED, 0, UINT64_MAX, &o->seed);
    if (!rc) rc = cli_whole_parse(&spec, a, OPT_RESAMPLES, 1, 1000000, &o->reps);
    if (!rc) rc = cli_real_parse(&spec, a, OPT_MAX_IDENTITY, 0.0, 1.0, &o->max_identity);
    if (!rc) rc = cli_real_parse(&spec, a, OPT_MAX_COVERAGE, 0.0, 1.0, &o->max_coverage);
    o->fold = fold == UINT64_MAX ? -1 : (int)fold;
    if (!rc && a->val[OPT_INPUT_FORMAT] &&
        (data_format_parse(a->val[OPT_INPUT_FORMAT]) < 0 || !strcmp(a->val[OPT_INPUT_FORMAT], "fasta")))
        rc = cli_usage_error(&spec, "--input-format: expected auto, uci, records or csv (a FASTA set: --sequences, "
                             "--labels):", a->val[OPT_INPUT_FORMAT]);
    o->fasta_set = a->val[OPT_SEQUENCES] || a->val[OPT_LABELS];
    if (!rc && o->fasta_set && !(a->val[OPT_SEQUENCES] && a->val[OPT_LABELS]))
        rc = cli_usage_error(&spec, "a FASTA set needs both --sequences and --labels", NULL);
    while (!rc && o->n_models < a->n_args && predict_is_model_source(a->args[o->n_models])) o->n_models++;
    if (!rc && o->n_models == 0)
        rc = cli_usage_error(&spec, "the first argument must be a model (folder or .safetensors file):", a->args[0]);
    if (!rc && o->n_models == a->n_args && !o->fasta_set)
        rc = cli_usage_error(&spec, "missing DATA after the models", NULL);
    if (!rc && a->val[OPT_ALLOW] && a->val[OPT_EXCLUDE])
        rc = cli_usage_error(&spec, "give --allow-overlap or --exclude-overlap, not both", NULL);
    if (!rc && o->n_models < a->n_args && o->fasta_set)
        rc = cli_usage_error(&spec, "give DATA files or a FASTA set, not both:", a->args[o->n_models]);
    o->overlap = a->val[OPT_EXCLUDE] ? FS_OVERLAP_EXCLUDE : a->val[OPT_ALLOW] ? FS_OVERLAP_ALLOW : FS_OVERLAP_REFUSE;
    return rc;
}

/* A mixed ensemble is scored only with --mixed; *key is then its journal key. */
static int check_mixed(const FsEnsemble *e, const FsModelSet *set, int allowed, char *key, size_t kn, FsErr *err)
{
    char what[5000];
    if (!predict_mixed(e, set, what, sizeof what, key, kn)) return 0;
    if (allowed) return cli_error("note: a mixed ensemble (--mixed): %s", what), 0;
    return fs_err_set(err, "%s: not one trial's fold models; pass --mixed to score them as one ensemble (the journal "
                      "then records it as mixed)", what), -1;
}

/* The models: found, not in a run folder that a sweep is writing, loaded,
 * one trial's (or --mixed: mixed names the mix). */
static int load_models(FsModelSet *set, FsEnsemble *e, const CliArgs *a, const Opts *o, char *mixed, size_t mn,
                       FsErr *err)
{
    if (o->top && predict_top_find(set, (const char *const *)a->args, o->n_models, o->top, err) != 0) return -1;
    for (int i = 0; !o->top && i < o->n_models; i++)
        if (predict_find(set, a->args[i], a->val[OPT_TRIAL], o->rank, o->fold, err) != 0) return -1;
    for (int i = 0; i < (set->top ? set->n_runs : 1); i++) {
        const char *run = set->top ? set->runs[i] : set->run;
        if (run[0] && journal_is_locked(run) == 1)
            return fs_err_set(err, "%s is being written by a running sweep: evaluate when it has finished (every "
                              "look at test data is recorded in its journal)", run), -1;
    }
    if (predict_load(e, set, FS_PREDICT_BATCH, err) != 0) return -1;
    return check_mixed(e, set, a->val[OPT_MIXED] != NULL, mixed, mn, err);
}

/* The data as the output and the journal name it: its files, or the FASTA set. */
static void data_name(const CliArgs *a, const Opts *o, char *data, size_t n)
{
    data[0] = '\0';
    for (int i = o->n_models; i < a->n_args; i++)
        snprintf(data + strlen(data), n - strlen(data), "%s%s", i > o->n_models ? " " : "", a->args[i]);
    if (o->fasta_set) snprintf(data, n, "%s + %s", a->val[OPT_SEQUENCES], a->val[OPT_LABELS]);
}

/* A --top ensemble's look, recorded in every run folder its trials came
 * from. Every journal is opened (and locked) before any record is written:
 * a folder that cannot take one (unwritable, damaged) is named while
 * nothing is recorded anywhere, so the rerun that follows its repair counts
 * the look once in each folder, not twice in the first ones. */
static int record_top(const FsModelSet *set, const FsEvaluation *ev, const char *key, FsErr *err)
{
    FsJournal *j = fs_calloc((size_t)set->n_runs, sizeof *j);
    int opened = 0, rc = 0;
    while (rc == 0 && opened < set->n_runs)
        if ((rc = journal_open(&j[opened], set->runs[opened], err)) == 0) opened++;
    for (int i = 0; rc == 0 && i < set->n_runs; i++)
        rc = predict_evaluate_record(&j[i], set->runs[i], ev, set->run_trial[i], key, "evaluate", err);
    for (int i = 0; i < opened; i++) journal_close(&j[i]);
    free(j);
    return rc;
}

/* The pipeline (predict_evaluate), recorded before it is shown: a look at
 * the test data always counts. */
static int score(FsEvaluation *ev, const FsModelSet *set, const FsEnsemble *e, FsDataset *ds, const Opts *o,
                 const char *mixed, FsErr *err)
{
    FsEvalSpec es = {.overlap = o->overlap, .max_identity = o->max_identity, .max_coverage = o->max_coverage,
                     .threads = run_solo_threads((int)o->threads), .reps = (int)o->reps, .seed = o->seed,
                     .notes = stderr};
    if (predict_evaluate(ev, e, ds, &es, err) != 0) return -1;
    char models[2400], key[24];
    predict_evaluate_names(set, e, o->fold, mixed, models, sizeof models, key, sizeof key);
    const char *trial = predict_set_trial(set, e);
    if (set->n_runs > 0 && record_top(set, ev, key, err) != 0) return -1;
    if (!set->top && set->run[0] && predict_evaluate_record(NULL, set->run, ev, trial, key, "evaluate", err) != 0)
        return -1;
    if (!set->run[0]) cli_error("note: the models' run folder is unknown; this evaluation is not recorded");
    evaluate_write(stdout, o->fmt, ev, models, o->overlap);
    for (int i = 0; i < set->n_runs; i++) cli_report_refresh(set->runs[i]);
    if (!set->top && set->run[0]) cli_report_refresh(set->run);
    return 0;
}

int cli_evaluate(int argc, char **argv)
{
    CliArgs a;
    Opts o;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    if ((rc = parse(&a, &o)) != 0) {
        cli_args_free(&a);
        return rc;
    }
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsEnsemble *e = fs_calloc(1, sizeof *e);
    FsEvaluation *ev = fs_calloc(1, sizeof *ev);
    FsDataset ds;
    memset(&ds, 0, sizeof ds);
    FsErr err = {0};
    char mixed[24] = "";
    data_name(&a, &o, ev->data, sizeof ev->data);
    int ok = load_models(set, e, &a, &o, mixed, sizeof mixed, &err) == 0 && load_data(&ds, &a, o.n_models, e->m[0].net.classes, ev->data, &err) == 0 &&
             predict_features(e, a.val[OPT_FEATURES], &ds, &err) == 0 &&
             score(ev, set, e, &ds, &o, mixed, &err) == 0;
    if (!ok) cli_error("%s", err.msg);
    data_free(&ds);
    predict_free(e);
    free(e), free(set), free(ev);
    cli_args_free(&a);
    if (ok && cli_output_close(stdout, "standard output") != 0) ok = 0;
    return ok ? FS_EXIT_OK : FS_EXIT_ERROR;
}
