/*
 * stats.c: the loading report, as text for people or as one JSON object
 * for scripts and tests (`prepare --json`). Counts come from ds->stats;
 * per-fold sizes are computed here since they are only for the report.
 */
#include <inttypes.h>
#include <string.h>

#include "data/reader.h"
#include "json/json.h"

static const char *const set_names[4] = {"none", "train", "valid", "test"};

static void fold_sizes(const FsDataset *ds, uint64_t *res, uint64_t *prot, uint64_t *scored)
{
    memset(res, 0, FS_MAX_FOLDS * sizeof *res);
    memset(prot, 0, FS_MAX_FOLDS * sizeof *prot);
    memset(scored, 0, FS_MAX_FOLDS * sizeof *scored);
    const uint32_t k = ds->fold_k ? ds->fold_k : ds->n_folds, reps = ds->n_repeats ? ds->n_repeats : 1;
    for (uint32_t r = 0; r < reps; r++)
        for (uint32_t p = 0; p < ds->n_prot; p++) {
            if (data_protein_fold(ds, r, p) == FS_FOLD_HELD_OUT) continue;
            uint32_t f = r * k + data_protein_fold(ds, r, p), a = ds->seg_off[ds->prot_seg[p]];
            uint32_t z = ds->seg_off[ds->prot_seg[p + 1]];
            prot[f]++;
            res[f] += z - a;
            for (uint32_t i = a; i < z; i++) scored[f] += FS_SS_SCORED(ds->ss[i]);
        }
}

/* Proteins in no fold (FS_FOLD_HELD_OUT). */
static uint32_t held_out(const FsDataset *ds)
{
    uint32_t n = 0;
    for (uint32_t p = 0; ds->n_folds && p < ds->n_prot; p++) n += data_protein_fold(ds, 0, p) == FS_FOLD_HELD_OUT;
    return n;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void print_text(const FsDataset *ds, FILE *out)
{
    const FsDataStats *st = &ds->stats;
    fprintf(out, "proteins          %" PRIu64 "\n", st->proteins);
    fprintf(out, "segments          %" PRIu64 "\n", st->segments);
    fprintf(out, "residues          %" PRIu64 "\n", st->residues);
    fprintf(out, "scored residues   %" PRIu64 " (%.1f%%)\n", st->scored,
            pct(st->scored, st->residues));
    fprintf(out, "unknown residues  %" PRIu64, st->unknown);
    const char *sep = " (";
    for (int i = 0; i < 26; i++)
        if (st->unknown_letters[i]) {
            fprintf(out, "%s%c %" PRIu64, sep, 'A' + i, st->unknown_letters[i]);
            sep = ", ";
        }
    if (st->unknown_other) fprintf(out, "%sother %" PRIu64, sep, st->unknown_other), sep = ", ";
    fprintf(out, "%s\n", sep[0] == ',' ? ")" : "");
    const int k = fs_classes(ds->classes);
    fprintf(out, "labels (scored)  ");
    for (int c = 0; c < k; c++)
        fprintf(out, " %c %" PRIu64 " (%.1f%%)%s", fs_class_letters(k)[c], st->label_counts[c],
                pct(st->label_counts[c], st->scored), c + 1 < k ? " " : "\n");
    if (st->set_proteins[0] != st->proteins) {
        fprintf(out, "predefined sets  ");
        for (int s = 1; s < 4; s++) fprintf(out, " %s %" PRIu64, set_names[s], st->set_proteins[s]);
        if (st->set_proteins[0]) fprintf(out, " none %" PRIu64, st->set_proteins[0]);
        fprintf(out, " (proteins)\n");
    }
    if (ds->n_folds) {
        uint64_t res[FS_MAX_FOLDS], prot[FS_MAX_FOLDS], scored[FS_MAX_FOLDS];
        fold_sizes(ds, res, prot, scored);
        fprintf(out, "folds             %u (seed %" PRIu64 ")\n", ds->n_folds, ds->fold_seed);
        const uint32_t held = held_out(ds);
        if (held) fprintf(out, "  held out        %u SET=test proteins (in no fold: the data's test set)\n", held);
        for (uint32_t f = 0; f < ds->n_folds; f++)
            fprintf(out,
                    "  fold %-3u        %" PRIu64 " proteins, %" PRIu64 " residues, %" PRIu64
                    " scored\n",
                    f, prot[f], res[f], scored[f]);
    }
    fprintf(out, "fingerprint       %016" PRIx64 "\n", ds->fingerprint);
}

static void print_json(const FsDataset *ds, FILE *out)
{
    const FsDataStats *st = &ds->stats;
    FsJsonOut w = {.spaced = 1};
    json_object_begin(&w);
    json_member_uint(&w, "proteins", st->proteins);
    json_member_uint(&w, "segments", st->segments);
    json_member_uint(&w, "residues", st->residues);
    json_member_uint(&w, "scored_residues", st->scored);
    json_member_uint(&w, "unknown_residues", st->unknown);
    json_key(&w, "unknown_letters");
    json_object_begin(&w);
    for (int i = 0; i < 26; i++)
        if (st->unknown_letters[i]) json_member_uint(&w, (char[]){(char)('A' + i), 0}, st->unknown_letters[i]);
    if (st->unknown_other) json_member_uint(&w, "other", st->unknown_other);
    json_end(&w);
    json_key(&w, "label_counts");
    json_object_begin(&w);
    for (int c = 0; c < fs_classes(ds->classes); c++)
        json_member_uint(&w, (char[]){fs_class_letters(ds->classes)[c], 0}, st->label_counts[c]);
    json_end(&w);
    json_key(&w, "sets");
    json_object_begin(&w);
    for (int s = 0; s < 4; s++) json_member_uint(&w, set_names[s], st->set_proteins[s]);
    json_end(&w);
    json_member_uint(&w, "folds", ds->n_folds);
    json_member_uint(&w, "fold_seed", ds->fold_seed);
    json_member_uint(&w, "held_out_proteins", held_out(ds));
    if (ds->n_folds) {
        uint64_t res[FS_MAX_FOLDS], prot[FS_MAX_FOLDS], scored[FS_MAX_FOLDS];
        fold_sizes(ds, res, prot, scored);
        const uint64_t *cols[3] = {prot, res, scored};
        const char *keys[3] = {"fold_proteins", "fold_residues", "fold_scored_residues"};
        for (int c = 0; c < 3; c++) {
            json_key(&w, keys[c]);
            json_array_begin(&w);
            for (uint32_t f = 0; f < ds->n_folds; f++) json_uint(&w, cols[c][f]);
            json_end(&w);
        }
    }
    /* A string: JSON numbers lose 64-bit integers in most readers. */
    json_key(&w, "fingerprint");
    json_strf(&w, "%016" PRIx64, ds->fingerprint);
    json_end(&w);
    json_tail(&w, "\n");
    FS_ASSERT(!json_out_error(&w));
    fputs(w.p, out);
    json_out_free(&w);
}

void data_print_stats(const FsDataset *ds, FILE *out, int json)
{
    if (json)
        print_json(ds, out);
    else
        print_text(ds, out);
}
