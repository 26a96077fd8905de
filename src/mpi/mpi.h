/*
 * mpi: distribution over MPI ranks. Two halves:
 *  - the protocol (proto.c): message kinds, their binary encoding with a
 *    header (magic, protocol version, kind, payload length) and decoders
 *    that check every field, so a malformed message is an error with a
 *    reason, never a crash. Pure C, tested without MPI.
 *  - the transport (comm.c): a context (FsMpi) over a communicator the
 *    caller gives (fsmpi_attach), or over the world when a launcher started
 *    the process (fsmpi_init), node-local ranks, the setup broadcast,
 *    non-blocking receive, send; every MPI call checked. Built against
 *    Open MPI when CMake finds it (FS_HAVE_MPI); without it every process
 *    is a single rank.
 * The coordinator and worker loops that use them live in src/run.
 */
#ifndef FS_MPI_H
#define FS_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef FS_HAVE_MPI
#include <mpi.h> /* MPI_Comm */
#endif

#include "train/train.h"

/* ---------------------------------------------------------------------- */
/* Protocol                                                                */

#define FS_PROTO_MAGIC 0x50575346u /* "FSWP" little-endian */
#define FS_PROTO_VERSION 12u /* 2: RESULT carries the weights; 3: REQUEST lists the items held; 4: EPOCH, PRUNE;
                                5: CKPT, PROGRESS, EPOCH with every curve; 6: FAIL; 7: an item's seed;
                                8: RESULT's class count (3 or 8) and its confusion of that size;
                                9: RESULT's GPU tier (FsFitResult.gpu_path);
                                10: BYE carries the worker's GPU times (gpu_times);
                                11: RESULT's library group width (FsFitResult.gpu_group);
                                12: RESUMED (a worker's fold resumed from its checkpoint, or it refused it) */
#define FS_PROTO_HEADER 16         /* magic, version, kind, payload length: 4 x u32 */
#define FS_PROTO_MAX_ITEMS 4096    /* trials in one TRIALS message */
#define FS_PROTO_MAX_EPOCHS FS_TRAIN_MAX_EPOCHS
#define FS_PROTO_MAX_WEIGHTS (1ull << 28) /* floats in one RESULT (1 GiB) */

/* Message kinds double as MPI tags: an enum, never bare numbers. */
typedef enum {
    FS_MSG_REQUEST = 7101, /* worker -> 0: capacity (free slots) and the items it still holds */
    FS_MSG_TRIALS,         /* 0 -> worker: (trial, fold, id) items to train */
    FS_MSG_RESULT,         /* worker -> 0: one (trial, fold) result */
    FS_MSG_ERROR,          /* worker -> 0: a message the worker could not use */
    FS_MSG_STOP,           /* 0 -> worker: no more work; cancel in-flight if set; exit code */
    FS_MSG_BYE,            /* worker -> 0: drained, about to exit; its GPU's kernel and host seconds */
    FS_MSG_EPOCH,          /* worker -> 0: an item's validation values for new epochs (pruning) */
    FS_MSG_PRUNE,          /* 0 -> worker: stop an item, its trial was pruned */
    FS_MSG_CKPT,           /* worker -> 0: an item's checkpoint, to keep; 0 -> worker: one to resume
                              from (sent before the TRIALS message with the item) */
    FS_MSG_PROGRESS,       /* worker -> 0: its running items' epochs and examples trained */
    FS_MSG_FAIL,           /* worker -> 0: it cannot go on (its GPU failed): the run stops with an error */
    FS_MSG_RESUMED         /* worker -> 0: an item's checkpoint was taken (epoch, example) or refused (why),
                              for rank 0 to say as it says its own */
} FsMsgKind;

const char *proto_kind_name(int kind);

typedef struct {
    int32_t trial; /* index into the sweep's trials */
    int32_t fold;  /* 0..k-1 or FS_FOLD_PREDEFINED */
    char id[FS_TRIAL_ID_LEN + 1]; /* the trial's id, checked by both sides */
    int32_t seed;  /* 0: the trial's own seeds; 1..FS_MAX_SEEDS-1: a seed replicate (sweep_seed_spec) */
} FsWorkItem;

/* A growable byte buffer for encoding. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} FsBuf;

void buf_free(FsBuf *b);

/* Encoders: each writes header + payload into b (reset first). */
/* held: the items this worker received and has not answered yet, so rank 0
 * can re-queue any it sent that were lost or refused. */
void proto_encode_request(FsBuf *b, int32_t capacity, const FsWorkItem *held, int n_held);
void proto_encode_trials(FsBuf *b, const FsWorkItem *items, int n);
void proto_encode_result(FsBuf *b, const FsWorkItem *item, const FsFitResult *r);
void proto_encode_error(FsBuf *b, const char *message);
/* FAIL carries a message as ERROR does. */
void proto_encode_fail(FsBuf *b, const char *message);
void proto_encode_stop(FsBuf *b, int32_t cancel, int32_t exit_code);
/* BYE: the worker's GPU time (gpu_times: the device at work, the host's
 * share; 0 and 0 for a CPU worker), for rank 0's profile. */
void proto_encode_bye(FsBuf *b, double gpu_kernel_seconds, double gpu_host_seconds);
/* Epochs first .. first + n - 1 of an item: the curves' entries (train
 * loss, validation loss and Q3, seconds) from index first - 1. */
void proto_encode_epoch(FsBuf *b, const FsWorkItem *item, int32_t first, int32_t n, const FsCurves *c);
void proto_encode_prune(FsBuf *b, const FsWorkItem *item);
/* A checkpoint's bytes (train/checkpoint.c's format; checked by its reader). */
void proto_encode_ckpt(FsBuf *b, const FsWorkItem *item, const uint8_t *bytes, uint64_t n);
/* Running items: epochs completed and examples trained so far, each. */
typedef struct {
    FsWorkItem item;
    int32_t epochs;
    uint64_t examples;
} FsProgressItem;
void proto_encode_progress(FsBuf *b, const FsProgressItem *items, int n);
/* What became of an item's checkpoint at its start: resumed at epoch
 * (1 or more) and example next, with note ""; or refused (epoch 0) with
 * the reason in note (at most 1000 bytes sent). */
void proto_encode_resumed(FsBuf *b, const FsWorkItem *item, int32_t epoch, uint32_t next, const char *note);

/* Decoders: 0, or -1 with `why` saying what was wrong. proto_check
 * validates the header against the tag the message came with. */
int proto_check(const uint8_t *p, size_t n, int tag, char *why, size_t why_n);
/* held: FS_PROTO_MAX_ITEMS entries. */
int proto_decode_request(const uint8_t *p, size_t n, int32_t *capacity, FsWorkItem *held, int *n_held, char *why,
                         size_t why_n);
/* items: FS_PROTO_MAX_ITEMS entries. */
int proto_decode_trials(const uint8_t *p, size_t n, FsWorkItem *items, int *n_items, char *why, size_t why_n);
/* r: curves allocated here (train_result_free releases them). */
int proto_decode_result(const uint8_t *p, size_t n, FsWorkItem *item, FsFitResult *r, char *why, size_t why_n);
int proto_decode_error(const uint8_t *p, size_t n, char *message, size_t message_n, char *why, size_t why_n);
int proto_decode_fail(const uint8_t *p, size_t n, char *message, size_t message_n, char *why, size_t why_n);
int proto_decode_stop(const uint8_t *p, size_t n, int32_t *cancel, int32_t *exit_code, char *why, size_t why_n);
/* Each time finite, 0 or more and under 10^9 s. */
int proto_decode_bye(const uint8_t *p, size_t n, double *gpu_kernel_seconds, double *gpu_host_seconds, char *why,
                     size_t why_n);
/* c: arrays of FS_PROTO_MAX_EPOCHS entries, filled from index 0; *first >= 1, *n >= 1. */
int proto_decode_epoch(const uint8_t *p, size_t n, FsWorkItem *item, int32_t *first, int32_t *count, FsCurves *c,
                       char *why, size_t why_n);
int proto_decode_prune(const uint8_t *p, size_t n, FsWorkItem *item, char *why, size_t why_n);
/* *bytes points into p (no copy). */
int proto_decode_ckpt(const uint8_t *p, size_t n, FsWorkItem *item, const uint8_t **bytes, uint64_t *n_bytes,
                      char *why, size_t why_n);
/* items: FS_PROTO_MAX_ITEMS entries. */
int proto_decode_progress(const uint8_t *p, size_t n, FsProgressItem *items, int *n_items, char *why, size_t why_n);
/* Exactly one of: *epoch 1..FS_PROTO_MAX_EPOCHS with an empty note, or
 * *epoch 0 with a note (truncated to note_n - 1 bytes). */
int proto_decode_resumed(const uint8_t *p, size_t n, FsWorkItem *item, int32_t *epoch, uint32_t *next, char *note,
                         size_t note_n, char *why, size_t why_n);

/* ---------------------------------------------------------------------- */
/* Transport                                                               */

/* The ranks a run uses. Only the thread that made it calls MPI through it
 * (MPI_THREAD_FUNNELED): pool threads hand results to that thread. A
 * failed MPI call ends the job (MPI_Abort on the context's communicator)
 * with a message naming the rank, its host, the call with its file:line and
 * MPI's reason. */
typedef struct {
    int active; /* over MPI (fsmpi_init under a launcher, or fsmpi_attach); else rank 0 of 1 */
    int rank, size;
    int local_rank, local_size; /* within this node */
    int node_cores;
    char host[64];
    unsigned char *rank_failed; /* rank 0, per rank: 1 if its setup failed (fsmpi_report_setup) */
    int total_threads;          /* rank 0: training threads of all ranks (fsmpi_report_setup) */
    int owns_mpi;               /* fsmpi_init initialised MPI: fsmpi_finalize finalises it */
#ifdef FS_HAVE_MPI
    MPI_Comm comm; /* a duplicate of the communicator given (the world for fsmpi_init): the
                      run's messages never meet the caller's, and it returns errors to MPI_CHECK */
#endif
} FsMpi;

/* 1 if this build has MPI. */
int fsmpi_built(void);

/* What an environment says about the ranks a launcher started (launcher.c,
 * which lists the variables and why SLURM_NTASKS is not one of them). */
typedef struct {
    const char *var; /* the variable that shows several ranks */
    long value;      /* its value: a count of ranks, or (is_rank) this process's rank */
    int is_rank;
    int rank; /* this process's rank as the launcher set it, or -1 */
} FsLauncher;
/* 1 when env ("NAME=VALUE" strings, NULL-terminated, as environ) shows
 * that a launcher started this process as one of several ranks; l says
 * which variable. 0 otherwise (l->rank is set either way). Reads nothing
 * but env, so a test can pass a made-up one. */
int fsmpi_launcher_several(char *const *env, FsLauncher *l);
/* Initialises MPI only when an MPI launcher started this process and makes
 * m a context over the world; otherwise (and in a build without MPI) m is
 * rank 0 of 1 with active = 0. For `foldsweep run`: a library caller that
 * runs MPI itself uses fsmpi_attach. A start-up watchdog (watchdog.c)
 * ends the process with exit 1 and a message naming the stage (MPI_Init_thread,
 * MPI_Comm_dup, ...) if this has not finished within startup_timeout
 * seconds (<= 0: no watchdog). */
void fsmpi_init(FsMpi *m, double startup_timeout);
/* m as rank 0 of 1 on this host, with its cores, never touching MPI: for
 * the commands that work in one process (refit, evaluate, predict). */
void fsmpi_alone(FsMpi *m);
#ifdef FS_HAVE_MPI
/* m over the ranks of comm (collective over comm): MPI must be initialised,
 * with MPI_THREAD_FUNNELED or more, and stays the caller's to finalise.
 * comm itself is not changed (m holds a duplicate). */
void fsmpi_attach(FsMpi *m, MPI_Comm comm);
#endif
/* Releases m (collective over its ranks): frees the duplicate, and
 * finalises MPI if fsmpi_init initialised it. */
void fsmpi_finalize(FsMpi *m);
void fsmpi_abort(FsMpi *m, int code);

/* Rank 0 sends, the others receive (allocated with malloc): a status word
 * (low byte: nonzero if rank 0 failed, and then nothing else is sent; the
 * bits above: rank 0's choices for the workers), the checkpoint interval
 * (run.checkpoint, seconds; 0: off), a text and a byte block.
 * The bytes go over MPI once per rank. */
int fsmpi_bcast_setup(FsMpi *m, int32_t *status, double *ckpt_every, char **text, uint8_t **bytes, uint64_t *n);

/* Collective, after the setup broadcast: every rank reports either its
 * binding (host, local rank, threads, device) or, with failure set, why it
 * cannot go on. Rank 0 prints the binding map to out and each failure to
 * stderr, marks failed ranks in m->rank_failed and gets their count (0 on
 * the other ranks); a rank that failed must not speak the protocol after. */
int fsmpi_report_setup(FsMpi *m, const char *failure, int threads, const char *device, void *out_file);

/* A received message: tag, source and its bytes (malloc'd, caller frees). */
typedef struct {
    int tag, source;
    uint8_t *p;
    size_t n;
} FsMsg;

/* Non-blocking: 1 and msg filled if a message from `source` (-1: any) is
 * waiting, else 0. */
int fsmpi_poll(FsMpi *m, int source, FsMsg *msg);
void fsmpi_send(FsMpi *m, int dest, int tag, const FsBuf *b);

#endif
