/*
 * gpu: the CUDA backend behind a C API (the implementation is
 * kernels/gpu_cuda.cu; a build without CUDA gets gpu_none.c, which reports
 * no device). One launch trains many (trial, fold) models, one thread block
 * each, through all their epochs, with the data set resident on the device
 * (uploaded once per process). The per-model code is the CPU trainer's
 * single source.
 */
#ifndef FS_GPU_H
#define FS_GPU_H

#include <stddef.h>

#include "train/train.h"

typedef struct FsGpu FsGpu;

/* What a device offers one launch of the fit kernel: read from a device
 * (gpu_limits), or a named profile (gpu_profile: the CUDA stand-in's
 * devices, and `foldsweep plan --gpu NAME` where no device is visible). */
typedef struct {
    char name[64];
    size_t memory;       /* bytes of device memory */
    size_t shared_optin; /* dynamic shared memory one block may opt in to */
    size_t shared_per_sm; /* shared memory of one SM, all its blocks together */
    int sms, regs_per_sm, threads_per_sm;
    int major, minor;    /* compute capability */
    /* The vendor's peak rates, for `plan --gpu`'s estimates (gpu_estimate):
     * a profile's; 0 where read from a device (gpu_estimate then takes the
     * profile of the same compute capability). */
    double fp32_tflops;  /* FP32, non-tensor */
    double mem_tbps;     /* memory bandwidth, TB/s */
} FsGpuLimits;

/* The profiles: "h200" (the default) and "a100"; 0, or -1 for another name. */
int gpu_profile(const char *name, FsGpuLimits *out);
/* Their names, for messages: "h200, a100". */
const char *gpu_profile_names(void);
/* A visible device's limits; -1 without one. */
int gpu_limits(int device, FsGpuLimits *out);

/* Which GPU tier trains a model (#44): the one-block kernel (a model per
 * thread block, the whole fit in one launch: window models), the library
 * tier (groups of same-shape models, each layer's convolutions through
 * cuBLAS or cuDNN, kernels/dnn.h: chain models), or neither. */
typedef enum {
    FS_GPU_REFUSED = -1,
    FS_GPU_BLOCK = FS_GPU_PATH_BLOCK,     /* the values of run.gpu_path's words (train.h) */
    FS_GPU_LIBRARY = FS_GPU_PATH_LIBRARY,
} FsGpuTier;

/* Which tier takes this model (arch trained with ts on a fold of n_train
 * examples), or FS_GPU_REFUSED with why, naming what the model needs
 * against what the device has (its block's shared memory, its memory).
 * ts->gpu_path (run.gpu_path) overrides the rule: auto, the rule (chain
 * models: library; window models: block when they fit its shared
 * memory, else library); block, the block or refused (a chain model
 * always); library, the library tier for either (auto keeps the window
 * models that fit a block there until a device has measured where the
 * library tier is the faster). The launcher refuses with it before anything is
 * allocated, the run before training, the GPU driver names the tier in a
 * fold's record with it, and `foldsweep plan` prints it per trial: one
 * rule. */
FsGpuTier gpu_model_check(const FsGpuLimits *lim, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                          char *why, size_t n);
/* The library tier's device memory beyond its models' buffers: the cuBLAS
 * back end's scratch for one convolution of a group of G models over
 * `rows` rows (im2col of the input or of the output's gradient, the
 * product, the flipped filters), in floats, and the fixed workspace its
 * handle is given, in bytes (kernels/dnn_cublas.cu sizes both from here). */
size_t gpu_lib_conv_scratch_floats(long G, long rows, int C, int F, int K);
#define FS_GPU_LIB_CUBLAS_WS ((size_t)4 << 20)
/* The arrays a launch of n models keeps beside their buffers (nets,
 * models, folds, specs, results; kernels/gpu_launch.cu's layout). For one
 * model at least its share of any launch's (align256(n x) <= n
 * align256(x)), so capacity counts it per model: a flat allowance of 4096
 * bytes fell short of the ~5,400 these take, and a launch sized to a small
 * device's last byte failed. */
size_t gpu_launch_arrays_bytes(int n);
/* What a library group `width` models wide of this net takes on the
 * device: its buffers (each for a fold of n_train examples), the launch's
 * arrays, the libraries' scratch and the models' state, as lib_train.cu
 * allocates them (the driver's fill, the run's width rule, lib_fit_width). */
size_t gpu_lib_group_bytes(const FsNet *net, uint32_t n_train, int width);
/* The data set's bytes resident on a device (gpu_open's arrays) and its
 * example lists for `folds` folds (the width rule's reserve). */
size_t gpu_resident_bytes(const FsDataset *ds, int folds);
/* What a group of G models of this net needs on the device beyond their
 * buffers (the largest layer's scratch, the workspace, each model's state):
 * the tier's memory rule (gpu_model_check) counts it. */
size_t gpu_lib_group_extra_bytes(const FsNet *net, int G);

/* Whether two compiled nets can share the library tier's calls (a group's
 * signature): the same layers with the same shapes at the same offsets in
 * equally laid out buffers, and (a window model) the same batch size, which
 * the training calls span. Activations, dropout rates and the rest of a
 * layer's options may differ: they run in each model's own kernel. */
int gpu_lib_same_shape(const FsNet *a, const FsNet *b);
/* FS_GPU_LIB_GROUP_MAX (train.h), or FOLDSWEEP_GPU_GROUP (1 to that), which a test
 * lowers to make groups refill (every rank reads the same environment). */
int gpu_lib_group_cap(void);

/* The library tier's back-end table (table.c): bench_dnn's measurements
 * on a device (scripts/gpu-check writes dnn-backends.tsv), read by a run
 * from FOLDSWEEP_GPU_TABLE. Its first line names the device
 * ("# device<TAB>NVIDIA H200"), then a header and one row per product,
 * shape, back end and math mode. */
#define FS_GPU_TABLE_DEVICE "# device"
#define FS_GPU_TABLE_HEADER "op\tG\trows\tC\tF\tK\tdil\tbackend\tmode\tms\tgflops"
#define FS_GPU_TABLE_HEADER_WORDS "op G rows C F K dil backend mode ms gflops (tab-separated)"
#define FS_GPU_TABLE_OPS 3         /* fwd, wgrad, dgrad */
#define FS_GPU_TABLE_LINE 512      /* bytes a line holds at most */
#define FS_GPU_TABLE_MAX_ROWS 100000
typedef struct {
    int op;              /* 0 fwd, 1 wgrad, 2 dgrad (gpu_table_op_name) */
    int G, rows, C, F, K, dil;
    int backend;         /* FsDnnBackend: 0 cuBLAS, 1 cuDNN (gpu_table_backend_name) */
    int tf32;            /* the math mode: 0 FP32, 1 TF32 */
    double ms;           /* one call */
} FsGpuTableRow;
/* A measured shape: both back ends' FP32 times of its three products,
 * summed (-1 where one is missing). */
typedef struct {
    int G, rows, C, F, K, dil;
    double ms[2];
} FsGpuTableShape;
typedef struct {
    char device[128];
    FsGpuTableRow *rows;
    int n;
    FsGpuTableShape *shapes; /* indexed once read (gpu_table_choose's candidates) */
    int n_shapes;
} FsGpuTable;
/* The words of the table's columns: "fwd", "cuDNN", "TF32". */
const char *gpu_table_op_name(int op);
const char *gpu_table_backend_name(int be);
const char *gpu_table_mode_name(int tf32);
/* Reads and checks a table: 0, or -1 with err naming file:line and what
 * was expected there. */
int gpu_table_read(const char *path, FsGpuTable *t, FsErr *err);
void gpu_table_free(FsGpuTable *t);
/* The back end (0 cuBLAS, 1 cuDNN) the table gives a layer of a group of
 * G models over `rows` rows each (a window batch: examples x positions):
 * the measured shape nearest to it (the sum of the logs' differences of
 * C, F, K, dil and G x rows; ties: the first in the file) among those with
 * both back ends' three products in FP32, and there the back end whose
 * three products take less time (cuBLAS where equal); cuBLAS without a
 * table or a candidate. A fixed rule: the same table, the same choice. */
int gpu_table_choose(const FsGpuTable *t, long G, long rows, int C, int F, int K, int dil);
/* The table FOLDSWEEP_GPU_TABLE names, for the device of lim: 1 read, 0
 * none asked for, -1 with err (the file's error, or a table measured on
 * another device: its name against lim's). */
#define FS_GPU_TABLE_ENV "FOLDSWEEP_GPU_TABLE"
int gpu_table_env(const FsGpuLimits *lim, FsGpuTable *t, FsErr *err);
/* cuDNN opened for use on this machine (the build has it and the library
 * loads): 0, or -1 with why. */
int gpu_cudnn_load(FsErr *err);

/* "block", "library" (the journal's and the leaderboard's words:
 * train_gpu_path_name's), "refused". */
const char *gpu_tier_name(FsGpuTier t);

/* `plan --gpu`'s estimate of one fold of a model on a tier (estimate.c):
 * a roofline from the fold's FLOP and bytes and the device's rates, with
 * efficiencies that are assumptions until scripts/gpu-check calibrates
 * them. Every epoch to stop.max_epochs is counted (no early stopping, no
 * pruning: an upper bound). n_train, n_val: the fold's scored residues. */
typedef struct {
    double flop;      /* the fold's training and validation FLOP */
    double pair_flop; /* of which attention's pairs (FsNet.flops_pair_fwd), which the CPU runs slower */
    double seconds;   /* the fold alone on its tier: a block's time (block), a group's share (library) */
} FsGpuEstimate;
/* group: the models that share a library call (a trial's folds and seeds,
 * fused); the block tier ignores it. pair_len: the data's chain length a
 * residue sees (data_chain_pair_mean), for attention's pairs. -1 where
 * the model does not compile. */
int gpu_estimate(const FsGpuLimits *lim, FsGpuTier tier, const FsArch *arch, const FsTrainSpec *ts, uint32_t n_train,
                 uint32_t n_val, int group, double pair_len, FsGpuEstimate *out);
/* The dynamic shared memory one block of the one-block kernel may take
 * while FS_GPU_MIN_BLOCKS of them share an SM: the SM's share less the
 * runtime's reserve and the kernel's static shared memory (kernel.h). A
 * launch puts its models' weights there where they fit (kernel.h:
 * core_model_shared_bytes). */
size_t gpu_block_shared(const FsGpuLimits *lim);
/* Blocks of the one-block kernel that run at once on the device (SMs x
 * FS_GPU_MIN_BLOCKS): models trained in parallel (the block tier's
 * whole-sweep estimate, and how far its refills fill the device). */
int gpu_parallel_blocks(const FsGpuLimits *lim);
/* The device's rates as the estimate takes them (a device's from the
 * profile of its compute capability): "67 TFLOP/s FP32, 4.8 TB/s". */
void gpu_rates_describe(const FsGpuLimits *lim, char *out, size_t n);
/* Device bytes of one model in a launch: its buffer (its curves are in
 * mapped host memory). */
size_t gpu_model_bytes(const FsNet *net, uint32_t n_train);

/* Visible CUDA devices (0 without CUDA, without a driver or a device). */
int gpu_count(void);
/* 1 in a FOLDSWEEP_CUDA=EMULATE build: the devices are the CUDA stand-in's,
 * on the CPU (`--backend cuda` uses them; `auto` does not). */
int gpu_emulated(void);
/* "NVIDIA H200, 139.8 GiB, sm_90", or why there is none; under the CUDA
 * stand-in "emulated on the CPU: h200 profile (...)". */
void gpu_describe(int device, char *out, size_t n);
/* The library tier's back ends this build has, for `--version`: "cuBLAS
 * 13.1.0, cuDNN 9.13.0" (kernels/dnn.cu: fs_dnn_describe), or why none. */
void gpu_libraries(char *out, size_t n);

/* Selects `device` and uploads the data set's residue arrays once. */
FsGpu *gpu_open(int device, const FsDataset *ds, FsErr *err);
void gpu_close(FsGpu *g);

/* How many models like this job's fit on the device in one launch (memory
 * left, with a margin); 0 if not even one. Uploads the job's fold's
 * example lists first, as the launch would, so that they are counted. */
int gpu_capacity(FsGpu *g, const FsJob *job);
/* Whether the job's fold lists are on the device already (gpu_capacity
 * and a launch then allocate nothing for them). */
int gpu_lists_resident(const FsGpu *g, const FsJob *job);
/* What a library group of `width` models like job's takes on the device
 * (*need: its buffers, arrays, the libraries' scratch and state, as
 * lib_train.cu allocates them) and what a launch may fill (*budget: 85%
 * of the free memory once the job's fold lists are uploaded, as
 * gpu_capacity); 0, or -1 where the job does not compile or the device
 * cannot be read. */
int gpu_group_need(FsGpu *g, const FsJob *job, int width, size_t *need, size_t *budget);

/* What gpu_train tells its caller while the kernel runs (any may be NULL):
 * progress(ctx, epochs), the epochs completed by the models still
 * training; finished(ctx, j), jobs[j]'s result (and weights) are final,
 * called as each model ends, while the others train, so that the caller
 * records it at once: gpu_train does not touch that result again.
 * more(ctx, first, room, epochs): the block tier's refill (#45): asked
 * while its kernels run and the device keeps fewer models than it can run
 * at once, the caller writes up to `room` jobs that are ready now at
 * jobs[first..], each of the block tier with at most `epochs` epochs, and
 * returns how many (0: none); they start at once as a launch of their own
 * beside the running ones, and finished() takes their indexes, first and
 * on. cap: the jobs array's length (first + room never passes it). */
typedef struct {
    void (*progress)(void *ctx, long epochs);
    void (*finished)(void *ctx, int j);
    void *ctx;
    int (*more)(void *ctx, int first, int room, int epochs);
    int cap;
} FsGpuWatch;

/* Trains jobs[0..n) in one kernel launch (and those more() adds, in
 * launches beside it); each result lands in its job's
 * result (curves included), exactly as train_job would leave it, and every
 * job that trained is passed to w->finished. A raised job cancel flag is
 * passed to the device. Returns 0, or -1 with err (a CUDA error: the jobs
 * not yet finished are marked cancelled). */
int gpu_train(FsGpu *g, const FsJob *jobs, int n, const FsGpuWatch *w, FsErr *err);

/* Where a device's gpu_train calls spent their time (the profile's GPU
 * lines, #45): kernel, the device at work while the host waited (the block
 * tier's launch from its start to its end; the library tier's waits on
 * its groups' streams); host, the rest of the calls (laying out, uploading
 * and seeding models, queuing the library tier's steps, copying and
 * recording results, checkpoints). Summed over the calls since gpu_open. */
typedef struct {
    double kernel_seconds, host_seconds;
    long calls;
} FsGpuTimes;
void gpu_times(const FsGpu *g, FsGpuTimes *out);

#endif
