/*
 * test_data_prepared.c: the prepared fold file. Round trips (file and
 * in-memory) give identical arrays, stats and fingerprint; a flipped byte,
 * a truncation, wrong magic, another version and random garbage are each
 * refused with a clear message and never crash (run under ASan too).
 */
#include "test_data_util.h"

static int same_u32(const uint32_t *a, const uint32_t *b, uint64_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void check_same(const FsDataset *a, const FsDataset *b)
{
    CHECK(a->n_res == b->n_res && a->n_seg == b->n_seg && a->n_prot == b->n_prot);
    if (a->n_res != b->n_res || a->n_seg != b->n_seg || a->n_prot != b->n_prot) return;
    CHECK(memcmp(a->aa, b->aa, a->n_res) == 0);
    CHECK(memcmp(a->ss, b->ss, a->n_res) == 0);
    CHECK(memcmp(a->left, b->left, a->n_res) == 0);
    CHECK(memcmp(a->right, b->right, a->n_res) == 0);
    CHECK(same_u32(a->seg_off, b->seg_off, a->n_seg + 1ull));
    CHECK(same_u32(a->prot_seg, b->prot_seg, a->n_prot + 1ull));
    CHECK(same_u32(a->name_off, b->name_off, a->n_prot + 1ull));
    CHECK(memcmp(a->names, b->names, a->name_off[a->n_prot]) == 0);
    CHECK(memcmp(a->prot_set, b->prot_set, a->n_prot) == 0);
    CHECK(memcmp(a->prot_fold, b->prot_fold, a->n_prot) == 0);
    CHECK(a->n_folds == b->n_folds && a->fold_seed == b->fold_seed);
    CHECK(memcmp(&a->stats, &b->stats, sizeof a->stats) == 0);
    CHECK(a->fingerprint == b->fingerprint);
}

static void write_file(const char *path, const uint8_t *b, uint64_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

static void expect_refused(const char *what, const uint8_t *b, uint64_t n, const char *sub)
{
    FsDataset ds;
    FsErr err = {0};
    int rc = data_deserialize(&ds, b, n, what, &err);
    CHECK_MSG(rc == -1, "%s: accepted", what);
    if (rc == 0) {
        data_free(&ds);
        return;
    }
    CHECK_CONTAINS(err.msg, what);
    if (sub) CHECK_CONTAINS(err.msg, sub);
}

static void put_crc(uint8_t *b, uint64_t n)
{
    uint32_t c = fs_crc32(b, n - 4, 0);
    for (int i = 0; i < 4; i++) b[n - 4 + i] = (uint8_t)(c >> (8 * i));
}

static void test_dataset(const FsDataset *ds)
{
    FsErr err = {0};
    const char *path = td_path("data.prep");
    CHECK(data_write_prepared(ds, path, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    FsDataset back;
    CHECK(data_read_prepared(&back, path, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    check_same(ds, &back);
    data_free(&back);

    uint8_t *b;
    uint64_t n;
    CHECK(data_serialize(ds, &b, &n, &err) == 0);
    CHECK(data_deserialize(&back, b, n, "memory", &err) == 0);
    check_same(ds, &back);
    data_free(&back);
    /* Same content, same bytes: the file is reproducible. */
    uint8_t *b2;
    uint64_t n2;
    CHECK(data_serialize(ds, &b2, &n2, &err) == 0);
    CHECK(n == n2 && memcmp(b, b2, n) == 0);
    free(b2);

    /* Any single flipped byte is caught (checksum or an earlier check). */
    uint8_t *c = malloc(n);
    uint64_t st = 99;
    for (int t = 0; t < 200; t++) {
        memcpy(c, b, n);
        uint64_t at = t < 50 ? (uint64_t)t * 8 % n : fs_splitmix64(&st) % n;
        c[at] ^= (uint8_t)(1 + fs_splitmix64(&st) % 255);
        expect_refused("flipped", c, n, NULL);
    }
    memcpy(c, b, n);
    c[n / 2] ^= 0x40;
    expect_refused("corrupt", c, n, "checksum mismatch: file is corrupt");
    write_file(td_path("corrupt.prep"), c, n);
    CHECK(data_read_prepared(&back, td_path("corrupt.prep"), &err) == -1);
    CHECK_CONTAINS(err.msg, "corrupt.prep: checksum mismatch");
    memset(&err, 0, sizeof err);

    /* Every truncation is refused. */
    for (uint64_t k = 0; k < n; k += (k < 400 ? 1 : 1 + n / 97))
        expect_refused("short", b, k, NULL);
    expect_refused("truncated", b, n - 1, "truncated");
    write_file(td_path("trunc.prep"), b, n - 10);
    CHECK(data_read_prepared(&back, td_path("trunc.prep"), &err) == -1);
    CHECK_CONTAINS(err.msg, "trunc.prep: truncated");
    memset(&err, 0, sizeof err);

    memcpy(c, b, n);
    c[1] = 'X';
    expect_refused("magic", c, n, "not a foldsweep prepared file");
    memcpy(c, b, n);
    c[8] = 2;
    put_crc(c, n);
    expect_refused("version", c, n, "version 2, this build reads 1");
    /* A consistent checksum over inconsistent content: the structural checks. */
    memcpy(c, b, n);
    c[280] = 30; /* aa[0] out of range */
    put_crc(c, n);
    expect_refused("codes", c, n, "invalid residue codes");
    memcpy(c, b, n);
    c[24] ^= 1; /* n_res */
    put_crc(c, n);
    expect_refused("counts", c, n, "file is corrupt");
    /* Header fuzz with a recomputed checksum: refused or loaded, never a crash. */
    for (int t = 0; t < 2000; t++) {
        memcpy(c, b, n);
        c[fs_splitmix64(&st) % 288] = (uint8_t)fs_splitmix64(&st);
        put_crc(c, n);
        FsErr e2 = {0};
        if (data_deserialize(&back, c, n, "fuzz", &e2) == 0) data_free(&back);
    }
    free(c);
    free(b);
}

int main(void)
{
    FsDataset ds;
    FsErr err = {0};
    const char *text = ">one\nACDEFXBZ\nHHECCGGL\n\n>two\nMKVW\nEEEC\n\n>three\nUOAAA\nHHHHH\n";
    CHECK(td_load(&ds, FS_FMT_AUTO, td_write("small.rec", text), &err) == 0);
    CHECK(ds.stats.unknown_letters['U' - 'A'] == 1);
    test_dataset(&ds); /* folds not yet assigned */
    CHECK(data_assign_folds(&ds, 3, 7, &err) == 0);
    test_dataset(&ds);
    data_free(&ds);

    const char *uci = td_shared("uci/protein-secondary-structure.train");
    if (uci) {
        CHECK(td_load(&ds, FS_FMT_AUTO, uci, &err) == 0);
        CHECK(data_assign_folds(&ds, 3, 1, &err) == 0);
        test_dataset(&ds);
        data_free(&ds);
    }

    /* Files that are not prepared files at all. */
    FsDataset back;
    CHECK(data_read_prepared(&back, td_write("text.prep", "<>\nA h\nend\n"), &err) == -1);
    CHECK_CONTAINS(err.msg, "text.prep: not a foldsweep prepared file");
    memset(&err, 0, sizeof err);
    CHECK(data_read_prepared(&back, td_write("empty.prep", ""), &err) == -1);
    CHECK_CONTAINS(err.msg, "not a foldsweep prepared file");
    memset(&err, 0, sizeof err);
    CHECK(data_read_prepared(&back, td_path("none.prep"), &err) == -1);
    CHECK_CONTAINS(err.msg, "none.prep: cannot open");
    memset(&err, 0, sizeof err);
    uint8_t rnd[1000];
    uint64_t st = 3;
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (uint8_t)fs_splitmix64(&st);
    memcpy(rnd,
           "\x89"
           "FSPREP\n",
           8);
    expect_refused("garbage", rnd, sizeof rnd, NULL);
    /* A dataset that was never loaded is refused, not dereferenced. */
    FsDataset zero;
    memset(&zero, 0, sizeof zero);
    CHECK(data_write_prepared(&zero, td_path("zero.prep"), &err) == -1);
    CHECK_CONTAINS(err.msg, "never loaded");
    memset(&err, 0, sizeof err);
    /* Writing into a missing folder is an error naming the path. */
    CHECK(td_load(&ds, FS_FMT_AUTO, td_path("small.rec"), &err) == 0);
    CHECK(data_write_prepared(&ds, "/nonexistent-dir/x.prep", &err) == -1);
    CHECK_CONTAINS(err.msg, "/nonexistent-dir/x.prep");
    data_free(&ds);
    return test_finish();
}
