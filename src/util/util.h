/*
 * util: the small things every module needs.
 * Check macros that report file:line (llm.c habit), the program's exit
 * codes, a recoverable error record (FsErr) for bad input and a list of
 * them (FsErrList), a deterministic random stream per model, checksums for
 * fingerprints, and a wall clock. The residue alphabet and the classes
 * (alphabet.h) and the sizes of trial ids and path buffers are here too,
 * as every module reads them.
 */
#ifndef FS_UTIL_H
#define FS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/alphabet.h"

/* ---------------------------------------------------------------------- */
/* Exit codes of the program (README): what cli_main and run_sweep return, */
/* what a rank passes to the others in STOP, what the CPU check exits with. */
/* Here, not in cli, because the run and mpi modules below cli use them.   */

enum { FS_EXIT_OK = 0, FS_EXIT_ERROR = 1, FS_EXIT_USAGE = 2, FS_EXIT_INTERRUPTED = 3 };

/* ---------------------------------------------------------------------- */
/* Sizes of names the program builds.                                      */

/* A trial's id: the 64-bit hash of its canonical config as 16 lower-case
 * hex digits (sweep_assign_ids); held in char[FS_TRIAL_ID_LEN + 1]. */
#define FS_TRIAL_ID_LEN 16
/* The most seeds a trial may train with (search.replicates.seeds): the
 * sweep's limit, and the range of a fold record's and a work item's seed
 * index (0 .. FS_MAX_SEEDS - 1; 0 is the trial's own training seed). */
#define FS_MAX_SEEDS 100

/* Path buffers. A path as given (a folder, a file) fits FS_PATH_MAX bytes
 * with its NUL, Linux's PATH_MAX; a path the program builds in such a
 * folder (its journal, report, a model file models/<trial>/fold<k>...)
 * fits FS_PATH_IN_DIR; one of those with a suffix of its own (a temporary
 * file's ".tmp", a damaged file set aside) fits FS_PATH_SUFFIXED. Each is
 * larger than the one it is built from, so that the suffix fits; whoever
 * builds a path still checks snprintf's length and names the path that is
 * too long. */
#define FS_PATH_MAX 4096
#define FS_PATH_IN_DIR 4400
#define FS_PATH_SUFFIXED 4700

/* A small function that the GPU trainer calls too (the random stream here,
 * the stopping rule in stop.h): under nvcc it is built for both sides. The
 * trainer's own single-source macros are in train/device.h. */
#if defined(__CUDACC__)
#define FS_HOST_DEVICE __host__ __device__
#else
#define FS_HOST_DEVICE
#endif

/* ---------------------------------------------------------------------- */
/* Internal errors: a bug or an exhausted machine, never bad user input.   */

#if defined(__GNUC__)
#define FS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define FS_NORETURN __attribute__((noreturn))
#else
#define FS_PRINTF(a, b)
#define FS_NORETURN
#endif

FS_NORETURN void fs_die_at(const char *file, int line, const char *fmt, ...) FS_PRINTF(3, 4);
#define FS_DIE(...) fs_die_at(__FILE__, __LINE__, __VA_ARGS__)
/* An invariant that must hold; reports the expression with file:line. */
#define FS_ASSERT(cond)                                                  \
    do {                                                                 \
        if (!(cond)) fs_die_at(__FILE__, __LINE__, "assertion failed: %s", #cond); \
    } while (0)

void *fs_malloc_at(size_t n, const char *file, int line);
void *fs_calloc_at(size_t count, size_t size, const char *file, int line);
void *fs_realloc_at(void *p, size_t n, const char *file, int line);
char *fs_strdup_at(const char *s, const char *file, int line);
#define fs_malloc(n) fs_malloc_at((n), __FILE__, __LINE__)
#define fs_calloc(c, s) fs_calloc_at((c), (s), __FILE__, __LINE__)
#define fs_realloc(p, n) fs_realloc_at((p), (n), __FILE__, __LINE__)
#define fs_strdup(s) fs_strdup_at((s), __FILE__, __LINE__)
/* 64-byte aligned, for the parameter buffer and activations (AVX-512 rows). */
void *fs_aligned_alloc_at(size_t n, const char *file, int line);
#define fs_aligned_alloc(n) fs_aligned_alloc_at((n), __FILE__, __LINE__)
/* The same, NULL when memory is short: for a buffer whose lack the caller
 * reports as a fault of its own (a fold's model on a rank with too little
 * memory ends the run with a message, not an abort). */
void *fs_aligned_try_alloc(size_t n);

/* ---------------------------------------------------------------------- */
/* Recoverable errors: bad input. The message names where and what was     */
/* expected; the caller decides whether to go on.                          */

typedef struct {
    int set;
    char msg[1024];
} FsErr;

/* Sets the message unless one is already set (the first error is the cause). */
void fs_err_set(FsErr *err, const char *fmt, ...) FS_PRINTF(2, 3);
/* Sets "FILE:LINE: message" (line 0 omits the line, col > 0 adds ":COL"). */
void fs_err_at(FsErr *err, const char *file, long line, long col, const char *fmt, ...)
    FS_PRINTF(5, 6);

/* Several errors at once (a sweep file's, a run folder's): each one
 * "FILE:LINE:COL: message", in the order added. */
typedef struct {
    char **msg;
    int n;
} FsErrList;

void errlist_add(FsErrList *l, const char *fmt, ...) FS_PRINTF(2, 3);
void errlist_free(FsErrList *l);
/* Each message as "foldsweep: MESSAGE" on stderr, then errlist_free. */
void errlist_print(FsErrList *l);
/* All messages, one per line, into out (truncated to n bytes). */
void errlist_join(const FsErrList *l, char *out, size_t n);

/* vprintf into a string of its own (malloc'd, the caller frees). */
char *fs_vformat(const char *fmt, va_list ap);

/* 0..15 for a hex digit (either case), else -1. */
int fs_hex_digit(char c);
/* 1 if s is valid UTF-8 (no overlong forms, surrogates or values past
 * U+10FFFF): what YAML and JSON text must be. */
int fs_utf8_valid(const char *s);
/* The candidate nearest to s in edit distance when it is close enough to be
 * a typo of it (at most a third of s changed, at most 3 edits), else NULL:
 * the "did you mean" of the sweep loader and the command line (nearest.c). */
const char *fs_nearest(const char *s, const char *const *cand, int n);

/* ---------------------------------------------------------------------- */
/* Durable files. Every whole file foldsweep writes (run folder files,     */
/* model files, prepared data, exports) goes through here.                 */

/* Writes n bytes to path so that a crash leaves the old file or the new
 * one, never a mix: PATH.tmp.<pid>, fsync, rename, fsync of the folder.
 * On any error the temporary file is removed and err names the path. */
int fs_write_file_atomic(const char *path, const void *bytes, size_t n, FsErr *err);
/* fsync of a folder, so the renames and creations in it survive a crash. */
void fs_sync_dir(const char *dir);
/* mkdir -p: creates dir and any missing parents, syncing the parent of
 * each folder it creates (a run folder must survive a crash like the files
 * in it). 0, or -1 with err naming the part that could not be created; dir
 * existing as something other than a folder is an error. The one mkdir -p
 * of the program. */
int fs_mkdir_p(const char *dir, FsErr *err);

/* s as one shell word, for commands the user is told to run: as it is
 * when it needs no quoting, else in single quotes ('\'' for a quote). */
void fs_put_shell_word(FILE *out, const char *s);
/* The program as hints name it in commands to run (`build/foldsweep
 * repair DIR`): as the user invoked it when that was a path (argv[0] with
 * a slash, as one shell word), else "foldsweep" (found on PATH). Set once
 * from main's argv[0]; every printed command starts with fs_program(). */
void fs_program_set(const char *argv0);
const char *fs_program(void);

/* ---------------------------------------------------------------------- */
/* Numbers as written.                                                     */

/* The shortest "%.Ng" text (N = 1..9) that strtof reads back as exactly v:
 * 0.3f is "0.3", not "0.300000012" (what %.9g of the float through double
 * gives). Float settings are printed with it wherever people or hashes
 * read them (canonical sweep, trial configs and their ids, summaries), so
 * equal floats give equal text and the text is what the user wrote.
 * NaN and infinities give "nan", "inf", "-inf". FS_FLOAT_TEXT bytes hold
 * any float; returns buf. */
#define FS_FLOAT_TEXT 24
char *fs_format_float(char *buf, size_t n, float v);
/* The same into a buffer of its own (a compound literal that lives to the
 * end of the enclosing block), for use as a printf argument: several in
 * one call each get their own. */
#define fs_float_text(v) fs_format_float((char[FS_FLOAT_TEXT]){0}, FS_FLOAT_TEXT, (v))
/* The same rule for a double: the shortest "%.Ng" (N = 1..17) that strtod
 * reads back as exactly v (0.1 is "0.1", 1/3 is "0.3333333333333333"). */
#define FS_DOUBLE_TEXT 32
char *fs_format_double(char *buf, size_t n, double v);

/* A fraction that people read as a share (Q3, SOV'99) in its one human
 * form: percent with one decimal and no sign, 0.71234 -> "71.2"; "-" when
 * not finite. Tables, messages and the HTML report print Q3 with it (their
 * header or text says "%"); machine files (CSV, JSON, the journal, model
 * metadata) keep the fraction at full precision (README, "Running your own
 * sweeps"). FS_PERCENT_TEXT bytes hold any value; returns buf. */
#define FS_PERCENT_TEXT 32
char *fs_format_percent(char *buf, size_t n, double fraction);
/* The same into a buffer of its own, for use as a printf argument. */
#define fs_percent_text(v) fs_format_percent((char[FS_PERCENT_TEXT]){0}, FS_PERCENT_TEXT, (v))

/* ---------------------------------------------------------------------- */
/* Deterministic random numbers. Every (trial, fold) model gets its own    */
/* stream derived from the sweep seed, so results do not depend on which   */
/* thread or rank trains it.                                               */

typedef struct {
    uint64_t s[4];
} FsRng;

uint64_t fs_splitmix64(uint64_t *state);
/* Seeds from a list of words (sweep seed, trial hash, fold, purpose...). */
void fs_rng_seed(FsRng *r, const uint64_t *words, int n);

/* xoshiro256**. Inline and device-callable: the trainer shuffles with it
 * on the GPU as well. */
FS_HOST_DEVICE static inline uint64_t fs_rng_u64(FsRng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, n) without modulo bias (Lemire's multiply-shift). */
FS_HOST_DEVICE static inline uint32_t fs_rng_below(FsRng *r, uint32_t n)
{
    if (n <= 1) return 0;
    uint64_t m = (uint64_t)(uint32_t)(fs_rng_u64(r) >> 32) * n;
    uint32_t lo = (uint32_t)m;
    if (lo < n) {
        uint32_t t = (uint32_t)(0u - n) % n;
        while (lo < t) {
            m = (uint64_t)(uint32_t)(fs_rng_u64(r) >> 32) * n;
            lo = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
/* Uniform float in [0, 1). */
float fs_rng_uniform(FsRng *r);

/* ---------------------------------------------------------------------- */
/* Checksums and hashes.                                                   */

uint64_t fs_fnv1a64(const void *data, size_t n, uint64_t h);
#define FS_FNV_OFFSET 0xcbf29ce484222325ULL
uint32_t fs_crc32(const void *data, size_t n, uint32_t crc);

/* Monotonic wall clock in seconds. */
double fs_now(void);

/* ---------------------------------------------------------------------- */
/* Test hooks (faults.c, built for the baseline as cpu.c is): the one      */
/* reader of the FOLDSWEEP_TEST_* variables and the one list of them.      */

/* The value of FOLDSWEEP_TEST_<name>, or NULL when it is not set; a name
 * that faults.c does not list is an internal error. */
const char *fs_test_fault(const char *name);
/* Every hook, "FOLDSWEEP_TEST_NAME=what it does" a line (for the tests). */
void fs_test_faults_list(FILE *out);

/* ---------------------------------------------------------------------- */
/* The CPU the binary runs on (cpu.c, compiled for the architecture's      */
/* baseline, not -march=native).                                           */

/* The instruction-set extensions the build's flags enabled, as
 * __builtin_cpu_supports names, each after a space (cpu_built.c). */
extern const char fs_cpu_built[];
/* The names in the space-separated list `built` for which has() is 0,
 * space-separated into out; returns how many. */
int fs_cpu_missing(const char *built, int (*has)(const char *feature), char *out, size_t n);
/* 1 if this CPU has the extension (names this build cannot test count as
 * present); the test hook CPU_MISSING="a b" pretends a and b are absent. */
int fs_cpu_has(const char *feature);
/* Before main (main.c): if this CPU lacks an extension the build used,
 * one line on stderr naming them and how to build for it, then exit 1
 * instead of a SIGILL later. */
void fs_cpu_gate(void);

/* IEEE binary16 <-> float (half.h: util_half_from_float,
 * util_float_from_half), FS_HOST_DEVICE like the random stream: the
 * per-residue feature matrix may be stored as halves. */
#include "util/half.h"

#endif
