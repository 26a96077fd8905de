/*
 * html.c: the run as a picture. One self-contained HTML file (inline CSS,
 * inline SVG charts, a few lines of plain JavaScript for sorting the
 * leaderboard; nothing fetched from the network): the leaderboard, the
 * test set's results (apart from the ranking), each trial's learning
 * curves, parameter effects, the time profile, the best trials' confusion
 * matrices and the run's identity. Every string that
 * comes from a file (paths, configs, host names, failure messages) goes
 * through html_esc.
 *
 * The runner writes DIR/report.html after each finished trial (live: the
 * page reloads itself) and when it ends; `foldsweep report` writes it on
 * demand. Identity, profile and confusion sections are in html_parts.c,
 * the test set in html_test.c, the charts in html_svg.c, trial scores with
 * their intervals (the leaderboard's chart, strip plots) in html_strip.c,
 * the Pareto front in html_pareto.c, parameter effects in html_effects.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data.h" /* the fold vocabulary */
#include "report/html_int.h"

#define LIVE_RELOAD_SECONDS 15
#define OPEN_TRIALS 3 /* the best trials' sections start open */

static const char *CSS =
    ":root{--fg:#1b1b1b;--muted:#555;--line:#d0d0d0}"
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);background:#fff;"
    "margin:0 auto;max-width:1100px;padding:0 16px 48px}"
    "h1{font-size:1.5em;margin:.8em 0 .1em}h2{font-size:1.25em;margin:1.8em 0 .2em;border-bottom:1px solid var(--line)}"
    "h3{font-size:1.02em;margin:1.2em 0 .3em}p.why{color:var(--muted);margin:.1em 0 .8em}p.sub{color:var(--muted);margin:0}"
    "nav{margin:.6em 0}nav a{margin-right:1em;white-space:nowrap}"
    ".banner{padding:.6em .8em;margin:.8em 0;border-left:5px solid #E69F00;background:#fff6e3}"
    ".banner.live{border-color:#0072B2;background:#edf5fb}.banner.ok{border-color:#009E73;background:#ecf8f4}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.88em}"
    "th,td{padding:.25em .5em;border-bottom:1px solid #eee;text-align:left;vertical-align:top}"
    "td.n,th.n,table.folds td:nth-child(n+5),table.folds th:nth-child(n+5),table.folds td:nth-child(3)"
    "{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer;color:inherit}"
    "th[aria-sort=ascending] button::after{content:' \\25B2'}th[aria-sort=descending] button::after{content:' \\25BC'}"
    "tr.bad td.st{font-weight:600;color:#B34700}td.reason{max-width:28em}tr.tied td{background:#EEF4FB}"
    "dl.id{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dl.id dt{color:var(--muted)}dl.id dd{margin:0;"
    "word-break:break-word}figure{margin:.6em 0;overflow-x:auto}"
    "svg.chart{width:100%;max-width:760px;min-width:440px;height:auto;display:block}"
    "svg text{font-family:inherit}.tick{font-size:11px;fill:#333}.label{font-size:12px;fill:#111}"
    ".legend{font-size:11px;fill:#111}.ctitle{font-size:13px;font-weight:600}.note{font-size:10px;fill:#555}"
    ".grid{stroke:#e6e6e6;fill:none}.axis{stroke:#888}"
    ".series{fill:none;stroke-width:1.7;vector-effect:non-scaling-stroke;stroke-linecap:round;stroke-linejoin:round}"
    /* No stroke colour for the series: each path carries its fold's shade. */
    ".series.train{stroke-dasharray:6 3}.series.q3{stroke-dasharray:2 2}.kept{fill:none;stroke:#000;stroke-width:1.5}"
    ".stop{stroke:#CC79A7;stroke-width:2;stroke-dasharray:4 3}.pruned{stroke:#000;stroke-width:2;stroke-dasharray:1 3}.diverged{font-size:13px}"
    ".dot{fill:#0072B2;fill-opacity:.6;stroke:#fff;stroke-width:.6}.mean{stroke:#000;stroke-width:2.5}"
    /* Tied with the best and on the front: a fill and a black outline of their own. */
    ".dot.tied{fill:#E69F00;fill-opacity:.95;stroke:#000;stroke-width:1}.ci{stroke:#555;stroke-width:1.3}"
    ".effect-ci{stroke:#000;stroke-width:3}.dot.front{fill:#D55E00;fill-opacity:1;stroke:#000;stroke-width:1}"
    ".front-line{fill:none;stroke:#D55E00;stroke-width:1.8}"
    ".bar{fill:#56B4E9}.ref{stroke:#D55E00;stroke-width:1.5;stroke-dasharray:5 3}"
    "details.trial{border-top:1px solid #eee;padding:.3em 0}details.trial>summary{cursor:pointer}"
    "pre{white-space:pre-wrap;word-break:break-all;font-size:.8em;background:#f5f5f5;padding:.5em;max-height:30em;"
    "overflow:auto}p.nochart{font-style:italic;color:var(--muted)}.cms{display:flex;flex-wrap:wrap;gap:1.5em}"
    "table.cm td{text-align:center;min-width:4.5em}table.cm td.dark{color:#fff}"
    "td.data{max-width:18em;word-break:break-all}"
    "@media (max-width:600px){body{font-size:14px;padding:0 8px}th,td{padding:.2em .3em;white-space:nowrap}}";

/* Script errors land in an attribute of <html>, so a test reading the DOM
 * (or a user's inspector) sees them; it goes first so it hears the rest. */
static const char *JS_HEAD =
    "(function(){var e=[];function note(m){e.push(String(m));"
    "document.documentElement.setAttribute('data-js-errors',e.join(' | '));}"
    "window.addEventListener('error',function(ev){note(ev.message||'error');});"
    "window.addEventListener('unhandledrejection',function(ev){note(ev.reason);});"
    "var ce=console.error;console.error=function(){note(Array.prototype.join.call(arguments,' '));"
    "return ce.apply(console,arguments);};})();";

/* Sorting by any column (numbers by data-v, missing values last) and
 * opening a trial's section when a link names it. */
static const char *JS_TAIL =
    "(function(){function key(c){var v=c.getAttribute('data-v');return v===null?c.textContent:v;}"
    "function sort(t,i,th){var asc=th.getAttribute('aria-sort')!=='ascending',b=t.tBodies[0],"
    "r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){var a=key(x.cells[i]),c=key(y.cells[i]);"
    "if(a===''||c==='')return a===c?0:(a===''?1:-1);var p=parseFloat(a),q=parseFloat(c);"
    "var d=(!isNaN(p)&&!isNaN(q))?p-q:a.localeCompare(c);return asc?d:-d;});"
    "r.forEach(function(x){b.appendChild(x);});"
    "Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h){h.removeAttribute('aria-sort');});"
    "th.setAttribute('aria-sort',asc?'ascending':'descending');}"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){"
    "Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th,i){var b=th.querySelector('button');"
    "if(b)b.addEventListener('click',function(){sort(t,i,th);});});});"
    "function openHash(){var el=location.hash&&document.getElementById(location.hash.slice(1));"
    "if(el&&el.tagName==='DETAILS'){el.open=true;el.scrollIntoView();}}"
    "window.addEventListener('hashchange',openHash);openHash();"
    "document.documentElement.setAttribute('data-js-ready','1');})();";

static double row_q3(const FsReport *rep, const FsReportRow *row)
{
    if (row->status != FS_TRIAL_OK || row->n_done < rep->spec.folds) return NAN;
    double s = 0;
    int n = 0;
    for (int k = 0; k < rep->spec.folds; k++)
        if (row->folds[k].present && isfinite(row->folds[k].q3)) s += row->folds[k].q3, n++;
    return n ? s / n : NAN;
}

static int row_bad(const FsReportRow *row) { return row->status != FS_TRIAL_OK && row->status != FS_TRIAL_INCOMPLETE; }

static void fold_label(const FsReport *rep, const FsReportFold *f, char *buf, size_t n)
{
    if (rep->spec.predefined || f->fold == FS_FOLD_PREDEFINED) snprintf(buf, n, "validation split");
    else snprintf(buf, n, "fold %d", f->fold);
}

/* ---------------------------------------------------------------------- */
/* Leaderboard                                                              */

static void th(FILE *out, const char *name, int num)
{
    fprintf(out, "<th%s><button type=\"button\">%s</button></th>", num ? " class=\"n\"" : "", name);
}

/* A number's cell: sorted by its value, shown as the metric is. */
static void metric_cell(FILE *out, const FsReport *rep, double v)
{
    char num[FS_PERCENT_TEXT];
    fputs("<td class=\"n\" data-v=\"", out);
    if (!isnan(v)) fprintf(out, "%.9g", v);
    fprintf(out, "\">%s</td>", report_metric_text(num, sizeof num, rep->spec.metric, v));
}

/* The mean, "(n/k)" after it when over fewer than the k folds (a pruned
 * or incomplete trial's): sorted by its value all the same. */
static void mean_cell(FILE *out, const FsReport *rep, const FsReportRow *r)
{
    char num[FS_PERCENT_TEXT];
    fputs("<td class=\"n\" data-v=\"", out);
    if (!isnan(r->mean)) fprintf(out, "%.9g", r->mean);
    fprintf(out, "\">%s", report_metric_text(num, sizeof num, rep->spec.metric, r->mean));
    if (isfinite(r->mean) && r->n_mean < rep->spec.folds)
        fprintf(out, " <span class=\"part\" title=\"over %d of the %d folds\">(%d/%d)</span>", r->n_mean,
                rep->spec.folds, r->n_mean, rep->spec.folds);
    fputs("</td>", out);
}

/* vs best: the difference to rank 1 (percentage points for Q3) and its
 * interval's half-width, sorted by the difference. */
static void diff_cell(FILE *out, const FsReport *rep, const FsReportRow *r)
{
    const double d = r->diff, h = 0.5 * (r->diff_hi - r->diff_lo);
    fputs("<td class=\"n\" data-v=\"", out);
    if (!isfinite(d) || !isfinite(h)) {
        fputs("\">-</td>", out);
        return;
    }
    fprintf(out, "%.9g\">", d);
    if (rep->spec.metric == FS_METRIC_LOSS) fprintf(out, "%+.4f &plusmn;%.4f</td>", d, h);
    else fprintf(out, "%s%s &plusmn;%s</td>", d < 0 ? "&minus;" : "+", fs_percent_text(fabs(d)), fs_percent_text(h));
}

static void leaderboard(FILE *out, const FsReport *rep)
{
    int loss = rep->spec.metric == FS_METRIC_LOSS, q8 = rep->spec.metric == FS_METRIC_Q8;
    fputs("<section id=\"leaderboard\"><h2>Leaderboard</h2>\n<p class=\"why\">Trials ranked by the mean validation ", out);
    fputs(loss ? "loss over folds (lower first)" : q8 ? "Q8 over folds (higher first)" : "Q3 over folds (higher first)",
          out);
    fprintf(out, "; incomplete, pruned, diverged and failed trials follow with their reason, whatever their means: a "
                 "mean marked (n/%d) is over n of the %d folds, never compared with the complete trials' %d-fold means. "
                 "&plusmn;95%% is the half-width of "
                 "the mean's 95%% interval with the corrected resampled variance (folds share their training proteins). "
                 "<em>vs best</em> is what the tie test compares: the trial's folds minus rank 1's, fold by fold, their "
                 "mean and 95%% interval (unadjusted); shaded trials are tied with the best: the corrected paired t-test "
                 "on those differences cannot tell them apart at %g (run.alpha, Holm-adjusted), so steady small gaps "
                 "are told apart where a closer mean with scattered gaps is not. Click a column to sort; a trial's id "
                 "opens its curves. The chart below shows each complete trial's mean with its interval as a bar, the "
                 "tied group in orange with a black outline.</p>\n",
            rep->spec.folds, rep->spec.folds, rep->spec.folds, report_alpha(&rep->spec));
    if (rep->n_versions > 1)
        fprintf(out, "<p class=\"why\">This run was extended %d time%s (the sweep edited and run again on its "
                "folder): the <em>sweep</em> column is the sweep version each trial was first trained under, "
                "1 the first.</p>\n", rep->n_versions - 1, rep->n_versions == 2 ? "" : "s");
    if (!rep->n_rows) {
        html_no_chart(out, "No trial is in the journal yet.");
        fputs("</section>\n", out);
        return;
    }
    fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"board\"><thead><tr>", out);
    th(out, "rank", 1), th(out, "trial", 0), th(out, "status", 0);
    th(out, loss ? "loss mean" : q8 ? "Q8 mean (%)" : "Q3 mean (%)", 1), th(out, "std", 1), th(out, "&plusmn;95%", 1);
    th(out, "vs best", 1);
    th(out, "tied", 0), th(out, "folds", 1), th(out, "seconds", 1);
    if (rep->n_versions > 1) th(out, "sweep", 1);
    th(out, "params", 1), th(out, "architecture", 0), th(out, "reason", 0);
    fputs("</tr></thead><tbody>\n", out);
    for (int i = 0; i < rep->n_rows; i++) {
        const FsReportRow *r = &rep->rows[i];
        fprintf(out, "<tr%s><td class=\"n\" data-v=\"%d\">%d</td><td><a href=\"#t-",
                row_bad(r) ? " class=\"bad\"" : r->tied == 1 ? " class=\"tied\"" : "", r->rank, r->rank);
        html_esc(out, r->id);
        fputs("\"><code>", out);
        html_esc(out, r->id);
        fprintf(out, "</code></a></td><td class=\"st\" data-v=\"%d\">", (int)r->status);
        html_esc(out, report_status_name(r->status));
        fputs("</td>", out);
        mean_cell(out, rep, r);
        metric_cell(out, rep, r->std);
        metric_cell(out, rep, r->has_ci ? 0.5 * (r->ci_hi - r->ci_lo) : NAN);
        diff_cell(out, rep, r);
        fprintf(out, "<td class=\"tie\">%s</td>", r->tied < 0 ? "-" : i == 0 ? "best" : r->tied ? "yes" : "no");
        fprintf(out, "<td class=\"n\" data-v=\"%d\">%d/%d</td><td class=\"n\" data-v=\"%.3f\">%.1f</td>", r->n_done,
                r->n_done, rep->spec.folds, r->seconds, r->seconds);
        if (rep->n_versions > 1) fprintf(out, "<td class=\"n\" data-v=\"%d\">v%d</td>", r->sweep_version, r->sweep_version);
        fprintf(out, "<td class=\"n\" data-v=\"%ld\">%ld</td><td>", r->n_params, r->n_params);
        html_esc(out, r->arch);
        fputs("</td><td class=\"reason\">", out);
        html_esc(out, r->reason);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
    html_chart_scores(out, rep);
    html_pareto(out, rep);
    fputs("</section>\n", out);
}

/* ---------------------------------------------------------------------- */
/* Trials                                                                   */

/* "stop: gl alpha=5" from the config's training.early_stopping; NULL when
 * the criterion is none (training runs to its epoch limit). */
static const char *stop_rule(const char *config, char *buf, size_t n)
{
    FsJsonDoc d;
    if (json_parse(&d, config, strlen(config), NULL, 0) != 0) return NULL;
    const FsJson *es = json_get(json_get(d.root, "training"), "early_stopping");
    const FsJson *crit = json_get(es, "criterion");
    const char *res = NULL;
    if (crit && crit->type == FS_JSON_STRING && strcmp(crit->str, "none")) {
        snprintf(buf, n, "stop: %s", crit->str);
        for (const FsJson *m = es->child; m; m = m->next)
            if (m->key && strcmp(m->key, "criterion") && m->type == FS_JSON_NUMBER && strlen(buf) + 24 < n)
                snprintf(buf + strlen(buf), n - strlen(buf), " %s=%g", m->key, strtod(m->str, NULL));
        res = buf;
    }
    json_free(&d);
    return res;
}

/* A trial's one-line summary: rank, id, score, architecture, status. */
static void trial_summary(FILE *out, const FsReport *rep, const FsReportRow *r, int open)
{
    int loss = rep->spec.metric == FS_METRIC_LOSS;
    fputs("<details class=\"trial\" id=\"t-", out);
    html_esc(out, r->id);
    fprintf(out, "\"%s><summary><b>#%d</b> <code>", open ? " open" : "", r->rank);
    html_esc(out, r->id);
    fputs("</code> ", out);
    char num[FS_PERCENT_TEXT];
    fprintf(out, "%s %s%s", loss ? "loss" : rep->spec.metric == FS_METRIC_Q8 ? "Q8" : "Q3", report_metric_text(num, sizeof num, rep->spec.metric, r->mean),
            loss || isnan(r->mean) ? "" : "%");
    fputs(" &middot; ", out);
    html_esc(out, r->arch);
    fputs(" &middot; ", out);
    html_esc(out, report_status_name(r->status));
    fputs("</summary>\n", out);
}

/* The trial's curves, a fold per slot, into fc (named by names); what
 * chose the kept epochs (the trial's fold records say). */
static FsMonitor trial_curves(const FsReport *rep, const FsJournal *j, const FsReportRow *r, HtmlFoldCurves *fc,
                              char (*names)[32])
{
    int k = rep->spec.folds;
    FsMonitor monitor = FS_MONITOR_LOSS;
    for (int s = 0; s < k; s++) {
        const FsReportFold *f = &r->folds[s];
        const FsFoldRecord *fr = f->present ? journal_find_fold(j, r->id, f->fold) : NULL;
        fold_label(rep, f, names[s], sizeof names[s]);
        fc[s].name = names[s];
        if (fr) monitor = fr->r.monitor;
        if (!fr || !fr->r.curves.train_loss) continue;
        fc[s] = (HtmlFoldCurves){names[s], fr->r.epochs, fr->r.best_epoch, fr->r.halted_by,
                                 fr->r.status == FS_FIT_DIVERGED ? (fr->r.diverged_epoch ? fr->r.diverged_epoch : fr->r.epochs) : 0,
                                 fr->r.curves.train_loss, fr->r.curves.val_loss, fr->r.curves.val_q3, 0};
    }
    /* The pruner's decision: after a fold (the mark at its last epoch), or
     * inside one, whose curve up to the decision is in the record (the
     * validation metric only: that is what the pruner saw). */
    const FsCutRecord *cut = r->cut;
    FsFolds folds = data_folds_of(rep->spec.predefined, k);
    int cs = cut ? data_fold_slot(&folds, cut->fold, NULL) : -1;
    if (cs >= 0 && cs < k && cut->epoch && cut->curve && cut->n_curve > 0) {
        int q = rep->spec.metric != FS_METRIC_LOSS;
        fc[cs] = (HtmlFoldCurves){names[cs], cut->n_curve, 0, 0, 0, NULL, q ? NULL : cut->curve, q ? cut->curve : NULL, 1};
    } else if (cs >= 0 && cs < k) {
        fc[cs].pruned = 1;
    }
    return monitor;
}

/* The table of the trial's folds, a row per slot named by names. */
static void fold_table(FILE *out, const FsReport *rep, const FsJournal *j, const FsReportRow *r,
                       char (*names)[32], FsMonitor monitor)
{
    fprintf(out,
            "<div class=\"scroll\"><table class=\"folds\"><thead><tr><th>fold</th><th>status</th>"
            "<th>kept (%s) / epochs</th><th>ended by</th><th>val Q3 (%%)</th><th>val loss</th><th>seconds</th>"
            "<th>examples/s</th></tr></thead><tbody>\n",
            monitor == FS_MONITOR_Q3 ? "highest val Q3" : "lowest val loss");
    for (int s = 0; s < rep->spec.folds; s++) {
        const FsReportFold *f = &r->folds[s];
        const FsFoldRecord *fr = f->present ? journal_find_fold(j, r->id, f->fold) : NULL;
        fprintf(out, "<tr><td>%s</td>", names[s]);
        if (!fr) {
            fprintf(out, "<td>%s</td><td></td><td></td><td></td><td></td><td></td><td></td></tr>\n",
                    r->cut ? "not counted: the trial was pruned" : "not trained yet");
            continue;
        }
        double train_s = fr->r.seconds - fr->r.val_seconds;
        const char *ended = fr->r.status == FS_FIT_DIVERGED ? "divergence"
                            : fr->r.status == FS_FIT_FAILED ? "failure"
                            : fr->r.halted_by           ? "stop rule"
                                                        : "epoch limit";
        fprintf(out, "<td>%s</td><td>%d / %d</td><td>%s</td><td>", train_status_name(fr->r.status), fr->r.best_epoch,
                fr->r.epochs, ended);
        html_pct(out, f->q3);
        fputs("</td><td>", out);
        html_num(out, "%.4f", f->loss, 1);
        fprintf(out, "</td><td>%.2f</td><td>", fr->r.seconds);
        html_num(out, "%.0f", train_s > 0 ? (double)fr->r.train_examples / train_s : NAN, 1);
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
}

static void trial(FILE *out, const FsReport *rep, const FsJournal *j, const FsReportRow *r, int open)
{
    int k = rep->spec.folds;
    trial_summary(out, rep, r, open);
    HtmlFoldCurves *fc = fs_calloc((size_t)k, sizeof *fc);
    char (*names)[32] = fs_calloc((size_t)k, sizeof *names);
    FsMonitor monitor = trial_curves(rep, j, r, fc, names);
    char rule[96];
    /* The stop rule watches what chooses the kept epoch. */
    const char *rule_text = stop_rule(r->config, rule, sizeof rule);
    if (rule_text && monitor == FS_MONITOR_Q3) snprintf(rule + strlen(rule), sizeof rule - strlen(rule), " on val Q3");
    html_chart_curves(out, fc, k, rule_text, monitor, rep->classes == FS_CLASSES8 ? "Q8" : "Q3");
    if (r->reason[0]) {
        fputs("<p><b>", out);
        html_esc(out, report_status_name(r->status));
        fputs(":</b> ", out);
        html_esc(out, r->reason);
        fputs("</p>\n", out);
    }
    fold_table(out, rep, j, r, names, monitor);
    fputs("<details><summary>configuration</summary><pre>", out);
    html_esc(out, r->config);
    fputs("</pre></details></details>\n", out);
    free(fc), free(names);
}

static void trials(FILE *out, const FsReport *rep, const FsJournal *j)
{
    fputs("<section id=\"trials\"><h2>Trials</h2>\n<p class=\"why\">Per trial: training loss (dashed), validation loss "
          "(solid) and validation Q3 (dotted) per epoch for every fold on one chart; a ring marks the epoch whose "
          "weights were kept, a dashed vertical mark where the stop rule halted a fold, a dotted one where the pruner "
          "stopped the trial, &#x2715; a divergence.</p>\n",
          out);
    if (!rep->n_rows) html_no_chart(out, "No trial is in the journal yet.");
    for (int i = 0; i < rep->n_rows; i++) trial(out, rep, j, &rep->rows[i], i < OPEN_TRIALS);
    fputs("</section>\n", out);
}

/* ---------------------------------------------------------------------- */
/* The document                                                             */

void report_html_write(FILE *out, const char *dir, const FsJournal *j, const FsReportSpec *spec,
                       const FsReportHtmlInfo *info)
{
    static const FsReportHtmlInfo none;
    if (!info) info = &none;
    FsReport rep;
    FsReportSpec no_params = *spec;
    no_params.sweep = NULL; /* the page shows no param_ columns: not worth their cost */
    report_build(&rep, j, &no_params);
    double *q3 = fs_calloc((size_t)rep.n_rows + 1, sizeof *q3);
    for (int i = 0; i < rep.n_rows; i++) q3[i] = row_q3(&rep, &rep.rows[i]);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* fs_now is monotonic: for durations only */
    HtmlDoc d = {dir, j, &rep, q3, info, (double)ts.tv_sec};

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n",
          out);
    if (info->live) fprintf(out, "<meta http-equiv=\"refresh\" content=\"%d\">\n", LIVE_RELOAD_SECONDS);
    fputs("<title>foldsweep report: ", out);
    html_esc(out, dir);
    fprintf(out, "</title>\n<script>%s</script>\n<style>%s</style>\n</head><body>\n", JS_HEAD, CSS);
    fputs("<header><h1>foldsweep report</h1><p class=\"sub\">run folder <code>", out);
    html_esc(out, dir);
    fputs("</code></p>\n<nav><a href=\"#leaderboard\">leaderboard</a><a href=\"#test\">test set</a>"
          "<a href=\"#effects\">parameter effects</a>"
          "<a href=\"#trials\">trials</a><a href=\"#profile\">time profile</a><a href=\"#confusion\">confusion</a>"
          "<a href=\"#identity\">run</a></nav></header>\n",
          out);
    html_banner(out, &d);
    leaderboard(out, &rep);
    html_test(out, &d);
    fputs("<section id=\"effects\"><h2>Parameter effects</h2>\n<p class=\"why\">For each option that differs between "
          "trials, every complete trial's Q3 by the option's value with its 95% interval when Q3 ranks the trials "
          "(trials tied with the best in orange); a bar marks each value's mean, and the thick bar beside it that "
          "mean's 95% interval over the value's trials (docs/statistics.md); the ranking is the share of "
          "the variance of trial Q3 that each option's mean effect explains (&omega;&sup2;, one-way analysis of "
          "variance over complete trials, adjusted for chance: with few trials, an option with many values "
          "explains much by luck alone).</p>\n",
          out);
    html_effects(out, &rep, q3);
    fputs("</section>\n", out);
    trials(out, &rep, j);
    html_profile(out, &d);
    html_confusion(out, &d);
    html_identity(out, &d);
    char now[40];
    html_time(now, sizeof now, d.now);
    fprintf(out, "<footer><p class=\"why\">Written by foldsweep %s at %s.</p></footer>\n<script>%s</script>\n</body></html>\n",
            FS_VERSION, now, JS_TAIL);
    free(q3);
    report_free(&rep);
}

int report_html_write_file(const char *path, const char *dir, const FsJournal *j, const FsReportSpec *spec,
                           const FsReportHtmlInfo *info, FsErr *err)
{
    char def[FS_PATH_IN_DIR], *text = NULL;
    size_t n = 0;
    if (!path) {
        snprintf(def, sizeof def, "%s/report.html", dir);
        path = def;
    }
    FILE *f = open_memstream(&text, &n);
    if (!f) return fs_err_set(err, "%s: cannot write the report: out of memory", path), -1;
    report_html_write(f, dir, j, spec, info);
    fclose(f);
    int rc = fs_write_file_atomic(path, text, n, err);
    free(text);
    return rc;
}

/* One run per process: the live throttle's clock is static. */
static double live_next;

int report_html_write_run(const char *dir, const FsJournal *j, const FsSweep *sw, const FsReportHtmlInfo *info,
                          FsErr *err)
{
    double t0 = fs_now();
    if (info->live && t0 < live_next) return 0;
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    int rc = report_html_write_file(NULL, dir, j, &spec, info, err);
    double cost = fs_now() - t0;
    live_next = fs_now() + (cost * 20 > 5 ? cost * 20 : 5);
    return info->live ? 0 : rc;
}
