/*
 * status.c: `foldsweep status DIR`. Where a run folder stands, from its
 * journal (read-only) and sweep: trials done, in flight (started, folds
 * still missing) and left, elapsed wall time over the run records (a run
 * record starts each run or resume), an ETA from the pace so far, and the
 * best complete trial. Whether a run is going now is told by the journal's
 * lock. Exit codes as for leaderboard.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "report/report.h"

enum { OPT_HELP };

static const CliOption options[] = {
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "status",
    .usage = "usage: foldsweep status DIR\n",
    .about = "Shows where a run folder stands: trials done, in flight and left, elapsed time,\n"
             "an estimate of the time left, and the best trial so far. Reads DIR/journal.jsonl\n"
             "and DIR/sweep.yaml without changing them: safe while the run goes on.\n",
    .opts = CLI_OPTIONS(options),
    .column = 24,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder DIR",
};
const CliSpec *const cli_status_spec = &spec; /* for cli.c's table */

/* A small text file, or NULL. */
static char *read_small(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = calloc(1, 4096);
    size_t n = buf ? fread(buf, 1, 4095, f) : 0;
    fclose(f);
    if (buf && n == 0) free(buf), buf = NULL;
    return buf;
}

/* The number after "key": in a flat JSON object, or -1. */
static double json_num(const char *js, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(js, pat);
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Wall time covered by the runs: each run record to the last record before
 * the next one (or to now, for the last run while it is going). Without run
 * records, first to last record. *n_runs gets the number of runs. */
static double elapsed(const FsJournal *j, int running, double now, int *n_runs)
{
    int n = j->n_trials + j->n_folds + j->n_failures;
    double *t = malloc(((size_t)n + 1) * sizeof *t);
    int k = 0;
    for (int i = 0; i < j->n_trials; i++) t[k++] = j->trials[i].time;
    for (int i = 0; i < j->n_folds; i++) t[k++] = j->folds[i].time;
    for (int i = 0; i < j->n_failures; i++) t[k++] = j->failures[i].time;
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    double total = 0;
    *n_runs = j->n_runs;
    if (j->n_runs == 0) {
        total = k ? t[k - 1] - t[0] : 0;
        if (running && k) total = now - t[0];
    }
    for (int r = 0; r < j->n_runs; r++) {
        double start = j->runs[r].time;
        double next = r + 1 < j->n_runs ? j->runs[r + 1].time : INFINITY;
        double end = start;
        for (int i = 0; i < k; i++)
            if (t[i] >= start && t[i] < next && t[i] > end) end = t[i];
        if (r == j->n_runs - 1 && running) end = now;
        total += end - start;
    }
    free(t);
    return total;
}

/* The trials of a report by state, and the folds they account for. */
typedef struct {
    int done, flight, ok, diverged, failed, pruned;
    long folds_done;
} StatusCounts;

static void count_trials(const FsReport *rep, StatusCounts *n)
{
    int k = rep->spec.folds;
    memset(n, 0, sizeof *n);
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *r = &rep->rows[i];
        int complete = r->n_done == k || r->status == FS_TRIAL_FAILED || r->status == FS_TRIAL_PRUNED;
        n->done += complete;
        n->flight += !complete;
        n->ok += r->status == FS_TRIAL_OK;
        n->diverged += complete && r->status == FS_TRIAL_DIVERGED;
        n->failed += r->status == FS_TRIAL_FAILED;
        n->pruned += r->status == FS_TRIAL_PRUNED;
        n->folds_done += complete ? k : r->n_done; /* a failed or pruned trial trains no more folds */
    }
}

/* Folds in flight and the ETA. A live run's own view (progress.json,
 * rewritten every 2 s) has both, its ETA from examples trained, known
 * before any fold ends; without it the ETA is the pace of the folds so far. */
static void print_eta(const char *dir, int running, long folds_done, long total_folds, double el)
{
    char pj[4200], eta[32];
    snprintf(pj, sizeof pj, "%s/progress.json", dir);
    char *live = running ? read_small(pj) : NULL;
    double l_eta = live ? json_num(live, "eta_seconds") : -1, l_rate = live ? json_num(live, "examples_per_second") : 0;
    if (live) {
        const char *fl = strstr(live, "\"flight\":\"");
        char what[160] = "";
        if (fl) sscanf(fl + 10, "%159[^\"]", what);
        printf("in flight    %.0f fold%s%s%s%s, %.0f examples/s\n", json_num(live, "in_flight"),
               json_num(live, "in_flight") == 1 ? "" : "s", what[0] ? " (" : "", what, what[0] ? ")" : "", l_rate);
    }
    if (total_folds > 0 && folds_done >= total_folds) {
        printf("eta          finished\n");
    } else if (live && l_eta >= 0) {
        duration(l_eta, eta, sizeof eta);
        printf("eta          %s (examples trained against the most the folds left may take)\n", eta);
    } else if (total_folds > 0 && folds_done > 0 && el > 0) {
        duration((double)(total_folds - folds_done) * el / (double)folds_done, eta, sizeof eta);
        printf("eta          %s at the pace so far%s\n", eta,
               running ? "" : " (no run is going now)");
    } else {
        printf("eta          unknown (no fold finished yet)\n");
    }
    free(live);
}

/* The best complete trial, how often test data was looked at, and a torn
 * last line. */
static void print_best(const FsReport *rep, const FsReportSpec *rs, const FsJournal *j)
{
    if (rep->n_rows && rep->rows[0].status == FS_TRIAL_OK) {
        const FsReportRow *b = &rep->rows[0];
        printf("best so far  %s %s %.4f +- %.4f  %s\n", b->id, report_metric_name(rs->metric),
               b->mean, b->std, b->arch);
    } else {
        printf("best so far  none complete yet\n");
    }
    /* Each look at test data makes the next one less honest: say how many. */
    int by_user = 0, by_test = 0;
    for (int i = 0; i < j->n_evals; i++)
        by_user += !strcmp(j->evals[i].source, "evaluate"), by_test += !strcmp(j->evals[i].source, "test");
    if (j->n_evals)
        printf("test data    looked at %d time%s (%d by foldsweep evaluate, %d by the sweep's test section)\n",
               j->n_evals, j->n_evals == 1 ? "" : "s", by_user, by_test);
    else
        printf("test data    not looked at yet\n");
    if (j->dropped_tail)
        printf("note         the journal's last line is incomplete (being written, or a killed "
               "run)\n");
}

int cli_status(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *dir = a.args[0];
    cli_args_free(&a);
    FsJournal j;
    FsReportSpec rs;
    int from_journal;
    if (cli_folder_read(dir, &j, &rs, &from_journal)) return FS_EXIT_ERROR;
    FsReport rep;
    report_build(&rep, &j, &rs);
    int k = rep.spec.folds;
    StatusCounts n;
    count_trials(&rep, &n);
    int left = rs.n_trials > 0 ? rs.n_trials - n.done - n.flight : -1;
    if (left < 0 && rs.n_trials > 0) left = 0;
    int running = journal_is_locked(dir) == 1;
    double now = (double)time(NULL);
    int n_runs;
    double el = elapsed(&j, running, now, &n_runs);

    printf("run folder   %s%s\n", dir, running ? " (a run is writing it now)" : "");
    if (rs.n_trials > 0)
        printf("sweep        %d trials x %d fold%s, metric %s%s\n", rs.n_trials, k,
               k == 1 ? "" : "s", report_metric_name(rs.metric),
               from_journal ? " (from the journal; no sweep.yaml)" : "");
    printf("trials       %d done (%d ok, %d diverged, %d failed", n.done, n.ok, n.diverged, n.failed);
    if (n.pruned) printf(", %d pruned", n.pruned);
    printf("), %d in flight, ", n.flight);
    if (left >= 0)
        printf("%d left\n", left);
    else
        printf("? left\n");
    long total_folds = rs.n_trials > 0 ? (long)rs.n_trials * k : -1;
    if (total_folds > 0)
        printf("folds        %ld of %ld\n", n.folds_done, total_folds);
    else
        printf("folds        %ld\n", n.folds_done);
    char e[32];
    duration(el, e, sizeof e);
    printf("elapsed      %s over %d run%s\n", e, n_runs, n_runs == 1 ? "" : "s");
    print_eta(dir, running, n.folds_done, total_folds, el);
    print_best(&rep, &rs, &j);
    report_free(&rep);
    journal_close(&j);
    return fflush(stdout) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}
