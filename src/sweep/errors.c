/*
 * errors.c: a sweep file's errors (every problem reported at once, in file
 * order, into util's FsErrList; util's fs_nearest gives the "did you mean"
 * suggestion), problems of the files it names placed at those names, and
 * the small string buffer and number format the canonical texts share.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

void sw_file_error(const FsSweep *sw, const FsErr *err, const char *section, int line, int col, FsErrList *errs)
{
    /* The data module's messages start "FILE:" (data_load's contract): the
     * longest match, so that "a.txt" never claims a message about "a.txt.gz". */
    const FsSweepFile *f = NULL;
    size_t sec = strlen(section), best = 0;
    for (int i = 0; i < sw->n_files; i++) {
        const FsSweepFile *c = &sw->files[i];
        size_t n = strlen(c->path);
        if (!strncmp(c->key, section, sec) && c->key[sec] == '.' && n > best && !strncmp(err->msg, c->path, n) &&
            err->msg[n] == ':')
            f = c, best = n;
    }
    if (!f) {
        errlist_add(errs, "%s:%d:%d: %s: %s", sw->path, line, col, section, err->msg);
        return;
    }
    /* What a file that could not be read was expected to be, and why a
     * relative name may point somewhere unexpected. */
    struct stat st;
    const char *expected = NULL;
    if (stat(f->path, &st) != 0)
        expected = "an existing file";
    else if (S_ISDIR(st.st_mode))
        expected = "a file, not a folder";
    else if (access(f->path, R_OK) != 0)
        expected = "a file this user can read";
    if (!expected) {
        errlist_add(errs, "%s:%d:%d: %s: %s", sw->path, f->line, f->col, f->key, err->msg);
        return;
    }
    char *dir = sw_resolve_path(sw->path, ".");
    errlist_add(errs, "%s:%d:%d: %s: %s; expected %s%s%s%s", sw->path, f->line, f->col, f->key, err->msg, expected,
                f->relative ? " (a relative name is read from the sweep file's folder, " : "",
                f->relative ? dir : "", f->relative ? ", not the working directory)" : "");
    free(dir);
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
