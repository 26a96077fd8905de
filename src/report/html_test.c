/*
 * html_test.c: the HTML report's "Test set" section. Every look at test
 * data the journal holds (the sweep's test: section and `foldsweep
 * evaluate`), in the order it was made, and the refits they used. These
 * are the numbers a researcher reports, so they stand apart from the
 * leaderboard: the ranking comes from validation folds alone and nothing
 * here changes it.
 */
#include <math.h>
#include <string.h>

#include "report/html_int.h"

/* The trial's validation rank, or 0 when it is not in the report. */
static int trial_rank(const FsReport *rep, const char *id)
{
    for (int i = 0; i < rep->n_rows; i++)
        if (!strcmp(rep->rows[i].id, id)) return rep->rows[i].rank;
    return 0;
}

static void trial_cell(FILE *out, const FsReport *rep, const char *id)
{
    int rank = trial_rank(rep, id);
    fputs("<td>", out);
    if (rank) {
        fputs("<a href=\"#t-", out);
        html_esc(out, id);
        fputs("\"><code>", out);
        html_esc(out, id);
        fprintf(out, "</code></a> (#%d)", rank);
    } else {
        fputs("<code>", out);
        html_esc(out, id);
        fputs("</code>", out);
    }
    fputs("</td>", out);
}

static void evaluation(FILE *out, const FsReport *rep, const FsEvalRecord *e)
{
    char when[40];
    html_time(when, sizeof when, e->time);
    fprintf(out, "<tr><td>%s</td><td>%s</td>", when, strcmp(e->source, "test") ? "evaluate" : "test section");
    trial_cell(out, rep, e->trial);
    fputs("<td>", out);
    html_esc(out, e->models);
    fputs("</td><td class=\"data\">", out);
    html_esc_cut(out, e->data, 160);
    fprintf(out, "<br><code>%016llx</code></td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>",
            (unsigned long long)e->data_fingerprint, (unsigned long long)e->proteins, (unsigned long long)e->scored);
    fputs("<td class=\"n\" data-v=\"", out);
    if (isfinite(e->q3)) fprintf(out, "%.9g", e->q3);
    fputs("\"><b>", out);
    html_pct(out, e->q3);
    fputs("</b></td><td class=\"n\">", out);
    if (isfinite(e->q3_lo) && isfinite(e->q3_hi))
        fprintf(out, "%s&ndash;%s", fs_percent_text(e->q3_lo), fs_percent_text(e->q3_hi));
    else
        fputs("-", out);
    fputs("</td><td class=\"n\">", out);
    html_pct(out, e->sov);
    /* The journal's evaluation record holds no per-class scores (evaluate
     * prints them; docs/models.md): said, not made up. */
    fprintf(out, "</td><td class=\"mcc\">not recorded</td><td class=\"n\">%llu</td></tr>\n",
            (unsigned long long)e->overlap);
}

static void refits(FILE *out, const FsReport *rep, const FsJournal *j)
{
    fprintf(out, "<h3>Refits</h3>\n");
    if (!j->n_refits) {
        html_no_chart(out, "No trial has been refit on all its training proteins (foldsweep refit, test.refit).");
        return;
    }
    fputs("<div class=\"scroll\"><table class=\"refits\"><thead><tr><th>when</th><th>trial</th>"
          "<th class=\"n\">epochs</th><th>model file</th></tr></thead><tbody>\n",
          out);
    for (int i = 0; i < j->n_refits; i++) {
        const FsRefitRecord *r = &j->refits[i];
        char when[40];
        html_time(when, sizeof when, r->time);
        fprintf(out, "<tr><td>%s</td>", when);
        trial_cell(out, rep, r->trial);
        fprintf(out, "<td class=\"n\">%d</td><td><code>", r->epochs);
        html_esc(out, r->model.file[0] ? r->model.file : "(none saved)");
        fputs("</code></td></tr>\n", out);
    }
    fputs("</tbody></table></div>\n", out);
}

void html_test(FILE *out, const HtmlDoc *d)
{
    const FsJournal *j = d->j;
    fputs("<section id=\"test\"><h2>Test set</h2>\n<p class=\"why\">Held-out results: every evaluation on test data "
          "this journal records (the sweep's <code>test:</code> section and <code>foldsweep evaluate</code>), oldest "
          "first, and the refits. They are not part of the leaderboard's ranking, which uses validation folds alone; "
          "the number after a trial is its validation rank. Q3 and SOV'99 in %, Q3's interval a 95% bootstrap over "
          "proteins; overlap: test proteins identical to training proteins (scored only with --allow-overlap).</p>\n",
          out);
    if (!j->n_evals) {
        html_no_chart(out, "No test data has been looked at: add a test: section to the sweep and run it again, or "
                           "run foldsweep evaluate on this run folder.");
    } else {
        fprintf(out, "<p>Test data looked at %d time%s.</p>\n", j->n_evals, j->n_evals == 1 ? "" : "s");
        fputs("<div class=\"scroll\"><table class=\"evals\"><thead><tr><th>when</th><th>from</th><th>trial</th>"
              "<th>models</th><th>data and fingerprint</th><th class=\"n\">proteins</th><th class=\"n\">residues "
              "scored</th><th class=\"n\">Q3 (%)</th><th class=\"n\">95% interval</th><th class=\"n\">SOV'99 "
              "(%)</th><th>MCC H / E / C</th><th class=\"n\">overlap</th></tr></thead><tbody>\n",
              out);
        for (int i = 0; i < j->n_evals; i++) evaluation(out, d->rep, &j->evals[i]);
        fputs("</tbody></table></div>\n", out);
    }
    refits(out, d->rep, j);
    fputs("</section>\n", out);
}
