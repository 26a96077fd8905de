/*
 * prepare.c: `foldsweep prepare`. Reads the inputs (any of the four
 * layouts), assigns folds by protein, prints the loading report and writes
 * the prepared fold file that runs load. Bad usage exits 2 with a usage
 * line; bad input exits 1 with the reader's file:line:col message.
 */
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "data/data.h"

enum { OPT_FORMAT, OPT_FOLDS, OPT_SEED, OPT_CLASSES, OPT_JSON, OPT_OUT, OPT_SEQ, OPT_LAB, OPT_MASK, OPT_HELP };

static const CliOption options[] = {
    [OPT_FORMAT] = {"--format", NULL, "FMT",
                    "input layout: auto (default, per file), uci, fasta, records, csv"},
    [OPT_FOLDS] = {"--folds", "-k", "K", "number of cross-validation folds, 2.." CLI_TEXT(FS_MAX_FOLDS) " (default 3)"},
    [OPT_SEED] = {"--seed", NULL, "S", "fold assignment seed (default 1)"},
    [OPT_CLASSES] = {"--classes", NULL, "N", "3 (default: DSSP's 8 states reduced) or 8 (DSSP-8 labels kept, as a sweep's "
                                              "data.classes: 8 needs)"},
    [OPT_JSON] = {"--json", NULL, NULL, "print the report as one JSON object"},
    [OPT_OUT] = {"--output", "-o", "OUT", "prepared fold file to write (required)"},
    [OPT_SEQ] = {"--sequences", NULL, "S.fasta", "FASTA set: amino-acid sequences"},
    [OPT_LAB] = {"--labels", NULL, "L.fasta",
                 "FASTA set: labels matched by ID (SET=/VALIDATION= in headers)"},
    [OPT_MASK] = {"--mask", NULL, "M.fasta", "FASTA set: optional mask, 1 scored, 0 unscored"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "prepare",
    .usage =
        "usage: foldsweep prepare [--format FMT] [--folds K] [--seed S] [--classes 3|8] [--json] -o OUT INPUT...\n"
        "       foldsweep prepare [...] -o OUT --sequences S --labels L [--mask M]\n",
    .about =
        "Reads protein sequences and secondary-structure labels (UCI pair files, record files,\n"
        "NetSurfP-2.0 CSV, or a FASTA set), assigns cross-validation folds by protein (balanced\n"
        "by residue count, deterministic from the seed) and writes a prepared fold file.\n",
    .opts = CLI_OPTIONS(options),
    .column = 26,
    .max_args = -1, /* INPUT... */
};
const CliSpec *const cli_prepare_spec = &spec; /* for cli.c's table */

/* The first mistake in how the inputs are given, or NULL. */
static const char *input_mistake(const char *const *val, int format, int n_inputs)
{
    int fasta = val[OPT_SEQ] || val[OPT_LAB] || val[OPT_MASK];
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

/* 0, or FS_EXIT_USAGE after reporting the first usage mistake. */
static int check_usage(const CliArgs *a, int format, uint64_t *folds, uint64_t *seed, uint64_t *classes)
{
    int rc;
    if (format < 0)
        return cli_usage_error(&spec,
                               "unknown --format (expected auto, uci, fasta, records or csv):",
                               a->val[OPT_FORMAT]);
    if ((rc = cli_whole_parse(&spec, a, OPT_FOLDS, 2, FS_MAX_FOLDS, folds))) return rc;
    if ((rc = cli_whole_parse(&spec, a, OPT_SEED, 0, UINT64_MAX, seed))) return rc;
    if ((rc = cli_whole_parse(&spec, a, OPT_CLASSES, FS_CLASSES, FS_CLASSES8, classes))) return rc;
    if (*classes != FS_CLASSES && *classes != FS_CLASSES8)
        return cli_usage_error(&spec, "--classes: expected 3 or 8:", a->val[OPT_CLASSES]);
    const char *bad = input_mistake(a->val, format, a->n_args);
    return bad ? cli_usage_error(&spec, bad, NULL) : 0;
}

/* Loads, assigns folds, writes the prepared file and prints the report. */
static int prepare_write(const CliArgs *a, FsFormat format, uint64_t folds, uint64_t seed, int classes)
{
    FsLoadSpec load = {.format = format, .inputs = a->args, .n_inputs = a->n_args};
    load.sequences = a->val[OPT_SEQ];
    load.labels = a->val[OPT_LAB];
    load.mask = a->val[OPT_MASK];
    FsDataset ds;
    FsErr err = {0};
    if (data_load_classes(&ds, &load, classes, &err)) {
        cli_error("%s", err.msg);
        return FS_EXIT_ERROR;
    }
    int rc = FS_EXIT_OK, json = a->val[OPT_JSON] != NULL;
    if (data_assign_folds(&ds, (uint32_t)folds, seed, &err) ||
        data_write_prepared(&ds, a->val[OPT_OUT], &err)) {
        cli_error("%s", err.msg);
        rc = FS_EXIT_ERROR;
    } else {
        data_print_stats(&ds, stdout, json);
        if (!json) printf("wrote %s\n", a->val[OPT_OUT]);
    }
    data_free(&ds);
    return rc;
}

int cli_prepare(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    uint64_t folds = 3, seed = 1, classes = FS_CLASSES;
    int format = a.val[OPT_FORMAT] ? data_format_parse(a.val[OPT_FORMAT]) : FS_FMT_AUTO;
    rc = check_usage(&a, format, &folds, &seed, &classes);
    if (rc == 0) rc = prepare_write(&a, (FsFormat)format, folds, seed, (int)classes);
    cli_args_free(&a);
    return rc;
}
