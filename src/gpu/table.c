/*
 * table: the library tier's back-end table (#44). scripts/gpu-check runs
 * bench_dnn on a device, which times each convolution product of chain
 * group shapes through cuBLAS and cuDNN, in FP32 and TF32, and writes the
 * rows (dnn-backends.tsv, FS_GPU_TABLE_HEADER). A run given the table
 * (FOLDSWEEP_GPU_TABLE) chooses each layer's back end from it by a fixed
 * rule (gpu_table_choose), never by timing at start-up, so every run with
 * the same table on the same GPU model computes the same bits. The table
 * names the device it was measured on; another device refuses it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

static const char *const op_names[FS_GPU_TABLE_OPS] = {"fwd", "wgrad", "dgrad"};
static const char *const backend_names[2] = {"cuBLAS", "cuDNN"};
static const char *const mode_names[2] = {"FP32", "TF32"};

const char *gpu_table_op_name(int op) { return op >= 0 && op < FS_GPU_TABLE_OPS ? op_names[op] : "?"; }
const char *gpu_table_backend_name(int be) { return be == 0 || be == 1 ? backend_names[be] : "?"; }
const char *gpu_table_mode_name(int tf32) { return mode_names[tf32 != 0]; }

static int word_of(const char *s, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, words[i])) return i;
    return -1;
}

/* A whole-field integer in [lo, hi]; 0, or -1. */
static int int_of(const char *s, long lo, long hi, int *out)
{
    char *end;
    if (isspace((unsigned char)*s)) return -1; /* strtol would skip it */
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* One data row's eleven fields into r; NULL, or what was expected. */
static const char *row_of(char **f, FsGpuTableRow *r)
{
    double gflops;
    char *end;
    if ((r->op = word_of(f[0], op_names, FS_GPU_TABLE_OPS)) < 0) return "op fwd, wgrad or dgrad";
    if (int_of(f[1], 1, FS_GPU_LIB_GROUP_MAX, &r->G)) return "G, models in a group, 1 to 32";
    if (int_of(f[2], 1, 1 << 24, &r->rows)) return "rows, a positive whole number";
    if (int_of(f[3], 1, 1 << 16, &r->C) || int_of(f[4], 1, 1 << 16, &r->F)) return "C and F, channel counts";
    if (int_of(f[5], 1, 255, &r->K) || !(r->K & 1)) return "K, an odd tap count";
    if (int_of(f[6], 1, 1 << 10, &r->dil)) return "dil, a dilation from 1";
    if ((r->backend = word_of(f[7], backend_names, 2)) < 0) return "backend cuBLAS or cuDNN";
    if ((r->tf32 = word_of(f[8], mode_names, 2)) < 0) return "mode FP32 or TF32";
    if (isspace((unsigned char)*f[9]) || isspace((unsigned char)*f[10])) return "ms and gflops without spaces";
    errno = 0;
    r->ms = strtod(f[9], &end);
    if (errno || end == f[9] || *end || !isfinite(r->ms) || r->ms <= 0) return "ms, a positive time";
    gflops = strtod(f[10], &end);
    if (errno || end == f[10] || *end || !isfinite(gflops) || gflops < 0) return "gflops, a rate";
    return NULL;
}

/* Splits line at tabs into at most max fields; the count. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        p = strchr(p, '\t');
        if (!p) break;
        *p++ = '\0';
    }
    return n;
}

static void index_shapes(FsGpuTable *t);

int gpu_table_read(const char *path, FsGpuTable *t, FsErr *err)
{
    memset(t, 0, sizeof *t);
    FILE *fp = fopen(path, "r");
    if (!fp) return fs_err_set(err, "%s: %s", path, strerror(errno)), -1;
    char line[FS_GPU_TABLE_LINE + 3]; /* the line, "\r\n", the terminator */
    long no = 0;
    int header = 0, rc = 0;
    const char *what = NULL;
    while (!rc && fgets(line, sizeof line, fp)) {
        no++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = '\0';
        else if (!feof(fp)) {
            what = "a line of at most 512 bytes";
            rc = -1;
            break;
        }
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        char *f[12];
        if (no == 1) { /* "# device<TAB>NAME": where it was measured */
            int n = split(line, f, 3);
            if (n != 2 || strcmp(f[0], FS_GPU_TABLE_DEVICE) || !f[1][0]) {
                what = "\"" FS_GPU_TABLE_DEVICE "<TAB>the device's name\" (bench_dnn --tsv writes it)";
                rc = -1;
            } else
                snprintf(t->device, sizeof t->device, "%s", f[1]);
            continue;
        }
        if (!len || line[0] == '#') continue;
        if (!header) {
            header = 1;
            if (strcmp(line, FS_GPU_TABLE_HEADER)) what = "the header " FS_GPU_TABLE_HEADER_WORDS, rc = -1;
            continue;
        }
        if (split(line, f, 12) != 11) {
            what = "11 tab-separated fields: " FS_GPU_TABLE_HEADER_WORDS;
            rc = -1;
            continue;
        }
        if (t->n == FS_GPU_TABLE_MAX_ROWS) {
            what = "at most 100000 rows";
            rc = -1;
            continue;
        }
        if (t->n % 256 == 0) t->rows = fs_realloc(t->rows, sizeof *t->rows * (size_t)(t->n + 256));
        what = row_of(f, &t->rows[t->n]);
        if (what) rc = -1;
        else t->n++;
    }
    if (!rc && ferror(fp)) fs_err_set(err, "%s: read error", path), rc = -2;
    fclose(fp);
    if (!rc && no == 0) what = "\"" FS_GPU_TABLE_DEVICE "<TAB>the device's name\" (bench_dnn --tsv writes it)", no = 1, rc = -1;
    else if (!rc && !header) what = "the header " FS_GPU_TABLE_HEADER_WORDS, no = no + 1, rc = -1;
    if (rc == -1) fs_err_set(err, "%s:%ld: expected %s", path, no, what);
    if (rc) gpu_table_free(t);
    else index_shapes(t);
    return rc ? -1 : 0;
}

void gpu_table_free(FsGpuTable *t)
{
    free(t->rows);
    free(t->shapes);
    memset(t, 0, sizeof *t);
}

/* How far a measured shape lies from the layer's: the logs' differences
 * of its channels, taps, dilation and the group's rows (G x rows). */
static double distance(const FsGpuTableShape *r, long work, int C, int F, int K, int dil)
{
    return fabs(log((double)r->C / C)) + fabs(log((double)r->F / F)) + fabs(log((double)r->K / K)) +
           fabs(log((double)r->dil / dil)) + fabs(log((double)r->G * r->rows / (double)work));
}

static int same_shape(const FsGpuTableRow *q, const FsGpuTableShape *s)
{
    return q->G == s->G && q->rows == s->rows && q->C == s->C && q->F == s->F && q->K == s->K && q->dil == s->dil;
}

/* The table's shapes, in the order they first appear, each with both
 * back ends' FP32 times of the three products summed (-1 where one is
 * missing): what gpu_table_choose compares, built once (rows x shapes). */
static void index_shapes(FsGpuTable *t)
{
    t->shapes = fs_calloc((size_t)t->n + 1, sizeof *t->shapes);
    t->n_shapes = 0;
    double got[FS_GPU_TABLE_OPS][2];
    for (int i = 0; i < t->n; i++) {
        const FsGpuTableRow *r = &t->rows[i];
        int k = 0;
        while (k < t->n_shapes && !same_shape(r, &t->shapes[k])) k++;
        if (k < t->n_shapes) continue;
        FsGpuTableShape *s = &t->shapes[t->n_shapes++];
        s->G = r->G, s->rows = r->rows, s->C = r->C, s->F = r->F, s->K = r->K, s->dil = r->dil;
        for (int op = 0; op < FS_GPU_TABLE_OPS; op++) got[op][0] = got[op][1] = -1;
        for (int j = i; j < t->n; j++) { /* the first row of each product and back end */
            const FsGpuTableRow *q = &t->rows[j];
            if (!q->tf32 && same_shape(q, s) && got[q->op][q->backend] < 0) got[q->op][q->backend] = q->ms;
        }
        for (int be = 0; be < 2; be++) {
            s->ms[be] = 0;
            for (int op = 0; op < FS_GPU_TABLE_OPS; op++)
                s->ms[be] = s->ms[be] < 0 || got[op][be] < 0 ? -1 : s->ms[be] + got[op][be];
        }
    }
}

int gpu_table_choose(const FsGpuTable *t, long G, long rows, int C, int F, int K, int dil)
{
    const FsGpuTableShape *best = NULL;
    double best_d = 0;
    const long work = G * rows > 0 ? G * rows : 1;
    if (!t || C < 1 || F < 1 || K < 1 || dil < 1) return 0;
    for (int i = 0; i < t->n_shapes; i++) {
        const FsGpuTableShape *s = &t->shapes[i];
        if (s->ms[0] < 0 || s->ms[1] < 0) continue; /* both back ends, all three products, or not a candidate */
        const double d = distance(s, work, C, F, K, dil);
        if (!best || d < best_d) best = s, best_d = d; /* ties: the first in the file */
    }
    return best && best->ms[1] < best->ms[0] ? 1 : 0;
}

/* Whether the table makes any shape's layers cuDNN's. */
static int any_cudnn(const FsGpuTable *t)
{
    for (int i = 0; i < t->n_shapes; i++)
        if (t->shapes[i].ms[0] >= 0 && t->shapes[i].ms[1] >= 0 && t->shapes[i].ms[1] < t->shapes[i].ms[0]) return 1;
    return 0;
}

int gpu_table_env(const FsGpuLimits *lim, FsGpuTable *t, FsErr *err)
{
    const char *path = getenv(FS_GPU_TABLE_ENV);
    FsErr e = {0};
    memset(t, 0, sizeof *t);
    if (!path || !*path) return 0;
    if (gpu_table_read(path, t, &e) != 0) return fs_err_set(err, "%s: %s", FS_GPU_TABLE_ENV, e.msg), -1;
    if (strcmp(t->device, lim->name) != 0) {
        fs_err_set(err,
                   "%s: %s:1: the table was measured on %s, not on this device (%s); each GPU model needs its own "
                   "(scripts/gpu-check writes it)",
                   FS_GPU_TABLE_ENV, path, t->device, lim->name);
        gpu_table_free(t);
        return -1;
    }
    /* A table that makes some layers cuDNN's needs cuDNN here: refused at
     * the start, not by the first group that would open it. */
    FsErr why = {0};
    if (any_cudnn(t) && gpu_cudnn_load(&why) != 0) {
        fs_err_set(err, "%s: %s chooses cuDNN for some shapes, but cuDNN cannot be used here: %s", FS_GPU_TABLE_ENV,
                   path, why.msg);
        gpu_table_free(t);
        return -1;
    }
    return 1;
}
