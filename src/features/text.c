/*
 * text.c: what the features readers share: reading a whole file (a
 * missing one told apart from one that cannot be read), lines and tokens
 * of the text layouts, and the residue letter check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "features/reader.h"

/* What a path that is not a regular file is, for messages. */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO (named pipe)" : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

int feat_file_open(const char *path, const char *who, const char *expected, FILE **f, FsErr *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (a FIFO named
     * as a feature file hung run, plan and predict, issue #43). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        fs_err_at(err, path, 0, 0, "%scannot open: %s", who, strerror(errno));
        return -1;
    }
    struct stat st;
    const int bad = fstat(fd, &st) != 0 ? errno : 0;
    if (bad || !S_ISREG(st.st_mode)) {
        if (bad) fs_err_at(err, path, 0, 0, "%scannot read: %s", who, strerror(bad));
        else fs_err_at(err, path, 0, 0, "%sis %s; expected %s", who, file_kind(st.st_mode), expected);
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (!(*f = fdopen(fd, "rb"))) {
        fs_err_at(err, path, 0, 0, "%scannot open: %s", who, strerror(errno));
        close(fd);
        return -1;
    }
    return 1;
}

int feat_file_read(const char *path, const char *who, const char *expected, char **buf, size_t *n, FsErr *err)
{
    FILE *f;
    int rc = feat_file_open(path, who, expected, &f, err);
    if (rc <= 0) return rc;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fs_err_at(err, path, 0, 0, "cannot read: %s", strerror(errno));
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
    char who[300];
    snprintf(who, sizeof who, "protein %.256s: ", t->protein);
    int rc = feat_file_read(t->path, who, l->expected, &buf, &n, err);
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
