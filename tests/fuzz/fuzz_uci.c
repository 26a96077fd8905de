/*
 * fuzz_uci.c: the UCI pair-file reader (`<>` between proteins, one residue
 * and its label per line), through data_load with the layout
 * declared, as `--format uci` reads it; an accepted dataset then goes
 * through folds, example lists and the prepared file (fuzz_data.h).
 */
#include "fuzz_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    fuzz_load_input(FS_FMT_UCI, p, n);
    return 0;
}
