/*
 * safetensors/header.h: private to the safetensors module. The JSON header
 * read in two passes over its text and no document: a syntax check that
 * stores nothing, then a scan that writes each tensor entry and metadata
 * pair straight into the FsSafetensors (header.c).
 */
#ifndef FS_SAFETENSORS_HEADER_H
#define FS_SAFETENSORS_HEADER_H

#include <stddef.h>

#include "safetensors/safetensors.h"

/* Every header error reads "ORIGIN: safetensors header: ...". */
int st_bad(FsErr *err, const char *origin, const char *fmt, ...) FS_PRINTF(3, 4);

/* "[2, 3, 4]" */
void st_shape_text(char *buf, size_t n, int ndim, const int64_t *shape);

/* Reads the JSON text[0..n) (valid UTF-8, starting with '{') into
 * st->tensors (in header order, data still unset), st->meta and
 * st->strings (the names, keys and values, decoded into one buffer of at
 * most n + 1 bytes). Each tensor's dtype, shape and data_offsets are
 * checked against data_len, the bytes of the data section. Memory is
 * bounded by n: nothing is kept per array element or per skipped value. */
int st_header_scan(FsSafetensors *st, const char *text, size_t n, uint64_t data_len, const char *origin, FsErr *err);

#endif
