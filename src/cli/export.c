/*
 * export.c: `foldsweep export RUN [--trial ID | --rank N] -o DIR`: one
 * trial's fold models out of a run folder, with a model.json that says
 * what they are (the trial, its configuration and architecture, each
 * fold's best epoch and scores, or a refit's epochs and why), ready for
 * `predict` or PyTorch.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "json/json.h"
#include "predict/predict.h"
#include "report/report.h"

#ifndef FS_VERSION
#define FS_VERSION "0.1.0"
#endif

enum { OPT_TRIAL, OPT_RANK, OPT_OUT, OPT_HELP };

static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "the trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "the trial at leaderboard rank N (default 1, the best)"},
    [OPT_OUT] = {"--out", "-o", "DIR", "the folder to write (created; files in it are replaced)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "export",
    .usage = "usage: foldsweep export RUN [--trial ID | --rank N] -o DIR\n",
    .about = "Copies a trial's fold models (safetensors, loadable in PyTorch with\n"
             "python/foldsweep_torch.py) out of a run folder into DIR, with DIR/model.json\n"
             "describing them. `foldsweep predict DIR INPUT` then predicts with them.\n",
    .opts = CLI_OPTIONS(options),
    .column = 20,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder RUN",
};
const CliSpec *const cli_export_spec = &spec; /* for cli.c's table */

/* One model of the export: its fold as the file's metadata names it (a
 * number, "predefined", or "all" for a refit), and what it trained: a fold
 * model's kept epoch and validation scores (floats: every digit), or a
 * refit's epochs and why (it has no validation set, so no score: none is
 * written). */
static void json_model(FsJsonOut *w, const FsModelInfo *in, int fold, const char *file)
{
    char name[16];
    modelfile_fold_name(fold, name, sizeof name);
    json_object_begin(w);
    json_key(w, "fold");
    if (fold >= 0)
        json_int(w, fold);
    else
        json_str(w, name);
    json_member_str(w, "file", file);
    if (fold == FS_FOLD_ALL) {
        json_member_int(w, "epochs", in->epochs ? in->epochs : in->best_epoch);
        if (in->epochs_rule[0]) json_member_str(w, "epochs_rule", in->epochs_rule);
        if (in->n_fold_best) {
            json_key(w, "fold_best_epochs");
            json_array_begin(w);
            for (int k = 0; k < in->n_fold_best; k++) json_int(w, in->fold_best[k]);
            json_end(w);
        }
    } else {
        json_member_int(w, "best_epoch", in->best_epoch);
        if (isfinite(in->val_q3)) json_key(w, "val_q3"), json_num32_full(w, in->val_q3);
        if (isfinite(in->val_loss)) json_key(w, "val_loss"), json_num32_full(w, in->val_loss);
    }
    json_end(w);
}

/* model.json (docs/models.md, "model.json"): the top level a member a
 * line, the folds a model a line. The trial's leaderboard rank and score
 * are there when the models came from a run folder's ranking; a refit or
 * loose files have none to give. */
static int write_json(const char *dir, const char *run, const FsModelSet *set, const FsEnsemble *e, FsErr *err)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/model.json", dir);
    const FsSavedModel *m0 = &e->m[0];
    int refit = 1;
    for (int i = 0; i < e->n; i++) refit &= e->m[i].info.fold == FS_FOLD_ALL;
    char *arch = modelfile_arch_json(&m0->net);
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL, .pretty = 2, .spaced = 1};
    json_object_begin(&w);
    json_member_str(&w, "format", "foldsweep-export");
    json_member_int(&w, "version", 1);
    json_member_str(&w, "foldsweep_version", FS_VERSION);
    json_member_str(&w, "run", set->run[0] ? set->run : run);
    json_member_str(&w, "trial", set->trial[0] ? set->trial : m0->info.trial);
    json_member_str(&w, "models", refit ? "refit" : "folds");
    if (set->rank > 0) json_member_int(&w, "rank", set->rank);
    if (set->metric[0] && isfinite(set->mean)) {
        json_member_str(&w, "metric", set->metric);
        json_key(&w, "mean");
        json_num64(&w, set->mean);
        json_key(&w, "std");
        json_num64(&w, set->std);
    }
    json_member_int(&w, "window", e->window);
    json_key(&w, "alphabet");
    json_strf(&w, "%sX", FS_AA_LETTERS);
    json_member_str(&w, "classes", "HEC");
    json_key(&w, "data_fingerprint");
    json_strf(&w, "%016llx", (unsigned long long)m0->info.data_fingerprint);
    json_key(&w, "arch");
    json_raw(&w, arch);
    json_key(&w, "config");
    json_raw(&w, m0->info.config); /* the model file's metadata: refused unless it is JSON */
    json_key(&w, "folds");
    json_array_begin(&w);
    for (int i = 0; i < e->n; i++) {
        const FsModelInfo *in = &e->m[i].info;
        const char *base = strrchr(set->path[i], '/');
        /* The set's fold where it knows one (a k-fold run folder), else the file's own. */
        json_model(&w, in, set->fold[i] >= 0 ? set->fold[i] : in->fold, base ? base + 1 : set->path[i]);
    }
    json_end(&w);
    json_end(&w);
    json_tail(&w, "\n");
    free(arch);
    int rc = json_out_error(&w)
                 ? (fs_err_set(err, "%s: not written: %s (the \"config\" metadata of %s is not one JSON value)", path,
                               json_out_error(&w), set->path[0]),
                    -1)
                 : fs_write_file_atomic(path, w.p, w.n, err);
    json_out_free(&w);
    return rc;
}

int cli_export_models(const char *run, const FsModelSet *set, const char *out, FsErr *err)
{
    FsEnsemble *e = fs_calloc(1, sizeof *e);
    int ok = predict_load(e, set, 1, err) == 0 && fs_mkdir_p(out, err) == 0;
    for (int i = 0; ok && i < set->n; i++) {
        /* The bytes that were checked against the journal, as they are. */
        const char *base = strrchr(set->path[i], '/');
        char dst[4400];
        snprintf(dst, sizeof dst, "%s/%s", out, base ? base + 1 : set->path[i]);
        ok = modelfile_copy(set->path[i], dst, err) == 0;
    }
    ok = ok && write_json(out, run, set, e, err) == 0;
    predict_free(e);
    free(e);
    return ok ? 0 : -1;
}

int cli_export(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    uint64_t rank = 1;
    rc = cli_whole_parse(&spec, &a, OPT_RANK, 1, 1000000000, &rank);
    if (!rc && a.val[OPT_TRIAL] && a.val[OPT_RANK]) rc = cli_usage_error(&spec, "give --trial or --rank, not both", NULL);
    if (!rc && !a.val[OPT_OUT]) rc = cli_usage_error(&spec, "missing -o DIR (where to write the models)", NULL);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *run = a.args[0], *out = a.val[OPT_OUT];
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsErr err = {0};
    int ok = predict_find(set, run, a.val[OPT_TRIAL], (int)rank, -1, &err) == 0;
    if (ok && set->rank == 0) ok = (fs_err_set(&err, "%s: expected a run folder (journal.jsonl)", run), 0);
    ok = ok && cli_export_models(run, set, out, &err) == 0;
    if (!ok) cli_error("%s", err.msg);
    else {
        FsMetricKind m = strcmp(set->metric, "loss") ? FS_METRIC_Q3 : FS_METRIC_LOSS;
        char mean[FS_PERCENT_TEXT];
        printf("exported trial %s (rank %d, mean %s %s%s over %d fold%s) to %s\n", set->trial, set->rank, set->metric,
               report_metric_text(mean, sizeof mean, m, set->mean), m == FS_METRIC_Q3 ? "%" : "", set->n,
               set->n == 1 ? "" : "s", out);
    }
    free(set);
    cli_args_free(&a);
    if (ok && cli_output_close(stdout, "standard output") != 0) ok = 0;
    return ok ? FS_EXIT_OK : FS_EXIT_ERROR;
}
