/*
 * status_out.c: a StatusView (status.h) as text for people and as one
 * JSON object for scripts. The JSON's fields are documented in docs/cli.md;
 * a field that is not known is null, never 0.
 */
#include <math.h>
#include <string.h>

#include "cli/status.h"
#include "json/json.h"
#include "metrics/metrics.h" /* the metric's name */

static const char *const state_names[] = {
    [ST_RUNNING] = "running", [ST_STOPPED] = "stopped", [ST_INTERRUPTED] = "interrupted", [ST_FINISHED] = "finished"};

const char *status_state_name(StatusState s) { return state_names[s]; }

static int going(const StatusView *v) { return v->state == ST_RUNNING || v->state == ST_STOPPED; }

static void duration(double s, char *out, size_t n)
{
    /* Times come from a file: beyond ~3e7 years the conversion to long
     * would overflow (undefined behaviour), so such a value is unknown. */
    if (!(s >= 0) || !isfinite(s) || s > 1e15) {
        snprintf(out, n, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, n, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, n, "%lds", t);
}

static void print_state(FILE *out, const StatusView *v)
{
    fputs("state        ", out);
    switch (v->state) {
    case ST_RUNNING:
        fprintf(out, "running");
        if (v->pid) fprintf(out, " (pid %ld%s%s)", v->pid, v->host[0] ? " on " : "", v->host);
        break;
    case ST_STOPPED:
        fprintf(out, "stopped: the run's process (pid %ld) is suspended and holds the folder; 'kill -CONT %ld' "
                     "(or fg in its shell) lets it go on",
                v->pid, v->pid);
        break;
    case ST_INTERRUPTED:
        /* The canonical DIR/sweep.yaml resumes the training too, but has
         * no test section and no run options: the user's file is better. */
        fprintf(out, "interrupted (no run is going); resume with: %s run ", fs_program());
        fs_put_shell_word(out, v->sweep_file ? v->sweep_file : "SWEEP.yaml");
        fputs(" --out ", out);
        fs_put_shell_word(out, v->dir);
        fputs(v->sweep_file ? "\n             (the file it was started with; "
                            : "\n             (SWEEP.yaml: the file it was started with; ",
              out);
        fs_put_shell_word(out, v->dir);
        fputs("/sweep.yaml also resumes it, --out not needed, but without a test: section or run options)", out);
        break;
    case ST_FINISHED:
        fputs("finished", out);
        break;
    }
    fputc('\n', out);
}

static void print_eta(FILE *out, const StatusView *v)
{
    char eta[32];
    if (v->live)
        fprintf(out, "in flight    %d fold%s%s%s%s, %.0f examples/s\n", v->folds_in_flight,
                v->folds_in_flight == 1 ? "" : "s", v->flight[0] ? " (" : "", v->flight, v->flight[0] ? ")" : "",
                v->rate);
    if (v->live && v->stopping[0]) fprintf(out, "%s\n", v->stopping);
    duration(v->eta, eta, sizeof eta);
    if (v->eta_from && !strcmp(v->eta_from, "finished"))
        fprintf(out, "eta          finished\n");
    else if (v->eta_from && !strcmp(v->eta_from, "examples"))
        fprintf(out, "eta          %s (examples trained against the most the folds left may take)\n", eta);
    else if (v->eta_from)
        fprintf(out, "eta          %s at the pace so far%s\n", eta, going(v) ? "" : " (no run is going now)");
    else
        fprintf(out, "eta          unknown (no fold finished yet)\n");
}

void status_print_text(FILE *out, const StatusView *v)
{
    int k = v->folds;
    fprintf(out, "run folder   %s%s\n", v->dir, v->state == ST_RUNNING ? " (a run is writing it now)" : "");
    print_state(out, v);
    char extended[64] = ""; /* an extended run's latest sweep */
    if (v->versions > 1) snprintf(extended, sizeof extended, ", extended (sweep version %d)", v->versions);
    char folds[48];
    data_folds_text(k, v->repeats, folds, sizeof folds);
    if (v->n_trials > 0)
        fprintf(out, "sweep        %d trial%s x %s, metric %s%s%s\n", v->n_trials, v->n_trials == 1 ? "" : "s", folds,
                metrics_kind_name(v->metric), v->from_journal ? " (from the journal; no sweep.yaml)" : "", extended);
    fprintf(out, "trials       %d done (%d ok, %d diverged, %d failed", v->done, v->ok, v->diverged, v->failed);
    if (v->pruned) fprintf(out, ", %d pruned", v->pruned);
    fprintf(out, "), %d %s, ", v->unfinished, going(v) ? "in flight" : "interrupted");
    if (v->left >= 0)
        fprintf(out, "%d left\n", v->left);
    else
        fprintf(out, "? left\n");
    if (v->folds_total > 0)
        fprintf(out, "folds        %ld of %ld\n", v->folds_done, v->folds_total);
    else
        fprintf(out, "folds        %ld\n", v->folds_done);
    if (v->replicate_folds > 0)
        fprintf(out, "replicates   %ld of %ld seed replicate folds (search.replicates; counted in the folds)\n",
                v->replicate_folds_done, v->replicate_folds);
    char e[32];
    duration(v->elapsed, e, sizeof e);
    fprintf(out, "elapsed      %s over %d run%s\n", e, v->n_runs, v->n_runs == 1 ? "" : "s");
    print_eta(out, v);
    if (v->best) {
        char mean[FS_PERCENT_TEXT], std[FS_PERCENT_TEXT];
        const char *pct = v->metric != FS_METRIC_LOSS ? "%" : ""; /* Q3 for people: percent */
        /* "std", as the leaderboard's column: its "+-95%" is the interval's half width. */
        fprintf(out, "best so far  %s %s %s%s (std %s%s over folds)  %s\n", v->best->id, metrics_kind_name(v->metric),
                report_metric_text(mean, sizeof mean, v->metric, v->best->mean), pct,
                report_metric_text(std, sizeof std, v->metric, v->best->std), pct, v->best->arch);
        if (v->tied >= 0)
            fprintf(out, "tied         %d other trial%s the folds cannot tell from the best (95%%, docs/statistics.md)\n",
                    v->tied, v->tied == 1 ? "" : "s");
    } else {
        fprintf(out, "best so far  none complete yet\n");
    }
    if (v->study.stopped) {
        char study[400];
        run_study_text(&v->study, study, sizeof study);
        fprintf(out, "study        %s\n", study);
    }
    /* Each look at test data makes the next one less honest: say how many. */
    if (v->looks)
        fprintf(out, "test data    looked at %d time%s (%d by foldsweep evaluate, %d by the sweep's test section)\n",
                v->looks, v->looks == 1 ? "" : "s", v->looks_evaluate, v->looks_test);
    else
        fprintf(out, "test data    not looked at yet\n");
    if (v->dropped_tail)
        fprintf(out, "note         the journal's last line is incomplete (being written, or a killed run)\n");
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                    */

/* A number (the shortest text that reads back as it), null when not known. */
static void num(FsJsonOut *w, const char *key, double x, int known)
{
    json_key(w, key);
    if (known)
        json_num64(w, x); /* not finite: null (the writer's nonfinite) */
    else
        json_null(w);
}

static void str(FsJsonOut *w, const char *key, const char *s)
{
    json_key(w, key);
    if (s)
        json_str(w, s);
    else
        json_null(w);
}

static void flag(FsJsonOut *w, const char *key, int v)
{
    json_key(w, key);
    json_bool(w, v);
}

void status_print_json(FILE *out, const StatusView *v)
{
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL};
    json_object_begin(&w);
    str(&w, "run_folder", v->dir);
    str(&w, "state", status_state_name(v->state));
    str(&w, "host", v->host[0] ? v->host : NULL);
    num(&w, "pid", (double)v->pid, v->pid > 0);
    num(&w, "trials_total", v->n_trials, v->n_trials > 0);
    num(&w, "folds_per_trial", v->folds, v->folds > 0);
    str(&w, "metric", metrics_kind_name(v->metric));
    flag(&w, "sweep_from_journal", v->from_journal);
    num(&w, "sweep_versions", v->versions, v->versions > 0);
    num(&w, "trials_done", v->done, 1);
    num(&w, "trials_ok", v->ok, 1);
    num(&w, "trials_diverged", v->diverged, 1);
    num(&w, "trials_failed", v->failed, 1);
    num(&w, "trials_pruned", v->pruned, 1);
    num(&w, "trials_unfinished", v->unfinished, 1);
    num(&w, "trials_left", v->left, v->left >= 0);
    num(&w, "folds_done", (double)v->folds_done, 1);
    num(&w, "folds_total", (double)v->folds_total, v->folds_total > 0);
    num(&w, "replicate_folds_done", (double)v->replicate_folds_done, 1);
    num(&w, "replicate_folds_total", (double)v->replicate_folds, 1);
    num(&w, "folds_in_flight", v->folds_in_flight, v->live);
    num(&w, "elapsed_seconds", v->elapsed, v->elapsed >= 0);
    num(&w, "runs", v->n_runs, 1);
    num(&w, "examples_per_second", v->rate, v->live);
    str(&w, "stopping", v->live && v->stopping[0] ? v->stopping : NULL);
    num(&w, "eta_seconds", v->eta, v->eta_from != NULL);
    str(&w, "eta_from", v->eta_from);
    str(&w, "best_trial", v->best ? v->best->id : NULL);
    num(&w, "best_mean", v->best ? v->best->mean : NAN, v->best != NULL);
    num(&w, "best_std", v->best ? v->best->std : NAN, v->best != NULL);
    str(&w, "best_arch", v->best ? v->best->arch : NULL);
    num(&w, "tied_with_best", v->tied, v->tied >= 0);
    flag(&w, "study_stopped", v->study.stopped);
    num(&w, "trials_not_trained", v->study.budget - v->study.proposed, v->study.stopped);
    num(&w, "test_data_looks", v->looks, 1);
    num(&w, "test_data_looks_evaluate", v->looks_evaluate, 1);
    num(&w, "test_data_looks_test", v->looks_test, 1);
    flag(&w, "journal_tail_incomplete", v->dropped_tail);
    json_end(&w);
    json_tail(&w, "\n");
    FS_ASSERT(!json_out_error(&w)); /* nothing here is refused: unknown values are null */
    fputs(w.p, out);
    json_out_free(&w);
}
