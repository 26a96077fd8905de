/*
 * evaluate.c: `foldsweep evaluate MODEL... DATA...`: a trial's fold
 * ensemble (or one fold's model) scored on a labelled, held-out test set.
 * The honest number: refuses a test set that shares a protein with the
 * models' training data (unless --allow-overlap), and records every look at
 * test data in the models' run folder journal, where `status` counts them.
 */
#include <math.h>
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
    OPT_MAX_IDENTITY, OPT_SEED, OPT_RESAMPLES, OPT_THREADS, OPT_MIXED, OPT_HELP
};

#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define IDENTITY_DEFAULT TEXT(FS_IDENTITY_MAX_DEFAULT)

static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "in a run folder: this trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "in a run folder: the trial at leaderboard rank N (default 1)"},
    [OPT_FOLD] = {"--fold", NULL, "K", "only fold K's model instead of the fold ensemble"},
    [OPT_FORMAT] = {"--format", NULL, "F", "table (default), md, csv or json"},
    [OPT_INPUT_FORMAT] = {"--input-format", NULL, "F", "auto (default, per file), uci, records or csv"},
    [OPT_SEQUENCES] = {"--sequences", NULL, "S.fasta", "FASTA set: amino-acid sequences"},
    [OPT_LABELS] = {"--labels", NULL, "L.fasta", "FASTA set: labels matched by ID"},
    [OPT_MASK] = {"--mask", NULL, "M.fasta", "FASTA set: optional mask, 1 scored, 0 unscored"},
    [OPT_ALLOW] = {"--allow-overlap", NULL, NULL, "score a test set that shares proteins with the training\n"
                                                  "data (the overlap is reported beside the scores)"},
    [OPT_EXCLUDE] = {"--exclude-overlap", NULL, NULL, "score only the test proteins the models have not seen,\n"
                                                      "nor any above --max-identity (left out and counted)"},
    [OPT_MAX_IDENTITY] = {"--max-identity", NULL, "X", "refuse test proteins above this identity to a training\n"
                                                       "protein (0..1, default " IDENTITY_DEFAULT "; docs/models.md)"},
    [OPT_SEED] = {"--seed", NULL, "S", "bootstrap seed (default 1)"},
    [OPT_RESAMPLES] = {"--resamples", NULL, "N", "bootstrap resamples (default 1000)"},
    [OPT_THREADS] = {"--threads", NULL, "N", "threads (default: all cores)"},
    [OPT_MIXED] = {"--mixed", NULL, NULL, "score model files from different trials, runs or data\n"
                                          "as one ensemble (refused otherwise; recorded as mixed)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "evaluate",
    .usage = "usage: foldsweep evaluate MODEL... DATA... [--format table|md|csv|json] [--allow-overlap]\n"
             "       foldsweep evaluate MODEL... --sequences S --labels L [--mask M] [...]\n",
    .about = "Scores a trial's fold ensemble (or --fold K's model) on a labelled test set: Q3 with a 95%\n"
             "bootstrap interval over proteins, SOV'99, per-class precision, recall and MCC, the\n"
             "confusion matrix and per-protein Q3. Masked residues are not scored; 8-state labels are\n"
             "reduced to 3. A test protein identical to one the models were trained or validated on,\n"
             "or above --max-identity sequence identity to one (a chain, a fragment or a close homologue),\n"
             "is refused unless --exclude-overlap (left out) or --allow-overlap (scored). Each evaluation\n"
             "is recorded in the models' run folder\n"
             "journal (foldsweep status counts them). MODEL: as for predict (docs/models.md).\n",
    .opts = CLI_OPTIONS(options),
    .column = 26,
    .max_args = -1,
    .no_arg = "missing MODEL and DATA",
};
const CliSpec *const cli_evaluate_spec = &spec; /* for cli.c's table */

static int load_data(FsDataset *ds, const CliArgs *a, int first, FsErr *err)
{
    if (a->val[OPT_SEQUENCES] || a->val[OPT_LABELS]) {
        FsLoadSpec ls = {FS_FMT_FASTA, NULL, 0, a->val[OPT_SEQUENCES], a->val[OPT_LABELS], a->val[OPT_MASK]};
        return data_load(ds, &ls, err);
    }
    int f = a->val[OPT_INPUT_FORMAT] ? data_format_parse(a->val[OPT_INPUT_FORMAT]) : FS_FMT_AUTO;
    FsLoadSpec ls = {(FsFormat)f, (const char **)a->args + first, a->n_args - first, NULL, NULL, NULL};
    return data_load(ds, &ls, err);
}

/* The distinct trials of the ensemble, "A, B, ..." (a mixed one's). */
static void list_trials(const FsEnsemble *e, char *out, size_t n)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < e->n && at < n; i++) {
        int dup = 0;
        for (int k = 0; k < i; k++) dup |= !strcmp(e->m[k].info.trial, e->m[i].info.trial);
        if (!dup) at += (size_t)snprintf(out + at, n - at, "%s%s", at ? ", " : "", e->m[i].info.trial);
    }
}

/* What the models are, for the output and the journal; mixed: the journal
 * key of a mixed ensemble ("" if it is one trial's). */
static void describe(const FsModelSet *set, const FsEnsemble *e, int fold, const char *mixed, char *models, size_t n,
                     char *key, size_t kn)
{
    const char *trial = set->trial[0] ? set->trial : e->m[0].info.trial;
    if (mixed[0]) {
        char trials[1200];
        list_trials(e, trials, sizeof trials);
        snprintf(key, kn, "%s", mixed);
        snprintf(models, n, "%s ensemble of %d models (trials %s)%s%s", mixed, e->n, trials,
                 set->run[0] ? ", recorded in run " : "", set->run);
        return;
    }
    if (e->n == 1 && e->m[0].info.fold == FS_FOLD_ALL) snprintf(key, kn, "refit");
    else if (fold >= 0) snprintf(key, kn, "fold %d", fold);
    else if (e->n == 1 && e->m[0].info.folds > 1) snprintf(key, kn, "fold %d", e->m[0].info.fold);
    else snprintf(key, kn, "ensemble");
    snprintf(models, n, "trial %s, %s of %d model%s%s%s", trial[0] ? trial : "?", key, e->n, e->n == 1 ? "" : "s",
             set->run[0] ? ", run " : "", set->run);
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

static int record(const FsModelSet *set, const FsEnsemble *e, const char *key, const char *data,
                  const FsEvaluation *ev, FsErr *err)
{
    FsJournal j;
    if (journal_open(&j, set->run, err) != 0) return -1;
    FsEvalRecord r;
    evaluate_record(&r, ev, set->trial[0] ? set->trial : e->m[0].info.trial, key, "evaluate", data);
    int rc = journal_append_eval(&j, &r, err);
    journal_close(&j);
    return rc;
}

/* The refusal for proteins the models have seen (identical) or nearly
 * (above max identity): flagged[] both. */
static int refuse(const FsEvaluation *ev, const char *data, uint32_t flagged, FsErr *err)
{
    const char *fix = "these scores would be optimistic; pass --exclude-overlap to leave them out, or --allow-overlap "
                      "to score them anyway with the overlap reported";
    if (ev->overlap)
        return fs_err_set(err, "%s: %u test protein%s identical to proteins the models were trained or validated on "
                          "(%s%s%s%s): %s", data, ev->overlap, ev->overlap == 1 ? " is" : "s are", ev->names[0],
                          ev->n_names > 1 ? ", " : "", ev->n_names > 1 ? ev->names[1] : "", ev->overlap > 2 ? ", ..." : "",
                          fix), -1;
    char what[1200];
    evaluate_identity_refusal(&ev->ident, what, sizeof what);
    return fs_err_set(err, "%s: %s (%u in all): %s", data, what, flagged, fix), -1;
}

/* The leakage guard: identical proteins (fingerprints) and proteins above
 * max identity (the identity check) are refused, left out (exclude) or
 * scored with the counts reported (allow). */
static int guard(FsEvaluation *ev, const FsEnsemble *e, FsDataset *ds, double max, int allow, int exclude,
                 char *data, size_t dn, FsErr *err)
{
    int unchecked = 0;
    uint8_t *flag = fs_calloc((size_t)ds->n_prot + 1, 1);
    evaluate_overlap(ev, e, ds, &unchecked);
    evaluate_identity(&ev->ident, e, ds, max, flag);
    uint32_t flagged = evaluate_overlap_flags(e, ds, flag);
    int rc = 0;
    if (flagged && exclude) {
        ev->ident.left_out = evaluate_leave_out(ds, flag);
        cli_error("note: %u test protein%s identical to training proteins left out, and %u more above %g identity to "
                  "one", ev->overlap, ev->overlap == 1 ? "" : "s", flagged - ev->overlap, max);
        snprintf(data + strlen(data), dn - strlen(data), " (%u overlapping left out)", flagged);
    } else if (flagged && !allow) {
        rc = refuse(ev, data, flagged, err);
    }
    if (rc == 0 && unchecked)
        cli_error("warning: %d model%s carry no training-protein fingerprints (saved by an older foldsweep): overlap "
                  "with their training data is not checked", unchecked, unchecked == 1 ? "" : "s");
    if (rc == 0 && !ev->ident.checked)
        cli_error("warning: the identity check could not be made: %s; test proteins that are chains, fragments or "
                  "close homologues of training proteins are not caught (refit or retrain with this foldsweep)",
                  ev->ident.why);
    free(flag);
    return rc;
}

int cli_evaluate(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    rc = 0;
    uint64_t rank = 1, fold = UINT64_MAX, threads = 0, seed = 1, reps = 1000;
    double max_identity = FS_IDENTITY_MAX_DEFAULT;
    int fmt = a.val[OPT_FORMAT] ? evaluate_format_parse(a.val[OPT_FORMAT]) : 0;
    if (fmt < 0) rc = cli_usage_error(&spec, "unknown --format (expected table, md, csv or json):", a.val[OPT_FORMAT]);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_RANK, 1, 1000000000, &rank);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_FOLD, 0, 1 << 20, &fold);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_THREADS, 1, 4096, &threads);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_SEED, 0, UINT64_MAX, &seed);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_RESAMPLES, 1, 1000000, &reps);
    if (!rc) rc = cli_real_parse(&spec, &a, OPT_MAX_IDENTITY, 0.0, 1.0, &max_identity);
    if (!rc && a.val[OPT_TRIAL] && a.val[OPT_RANK]) rc = cli_usage_error(&spec, "give --trial or --rank, not both", NULL);
    if (!rc && a.val[OPT_INPUT_FORMAT] &&
        (data_format_parse(a.val[OPT_INPUT_FORMAT]) < 0 || !strcmp(a.val[OPT_INPUT_FORMAT], "fasta")))
        rc = cli_usage_error(&spec, "--input-format: expected auto, uci, records or csv (a FASTA set: --sequences, "
                             "--labels):", a.val[OPT_INPUT_FORMAT]);
    int fasta_set = a.val[OPT_SEQUENCES] || a.val[OPT_LABELS];
    if (!rc && fasta_set && !(a.val[OPT_SEQUENCES] && a.val[OPT_LABELS]))
        rc = cli_usage_error(&spec, "a FASTA set needs both --sequences and --labels", NULL);
    int n_models = 0;
    while (!rc && n_models < a.n_args && predict_is_model_source(a.args[n_models])) n_models++;
    if (!rc && n_models == 0)
        rc = cli_usage_error(&spec, "the first argument must be a model (folder or .safetensors file):", a.args[0]);
    if (!rc && n_models == a.n_args && !fasta_set) rc = cli_usage_error(&spec, "missing DATA after the models", NULL);
    if (!rc && a.val[OPT_ALLOW] && a.val[OPT_EXCLUDE])
        rc = cli_usage_error(&spec, "give --allow-overlap or --exclude-overlap, not both", NULL);
    if (!rc && n_models < a.n_args && fasta_set)
        rc = cli_usage_error(&spec, "give DATA files or a FASTA set, not both:", a.args[n_models]);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsEnsemble *e = fs_calloc(1, sizeof *e);
    FsEvaluation *ev = fs_calloc(1, sizeof *ev);
    FsDataset ds;
    memset(&ds, 0, sizeof ds);
    FsErr err = {0};
    int ok = 1, want_fold = fold == UINT64_MAX ? -1 : (int)fold;
    for (int i = 0; i < n_models && ok; i++)
        ok = predict_find(set, a.args[i], a.val[OPT_TRIAL], (int)rank, want_fold, &err) == 0;
    if (ok && set->run[0] && journal_is_locked(set->run) == 1)
        ok = (fs_err_set(&err, "%s is being written by a running sweep: evaluate when it has finished (every look at "
                               "test data is recorded in its journal)", set->run), 0);
    char mixed[24] = "";
    ok = ok && predict_load(e, set, 256, &err) == 0 &&
         check_mixed(e, set, a.val[OPT_MIXED] != NULL, mixed, sizeof mixed, &err) == 0 &&
         load_data(&ds, &a, n_models, &err) == 0;
    char data[512] = "";
    for (int i = n_models; i < a.n_args; i++)
        snprintf(data + strlen(data), sizeof data - strlen(data), "%s%s", i > n_models ? " " : "", a.args[i]);
    if (fasta_set) snprintf(data, sizeof data, "%s + %s", a.val[OPT_SEQUENCES], a.val[OPT_LABELS]);
    int allow = a.val[OPT_ALLOW] != NULL, exclude = a.val[OPT_EXCLUDE] != NULL;
    if (ok) ok = guard(ev, e, &ds, max_identity, allow, exclude, data, sizeof data, &err) == 0;
    uint64_t scored = 0;
    for (uint32_t r = 0; ok && r < ds.n_res; r++) scored += FS_SS_SCORED(ds.ss[r]);
    if (ok && scored == 0) ok = (fs_err_set(&err, "%s: no scored residues to evaluate on", data), 0);
    if (ok) {
        float *probs = fs_malloc(sizeof(float) * 3 * ((size_t)ds.n_res + 1));
        predict_run(e, &ds, run_solo_threads((int)threads), 256, probs, NULL);
        evaluate_score(ev, &ds, probs, (int)reps, seed);
        free(probs);
        char models[2400], key[24];
        describe(set, e, want_fold, mixed, models, sizeof models, key, sizeof key);
        /* Recorded before it is shown: a look at the test data always counts. */
        if (set->run[0] && record(set, e, key, data, ev, &err) != 0) ok = 0;
        else if (!set->run[0]) cli_error("note: the models' run folder is unknown; this evaluation is not recorded");
        if (ok) evaluate_write(stdout, fmt, ev, models, data, exclude ? 2 : allow);
    }
    if (!ok) cli_error("%s", err.msg);
    data_free(&ds);
    predict_free(e);
    free(e), free(set), free(ev);
    cli_args_free(&a);
    if (ok && cli_output_close(stdout, "standard output") != 0) ok = 0;
    return ok ? FS_EXIT_OK : FS_EXIT_ERROR;
}
