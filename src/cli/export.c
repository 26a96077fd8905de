/*
 * export.c: `foldsweep export RUN [--trial ID | --rank N] -o DIR`: one
 * trial's fold models out of a run folder (or with --top K the K best
 * trials' of one or more), with a model.json that says what they are,
 * ready for `predict` or PyTorch (the folder's format is predict's:
 * predict_export).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "predict/predict.h"
#include "report/report.h"

enum { OPT_TRIAL, OPT_RANK, OPT_TOP, OPT_OUT, OPT_HELP };

static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "the trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "the trial at leaderboard rank N (default 1, the best)"},
    [OPT_TOP] = {"--top", NULL, "K", "the K best trials' fold models as one ensemble, ranked\n"
                                     "over every run folder given"},
    [OPT_OUT] = {"--out", "-o", "DIR", "the folder to write (created; files in it are replaced)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "export",
    .usage = "usage: foldsweep export RUN [--trial ID | --rank N] -o DIR\n"
             "       foldsweep export RUN... --top K -o DIR\n",
    .about = "Copies a trial's fold models (safetensors, loadable in PyTorch with\n"
             "python/foldsweep_torch.py) out of a run folder into DIR, with DIR/model.json\n"
             "describing them. `foldsweep predict DIR INPUT` then predicts with them.\n",
    .opts = CLI_OPTIONS(options),
    .column = 20,
    .max_args = -1,
    .no_arg = "missing the run folder RUN",
};
const CliSpec *const cli_export_spec = &spec; /* for cli.c's table */

int cli_export(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    int rank, top = 0;
    static const int others[] = {OPT_TRIAL, OPT_RANK, -1};
    rc = cli_trial_parse(&spec, &a, OPT_TRIAL, OPT_RANK, &rank);
    if (!rc) rc = cli_top_parse(&spec, &a, OPT_TOP, others, FS_PREDICT_MAX_MODELS, &top);
    if (!rc && a.n_args > 1 && !top)
        rc = cli_usage_error(&spec, "one run folder only (several with --top K); extra argument:", a.args[1]);
    if (!rc && !a.val[OPT_OUT]) rc = cli_usage_error(&spec, "missing -o DIR (where to write the models)", NULL);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *run = a.args[0], *out = a.val[OPT_OUT];
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsErr err = {0};
    int ok = top ? predict_top_find(set, (const char *const *)a.args, a.n_args, top, &err) == 0
                 : predict_find(set, run, a.val[OPT_TRIAL], rank, -1, &err) == 0;
    char abs[2048];
    if (ok && (set->rank == 0 || !predict_run_dir(run, abs, sizeof abs)))
        ok = (fs_err_set(&err, "%s: expected a run folder (journal.jsonl)", run), 0);
    ok = ok && predict_export(run, set, out, &err) == 0;
    if (!ok) cli_error("%s", err.msg);
    else if (top) {
        printf("exported the %d best trials (%d models; the best %s, rank %d of %s) to %s\n", top, set->n, set->trial,
               set->rank, set->runs[0], out);
    } else {
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
