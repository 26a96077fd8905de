/*
 * The library tier's back-end table (src/gpu/table.c, #44): what
 * bench_dnn --tsv writes reads back; each malformed line is refused with
 * file:line and what was expected there; the choice rule takes the
 * nearest measured shape with both back ends' three FP32 products and the
 * faster back end there (TF32 rows and incomplete shapes never decide;
 * cuBLAS without a table, without a candidate, or on a tie);
 * FOLDSWEEP_GPU_TABLE refuses a table measured on another device.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

#include "test.h"
#include "test_proc.h"

static char dir[512];

/* A table file: the device line, the header, then rows (each "op G rows C
 * F K dil backend mode ms"), gflops appended. */
static const char *table(const char *name, const char *device, const char *const *rows, int n)
{
    static char path[700];
    char text[16384];
    int at = snprintf(text, sizeof text, "%s\t%s\n%s\n", FS_GPU_TABLE_DEVICE, device, FS_GPU_TABLE_HEADER);
    for (int i = 0; i < n && at < (int)sizeof text; i++) at += snprintf(text + at, sizeof text - at, "%s\t1.0\n", rows[i]);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tp_write_text(path, text);
    return path;
}

/* Six rows: a shape's three products on one back end, FP32, each ms. */
static int shape_rows(char rows[][96], int at, const char *shape, const char *be, double ms)
{
    static const char *ops[3] = {"fwd", "wgrad", "dgrad"};
    for (int op = 0; op < 3; op++) snprintf(rows[at++], 96, "%s\t%s\t%s\tFP32\t%.3f", ops[op], shape, be, ms);
    return at;
}

static void test_choose(void)
{
    char rows[64][96];
    const char *ptr[64];
    int n = 0;
    /* TF32 rows never decide: first in the file, a cuBLAS TF32 far faster at the first shape. */
    snprintf(rows[n++], 96, "fwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tTF32\t0.001");
    /* C=F=64 K=5 dil=1 at 8 x 1024 rows: cuDNN faster; at 32 x 2048: cuBLAS. */
    n = shape_rows(rows, n, "8\t1024\t64\t64\t5\t1", "cuBLAS", 2.0);
    n = shape_rows(rows, n, "8\t1024\t64\t64\t5\t1", "cuDNN", 1.5);
    n = shape_rows(rows, n, "32\t2048\t64\t64\t5\t1", "cuBLAS", 1.0);
    n = shape_rows(rows, n, "32\t2048\t64\t64\t5\t1", "cuDNN", 3.0);
    /* 128 channels, K=9 dil=4: only cuDNN measured (not a candidate). */
    n = shape_rows(rows, n, "8\t1024\t128\t128\t9\t4", "cuDNN", 0.1);
    for (int i = 0; i < n; i++) ptr[i] = rows[i];
    FsGpuTable t;
    FsErr err = {0};
    CHECK(gpu_table_read(table("ok.tsv", "NVIDIA H200", ptr, n), &t, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(t.n == n && !strcmp(t.device, "NVIDIA H200"));
    CHECK(t.rows[0].tf32 == 1 && t.rows[1].op == 0 && t.rows[2].op == 1 && t.rows[4].backend == 1);
    CHECK(t.rows[1].G == 8 && t.rows[1].rows == 1024 && t.rows[1].C == 64 && t.rows[1].K == 5 && t.rows[1].ms == 2.0);
    CHECK(gpu_table_choose(&t, 8, 1024, 64, 64, 5, 1) == 1);   /* the measured shape itself */
    CHECK(gpu_table_choose(&t, 12, 1000, 64, 64, 5, 1) == 1);  /* nearer the small one */
    CHECK(gpu_table_choose(&t, 24, 2048, 64, 64, 5, 1) == 0);  /* nearer the large one */
    CHECK(gpu_table_choose(&t, 32, 2048, 60, 70, 5, 1) == 0);
    CHECK(gpu_table_choose(&t, 8, 1024, 128, 128, 9, 4) == 1); /* nearest complete shape: 64 channels at 8 x 1024 */
    CHECK(gpu_table_choose(NULL, 8, 1024, 64, 64, 5, 1) == 0); /* no table: cuBLAS */
    gpu_table_free(&t);
    /* Equal times: cuBLAS. */
    n = 0;
    n = shape_rows(rows, n, "8\t1024\t64\t64\t5\t1", "cuBLAS", 1.0);
    n = shape_rows(rows, n, "8\t1024\t64\t64\t5\t1", "cuDNN", 1.0);
    for (int i = 0; i < n; i++) ptr[i] = rows[i];
    CHECK(gpu_table_read(table("tie.tsv", "NVIDIA H200", ptr, n), &t, &err) == 0);
    CHECK(gpu_table_choose(&t, 8, 1024, 64, 64, 5, 1) == 0);
    gpu_table_free(&t);
    /* Two shapes as near (G x rows 4096 and 16384 around 8192): the first in the file decides, either way round. */
    for (int order = 0; order < 2; order++) {
        n = 0;
        const char *near[2] = {"4\t1024\t64\t64\t5\t1", "16\t1024\t64\t64\t5\t1"};
        n = shape_rows(rows, n, near[order], "cuBLAS", 2.0); /* the first: cuDNN faster */
        n = shape_rows(rows, n, near[order], "cuDNN", 1.0);
        n = shape_rows(rows, n, near[1 - order], "cuBLAS", 1.0); /* the second: cuBLAS faster */
        n = shape_rows(rows, n, near[1 - order], "cuDNN", 2.0);
        for (int i = 0; i < n; i++) ptr[i] = rows[i];
        CHECK(gpu_table_read(table("near.tsv", "NVIDIA H200", ptr, n), &t, &err) == 0);
        CHECK_MSG(gpu_table_choose(&t, 8, 1024, 64, 64, 5, 1) == 1, "order %d", order);
        gpu_table_free(&t);
    }
}

/* Each malformed line: refused, file:line and what was expected. */
static void test_errors(void)
{
    static const struct {
        const char *text, *want;
        int line;
    } bad[] = {
        {"op\tG\n", "expected \"# device<TAB>the device's name\"", 1},
        {"", "expected \"# device<TAB>the device's name\"", 1},
        {"# device\tX\nop G rows\n", "expected the header op G rows C F K dil", 2},
        {"# device\tX\n", "expected the header", 2},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\t1.0\n", "expected 11 tab-separated", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwdd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\t1.0\t1\n", "expected op fwd, wgrad or dgrad", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t40\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\t1.0\t1\n", "expected G, models in a group, 1 to 32", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024\t64\t64\t4\t1\tcuBLAS\tFP32\t1.0\t1\n", "expected K, an odd tap count", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024\t64\t64\t5\t1\tcublas\tFP32\t1.0\t1\n", "expected backend cuBLAS or cuDNN", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP16\t1.0\t1\n", "expected mode FP32 or TF32", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\n# a comment\nfwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\tnan\t1\n", "expected ms, a positive time", 4},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024x\t64\t64\t5\t1\tcuBLAS\tFP32\t1\t1\n", "expected rows, a positive whole number", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t 1024\t64\t64\t5\t1\tcuBLAS\tFP32\t1\t1\n", "expected rows, a positive whole number", 3},
        {"# device\tX\n" FS_GPU_TABLE_HEADER "\nfwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\t 1\t1\n", "expected ms and gflops without spaces", 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[700], want[900];
        snprintf(path, sizeof path, "%s/bad%zu.tsv", dir, i);
        tp_write_text(path, bad[i].text);
        FsGpuTable t;
        FsErr err = {0};
        CHECK(gpu_table_read(path, &t, &err) == -1 && t.rows == NULL && t.n == 0);
        snprintf(want, sizeof want, "%s:%d: %s", path, bad[i].line, bad[i].want);
        CHECK_CONTAINS(err.msg, want);
    }
    /* A line of exactly 512 bytes, with CRLF (a Windows editor's) or LF, reads; 513 does not. */
    for (int crlf = 0; crlf < 2; crlf++) {
        char text[2048], row[600], path2[700];
        snprintf(row, sizeof row, "fwd\t8\t1024\t64\t64\t5\t1\tcuBLAS\tFP32\t1.0\t1.");
        size_t len = strlen(row);
        while (len < 512) row[len++] = '0';
        row[len] = '\0';
        snprintf(text, sizeof text, "# device\tX%s\n%s%s\n%s%s\n", crlf ? "\r" : "", FS_GPU_TABLE_HEADER, crlf ? "\r" : "",
                 row, crlf ? "\r" : "");
        snprintf(path2, sizeof path2, "%s/exact%d.tsv", dir, crlf);
        tp_write_text(path2, text);
        FsGpuTable t2;
        FsErr e2 = {0};
        CHECK_MSG(gpu_table_read(path2, &t2, &e2) == 0 && t2.n == 1, "crlf %d: %s", crlf, e2.msg);
        gpu_table_free(&t2);
    }
    /* A line longer than a line can be, and a missing file. */
    char path[700], *text = malloc(5000);
    snprintf(text, 5000, "# device\tX\n%s\n", FS_GPU_TABLE_HEADER);
    memset(text + strlen(text), '1', 3000);
    strcpy(text + 3000 + strlen("# device\tX\n") + strlen(FS_GPU_TABLE_HEADER) + 1, "\n");
    snprintf(path, sizeof path, "%s/long.tsv", dir);
    tp_write_text(path, text);
    free(text);
    FsGpuTable t;
    FsErr err = {0};
    CHECK(gpu_table_read(path, &t, &err) == -1);
    CHECK_CONTAINS(err.msg, ":3: expected a line of at most 512 bytes");
    memset(&err, 0, sizeof err);
    snprintf(path, sizeof path, "%s/none.tsv", dir);
    CHECK(gpu_table_read(path, &t, &err) == -1);
    CHECK_CONTAINS(err.msg, "none.tsv: No such file");
}

/* FOLDSWEEP_GPU_TABLE: none asked for, read for its device, refused for another. */
static void test_env(void)
{
    FsGpuLimits lim;
    CHECK(gpu_profile("h200", &lim) == 0);
    char rows[8][96];
    const char *ptr[8];
    int n = shape_rows(rows, 0, "8\t1024\t64\t64\t5\t1", "cuBLAS", 1.0);
    for (int i = 0; i < n; i++) ptr[i] = rows[i];
    FsGpuTable t;
    FsErr err = {0};
    unsetenv(FS_GPU_TABLE_ENV);
    CHECK(gpu_table_env(&lim, &t, &err) == 0 && t.rows == NULL);
    setenv(FS_GPU_TABLE_ENV, table("mine.tsv", lim.name, ptr, n), 1);
    CHECK(gpu_table_env(&lim, &t, &err) == 1 && t.n == 3);
    gpu_table_free(&t);
    setenv(FS_GPU_TABLE_ENV, table("other.tsv", "NVIDIA A100-SXM4-80GB", ptr, n), 1);
    CHECK(gpu_table_env(&lim, &t, &err) == -1 && t.rows == NULL);
    CHECK_CONTAINS(err.msg, "FOLDSWEEP_GPU_TABLE: ");
    CHECK_CONTAINS(err.msg, "other.tsv:1: the table was measured on NVIDIA A100-SXM4-80GB, not on this device (h200)");
    unsetenv(FS_GPU_TABLE_ENV);
}

int main(void)
{
    tp_tmpdir(dir, sizeof dir, "gpu_table");
    test_choose();
    test_errors();
    test_env();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_finish();
}
