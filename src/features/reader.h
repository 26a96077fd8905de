/*
 * reader.h: private to the features module. What a reader is asked to
 * read (one protein's file), the whole-file read they share, the small
 * text scanning helpers of the text layouts, and each reader's entry.
 */
#ifndef FS_FEATURES_READER_H
#define FS_FEATURES_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "features/features.h"

/* One protein's rows from one source. */
typedef struct {
    const FsFeatSource *src;
    const char *path;    /* the file (h5: the HDF5 file) */
    const char *protein; /* its id, for messages */
    const uint8_t *aa;   /* the protein's residue codes [n] (the PSSM / HHM letter check) */
    uint32_t n;          /* its residues: the rows expected */
    uint32_t dim;        /* the columns expected */
} FeatTarget;

/* Opens a file for reading without waiting on a FIFO, and only a regular
 * file: 1 with *f, 0 no such file (ENOENT, ENOTDIR), -1 with err naming
 * the path, then who ("protein X: " or ""), what the path is (a folder, a
 * FIFO, a device) and what was `expected` ("a .npy file"). */
int feat_file_open(const char *path, const char *who, const char *expected, FILE **f, FsErr *err);
/* Reads a whole file (feat_file_open's) into a malloc'd buffer with a NUL
 * after its n bytes: 1 read, 0 no such file, -1 with err naming the path. */
int feat_file_read(const char *path, const char *who, const char *expected, char **buf, size_t *n, FsErr *err);

/* A text profile's layout (PSSM, HHM): the line its rows follow, and
 * those rows. header: >0 that line, <0 a wrong form of it (an error), 0
 * another line. rows: the rows after it, from pos (ln: its line number).
 * missing: the message for a file without the line (ln 0) or with a wrong
 * one (at line ln). */
typedef struct {
    int (*header)(const char *line, size_t len);
    int (*rows)(const FeatTarget *t, const char *buf, size_t n, size_t pos, long ln, float *out, FsErr *err);
    void (*missing)(const FeatTarget *t, long ln, FsErr *err);
    const char *expected; /* the file, for a path that is no regular file ("a PSI-BLAST ASCII PSSM") */
} FeatTextLayout;
/* Reads t's file in layout l into out: 1 read, 0 no such file, -1 with err. */
int feat_text_read(const FeatTarget *t, const FeatTextLayout *l, float *out, FsErr *err);

/* A line of a text buffer: [*line, *line + *len) without its "\n" or "\r\n";
 * 0 at the end. *pos advances past it. */
int feat_text_line(const char *buf, size_t n, size_t *pos, const char **line, size_t *len);
/* The next whitespace-separated token of [*p, end): 1 with tok/tok_len, 0 at the end. */
int feat_token(const char **p, const char *end, const char **tok, size_t *tok_len);
/* A token as a whole long integer (strtol, nothing left over); 0 or -1. */
int feat_token_long(const char *tok, size_t len, long *v);
/* A token as a finite double; 0 or -1. */
int feat_token_double(const char *tok, size_t len, double *v);
/* The token for a message: at most 24 characters, quoted, into buf. */
const char *feat_token_text(const char *tok, size_t len, char *buf, size_t n);
/* Whether a file's residue letter agrees with the protein's code (an X or
 * other unknown letter on either side agrees with anything). */
int feat_letter_agrees(int letter, uint8_t code);

/* The readers: fill out[n][dim] (dim 20 for pssm and hhm). 1 read, 0 the
 * file is missing, -1 with err naming file:line, the protein and what was
 * expected. */
int feat_read_pssm(const FeatTarget *t, float *out, FsErr *err);
int feat_read_hhm(const FeatTarget *t, float *out, FsErr *err);
int feat_read_npy(const FeatTarget *t, float *out, FsErr *err);
/* An .npy file's columns (its header alone): 1 with *cols, 0 missing, -1
 * (naming protein, the file's). */
int feat_npy_cols(const char *path, const char *protein, uint32_t *cols, FsErr *err);

/* HDF5 (read_h5.c). Without libhdf5 feat_h5_open fails with FS_FEAT_NO_H5_MSG. */
typedef struct FeatH5 FeatH5;
FeatH5 *feat_h5_open(const char *path, FsErr *err);
void feat_h5_close(FeatH5 *h);
/* Dataset `name`'s shape (2-D, floating point): 1 with rows and cols, 0
 * no such dataset, -1 with err. */
int feat_h5_shape(FeatH5 *h, const char *name, const char *protein, uint64_t *rows, uint64_t *cols, FsErr *err);
/* Dataset `name` into out[t->n][t->dim] after checking its shape is that. */
int feat_h5_read(FeatH5 *h, const char *name, const FeatTarget *t, float *out, FsErr *err);

#endif
