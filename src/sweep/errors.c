/*
 * errors.c: a sweep file's errors (every problem reported at once, in file
 * order, into util's FsErrList), the "did you mean" suggestion, and the
 * small string buffer and number format the canonical texts share.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_int.h"

void swerr_add(SwErrs *l, long line, long col, const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->e = fs_realloc(l->e, (size_t)l->cap * sizeof *l->e);
    }
    va_list ap;
    va_start(ap, fmt);
    l->e[l->n].msg = fs_vformat(fmt, ap);
    va_end(ap);
    l->e[l->n].line = line;
    l->e[l->n].col = col;
    l->n++;
}

void swerr_flush(SwErrs *l, FsErrList *out)
{
    /* File order; a stable insertion sort keeps messages at one position in the order found. */
    for (int i = 1; i < l->n; i++) {
        SwErr t = l->e[i];
        int j = i;
        while (j > 0 && (l->e[j - 1].line > t.line || (l->e[j - 1].line == t.line && l->e[j - 1].col > t.col))) {
            l->e[j] = l->e[j - 1];
            j--;
        }
        l->e[j] = t;
    }
    for (int i = 0; i < l->n; i++) {
        if (l->e[i].line > 0)
            errlist_add(out, "%s:%ld:%ld: %s", l->name, l->e[i].line, l->e[i].col, l->e[i].msg);
        else
            errlist_add(out, "%s: %s", l->name, l->e[i].msg);
        free(l->e[i].msg);
    }
    free(l->e);
    l->e = NULL;
    l->n = l->cap = 0;
}

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (a[i - 1] != b[j - 1]);
            int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

const char *sw_nearest(const char *s, const char *const *cand, int n)
{
    /* Close means at most a third of the word changed (and at most 3 edits),
     * so "lr" does not suggest "s" but "learning_rat" suggests "learning_rate". */
    int best = 99;
    const char *pick = NULL;
    int limit = (int)strlen(s) / 3 + 1;
    if (limit > 3) limit = 3;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(s, cand[i]);
        if (d < best) best = d, pick = cand[i];
    }
    return best <= limit ? pick : NULL;
}

void sb_puts(SwBuf *b, const char *s)
{
    size_t k = strlen(s);
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2 + 64;
        b->s = fs_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, k + 1);
    b->n += k;
}

void sb_printf(SwBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = fs_vformat(fmt, ap);
    va_end(ap);
    sb_puts(b, s);
    free(s);
}
