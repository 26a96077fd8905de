/*
 * status.c: `foldsweep status DIR [--json] [--watch [S]]`. Where a run
 * folder stands, from its journal (read-only) and sweep: trials done,
 * unfinished and left, elapsed wall time over the run records (a run record
 * starts each run or resume), an ETA, and the best complete trial. Whether
 * a run is going is told by the journal's lock, and whether its process is
 * suspended by /proc (the run record names it); without a run going, begun
 * trials are interrupted, not in flight. --watch redraws until the run
 * ends. Shown by status_out.c. Exit codes as for leaderboard.
 */
#define _GNU_SOURCE /* sigaction, nanosleep, gethostname */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/status.h"
#include "json/json.h"

enum { OPT_JSON, OPT_WATCH, OPT_HELP };

#define WATCH_DEFAULT 2.0 /* seconds: how often a run rewrites progress.json */

static const CliOption options[] = {
    [OPT_JSON] = {"--json", NULL, NULL, "one JSON object (fields: docs/cli.md); with --watch, one a line"},
    [OPT_WATCH] = {"--watch", NULL, "S", "redraw every S seconds (default 2) until no run is going;\n"
                                         "Ctrl-C ends it", 1},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "status",
    .usage = "usage: foldsweep status DIR [--json] [--watch [S]]\n",
    .about = "Shows where a run folder stands: whether a run is going (running, stopped, interrupted or\n"
             "finished, and how to resume), trials done, in flight and left, elapsed time, an\n"
             "estimate of the time left, and the best trial so far. Reads DIR/journal.jsonl and\n"
             "DIR/sweep.yaml without changing them: safe while the run goes on.\n",
    .opts = CLI_OPTIONS(options),
    .column = 24,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder DIR",
};
const CliSpec *const cli_status_spec = &spec; /* for cli.c's table */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Wall time covered by the runs: each run record to the last record before
 * the next one (or to now, for the last run while it is going). Without run
 * records, first to last record. */
static double elapsed(const FsJournal *j, int running, double now)
{
    int n = j->n_trials + j->n_folds + j->n_failures;
    double *t = malloc(((size_t)n + 1) * sizeof *t);
    int k = 0;
    for (int i = 0; i < j->n_trials; i++) t[k++] = j->trials[i].time;
    for (int i = 0; i < j->n_folds; i++) t[k++] = j->folds[i].time;
    for (int i = 0; i < j->n_failures; i++) t[k++] = j->failures[i].time;
    qsort(t, (size_t)k, sizeof *t, cmp_double);
    double total = 0;
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

static void count_trials(const FsReport *rep, StatusView *v)
{
    int k = rep->spec.folds;
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *r = &rep->rows[i];
        int complete = r->n_done == k || r->status == FS_TRIAL_FAILED || r->status == FS_TRIAL_PRUNED;
        v->done += complete;
        v->unfinished += !complete;
        v->ok += r->status == FS_TRIAL_OK;
        v->diverged += complete && r->status == FS_TRIAL_DIVERGED;
        v->failed += r->status == FS_TRIAL_FAILED;
        v->pruned += r->status == FS_TRIAL_PRUNED;
        v->folds_done += complete ? k : r->n_done; /* a failed or pruned trial trains no more folds */
    }
}

/* 1 if process pid on this machine is suspended (state T or t in
 * /proc/PID/stat); 0 if it is not, or cannot be told. */
static int process_stopped(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name, in parentheses, may hold anything */
    return p && (p[2] == 'T' || p[2] == 't');
}

/* The lock says whether a run is going; the last run record names its
 * process, which may be suspended (a lock held by nobody working). */
static StatusState state_of(const char *dir, const FsJournal *j, StatusView *v)
{
    const FsRunRecord *run = journal_last_run(j);
    if (run) {
        snprintf(v->host, sizeof v->host, "%s", run->host);
        v->pid = run->pid;
        if (run->sweep_file[0] && access(run->sweep_file, R_OK) == 0) v->sweep_file = run->sweep_file;
    }
    if (journal_is_locked(dir) == 1) {
        char host[64] = "";
        if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
        if (run && run->pid > 0 && !strcmp(host, run->host) && process_stopped(run->pid)) return ST_STOPPED;
        return ST_RUNNING;
    }
    return v->left == 0 && v->unfinished == 0 && v->n_trials > 0 && v->replicate_folds_done >= v->replicate_folds
               ? ST_FINISHED
               : ST_INTERRUPTED;
}

/* A live run's own view (DIR/progress.json, rewritten every 2 s): the folds
 * in flight, the rate and an ETA from examples trained, known before any
 * fold ends. */
static void read_live(const char *dir, StatusView *v)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/progress.json", dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    FsJsonDoc doc;
    if (json_parse(&doc, text, n, NULL, 0) != 0) return; /* being replaced: the next look has it */
    double in_flight, rate, eta;
    const FsJson *fl = json_get(doc.root, "flight");
    if (json_f64(json_get(doc.root, "in_flight"), &in_flight) == 0 &&
        json_f64(json_get(doc.root, "examples_per_second"), &rate) == 0 &&
        json_f64(json_get(doc.root, "eta_seconds"), &eta) == 0) {
        v->live = 1;
        v->folds_in_flight = in_flight >= 0 && in_flight < 1e9 ? (int)in_flight : 0;
        v->rate = rate;
        if (fl && fl->type == FS_JSON_STRING) snprintf(v->flight, sizeof v->flight, "%s", fl->str);
        const FsJson *st = json_get(doc.root, "stopping");
        if (st && st->type == FS_JSON_STRING) snprintf(v->stopping, sizeof v->stopping, "%s", st->str);
        if (eta >= 0) v->eta = eta, v->eta_from = "examples";
    }
    json_free(&doc);
}

/* The view of dir now; 0, or -1 with the error printed. rep keeps the
 * strings v->best borrows: report_free it (and close j) after showing. */
static int gather(const char *dir, StatusView *v, FsJournal *j, FsReport *rep)
{
    FsReportFolder f;
    memset(v, 0, sizeof *v);
    v->dir = dir;
    if (cli_folder_read(dir, j, &f)) return -1;
    cli_folder_study(&f, j, &v->study); /* search.stop, replayed as the run decided it */
    FsReportSpec rs = f.spec;
    rs.sweep = NULL; /* status needs no swept options */
    v->from_journal = f.from_journal;
    report_build(rep, j, &rs);
    v->n_trials = rs.n_trials;
    v->folds = rep->spec.folds;
    v->repeats = rep->spec.repeats;
    v->metric = rs.metric;
    v->versions = j->n_sweep_versions;
    count_trials(rep, v);
    /* A study search.stop ended trains only what it proposed. */
    const int planned = v->study.stopped ? v->study.proposed : rs.n_trials;
    v->left = planned > 0 ? planned - v->done - v->unfinished : -1;
    if (v->left < 0 && planned > 0) v->left = 0;
    v->folds_total = planned > 0 ? (long)planned * v->folds : -1;
    /* search.replicates: their folds count with the sweep's own. */
    if (f.has_sweep) {
        FsFolds folds = data_folds_of(rs.predefined, rs.folds);
        run_replicates_count(&f.sweep, j, &folds, v->left == 0 && v->unfinished == 0, &v->replicate_folds,
                             &v->replicate_folds_done);
    }
    report_folder_free(&f);
    v->folds_done += v->replicate_folds_done;
    if (v->folds_total > 0) v->folds_total += v->replicate_folds;
    v->state = state_of(dir, j, v);
    int going = v->state == ST_RUNNING || v->state == ST_STOPPED;
    v->elapsed = elapsed(j, going, (double)time(NULL));
    v->n_runs = j->n_runs;
    v->eta = NAN;
    if (going) read_live(dir, v);
    if (v->folds_total > 0 && v->folds_done >= v->folds_total)
        v->eta = 0, v->eta_from = "finished";
    else if (!v->eta_from && v->folds_total > 0 && v->folds_done > 0 && v->elapsed > 0)
        v->eta = (double)(v->folds_total - v->folds_done) * v->elapsed / (double)v->folds_done, v->eta_from = "pace";
    if (rep->n_rows && rep->rows[0].status == FS_TRIAL_OK) v->best = &rep->rows[0];
    v->tied = v->best && v->best->tied == 1 ? 0 : -1;
    for (int i = 1; v->tied >= 0 && i < rep->n_rows; i++) v->tied += rep->rows[i].tied == 1;
    for (int i = 0; i < j->n_evals; i++) {
        v->looks_evaluate += !strcmp(j->evals[i].source, "evaluate");
        v->looks_test += !strcmp(j->evals[i].source, "test");
    }
    v->looks = j->n_evals;
    v->dropped_tail = j->dropped_tail;
    return 0;
}

/* One look: gathered, shown, released (frame: its number under --watch,
 * -1 without). 0, or -1 (error printed); *going gets whether a run is going. */
static int show(const char *dir, int json, int frame, int tty, int *going)
{
    StatusView v;
    FsJournal j;
    FsReport rep;
    if (gather(dir, &v, &j, &rep) != 0) return -1;
    int watching = frame >= 0;
    if (watching && tty && !json)
        fputs("\033[H\033[2J", stdout); /* each frame on a clear screen, as watch(1) */
    else if (frame > 0 && !json)
        fputc('\n', stdout);
    if (json)
        status_print_json(stdout, &v);
    else
        status_print_text(stdout, &v);
    *going = v.state == ST_RUNNING || v.state == ST_STOPPED;
    report_free(&rep);
    journal_close(&j);
    return cli_output_close(stdout, "standard output");
}

static volatile sig_atomic_t watch_stop;

static void on_stop(int sig)
{
    (void)sig;
    watch_stop = 1;
}

/* Redraws every `every` seconds while a run is going; the first frame
 * without one is the last. Ctrl-C (or SIGTERM) ends it after a whole frame. */
static int watch(const char *dir, int json, double every)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* a write of a frame is not cut short */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int tty = isatty(STDOUT_FILENO), going = 1;
    for (int frame = 0; !watch_stop; frame++) {
        if (show(dir, json, frame, tty, &going) != 0) return FS_EXIT_ERROR;
        if (!going) break;
        for (double slept = 0; slept < every && !watch_stop; slept += 0.05) {
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return FS_EXIT_OK;
}

int cli_status(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *dir = a.args[0], *w = a.val[OPT_WATCH];
    int json = a.val[OPT_JSON] != NULL;
    double every = WATCH_DEFAULT;
    rc = 0;
    if (w && strcmp(w, options[OPT_WATCH].name)) rc = cli_real_parse(&spec, &a, OPT_WATCH, 0.1, 86400, &every);
    cli_args_free(&a);
    if (rc) return rc;
    if (w) return watch(dir, json, every);
    int going;
    return show(dir, json, -1, 0, &going) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}
