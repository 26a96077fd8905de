/*
 * synth: a synthetic, protein-like secondary-structure data set, generated
 * deterministically from a seed, for tests, benchmarks and demos on
 * machines without the real data (../shared/data).
 *
 * The model (every draw is an integer draw from FsRng, so the bytes are
 * the same on every machine and build):
 *
 *   Proteins. Protein i (0-based) has its own random stream seeded from
 *   (seed, i), so the first N proteins of a larger set are the same N
 *   proteins. Its name is "synth%04u" of i + 1 (synth0001, ...). Length
 *   50 + 350 * min(u1, u2) for two uniform draws: 50..400, mean ~167,
 *   skewed short like real chains.
 *
 *   Structure. A coil segment, then alternately a helix or a strand (even
 *   odds) and a coil loop, until the length is reached (the last segment is
 *   cut to fit). Lengths are uniform: helix 6..20, strand 3..10, coil
 *   2..12. Expected label fractions: H ~39%, E ~19%, C ~42%.
 *
 *   Residues. Each class draws from its own propensity table: 55% of the
 *   mass on its favoured residues (helix A L E K M Q R, strand V I Y F W T
 *   C, coil G P N D S, weighted within the group), 45% on the others in
 *   proportion to natural background frequencies. Position effects:
 *   the coil residue before a helix (N-cap) is S T D or N half the time;
 *   a helix's first residue is P 30% of the time; the coil residue after a
 *   helix (C') is G half the time. Inside a strand, every other residue
 *   (from the strand start) draws from the strand table only 70% of the
 *   time and from the coil table otherwise (exposed strand faces).
 *
 *   Noise the loaders also see. 10% of proteins have a chain break (two
 *   segments, split at 25..75% of the length, labels continuing across it).
 *   Each residue is the unknown code FS_AA_UNKNOWN ('X') with probability
 *   0.3%. 30% of proteins have 1..5 unscored (disordered) residues at the
 *   N terminus and, independently, 30% at the C terminus.
 *
 * A 13-residue window holds enough of a segment that a small CNN (conv 16
 * x 5 -> dense 32, 3 epochs) reaches a 3-fold validation Q3 near 0.7
 * against a majority-class (coil) baseline near 0.42; see
 * tests/test_synth_learn.c.
 *
 * Files. synth_write writes a record file (">id", sequence, labels, blank
 * line) that data_load reads as FS_FMT_RECORDS. That layout has neither
 * chain breaks nor masks: segments are joined and unscored residues are
 * written with their (true) label, so the loaded set is scored everywhere
 * and has one segment per protein; amino acids and labels are otherwise
 * identical. synth_write_fasta writes a FASTA set (sequences, labels,
 * mask) that keeps the masks: only chain breaks are lost. No text layout
 * the loaders read keeps both (UCI keeps breaks but not masks).
 *
 * Features (`synth --features D`, synth_features). D per-residue feature
 * columns with a known signal, for data.features (docs/sweep-format.md):
 * column k < SYNTH_FEAT_SIGNAL (3) of a residue of class k (H 0, E 1, C 2:
 * its true class, unscored residues too) is SYNTH_FEAT_LEVEL (1.0), the
 * other columns 0, and every column adds noise of standard deviation
 * SYNTH_FEAT_NOISE (1.0), independent per residue and column; columns 3..D-1
 * are noise alone. One residue's features alone name its class about 60% of
 * the time (three unit-distance means under unit noise); a window of a
 * segment's residues averages the noise away, so a model given them beats
 * one-hot residues clearly, yet not perfectly (segment ends stay hard):
 * 300 proteins, seed 1, 16 columns, window 13, conv 16 x 5 -> dense 32,
 * 3 epochs, 3 folds: Q3 87.1% with [onehot, h5] against 68.6% one-hot alone.
 * The noise is a sum of 12 uniform 16-bit integer draws, centred and
 * scaled by 2^16, from protein i's own stream seeded from (seed, i,
 * "synfeats"): the same seed gives the same floats on every machine, and
 * the residues' own stream is untouched (a set with features has the same
 * residues and labels as one without). Files: SYNTH_FEAT_H5 writes one
 * HDF5 file (OUT.features.h5) with one float32 dataset of shape (L, D) per
 * protein, named by the protein (synth0001, ...); SYNTH_FEAT_NPY a folder
 * (OUT.features/) of one <id>.npy each (format 1.0, '<f4').
 */
#ifndef FS_SYNTH_H
#define FS_SYNTH_H

#include <stdint.h>

#include "data/data.h"
#include "util/util.h"

/* Most proteins one call generates (keeps residue offsets well inside uint32). */
#define SYNTH_MAX_PROTEINS 1000000u

/* Fills ds (which the caller later data_frees) with `proteins` proteins.
 * Returns 0, or -1 with err set if proteins is 0 or above SYNTH_MAX_PROTEINS
 * (ds is then empty but still safe to data_free). */
int synth_generate(FsDataset *ds, uint32_t proteins, uint64_t seed, FsErr *err);

/* Writes any dataset as a record file (see above for what is dropped).
 * Returns 0, or -1 with err naming the path and the system error. */
int synth_write(const FsDataset *ds, const char *path, FsErr *err);

/* Writes a FASTA set: sequences, labels (3-state H E C) and a mask file
 * ('1' scored, '0' unscored) matched by ID; 60 letters per line. */
int synth_write_fasta(const FsDataset *ds, const char *seq_path, const char *label_path,
                      const char *mask_path, FsErr *err);

/* What a text layout loses from ds: unscored residues written as scored
 * (records only; 0 for FASTA) and chain breaks joined (segments minus
 * proteins). */
void synth_losses(const FsDataset *ds, FsFormat fmt, uint64_t *unmasked, uint64_t *joined);

/* Features (above). */
#define SYNTH_FEAT_SIGNAL 3u
#define SYNTH_FEAT_LEVEL 1.0f
#define SYNTH_FEAT_NOISE 1.0f
typedef enum { SYNTH_FEAT_H5 = 0, SYNTH_FEAT_NPY } SynthFeatFormat;
/* ds's features, [n_res][dim] floats in residue order (malloc'd; the
 * caller frees them). seed: the set's generator seed. */
float *synth_features(const FsDataset *ds, uint32_t dim, uint64_t seed);
/* The file (h5) or folder (npy) the features of output OUT go to:
 * OUT.features.h5 or OUT.features. 0, or -1 with err when it does not fit. */
int synth_features_path(const char *out, SynthFeatFormat fmt, char *path, size_t n, FsErr *err);
/* Writes ds's features to path in that layout. 0, or -1 with err (dim out
 * of 1..FS_FEAT_MAX_DIM, no libhdf5 for h5, a file that cannot be written). */
int synth_write_features(const FsDataset *ds, uint32_t dim, uint64_t seed, SynthFeatFormat fmt, const char *path,
                         FsErr *err);

#endif
