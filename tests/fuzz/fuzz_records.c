/*
 * fuzz_records.c: the record-file reader (a header, a sequence line, a label
 * line, a blank line per protein), through data_load with the layout
 * declared, as `--format records` reads it; an accepted dataset then goes
 * through folds, example lists and the prepared file (fuzz_data.h).
 */
#include "fuzz_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    fuzz_load_input(FS_FMT_RECORDS, p, n);
    return 0;
}
