/*
 * data: protein secondary-structure data sets.
 *
 * Reads four layouts (UCI pairs, FASTA sets, record files, NetSurfP-2.0
 * CSV) into one compact dataset: a residue is one byte of amino-acid code
 * plus one byte of label, and windows are never materialised (the trainer
 * gathers them by index). Assigns folds by protein, and writes / reads the
 * prepared fold file (binary, versioned, checksummed) that runs load in one
 * read and rank 0 broadcasts.
 *
 * Memory: 4 bytes per residue (aa, ss, left, right) plus per-protein tables,
 * and the per-residue feature matrix (feat) when data.features names files.
 */
#ifndef FS_DATA_H
#define FS_DATA_H

#include <stdint.h>
#include <stdio.h>

#include "util/util.h" /* and util/half.h */

/* Residue codes (FS_AA_*) and classes (FS_SS_H.., FS_CLASSES, the
 * 8-state FS_SS8_*) are util's (util/alphabet.h). A label byte holds the
 * class, 0..7, in bits 0, 1 and 3 (FS_SS_LABEL; bit 3 is the 8-state
 * index's bit 2), so that a 3-state label's byte is what it was before 8
 * states: every 3-state data set, prepared file and fingerprint is
 * unchanged. FS_SS_UNSCORED (bit 2) marks a residue that stays as window
 * context but is neither trained on nor scored. */
enum { FS_SS_UNSCORED = 4 };
#define FS_SS_LABEL(c) ((uint8_t)(((c) & 3) | (((c) & 4) << 1)))
#define FS_SS_CLASS(b) (((b) & 3) | (((b) >> 1) & 4))
#define FS_SS_SCORED(b) (!((b) & FS_SS_UNSCORED))

typedef enum { FS_FMT_AUTO = 0, FS_FMT_UCI, FS_FMT_FASTA, FS_FMT_RECORDS, FS_FMT_CSV } FsFormat;

/* Predefined split (FASTA label headers SET= / VALIDATION=). */
typedef enum { FS_SET_NONE = 0, FS_SET_TRAIN = 1, FS_SET_VALID = 2, FS_SET_TEST = 3 } FsSet;

typedef struct {
    uint64_t proteins, segments, residues;
    uint64_t scored;                    /* residues trained on / scored */
    uint64_t unknown;                   /* residues with code FS_AA_UNKNOWN */
    uint64_t label_counts[FS_MAX_CLASSES]; /* by class (the set's classes), scored residues only */
    uint64_t unknown_letters[26];       /* which letters mapped to unknown ('A'..'Z') */
    uint64_t unknown_other;             /* non-letter residue symbols mapped to unknown */
    uint64_t set_proteins[4];           /* proteins per FsSet */
} FsDataStats;

typedef struct {
    uint32_t n_res, n_seg, n_prot;
    uint8_t *aa;        /* [n_res] amino-acid code */
    uint8_t *ss;        /* [n_res] class | FS_SS_UNSCORED */
    uint8_t *left;      /* [n_res] residues before this one in its segment, clipped to 255 */
    uint8_t *right;     /* [n_res] residues after this one in its segment, clipped to 255 */
    uint32_t *seg_off;  /* [n_seg+1] residue offset of each segment */
    uint32_t *prot_seg; /* [n_prot+1] protein i is segments prot_seg[i] .. prot_seg[i+1]-1 */
    uint8_t *prot_set;  /* [n_prot] FsSet */
    uint8_t *prot_fold; /* [n_repeats][n_prot] each repeat's fold of each protein, 0..fold_k-1 (0 before assignment) */
    uint32_t *name_off; /* [n_prot+1] offsets into names; each name NUL-terminated */
    char *names;
    uint32_t n_folds;   /* fold ids 0..n_folds-1 (fold_k x n_repeats); 0 until data_assign_folds */
    uint32_t fold_k;    /* folds per repeat (k) */
    uint32_t n_repeats; /* repeated k-fold (data.repeats): fold id r * k + f is fold f of repeat r */
    uint64_t fold_seed;
    FsDataStats stats;
    uint64_t fingerprint; /* hash of the residue/label/segment content and folds (and features) */
    /* Per-residue input features (data.features, src/features): */
    uint32_t feat_dim; /* feature columns per residue from data.features' files (0: none) */
    uint8_t feat_half; /* feat holds IEEE binary16 (uint16_t) values, else float */
    void *feat;        /* [n_res][feat_dim] in residue order; NULL when feat_dim is 0 */
    int classes;          /* the labels' classes: 3 (0 reads as 3) or 8 (DSSP-8, data_load_classes) */
} FsDataset;

/* Feature j (0..feat_dim-1) of residue r as a float (a half widened). */
static inline float data_feature(const FsDataset *ds, uint32_t r, uint32_t j)
{
    const size_t i = (size_t)r * ds->feat_dim + j;
    return ds->feat_half ? util_float_from_half(((const uint16_t *)ds->feat)[i]) : ((const float *)ds->feat)[i];
}
/* Residue r's feat_dim features into out[0..feat_dim). */
static inline void data_feature_row(const FsDataset *ds, uint32_t r, float *out)
{
    const size_t i0 = (size_t)r * ds->feat_dim;
    if (ds->feat_half) {
        const uint16_t *h = (const uint16_t *)ds->feat + i0;
        for (uint32_t j = 0; j < ds->feat_dim; j++) out[j] = util_float_from_half(h[j]);
    } else {
        const float *f = (const float *)ds->feat + i0;
        for (uint32_t j = 0; j < ds->feat_dim; j++) out[j] = f[j];
    }
}

/* What to read. For FS_FMT_FASTA set sequences/labels (mask optional); for
 * the others list the input files, concatenated in order. FS_FMT_AUTO
 * detects each input's layout from its content. */
typedef struct {
    FsFormat format;
    const char **inputs;
    int n_inputs;
    const char *sequences, *labels, *mask;
} FsLoadSpec;

/* Returns 0, or -1 with err naming file:line[:col] and what was expected.
 * Labels are read as 3 states (DSSP's 8 reduced). */
int data_load(FsDataset *ds, const FsLoadSpec *spec, FsErr *err);
/* data_load with the labels' classes: 3 (or 0), as data_load, or 8: DSSP-8
 * labels kept (ds->classes 8); a UCI file, a CSV without a dssp8 column,
 * or a file whose labels hold no 8-state letter (G I B T S: 3-state
 * labels) is an error naming the file. */
int data_load_classes(FsDataset *ds, const FsLoadSpec *spec, int classes, FsErr *err);
/* Data to score models of `classes` states on (evaluate, a sweep's test
 * section): labels read as the models' classes, or, for 8-state models,
 * as 3 states where they do not read as 8 (a UCI file, CB513's .data, a
 * CSV without dssp8, H E C only): ds->classes is then 3, and the models'
 * predictions are scored reduced (the caller says so). Labels neither
 * reading takes give the 3-state reading's error, not "use data.classes:
 * 3". 8-state labels for 3-state models are reduced as they load. */
int data_load_scoring(FsDataset *ds, const FsLoadSpec *spec, int classes, FsErr *err);
/* What evaluate and a run say of data that data_load_scoring read as 3
 * states for 8-state models, after the data's name. */
#define FS_REDUCED_NOTE                                                                                         \
    "has 3-state labels, not DSSP 8-state ones: the 8-state models' predictions are reduced to 3 states (" \
    FS_CLASS8_REDUCTION_TEXT ") and scored as Q3, with no Q8"
void data_free(FsDataset *ds);

const char *data_format_name(FsFormat f);
/* Parses "auto|uci|fasta|records|csv"; -1 if unknown. */
int data_format_parse(const char *s);

/* Folds by protein: deterministic from seed, balanced by residue count;
 * SET=test proteins are held out of every fold (FS_FOLD_HELD_OUT). Returns
 * -1 with a message if k < 2 or k > the number of proteins in folds. */
int data_assign_folds(FsDataset *ds, uint32_t k, uint64_t seed, FsErr *err);
/* Repeated k-fold: r assignments (r >= 1, k x r <= FS_MAX_FOLDS). The
 * first is data_assign_folds' own (so r = 1 is the plain split,
 * fingerprint included); repeat i > 0 takes the proteins in an order
 * seeded from (seed, i), each to the lightest fold, so that it is another
 * split, as balanced (folds within one protein's length of each other).
 * Fold ids are i * k + f. */
int data_assign_repeats(FsDataset *ds, uint32_t k, uint32_t r, uint64_t seed, FsErr *err);
/* A protein's fold under k-fold when it is in none: a SET=test protein
 * (the data's own test set: k-fold neither trains nor validates on it,
 * nor does a refit; evaluate may test on it). */
#define FS_FOLD_HELD_OUT 255
/* Protein p's fold in repeat `repeat` (0..k-1, or FS_FOLD_HELD_OUT). */
static inline uint32_t data_protein_fold(const FsDataset *ds, uint32_t repeat, uint32_t p)
{
    return ds->prot_fold[(size_t)repeat * ds->n_prot + p];
}

/* Examples (indices of scored residues) for training or validation.
 * fold >= 0: train = proteins of other folds, valid = proteins of `fold`.
 * fold == FS_FOLD_PREDEFINED: train = FS_SET_TRAIN, valid = FS_SET_VALID.
 * Returns the count; writes to out (may be NULL to count only). */
#define FS_FOLD_PREDEFINED (-1)
/* The most folds a k-fold split may have (k of 2..FS_MAX_FOLDS, fold ids
 * 0..FS_MAX_FOLDS-1): a protein's fold is one byte (prot_fold). Every
 * per-fold array and bound uses it. */
#define FS_MAX_FOLDS 255
/* A refit: every protein the sweep trains or validates on (all k folds, or
 * the predefined training and validation sets), no validation examples. */
#define FS_FOLD_ALL (-2)
uint32_t data_examples(const FsDataset *ds, int fold, int validation, uint32_t *out);
/* A chain model's examples (data.window: chain) from the same proteins:
 * the first residue of each segment (chain) that holds a scored residue;
 * they hold exactly data_examples' residues. */
uint32_t data_chain_examples(const FsDataset *ds, int fold, int validation, uint32_t *out);
/* The residues of the longest segment (what a chain model's batch must hold). */
uint32_t data_longest_chain(const FsDataset *ds);
/* The length of the chain a residue belongs to, averaged over residues
 * (the sum of the segments' squared lengths over the residues): what a
 * chain-wide layer's pairs cost a residue (FsNet.flops_pair_fwd); 0 for
 * an empty set. */
double data_chain_pair_mean(const FsDataset *ds);

/* The folds a sweep trains, the one vocabulary of fold ids and slots: k
 * folds by protein (ids 0..k-1) or the predefined split (one fold, id
 * FS_FOLD_PREDEFINED). A fold id is what records, messages, model files
 * and the trainer carry; a slot (0..n-1) indexes per-fold arrays. */
typedef struct {
    int n;          /* folds (1 for the predefined split) */
    int predefined; /* the one fold is FS_FOLD_PREDEFINED */
} FsFolds;
FsFolds data_folds_of(int predefined, int k);
/* A sweep's folds as a user counts them: "3 folds x 2 repeats" for the 6
 * fold ids of repeated k-fold (data.repeats), else "6 folds" ("1 fold"). */
void data_folds_text(int folds, int repeats, char *out, size_t n);
/* The id of slot 0..n-1. */
int data_fold_id(const FsFolds *f, int slot);
/* The slot of fold id `fold`, or -1 with err (may be NULL) naming the
 * folds there are: a fold the sweep does not have never gets a slot. */
int data_fold_slot(const FsFolds *f, int fold, FsErr *err);
/* A fold's training examples then its validation examples in one malloc'd
 * block (the caller frees it), with their counts: what the trainer and
 * the CUDA backend train a (trial, fold) on (chains: a chain model's). */
uint32_t *data_fold_examples(const FsDataset *ds, int fold, int chains, uint32_t *n_train, uint32_t *n_valid);

/* Prepared fold file. Serialize to a malloc'd byte buffer (what MPI
 * broadcasts) and back; write/read wrap these around one file I/O. */
int data_serialize(const FsDataset *ds, uint8_t **bytes, uint64_t *n, FsErr *err);
int data_deserialize(FsDataset *ds, const uint8_t *bytes, uint64_t n, const char *origin,
                     FsErr *err);
int data_write_prepared(const FsDataset *ds, const char *path, FsErr *err);
int data_read_prepared(FsDataset *ds, const char *path, FsErr *err);

/* Recomputes left/right, stats and fingerprint from aa/ss/segments. */
void data_finish(FsDataset *ds);

/* Loading report: human text, or one JSON object with proteins, residues,
 * scored_residues, unknown_residues, label_counts {H,E,C}, ... */
void data_print_stats(const FsDataset *ds, FILE *out, int json);

/* ---------------------------------------------------------------------- */
/* Added helpers.                                                          */

/* Residue letter -> code: 0..19 for the 20 standard amino acids (either
 * case), FS_AA_UNKNOWN for any other letter, -1 for a non-letter. */
int data_aa_code(int ch);
/* Label letter -> FS_SS_H/E/C, -1 if not accepted. Accepted: 3-state
 * H E C; UCI h e _; DSSP 8-state H G I (helix), E B (strand), T S L P
 * and ' ' '-' (coil); letters in either case. */
int data_ss_code(int ch);
/* Label letter -> 8-state class (FS_SS8_*), -1 if not accepted: DSSP's
 * H G I E B T S, and coil as C, L, P, ' ', '-' or '_' (either case). */
int data_ss8_code(int ch);
/* The class of a label letter in a run of `classes` (data_ss_code or data_ss8_code). */
int data_label_code(int classes, int ch);
/* A test file that marks predefined sets (SET=train / valid / test in its
 * FASTA label headers: FLIP's) keeps only its SET=test proteins (and any
 * without a set); returns how many it dropped, 0 when it marks no test set
 * or nothing else. Before features and folds. */
uint32_t data_keep_test_set(FsDataset *ds);
/* Scored residues of every protein in one predefined set (e.g. FS_SET_TEST),
 * ascending; out may be NULL to count only. */
uint32_t data_set_examples(const FsDataset *ds, FsSet set, uint32_t *out);
/* The fingerprint of the current content and folds (what data_finish stores). */
uint64_t data_fingerprint(const FsDataset *ds);
/* Bytes held by the dataset's arrays, features included (for the memory
 * budget check). */
uint64_t data_bytes(const FsDataset *ds);
/* Bytes of the feature matrix alone: n_res x feat_dim x (2 or 4). */
uint64_t data_feature_bytes(const FsDataset *ds);
/* The layout of a file whose labels are optional (predict's input), from
 * its content: FS_FMT_FASTA for '>' headers unless the first one heads a
 * record (a sequence line, then a label line of as many label letters, then
 * a blank line or the end); FS_FMT_AUTO when none is recognised; -1 with
 * err when the file cannot be read. */
FsFormat data_detect_file(const char *path, FsErr *err);
/* Plain FASTA sequences without labels (predict's input): every residue
 * unscored, other letters as X (stats.unknown_letters counts them).
 * 0, or -1 with err naming file:line:col. */
int data_load_sequences(FsDataset *ds, const char *path, FsErr *err);
/* The same from n bytes of FASTA text in memory (the library API's
 * sequences), messages naming it name. */
int data_sequences_parse(FsDataset *ds, const char *text, size_t n, const char *name, FsErr *err);
/* Leakage guard (hashes.c): protein i's sequence fingerprint (FNV-1a of
 * its residue codes); the sorted, distinct fingerprints of every protein a
 * run trains or validates on (data_in_use; malloc'd, returns the count);
 * and whether h is among sorted[0..n). */
uint64_t data_protein_hash(const FsDataset *ds, uint32_t i);
/* Whether protein p takes part in training or validation: with folds
 * assigned, every protein; with a predefined split (no folds), those of
 * the training and validation sets. */
int data_in_use(const FsDataset *ds, uint32_t p);
uint32_t data_seen_hashes(const FsDataset *ds, uint64_t **out);
int data_hash_seen(const uint64_t *sorted, uint32_t n, uint64_t h);
/* Name of protein i (NUL-terminated). */
const char *data_protein_name(const FsDataset *ds, uint32_t i);

/* ---------------------------------------------------------------------- */
/* Sequence identity to the proteins a model saw (seqset.c, align.c,      */
/* identity.c; the definition is in docs/models.md, "Leakage guard").     */

/* Proteins as residue codes and names: what a model file keeps of the
 * proteins its run trained or validated on, and what a test protein's
 * identity is measured against. A protein's chains are concatenated. */
typedef struct {
    uint32_t n;         /* proteins */
    uint32_t *off;      /* [n+1] offsets into aa; off[n] residues in all */
    uint8_t *aa;        /* residue codes 0..FS_AA_UNKNOWN */
    uint32_t *name_off; /* [n+1] offsets into names */
    char *names;        /* n NUL-terminated names */
} FsSeqSet;

/* Every protein of ds that data_in_use, in order. */
void data_seqset_of(FsSeqSet *s, const FsDataset *ds);
/* The set from a file's arrays (checked, copied): off has n_off = n+1
 * increasing entries from 0 to n_res, every code is at most FS_AA_UNKNOWN,
 * names holds exactly n NUL-terminated names. 0, or -1 with why. */
int data_seqset_from(FsSeqSet *s, const uint8_t *aa, uint64_t n_res, const uint8_t *off_le, uint64_t n_off,
                     const char *names, uint64_t names_len, char *why, size_t why_n);
/* Appends b's proteins to a (an ensemble's union; a may be zeroed). */
void data_seqset_append(FsSeqSet *a, const FsSeqSet *b);
/* 1 if a and b hold the same proteins in the same order. */
int data_seqset_same(const FsSeqSet *a, const FsSeqSet *b);
void data_seqset_free(FsSeqSet *s);

/* The largest identity a test protein may have to a protein the models
 * saw (evaluate --max-identity, test.max_identity), and the levels the
 * evaluation counts test proteins above (the last is the default). */
#define FS_IDENTITY_MAX_DEFAULT 0.95
#define FS_IDENTITY_LEVELS 3
extern const double fs_identity_levels[FS_IDENTITY_LEVELS];

/* Smith-Waterman local alignment of q against t (BLOSUM62, gaps 11 + 1
 * per residue; align.c): the identical residue pairs (X never counts) in
 * the best-scoring alignment, and its score in *score (may be NULL). */
uint32_t data_align_identical(const uint8_t *q, uint32_t nq, const uint8_t *t, uint32_t nt, int32_t *score);

/* Coverage: a residue of a test protein is covered when it lies in a
 * local alignment to a protein of the set with identity above this (over
 * its columns; or above the identity threshold where that is higher:
 * data_identity_segment) and at least this many columns (shorter near-identical
 * stretches turn up by chance: an expression tag alone is about 20), and a
 * test protein is refused (evaluate --max-coverage, test.max_coverage)
 * when more than FS_COVERAGE_MAX_DEFAULT of its residues are covered: most
 * of it was trained on. */
#define FS_COVER_SEGMENT_IDENTITY 0.95
#define FS_COVER_SEGMENT_MIN 30
#define FS_COVERAGE_MAX_DEFAULT 0.5

/* A local alignment, placed: its score, identical pairs, columns (pairs
 * and gap positions), and the query residues [q_lo, q_hi) it spans (empty
 * when nothing aligns). */
typedef struct {
    int32_t score;
    uint32_t identical, columns, q_lo, q_hi;
} FsAlignment;
/* The best local alignment of q against t scored for near-identity: an
 * identical pair +(1 - I), any other pair or gap position -I, a pair with
 * an X 0 (I = identity, times 1000): its identity is above I wherever it
 * scores above 0 (none: score 0). */
void data_align_near(const uint8_t *q, uint32_t nq, const uint8_t *t, uint32_t nt, double identity, FsAlignment *out);

/* A test protein's highest identity to a set: identical residues of the
 * best local alignment over the protein's residues other than X (1.0
 * for a protein contained in one of the set), and which protein; and its
 * coverage by the set (data_identity_best only). */
typedef struct {
    double identity;
    int32_t protein; /* index into the set, -1 if none shares anything */
    uint32_t identical, length;
    double coverage;     /* covered residues other than X over length */
    int32_t cover_by[2]; /* the proteins with the longest segments, -1 for none */
} FsIdentityHit;

typedef struct FsIdentityIndex FsIdentityIndex;
/* A k-mer index of the set (which it keeps a pointer to: keep it alive). */
FsIdentityIndex *data_identity_index(const FsSeqSet *train);
/* The identity a covering segment must be above: FS_COVER_SEGMENT_IDENTITY,
 * or the identity threshold x where higher (a user who accepts homologues
 * up to x does not have them refused as covered). */
double data_identity_segment(FsIdentityIndex *ix, double x); /* returns it */
void data_identity_free(FsIdentityIndex *ix);
/* The prefilter (shared k-mers on one diagonal) picks candidates, aligned
 * in full. Not thread-safe (the index holds the scratch). */
FsIdentityHit data_identity_best(FsIdentityIndex *ix, const uint8_t *aa, uint32_t n);
/* The same against every protein of the set, no prefilter (the baseline;
 * identity only, coverage 0). */
FsIdentityHit data_identity_full(const FsSeqSet *train, const uint8_t *aa, uint32_t n);
/* Protein i of ds against the index: hits[i] for every protein. */
void data_identity_all(FsIdentityIndex *ix, const FsDataset *ds, FsIdentityHit *hits);

#endif
