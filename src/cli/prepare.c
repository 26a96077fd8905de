/*
 * prepare.c: `foldsweep prepare`. Reads the inputs (any of the four
 * layouts), assigns folds by protein, prints the loading report and writes
 * the prepared fold file that runs load. Bad usage exits 2 with a usage
 * line; bad input exits 1 with the reader's file:line:col message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "data/data.h"

enum { OPT_FORMAT, OPT_FOLDS, OPT_SEED, OPT_JSON, OPT_OUT, OPT_SEQ, OPT_LAB, OPT_MASK, OPT_HELP };

typedef struct {
    const char *name, *alias, *arg, *help;
} PrepOption;

static const PrepOption options[] = {
    [OPT_FORMAT] = {"--format", NULL, "FMT",
                    "input layout: auto (default, per file), uci, fasta, records, csv"},
    [OPT_FOLDS] = {"--folds", "-k", "K", "number of cross-validation folds, 2..255 (default 3)"},
    [OPT_SEED] = {"--seed", NULL, "S", "fold assignment seed (default 1)"},
    [OPT_JSON] = {"--json", NULL, NULL, "print the report as one JSON object"},
    [OPT_OUT] = {"--output", "-o", "OUT", "prepared fold file to write (required)"},
    [OPT_SEQ] = {"--sequences", NULL, "S.fasta", "FASTA set: amino-acid sequences"},
    [OPT_LAB] = {"--labels", NULL, "L.fasta",
                 "FASTA set: labels matched by ID (SET=/VALIDATION= in headers)"},
    [OPT_MASK] = {"--mask", NULL, "M.fasta", "FASTA set: optional mask, 1 scored, 0 unscored"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};
#define N_OPTIONS (int)(sizeof options / sizeof options[0])

#define PREP_USAGE                                                                       \
    "usage: foldsweep prepare [--format FMT] [--folds K] [--seed S] [--json] -o OUT INPUT...\n" \
    "       foldsweep prepare [...] -o OUT --sequences S --labels L [--mask M]\n"

static void help(FILE *out)
{
    fputs(PREP_USAGE, out);
    fputs(
        "\nReads protein sequences and secondary-structure labels (UCI pair files, record files,\n"
        "NetSurfP-2.0 CSV, or a FASTA set), assigns cross-validation folds by protein (balanced\n"
        "by residue count, deterministic from the seed) and writes a prepared fold file.\n\n"
        "options:\n",
        out);
    for (int i = 0; i < N_OPTIONS; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", options[i].alias ? options[i].alias : "",
                 options[i].alias ? ", " : "", options[i].name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(out, "  %-26s %s\n", left, options[i].help);
    }
}

static int usage_error(const char *what, const char *arg)
{
    cli_error("prepare: %s%s%s", what, arg ? " " : "", arg ? arg : "");
    fputs(PREP_USAGE, stderr);
    fputs("Run 'foldsweep prepare --help' for details.\n", stderr);
    return FS_EXIT_USAGE;
}

/* Which option argv names, with "--opt=value" split off into *inline_val. */
static int find_option(const char *a, const char **inline_val)
{
    *inline_val = NULL;
    for (int i = 0; i < N_OPTIONS; i++) {
        size_t n = strlen(options[i].name);
        if (!strcmp(a, options[i].name) || (options[i].alias && !strcmp(a, options[i].alias)))
            return i;
        if (options[i].arg && !strncmp(a, options[i].name, n) && a[n] == '=') {
            *inline_val = a + n + 1;
            return i;
        }
    }
    return -1;
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s || *s == '-') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

/* The first usage mistake in the parsed options, or NULL; *arg is the
 * offending value where one is shown. */
static const char *check_args(const char **val, int format, int n_inputs, uint64_t *folds,
                              uint64_t *seed, const char **arg)
{
    int fasta = val[OPT_SEQ] || val[OPT_LAB] || val[OPT_MASK];
    if (format < 0) {
        *arg = val[OPT_FORMAT];
        return "unknown --format (expected auto, uci, fasta, records or csv):";
    }
    if (val[OPT_FOLDS] && (parse_u64(val[OPT_FOLDS], folds) || *folds < 2 || *folds > 255)) {
        *arg = val[OPT_FOLDS];
        return "--folds must be a whole number from 2 to 255, not";
    }
    if (val[OPT_SEED] && parse_u64(val[OPT_SEED], seed)) {
        *arg = val[OPT_SEED];
        return "--seed must be a non-negative whole number, not";
    }
    if (!val[OPT_OUT]) return "missing -o OUT";
    if (fasta && !val[OPT_LAB]) return "a FASTA set needs --labels";
    if (fasta && !val[OPT_SEQ]) return "a FASTA set needs --sequences";
    if (fasta && n_inputs) return "give either INPUT files or a FASTA set (--sequences/--labels)";
    if (!fasta && !n_inputs)
        return format == FS_FMT_FASTA ? "--format fasta needs --sequences and --labels"
                                      : "no INPUT files";
    if (fasta && format != FS_FMT_AUTO && format != FS_FMT_FASTA)
        return "--sequences/--labels form a FASTA set; --format must be fasta or auto";
    if (format == FS_FMT_FASTA && n_inputs)
        return "--format fasta takes --sequences S --labels L [--mask M], not INPUT files";
    return NULL;
}

int cli_prepare(int argc, char **argv)
{
    const char *val[N_OPTIONS] = {0};
    const char **inputs = malloc((size_t)argc * sizeof *inputs);
    int n_inputs = 0, json = 0, rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *inl;
        if (a[0] != '-' || !strcmp(a, "-")) {
            inputs[n_inputs++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            while (++i < argc) inputs[n_inputs++] = argv[i];
            break;
        }
        int o = find_option(a, &inl);
        if (o < 0) {
            free(inputs);
            return usage_error("unknown option", a);
        }
        if (o == OPT_HELP) {
            free(inputs);
            help(stdout);
            return FS_EXIT_OK;
        }
        if (o == OPT_JSON) {
            json = 1;
            continue;
        }
        if (!inl && i + 1 >= argc) {
            free(inputs);
            return usage_error("missing value for", a);
        }
        val[o] = inl ? inl : argv[++i];
    }
    uint64_t folds = 3, seed = 1;
    int format = val[OPT_FORMAT] ? data_format_parse(val[OPT_FORMAT]) : FS_FMT_AUTO;
    const char *bad_arg = NULL;
    const char *bad = check_args(val, format, n_inputs, &folds, &seed, &bad_arg);
    if (bad) {
        free(inputs);
        return usage_error(bad, bad_arg);
    }

    FsLoadSpec spec = {.format = (FsFormat)format, .inputs = inputs, .n_inputs = n_inputs};
    spec.sequences = val[OPT_SEQ];
    spec.labels = val[OPT_LAB];
    spec.mask = val[OPT_MASK];
    FsDataset ds;
    FsErr err = {0};
    if (data_load(&ds, &spec, &err)) {
        free(inputs);
        cli_error("%s", err.msg);
        return FS_EXIT_ERROR;
    }
    free(inputs);
    if (data_assign_folds(&ds, (uint32_t)folds, seed, &err) ||
        data_write_prepared(&ds, val[OPT_OUT], &err)) {
        cli_error("%s", err.msg);
        rc = FS_EXIT_ERROR;
    } else {
        data_print_stats(&ds, stdout, json);
        if (!json) printf("wrote %s\n", val[OPT_OUT]);
        rc = FS_EXIT_OK;
    }
    data_free(&ds);
    return rc;
}
