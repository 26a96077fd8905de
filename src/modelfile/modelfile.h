/*
 * modelfile: a trained (trial, fold) model as a safetensors file
 * (docs/models.md). The tensors are named and laid out as the state dict of
 * the equivalent PyTorch nn.Sequential (conv1d [out, in, width], linear
 * [out, in] with PyTorch's channel-major flatten, batch-norm weight, bias
 * and running statistics, highway h / t convolutions), so the file loads in
 * PyTorch as it is; the metadata carries the architecture (what a loader
 * builds), the trial's canonical config and where the model came from.
 */
#ifndef FS_MODELFILE_H
#define FS_MODELFILE_H

#include <stdint.h>

#include "data/data.h"
#include "features/features.h"
#include "model/model.h"

/* Where a model came from (metadata). */
typedef struct {
    char trial[FS_TRIAL_ID_LEN + 1];
    int trial_index;
    int fold;   /* 0..k-1, FS_FOLD_PREDEFINED, or FS_FOLD_ALL (a refit) */
    int folds;  /* k, or 1 for a predefined split */
    int best_epoch; /* the epoch whose weights these are (a refit: its last) */
    /* The validation scores at best_epoch; NAN where there are none (a
     * refit has no validation set): then they are not written, and a file
     * without them (or an older refit's, which wrote 0) reads as NAN. */
    float val_q3, val_loss;
    /* A refit (fold FS_FOLD_ALL): the epochs it trained, why that many
     * (e.g. "median of the folds' best epochs") and those best epochs, in
     * fold order. epochs 0: not a refit, or a refit written before these. */
    int epochs;
    char epochs_rule[96];
    int n_fold_best;
    int fold_best[FS_MAX_FOLDS];
    uint64_t data_fingerprint;
    char *config; /* the trial's canonical config (JSON); NULL allowed when saving */
    /* The feature sources the model was trained on (modelfile_features_json;
     * metadata "features"), NULL for a one-hot model. */
    char *features;
    /* Fingerprints (data_seen_hashes: sorted) of every protein the run
     * trained or validated on: the leakage guard of `evaluate`. Stored as
     * the U64 tensor "foldsweep.seen_proteins". */
    uint64_t *seen;
    uint32_t n_seen;
    /* Those proteins themselves (residue codes and names), for the identity
     * check of `evaluate`: the tensors "foldsweep.seen_residues" (U8),
     * "foldsweep.seen_offsets" (U32) and "foldsweep.seen_names" (U8).
     * NULL when saving without them, or for a file written before them. */
    FsSeqSet *seen_seqs;
} FsModelInfo;

/* A model read back: its net (compiled for max_batch), its weights
 * (n_params + n_state floats) and its metadata. */
typedef struct {
    FsNet net;
    float *weights;
    FsModelInfo info;
    char version[32]; /* the foldsweep version that wrote it */
} FsSavedModel;

/* The file's bytes for net and its weights (n_params + n_state floats). */
void modelfile_serialize(const FsNet *net, const float *weights, const FsModelInfo *info, uint8_t **out,
                         uint64_t *n_out);
/* (Files are written with fs_write_file_atomic, util.h.) */
/* Reads and checks a model file: format, architecture, every tensor's
 * dtype and shape. 0, or -1 with err naming the file and what is wrong. */
int modelfile_load(FsSavedModel *m, const char *path, int max_batch, FsErr *err);
/* The same from bytes held in memory (ownership of bytes is taken). */
int modelfile_parse(FsSavedModel *m, uint8_t *bytes, uint64_t n, const char *origin, int max_batch, FsErr *err);
void modelfile_free(FsSavedModel *m);
/* 0 if the file at path has exactly `bytes` bytes and CRC-32 `crc`; else
 * -1 with why ("missing", "N bytes, expected M", "checksum differs"). */
int modelfile_verify(const char *path, uint64_t bytes, uint32_t crc, char *why, size_t why_n);
/* Copies a file byte for byte, durably (fs_write_file_atomic). */
int modelfile_copy(const char *src, const char *dst, FsErr *err);
/* CRC-32 of a byte buffer, as the journal records it. */
uint32_t modelfile_crc(const uint8_t *bytes, uint64_t n);

/* A fold as the metadata (and an export's model.json) names it: "0".."k-1",
 * "predefined", or "all" (a refit); and back: 0, or -1 for anything else. */
void modelfile_fold_name(int fold, char *out, size_t n);
int modelfile_fold_parse(const char *s, int *fold);

/* The architecture as the metadata's "arch" JSON (malloc'd), and back. */
char *modelfile_arch_json(const FsNet *net);
/* A model's feature sources (data.features) as its "features" metadata
 * (features.c), and back (each value checked; 0, or -1 with err; the
 * strings are malloc'd: modelfile_features_free). */
char *modelfile_features_json(const FsFeatSpec *spec);
int modelfile_features_parse(FsFeatSpec *spec, const char *json, FsErr *err);
void modelfile_features_free(FsFeatSpec *spec);
int modelfile_arch_parse(FsArch *arch, const char *json, FsErr *err);

#endif
