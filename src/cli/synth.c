/*
 * synth.c: `foldsweep synth`. Generates the synthetic data set of
 * src/synth (deterministic from --seed) and writes it as a record file or
 * a FASTA set that `prepare` reads, then prints the same report `prepare`
 * does, plus what the chosen layout could not hold. Bad usage exits 2;
 * a file that cannot be written exits 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "synth/synth.h"

enum { OPT_OUT, OPT_PROTEINS, OPT_SEED, OPT_FORMAT, OPT_JSON, OPT_HELP };

typedef struct {
    const char *name, *alias, *arg, *help;
} SynthOption;

static const SynthOption options[] = {
    [OPT_OUT] = {"--output", "-o", "OUT",
                 "file to write; fasta: prefix of OUT.{sequences,labels,mask}.fasta (required)"},
    [OPT_PROTEINS] = {"--proteins", "-n", "N", "number of proteins (default 300)"},
    [OPT_SEED] = {"--seed", NULL, "S", "generator seed (default 1)"},
    [OPT_FORMAT] = {"--format", NULL, "FMT",
                    "records (default; no masks or chain breaks) or fasta (keeps masks)"},
    [OPT_JSON] = {"--json", NULL, NULL, "print the report as one JSON object"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};
#define N_OPTIONS (int)(sizeof options / sizeof options[0])

#define SYNTH_USAGE \
    "usage: foldsweep synth -o OUT [--proteins N] [--seed S] [--format records|fasta] [--json]\n"

static void help(FILE *out)
{
    fputs(SYNTH_USAGE, out);
    fputs("\nWrites a synthetic, protein-like secondary-structure data set: proteins of 50-400\n"
          "residues made of helix, strand and coil segments whose residues follow per-class\n"
          "propensities, with a few chain breaks, unknown residues (X) and unscored termini.\n"
          "The same seed always gives the same files. 'foldsweep prepare' reads them.\n\n"
          "options:\n",
          out);
    for (int i = 0; i < N_OPTIONS; i++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", options[i].alias ? options[i].alias : "",
                 options[i].alias ? ", " : "", options[i].name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(out, "  %-22s %s\n", left, options[i].help);
    }
}

static int usage_error(const char *what, const char *arg)
{
    cli_error("synth: %s%s%s", what, arg ? " " : "", arg ? arg : "");
    fputs(SYNTH_USAGE, stderr);
    fputs("Run 'foldsweep synth --help' for details.\n", stderr);
    return FS_EXIT_USAGE;
}

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

/* Writes the dataset in the chosen layout; fills paths for the report. */
static int write_files(const FsDataset *ds, const char *out, FsFormat fmt, char paths[3][4096],
                       FsErr *err)
{
    if (fmt == FS_FMT_RECORDS) {
        snprintf(paths[0], 4096, "%s", out);
        paths[1][0] = paths[2][0] = '\0';
        return synth_write(ds, out, err);
    }
    static const char *const ext[3] = {"sequences", "labels", "mask"};
    for (int i = 0; i < 3; i++)
        if (snprintf(paths[i], 4096, "%s.%s.fasta", out, ext[i]) >= 4096) {
            fs_err_set(err, "output prefix too long: %s", out);
            return -1;
        }
    return synth_write_fasta(ds, paths[0], paths[1], paths[2], err);
}

int cli_synth(int argc, char **argv)
{
    const char *val[N_OPTIONS] = {0};
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *inl;
        int o = find_option(a, &inl);
        if (o < 0)
            return usage_error(a[0] == '-' ? "unknown option" : "unexpected argument", a);
        if (o == OPT_HELP) {
            help(stdout);
            return FS_EXIT_OK;
        }
        if (o == OPT_JSON) {
            json = 1;
            continue;
        }
        if (!inl && i + 1 >= argc) return usage_error("missing value for", a);
        val[o] = inl ? inl : argv[++i];
    }
    uint64_t proteins = 300, seed = 1;
    FsFormat fmt = FS_FMT_RECORDS;
    if (val[OPT_PROTEINS] && (parse_u64(val[OPT_PROTEINS], &proteins) || proteins < 1 ||
                              proteins > SYNTH_MAX_PROTEINS)) {
        char what[96];
        snprintf(what, sizeof what, "--proteins must be a whole number from 1 to %u, not",
                 SYNTH_MAX_PROTEINS);
        return usage_error(what, val[OPT_PROTEINS]);
    }
    if (val[OPT_SEED] && parse_u64(val[OPT_SEED], &seed))
        return usage_error("--seed must be a non-negative whole number, not", val[OPT_SEED]);
    if (val[OPT_FORMAT]) {
        int f = data_format_parse(val[OPT_FORMAT]);
        if (f != FS_FMT_RECORDS && f != FS_FMT_FASTA)
            return usage_error("--format must be records or fasta, not", val[OPT_FORMAT]);
        fmt = (FsFormat)f;
    }
    if (!val[OPT_OUT] || !*val[OPT_OUT]) return usage_error("missing -o OUT", NULL);

    FsDataset ds;
    FsErr err = {0};
    char paths[3][4096];
    int rc = FS_EXIT_OK;
    if (synth_generate(&ds, (uint32_t)proteins, seed, &err) ||
        write_files(&ds, val[OPT_OUT], fmt, paths, &err)) {
        cli_error("synth: %s", err.msg);
        rc = FS_EXIT_ERROR;
    } else {
        data_print_stats(&ds, stdout, json);
        if (!json) {
            uint64_t unmasked, joined;
            synth_losses(&ds, fmt, &unmasked, &joined);
            for (int i = 0; i < 3; i++)
                if (paths[i][0]) printf("wrote %s\n", paths[i]);
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
