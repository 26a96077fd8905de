/*
 * fuzz_csv.c: the NetSurfP-2.0 CSV reader (input, dssp3, dssp8, disorder,
 * ... columns of space-separated values), through data_load with the layout
 * declared, as `--format csv` reads it; an accepted dataset then goes
 * through folds, example lists and the prepared file (fuzz_data.h).
 */
#include "fuzz_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    fuzz_load_input(FS_FMT_CSV, p, n);
    return 0;
}
