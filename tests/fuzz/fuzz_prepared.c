/*
 * fuzz_prepared.c: the prepared fold file's reader (data_deserialize: the
 * bytes `prepare` writes, a run reads and rank 0 broadcasts), from memory.
 *
 * The file ends with a CRC-32 of everything before it, so almost every
 * mutation would stop at the checksum. Each input is therefore read twice:
 * as it is (magic, version, size and checksum checks), then with its size
 * field and checksum made right, so the table checks behind them (offsets,
 * codes, names, folds) see the mutated content. An accepted dataset goes
 * on as a run uses it (fuzz_data.h).
 */
#include "fuzz_data.h"

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void read_one(const uint8_t *p, size_t n)
{
    FsDataset ds;
    FsErr err = {0};
    if (data_deserialize(&ds, p, n, "fuzz.prep", &err) == 0) {
        FUZZ_REQUIRE(ds.n_folds != 1 && ds.n_folds <= 255);
        fuzz_use_dataset(&ds);
        data_free(&ds);
    } else {
        FUZZ_REQUIRE(err.set && err.msg[0]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    read_one(p, n);
    if (n < 24) return 0; /* no size field to fix */
    uint8_t *q = malloc(n);
    FUZZ_REQUIRE(q != NULL);
    memcpy(q, p, n);
    put32(q + 16, (uint32_t)n); /* u64 total bytes, little-endian */
    put32(q + 20, (uint32_t)((uint64_t)n >> 32));
    put32(q + n - 4, fs_crc32(q, n - 4, 0));
    if (memcmp(p, q, n) != 0) read_one(q, n);
    free(q);
    return 0;
}
