/*
 * predict.c: `foldsweep predict MODEL... INPUT... [--format F] [-o OUT]`.
 * The models (an exported folder, a run folder with --trial / --rank, or
 * .safetensors files) come first; every argument after them is an input
 * (plain FASTA, or with --input-format any layout `prepare` reads).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "predict/predict.h"
#include "run/run.h" /* run_solo_threads */

enum { OPT_TRIAL, OPT_RANK, OPT_FOLD, OPT_FORMAT, OPT_OUT, OPT_INPUT_FORMAT, OPT_THREADS, OPT_BATCH, OPT_MIXED, OPT_FEATURES, OPT_TOP,
       OPT_HELP };

static const CliOption options[] = {
    [OPT_TRIAL] = {"--trial", NULL, "ID", "in a run folder: this trial (an id or a unique prefix)"},
    [OPT_RANK] = {"--rank", NULL, "N", "in a run folder: the trial at leaderboard rank N (default 1)"},
    [OPT_FOLD] = {"--fold", NULL, "K", "only fold K's model instead of the fold ensemble"},
    [OPT_TOP] = {"--top", NULL, "K", "in run folders: the fold ensembles of the K best trials\n"
                                     "as one, ranked over every folder given"},
    [OPT_FORMAT] = {"--format", NULL, "F", "ss2 (PSIPRED VFORMAT, default for one protein a file),\n"
                                          "horiz (HFORMAT), csv (NetSurfP-2.0 style) or fasta\n"
                                          "(three lines; the default for several in one stream)"},
    [OPT_OUT] = {"--out", "-o", "OUT", "a file, or a folder (DIR/ or an existing one: one\n"
                                       "<id>.ss2 / .horiz per protein); default: standard output"},
    [OPT_INPUT_FORMAT] = {"--input-format", NULL, "F",
                          "auto (default: FASTA, or a labelled file `prepare` reads,\n"
                          "labels unused), fasta, uci, records or csv"},
    [OPT_THREADS] = {"--threads", NULL, "N", "threads (default: all cores)"},
    [OPT_BATCH] = {"--batch", NULL, "N", "residues per forward pass (default " CLI_TEXT(FS_PREDICT_BATCH)
                                         "; results do not\n"
                                         "depend on it)"},
    [OPT_MIXED] = {"--mixed", NULL, NULL, "use model files from different trials, runs or data\n"
                                          "together (refused otherwise)"},
    [OPT_FEATURES] = {"--features", NULL, "K:P,...", "models that read feature columns: their sources for\n"
                                                     "these proteins (pssm:DIR, hhm:DIR, h5:FILE, npy:DIR, in\n"
                                                     "the models' order; default: the files they trained on)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "predict",
    .usage = "usage: foldsweep predict MODEL... INPUT... [--format ss2|horiz|csv|fasta] [-o OUT]\n",
    .about = "Predicts helix / strand / coil for every residue of the input proteins with a trial's\n"
             "fold models as an ensemble: the mean of their softmax outputs per residue. MODEL is a\n"
             "folder written by `foldsweep export`, a run folder (the best trial, or --trial /\n"
             "--rank), or .safetensors model files. Letters outside the 20 standard amino acids\n"
             "are read as X (counted in a warning). See docs/models.md.\n",
    .opts = CLI_OPTIONS(options),
    .column = 24,
    .max_args = -1,
    .no_arg = "missing MODEL and INPUT",
};
const CliSpec *const cli_predict_spec = &spec; /* for cli.c's table */

static int load_input(FsDataset *ds, const char *path, const char *fmt, FsErr *err)
{
    if (fmt && !strcmp(fmt, "fasta")) return data_load_sequences(ds, path, err);
    int f = fmt ? data_format_parse(fmt) : FS_FMT_AUTO;
    if (f < 0 || f == FS_FMT_FASTA)
        return fs_err_set(err, "--input-format: expected fasta, uci, records, csv or auto, got %s", fmt), -1;
    if (f == FS_FMT_AUTO) {
        /* Plain FASTA unless the content says otherwise: a record file (a
         * label line under each sequence) must not be read as sequence. */
        int seen = (int)data_detect_file(path, err);
        if (seen < 0) return -1;
        if (seen == FS_FMT_FASTA) return data_load_sequences(ds, path, err);
        if (seen == FS_FMT_AUTO)
            return fs_err_at(err, path, 0, 0, "unrecognised content: expected FASTA ('>id' lines and sequences), "
                             "or a UCI, record or NetSurfP-2.0 CSV file"), -1;
        cli_error("note: %s reads as a %s file; its labels are not used (--input-format fasta reads it as FASTA)",
                  path, data_format_name((FsFormat)seen));
    }
    const char *inputs[1] = {path};
    FsLoadSpec ls = {(FsFormat)f, inputs, 1, NULL, NULL, NULL};
    return data_load(ds, &ls, err);
}

static void warn_unknown(const FsDataset *ds, const char *path)
{
    uint64_t n = 0;
    char letters[64] = "";
    size_t k = 0;
    for (int c = 0; c < 26; c++) {
        if (c == 'X' - 'A' || !ds->stats.unknown_letters[c]) continue; /* X is already "unknown" */
        n += ds->stats.unknown_letters[c];
        if (k + 2 < sizeof letters) letters[k++] = (char)('A' + c), letters[k] = 0;
    }
    if (n) cli_error("warning: %s: %llu residue%s outside the 20 standard amino acids (%s) read as X", path,
                     (unsigned long long)n, n == 1 ? "" : "s", letters);
}

static int is_dir(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

/* One file per protein in the folder out; names stay unique over the run. */
static int write_each(const char *out, FsPredFormat fmt, const FsDataset *ds, const float *probs, const float *agree,
                      FsNameSet *names, int classes)
{
    FsErr e = {0};
    if (fs_mkdir_p(out, &e) != 0) return cli_error("%s", e.msg), -1;
    for (uint32_t i = 0; i < ds->n_prot; i++) {
        char path[FS_PATH_IN_DIR], name[256];
        const char *id = data_protein_name(ds, i);
        if (predict_file_name(names, id, name, sizeof name))
            cli_error("note: protein '%s' written to %s.%s: another protein of this run has its file name", id, name,
                      predict_format_ext(fmt));
        snprintf(path, sizeof path, "%s%s%s.%s", out, out[strlen(out) - 1] == '/' ? "" : "/", name,
                 predict_format_ext(fmt));
        FILE *f = fopen(path, "w");
        if (!f) return cli_error("%s: cannot write: %s", path, strerror(errno)), -1;
        predict_write(f, fmt, ds, (long)i, probs, agree, 1, classes);
        if (cli_output_close(f, path) != 0) return -1;
    }
    return 0;
}

static int is_psipred(FsPredFormat fmt) { return fmt == FS_PRED_SS2 || fmt == FS_PRED_HORIZ; }

/* ss2 and horiz go to one file per protein when OUT is a folder. */
static int per_protein(const char *out, FsPredFormat fmt, int n_inputs)
{
    return out && (is_dir(out) || (n_inputs == 1 && out[strlen(out) - 1] == '/')) && is_psipred(fmt);
}

/* Whether n_prot proteins would go to one PSIPRED stream or file. */
static int psipred_several(const char *out, FsPredFormat fmt, uint32_t n_prot)
{
    return is_psipred(fmt) && !per_protein(out, fmt, 1) && n_prot > 1;
}

/* A PSIPRED file holds one protein and names none: several in one stream
 * could only be told apart by guessing, so they are refused. */
static int psipred_one(const char *out, FsPredFormat fmt, const char *input, uint32_t n_prot)
{
    if (!psipred_several(out, fmt, n_prot)) return 0;
    cli_error("%s: %u proteins, but a PSIPRED %s file holds one and does not name it: give -o DIR/ for one "
              "DIR/<id>.%s per protein, or --format csv or fasta", input, n_prot, predict_format_ext(fmt),
              predict_format_ext(fmt));
    return -1;
}

/* One input's predictions: to stdout, to a file, or one file per protein. */
static int write_out(const char *out, FsPredFormat fmt, const FsDataset *ds, const float *probs, const float *agree,
                     int n_inputs, int first, FsNameSet *names, int classes)
{
    if (!out) {
        predict_write(stdout, fmt, ds, -1, probs, agree, first, classes);
        return 0;
    }
    if (per_protein(out, fmt, n_inputs)) return write_each(out, fmt, ds, probs, agree, names, classes);
    if (is_dir(out)) return cli_error("%s is a folder: --format %s writes one file", out, predict_format_ext(fmt)), -1;
    FILE *f = fopen(out, first ? "w" : "a");
    if (!f) return cli_error("%s: cannot write: %s", out, strerror(errno)), -1;
    predict_write(f, fmt, ds, -1, probs, agree, first, classes);
    return cli_output_close(f, out);
}

/* An ensemble of other trials', runs' or data's models only with --mixed. */
static int check_mixed(const FsEnsemble *e, const FsModelSet *set, int allowed, FsErr *err)
{
    char what[5000];
    if (!predict_mixed(e, set, what, sizeof what, NULL, 0)) return 0;
    if (allowed) return cli_error("note: a mixed ensemble (--mixed): %s", what), 0;
    return fs_err_set(err, "%s: not one trial's fold models; pass --mixed to use them as one ensemble anyway", what), -1;
}

/* The models: one trial's (or files'), or --top K's over run folders. */
static int find_models(FsModelSet *set, const CliArgs *a, int n_models, int rank, uint64_t fold, int top, FsErr *err)
{
    if (top) return predict_top_find(set, (const char *const *)a->args, n_models, top, err);
    for (int i = 0; i < n_models; i++)
        if (predict_find(set, a->args[i], a->val[OPT_TRIAL], rank, fold == UINT64_MAX ? -1 : (int)fold, err) != 0)
            return -1;
    return 0;
}

/* What every input shares: the models, the options, the files written. */
typedef struct {
    const CliArgs *a;
    FsEnsemble *ens;
    int n_models, fmt, threads, batch;
    FsNameSet names;
} Inputs;

/* Input i loaded, predicted and written: 0, or -1 (said). */
static int predict_input(Inputs *in, int i)
{
    const CliArgs *a = in->a;
    const char *input = a->args[i], *out = a->val[OPT_OUT];
    FsDataset ds;
    memset(&ds, 0, sizeof ds);
    FsErr err = {0};
    int ok = 0;
    if (load_input(&ds, input, a->val[OPT_INPUT_FORMAT], &err) != 0)
        cli_error("%s", err.msg);
    else if (predict_features(in->ens, a->val[OPT_FEATURES], &ds, &err) != 0)
        cli_error("%s: %s", input, err.msg);
    else
        ok = 1;
    /* ss2 is the default for one protein; a first `predict MODEL
     * proteins.fasta` of several got the refusal instead of output. */
    if (ok && !a->val[OPT_FORMAT] && psipred_several(out, (FsPredFormat)in->fmt, ds.n_prot)) {
        cli_error("note: %s: %u proteins, written as --format fasta (ss2, the default, holds one protein "
                  "a file: -o DIR/ writes DIR/<id>.ss2 for each)", input, ds.n_prot);
        in->fmt = FS_PRED_FASTA;
    }
    if (ok && psipred_one(out, (FsPredFormat)in->fmt, input, ds.n_prot) != 0) ok = 0;
    if (ok) {
        warn_unknown(&ds, input);
        const int classes = in->ens->classes;
        float *probs = fs_malloc(sizeof(float) * (size_t)classes * ((size_t)ds.n_res + 1));
        float *agree = fs_malloc(sizeof(float) * ((size_t)ds.n_res + 1));
        ok = predict_run(in->ens, &ds, run_solo_threads(in->threads), in->batch, probs, agree, &err) == 0;
        if (!ok) cli_error("%s: %s", input, err.msg);
        ok = ok && write_out(out, (FsPredFormat)in->fmt, &ds, probs, agree, a->n_args - in->n_models, i == in->n_models,
                       &in->names, classes) == 0;
        free(probs);
        free(agree);
    }
    data_free(&ds);
    return ok ? 0 : -1;
}

int cli_predict(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    rc = 0;
    uint64_t fold = UINT64_MAX, threads = 0, batch = FS_PREDICT_BATCH;
    int rank = 1, top = 0;
    static const int others[] = {OPT_TRIAL, OPT_RANK, OPT_FOLD, OPT_MIXED, -1};
    int fmt = a.val[OPT_FORMAT] ? predict_format_parse(a.val[OPT_FORMAT]) : FS_PRED_SS2;
    if (fmt < 0) rc = cli_usage_error(&spec, "unknown --format (expected ss2, horiz, csv or fasta):", a.val[OPT_FORMAT]);
    if (!rc) rc = cli_trial_parse(&spec, &a, OPT_TRIAL, OPT_RANK, &rank);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_FOLD, 0, 1 << 20, &fold);
    if (!rc) rc = cli_top_parse(&spec, &a, OPT_TOP, others, FS_PREDICT_MAX_MODELS, &top);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_THREADS, 1, 4096, &threads);
    if (!rc) rc = cli_whole_parse(&spec, &a, OPT_BATCH, 1, 65536, &batch);
    int n_models = 0;
    while (!rc && n_models < a.n_args && predict_is_model_source(a.args[n_models])) n_models++;
    if (!rc && n_models == 0)
        rc = cli_usage_error(&spec, "the first argument must be a model (folder or .safetensors file):", a.args[0]);
    if (!rc && n_models == a.n_args) rc = cli_usage_error(&spec, "missing INPUT (a FASTA file) after the models", NULL);
    if (rc) {
        cli_args_free(&a);
        return rc;
    }
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsEnsemble *ens = fs_calloc(1, sizeof *ens);
    FsErr err = {0};
    int ok = find_models(set, &a, n_models, rank, fold, top, &err) == 0;
    ok = ok && predict_load(ens, set, (int)batch, &err) == 0 && check_mixed(ens, set, a.val[OPT_MIXED] != NULL, &err) == 0;
    if (!ok) cli_error("%s", err.msg);
    if (ok && a.n_args - n_models > 1 && is_psipred((FsPredFormat)fmt) &&
        !per_protein(a.val[OPT_OUT], (FsPredFormat)fmt, a.n_args - n_models)) {
        cli_error("%d inputs, but a PSIPRED %s file holds one protein: give -o DIR/ (an existing folder) for one "
                  "file per protein, or --format csv or fasta", a.n_args - n_models, predict_format_ext((FsPredFormat)fmt));
        ok = 0;
    }
    Inputs in = {&a, ens, n_models, fmt, (int)threads, (int)batch, {0}};
    for (int i = n_models; i < a.n_args && ok; i++) ok = predict_input(&in, i) == 0;
    predict_names_free(&in.names);
    predict_free(ens);
    free(ens);
    free(set);
    cli_args_free(&a);
    if (ok && cli_output_close(stdout, "standard output") != 0) ok = 0;
    return ok ? FS_EXIT_OK : FS_EXIT_ERROR;
}
