/*
 * safetensors: the file format foldsweep's trained models are saved in
 * (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
 * length N, N bytes of JSON header, then the raw little-endian tensor data.
 * The header maps each tensor name to {"dtype", "shape", "data_offsets":
 * [begin, end]} (offsets relative to the data section) and may hold a
 * "__metadata__" object of string values.
 *
 * The reader checks everything a hostile or damaged file could get wrong
 * (header length past the end, bad JSON, unknown dtype, shape and offsets
 * that disagree, overlapping or out-of-range offsets, bytes not covered by
 * any tensor, a header over FS_ST_MAX_HEADER, a FIFO or other file that
 * is not a regular one) and answers with an error naming the file and what
 * was expected, never a crash, a hang or an allocation the file asks for. The writer writes F32 tensors (and U64, U32, U8 ones on request), in the
 * order given, with 8-byte aligned data (the header is padded with spaces,
 * as the reference implementation does).
 */
#ifndef FS_SAFETENSORS_H
#define FS_SAFETENSORS_H

#include <stdint.h>

#include "util/util.h"

#define FS_ST_MAX_DIMS 8
/* The largest JSON header read: 4 MiB. A foldsweep model's header (names,
 * shapes, the architecture and the trial's configuration) is a few KB;
 * the reference implementation's 100 MB would let a hostile file cost
 * gigabytes and seconds before it is refused (docs/models.md). */
#define FS_ST_MAX_HEADER (4u << 20)

typedef struct {
    const char *name;  /* NUL-terminated */
    char dtype[8];     /* as written: "F32", "F16", "BF16", "F64", "I64", "I32", "I16", "I8", "U8", "BOOL", ... */
    int ndim;
    int64_t shape[FS_ST_MAX_DIMS];
    uint64_t begin, end; /* data_offsets, relative to the data section */
    const void *data;    /* reading: points into the file's bytes; writing: the caller's floats */
} FsTensor;

typedef struct {
    const char *key, *value;
} FsMetaEntry;

typedef struct {
    uint8_t *bytes; /* the whole file (owned) */
    uint64_t n_bytes;
    uint64_t header_len;
    FsTensor *tensors; /* in data-offset order */
    int n_tensors;
    FsMetaEntry *meta;
    int n_meta;
    char *strings; /* names, keys and values (owned) */
} FsSafetensors;

/* Parses a whole file held in memory; takes ownership of bytes (freed by
 * safetensors_free, also on failure). origin names it in messages. 0, or
 * -1 with err ("ORIGIN: safetensors header: ..."); on failure everything
 * is already freed and st is left zeroed (safetensors_free on it is a
 * no-op). Tensor names and metadata are NUL-terminated copies; a name
 * holding \u0000 is cut there, a metadata value holding one is refused. */
int safetensors_parse(FsSafetensors *st, uint8_t *bytes, uint64_t n, const char *origin, FsErr *err);
/* Reads and parses a file: its header length is checked against the
 * file's size before anything else is read, the data is read only after
 * the header is accepted. 0, or -1 with err ("PATH: ..."). */
int safetensors_read(FsSafetensors *st, const char *path, FsErr *err);
/* Opens a file for reading without blocking (a FIFO is never waited on):
 * a file descriptor, with the file's size in *size, or -1 with err ("PATH:
 * cannot open: ..." or "PATH: cannot read: not a regular file ..."). */
int safetensors_open(const char *path, uint64_t *size, FsErr *err);
/* Reads exactly n bytes at offset off of fd into buf: 0, or -1 with err
 * ("PATH: cannot read: ..."; a file that ends early shrank). */
int safetensors_read_at(int fd, uint8_t *buf, uint64_t n, uint64_t off, const char *path, FsErr *err);
void safetensors_free(FsSafetensors *st);

const FsTensor *safetensors_find(const FsSafetensors *st, const char *name);
/* A __metadata__ value, or NULL. */
const char *safetensors_meta(const FsSafetensors *st, const char *key);
/* Elements of a tensor (product of its shape; 1 for a scalar). */
uint64_t safetensors_numel(const FsTensor *t);
/* A tensor as float32: 0, or -1 with err when its dtype is not F32 or its
 * shape is not `ndim` dims equal to `shape` (shape may be NULL: any). The
 * floats are copied to out (numel floats), so alignment does not matter. */
int safetensors_get_f32(const FsSafetensors *st, const char *name, int ndim, const int64_t *shape, float *out,
                        const char *origin, FsErr *err);

/* Serialises F32 tensors (t[i].data = floats; offsets assigned here), or
 * U64, U32 or U8 ones where t[i].dtype says so (t[i].data = uint64_t,
 * uint32_t, uint8_t; any other dtype string means F32), and metadata into one malloc'd buffer. Names must be
 * distinct and not "__metadata__". Compact JSON, "__metadata__" first
 * (when n_meta > 0), then the tensors in the order given; the same input
 * gives the same bytes. */
void safetensors_serialize(const FsTensor *t, int n, const FsMetaEntry *meta, int n_meta, uint8_t **out,
                           uint64_t *n_out);

#endif
