/*
 * bench_team: intra-model threading (issue #18 part 3, "every core on one
 * model"). Trains a set of folds on a number of threads and prints one
 * JSON line: training examples per second, how much of the work helper
 * threads did, and a hash of everything the fits produced (curves except
 * their timings, best weights, counts), so that bench/run-team can require
 * the same bits from every thread count.
 *
 * Models (UCI training set, 3-fold CV by protein, window 17, Adam 1e-3):
 *   big: conv1d(128, 9, swish) -> conv1d(128, 9, swish) -> dense(256, swish)
 *   r1:  conv1d(64, 5, swish) -> conv1d(64, 5, swish) -> dense(128, swish)
 *
 * FOLDSWEEP_TEAM=0 in the environment turns helping off (the trainer as it
 * was: one thread per model), for the before / after comparison.
 *
 * usage: bench_team UCI_TRAIN_FILE [--model big|r1] [--batch N] [--threads N]
 *                   [--epochs N] [--folds-run N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "data/data.h"
#include "train/train.h"

static void arch_of(FsArch *arch, int big)
{
    memset(arch, 0, sizeof *arch);
    arch->window = 17;
    arch->n_layers = 3;
    const int f = big ? 128 : 64, w = big ? 9 : 5, u = big ? 256 : 128;
    arch->layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = f, .width = w, .act = FS_ACT_SWISH};
    arch->layers[1] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = f, .width = w, .act = FS_ACT_SWISH};
    arch->layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = u, .act = FS_ACT_SWISH};
}

/* FNV-1a over what must not depend on the thread count. */
static uint64_t result_hash(const FsFitResult *r, uint64_t h)
{
    size_t n = (size_t)r->epochs;
    h = fs_fnv1a64(&r->status, sizeof r->status, h);
    h = fs_fnv1a64(&r->epochs, sizeof r->epochs, h);
    h = fs_fnv1a64(&r->best_epoch, sizeof r->best_epoch, h);
    h = fs_fnv1a64(&r->best_val_loss, sizeof r->best_val_loss, h);
    h = fs_fnv1a64(r->best_confusion, sizeof r->best_confusion, h);
    h = fs_fnv1a64(r->curves.train_loss, n * sizeof(float), h);
    h = fs_fnv1a64(r->curves.val_loss, n * sizeof(float), h);
    h = fs_fnv1a64(r->curves.val_q3, n * sizeof(float), h);
    return fs_fnv1a64(r->weights, (size_t)r->n_weights * sizeof(float), h);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s UCI_TRAIN_FILE [--model big|r1] [--batch N] [--threads N] [--epochs N] "
                        "[--folds-run N]\n", argv[0]);
        return 2;
    }
    int batch = 32, threads = 1, epochs = 2, folds_run = 1, big = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--epochs")) epochs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--folds-run")) folds_run = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--model")) big = strcmp(argv[i + 1], "r1") != 0;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (folds_run < 1 || folds_run > 3 || threads < 1 || epochs < 1 || batch < 1) {
        fprintf(stderr, "bench_team: folds-run 1..3, threads, epochs and batch >= 1\n");
        return 2;
    }
    FsDataset ds;
    FsErr err = {0};
    const char *inputs[1] = {argv[1]};
    FsLoadSpec spec = {FS_FMT_UCI, inputs, 1, NULL, NULL, NULL};
    if (data_load(&ds, &spec, &err) != 0 || data_assign_folds(&ds, 3, 1, &err) != 0) {
        fprintf(stderr, "bench_team: %s\n", err.msg);
        return 1;
    }
    FsArch arch;
    arch_of(&arch, big);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.batch = batch;
    ts.stop.kind = FS_STOP_MAX_EPOCHS;
    ts.stop.max_epochs = epochs;
    ts.seed[0] = 1;

    FsJob jobs[3];
    FsFitResult res[3];
    memset(jobs, 0, sizeof jobs);
    for (int f = 0; f < folds_run; f++) {
        train_result_alloc(&res[f], epochs);
        jobs[f].arch = &arch;
        jobs[f].spec = &ts;
        jobs[f].data = &ds;
        jobs[f].fold = f;
        jobs[f].result = &res[f];
        jobs[f].weights_out = train_result_alloc_weights(&res[f], &arch);
    }
    FsTeamStats before, after;
    train_team_stats(&before);
    double t0 = fs_now();
    train_jobs(jobs, folds_run, threads);
    double wall = fs_now() - t0;
    train_team_stats(&after);
    /* CPU time the process used (all threads: what helpers' spinning and
     * waiting cost besides the training) and its context switches. */
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                       1e-6 * (double)ru.ru_stime.tv_usec;

    uint64_t ex = 0, h = FS_FNV_OFFSET;
    double q3 = 0.0;
    for (int f = 0; f < folds_run; f++) {
        if (res[f].status != FS_FIT_OK) {
            fprintf(stderr, "bench_team: fold %d %s %s\n", f, train_status_name(res[f].status), res[f].message);
            return 1;
        }
        ex += res[f].train_examples;
        q3 += res[f].curves.val_q3[res[f].epochs - 1] / folds_run;
        h = result_hash(&res[f], h);
    }
    const char *team = getenv("FOLDSWEEP_TEAM");
    printf("{\"framework\":\"foldsweep-cpu\",\"model\":\"%s\",\"batch\":%d,\"threads\":%d,\"epochs\":%d,"
           "\"folds_run\":%d,\"team\":%s,\"train_examples\":%llu,\"wall_seconds\":%.3f,"
           "\"examples_per_second\":%.1f,\"regions\":%llu,\"chunks\":%llu,\"helper_chunks\":%llu,\"stalls\":%llu,"
           "\"cpu_seconds\":%.3f,\"vol_switches\":%ld,\"invol_switches\":%ld,\"mean_val_q3\":%.4f,\"hash\":\"%016llx\"}\n",
           big ? "big" : "r1", batch, threads, epochs, folds_run, team && !strcmp(team, "0") ? "false" : "true",
           (unsigned long long)ex, wall, (double)ex / wall,
           (unsigned long long)(after.regions - before.regions), (unsigned long long)(after.chunks - before.chunks),
           (unsigned long long)(after.helper_chunks - before.helper_chunks),
           (unsigned long long)(after.stalls - before.stalls), cpu, ru.ru_nvcsw, ru.ru_nivcsw, q3, (unsigned long long)h);
    for (int f = 0; f < folds_run; f++) train_result_free(&res[f]);
    data_free(&ds);
    return 0;
}
