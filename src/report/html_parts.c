/*
 * html_parts.c: the HTML report's banner (live, incomplete, damaged
 * journal), the time profile (DIR/profile.json: the whole run and its
 * last session; each fold's training speed from the journal), the best trials' confusion matrices, and the
 * run's identity (what produced these numbers).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metrics/metrics.h"
#include "report/html_int.h"

#define TOP_CONFUSION 5


/* A whole small file, or NULL. */
static char *read_text(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = fs_malloc(max + 1);
    size_t n = fread(s, 1, max, f);
    fclose(f);
    s[n] = '\0';
    return s;
}

static int finished(const FsReportRow *r, int k)
{
    return r->n_done >= k || (r->status != FS_TRIAL_OK && r->status != FS_TRIAL_INCOMPLETE &&
                              r->status != FS_TRIAL_DIVERGED);
}

void html_banner(FILE *out, const HtmlDoc *d)
{
    const FsReport *rep = d->rep;
    int k = rep->spec.folds, n = d->info->planned > 0 ? d->info->planned : rep->spec.n_trials, done = 0, cut = 0;
    for (int i = 0; i < rep->n_rows; i++) {
        done += finished(&rep->rows[i], k);
        /* A pruned trial's later folds never train: status counts them settled, so say why they are missing. */
        if (rep->rows[i].status == FS_TRIAL_PRUNED && rep->rows[i].n_done < k) cut += k - rep->rows[i].n_done;
    }
    char now[40];
    html_time(now, sizeof now, d->now);
    int complete = n > 0 && done >= n;
    if (d->info->live)
        fputs("<p class=\"banner live\" id=\"state\" data-state=\"live\"><b>The run is in progress.</b> ", out);
    else if (complete)
        fputs("<p class=\"banner ok\" id=\"state\" data-state=\"complete\"><b>Complete.</b> ", out);
    else
        fputs("<p class=\"banner\" id=\"state\" data-state=\"incomplete\"><b>This run is incomplete.</b> ", out);
    if (n > 0 && cut)
        fprintf(out, "%d of %d trials finished, %d of %d folds recorded and %d not trained: their trials were pruned "
                "(as of %s).", done, n, rep->n_folds_done, n * k, cut, now);
    else if (n > 0)
        fprintf(out, "%d of %d trials finished, %d of %d folds recorded (as of %s).", done, n, rep->n_folds_done, n * k,
                now);
    else
        fprintf(out, "%d trials in the journal; the sweep's trial count is not known (as of %s).", rep->n_rows, now);
    if (d->info->live)
        fprintf(out, " This page reloads itself every 15 s until the run ends.");
    else if (!complete && d->j->read_only && journal_is_locked(d->dir) == 1)
        fputs(" A run is writing this folder now: this page is a snapshot (the run's own report.html reloads itself).",
              out);
    else if (!complete)
        fputs(" Running the same sweep again with <code>foldsweep run</code> resumes it.", out);
    if (d->info->note && d->info->note[0]) {
        fputs(" The study ", out);
        html_esc(out, d->info->note);
        fputs(".", out);
    }
    fputs("</p>\n", out);
    if (d->j->bad_lines) {
        fprintf(out, "<p class=\"banner\">The journal has %ld damaged line%s (the first is line %ld: ", d->j->bad_lines,
                d->j->bad_lines == 1 ? "" : "s", d->j->first_bad_line);
        html_esc(out, d->j->first_bad_why);
        fputs("); they were skipped. <code>foldsweep repair</code> writes a sound journal.</p>\n", out);
    }
    if (d->j->dropped_tail)
        fputs("<p class=\"banner\">The journal's last line is incomplete (a run writing it, or killed); it was "
              "skipped.</p>\n",
              out);
}

/* ---------------------------------------------------------------------- */
/* Time profile                                                            */

static double jnum(const FsJson *root, const char *key)
{
    double v;
    return json_f64(json_get(root, key), &v) == 0 ? v : NAN;
}

/* One profile object of profile.json: the whole run (top level) or a session. */
typedef struct {
    double wall, threads, eps, worker, examples, folds;
} HtmlProfileLine;

static void profile_line(const FsJson *o, HtmlProfileLine *p)
{
    p->wall = jnum(o, "wall_seconds"), p->threads = jnum(o, "threads"), p->eps = jnum(o, "examples_per_second");
    p->worker = jnum(o, "worker_seconds"), p->examples = jnum(o, "train_examples"), p->folds = jnum(o, "folds");
    if (isnan(p->worker)) p->worker = p->wall * p->threads; /* an older foldsweep's profile.json */
}

static void profile_row(FILE *out, const char *name, const HtmlProfileLine *p)
{
    fprintf(out, "<tr><td>%s</td><td class=\"n\">", name);
    html_num(out, "%.2f", p->wall, 1);
    fputs("</td><td class=\"n\">", out);
    html_num(out, "%.2f", p->worker, 1);
    fputs("</td><td class=\"n\">", out);
    html_num(out, "%.0f", p->folds, 1);
    fputs("</td><td class=\"n\">", out);
    html_num(out, "%.0f", p->eps, 1);
    fputs("</td><td class=\"n\">", out);
    html_num(out, "%.0f", p->worker > 0 ? p->examples / p->worker : NAN, 1);
    fputs("</td></tr>\n", out);
}

void html_profile(FILE *out, const HtmlDoc *d)
{
    fputs("<section id=\"profile\"><h2>Time profile</h2>\n<p class=\"why\">Where the run's time went, every session "
          "that trained added up (profile.json, updated when a session of the run ends), the last session beside it, "
          "and how fast each fold trained: training examples per second of the one worker thread that trained "
          "it.</p>\n",
          out);
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/profile.json", d->dir);
    char *text = read_text(path, 1 << 16);
    FsJsonDoc doc;
    double per_thread = NAN;
    if (!text || json_parse(&doc, text, strlen(text), NULL, 0) != 0) {
        html_no_chart(out, text ? "profile.json cannot be read: no profile to show."
                                : "No profile yet: profile.json is written when a session of the run ends.");
    } else {
        static const char *keys[] = {"data_seconds", "train_seconds", "validation_seconds", "journal_seconds",
                                     "idle_seconds"};
        static const char *names[] = {"loading data", "training", "validation", "journal writes", "idle workers"};
        double v[5];
        for (int i = 0; i < 5; i++) v[i] = jnum(doc.root, keys[i]);
        double sessions = jnum(doc.root, "sessions");
        const FsJson *last_o = json_get(doc.root, "last_session");
        HtmlProfileLine run, last;
        profile_line(doc.root, &run);
        profile_line(last_o ? last_o : doc.root, &last);
        if (isnan(sessions)) sessions = 1;
        per_thread = run.worker > 0 ? run.examples / run.worker : NAN;
        struct stat st;
        const FsRunRecord *lr = journal_last_run(d->j);
        if (d->info->live && stat(path, &st) == 0 && lr && (double)st.st_mtime < lr->time)
            fputs("<p class=\"why\">This profile is from the sessions before this one; the running one adds its own "
                  "when it ends.</p>\n",
                  out);
        char title[96];
        snprintf(title, sizeof title, "Time of the whole run (%.0f session%s)", sessions, sessions == 1 ? "" : "s");
        html_chart_bars(out, title, "seconds (training and validation: summed over threads)", 5, names, v, "%.2f",
                        " s");
        fputs("<div class=\"scroll\"><table class=\"profile\"><thead><tr><th></th><th class=\"n\">wall s</th>"
              "<th class=\"n\">worker s</th><th class=\"n\">folds</th><th class=\"n\">training examples/s</th>"
              "<th class=\"n\">per worker thread</th></tr></thead><tbody>\n",
              out);
        profile_row(out, "whole run", &run);
        profile_row(out, "last session", &last);
        fputs("</tbody></table></div>\n<p>", out);
        html_num(out, "Whole run: %.0f training examples per second overall", run.eps, 1);
        html_num(out, " (%.0f sessions); ", sessions, 1);
        html_num(out, "last session: %.0f", last.eps, 1);
        html_num(out, " with %.0f worker threads.</p>\n", last.threads, 1);
        json_free(&doc);
    }
    free(text);
    const FsJournal *j = d->j;
    double t0 = j->n_runs ? j->runs[0].time : (j->n_folds ? j->folds[0].time : 0), span = 0;
    for (int i = 0; i < j->n_folds; i++) span = fmax(span, j->folds[i].time - t0);
    /* The x axis in the unit that suits the run's length. */
    double unit = span < 120 ? 1 : span < 7200 ? 60 : 3600;
    char xlabel[96];
    snprintf(xlabel, sizeof xlabel, "%s since the run began (when the fold was recorded)",
             unit == 1 ? "seconds" : unit == 60 ? "minutes" : "hours");
    double *x = fs_calloc((size_t)j->n_folds + 1, sizeof *x), *y = fs_calloc((size_t)j->n_folds + 1, sizeof *y);
    for (int i = 0; i < j->n_folds; i++) {
        const FsFitResult *r = &j->folds[i].r;
        double s = r->seconds - r->val_seconds;
        x[i] = (j->folds[i].time - t0) / unit;
        y[i] = s > 0 && r->train_examples ? (double)r->train_examples / s : NAN;
    }
    html_chart_scatter(out, "Training examples per second per worker thread, one dot per fold", xlabel,
                       "examples per second", j->n_folds, x, y, per_thread,
                       "the run's mean per worker thread, idle time included");
    free(x), free(y);
    fputs("</section>\n", out);
}

/* ---------------------------------------------------------------------- */
/* Confusion                                                                */

static void confusion_one(FILE *out, const FsReportRow *r, double q3)
{
    const FsMetrics m = r->pooled; /* the folds pooled (report.c) */
    const uint64_t(*c)[FS_MAX_CLASSES] = m.confusion;
    const int K = m.classes;
    const char *letters = fs_class_letters(K);
    fprintf(out, "<div><h3>#%d <a href=\"#t-", r->rank);
    html_esc(out, r->id);
    fputs("\"><code>", out);
    html_esc(out, r->id);
    if (K == FS_CLASSES8) /* an 8-state trial: its Q8, and Q3 of the 8-state predictions reduced */
        fprintf(out, "</code></a> &middot; Q8 %s%% &middot; Q3 %s%%</h3>\n", fs_percent_text(r->q8_mean),
                fs_percent_text(r->q3_mean));
    else
        fprintf(out, "</code></a> &middot; Q3 %s%%</h3>\n", fs_percent_text(q3));
    fputs("<table class=\"cm\"><thead><tr><th>true \\ predicted</th>", out);
    for (int b = 0; b < K; b++) fprintf(out, "<th>%c</th>", letters[b]);
    fputs("</tr></thead><tbody>\n", out);
    for (int a = 0; a < K; a++) {
        uint64_t row = 0;
        for (int b = 0; b < K; b++) row += c[a][b];
        fprintf(out, "<tr><th>%c (%s)</th>", letters[a], fs_class_name(K, a));
        for (int b = 0; b < K; b++) {
            double share = row ? (double)c[a][b] / (double)row : 0;
            fprintf(out, "<td%s style=\"background:rgba(0,114,178,%.2f)\">%llu<br><small>%.1f%%</small></td>",
                    share > 0.55 ? " class=\"dark\"" : "", share * 0.9, (unsigned long long)c[a][b], share * 100);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n<table><thead><tr><th>class</th><th class=\"n\">precision</th><th class=\"n\">recall</th>"
          "<th class=\"n\">MCC</th></tr></thead><tbody>\n",
          out);
    for (int a = 0; a < K; a++)
        fprintf(out,
                "<tr><td>%c (%s)</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td></tr>\n",
                letters[a], fs_class_name(K, a), m.precision[a], m.recall[a], m.mcc[a]);
    fputs("</tbody></table></div>\n", out);
}

void html_confusion(FILE *out, const HtmlDoc *d)
{
    fprintf(out, "<section id=\"confusion\"><h2>Confusion of the best trials</h2>\n<p class=\"why\">The %d best "
                 "complete trials: true against predicted class on the validation residues of every fold at its kept "
                 "epoch (folds pooled; shading is the row's share), and per-class precision, recall and Matthews "
                 "correlation (MCC).</p>\n<div class=\"cms\">",
            TOP_CONFUSION);
    int shown = 0;
    for (int i = 0; i < d->rep->n_rows && shown < TOP_CONFUSION; i++)
        if (isfinite(d->q3[i])) confusion_one(out, &d->rep->rows[i], d->q3[i]), shown++;
    fputs("</div>\n", out);
    if (!shown) html_no_chart(out, "No trial is complete yet.");
    fputs("</section>\n", out);
}

/* ---------------------------------------------------------------------- */
/* Identity                                                                 */

static void dt(FILE *out, const char *name) { fprintf(out, "<dt>%s</dt><dd>", name); }

void html_identity(FILE *out, const HtmlDoc *d)
{
    const FsJournal *j = d->j;
    const FsReportHtmlInfo *in = d->info;
    const FsRunRecord *last = journal_last_run(j);
    const FsReportSpec *sp = &d->rep->spec;
    fputs("<section id=\"identity\"><h2>Run</h2>\n<p class=\"why\">What produced these results: the sweep, the "
          "data, the program and the machines (from the run folder and its journal).</p>\n<dl class=\"id\">",
          out);
    dt(out, "run folder");
    fputs("<code>", out);
    html_esc(out, d->dir);
    fputs("</code></dd>", out);
    dt(out, "sweep file");
    if (in->sweep_path) {
        fputs("<code>", out);
        html_esc(out, in->sweep_path);
        fputs("</code>; ", out);
    }
    fputs("canonical copy <code>sweep.yaml</code> in the run folder (below)</dd>", out);
    dt(out, "data fingerprint");
    if (last && last->data_fingerprint) fprintf(out, "<code>%016llx</code>", (unsigned long long)last->data_fingerprint);
    else fputs("not recorded", out);
    fputs("</dd>", out);
    dt(out, "trials");
    fprintf(out, "%d in the sweep, %d in the journal; ", sp->n_trials, d->rep->n_rows);
    if (sp->predefined) fputs("the data's own validation split", out);
    else fprintf(out, "%d folds", sp->folds);
    fprintf(out, "; ranked by %s</dd>", metrics_kind_name(sp->metric));
    dt(out, "foldsweep");
    fprintf(out, "version %s (the one that wrote this report)</dd>", FS_VERSION);
    dt(out, "machine");
    for (int i = 0, shown = 0; i < j->n_runs; i++) {
        int dup = 0;
        for (int k = 0; k < i; k++) dup |= !strcmp(j->runs[k].host, j->runs[i].host);
        if (dup) continue;
        if (shown++) fputs(", ", out);
        html_esc(out, j->runs[i].host);
    }
    if (!j->n_runs) fputs("not recorded", out);
    fputs("</dd>", out);
    /* The last session's (its run record; a journal of an earlier foldsweep has none). */
    dt(out, "ranks");
    if (last && last->ranks > 0) fprintf(out, "%d MPI rank%s", last->ranks, last->ranks == 1 ? "" : "s");
    else fputs("not recorded in the journal (an earlier foldsweep's run)", out);
    if (in->threads > 0) fprintf(out, ", %d worker thread%s in all", in->threads, in->threads == 1 ? "" : "s");
    fputs("</dd>", out);
    dt(out, "backend");
    if (last && last->backend[0]) {
        html_esc(out, last->backend);
        if (last->device[0] && strcmp(last->device, last->backend)) {
            fputs(" (rank 0: ", out);
            html_esc(out, last->device);
            fputs(")", out);
        }
    } else {
        fputs("not recorded in the journal (an earlier foldsweep's run)", out);
    }
    fputs("</dd>", out);
    dt(out, "sessions");
    char t[40];
    for (int i = 0; i < j->n_runs; i++) {
        html_time(t, sizeof t, j->runs[i].time);
        const FsRunRecord *r = &j->runs[i];
        fprintf(out, "%s%s (pid %ld", i ? "; " : "", t, r->pid);
        if (r->ranks > 0) fprintf(out, ", %d rank%s", r->ranks, r->ranks == 1 ? "" : "s");
        if (r->backend[0]) fputs(", ", out), html_esc(out, r->backend);
        fputs(")", out);
    }
    if (!j->n_runs) fputs("none recorded", out);
    fputs("</dd></dl>\n", out);
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/sweep.yaml", d->dir);
    char *yaml = read_text(path, 1 << 20);
    fputs("<details><summary>canonical sweep (sweep.yaml)</summary><pre id=\"sweep-yaml\">", out);
    html_esc(out, yaml ? yaml : "(sweep.yaml is missing from the run folder)");
    fputs("</pre></details>\n</section>\n", out);
    free(yaml);
}
