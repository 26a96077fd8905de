/*
 * report_write.c: the leaderboard for programs, CSV and JSON (the table
 * and Markdown are report_table.c's), and the files a run leaves in its
 * folder (written to a temporary name, fsync'd, renamed, so a reader never
 * sees half a leaderboard).
 *
 * Numbers are fractions (Q3 0.71234, not the percent people read) with
 * %.9g in CSV and %.17g in JSON; what does not exist is empty in CSV and
 * null (or absent) in JSON, never 0. Each row has the trial's per-class MCC
 * (mcc_H, mcc_E, mcc_C: the ok folds pooled) and one column per swept
 * option (param_<dotted key, dots as _>), the same names in both formats.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report_int.h"

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
    fputs("rank,id,index,status,metric,mean,std,folds_done,mcc_H,mcc_E,mcc_C", out);
    for (int d = 0; d < rep->n_param; d++) csv_text(out, rep->param_col[d], 1);
    for (int s = 0; s < k; s++) {
        char h[16];
        report_fold_header(rep, s, h, sizeof h);
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
                metrics_kind_name(rep->spec.metric));
        csv_num(out, row->mean);
        csv_num(out, row->std);
        fprintf(out, ",%d", row->n_done);
        for (int c = 0; c < 3; c++) csv_num(out, row->pooled.n ? row->pooled.mcc[c] : NAN);
        for (int d = 0; d < rep->n_param; d++) csv_text(out, row->param[d] ? row->param[d] : "", 1);
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

/* A swept option's value: numbers and booleans as JSON has them, names
 * as strings, null where the option does not change the trial. */
static void json_param(FILE *out, const char *v)
{
    char *end;
    if (!v) fputs("null", out);
    else if (!strcmp(v, "true") || !strcmp(v, "false") || (strtod(v, &end), end != v && !*end && isfinite(strtod(v, NULL))))
        fputs(v, out);
    else journal_json_write_string(out, v);
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
                ",\"metric\":{\"name\":\"%s\",\"mean\":", metrics_kind_name(rep->spec.metric));
        json_num(out, row->mean);
        fputs(",\"std\":", out);
        json_num(out, row->std);
        fprintf(out, "},\"folds_done\":%d", row->n_done);
        if (row->pooled.n)
            for (int c = 0; c < 3; c++) {
                fprintf(out, ",\"mcc_%c\":", "HEC"[c]);
                json_num(out, row->pooled.mcc[c]);
            }
        for (int d = 0; d < rep->n_param; d++) {
            fputc(',', out);
            journal_json_write_string(out, rep->param_col[d]);
            fputc(':', out);
            json_param(out, row->param[d]);
        }
        fputs(",\"folds\":[", out);
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
    case FS_REPORT_TABLE:
    case FS_REPORT_WIDE:
    case FS_REPORT_MD: report_write_grid(rep, fmt, top, out); break;
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
    spec.sweep = sw; /* the CSV's and JSON's param_ columns */
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
