/*
 * test_data_fuzz.c: small valid inputs of every layout, mutated at random
 * (bytes changed, inserted, cut off). Each load must either succeed with
 * consistent counts or fail with a message naming the file: never crash,
 * never read out of bounds (the sanitizer build runs this too).
 */
#include "test_data_util.h"

static const char *const seeds[] = {
    "# c\n<>\nA h\nC e\n<>\nD _\nend\n<>\nX h\n<end>\n",
    ">a\nACDEF\nHHECC\n\n>b\nGH\nGB\n",
    "input, dssp3, dssp8, disorder, cb513_mask\nM K V,C H E,C G B,1.0 0.0 1.0,1 1 1\n",
    "MKV\nCHH\n\nWWY\nEEL\n",
};

static void check_loaded(const FsDataset *ds)
{
    CHECK(ds->n_prot > 0 && ds->seg_off[ds->n_seg] == ds->n_res);
    CHECK(ds->prot_seg[ds->n_prot] == ds->n_seg);
    CHECK(ds->stats.scored <= ds->stats.residues);
}

int main(void)
{
    uint64_t st = 2024;
    char buf[512];
    int loaded = 0, refused = 0;
    for (int t = 0; t < 4000; t++) {
        const char *s = seeds[t % 4];
        size_t n = strlen(s);
        memcpy(buf, s, n);
        int edits = 1 + (int)(fs_splitmix64(&st) % 3);
        for (int e = 0; e < edits; e++) {
            uint64_t r = fs_splitmix64(&st);
            size_t at = n ? (size_t)(r % n) : 0;
            switch ((r >> 32) % 4) {
            case 0: buf[at] = (char)(r >> 40); break;
            case 1: buf[at] = "\n <>,>#hH1 0-_eX"[(r >> 40) % 16]; break;
            case 2: n = at; break;
            default:
                if (n + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = "\n ,>"[(r >> 40) % 4];
                    n++;
                }
            }
        }
        const char *p = td_write_bytes("fuzz.in", buf, n);
        FsDataset ds;
        FsErr err;
        FsFormat fmt = (FsFormat)(t % 5 == 2 ? FS_FMT_AUTO : (t % 5 == 0 ? FS_FMT_UCI : t % 5));
        if (fmt == FS_FMT_FASTA) fmt = FS_FMT_RECORDS;
        if (td_load(&ds, fmt, p, &err) == 0) {
            check_loaded(&ds);
            data_free(&ds);
            loaded++;
        } else {
            CHECK_MSG(err.set && strstr(err.msg, "fuzz.in"), "message: %s", err.msg);
            refused++;
        }
        /* The same bytes as a FASTA set's three files. */
        if (t % 7 == 0) {
            FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, p, p, p};
            memset(&err, 0, sizeof err);
            if (data_load(&ds, &spec, &err) == 0)
                data_free(&ds);
            else
                CHECK(err.set);
        }
    }
    printf("%d loaded, %d refused\n", loaded, refused);
    return test_finish();
}
