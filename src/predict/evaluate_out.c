/*
 * evaluate_out: an evaluation as a terminal table, Markdown, one CSV row
 * or a JSON object (its layout in docs/models.md).
 */
#include <math.h>
#include <string.h>

#include "json/json.h"
#include "predict/predict.h"

static const char *const formats[] = {"table", "md", "csv", "json"};

int evaluate_format_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, formats[i])) return i;
    return -1;
}

/* A CSV cell: the shortest text that reads back as x (README: files made
 * for programs keep every digit), empty where the value is undefined. */
static void num(FILE *out, double x)
{
    char t[FS_DOUBLE_TEXT];
    if (isfinite(x)) fputs(fs_format_double(t, sizeof t, x), out);
}

/* A JSON member: the shortest text that reads back as x (null where it is
 * undefined: the writer's nonfinite). */
static void put_num(FsJsonOut *w, const char *key, double x)
{
    json_key(w, key);
    json_num64(w, x);
}

/* The coverage members of "identity": the threshold, the proteins above
 * it, and the first of those not above the identity threshold. */
static void json_coverage(FsJsonOut *w, const FsIdentityReport *r)
{
    put_num(w, "max_coverage", r->max_coverage);
    json_member_uint(w, "coverage_over", r->covered);
    json_key(w, "coverage_examples");
    json_array_begin(w);
    for (int i = 0; i < r->n_cfirst; i++) {
        json_object_begin(w);
        json_member_str(w, "test", r->cfirst[i].test);
        json_key(w, "train");
        json_array_begin(w);
        for (int k = 0; k < 2 && r->cfirst[i].train[k][0]; k++) json_str(w, r->cfirst[i].train[k]);
        json_end(w);
        put_num(w, "coverage", r->cfirst[i].coverage);
        json_end(w);
    }
    json_end(w);
}

/* "identity": {"checked", "max", "above": {"0.25": n, ...}, "over",
 * "left_out", "examples": [{"test", "train", "identity"}], "max_coverage",
 * "coverage_over", "coverage_examples": [{"test", "train": [...],
 * "coverage"}]} or {"checked": false, "why"}. */
static void json_identity(FsJsonOut *w, const FsIdentityReport *r)
{
    json_key(w, "identity");
    json_object_begin(w);
    json_key(w, "checked");
    json_bool(w, r->checked);
    if (!r->checked) {
        json_member_str(w, "why", r->why);
        json_end(w);
        return;
    }
    put_num(w, "max", r->max);
    json_key(w, "above");
    json_object_begin(w);
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) {
        char level[32];
        snprintf(level, sizeof level, "%g", fs_identity_levels[l]);
        json_member_uint(w, level, r->above[l]);
    }
    json_end(w);
    json_member_uint(w, "over", r->over);
    json_member_uint(w, "left_out", r->left_out);
    json_key(w, "examples");
    json_array_begin(w);
    for (int i = 0; i < r->n_first; i++) {
        json_object_begin(w);
        json_member_str(w, "test", r->first[i].test);
        json_member_str(w, "train", r->first[i].train);
        put_num(w, "identity", r->first[i].identity);
        json_end(w);
    }
    json_end(w);
    json_coverage(w, r);
    json_end(w);
}

/* The identity check in words, for the table and Markdown. */
static void text_identity(FILE *out, const FsIdentityReport *r, int md)
{
    fputs(md ? "\n**Identity to training proteins:** " : "\nidentity to training proteins: ", out);
    if (!r->checked) {
        fprintf(out, "not checked: %s\n", r->why);
        return;
    }
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++)
        fprintf(out, "%s%u above %g", l ? ", " : "", r->above[l], fs_identity_levels[l]);
    fprintf(out, " (test proteins; threshold %g); coverage: %u above %g (threshold; the share of a protein's "
            "residues in near-identical stretches", r->max, r->covered, r->max_coverage);
    if (r->left_out) fprintf(out, "; %u left out", r->left_out);
    fputs(")\n", out);
}

static void confusion(FsJsonOut *w, const FsMetrics *m)
{
    json_key(w, "confusion");
    json_array_begin(w);
    for (int a = 0; a < m->classes; a++) {
        json_array_begin(w);
        for (int p = 0; p < m->classes; p++) json_uint(w, (unsigned long long)m->confusion[a][p]);
        json_end(w);
    }
    json_end(w);
}

static void write_json(FILE *out, const FsEvaluation *ev, const char *models, FsOverlapRule overlap)
{
    const FsMetrics *m = &ev->m;
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL};
    json_object_begin(&w);
    json_member_str(&w, "models", models);
    json_member_str(&w, "data", ev->data);
    json_key(&w, "data_fingerprint");
    json_strf(&w, "%016llx", (unsigned long long)ev->data_fingerprint);
    json_member_uint(&w, "proteins", ev->proteins);
    json_member_uint(&w, "residues", (unsigned long long)ev->residues);
    json_member_uint(&w, "scored", (unsigned long long)ev->scored);
    put_num(&w, "q3", m->q3);
    if (m->classes == FS_CLASSES8) {
        /* Q3 above is the 8-state prediction reduced (H G I -> H, E B -> E, T S C -> C). */
        put_num(&w, "q8", m->q8);
        json_member_str(&w, "reduction", FS_CLASS8_REDUCTION_TEXT);
    } else if (ev->reduced) {
        /* 8-state models on 3-state labels: their predictions reduced. */
        json_member_int(&w, "model_classes", ev->reduced);
        json_member_str(&w, "reduction", FS_CLASS8_REDUCTION_TEXT);
    }
    json_key(&w, "q3_ci95");
    json_array_begin(&w);
    json_num64(&w, ev->ci_lo);
    json_num64(&w, ev->ci_hi);
    json_end(&w);
    json_key(&w, "bootstrap");
    json_object_begin(&w);
    json_member_int(&w, "resamples", ev->reps);
    json_member_uint(&w, "seed", (unsigned long long)ev->seed);
    json_end(&w);
    json_key(&w, "sov");
    json_object_begin(&w);
    /* Each class by its letter, then all of them (metrics_sov's class FS_CLASSES). */
    for (int c = 0; c <= FS_CLASSES; c++)
        put_num(&w, c < FS_CLASSES ? (char[]){FS_CLASS_LETTERS[c], 0} : "all", metrics_sov(&ev->sov, c));
    json_end(&w);
    json_key(&w, "classes");
    json_object_begin(&w);
    for (int c = 0; c < m->classes; c++) {
        json_key(&w, (char[]){fs_class_letters(m->classes)[c], 0});
        json_object_begin(&w);
        put_num(&w, "precision", m->precision[c]);
        put_num(&w, "recall", m->recall[c]);
        put_num(&w, "mcc", m->mcc[c]);
        json_end(&w);
    }
    json_end(&w);
    confusion(&w, m);
    json_key(&w, "per_protein_q3");
    json_object_begin(&w);
    put_num(&w, "mean", ev->prot_mean);
    put_num(&w, "median", ev->prot_median);
    put_num(&w, "p10", ev->prot_p10);
    json_end(&w);
    json_identity(&w, &ev->ident);
    json_member_uint(&w, "overlap", ev->overlap);
    json_key(&w, "overlap_allowed");
    json_bool(&w, overlap == FS_OVERLAP_ALLOW);
    json_key(&w, "overlap_excluded");
    json_bool(&w, overlap == FS_OVERLAP_EXCLUDE);
    json_key(&w, "overlap_examples");
    json_array_begin(&w);
    for (int i = 0; i < ev->n_names; i++) json_str(&w, ev->names[i]);
    json_end(&w);
    json_end(&w);
    json_tail(&w, "\n");
    FS_ASSERT(!json_out_error(&w)); /* an undefined score is null, nothing is refused */
    fputs(w.p, out);
    json_out_free(&w);
}

/* An 8-state evaluation's CSV: the 3-state columns (Q3, SOV, per-protein Q3
 * on the reduced states), then q8 and each class's MCC by letter. */
static void csv_extra(FILE *out, const FsMetrics *m, int header)
{
    if (m->classes != FS_CLASSES8) return;
    if (header) {
        fputs(",q8", out);
        for (int c = 0; c < m->classes; c++) fprintf(out, ",mcc8_%c", FS_CLASS8_LETTERS[c]);
        return;
    }
    fputc(',', out);
    num(out, m->q8);
    for (int c = 0; c < m->classes; c++) {
        fputc(',', out);
        num(out, m->mcc[c]);
    }
}

static void write_csv(FILE *out, const FsEvaluation *ev, const char *models)
{
    fputs("models,data,proteins,scored,q3,q3_lo,q3_hi,sov,sov_H,sov_E,sov_C,mcc_H,mcc_E,mcc_C,"
          "protein_q3_mean,protein_q3_median,protein_q3_p10,overlap", out);
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) fprintf(out, ",identity_above_%g", fs_identity_levels[l]);
    fputs(",identity_left_out,coverage_over", out);
    csv_extra(out, &ev->m, 1);
    fputs("\n", out);
    fprintf(out, "\"%s\",\"%s\",%u,%llu,", models, ev->data, ev->proteins, (unsigned long long)ev->scored);
    /* In the header's order: sov (all classes), then H, E, C. */
    /* mcc_H, mcc_E, mcc_C: of the 3 states (an 8-state matrix reduced). */
    FsMetrics m3;
    uint64_t r3[FS_MAX_CLASSES][FS_MAX_CLASSES];
    metrics_reduce_confusion(ev->m.classes, ev->m.confusion, r3);
    metrics_from_classes(&m3, FS_CLASSES, r3);
    double v[] = {ev->m.q3, ev->ci_lo, ev->ci_hi, metrics_sov(&ev->sov, FS_CLASSES), metrics_sov(&ev->sov, FS_SS_H),
                  metrics_sov(&ev->sov, FS_SS_E), metrics_sov(&ev->sov, FS_SS_C), m3.mcc[FS_SS_H],
                  m3.mcc[FS_SS_E], m3.mcc[FS_SS_C], ev->prot_mean, ev->prot_median, ev->prot_p10};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        num(out, v[i]);
        fputc(',', out);
    }
    fprintf(out, "%u", ev->overlap);
    const FsIdentityReport *id = &ev->ident;
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) {
        if (id->checked) fprintf(out, ",%u", id->above[l]);
        else fputc(',', out);
    }
    if (id->checked) fprintf(out, ",%u,%u", id->left_out, id->covered);
    else fputs(",,", out);
    csv_extra(out, &ev->m, 0);
    fputc('\n', out);
}

/* Per class: precision, recall, MCC and the confusion row (3 x 3, or 8 x 8). */
static void class_rows(FILE *out, const FsMetrics *m, int md)
{
    const int K = m->classes;
    const char *letters = fs_class_letters(K);
    if (md) {
        fputs("| true class | precision | recall | MCC |", out);
        for (int c = 0; c < K; c++) fprintf(out, " predicted %c |", letters[c]);
        fputs("\n|---|---|---|---|", out);
        for (int c = 0; c < K; c++) fputs("---|", out);
        fputs("\n", out);
    } else {
        fputs("class  precision  recall   MCC      (confusion: rows true, columns predicted", out);
        for (int c = 0; c < K; c++) fprintf(out, " %c", letters[c]);
        fputs(")\n", out);
    }
    for (int c = 0; c < K; c++) {
        const uint64_t *row = m->confusion[c]; /* by predicted class, in the header's order */
        if (md)
            fprintf(out, "| %c | %.4f | %.4f | %.4f |", letters[c], m->precision[c], m->recall[c], m->mcc[c]);
        else
            fprintf(out, "%c      %.4f     %.4f   %.4f  ", letters[c], m->precision[c], m->recall[c], m->mcc[c]);
        for (int p = 0; p < K; p++) fprintf(out, md ? " %llu |" : " %8llu", (unsigned long long)row[p]);
        fputs("\n", out);
    }
}

/* Table and Markdown share their content; md uses pipes. */
static void write_text(FILE *out, const FsEvaluation *ev, const char *models, int md, FsOverlapRule overlap)
{
    const FsMetrics *m = &ev->m;
    const char *b = md ? "**" : "";
    fprintf(out, "%smodels%s %s\n%sdata%s   %s (%u proteins, %llu residues, %llu scored)\n\n", b, b, models, b, b,
            ev->data, ev->proteins, (unsigned long long)ev->residues, (unsigned long long)ev->scored);
    if (md) fputs("| measure | value |\n|---|---|\n", out);
    const char *l = md ? "| " : "", *mid = md ? " | " : "  ", *r = md ? " |" : "";
    /* Q3 and SOV in percent (fs_format_percent); the CSV and JSON keep fractions. */
    if (m->classes == FS_CLASSES8)
        fprintf(out, "%sQ8%s%s%% (Q3 and SOV below: the 8-state predictions reduced, %s)%s\n", l,
                md ? mid : "                  ", fs_percent_text(m->q8), FS_CLASS8_REDUCTION_TEXT, r);
    fprintf(out, "%sQ3%s%s%% (95%% interval %s-%s%%: bootstrap over proteins, %d resamples, seed %llu)%s\n", l,
            md ? mid : "                  ", fs_percent_text(m->q3), fs_percent_text(ev->ci_lo),
            fs_percent_text(ev->ci_hi), ev->reps, (unsigned long long)ev->seed, r);
    if (ev->reduced)
        fprintf(out, "%sreduced%s8-state models on 3-state labels: Q3 and SOV of their predictions reduced (%s)%s\n",
                l, md ? mid : "             ", FS_CLASS8_REDUCTION_TEXT, r);
    fprintf(out, "%sSOV'99%s%s%% (H %s%%, E %s%%, C %s%%)%s\n", l, md ? mid : "              ",
            fs_percent_text(metrics_sov(&ev->sov, FS_CLASSES)), fs_percent_text(metrics_sov(&ev->sov, FS_SS_H)),
            fs_percent_text(metrics_sov(&ev->sov, FS_SS_E)), fs_percent_text(metrics_sov(&ev->sov, FS_SS_C)), r);
    fprintf(out, "%sQ3 per protein%smean %s%%, median %s%%, 10th percentile %s%%%s\n\n", l, md ? mid : "      ",
            fs_percent_text(ev->prot_mean), fs_percent_text(ev->prot_median), fs_percent_text(ev->prot_p10), r);
    class_rows(out, m, md);
    if (ev->overlap) {
        fprintf(out, "\n%s%u test protein%s identical to proteins the models were trained or validated on (%s",
                md ? "**Overlap:** " : "overlap: ", ev->overlap, ev->overlap == 1 ? " is" : "s are", ev->names[0]);
        for (int i = 1; i < ev->n_names; i++) fprintf(out, ", %s", ev->names[i]);
        fprintf(out, "%s)%s\n", ev->overlap > (uint32_t)ev->n_names ? ", ..." : "",
                overlap == FS_OVERLAP_ALLOW ? "; scored anyway (--allow-overlap): these scores are optimistic"
                : overlap == FS_OVERLAP_EXCLUDE ? "; left out of every score (--exclude-overlap)" : "");
    }
    text_identity(out, &ev->ident, md);
}

void evaluate_write(FILE *out, int fmt, const FsEvaluation *ev, const char *models, FsOverlapRule overlap)
{
    if (fmt == 3) write_json(out, ev, models, overlap);
    else if (fmt == 2) write_csv(out, ev, models);
    else write_text(out, ev, models, fmt == 1, overlap);
}
