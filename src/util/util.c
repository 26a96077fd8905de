/*
 * util: check macros' reporters, error records and lists, random streams,
 * checksums.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

void fs_die_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "foldsweep: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void *fs_malloc_at(size_t n, const char *file, int line)
{
    void *p = malloc(n ? n : 1);
    if (!p) fs_die_at(file, line, "out of memory allocating %zu bytes", n);
    return p;
}

void *fs_calloc_at(size_t count, size_t size, const char *file, int line)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) fs_die_at(file, line, "out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *fs_realloc_at(void *p, size_t n, const char *file, int line)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) fs_die_at(file, line, "out of memory reallocating to %zu bytes", n);
    return q;
}

char *fs_strdup_at(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *d = fs_malloc_at(n, file, line);
    memcpy(d, s, n);
    return d;
}

void *fs_aligned_try_alloc(size_t n)
{
    void *p = NULL;
    size_t rounded = (n + 63) / 64 * 64;
    return posix_memalign(&p, 64, rounded ? rounded : 64) == 0 ? p : NULL;
}

void *fs_aligned_alloc_at(size_t n, const char *file, int line)
{
    void *p = fs_aligned_try_alloc(n);
    if (!p) fs_die_at(file, line, "out of memory allocating %zu aligned bytes", n);
    return p;
}

void fs_err_set(FsErr *err, const char *fmt, ...)
{
    if (!err || err->set) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->set = 1;
}

void fs_err_at(FsErr *err, const char *file, long line, long col, const char *fmt, ...)
{
    if (!err || err->set) return;
    int n;
    if (line > 0 && col > 0)
        n = snprintf(err->msg, sizeof err->msg, "%s:%ld:%ld: ", file, line, col);
    else if (line > 0)
        n = snprintf(err->msg, sizeof err->msg, "%s:%ld: ", file, line);
    else
        n = snprintf(err->msg, sizeof err->msg, "%s: ", file);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof err->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    err->set = 1;
}

char *fs_vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *s = fs_malloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

void errlist_add(FsErrList *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = fs_vformat(fmt, ap);
    va_end(ap);
    l->msg = fs_realloc(l->msg, (size_t)(l->n + 1) * sizeof *l->msg);
    l->msg[l->n++] = s;
}

void errlist_free(FsErrList *l)
{
    for (int i = 0; i < l->n; i++) free(l->msg[i]);
    free(l->msg);
    l->msg = NULL;
    l->n = 0;
}

void errlist_print(FsErrList *l)
{
    for (int i = 0; i < l->n; i++) fprintf(stderr, "foldsweep: %s\n", l->msg[i]);
    errlist_free(l);
}

void errlist_join(const FsErrList *l, char *out, size_t n)
{
    if (!n) return;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < l->n && used + 1 < n; i++) {
        int w = snprintf(out + used, n - used, "%s\n", l->msg[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

uint64_t fs_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void fs_rng_seed(FsRng *r, const uint64_t *words, int n)
{
    /* Fold the words through splitmix so that (seed, 1) and (seed+1, 0)
     * give unrelated streams. */
    uint64_t st = 0x243f6a8885a308d3ULL;
    for (int i = 0; i < n; i++) {
        st ^= words[i];
        st = fs_splitmix64(&st);
    }
    for (int i = 0; i < 4; i++) r->s[i] = fs_splitmix64(&st);
}

float fs_rng_uniform(FsRng *r) { return (float)(fs_rng_u64(r) >> 40) * (1.0f / 16777216.0f); }

uint64_t fs_fnv1a64(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint32_t fs_crc32(const void *data, size_t n, uint32_t crc)
{
    static uint32_t table[256];
    static int ready = 0;
    if (!ready) {
        /* Benign race: every thread writes the same values. Filled once
         * before threads start in practice (prepared file load). */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

double fs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* Durable files                                                          */

void fs_sync_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
}

int fs_write_file_atomic(const char *path, const void *bytes, size_t n, FsErr *err)
{
    /* The pid in the name: two processes never share a temporary file. */
    size_t len = strlen(path) + 32;
    char *tmp = fs_malloc(len), *dir = fs_strdup(path);
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else strcpy(dir, ".");
    int rc = -1, e = 0;
    const char *what = "cannot write";
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        e = errno;
        fs_err_set(err, "%s: cannot write: %s", tmp, strerror(e));
        goto out;
    }
    for (size_t done = 0; done < n;) {
        ssize_t k = write(fd, (const char *)bytes + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            e = k < 0 ? errno : EIO;
            break;
        }
        done += (size_t)k;
    }
    if (!e && fsync(fd) != 0) e = errno, what = "cannot sync";
    if (close(fd) != 0 && !e) e = errno;
    if (!e && rename(tmp, path) != 0) e = errno, what = "cannot rename into place";
    if (e) {
        unlink(tmp);
        fs_err_set(err, "%s: %s: %s", path, what, strerror(e));
        goto out;
    }
    fs_sync_dir(dir); /* the rename itself must survive a crash */
    rc = 0;
out:
    free(tmp);
    free(dir);
    return rc;
}

int fs_mkdir_p(const char *dir, FsErr *err)
{
    char *p = fs_strdup(dir);
    size_t n = strlen(p);
    /* Each prefix ending at a '/' (or the end) in turn: "a", "a/b", ... */
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) == 0) {
            char *slash = strrchr(p, '/');
            if (slash && slash != p) {
                *slash = '\0';
                fs_sync_dir(p);
                *slash = '/';
            } else {
                fs_sync_dir(slash ? "/" : ".");
            }
        } else if (errno != EEXIST) {
            fs_err_set(err, "%s: cannot create the folder: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        p[i] = c;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fs_err_set(err, "%s: not a folder", dir);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Numbers as written                                                      */

/* The shortest "%.Ng" of v, N = 1..max, that reads back as v: as a float
 * (strtof) or a double (strtod). max digits always read back
 * (FLT_DECIMAL_DIG 9, DBL_DECIMAL_DIG 17), so the loop ends with a round
 * trip; strtof, not (float)strtod, which could round twice. */
static char *format_shortest(char *buf, size_t n, double v, int as_float)
{
    if (!buf || n == 0) return buf;
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return buf;
    }
    for (int p = 1, max = as_float ? 9 : 17; p <= max; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (as_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    return buf;
}

char *fs_format_float(char *buf, size_t n, float v) { return format_shortest(buf, n, (double)v, 1); }

char *fs_format_double(char *buf, size_t n, double v) { return format_shortest(buf, n, v, 0); }

char *fs_format_percent(char *buf, size_t n, double fraction)
{
    if (!buf || n == 0) return buf;
    if (!isfinite(fraction)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.1f", 100.0 * fraction + 0.0); /* + 0.0: no "-0.0" */
    return buf;
}

/* ---------------------------------------------------------------------- */
/* Text                                                                    */

int fs_hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int fs_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, need, min;
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) need = 1, min = 0x80;
        else if (c >= 0xe0 && c <= 0xef) need = 2, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4) need = 3, min = 0x10000;
        else return 0;
        unsigned v = c & (0x3f >> need);
        for (unsigned k = 1; k <= need; k++) {
            if ((p[k] & 0xc0) != 0x80) return 0;
            v = v << 6 | (p[k] & 0x3f);
        }
        if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
        p += need + 1;
    }
    return 1;
}

static char program[FS_PATH_MAX + 64] = "foldsweep";

void fs_program_set(const char *argv0)
{
    if (!argv0 || !strchr(argv0, '/')) return; /* found on PATH: its name is what runs it again */
    char *word = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&word, &len);
    if (!f) return;
    fs_put_shell_word(f, argv0);
    const int failed = fclose(f) != 0;
    /* A path too long to quote whole stays "foldsweep": a cut word would
     * leave a quote open in every hint. */
    if (!failed && word && len < sizeof program) memcpy(program, word, len + 1);
    free(word);
}

const char *fs_program(void) { return program; }

void fs_put_shell_word(FILE *out, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+") == strlen(s)) {
        fputs(s, out);
        return;
    }
    fputc('\'', out);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", out); /* close, an escaped quote, reopen */
        else
            fputc(*s, out);
    }
    fputc('\'', out);
}
