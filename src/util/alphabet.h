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

/* The counts above are the strings' lengths. */
#if !defined(__cplusplus)
_Static_assert(sizeof FS_AA_LETTERS - 1 == FS_AA_STANDARD, "FS_AA_STANDARD counts FS_AA_LETTERS");
_Static_assert(sizeof FS_AA_ALPHABET - 1 == FS_AA_INPUTS, "FS_AA_INPUTS counts FS_AA_ALPHABET");
_Static_assert(sizeof FS_CLASS_LETTERS - 1 == FS_CLASSES, "FS_CLASSES counts FS_CLASS_LETTERS");
#endif

#endif
