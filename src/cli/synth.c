/*
 * synth.c: `foldsweep synth`. Generates the synthetic data set of
 * src/synth (deterministic from --seed) and writes it as a record file or
 * a FASTA set that `prepare` reads, then prints the same report `prepare`
 * does, plus what the chosen layout could not hold. Bad usage exits 2;
 * a file that cannot be written exits 1.
 */
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "synth/synth.h"

enum { OPT_OUT, OPT_PROTEINS, OPT_SEED, OPT_FORMAT, OPT_FEATURES, OPT_FEATURES_FORMAT, OPT_JSON, OPT_HELP };

static const CliOption options[] = {
    [OPT_OUT] = {"--output", "-o", "OUT",
                 "file to write; fasta: prefix of OUT.{sequences,labels,mask}.fasta (required)"},
    [OPT_PROTEINS] = {"--proteins", "-n", "N", "number of proteins (default 300)"},
    [OPT_SEED] = {"--seed", NULL, "S", "generator seed (default 1)"},
    [OPT_FORMAT] = {"--format", NULL, "FMT",
                    "records (default; no masks or chain breaks) or fasta (keeps masks)"},
    [OPT_FEATURES] = {"--features", NULL, "D",
                      "also write D per-residue feature columns (a noisy class indicator in the first 3, noise "
                      "in the rest): OUT.features.h5, one dataset per protein"},
    [OPT_FEATURES_FORMAT] = {"--features-format", NULL, "FMT",
                             "h5 (default; needs libhdf5) or npy (OUT.features/<id>.npy)"},
    [OPT_JSON] = {"--json", NULL, NULL, "print the report as one JSON object"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "synth",
    .usage =
        "usage: foldsweep synth -o OUT [--proteins N] [--seed S] [--format records|fasta] "
        "[--features D [--features-format h5|npy]] [--json]\n",
    .about = "Writes a synthetic, protein-like secondary-structure data set: proteins of 50-400\n"
             "residues made of helix, strand and coil segments whose residues follow per-class\n"
             "propensities, with a few chain breaks, unknown residues (X) and unscored termini.\n"
             "The same seed always gives the same files. 'foldsweep prepare' reads them.\n"
             "--features D adds per-residue features with a known signal for data.features.\n",
    .opts = CLI_OPTIONS(options),
    .column = 22,
    .max_args = 0,
    .extra_arg = "unexpected argument",
};
const CliSpec *const cli_synth_spec = &spec; /* for cli.c's table */

/* Writes the dataset in the chosen layout; fills paths (the record file, or
 * the three FASTA files) for the report. A FASTA name is OUT with a suffix,
 * yet held in FS_PATH_MAX: no longer name could be opened (Linux's
 * PATH_MAX), so a prefix too long is named here rather than by fopen. */
static int write_files(const FsDataset *ds, const char *out, FsFormat fmt, char paths[3][FS_PATH_MAX],
                       FsErr *err)
{
    if (fmt == FS_FMT_RECORDS) {
        snprintf(paths[0], FS_PATH_MAX, "%s", out);
        paths[1][0] = paths[2][0] = '\0';
        return synth_write(ds, out, err);
    }
    static const char *const ext[3] = {"sequences", "labels", "mask"};
    for (int i = 0; i < 3; i++)
        if (snprintf(paths[i], FS_PATH_MAX, "%s.%s.fasta", out, ext[i]) >= FS_PATH_MAX) {
            fs_err_set(err, "output prefix too long: %s", out);
            return -1;
        }
    return synth_write_fasta(ds, paths[0], paths[1], paths[2], err);
}

/* 0, or FS_EXIT_USAGE after reporting the first usage mistake. */
static int check_usage(const CliArgs *a, uint64_t *proteins, uint64_t *seed, FsFormat *fmt, uint64_t *features,
                       SynthFeatFormat *ffmt)
{
    int rc;
    if ((rc = cli_whole_parse(&spec, a, OPT_FEATURES, 1, FS_FEAT_MAX_DIM, features))) return rc;
    if (a->val[OPT_FEATURES_FORMAT]) {
        const char *v = a->val[OPT_FEATURES_FORMAT];
        if (strcmp(v, "h5") && strcmp(v, "npy"))
            return cli_usage_error(&spec, "--features-format must be h5 or npy, not", v);
        if (!a->val[OPT_FEATURES]) return cli_usage_error(&spec, "--features-format needs --features D", NULL);
        *ffmt = strcmp(v, "h5") ? SYNTH_FEAT_NPY : SYNTH_FEAT_H5;
    }
    if ((rc = cli_whole_parse(&spec, a, OPT_PROTEINS, 1, SYNTH_MAX_PROTEINS, proteins))) return rc;
    if ((rc = cli_whole_parse(&spec, a, OPT_SEED, 0, UINT64_MAX, seed))) return rc;
    if (a->val[OPT_FORMAT]) {
        int f = data_format_parse(a->val[OPT_FORMAT]);
        if (f != FS_FMT_RECORDS && f != FS_FMT_FASTA)
            return cli_usage_error(&spec, "--format must be records or fasta, not",
                                   a->val[OPT_FORMAT]);
        *fmt = (FsFormat)f;
    }
    if (!a->val[OPT_OUT] || !*a->val[OPT_OUT])
        return cli_usage_error(&spec, "missing -o OUT", NULL);
    return 0;
}

int cli_synth(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    uint64_t proteins = 300, seed = 1, features = 0;
    FsFormat fmt = FS_FMT_RECORDS;
    SynthFeatFormat ffmt = SYNTH_FEAT_H5;
    const char *out = a.val[OPT_OUT];
    int json = a.val[OPT_JSON] != NULL;
    rc = check_usage(&a, &proteins, &seed, &fmt, &features, &ffmt);
    cli_args_free(&a); /* no operands to keep; the values point into argv */
    if (rc) return rc;

    FsDataset ds;
    FsErr err = {0};
    char paths[4][FS_PATH_MAX];
    paths[3][0] = '\0';
    /* The features first: where they cannot be written (no libhdf5), no file is. */
    if (synth_generate(&ds, (uint32_t)proteins, seed, &err) ||
        (features && (synth_features_path(out, ffmt, paths[3], sizeof paths[3], &err) ||
                      synth_write_features(&ds, (uint32_t)features, seed, ffmt, paths[3], &err))) ||
        write_files(&ds, out, fmt, paths, &err)) {
        cli_error("synth: %s", err.msg);
        rc = FS_EXIT_ERROR;
    } else {
        data_print_stats(&ds, stdout, json);
        if (!json) {
            uint64_t unmasked, joined;
            synth_losses(&ds, fmt, &unmasked, &joined);
            for (int i = 0; i < 4; i++)
                if (paths[i][0]) printf("wrote %s%s\n", paths[i], i == 3 && ffmt == SYNTH_FEAT_NPY ? "/" : "");
            if (fmt == FS_FMT_FASTA && joined)
                printf("note: a FASTA set holds no chain breaks: %llu joined\n",
                       (unsigned long long)joined);
            if (fmt == FS_FMT_RECORDS && (joined || unmasked))
                printf("note: a record file holds no chain breaks or masks: %llu breaks joined, "
                       "%llu unscored residues written as scored\n",
                       (unsigned long long)joined, (unsigned long long)unmasked);
        }
    }
    data_free(&ds);
    return rc;
}
