/*
 * bench_report.c: a large run folder for bench/run-report, written in
 * seconds with the journal API instead of trained: TRIALS trials (a grid of
 * depth, filters, kernel, dense width and learning rate) x FOLDS folds with
 * curves of up to EPOCHS epochs, stopped early by GL at varying epochs, a
 * few diverged (the highest learning rate) and two failed trials, and a
 * profile.json. Curves are smooth with noise, Q3 depends on the options, so
 * every chart of the report has data the shape of a real run's.
 *
 * usage: bench_report DIR TRIALS FOLDS EPOCHS
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal.h"
#include "util/util.h"

static double unit(FsRng *r) { return (double)(fs_rng_u64(r) >> 11) / 9007199254740992.0; }

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_report DIR TRIALS FOLDS EPOCHS\n");
        return 2;
    }
    const char *dir = argv[1];
    int trials = atoi(argv[2]), folds = atoi(argv[3]), epochs = atoi(argv[4]);
    if (trials < 1 || folds < 1 || folds > 64 || epochs < 2) return fprintf(stderr, "bench_report: bad sizes\n"), 2;
    FsJournal j;
    FsErr err = {0};
    if (journal_open(&j, dir, &err) != 0 || journal_append_run(&j, trials, folds, "q3", 0x5eed5eed5eedULL, &err) != 0)
        return fprintf(stderr, "bench_report: %s\n", err.msg), 1;
    static const double lrs[] = {0.001, 0.003, 0.01, 0.03};
    static const int denses[] = {0, 64, 128};
    uint64_t seed = 42;
    FsRng rng;
    fs_rng_seed(&rng, &seed, 1);
    for (int t = 0; t < trials; t++) {
        int depth = 2 + t % 2, filters = 16 << (t / 2 % 4), kernel = 3 + 2 * (t / 8 % 4), dense = denses[t / 32 % 3];
        double lr = lrs[t / 96 % 4];
        char id[17], cfg[2048], layer[256];
        snprintf(id, sizeof id, "%016llx", (unsigned long long)(0x1000 + t * 7919ULL));
        snprintf(cfg, sizeof cfg, "{\"data\":{\"split\":\"kfold\"},\"model\":{\"init\":\"he\",\"layers\":[");
        for (int l = 0; l < depth; l++) {
            snprintf(layer, sizeof layer, "%s{\"activation\":\"swish\",\"filters\":%d,\"kind\":\"conv1d\",\"width\":%d}",
                     l ? "," : "", filters, kernel);
            strcat(cfg, layer);
        }
        if (dense) {
            snprintf(layer, sizeof layer, ",{\"activation\":\"swish\",\"kind\":\"dense\",\"units\":%d}", dense);
            strcat(cfg, layer);
        }
        snprintf(layer, sizeof layer,
                 "],\"window\":17},\"training\":{\"batch_size\":8,\"early_stopping\":{\"alpha\":5,\"criterion\":\"gl\"},"
                 "\"epochs\":%d,\"learning_rate\":%.9g,\"optimizer\":\"adam\",\"seed\":1}}",
                 epochs, lr);
        strcat(cfg, layer);
        if (journal_append_trial(&j, id, t, 1000L * filters * depth + dense * 100, cfg, &err) != 0)
            return fprintf(stderr, "bench_report: %s\n", err.msg), 1;
        if (t == 17 || t == 211) {
            if (journal_append_failure(&j, id, "model does not fit: window 17 with 3 layers of kernel 9", &err) != 0)
                return fprintf(stderr, "bench_report: %s\n", err.msg), 1;
            continue;
        }
        double q_opt = 0.66 + 0.012 * log2(filters / 16.0) + 0.008 * (dense > 0) - 0.004 * fabs(kernel - 6.0) -
                       (lr > 0.02 ? 0.03 : 0);
        for (int f = 0; f < folds; f++) {
            FsFitResult r;
            train_result_alloc(&r, epochs);
            int diverge = lr > 0.02 && unit(&rng) < 0.3;
            int ran = (int)(epochs * (0.35 + 0.65 * unit(&rng)));
            if (ran < 2) ran = 2;
            double best = INFINITY;
            for (int e = 1; e <= ran; e++) {
                double x = e / (0.15 * epochs), noise = 0.004 * (unit(&rng) - 0.5);
                r.curves.train_loss[e - 1] = (float)(0.55 + 0.45 * exp(-x) + noise);
                r.curves.val_loss[e - 1] = (float)(0.68 + 0.3 * exp(-x) + 0.0006 * e + noise);
                r.curves.val_q3[e - 1] = (float)(q_opt - 0.12 * exp(-x) - 0.0002 * e + noise);
                r.curves.seconds[e - 1] = (float)(e * 2.5);
                if (diverge && e == ran) r.curves.train_loss[e - 1] = r.curves.val_loss[e - 1] = NAN;
                if (r.curves.val_loss[e - 1] < best) best = r.curves.val_loss[e - 1], r.best_epoch = e;
            }
            r.epochs = ran;
            r.status = diverge ? FS_FIT_DIVERGED : FS_FIT_OK;
            r.halted_by = !diverge && ran < epochs;
            if (diverge) r.diverged_epoch = ran, r.diverged_step = 17;
            r.best_val_loss = (float)best;
            double q = r.curves.val_q3[r.best_epoch - 1], n = 20000;
            uint64_t right = (uint64_t)(q * n), wrong = (uint64_t)n - right;
            r.best_confusion[0][0] = right * 4 / 10, r.best_confusion[1][1] = right * 2 / 10;
            r.best_confusion[2][2] = right - r.best_confusion[0][0] - r.best_confusion[1][1];
            r.best_confusion[0][2] = wrong / 3, r.best_confusion[1][2] = wrong / 3;
            r.best_confusion[2][0] = wrong - 2 * (wrong / 3);
            r.train_examples = (uint64_t)ran * 60000, r.val_examples = (uint64_t)ran * 20000;
            r.seconds = ran * 2.5, r.val_seconds = ran * 0.3;
            if (journal_append_fold(&j, id, f, &r, NULL, &err) != 0)
                return fprintf(stderr, "bench_report: %s\n", err.msg), 1;
            train_result_free(&r);
        }
    }
    journal_close(&j);
    char path[4200];
    const char *prof = "{\"data_seconds\":3.2,\"train_seconds\":9120.5,\"validation_seconds\":1104.2,"
                       "\"journal_seconds\":2.1,\"wall_seconds\":2700.0,\"threads\":4,\"idle_seconds\":575.3,"
                       "\"train_examples\":2.1e9,\"examples_per_second\":777777.0,\"folds\":1490}\n";
    snprintf(path, sizeof path, "%s/profile.json", dir);
    if (fs_write_file_atomic(path, prof, strlen(prof), &err) != 0) return fprintf(stderr, "bench_report: %s\n", err.msg), 1;
    return 0;
}
