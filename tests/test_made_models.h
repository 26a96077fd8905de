/*
 * test_made_models.h: what the tests of evaluate and the leakage guard
 * (test_identity, test_coverage, test_evaluate_classes) make without
 * training: random residue codes from an xorshift stream the test seeds,
 * a model file of one dense layer with made-up weights (and the training
 * proteins it names, for the guard), and labelled records of residue
 * codes. Include after test_proc.h.
 */
#ifndef FS_TEST_MADE_MODELS_H
#define FS_TEST_MADE_MODELS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "modelfile/modelfile.h"

/* The next number of the stream *state (xorshift64). */
static inline uint32_t tmm_rand(uint64_t *state)
{
    *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
    return (uint32_t)(*state >> 16);
}

/* n random residue codes (0..19) from the stream *state. */
static inline void tmm_protein(uint64_t *state, uint8_t *aa, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) aa[i] = (uint8_t)(tmm_rand(state) % 20);
}

/* A window-5 model of one dense layer (units, relu) over `classes` states
 * (0: 3), its weight i being weight(i), naming the training proteins seqs
 * (NULL: none, as an old model file), written to path as fold 0 of 3. */
static inline void tmm_write_model(const char *path, int classes, int units, float (*weight)(long i),
                                   const FsSeqSet *seqs)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 5;
    a.classes = classes;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = units, .act = FS_ACT_RELU};
    a.n_layers = 1;
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, &a, 1, &err) == 0);
    long nw = net.n_params + net.n_state;
    float *w = malloc(sizeof(float) * (size_t)nw);
    for (long i = 0; i < nw; i++) w[i] = weight(i);
    FsModelInfo info = {.trial = "0123456789abcdef", .fold = 0, .folds = 3, .best_epoch = 1, .seen_seqs = (FsSeqSet *)seqs};
    uint8_t *bytes;
    uint64_t n;
    modelfile_serialize(&net, w, &info, &bytes, &n);
    tp_write_file(path, bytes, (size_t)n, "wb");
    free(bytes);
    free(w);
}

/* One record (">name", the residues, labels H E C in turn) of n codes. */
static inline void tmm_put_record(FILE *f, const char *name, const uint8_t *aa, uint32_t n)
{
    fprintf(f, ">%s\n", name);
    for (uint32_t i = 0; i < n; i++) fputc(FS_AA_LETTERS[aa[i]], f);
    fputc('\n', f);
    for (uint32_t i = 0; i < n; i++) fputc("HEC"[i % 3], f);
    fputs("\n\n", f);
}

#endif
