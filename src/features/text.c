/*
 * text.c: what the features readers share: reading a whole file (a
 * missing one told apart from one that cannot be read), lines and tokens
 * of the text layouts, and the residue letter check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "features/reader.h"

int feat_file_read(const char *path, char **buf, size_t *n, FsErr *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        fs_err_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fs_err_at(err, path, 0, 0, "not a regular file");
        fclose(f);
        return -1;
    }
    /* The size the file system reports; a file that grows meanwhile is read
     * to that size and no further (the buffer is never sized by content). */
    size_t cap = (size_t)st.st_size;
    char *b = fs_malloc(cap + 1);
    size_t got = fread(b, 1, cap, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fs_err_at(err, path, 0, 0, "read error");
        free(b);
        return -1;
    }
    b[got] = '\0';
    *buf = b;
    *n = got;
    return 1;
}

int feat_text_read(const FeatTarget *t, const FeatTextLayout *l, float *out, FsErr *err)
{
    char *buf;
    size_t n, pos = 0;
    int rc = feat_file_read(t->path, &buf, &n, err);
    if (rc <= 0) return rc;
    const char *line;
    size_t len;
    long ln = 0;
    int found = 0;
    while (!found && feat_text_line(buf, n, &pos, &line, &len)) {
        ln++;
        found = l->header(line, len);
    }
    if (found <= 0) l->missing(t, found ? ln : 0, err);
    rc = found <= 0 ? -1 : l->rows(t, buf, n, pos, ln, out, err) ? -1 : 1;
    free(buf);
    return rc;
}

int feat_text_line(const char *buf, size_t n, size_t *pos, const char **line, size_t *len)
{
    if (*pos >= n) return 0;
    const char *s = buf + *pos, *e = memchr(s, '\n', n - *pos);
    size_t l = e ? (size_t)(e - s) : n - *pos;
    *pos += l + (e ? 1 : 0);
    if (l && s[l - 1] == '\r') l--;
    *line = s;
    *len = l;
    return 1;
}

int feat_token(const char **p, const char *end, const char **tok, size_t *tok_len)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s >= end) return *p = s, 0;
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t') e++;
    *tok = s;
    *tok_len = (size_t)(e - s);
    *p = e;
    return 1;
}

int feat_token_long(const char *tok, size_t len, long *v)
{
    char b[32];
    if (len == 0 || len >= sizeof b) return -1;
    memcpy(b, tok, len);
    b[len] = '\0';
    char *end;
    errno = 0;
    long x = strtol(b, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

int feat_token_double(const char *tok, size_t len, double *v)
{
    char b[64];
    if (len == 0 || len >= sizeof b) return -1;
    memcpy(b, tok, len);
    b[len] = '\0';
    char *end;
    double x = strtod(b, &end);
    if (*end || x != x || x > 1e300 || x < -1e300) return -1;
    *v = x;
    return 0;
}

const char *feat_token_text(const char *tok, size_t len, char *buf, size_t n)
{
    size_t k = 0;
    if (n < 8) return "";
    buf[k++] = '\'';
    for (size_t i = 0; i < len && i < 24 && k + 5 < n; i++)
        buf[k++] = tok[i] >= 0x20 && tok[i] < 0x7f ? tok[i] : '?';
    if (len > 24 && k + 5 < n) memcpy(buf + k, "...", 3), k += 3;
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

int feat_letter_agrees(int letter, uint8_t code)
{
    int c = data_aa_code(letter);
    if (c < 0) return 0;
    return c == FS_AA_UNKNOWN || code >= FS_AA_UNKNOWN || c == code;
}
