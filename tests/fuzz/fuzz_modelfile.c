/*
 * fuzz_modelfile.c: the model-file reader (modelfile_parse: the safetensors
 * header and layout, then the format, the architecture, every tensor's
 * dtype, shape and values, the leakage guard's fingerprints), from memory.
 * An accepted model is used as predict uses it: its weights are checked
 * finite and its architecture written back as JSON and read again.
 *
 * Inputs go up to the header cap (FS_ST_MAX_HEADER plus the length field
 * and some data: LLVMFuzzerInitialize sets -max_len unless given), so a
 * header at the cap and lengths past the end are in reach. A mutation
 * inside the JSON makes the 8-byte length wrong, so each input is read
 * twice: as it is, then with the length set to the end of the JSON object
 * that starts at byte 8 (and its padding), so the header checks behind it
 * see the mutated JSON.
 */
#include <math.h>

#include "fuzz_util.h"
#include "modelfile/modelfile.h"
#include "safetensors/safetensors.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char max_len[64], *args[256];
    for (int i = 1; i < *argc; i++)
        if (!strncmp((*argv)[i], "-max_len=", 9)) return 0;
    if (*argc + 2 > (int)(sizeof args / sizeof args[0])) return 0;
    snprintf(max_len, sizeof max_len, "-max_len=%u", 8u + FS_ST_MAX_HEADER + 4096u);
    args[0] = (*argv)[0];
    args[1] = max_len; /* before the corpus folders */
    for (int i = 1; i < *argc; i++) args[i + 1] = (*argv)[i];
    *argc += 1;
    args[*argc] = NULL;
    *argv = args;
    return 0;
}

/* The end of the JSON object at p[8..n) (after its closing brace and any
 * spaces), or 0 if it does not close. */
static size_t json_end(const uint8_t *p, size_t n)
{
    int depth = 0, in_string = 0;
    for (size_t i = 8; i < n; i++) {
        uint8_t c = p[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            while (i + 1 < n && p[i + 1] == ' ') i++;
            return i + 1;
        }
    }
    return 0;
}

static void read_one(const uint8_t *p, size_t n)
{
    uint8_t *bytes = malloc(n ? n : 1);
    FUZZ_REQUIRE(bytes != NULL);
    memcpy(bytes, p, n);
    FsSavedModel m;
    FsErr err = {0};
    if (modelfile_parse(&m, bytes, n, "fuzz.safetensors", 1, &err) != 0) {
        FUZZ_REQUIRE(err.set && !strncmp(err.msg, "fuzz.safetensors: ", 18));
        return;
    }
    for (long i = 0; i < m.net.n_params + m.net.n_state; i++) FUZZ_REQUIRE(isfinite(m.weights[i]));
    char *arch = modelfile_arch_json(&m.net);
    FsArch back;
    FUZZ_REQUIRE(modelfile_arch_parse(&back, arch, &err) == 0 && back.n_layers == m.net.arch.n_layers);
    free(arch);
    modelfile_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    read_one(p, n);
    size_t end = n >= 8 ? json_end(p, n) : 0;
    if (!end) return 0;
    uint8_t *q = malloc(n);
    FUZZ_REQUIRE(q != NULL);
    memcpy(q, p, n);
    for (int i = 0; i < 8; i++) q[i] = (uint8_t)((uint64_t)(end - 8) >> (8 * i));
    if (memcmp(p, q, 8) != 0) read_one(q, n);
    free(q);
    return 0;
}
