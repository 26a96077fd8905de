/*
 * text.c: whole-file input for the readers. One read per file, then a
 * check that it is text at all, so a binary or empty file gets one clear
 * message here instead of a confusing one from whichever reader sees it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/reader.h"

int data_file_read(const char *path, char **out, size_t *out_n, FsErr *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fs_err_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = fs_malloc(cap + 1);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        cap *= 2;
        buf = fs_realloc(buf, cap + 1);
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        fs_err_at(err, path, 0, 0, "read error: %s", strerror(e));
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    *out_n = n;
    return 0;
}

int data_text_read(DataText *t, const char *path, FsErr *err)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    char *buf;
    size_t n;
    if (data_file_read(path, &buf, &n, err)) return -1;
    return data_text_adopt(t, buf, n, path, err);
}

int data_text_adopt(DataText *t, char *buf, size_t n, const char *path, FsErr *err)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    /* A UTF-8 byte-order mark is not content. */
    if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
        memmove(buf, buf + 3, n - 3);
        n -= 3;
    }
    buf[n] = '\0';
    t->buf = buf;
    t->n = n;
    if (n == 0) {
        fs_err_at(err, path, 0, 0, "empty file (expected protein sequences and labels)");
        data_text_free(t);
        return -1;
    }
    /* Text means no NUL and no control bytes other than whitespace; bytes
     * >= 0x80 may appear (UTF-8 comments) and are refused where data is. */
    long line = 1, col = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\n') {
            line++;
            col = 1;
            continue;
        }
        if (c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != '\v') {
            fs_err_at(err, path, line, col,
                      "binary data (byte 0x%02x): expected a text file of sequences and labels", c);
            data_text_free(t);
            return -1;
        }
        col++;
    }
    return 0;
}

void data_text_free(DataText *t)
{
    free(t->buf);
    t->buf = NULL;
    t->n = 0;
}

int data_text_line(const DataText *t, size_t *pos, const char **line, size_t *len)
{
    size_t p = *pos;
    if (p >= t->n) return 0;
    const char *s = t->buf + p;
    const char *nl = memchr(s, '\n', t->n - p);
    size_t n = nl ? (size_t)(nl - s) : t->n - p;
    *pos = p + n + (nl ? 1 : 0);
    if (n && s[n - 1] == '\r') n--;
    *line = s;
    *len = n;
    return 1;
}

const char *data_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
