/*
 * format: predictions as text. PSIPRED's own files, byte for byte in
 * layout: VFORMAT (.ss2: the header line, a blank line, then number,
 * residue, state and the C, H, E probabilities, PSIPRED's column order)
 * and HFORMAT (.horiz: Conf / Pred / AA lines in blocks of 60). Both hold
 * one protein and name neither it nor foldsweep (parsers skip two lines or
 * match the header), so the caller gives each protein its own file. Also
 * a NetSurfP-2.0-style CSV and a three-line FASTA.
 */
#include <string.h>

#include "predict/predict.h"

/* What PSIPRED 4 writes; readers match these lines. */
#define PSIPRED_VFORMAT "# PSIPRED VFORMAT (PSIPRED V4.0)\n\n"
#define PSIPRED_HFORMAT "# PSIPRED HFORMAT (PSIPRED V4.0)\n"

static const char *const names[] = {"ss2", "horiz", "csv", "fasta"};

int predict_format_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

const char *predict_format_ext(FsPredFormat f) { return (unsigned)f < 4 ? names[f] : "txt"; }

int predict_class(const float *p)
{
    int arg = 0;
    for (int k = 1; k < FS_CLASSES; k++)
        if (p[k] > p[arg]) arg = k;
    return arg;
}

char predict_state(const float *p) { return FS_CLASS_LETTERS[predict_class(p)]; }

/* PSIPRED's confidence digit: how far the best state is ahead of the
 * second, floor(10 * (best - second)) clipped to 0..9. The 1e-4 keeps a
 * difference such as 0.7f - 0.2f (4.9999995 x 10 in float) on its digit.
 * The second is the sum less the best and the worst, the float operations
 * the digits have always come from (picking the middle value could round
 * otherwise); that takes exactly three classes. */
_Static_assert(FS_CLASSES == 3, "confidence() takes the middle of three probabilities");
static char confidence(const float *p)
{
    float a = p[0], b = p[1], c = p[2];
    float hi = a > b ? (a > c ? a : c) : (b > c ? b : c);
    float mid = a + b + c - hi - (a < b ? (a < c ? a : c) : (b < c ? b : c));
    int d = (int)(10.0f * (hi - mid) + 1e-4f);
    return (char)('0' + (d > 9 ? 9 : d < 0 ? 0 : d));
}

static void write_ss2(FILE *out, const FsDataset *ds, uint32_t lo, uint32_t hi, const float *probs)
{
    for (uint32_t r = lo; r < hi; r++) {
        const float *p = probs + (size_t)r * FS_CLASSES;
        fprintf(out, "%4u %c %c  %6.3f %6.3f %6.3f\n", r - lo + 1, fs_aa_letter(ds->aa[r]), predict_state(p),
                (double)p[FS_SS_C], (double)p[FS_SS_H], (double)p[FS_SS_E]);
    }
}

static void write_horiz(FILE *out, const FsDataset *ds, uint32_t lo, uint32_t hi, const float *probs)
{
    for (uint32_t b = lo; b < hi; b += 60) {
        uint32_t e = hi - b < 60 ? hi : b + 60;
        fputs("\nConf: ", out);
        for (uint32_t r = b; r < e; r++) fputc(confidence(probs + (size_t)r * FS_CLASSES), out);
        fputs("\nPred: ", out);
        for (uint32_t r = b; r < e; r++) fputc(predict_state(probs + (size_t)r * FS_CLASSES), out);
        fputs("\n  AA: ", out);
        for (uint32_t r = b; r < e; r++) fputc(fs_aa_letter(ds->aa[r]), out);
        fputs("\n      ", out);
        for (uint32_t k = 10; k <= e - b; k += 10) fprintf(out, "%10u", b - lo + k);
        fputs("\n\n", out);
    }
}

/* NetSurfP-2.0 writes ids bare; one holding a comma or a quote is quoted
 * (RFC 4180, quotes doubled), or it would shift every column after it. */
static void write_id(FILE *out, const char *id)
{
    if (!strpbrk(id, ",\"")) {
        fputs(id, out);
        return;
    }
    fputc('"', out);
    for (const char *c = id; *c; c++) {
        if (*c == '"') fputc('"', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

static void write_csv(FILE *out, const FsDataset *ds, const char *id, uint32_t lo, uint32_t hi, const float *probs,
                      const float *agree)
{
    for (uint32_t r = lo; r < hi; r++) {
        const float *p = probs + (size_t)r * FS_CLASSES;
        write_id(out, id);
        fprintf(out, ",%c,%u,%c,%.6f,%.6f,%.6f,%.4f\n", fs_aa_letter(ds->aa[r]), r - lo + 1, predict_state(p),
                (double)p[FS_SS_H], (double)p[FS_SS_E], (double)p[FS_SS_C], agree ? (double)agree[r] : 1.0);
    }
}

void predict_write(FILE *out, FsPredFormat fmt, const FsDataset *ds, long prot, const float *probs,
                   const float *agree, int header)
{
    /* NetSurfP-2.0's columns in its order, those foldsweep has; agree is ours. */
    if (fmt == FS_PRED_CSV && header) fputs("id,seq,n,q3,p[q3_H],p[q3_E],p[q3_C],agree\n", out);
    uint32_t first = prot < 0 ? 0 : (uint32_t)prot, last = prot < 0 ? ds->n_prot : (uint32_t)prot + 1;
    for (uint32_t i = first; i < last; i++) {
        const char *id = data_protein_name(ds, i);
        uint32_t lo = ds->seg_off[ds->prot_seg[i]], hi = ds->seg_off[ds->prot_seg[i + 1]];
        switch (fmt) {
        case FS_PRED_SS2:
            fputs(PSIPRED_VFORMAT, out);
            write_ss2(out, ds, lo, hi, probs);
            break;
        case FS_PRED_HORIZ:
            fputs(PSIPRED_HFORMAT, out);
            write_horiz(out, ds, lo, hi, probs);
            break;
        case FS_PRED_CSV:
            write_csv(out, ds, id, lo, hi, probs, agree);
            break;
        case FS_PRED_FASTA:
            fprintf(out, ">%s\n", id);
            for (uint32_t r = lo; r < hi; r++) fputc(fs_aa_letter(ds->aa[r]), out);
            fputc('\n', out);
            for (uint32_t r = lo; r < hi; r++) fputc(predict_state(probs + (size_t)r * FS_CLASSES), out);
            fputc('\n', out);
            break;
        }
    }
}
