/*
 * report_write.c: the leaderboard for programs, CSV and JSON (the table
 * and Markdown are report_table.c's), and the files a run leaves in its
 * folder (written to a temporary name, fsync'd, renamed, so a reader never
 * sees half a leaderboard).
 *
 * Numbers are fractions (Q3 0.71234, not the percent people read) with
 * %.9g in CSV and every digit in JSON (json_num64_full: %.17g); what does not exist is empty in CSV and
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

#include "json/json.h"
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

/* The shortest text that reads back as v (README: files made for programs
 * keep every digit; "%.9g" cut a double's last digits). */
static void csv_num(FILE *out, double v)
{
    char t[FS_DOUBLE_TEXT];
    if (isnan(v))
        fputc(',', out);
    else
        fprintf(out, ",%s", fs_format_double(t, sizeof t, v));
}

static void write_csv(const FsReport *rep, int top, FILE *out)
{
    int k = rep->spec.folds;
    int n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    fputs("rank,id,index,status,metric,mean,std,ci95_lo,ci95_hi,p_vs_best,tied_with_best,folds_done,seeds", out);
    /* An 8-state run: the mean Q3 (reduced) and Q8, and an MCC per 8-state class. */
    const int K = report_classes(rep);
    if (K == FS_CLASSES8) fputs(",q3,q8", out);
    for (int c = 0; c < K; c++) fprintf(out, ",mcc_%c", fs_class_letters(K)[c]);
    for (int d = 0; d < rep->n_param; d++) csv_text(out, rep->param_col[d], 1);
    for (int s = 0; s < k; s++) {
        char h[16];
        report_fold_header(rep, s, h, sizeof h);
        fprintf(out, ",%s_q3,%s_loss,%s_best_epoch,%s_epochs,%s_status", h, h, h, h, h);
    }
    fputs(",seconds,gpu_path,params,architecture,note,config", out);
    if (rep->has_test) fputs(",test_q3,test_q3_lo,test_q3_hi,test_sov,test_proteins,refit_q3,refit_sov", out);
    if (rep->spec.n_objectives) fputs(",pareto", out);
    if (rep->n_versions > 1) fputs(",sweep_version", out); /* an extended run */
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        fprintf(out, "%d", row->rank);
        csv_text(out, row->id, 1);
        fprintf(out, ",%d,%s,%s", row->index, report_status_name(row->status),
                metrics_kind_name(rep->spec.metric));
        csv_num(out, row->mean);
        csv_num(out, row->std);
        csv_num(out, row->ci_lo);
        csv_num(out, row->ci_hi);
        csv_num(out, row->p_vs_best);
        fputs(row->tied < 0 ? "," : row->tied ? ",true" : ",false", out);
        fprintf(out, ",%d,%d", row->n_done, row->seeds);
        if (K == FS_CLASSES8) csv_num(out, row->q3_mean), csv_num(out, row->q8_mean);
        for (int c = 0; c < K; c++) csv_num(out, row->pooled.n ? row->pooled.mcc[c] : NAN);
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
        fprintf(out, ",%.3f,%s,%ld", row->seconds, row->gpu_path ? row->gpu_path : "", row->n_params);
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
        if (rep->spec.n_objectives) fputs(row->pareto < 0 ? "," : row->pareto ? ",true" : ",false", out);
        if (rep->n_versions > 1) fprintf(out, ",%d", row->sweep_version);
        fputc('\n', out);
    }
}

/* ---------------------------------------------------------------------- */
/* JSON (docs/leaderboard-json.md)                                          */

/* A score: every digit of the double (%.17g); null where there is none
 * (the writer's nonfinite). */
static void put_num(FsJsonOut *w, const char *key, double v)
{
    json_key(w, key);
    json_num64_full(w, v);
}

/* Per-class scores at the fold's best epoch, classes in H, E, C order (an
 * 8-state fold's: H G I E B T S C). */
static void json_class_metrics(FsJsonOut *w, const FsMetrics *m)
{
    const char *names[3] = {"precision", "recall", "mcc"};
    const double *vals[3] = {m->precision, m->recall, m->mcc};
    for (int k = 0; k < 3; k++) {
        json_key(w, names[k]);
        json_array_begin(w);
        for (int c = 0; c < m->classes; c++) json_num64_full(w, vals[k][c]);
        json_end(w);
    }
    json_key(w, "confusion");
    json_array_begin(w);
    for (int t = 0; t < m->classes; t++) {
        json_array_begin(w);
        for (int p = 0; p < m->classes; p++) json_uint(w, (unsigned long long)m->confusion[t][p]);
        json_end(w);
    }
    json_end(w);
}

/* A swept option's value: numbers and booleans as JSON has them, names
 * as strings, null where the option does not change the trial. */
static void json_param(FsJsonOut *w, const char *v)
{
    FsJsonScan c = {.s = v, .n = v ? strlen(v) : 0};
    if (!v)
        json_null(w);
    else if (!strcmp(v, "true") || !strcmp(v, "false") ||
             ((*v == '-' || (*v >= '0' && *v <= '9')) && json_scan_number(&c, NULL, NULL) == 0 && c.i == c.n))
        json_raw(w, v);
    else
        json_str(w, v);
}

/* A test-section evaluation's fields (docs/leaderboard-json.md). */
static void json_test(FsJsonOut *w, const FsEvalRecord *t)
{
    put_num(w, "q3", t->q3);
    if (t->classes == FS_CLASSES8) put_num(w, "q8", t->q8); /* 8-state models: q3 is of their predictions reduced */
    json_key(w, "q3_ci95");
    json_array_begin(w);
    json_num64_full(w, t->q3_lo);
    json_num64_full(w, t->q3_hi);
    json_end(w);
    put_num(w, "sov", t->sov);
    json_member_uint(w, "proteins", (unsigned long long)t->proteins);
    json_member_uint(w, "scored", (unsigned long long)t->scored);
    json_member_uint(w, "overlap", (unsigned long long)t->overlap);
    json_member_str(w, "data", t->data);
    json_key(w, "data_fingerprint");
    json_strf(w, "%016llx", (unsigned long long)t->data_fingerprint);
}

static void json_fold(FsJsonOut *w, const FsReportFold *f)
{
    json_object_begin(w);
    json_member_int(w, "fold", f->fold);
    json_member_str(w, "status", f->present ? train_status_name(f->status) : "missing");
    put_num(w, "q3", f->q3);
    if (f->m.classes == FS_CLASSES8) put_num(w, "q8", f->q8);
    put_num(w, "loss", f->loss);
    if (f->present) {
        json_member_int(w, "epochs", f->epochs);
        json_member_int(w, "best_epoch", f->best_epoch);
        put_num(w, "seconds", f->seconds);
    } else {
        const char *none[] = {"epochs", "best_epoch", "seconds"};
        for (int k = 0; k < 3; k++) json_key(w, none[k]), json_null(w);
    }
    if (f->present && f->status == FS_FIT_DIVERGED) {
        json_member_int(w, "diverged_epoch", f->diverged_epoch);
        json_member_int(w, "diverged_step", f->diverged_step);
    }
    if (f->present && f->m.n) json_class_metrics(w, &f->m);
    json_end(w);
}

/* An 8-state run's classes, mean Q8 and Q3 (docs/leaderboard-json.md), and
 * the pooled MCC of each class. */
static void json_row_classes(FsJsonOut *w, const FsReport *rep, const FsReportRow *row)
{
    if (report_classes(rep) == FS_CLASSES8) {
        json_member_int(w, "classes", FS_CLASSES8);
        put_num(w, "q8", row->q8_mean);
        put_num(w, "q3", row->q3_mean);
    }
    if (row->pooled.n)
        for (int c = 0; c < row->pooled.classes; c++)
            put_num(w, (char[]){'m', 'c', 'c', '_', fs_class_letters(row->pooled.classes)[c], 0}, row->pooled.mcc[c]);
}

/* Where its folds trained: "cpu", "block", "library" or "mixed"; null
 * without a fold. */
static void json_gpu_path(FsJsonOut *w, const FsReportRow *row)
{
    json_key(w, "gpu_path");
    if (row->gpu_path)
        json_str(w, row->gpu_path);
    else
        json_null(w);
}

static void json_row(FsJsonOut *w, const FsReport *rep, const FsReportRow *row)
{
    json_object_begin(w);
    json_member_int(w, "version", FS_LEADERBOARD_JSON_VERSION);
    json_member_int(w, "rank", row->rank);
    json_member_str(w, "id", row->id);
    json_member_int(w, "index", row->index);
    json_member_int(w, "sweep_version", row->sweep_version);
    json_member_str(w, "status", report_status_name(row->status));
    json_member_str(w, "reason", row->reason);
    if (row->cut) {
        json_key(w, "pruned");
        json_object_begin(w);
        json_member_int(w, "fold", row->cut->fold);
        json_member_int(w, "epoch", row->cut->epoch);
        json_member_str(w, "rule", row->cut->rule);
        put_num(w, "value", row->cut->value);
        put_num(w, "threshold", row->cut->threshold);
        json_end(w);
    }
    json_key(w, "metric");
    json_object_begin(w);
    json_member_str(w, "name", metrics_kind_name(rep->spec.metric));
    put_num(w, "mean", row->mean);
    put_num(w, "std", row->std);
    json_end(w);
    /* Against the best (docs/statistics.md): null where not compared. */
    char ci_key[32];
    snprintf(ci_key, sizeof ci_key, "%s_ci95", metrics_kind_name(rep->spec.metric));
    json_key(w, ci_key);
    if (row->has_ci) {
        json_array_begin(w);
        json_num64_full(w, row->ci_lo);
        json_num64_full(w, row->ci_hi);
        json_end(w);
    } else {
        json_null(w);
    }
    put_num(w, "p_vs_best", row->p_vs_best);
    json_key(w, "tied_with_best");
    if (row->tied < 0) json_null(w);
    else json_bool(w, row->tied);
    if (rep->spec.n_objectives) { /* run.objectives: the Pareto front */
        json_key(w, "pareto");
        if (row->pareto < 0) json_null(w);
        else json_bool(w, row->pareto);
    }
    json_member_int(w, "folds_done", row->n_done);
    json_member_int(w, "repeats", rep->spec.repeats > 1 ? rep->spec.repeats : 1);
    json_member_int(w, "seeds", row->seeds);
    put_num(w, "seed_sd", row->seed_sd);
    json_row_classes(w, rep, row);
    for (int d = 0; d < rep->n_param; d++) {
        json_key(w, rep->param_col[d]);
        json_param(w, row->param[d]);
    }
    json_key(w, "folds");
    json_array_begin(w);
    for (int s = 0; s < rep->spec.folds; s++) json_fold(w, &row->folds[s]);
    json_end(w);
    put_num(w, "seconds", row->seconds);
    json_gpu_path(w, row);
    json_member_int(w, "params", row->n_params);
    json_member_str(w, "arch", row->arch);
    json_key(w, "config");
    json_raw(w, row->config); /* already JSON: embedded, not quoted */
    if (row->test || row->test_refit) {
        json_key(w, "test");
        json_object_begin(w);
        if (row->test) json_test(w, row->test);
        if (row->test_refit) {
            json_key(w, "refit");
            json_object_begin(w);
            json_test(w, row->test_refit);
            json_end(w);
        }
        json_end(w);
    }
    json_end(w);
}

/* An array of rows, one a line. */
static void write_json(const FsReport *rep, int top, FILE *out)
{
    int n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL, .pretty = 1};
    json_array_begin(&w);
    for (int i = 0; i < n; i++) json_row(&w, rep, &rep->rows[i]);
    json_end(&w);
    json_tail(&w, "\n");
    /* A config the journal's reader took is one JSON value; nothing else
     * can be refused. */
    FS_ASSERT(!json_out_error(&w));
    fputs(w.p, out);
    json_out_free(&w);
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
    char path[FS_PATH_IN_DIR], *text = NULL;
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

void report_print_leaderboard(FILE *out, const char *dir, const FsJournal *j, const FsSweep *sw, int top)
{
    FsReportSpec spec;
    report_spec_from_sweep(&spec, sw);
    FsReport rep;
    report_build(&rep, j, &spec);
    report_write(&rep, FS_REPORT_TABLE, top, out);
    if (top > 0 && rep.n_rows > top) {
        fprintf(out, "(%d more: %s leaderboard ", rep.n_rows - top, fs_program());
        fs_put_shell_word(out, dir);
        fputs(")\n", out);
    }
    report_free(&rep);
}
