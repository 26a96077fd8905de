/*
 * reader.h: private to the data module. The whole-file text buffer every
 * reader parses, and the builder that appends proteins, segments and
 * residues to a dataset so that each reader only deals with its syntax.
 */
#ifndef FS_DATA_READER_H
#define FS_DATA_READER_H

#include <stddef.h>

#include "data/data.h"

/* A whole input file, NUL-terminated, checked to be text. */
typedef struct {
    char *buf;
    size_t n;
    const char *path;
} DataText;

/* Reads a whole file into a malloc'd, NUL-terminated buffer. */
int data_file_read(const char *path, char **buf, size_t *n, FsErr *err);
/* Reads path; fails on I/O errors, an empty file or binary content. */
int data_text_read(DataText *t, const char *path, FsErr *err);
/* The same checks on text already in memory: buf (n bytes, malloc'd with
 * room for one more) becomes t's, named path in messages; freed on failure. */
int data_text_adopt(DataText *t, char *buf, size_t n, const char *path, FsErr *err);
void data_text_free(DataText *t);
/* The next line from *pos (without its "\n" or "\r\n"); 0 at the end. */
int data_text_line(const DataText *t, size_t *pos, const char **line, size_t *len);
/* "dir/name.ext" -> "name.ext", for protein names. */
const char *data_basename(const char *path);

/* Human name of a layout, for messages ("UCI pair file", ...). */
const char *data_format_desc(FsFormat f);
/* Layout of a text from its first meaningful lines; FS_FMT_AUTO if none fits. */
FsFormat data_detect(const DataText *t);

/* The label letters accepted, for error messages. */
#define DATA_LABELS_EXPECTED "H E C, DSSP H G I E B T S L P -, or UCI h e _"
#define DATA_LABELS8_EXPECTED "DSSP-8 H G I E B T S C (coil also L P - or blank)"
#define DATA_LABELS_EXPECTED_OF(b) ((b)->classes == FS_CLASSES8 ? DATA_LABELS8_EXPECTED : DATA_LABELS_EXPECTED)

typedef struct {
    FsDataset *ds;
    size_t cap_res, cap_seg, cap_prot, cap_names, n_names;
    int open;    /* a protein is being built */
    int classes; /* data_load_classes' classes: 3 or 8 */
    int seen8;   /* an 8-state-only label (G I B T S) read since the last data_build_check8 */
} DataBuilder;

/* A label letter's byte (FS_SS_LABEL of its class in the builder's
 * classes), or -1 if the letter is not a label. */
int data_build_label(DataBuilder *b, int ch);
/* With 8 classes, -1 with err when the labels read since the last call
 * carry no 8-state information (no G I B T S: 3-state labels), naming
 * path; 0 otherwise. */
int data_build_check8(DataBuilder *b, const char *path, FsErr *err);

/* Starts an empty dataset in ds (which it owns from now on; data_free
 * releases it whether or not the build finished). */
void data_build_init(DataBuilder *b, FsDataset *ds);
void data_build_protein(DataBuilder *b, const char *name, size_t name_len, FsSet set);
/* Ends the current segment (a chain break); no-op if it has no residues. */
void data_build_break(DataBuilder *b);
/* Appends a residue from its letter (counts unknown letters) and label
 * code. Returns -1 if ch is not a letter or the dataset is full (err set
 * with path:line:col). */
int data_build_residue(DataBuilder *b, int ch, uint8_t ss, const char *path, long line, long col,
                       FsErr *err);
/* Ends the current protein; returns its residue count (0: caller's error). */
uint32_t data_build_end(DataBuilder *b);
/* Trims the arrays to size and computes windows, stats and fingerprint. */
void data_build_finish(DataBuilder *b);

/* The readers: append every protein of one input. */
int data_read_uci(DataBuilder *b, const DataText *t, FsErr *err);
int data_read_records(DataBuilder *b, const DataText *t, FsErr *err);
int data_read_csv(DataBuilder *b, const DataText *t, FsErr *err);
int data_read_fasta_set(DataBuilder *b, const char *sequences, const char *labels, const char *mask,
                        FsErr *err);

#endif
