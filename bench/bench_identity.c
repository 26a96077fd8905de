/*
 * bench_identity: the identity check's cost (docs/benchmarks.md,
 * "Identity check"). Each test protein's highest identity to a training
 * set, on one core: the k-mer prefilter then alignment of its candidates
 * (what evaluate runs), and beside it in the same run the baseline, every
 * test protein aligned against every training protein, on --full test
 * proteins spread over the set (extrapolated to all), with how often the
 * two agree.
 *
 * Data: FLIP's training set (9,712 proteins) against its validation and
 * test sets (the first 1,000 of their 1,444) when the three FLIP files are
 * given; else synthetic: 10,000 random training proteins (50-450
 * residues) against 1,000 test proteins, of which 100 are fragments of
 * training proteins (30-220 residues), 100 homologues at about 90% and
 * 100 at about 60% identity, the rest unrelated.
 *
 * usage: bench_identity [SEQUENCES LABELS MASK] [--full N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One protein appended to a set under a generated name. */
static void add_protein(FsSeqSet *s, const uint8_t *aa, uint32_t n, const char *name)
{
    FsSeqSet one;
    uint8_t off[8] = {0};
    char why[160];
    memcpy(off + 4, &n, 4);
    if (data_seqset_from(&one, aa, n, off, 2, name, strlen(name) + 1, why, sizeof why) != 0) {
        fprintf(stderr, "bench_identity: %s\n", why);
        exit(1);
    }
    data_seqset_append(s, &one);
    data_seqset_free(&one);
}

static void make_synthetic(FsSeqSet *train, FsSeqSet *test)
{
    uint8_t buf[512];
    char name[32];
    for (int p = 0; p < 10000; p++) {
        uint32_t n = 50 + next_rand() % 401;
        for (uint32_t i = 0; i < n; i++) buf[i] = (uint8_t)(next_rand() % 20);
        snprintf(name, sizeof name, "train%d", p);
        add_protein(train, buf, n, name);
    }
    for (int q = 0; q < 1000; q++) {
        uint32_t p = next_rand() % train->n, len = train->off[p + 1] - train->off[p], n;
        const uint8_t *src = train->aa + train->off[p];
        if (q < 100) { /* a fragment */
            n = 30 + next_rand() % 191;
            n = n > len ? len : n;
            memcpy(buf, src + next_rand() % (len - n + 1), n);
        } else if (q < 300) { /* a homologue: 10% or 40% of residues changed */
            n = len;
            for (uint32_t i = 0; i < n; i++) buf[i] = next_rand() % 10 < (q < 200 ? 1u : 4u) ? (uint8_t)(next_rand() % 20) : src[i];
        } else {
            n = 50 + next_rand() % 401;
            for (uint32_t i = 0; i < n; i++) buf[i] = (uint8_t)(next_rand() % 20);
        }
        snprintf(name, sizeof name, "test%d", q);
        add_protein(test, buf, n, name);
    }
}

/* FLIP: the training set against the first 1,000 validation and test proteins. */
static int load_flip(FsSeqSet *train, FsSeqSet *test, char **argv)
{
    FsDataset ds;
    FsErr err = {0};
    FsLoadSpec spec = {FS_FMT_FASTA, NULL, 0, argv[0], argv[1], argv[2]};
    if (data_load(&ds, &spec, &err) != 0) return fprintf(stderr, "bench_identity: %s\n", err.msg), -1;
    for (uint32_t p = 0; p < ds.n_prot; p++) {
        uint32_t lo = ds.seg_off[ds.prot_seg[p]], hi = ds.seg_off[ds.prot_seg[p + 1]];
        int is_train = ds.prot_set[p] == FS_SET_TRAIN;
        if (is_train || test->n < 1000) add_protein(is_train ? train : test, ds.aa + lo, hi - lo, data_protein_name(&ds, p));
    }
    data_free(&ds);
    return 0;
}

static const uint8_t *query(const FsSeqSet *s, uint32_t q, uint32_t *n)
{
    *n = s->off[q + 1] - s->off[q];
    return s->aa + s->off[q];
}

int main(int argc, char **argv)
{
    FsSeqSet train, test;
    memset(&train, 0, sizeof train), memset(&test, 0, sizeof test);
    int full = 20, flip = argc >= 4 && strncmp(argv[1], "--", 2) != 0;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--full")) full = atoi(argv[i + 1]);
    if (flip ? load_flip(&train, &test, argv + 1) != 0 : (make_synthetic(&train, &test), 0)) return 1;
    double t0 = cpu_now();
    FsIdentityIndex *ix = data_identity_index(&train);
    double t_index = cpu_now() - t0;
    uint32_t above[FS_IDENTITY_LEVELS] = {0}, n;
    double *got = malloc(sizeof(double) * test.n);
    t0 = cpu_now();
    for (uint32_t q = 0; q < test.n; q++) {
        const uint8_t *aa = query(&test, q, &n);
        got[q] = data_identity_best(ix, aa, n).identity;
        for (int l = 0; l < FS_IDENTITY_LEVELS; l++) above[l] += got[q] > fs_identity_levels[l];
    }
    double t_pre = cpu_now() - t0;
    int agree = 0, agree_high = 0, high = 0;
    full = full > (int)test.n ? (int)test.n : full;
    t0 = cpu_now();
    for (int k = 0; k < full; k++) { /* spread over the test set (each kind of the synthetic one) */
        uint32_t q = (uint32_t)((uint64_t)k * test.n / (uint64_t)full);
        const uint8_t *aa = query(&test, q, &n);
        double f = data_identity_full(&train, aa, n).identity;
        agree += f == got[q];
        high += f > fs_identity_levels[1];
        agree_high += f > fs_identity_levels[1] && f == got[q];
    }
    double t_full = cpu_now() - t0;
    printf("{\"data\":\"%s\",\"train\":%u,\"train_residues\":%u,\"test\":%u,\"index_s\":%.3f,\"prefilter_s\":%.3f,"
           "\"above\":[%u,%u,%u],\"full_proteins\":%d,\"full_s\":%.3f,\"full_extrapolated_s\":%.1f,"
           "\"agree\":%d,\"above_0.5_full\":%d,\"above_0.5_agree\":%d}\n",
           flip ? "flip" : "synthetic", train.n, train.off[train.n], test.n, t_index, t_pre, above[0], above[1],
           above[2], full, t_full, full ? t_full * test.n / full : 0.0, agree, high, agree_high);
    data_identity_free(ix);
    free(got);
    data_seqset_free(&train), data_seqset_free(&test);
    return 0;
}
