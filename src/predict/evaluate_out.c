/*
 * evaluate_out: an evaluation as a terminal table, Markdown, one CSV row
 * or a JSON object (its layout in docs/models.md).
 */
#include <math.h>
#include <string.h>

#include "journal/journal.h"
#include "predict/predict.h"

static const char *const formats[] = {"table", "md", "csv", "json"};
static const char CLS[] = "HEC";

int evaluate_format_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, formats[i])) return i;
    return -1;
}

/* A number, or an empty cell / null where it is undefined: 4 decimals
 * for people, every digit (%.9g) for JSON. */
static void num(FILE *out, double x, const char *undef)
{
    if (!isfinite(x)) fputs(undef, out);
    else if (!strcmp(undef, "null")) fprintf(out, "%.9g", x);
    else fprintf(out, "%.4f", x);
}

/* "identity": {"checked", "max", "above": {"0.25": n, ...}, "over",
 * "left_out", "examples": [{"test", "train", "identity"}]} or {"checked":
 * false, "why"}. */
static void json_identity(FILE *out, const FsIdentityReport *r)
{
    fprintf(out, ",\"identity\":{\"checked\":%s", r->checked ? "true" : "false");
    if (!r->checked) {
        fputs(",\"why\":", out);
        journal_json_write_string(out, r->why);
        fputc('}', out);
        return;
    }
    fprintf(out, ",\"max\":%.9g,\"above\":{", r->max);
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++)
        fprintf(out, "%s\"%g\":%u", l ? "," : "", fs_identity_levels[l], r->above[l]);
    fprintf(out, "},\"over\":%u,\"left_out\":%u,\"examples\":[", r->over, r->left_out);
    for (int i = 0; i < r->n_first; i++) {
        fputs(i ? ",{\"test\":" : "{\"test\":", out);
        journal_json_write_string(out, r->first[i].test);
        fputs(",\"train\":", out);
        journal_json_write_string(out, r->first[i].train);
        fprintf(out, ",\"identity\":%.9g}", r->first[i].identity);
    }
    fputs("]}", out);
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
    fprintf(out, " (test proteins; threshold %g", r->max);
    if (r->left_out) fprintf(out, ", %u left out", r->left_out);
    fputs(")\n", out);
}

static void write_json(FILE *out, const FsEvaluation *ev, const char *models, const char *data, int allow)
{
    const FsMetrics *m = &ev->m;
    fputs("{\"models\":", out);
    journal_json_write_string(out, models);
    fputs(",\"data\":", out);
    journal_json_write_string(out, data);
    fprintf(out, ",\"data_fingerprint\":\"%016llx\",\"proteins\":%u,\"residues\":%llu,\"scored\":%llu,\"q3\":",
            (unsigned long long)ev->data_fingerprint, ev->proteins, (unsigned long long)ev->residues,
            (unsigned long long)ev->scored);
    num(out, m->q3, "null");
    fputs(",\"q3_ci95\":[", out);
    num(out, ev->ci_lo, "null");
    fputc(',', out);
    num(out, ev->ci_hi, "null");
    fprintf(out, "],\"bootstrap\":{\"resamples\":%d,\"seed\":%llu},\"sov\":{", ev->reps, (unsigned long long)ev->seed);
    for (int c = 0; c < 4; c++) {
        fprintf(out, "%s\"%s\":", c ? "," : "", c < 3 ? (char[]){CLS[c], 0} : "all");
        num(out, metrics_sov(&ev->sov, c), "null");
    }
    fputs("},\"classes\":{", out);
    for (int c = 0; c < 3; c++) {
        fprintf(out, "%s\"%c\":{\"precision\":", c ? "," : "", CLS[c]);
        num(out, m->precision[c], "null");
        fputs(",\"recall\":", out);
        num(out, m->recall[c], "null");
        fputs(",\"mcc\":", out);
        num(out, m->mcc[c], "null");
        fputc('}', out);
    }
    fputs("},\"confusion\":[", out);
    for (int a = 0; a < 3; a++)
        fprintf(out, "%s[%llu,%llu,%llu]", a ? "," : "", (unsigned long long)m->confusion[a][0],
                (unsigned long long)m->confusion[a][1], (unsigned long long)m->confusion[a][2]);
    fputs("],\"per_protein_q3\":{\"mean\":", out);
    num(out, ev->prot_mean, "null");
    fputs(",\"median\":", out);
    num(out, ev->prot_median, "null");
    fputs(",\"p10\":", out);
    num(out, ev->prot_p10, "null");
    fputc('}', out);
    json_identity(out, &ev->ident);
    fprintf(out, ",\"overlap\":%u,\"overlap_allowed\":%s,\"overlap_excluded\":%s,\"overlap_examples\":[",
            ev->overlap, allow == 1 ? "true" : "false", allow == 2 ? "true" : "false");
    for (int i = 0; i < ev->n_names; i++) {
        if (i) fputc(',', out);
        journal_json_write_string(out, ev->names[i]);
    }
    fputs("]}\n", out);
}

static void write_csv(FILE *out, const FsEvaluation *ev, const char *models, const char *data)
{
    fputs("models,data,proteins,scored,q3,q3_lo,q3_hi,sov,sov_H,sov_E,sov_C,mcc_H,mcc_E,mcc_C,"
          "protein_q3_mean,protein_q3_median,protein_q3_p10,overlap", out);
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) fprintf(out, ",identity_above_%g", fs_identity_levels[l]);
    fputs(",identity_left_out\n", out);
    fprintf(out, "\"%s\",\"%s\",%u,%llu,", models, data, ev->proteins, (unsigned long long)ev->scored);
    double v[] = {ev->m.q3, ev->ci_lo, ev->ci_hi, metrics_sov(&ev->sov, 3), metrics_sov(&ev->sov, 0),
                  metrics_sov(&ev->sov, 1), metrics_sov(&ev->sov, 2), ev->m.mcc[0], ev->m.mcc[1], ev->m.mcc[2],
                  ev->prot_mean, ev->prot_median, ev->prot_p10};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        num(out, v[i], "");
        fputc(',', out);
    }
    fprintf(out, "%u", ev->overlap);
    const FsIdentityReport *id = &ev->ident;
    for (int l = 0; l < FS_IDENTITY_LEVELS; l++) {
        if (id->checked) fprintf(out, ",%u", id->above[l]);
        else fputc(',', out);
    }
    if (id->checked) fprintf(out, ",%u", id->left_out);
    else fputc(',', out);
    fputc('\n', out);
}

/* Table and Markdown share their content; md uses pipes. */
static void write_text(FILE *out, const FsEvaluation *ev, const char *models, const char *data, int md, int allow)
{
    const FsMetrics *m = &ev->m;
    const char *b = md ? "**" : "";
    fprintf(out, "%smodels%s %s\n%sdata%s   %s (%u proteins, %llu residues, %llu scored)\n\n", b, b, models, b, b,
            data, ev->proteins, (unsigned long long)ev->residues, (unsigned long long)ev->scored);
    if (md) fputs("| measure | value |\n|---|---|\n", out);
    const char *l = md ? "| " : "", *mid = md ? " | " : "  ", *r = md ? " |" : "";
    /* Q3 and SOV in percent (fs_format_percent); the CSV and JSON keep fractions. */
    fprintf(out, "%sQ3%s%s%% (95%% interval %s-%s%%: bootstrap over proteins, %d resamples, seed %llu)%s\n", l,
            md ? mid : "                  ", fs_percent_text(m->q3), fs_percent_text(ev->ci_lo),
            fs_percent_text(ev->ci_hi), ev->reps, (unsigned long long)ev->seed, r);
    fprintf(out, "%sSOV'99%s%s%% (H %s%%, E %s%%, C %s%%)%s\n", l, md ? mid : "              ",
            fs_percent_text(metrics_sov(&ev->sov, 3)), fs_percent_text(metrics_sov(&ev->sov, 0)),
            fs_percent_text(metrics_sov(&ev->sov, 1)), fs_percent_text(metrics_sov(&ev->sov, 2)), r);
    fprintf(out, "%sQ3 per protein%smean %s%%, median %s%%, 10th percentile %s%%%s\n\n", l, md ? mid : "      ",
            fs_percent_text(ev->prot_mean), fs_percent_text(ev->prot_median), fs_percent_text(ev->prot_p10), r);
    if (md) fputs("| true class | precision | recall | MCC | predicted H | predicted E | predicted C |\n|---|---|---|---|---|---|---|\n", out);
    else fputs("class  precision  recall   MCC      (confusion: rows true, columns predicted H E C)\n", out);
    for (int c = 0; c < 3; c++) {
        if (md)
            fprintf(out, "| %c | %.4f | %.4f | %.4f | %llu | %llu | %llu |\n", CLS[c], m->precision[c], m->recall[c],
                    m->mcc[c], (unsigned long long)m->confusion[c][0], (unsigned long long)m->confusion[c][1],
                    (unsigned long long)m->confusion[c][2]);
        else
            fprintf(out, "%c      %.4f     %.4f   %.4f   %8llu %8llu %8llu\n", CLS[c], m->precision[c], m->recall[c],
                    m->mcc[c], (unsigned long long)m->confusion[c][0], (unsigned long long)m->confusion[c][1],
                    (unsigned long long)m->confusion[c][2]);
    }
    if (ev->overlap) {
        fprintf(out, "\n%s%u test protein%s identical to proteins the models were trained or validated on (%s",
                md ? "**Overlap:** " : "overlap: ", ev->overlap, ev->overlap == 1 ? " is" : "s are", ev->names[0]);
        for (int i = 1; i < ev->n_names; i++) fprintf(out, ", %s", ev->names[i]);
        fprintf(out, "%s)%s\n", ev->overlap > (uint32_t)ev->n_names ? ", ..." : "",
                allow == 1 ? "; scored anyway (--allow-overlap): these scores are optimistic"
                : allow == 2 ? "; left out of every score (--exclude-overlap)" : "");
    }
    text_identity(out, &ev->ident, md);
}

void evaluate_write(FILE *out, int fmt, const FsEvaluation *ev, const char *models, const char *data,
                    int allow_overlap)
{
    if (fmt == 3) write_json(out, ev, models, data, allow_overlap);
    else if (fmt == 2) write_csv(out, ev, models, data);
    else write_text(out, ev, models, data, fmt == 1, allow_overlap);
}
