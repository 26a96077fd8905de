/*
 * fuzz_sequences.c: plain FASTA sequences without labels (predict's
 * input), through data_load_sequences. Every residue comes back unscored,
 * so the dataset checks (fuzz_data.h) see empty example lists.
 */
#include "fuzz_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    const char *path = fuzz_write_file("seq.fasta", p, n);
    FsDataset ds;
    FsErr err = {0};
    if (data_load_sequences(&ds, path, &err) == 0) {
        FUZZ_REQUIRE(ds.n_prot > 0 && ds.stats.scored == 0);
        fuzz_use_dataset(&ds);
        data_free(&ds);
    } else {
        FUZZ_REQUIRE(err.set && err.msg[0]);
    }
    return 0;
}
