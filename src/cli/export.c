/*
 * export.c: `foldsweep export RUN [--trial ID | --rank N] -o DIR`: one
 * trial's fold models out of a run folder, with a model.json that says
 * what they are, ready for `predict` or PyTorch (the folder's format is
 * predict's: predict_export).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "predict/predict.h"
#include "report/report.h"

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

int cli_export(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    int rank;
    rc = cli_trial_parse(&spec, &a, OPT_TRIAL, OPT_RANK, &rank);
    if (!rc && !a.val[OPT_OUT]) rc = cli_usage_error(&spec, "missing -o DIR (where to write the models)", NULL);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    const char *run = a.args[0], *out = a.val[OPT_OUT];
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsErr err = {0};
    int ok = predict_find(set, run, a.val[OPT_TRIAL], rank, -1, &err) == 0;
    if (ok && set->rank == 0) ok = (fs_err_set(&err, "%s: expected a run folder (journal.jsonl)", run), 0);
    ok = ok && predict_export(run, set, out, &err) == 0;
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
