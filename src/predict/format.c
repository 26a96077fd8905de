/*
 * format: predictions as text. PSIPRED's VFORMAT (.ss2: number, residue,
 * state, then the C, H, E probabilities, PSIPRED's column order) and
 * HFORMAT (.horiz: Conf / Pred / AA lines in blocks of 60), a
 * NetSurfP-2.0-style CSV and a three-line FASTA.
 */
#include <string.h>

#include "predict/predict.h"

#ifndef FS_VERSION
#define FS_VERSION "0.1.0"
#endif

static const char *const names[] = {"ss2", "horiz", "csv", "fasta"};

int predict_format_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

const char *predict_format_ext(FsPredFormat f) { return (unsigned)f < 4 ? names[f] : "txt"; }

char predict_state(const float *p)
{
    int arg = 0;
    for (int k = 1; k < 3; k++)
        if (p[k] > p[arg]) arg = k;
    return "HEC"[arg];
}

static char letter(uint8_t code) { return code < FS_AA_STANDARD ? FS_AA_LETTERS[code] : 'X'; }

/* PSIPRED's confidence digit: how far the best state is ahead of the
 * second, floor(10 * (best - second)) clipped to 0..9. The 1e-4 keeps a
 * difference such as 0.7f - 0.2f (4.9999995 x 10 in float) on its digit. */
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
        const float *p = probs + (size_t)r * 3;
        fprintf(out, "%4u %c %c  %6.3f %6.3f %6.3f\n", r - lo + 1, letter(ds->aa[r]), predict_state(p),
                (double)p[2], (double)p[0], (double)p[1]);
    }
}

static void write_horiz(FILE *out, const FsDataset *ds, uint32_t lo, uint32_t hi, const float *probs)
{
    for (uint32_t b = lo; b < hi; b += 60) {
        uint32_t e = hi - b < 60 ? hi : b + 60;
        fputs("\nConf: ", out);
        for (uint32_t r = b; r < e; r++) fputc(confidence(probs + (size_t)r * 3), out);
        fputs("\nPred: ", out);
        for (uint32_t r = b; r < e; r++) fputc(predict_state(probs + (size_t)r * 3), out);
        fputs("\n  AA: ", out);
        for (uint32_t r = b; r < e; r++) fputc(letter(ds->aa[r]), out);
        fputs("\n      ", out);
        for (uint32_t k = 10; k <= e - b; k += 10) fprintf(out, "%10u", b - lo + k);
        fputs("\n\n", out);
    }
}

static void write_csv(FILE *out, const FsDataset *ds, const char *id, uint32_t lo, uint32_t hi, const float *probs,
                      const float *agree)
{
    for (uint32_t r = lo; r < hi; r++) {
        const float *p = probs + (size_t)r * 3;
        fputc('"', out);
        for (const char *c = id; *c; c++) {
            if (*c == '"') fputc('"', out); /* RFC 4180: quotes doubled */
            fputc(*c, out);
        }
        fprintf(out, "\",%c,%u,%c,%.6f,%.6f,%.6f,%.4f\n", letter(ds->aa[r]), r - lo + 1, predict_state(p),
                (double)p[0], (double)p[1], (double)p[2], agree ? (double)agree[r] : 1.0);
    }
}

void predict_write(FILE *out, FsPredFormat fmt, const FsDataset *ds, long prot, const float *probs,
                   const float *agree, int header)
{
    if (fmt == FS_PRED_CSV && header) fputs("id,seq,n,q3,p[q3_H],p[q3_E],p[q3_C],agree\n", out);
    uint32_t first = prot < 0 ? 0 : (uint32_t)prot, last = prot < 0 ? ds->n_prot : (uint32_t)prot + 1;
    for (uint32_t i = first; i < last; i++) {
        const char *id = data_protein_name(ds, i);
        uint32_t lo = ds->seg_off[ds->prot_seg[i]], hi = ds->seg_off[ds->prot_seg[i + 1]];
        switch (fmt) {
        case FS_PRED_SS2:
            fprintf(out, "# PSIPRED VFORMAT (foldsweep %s)\n# %s\n\n", FS_VERSION, id);
            write_ss2(out, ds, lo, hi, probs);
            if (i + 1 < last) fputc('\n', out);
            break;
        case FS_PRED_HORIZ:
            fprintf(out, "# PSIPRED HFORMAT (foldsweep %s)\n# %s\n", FS_VERSION, id);
            write_horiz(out, ds, lo, hi, probs);
            break;
        case FS_PRED_CSV:
            write_csv(out, ds, id, lo, hi, probs, agree);
            break;
        case FS_PRED_FASTA:
            fprintf(out, ">%s\n", id);
            for (uint32_t r = lo; r < hi; r++) fputc(letter(ds->aa[r]), out);
            fputc('\n', out);
            for (uint32_t r = lo; r < hi; r++) fputc(predict_state(probs + (size_t)r * 3), out);
            fputc('\n', out);
            break;
        }
    }
}
