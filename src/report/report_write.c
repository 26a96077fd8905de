/*
 * report_write.c: the leaderboard in four formats, and the files a run
 * leaves in its folder (written to a temporary name, fsync'd, renamed, so
 * a reader never sees half a leaderboard).
 *
 * Cells: metric values with 4 decimals in table and Markdown, %.9g in CSV,
 * %.17g in JSON; a fold that is absent is "-" (empty in CSV, null in JSON),
 * one that diverged or failed shows "div" / "fail" instead of a value.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

/* ---------------------------------------------------------------------- */
/* Cells                                                                    */

static double metric_of(const FsReport *rep, const FsReportFold *f)
{
    return rep->spec.metric == FS_METRIC_LOSS ? f->loss : f->q3;
}

static void fold_cell(const FsReport *rep, const FsReportFold *f, const char *fmt, char *out,
                      size_t n)
{
    double v = metric_of(rep, f);
    if (!f->present)
        snprintf(out, n, "-");
    else if (f->status == FS_FIT_DIVERGED)
        snprintf(out, n, "div");
    else if (f->status == FS_FIT_FAILED)
        snprintf(out, n, "fail");
    else if (isnan(v))
        snprintf(out, n, "-");
    else
        snprintf(out, n, fmt, v);
}

static void num_cell(double v, const char *fmt, char *out, size_t n)
{
    if (isnan(v))
        snprintf(out, n, "-");
    else
        snprintf(out, n, fmt, v);
}

/* "best/ran" per fold, space separated. */
static void epochs_cell(const FsReport *rep, const FsReportRow *row, char *out, size_t n)
{
    out[0] = '\0';
    size_t k = 0;
    for (int s = 0; s < rep->spec.folds && k + 1 < n; s++) {
        const FsReportFold *f = &row->folds[s];
        int w = f->present
                    ? snprintf(out + k, n - k, "%s%d/%d", s ? " " : "", f->best_epoch, f->epochs)
                    : snprintf(out + k, n - k, "%s-", s ? " " : "");
        if (w < 0) break;
        k += (size_t)w;
    }
}

static void fold_header(const FsReport *rep, int s, char *out, size_t n)
{
    if (rep->spec.predefined)
        snprintf(out, n, "valid");
    else
        snprintf(out, n, "fold%d", s);
}

/* ---------------------------------------------------------------------- */
/* Table and Markdown share one grid of cells                               */

enum { COL_RANK, COL_ID, COL_STATUS, COL_MEAN, COL_STD, COL_FOLDS };

typedef struct {
    int n_rows, n_cols;
    char **cell; /* (n_rows + 1) x n_cols, row 0 = header */
    int *right;  /* right-aligned column */
} Grid;

static void grid_set(Grid *g, int r, int c, const char *s)
{
    g->cell[r * g->n_cols + c] = fs_strdup(s);
}

static void grid_build(Grid *g, const FsReport *rep, int top)
{
    int k = rep->spec.folds;
    int n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    g->n_rows = n;
    /* Test columns only once a test section has been evaluated. */
    const int nt = rep->has_test ? 2 + rep->has_refit : 0;
    g->n_cols = COL_FOLDS + k + 5 + nt;
    g->cell = fs_calloc((size_t)(n + 1) * (size_t)g->n_cols, sizeof *g->cell);
    g->right = fs_calloc((size_t)g->n_cols, sizeof *g->right);
    const char *m = report_metric_name(rep->spec.metric);
    char buf[1200];
    grid_set(g, 0, COL_RANK, "rank");
    grid_set(g, 0, COL_ID, "id");
    grid_set(g, 0, COL_STATUS, "status");
    snprintf(buf, sizeof buf, "%s mean", m);
    grid_set(g, 0, COL_MEAN, buf);
    grid_set(g, 0, COL_STD, "std");
    for (int s = 0; s < k; s++) {
        fold_header(rep, s, buf, sizeof buf);
        grid_set(g, 0, COL_FOLDS + s, buf);
    }
    int c = COL_FOLDS + k;
    const int tc = c + 1; /* test columns after "epochs best/ran" */
    if (nt) {
        grid_set(g, 0, tc, "test q3");
        grid_set(g, 0, tc + 1, "test sov");
        if (rep->has_refit) grid_set(g, 0, tc + 2, "refit q3");
        for (int t = 0; t < nt; t++) g->right[tc + t] = 1;
    }
    grid_set(g, 0, c, "epochs best/ran");
    grid_set(g, 0, c + nt + 1, "seconds");
    grid_set(g, 0, c + nt + 2, "params");
    grid_set(g, 0, c + nt + 3, "architecture");
    grid_set(g, 0, c + nt + 4, "note");
    g->right[COL_RANK] = g->right[COL_MEAN] = g->right[COL_STD] = 1;
    for (int s = 0; s < k; s++) g->right[COL_FOLDS + s] = 1;
    g->right[c + nt + 1] = g->right[c + nt + 2] = 1;
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        int r = i + 1;
        snprintf(buf, sizeof buf, "%d", row->rank);
        grid_set(g, r, COL_RANK, buf);
        grid_set(g, r, COL_ID, row->id);
        grid_set(g, r, COL_STATUS, report_status_name(row->status));
        num_cell(row->mean, "%.4f", buf, sizeof buf);
        grid_set(g, r, COL_MEAN, buf);
        num_cell(row->std, "%.4f", buf, sizeof buf);
        grid_set(g, r, COL_STD, buf);
        for (int s = 0; s < k; s++) {
            fold_cell(rep, &row->folds[s], "%.4f", buf, sizeof buf);
            grid_set(g, r, COL_FOLDS + s, buf);
        }
        epochs_cell(rep, row, buf, sizeof buf);
        grid_set(g, r, c, buf);
        if (nt) {
            num_cell(row->test ? row->test->q3 : NAN, "%.4f", buf, sizeof buf);
            grid_set(g, r, tc, buf);
            num_cell(row->test ? row->test->sov : NAN, "%.4f", buf, sizeof buf);
            grid_set(g, r, tc + 1, buf);
            if (rep->has_refit) {
                num_cell(row->test_refit ? row->test_refit->q3 : NAN, "%.4f", buf, sizeof buf);
                grid_set(g, r, tc + 2, buf);
            }
        }
        snprintf(buf, sizeof buf, "%.1f", row->seconds);
        grid_set(g, r, c + nt + 1, buf);
        snprintf(buf, sizeof buf, "%ld", row->n_params);
        grid_set(g, r, c + nt + 2, buf);
        grid_set(g, r, c + nt + 3, row->arch);
        grid_set(g, r, c + nt + 4, row->reason);
    }
}

static void grid_free(Grid *g)
{
    for (int i = 0; i < (g->n_rows + 1) * g->n_cols; i++) free(g->cell[i]);
    free(g->cell);
    free(g->right);
}

/* A note may hold anything a trainer said: keep a table row on one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
}

static void write_table(const FsReport *rep, int top, FILE *out)
{
    Grid g;
    grid_build(&g, rep, top);
    int *w = fs_calloc((size_t)g.n_cols, sizeof *w);
    for (int r = 0; r <= g.n_rows; r++)
        for (int c = 0; c < g.n_cols; c++) {
            one_line(g.cell[r * g.n_cols + c]);
            int len = (int)strlen(g.cell[r * g.n_cols + c]);
            if (len > w[c]) w[c] = len;
        }
    for (int r = 0; r <= g.n_rows; r++) {
        char line[8192];
        size_t k = 0;
        for (int c = 0; c < g.n_cols && k < sizeof line; c++) {
            const char *s = g.cell[r * g.n_cols + c];
            int last = c == g.n_cols - 1;
            int wrote = g.right[c]
                            ? snprintf(line + k, sizeof line - k, "%*s", w[c], s)
                            : snprintf(line + k, sizeof line - k, "%-*s", last ? 0 : w[c], s);
            if (wrote < 0) break;
            k += (size_t)wrote;
            if (!last && k < sizeof line) k += (size_t)snprintf(line + k, sizeof line - k, "  ");
        }
        if (k >= sizeof line) k = sizeof line - 1;
        while (k > 0 && line[k - 1] == ' ') k--; /* no trailing blanks */
        line[k] = '\0';
        fprintf(out, "%s\n", line);
        if (r == 0) {
            int total = 0;
            for (int c = 0; c < g.n_cols; c++) total += w[c] + (c ? 2 : 0);
            for (int i = 0; i < total; i++) fputc('-', out);
            fputc('\n', out);
        }
    }
    free(w);
    grid_free(&g);
}

static void md_cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputs(" |", out);
}

static void write_md(const FsReport *rep, int top, FILE *out)
{
    Grid g;
    grid_build(&g, rep, top);
    for (int r = 0; r <= g.n_rows; r++) {
        fputc('|', out);
        for (int c = 0; c < g.n_cols; c++) md_cell(out, g.cell[r * g.n_cols + c]);
        fputc('\n', out);
        if (r == 0) {
            fputc('|', out);
            for (int c = 0; c < g.n_cols; c++) fputs(g.right[c] ? " ---: |" : " --- |", out);
            fputc('\n', out);
        }
    }
    grid_free(&g);
}

/* ---------------------------------------------------------------------- */
/* CSV (RFC 4180 quoting)                                                   */

static void csv_text(FILE *out, const char *s, int sep)
{
    if (sep) fputc(',', out);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_num(FILE *out, double v)
{
    if (isnan(v))
        fputc(',', out);
    else
        fprintf(out, ",%.9g", v);
}

static void write_csv(const FsReport *rep, int top, FILE *out)
{
    int k = rep->spec.folds;
    int n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    fputs("rank,id,index,status,metric,mean,std,folds_done", out);
    for (int s = 0; s < k; s++) {
        char h[16];
        fold_header(rep, s, h, sizeof h);
        fprintf(out, ",%s_q3,%s_loss,%s_best_epoch,%s_epochs,%s_status", h, h, h, h, h);
    }
    fputs(",seconds,params,architecture,note,config", out);
    if (rep->has_test) fputs(",test_q3,test_q3_lo,test_q3_hi,test_sov,test_proteins,refit_q3,refit_sov", out);
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        fprintf(out, "%d", row->rank);
        csv_text(out, row->id, 1);
        fprintf(out, ",%d,%s,%s", row->index, report_status_name(row->status),
                report_metric_name(rep->spec.metric));
        csv_num(out, row->mean);
        csv_num(out, row->std);
        fprintf(out, ",%d", row->n_done);
        for (int s = 0; s < k; s++) {
            const FsReportFold *f = &row->folds[s];
            if (!f->present) {
                fputs(",,,,,missing", out);
                continue;
            }
            csv_num(out, f->q3);
            csv_num(out, f->loss);
            fprintf(out, ",%d,%d,%s", f->best_epoch, f->epochs, train_status_name(f->status));
        }
        fprintf(out, ",%.3f,%ld", row->seconds, row->n_params);
        csv_text(out, row->arch, 1);
        csv_text(out, row->reason, 1);
        csv_text(out, row->config, 1);
        if (rep->has_test) {
            const FsEvalRecord *t = row->test, *rf = row->test_refit;
            csv_num(out, t ? t->q3 : NAN);
            csv_num(out, t ? t->q3_lo : NAN);
            csv_num(out, t ? t->q3_hi : NAN);
            csv_num(out, t ? t->sov : NAN);
            if (t) fprintf(out, ",%llu", (unsigned long long)t->proteins);
            else fputc(',', out);
            csv_num(out, rf ? rf->q3 : NAN);
            csv_num(out, rf ? rf->sov : NAN);
        }
        fputc('\n', out);
    }
}

/* ---------------------------------------------------------------------- */
/* JSON (docs/leaderboard-json.md)                                          */

static void json_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

/* Per-class scores at the fold's best epoch, classes in H, E, C order. */
static void json_class_metrics(FILE *out, const FsMetrics *m)
{
    const char *names[3] = {"precision", "recall", "mcc"};
    const double *vals[3] = {m->precision, m->recall, m->mcc};
    for (int k = 0; k < 3; k++) {
        fprintf(out, ",\"%s\":[", names[k]);
        for (int c = 0; c < 3; c++) {
            if (c) fputc(',', out);
            json_num(out, vals[k][c]);
        }
        fputc(']', out);
    }
    fputs(",\"confusion\":[", out);
    for (int t = 0; t < 3; t++)
        fprintf(out, "%s[%llu,%llu,%llu]", t ? "," : "", (unsigned long long)m->confusion[t][0],
                (unsigned long long)m->confusion[t][1], (unsigned long long)m->confusion[t][2]);
    fputc(']', out);
}

/* A test-section evaluation's fields (docs/leaderboard-json.md). */
static void json_test(FILE *out, const FsEvalRecord *t)
{
    fputs("\"q3\":", out);
    json_num(out, t->q3);
    fputs(",\"q3_ci95\":[", out);
    json_num(out, t->q3_lo);
    fputc(',', out);
    json_num(out, t->q3_hi);
    fputs("],\"sov\":", out);
    json_num(out, t->sov);
    fprintf(out, ",\"proteins\":%llu,\"scored\":%llu,\"overlap\":%llu,\"data\":", (unsigned long long)t->proteins,
            (unsigned long long)t->scored, (unsigned long long)t->overlap);
    journal_json_write_string(out, t->data);
    fprintf(out, ",\"data_fingerprint\":\"%016llx\"", (unsigned long long)t->data_fingerprint);
}

static void write_json(const FsReport *rep, int top, FILE *out)
{
    int n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        fputs(i ? ",\n  " : "\n  ", out);
        fprintf(out, "{\"version\":%d,\"rank\":%d,\"id\":", FS_LEADERBOARD_JSON_VERSION, row->rank);
        journal_json_write_string(out, row->id);
        fprintf(out, ",\"index\":%d,\"status\":\"%s\",\"reason\":", row->index,
                report_status_name(row->status));
        journal_json_write_string(out, row->reason);
        if (row->cut) {
            fprintf(out, ",\"pruned\":{\"fold\":%d,\"epoch\":%d,\"rule\":", row->cut->fold, row->cut->epoch);
            journal_json_write_string(out, row->cut->rule);
            fputs(",\"value\":", out);
            json_num(out, row->cut->value);
            fputs(",\"threshold\":", out);
            json_num(out, row->cut->threshold);
            fputc('}', out);
        }
        fprintf(out,
                ",\"metric\":{\"name\":\"%s\",\"mean\":", report_metric_name(rep->spec.metric));
        json_num(out, row->mean);
        fputs(",\"std\":", out);
        json_num(out, row->std);
        fprintf(out, "},\"folds_done\":%d,\"folds\":[", row->n_done);
        for (int s = 0; s < rep->spec.folds; s++) {
            const FsReportFold *f = &row->folds[s];
            fprintf(out, "%s{\"fold\":%d,\"status\":\"%s\",\"q3\":", s ? "," : "", f->fold,
                    f->present ? train_status_name(f->status) : "missing");
            json_num(out, f->q3);
            fputs(",\"loss\":", out);
            json_num(out, f->loss);
            if (f->present) {
                fprintf(out, ",\"epochs\":%d,\"best_epoch\":%d,\"seconds\":", f->epochs,
                        f->best_epoch);
                json_num(out, f->seconds);
            } else {
                fputs(",\"epochs\":null,\"best_epoch\":null,\"seconds\":null", out);
            }
            if (f->present && f->status == FS_FIT_DIVERGED)
                fprintf(out, ",\"diverged_epoch\":%d,\"diverged_step\":%ld", f->diverged_epoch,
                        f->diverged_step);
            if (f->present && f->m.n) json_class_metrics(out, &f->m);
            fputc('}', out);
        }
        fputs("],\"seconds\":", out);
        json_num(out, row->seconds);
        fprintf(out, ",\"params\":%ld,\"arch\":", row->n_params);
        journal_json_write_string(out, row->arch);
        fprintf(out, ",\"config\":%s", row->config); /* already JSON: embedded, not quoted */
        if (row->test || row->test_refit) {
            fputs(",\"test\":{", out);
            if (row->test) json_test(out, row->test);
            if (row->test_refit) {
                fputs(row->test ? ",\"refit\":{" : "\"refit\":{", out);
                json_test(out, row->test_refit);
                fputc('}', out);
            }
            fputc('}', out);
        }
        fputc('}', out);
    }
    fputs(n ? "\n]\n" : "]\n", out);
}

void report_write(const FsReport *rep, FsReportFormat fmt, int top, FILE *out)
{
    switch (fmt) {
    case FS_REPORT_TABLE: write_table(rep, top, out); break;
    case FS_REPORT_MD: write_md(rep, top, out); break;
    case FS_REPORT_CSV: write_csv(rep, top, out); break;
    case FS_REPORT_JSON: write_json(rep, top, out); break;
    }
}

/* ---------------------------------------------------------------------- */
/* Files                                                                    */

static int write_atomic(const char *dir, const char *name, const FsReport *rep, FsReportFormat fmt,
                        FsErr *err)
{
    char path[4096], *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = open_memstream(&text, &n);
    if (!f) return fs_err_set(err, "%s: cannot write: out of memory", path), -1;
    report_write(rep, fmt, 0, f);
    fclose(f);
    int rc = fs_write_file_atomic(path, text, n, err);
    free(text);
    return rc;
}

int report_write_files_spec(const char *dir, const FsJournal *j, const FsReportSpec *spec,
                            FsErr *err)
{
    FsReport rep;
    report_build(&rep, j, spec);
    int rc = write_atomic(dir, "leaderboard.md", &rep, FS_REPORT_MD, err);
    if (!rc) rc = write_atomic(dir, "leaderboard.csv", &rep, FS_REPORT_CSV, err);
    if (!rc) rc = write_atomic(dir, "leaderboard.json", &rep, FS_REPORT_JSON, err);
    report_free(&rep);
    return rc;
}

int report_write_files(const char *dir, const FsJournal *j, const FsSweep *sw, FsErr *err)
{
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    return report_write_files_spec(dir, j, &spec, err);
}

void report_print_leaderboard(FILE *out, const FsJournal *j, const FsSweep *sw, int top)
{
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    FsReport rep;
    report_build(&rep, j, &spec);
    report_write(&rep, FS_REPORT_TABLE, top, out);
    if (top > 0 && rep.n_rows > top)
        fprintf(out, "(%d more: foldsweep leaderboard DIR)\n", rep.n_rows - top);
    report_free(&rep);
}
