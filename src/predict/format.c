/*
 * format: predictions as text. PSIPRED's own files, byte for byte in
 * layout: VFORMAT (.ss2: the header line, a blank line, then number,
 * residue, state and the C, H, E probabilities, PSIPRED's column order)
 * and HFORMAT (.horiz: Conf / Pred / AA lines in blocks of 60). Both hold
 * one protein and name neither it nor foldsweep (parsers skip two lines or
 * match the header), so the caller gives each protein its own file. Also
 * a NetSurfP-2.0-style CSV and a three-line FASTA. An 8-state model's
 * predictions (predict_write) are 8-state where the format allows.
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

int predict_class(const float *p, int classes)
{
    int arg = 0;
    for (int k = 1; k < fs_classes(classes); k++)
        if (p[k] > p[arg]) arg = k;
    return arg;
}

char predict_state(const float *p, int classes) { return fs_class_letters(classes)[predict_class(p, classes)]; }

/* An 8-state residue as 3 states: the probabilities summed over the
 * reduction (H G I, E B, T S C) and the letter of its 8-state argmax
 * reduced (the standard reduction of the prediction). A 3-state one as it is. */
static char reduced(const float *p, int classes, float q[FS_CLASSES])
{
    if (fs_classes(classes) != FS_CLASSES8) {
        for (int c = 0; c < FS_CLASSES; c++) q[c] = p[c];
        return predict_state(p, classes);
    }
    for (int c = 0; c < FS_CLASSES; c++) q[c] = 0.0f;
    for (int c = 0; c < FS_CLASSES8; c++) q[fs_class_reduce(FS_CLASSES8, c)] += p[c];
    return FS_CLASS_LETTERS[fs_class_reduce(FS_CLASSES8, predict_class(p, classes))];
}

/* PSIPRED's confidence digit: how far the best state is ahead of the
 * second, floor(10 * (best - second)) clipped to 0..9. The 1e-4 keeps a
 * difference such as 0.7f - 0.2f (4.9999995 x 10 in float) on its digit.
 * The second is the sum less the best and the worst, the float operations
 * the digits have always come from (picking the middle value could round
 * otherwise); that takes exactly three classes. */
_Static_assert(FS_CLASSES == 3, "confidence() takes the middle of three probabilities");
static char confidence3(const float *p)
{
    float a = p[0], b = p[1], c = p[2];
    float hi = a > b ? (a > c ? a : c) : (b > c ? b : c);
    float mid = a + b + c - hi - (a < b ? (a < c ? a : c) : (b < c ? b : c));
    int d = (int)(10.0f * (hi - mid) + 1e-4f);
    return (char)('0' + (d > 9 ? 9 : d < 0 ? 0 : d));
}

/* The digit over 8 states: the best less the second best, the same rule. */
static char confidence(const float *p, int classes)
{
    if (fs_classes(classes) != FS_CLASSES8) return confidence3(p);
    float hi = p[0], mid = -1.0f;
    for (int k = 1; k < FS_CLASSES8; k++)
        if (p[k] > hi)
            mid = hi, hi = p[k];
        else if (p[k] > mid)
            mid = p[k];
    int d = (int)(10.0f * (hi - mid) + 1e-4f);
    return (char)('0' + (d > 9 ? 9 : d < 0 ? 0 : d));
}

/* PSIPRED's VFORMAT is 3-state: an 8-state prediction is written reduced. */
static void write_ss2(FILE *out, const FsDataset *ds, uint32_t lo, uint32_t hi, const float *probs, int K)
{
    for (uint32_t r = lo; r < hi; r++) {
        float p[FS_CLASSES];
        const char state = reduced(probs + (size_t)r * K, K, p);
        fprintf(out, "%4u %c %c  %6.3f %6.3f %6.3f\n", r - lo + 1, fs_aa_letter(ds->aa[r]), state,
                (double)p[FS_SS_C], (double)p[FS_SS_H], (double)p[FS_SS_E]);
    }
}

static void write_horiz(FILE *out, const FsDataset *ds, uint32_t lo, uint32_t hi, const float *probs, int K)
{
    for (uint32_t b = lo; b < hi; b += 60) {
        uint32_t e = hi - b < 60 ? hi : b + 60;
        fputs("\nConf: ", out);
        for (uint32_t r = b; r < e; r++) fputc(confidence(probs + (size_t)r * K, K), out);
        fputs("\nPred: ", out);
        for (uint32_t r = b; r < e; r++) fputc(predict_state(probs + (size_t)r * K, K), out);
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
                      const float *agree, int K)
{
    for (uint32_t r = lo; r < hi; r++) {
        const float *p = probs + (size_t)r * K;
        float q[FS_CLASSES];
        const char state = reduced(p, K, q);
        write_id(out, id);
        fprintf(out, ",%c,%u,%c,%.6f,%.6f,%.6f", fs_aa_letter(ds->aa[r]), r - lo + 1, state, (double)q[FS_SS_H],
                (double)q[FS_SS_E], (double)q[FS_SS_C]);
        if (K == FS_CLASSES8) {
            fprintf(out, ",%c", predict_state(p, K));
            for (int c = 0; c < K; c++) fprintf(out, ",%.6f", (double)p[c]);
        }
        fprintf(out, ",%.4f\n", agree ? (double)agree[r] : 1.0);
    }
}

/* NetSurfP-2.0's columns in its order, those foldsweep has (with 8
 * states, q8 and its probabilities by letter in foldsweep's class order);
 * agree is ours. */
static void write_csv_header(FILE *out, int K)
{
    fputs("id,seq,n,q3,p[q3_H],p[q3_E],p[q3_C]", out);
    if (K == FS_CLASSES8) {
        fputs(",q8", out);
        for (int c = 0; c < K; c++) fprintf(out, ",p[q8_%c]", FS_CLASS8_LETTERS[c]);
    }
    fputs(",agree\n", out);
}

void predict_write(FILE *out, FsPredFormat fmt, const FsDataset *ds, long prot, const float *probs,
                   const float *agree, int header, int classes)
{
    const int K = fs_classes(classes);
    if (fmt == FS_PRED_CSV && header) write_csv_header(out, K);
    uint32_t first = prot < 0 ? 0 : (uint32_t)prot, last = prot < 0 ? ds->n_prot : (uint32_t)prot + 1;
    for (uint32_t i = first; i < last; i++) {
        const char *id = data_protein_name(ds, i);
        uint32_t lo = ds->seg_off[ds->prot_seg[i]], hi = ds->seg_off[ds->prot_seg[i + 1]];
        switch (fmt) {
        case FS_PRED_SS2:
            fputs(PSIPRED_VFORMAT, out);
            write_ss2(out, ds, lo, hi, probs, K);
            break;
        case FS_PRED_HORIZ:
            fputs(PSIPRED_HFORMAT, out);
            write_horiz(out, ds, lo, hi, probs, K);
            break;
        case FS_PRED_CSV:
            write_csv(out, ds, id, lo, hi, probs, agree, K);
            break;
        case FS_PRED_FASTA:
            fprintf(out, ">%s\n", id);
            for (uint32_t r = lo; r < hi; r++) fputc(fs_aa_letter(ds->aa[r]), out);
            fputc('\n', out);
            for (uint32_t r = lo; r < hi; r++) fputc(predict_state(probs + (size_t)r * K, K), out);
            fputc('\n', out);
            break;
        }
    }
}
