/*
 * errors.c: a sweep file's errors (every problem reported at once, in file
 * order, into util's FsErrList; util's fs_nearest gives the "did you mean"
 * suggestion), and the small string buffer and number format the
 * canonical texts share.
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
