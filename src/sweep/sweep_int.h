/*
 * sweep_int.h: private to the sweep module. The YAML node tree (libyaml
 * events folded into nodes that keep their line and column), the option
 * table that drives parsing, validation, expansion and the canonical text,
 * and the parsed search space that sits between the file and the trials.
 */
#ifndef FS_SWEEP_INT_H
#define FS_SWEEP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sweep/sweep.h"

/* ---------------------------------------------------------------------- */
/* YAML tree (yaml_tree.c)                                                 */

typedef enum { YN_SCALAR, YN_SEQ, YN_MAP } YNodeKind;

typedef struct YNode {
    YNodeKind kind;
    int line, col;     /* 1-based, of the node's first character */
    char *value;       /* scalar text */
    int quoted;        /* scalar written in quotes (a string, never a number) */
    struct YNode **item; /* sequence items, or mapping values */
    struct YNode **key;  /* mapping keys (scalars) */
    int n;
} YNode;

/* Parses one YAML document. Returns the root (NULL for an empty document),
 * or NULL with *failed = 1 and "NAME:LINE:COL: ..." in err. */
YNode *ytree_parse(const char *text, size_t len, const char *name, int *failed, FsErr *err);
void ytree_free(YNode *n);
/* The mapping's value for key, or NULL. */
const YNode *ytree_get(const YNode *map, const char *key);
/* The mapping's key node itself (for its position), or NULL. */
const YNode *ytree_key(const YNode *map, const char *key);

/* ---------------------------------------------------------------------- */
/* Errors with positions, sorted by position before they reach FsErrList.  */

typedef struct {
    long line, col;
    char *msg;
} SwErr;

typedef struct {
    const char *name; /* file name in messages */
    SwErr *e;
    int n, cap;
} SwErrs;

void swerr_add(SwErrs *l, long line, long col, const char *fmt, ...) FS_PRINTF(4, 5);
/* Sorts by position and moves every message into out as "NAME:L:C: msg". */
void swerr_flush(SwErrs *l, FsErrList *out);

/* A growable string. */
typedef struct {
    char *s;
    size_t n, cap;
} SwBuf;
void sb_puts(SwBuf *b, const char *s);
void sb_printf(SwBuf *b, const char *fmt, ...) FS_PRINTF(2, 3);

/* ---------------------------------------------------------------------- */
/* Options                                                                 */

typedef enum { OT_INT, OT_FLOAT, OT_BOOL, OT_ENUM, OT_U64 } SwType;
typedef enum { SEC_MODEL, SEC_TRAINING, SEC_STOP } SwSection;

/* Every option that may be a list (a grid dimension), in grid order: the
 * first varies slowest. Structured-architecture options come first. */
enum {
    O_DEPTH, O_FILTERS, O_KERNEL, O_ACTIVATION, O_BATCHNORM, O_HIGHWAY, O_DROPOUT, O_DENSE, O_DILATION, O_RESIDUAL,
    O_GRU, O_LSTM, O_ATTENTION, O_RNN_LAYERS,
    O_INIT, O_LEAKY_SLOPE, O_ELU_ALPHA, O_BN_EPSILON, O_BN_MOMENTUM, O_GATE_BIAS, O_BIDIR,
    O_HEADS, O_KEY_DIM, O_MAX_DIST, O_ATT_DROPOUT,
    O_EPOCHS, O_OPTIMIZER, O_LR, O_MOMENTUM, O_BETA1, O_BETA2, O_EPSILON, O_WEIGHT_DECAY,
    O_CLIP_NORM, O_BATCH, O_EVAL_BATCH, O_SEED, O_MONITOR,
    O_LR_SCHEDULE, O_LR_STEP_EVERY, O_LR_STEP_FACTOR, O_WARMUP, O_CLASS_WEIGHTS, O_BATCH_RESIDUES,
    O_CRITERION, O_ALPHA, O_STRIP, O_S, O_PATIENCE, O_MIN_DELTA,
    O_COUNT
};
#define O_STRUCT_LAST O_RNN_LAYERS /* options 0..O_RNN_LAYERS only exist without `layers` */

typedef struct {
    const char *key;
    SwSection sec;
    SwType type;
    double lo, hi;       /* inclusive bounds unless the *_open flag is set */
    int lo_open, hi_open;
    int odd;             /* integers: must be odd */
    const char *const *names; /* OT_ENUM */
    int n_names;
    const char *expect;  /* what a value must be, for messages */
} SwOptDesc;

extern const SwOptDesc sw_opts[O_COUNT];
struct SwOpt;
/* An option's default (the trainer's, train_spec_defaults, for training). */
double sw_opt_default(int o);
/* Options added after sweeps were in use: at their default they are left
 * out of the canonical sweep and of trial configs, so that the run folders
 * and trial ids of sweeps that do not name them stay what they were. */
int sw_opt_hidden_default(int o, const struct SwOpt *opt);
/* A section's dotted key: "model", "training", "training.early_stopping". */
const char *sw_section_key(SwSection sec);

typedef struct {
    double d;   /* the value (enum index, 0/1 for bools) */
    uint64_t u; /* OT_U64: exact */
    float w[FS_MAX_CLASSES]; /* training.class_weights given as a mapping (d = FS_CW_EXPLICIT): the weights */
    int line, col;
} SwVal;

/* training.class_weights written as {H: w, E: w, C: w} (class_weights.c),
 * or with data.classes 8 (classes) {H: w, G: w, I: w, E: w, B: w, T: w, S:
 * w, C: w}: every class of the run once, each weight > 0 and at most
 * FS_CW_MAX. 0 with *out set, or -1 with the error added naming `where`. */
int sw_class_weights_read(const YNode *map, const char *where, int classes, SwVal *out, SwErrs *e);
/* Such a value as the canonical sweep writes it ("{H: 1, E: 2, C: 0.5}"),
 * and as a trial config's JSON object ({"C":0.5,"E":2,"H":1}, keys sorted). */
void sw_class_weights_text(const SwVal *v, char *out, size_t n);
void sw_class_weights_json(const float w[FS_MAX_CLASSES], char *out, size_t n);

typedef struct SwOpt {
    SwVal *v;
    int n;
    int given; /* written in the file (else one default value) */
    int line, col;
    int range; /* 1 + its index in SwSpace.ranges when a range, not values (then n is 1, v[0] its low) */
} SwOpt;

/* A range instead of a list of values (ranges.c; docs/sweep-format.md,
 * "Ranges"): search.random and tpe sample it, a grid refuses it. The model
 * options, training options and a layer list's parameters take one. */
#define SW_MAX_RANGES 24 /* with the grid's O_COUNT + 1 dimensions, within FS_SWEEP_MAX_DIMS */
typedef struct {
    int opt;              /* the option whose type and bounds apply */
    int alt, layer;       /* a layer parameter: its list and layer (from 0); alt < 0: a model or training option */
    double low, high;     /* as the trainer holds them (floats rounded to float32, as the canonical text writes them) */
    double step;          /* integers: values low, low + step, ... <= high; floats: 0 (continuous) or the same */
    int log;              /* sampled uniformly in log space */
    int line, col;        /* of the range's mapping */
    char key[48];         /* its dotted key: "training.learning_rate", "model.layers[1][2].filters" */
} SwRange;

/* A layer of an explicit layer list; `set` marks per-layer overrides of
 * the model-wide parameters (activation parameter, BN eps/momentum, gate). */
enum { LS_LEAKY = 1, LS_ELU = 2, LS_EPS = 4, LS_MOM = 8, LS_GATE = 16, LS_BIDIR = 32, LS_MAXDIST = 64, LS_ATTDROP = 128 };
typedef struct {
    FsLayerSpec spec;
    float leaky, elu;
    unsigned set;
    /* A recurrent layer's `layers`: this many of it, one after another (0:
     * one); repeat_max, the most any trial has (a range's high). */
    int repeat, repeat_max;
} SwLayer;

typedef struct {
    SwLayer l[FS_MAX_LAYERS];
    int n;
    int line, col;
} SwLayerList;

typedef struct SwSpace {
    SwOpt opt[O_COUNT];
    SwLayerList *alts; /* explicit layer lists; n_alts == 0: structured options */
    int n_alts;
    int layers_line, layers_col;
    SwRange ranges[SW_MAX_RANGES]; /* in parse order: model options, layer lists, training */
    int n_ranges;
    int classes; /* data.classes (3 or 8): the letters of explicit class weights */
} SwSpace;

/* ranges.c. Whether v is written as a range ({low: .., high: ..}). */
int sw_is_range(const YNode *v);
/* Reads v, a range of option o named `where`. With grid_points: N its
 * values go to *vals (malloc'd; NULL where the caller takes no values:
 * a layer's parameter), returning N; else the range is appended to
 * sp->ranges with alt and layer (-1, -1 for a model or training option),
 * returning 0. -1 with the error added. */
int sw_parse_range(SwSpace *sp, int o, const YNode *v, const char *where, int alt, int layer, SwVal **vals,
                   SwErrs *e);
/* The range's value at u in [0, 1): uniform over [low, high] (in log space
 * with log), integers the nearest of low + k step, floats as float32. */
double sw_range_at(const SwRange *r, double u);
/* Its value x as text, the shortest that reads back ("0.00042", "48"). */
void sw_range_value_text(const SwRange *r, double x, char *out, size_t n);
/* The range as the canonical sweep writes it: "{low: 0.0001, high: 0.01, log: true}". */
void sw_range_canon(SwBuf *b, const SwRange *r);
/* A layer's parameter set to x, as a layer list's value of it (model_space.c). */
void sw_layer_set(SwLayer *ly, int opt, double x);

/* parse_*.c */
void sw_space_defaults(SwSpace *sp);
void sw_space_free(SwSpace *sp);
/* data: sw->path must be set (relative paths resolve against its folder). */
void sw_parse_data(FsSweep *sw, const YNode *data, SwErrs *e);
/* test (testset.c): key is the `test` key (its position is kept for errors
 * found after loading), test its value. sw->path must be set. */
void sw_parse_test(FsSweep *sw, const YNode *key, const YNode *test, SwErrs *e);
/* Shared by data and test. A path relative to the sweep file's folder made
 * absolute and normalised (malloc'd). */
char *sw_resolve_path(const char *sweep_name, const char *rel);
/* A non-empty string scalar, or NULL with an error naming `where`. */
const char *sw_file_name(const YNode *v, const char *where, SwErrs *e);
/* map[key] resolved as a path (malloc'd), or NULL when absent or bad (an
 * error then). Noted in sw->files with its position (sw->path must be set). */
char *sw_path_of(FsSweep *sw, const YNode *map, const char *key, const char *where, SwErrs *e);
/* A file name or a list of them, resolved, appended to *out / *n_out; each
 * noted in sw->files as where (a list's items as where[i]). */
void sw_parse_files(FsSweep *sw, const YNode *v, const char *where, char ***out, int *n_out, SwErrs *e);
/* A data_load (or prepared file) error err, found while reading the files
 * of a section, into errs: at the position of the file it names (the
 * longest of sw->files whose path begins it), else at (line, col) as
 * `section: ...`. A file that does not exist gets a hint when its name was
 * relative (it is read from the sweep file's folder). */
void sw_file_error(const FsSweep *sw, const FsErr *err, const char *section, int line, int col, FsErrList *errs);
/* A `format` value given the section's source (has_in: inputs; has_fasta: a
 * FASTA set; no_effect: NULL, or the source format is meaningless with).
 * The FsFormat, or -1 with an error. */
int sw_parse_format(const YNode *v, const char *where, int has_in, int has_fasta, const char *no_effect, SwErrs *e);
/* window and its position (wline, wcol) for checks of default values. */
void sw_parse_model(SwSpace *sp, const YNode *model, int window, int wline, int wcol, SwErrs *e);
void sw_parse_training(SwSpace *sp, const YNode *training, SwErrs *e);
/* The batching options of the other model kind (window or chain): option
 * o is one (moot: not in the canonical sweep); refused where given (sweep.c). */
int sw_batching_moot(const FsSweep *sw, int o);
void sw_check_batching(const FsSweep *sw, const SwSpace *sp, SwErrs *e);
void sw_parse_run(FsSweep *sw, const YNode *run, SwErrs *e);
void sw_parse_search(FsSweep *sw, const YNode *search, SwErrs *e);
/* One scalar, a list of scalars or a range (sp->ranges) into option o; messages name `where`. */
void sw_parse_opt(SwSpace *sp, int o, const YNode *v, const char *where, SwErrs *e);
/* Exactly one value of option o's type; 0, or -1 with an error added. */
int sw_read_one(int o, const YNode *v, const char *where, SwVal *out, SwErrs *e);
/* A mapping's keys against the allowed ones; unknown keys get a suggestion. */
/* data.features and data.feature_store (features.c): parsed into sw, freed,
 * written into the canonical sweep and into a trial config's data part. */
void sw_parse_features(FsSweep *sw, const YNode *d, SwErrs *e);
void sw_features_free(FsSweep *sw);
void sw_features_canon(SwBuf *b, const FsSweep *sw);
void sw_features_config(SwBuf *b, const FsSweep *sw);
/* s as a double-quoted YAML string (canon.c). */
void sw_put_str(SwBuf *b, const char *s);
void sw_check_keys(const YNode *map, const char *where, const char *const *keys, int n, SwErrs *e);
/* The keys of the sections that are not options (sections.c,
 * sections_run.c), also for sw_check_keys' "it belongs in" hint. */
#define SW_N_DATA_KEYS 16
#define SW_N_RUN_KEYS 10
#define SW_N_SEARCH_KEYS 7
extern const char *const sw_data_keys[SW_N_DATA_KEYS];
extern const char *const sw_run_keys[SW_N_RUN_KEYS];
extern const char *const sw_search_keys[SW_N_SEARCH_KEYS];
/* One value of option o (a range's low, high, step) from v: 0, or -1 (no error added). */
int sw_read_value(int o, const YNode *v, SwVal *out);
/* The error for v, a bad value of option o named where. */
void sw_value_error(int o, const YNode *v, const char *where, SwErrs *e);
/* Scalar readers: 0, or -1 when the scalar is not of that type. */
int sw_scalar_int(const YNode *v, long long *out);
int sw_scalar_u64(const YNode *v, uint64_t *out);
int sw_scalar_float(const YNode *v, double *out);

/* point.c: one point of the space (a value index in each grid dimension,
 * 0 the layer-list alternative and 1 + o option o; a value in each range). */
#define SW_GRID_DIMS (O_COUNT + 1)
typedef struct {
    int at[SW_GRID_DIMS];
    double r[SW_MAX_RANGES];
} SwPoint;
/* Values of grid dimension d (1 for a range). */
int sw_grid_dim_size(const SwSpace *sp, int d);
/* The swept dimensions in FsSweep.dims order, each a grid dimension (d >= 0)
 * or range k (-1 - k) into src; returns how many. */
int sw_swept(const SwSpace *sp, int *src);
/* sw->dims from the space. */
void sw_list_dims(FsSweep *sw, const SwSpace *sp);
/* The trial at pt: its architecture, training options, config, at and x (malloc'd). */
void sw_point_trial(const FsSweep *sw, const SwSpace *sp, const SwPoint *pt, FsTrial *t);

/* constraints.c: run.constraints (v is its value, key its key). */
void sw_parse_constraints(FsSweep *sw, const YNode *key, const YNode *v, SwErrs *e);
/* Whether a trial of `params` parameters is within them. */
int sw_constraints_allow(const FsConstraints *c, long params);
/* After expansion: 0, or -1 with an error when they excluded every trial. */
int sw_constraints_check(const FsSweep *sw, SwErrs *e);

/* The constraints as the canonical sweep writes them (nothing when none). */
void sw_constraints_canon(SwBuf *b, const FsConstraints *c);

/* expand.c: the grid (or the random sample) into sw->trials. */
int sw_expand(FsSweep *sw, const SwSpace *sp, SwErrs *e);
/* The trials drawn again from sw->space (sweep_bind_data: run.constraints
 * count the first layer's feature weights once the column count is known);
 * the same draws, as expansion is deterministic. 0, or -1 with e. */
int sw_expand_again(FsSweep *sw, SwErrs *e);
/* What expansion made: the trials, the excluded ones, the note. */
void sw_trials_free(FsSweep *sw);
/* The trial config JSON of one arch + spec (malloc'd). */
char *sw_trial_config(const FsSweep *sw, const FsArch *a, const FsTrainSpec *ts);

/* canon.c */
char *sw_canonical(const FsSweep *sw, const SwSpace *sp);
/* Option o's value v as the canonical text writes it ("0.001", "adam", "true"). */
void sw_value_text(int o, const SwVal *v, char *out, size_t n);


#endif
