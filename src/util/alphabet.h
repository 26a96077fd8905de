/*
 * alphabet.h (part of util; util.h includes it): the residue alphabet and
 * the secondary-structure classes, written once. Every module reads
 * residues or classes (the readers, the trainer's one-hot and softmax, the
 * metrics' confusion matrix, journal records, reports, model files), and
 * metrics may use util alone, so they live here, in the lowest module.
 * No other file spells the letters or counts them.
 */
#ifndef FS_ALPHABET_H
#define FS_ALPHABET_H

/* Amino-acid codes: 0..19 the standard residues in FS_AA_LETTERS order,
 * 20 for anything else (X, B, Z, U, O, ...), 21 for a window position
 * outside the residue's segment (padding; the trainer's one-hot is zero). */
#define FS_AA_LETTERS "ACDEFGHIKLMNPQRSTVWY"
/* Every code a model reads, as letters by code (the unknown code is X): a
 * model file's alphabet. */
#define FS_AA_ALPHABET FS_AA_LETTERS "X"
enum { FS_AA_STANDARD = 20, FS_AA_UNKNOWN = 20, FS_AA_INPUTS = 21, FS_AA_PAD = 21 };

/* A code's letter as written out: X for the unknown code (and padding). */
static inline char fs_aa_letter(int code)
{
    return FS_AA_ALPHABET[code >= 0 && code < FS_AA_STANDARD ? code : FS_AA_UNKNOWN];
}

/* The classes a residue is predicted as: helix, strand, coil, by index
 * (the order of confusion matrices, softmax outputs and per-class scores),
 * and their letters in that order (DSSP's 8 states reduce to these). */
#define FS_CLASS_LETTERS "HEC"
enum { FS_SS_H = 0, FS_SS_E = 1, FS_SS_C = 2, FS_CLASSES = 3 };

/* The most feature columns a residue may have (all sources together):
 * what the features loader, the prepared file's reader and the model's
 * input accept. Util's, beside the letters and the classes, because it
 * bounds the model's input as they do: model checks an architecture
 * against it without depending on data. */
#define FS_FEAT_MAX_DIM 8192

/* A run's class count is 3 (the default) or 8 (data.classes: 8, DSSP-8);
 * arrays are sized for the most, loops run to the run's count. The eight
 * DSSP states by index: alpha helix, 3-10 helix, pi helix, strand,
 * isolated bridge, turn, bend, coil (DSSP's blank, '-', L and P read as
 * C), ordered so that each reduces to the 3-state class at or before it:
 * the standard reduction H G I -> H, E B -> E, T S C -> C
 * (FS_CLASS8_REDUCE). */
#define FS_MAX_CLASSES 8
#define FS_CLASS8_LETTERS "HGIEBTSC"
enum { FS_SS8_H = 0, FS_SS8_G, FS_SS8_I, FS_SS8_E, FS_SS8_B, FS_SS8_T, FS_SS8_S, FS_SS8_C, FS_CLASSES8 };
/* The reduction in words, as reports state it. */
#define FS_CLASS8_REDUCTION_TEXT "H G I -> H, E B -> E, T S C -> C"
/* By 8-state index, its 3-state class. */
#define FS_CLASS8_REDUCE {FS_SS_H, FS_SS_H, FS_SS_H, FS_SS_E, FS_SS_E, FS_SS_C, FS_SS_C, FS_SS_C}

/* A stored class count (0 or 3 in files and structs from before 8
 * states) as the run's: 8, or else 3. The casts: C++, as nvcc compiles
 * it, warns on two enums in one ?:. */
static inline int fs_classes(int classes) { return classes == FS_CLASSES8 ? (int)FS_CLASSES8 : (int)FS_CLASSES; }
/* The letters of a run's classes, in index order. */
static inline const char *fs_class_letters(int classes)
{
    return fs_classes(classes) == FS_CLASSES8 ? FS_CLASS8_LETTERS : FS_CLASS_LETTERS;
}
/* A class's 3-state class (itself in a 3-state run). */
static inline int fs_class_reduce(int classes, int c)
{
    static const unsigned char r8[FS_CLASSES8] = FS_CLASS8_REDUCE;
    return fs_classes(classes) == FS_CLASSES8 && c >= 0 && c < FS_CLASSES8 ? r8[c] : c;
}
/* A class's name in words (reports). */
static inline const char *fs_class_name(int classes, int c)
{
    static const char *const n3[FS_CLASSES] = {"helix", "strand", "coil"};
    static const char *const n8[FS_CLASSES8] = {"alpha helix", "3-10 helix", "pi helix", "strand",
                                                "bridge",      "turn",       "bend",     "coil"};
    if (fs_classes(classes) == FS_CLASSES8) return c >= 0 && c < FS_CLASSES8 ? n8[c] : "?";
    return c >= 0 && c < FS_CLASSES ? n3[c] : "?";
}

/* The counts above are the strings' lengths. */
#if !defined(__cplusplus)
_Static_assert(sizeof FS_AA_LETTERS - 1 == FS_AA_STANDARD, "FS_AA_STANDARD counts FS_AA_LETTERS");
_Static_assert(sizeof FS_AA_ALPHABET - 1 == FS_AA_INPUTS, "FS_AA_INPUTS counts FS_AA_ALPHABET");
_Static_assert(sizeof FS_CLASS_LETTERS - 1 == FS_CLASSES, "FS_CLASSES counts FS_CLASS_LETTERS");
_Static_assert(sizeof FS_CLASS8_LETTERS - 1 == FS_CLASSES8, "FS_CLASSES8 counts FS_CLASS8_LETTERS");
_Static_assert(FS_CLASSES8 == FS_MAX_CLASSES && FS_CLASSES <= FS_MAX_CLASSES, "FS_MAX_CLASSES is the most");
#endif

#endif
