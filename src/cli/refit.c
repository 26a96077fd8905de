/*
 * refit.c: `foldsweep refit RUN [--trial ID | --rank N] [-o DIR] [--threads N]`: a
 * trial's configuration trained on every training protein of the sweep
 * (all folds together) for the median of its folds' best epochs, saved in
 * RUN/refits/ and journaled (rerunning finds it done); -o also exports it
 * as a model folder that predict and evaluate take. It ends with how to
 * check the refit against the fold ensemble (run/refit.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "predict/predict.h"
#include "run/run.h"

enum { OPT_TRIAL, OPT_RANK, OPT_OUT, OPT_THREADS, OPT_HELP };

static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "the trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "the trial at leaderboard rank N (default 1, the best)"},
    [OPT_OUT] = {"--out", "-o", "DIR", "also export the refit model there (with model.json)"},
    [OPT_THREADS] = {"--threads", NULL, "N", "threads on the one model (default: all cores)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "refit",
    .usage = "usage: foldsweep refit RUN [--trial ID | --rank N] [-o DIR] [--threads N]\n",
    .about = "Trains a trial's configuration once more on all of the sweep's training proteins (every\n"
             "fold together, or the predefined training and validation sets). No validation set is\n"
             "left to stop on, so it trains for the median of the trial's folds' best epochs and\n"
             "keeps the last epoch. Deterministic (its seed comes from the sweep, the trial and\n"
             "'all folds'); saved in RUN/refits/<trial>/refit.safetensors and recorded in the\n"
             "journal, so running it again finds it done. Not while a run writes RUN. One model\n"
             "without early stopping can score below the trial's fold ensemble: when done it prints\n"
             "how to check it against the ensemble on held-out proteins (docs/models.md, \"Refit\").\n",
    .opts = CLI_OPTIONS(options),
    .column = 20,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder RUN",
};
const CliSpec *const cli_refit_spec = &spec; /* for cli.c's table */

int cli_refit(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    uint64_t threads = 0;
    int rank;
    rc = cli_trial_parse(&spec, &a, OPT_TRIAL, OPT_RANK, &rank);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_THREADS, 1, 4096, &threads);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    /* The trial as every command finds it (predict_trial_id); the refit
     * then takes its whole id. */
    char file[FS_PATH_IN_DIR], id[FS_TRIAL_ID_LEN + 1];
    FsErr err = {0};
    int ok = predict_trial_id(a.args[0], a.val[OPT_TRIAL], rank, id, sizeof id, &err) == 0;
    if (!ok) cli_error("%s", err.msg);
    ok = ok && run_refit_command(a.args[0], id, (int)threads, file, sizeof file, stdout) == 0;
    if (ok) cli_report_refresh(a.args[0]);
    if (ok && a.val[OPT_OUT]) {
        FsModelSet *set = fs_calloc(1, sizeof *set);
        ok = predict_find(set, file, NULL, 0, -1, &err) == 0 &&
             predict_export(a.args[0], set, a.val[OPT_OUT], &err) == 0;
        if (ok) printf("exported the refit to %s\n", a.val[OPT_OUT]);
        else cli_error("%s", err.msg);
        free(set);
    }
    cli_args_free(&a);
    return ok ? FS_EXIT_OK : FS_EXIT_ERROR;
}
