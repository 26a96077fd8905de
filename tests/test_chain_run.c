/*
 * Chain models through the whole product (issue #28, item 2):
 *
 * 1. The sweep: data.window: chain with model.dilation, training.batch_residues
 *    and layer lists with a dilation; the other kind's batching options are
 *    refused where given (line:col), as is a dilation in a window model;
 *    plan shows each trial's receptive field and says the GPU path does
 *    not take them.
 * 2. The same leaderboard and the same model files bit for bit on 1 and 2
 *    threads and 3 MPI ranks, after a kill and a resume, and after a kill
 *    right after a mid-fold checkpoint and a resume from it.
 * 3. A median pruner: the same decisions on 1 and 2 threads.
 * 4. export and predict: the exported ensemble predicts a FASTA file, and
 *    evaluate scores other synthetic proteins with it.
 * 5. Recurrent layers (#46): a BiGRU and a stacked LSTM, the same board and
 *    model files on 1 and 2 threads, after a kill and a resume, on 3 MPI
 *    ranks and resumed mid-fold; refit and evaluate take them.
 */
#include "sweep/sweep.h"
#include "test_mpirun.h"
#include "test_runs.h"
#include "test_sweep_expect.h"

static const char *SWEEP = "data:\n  synth: {proteins: 90, seed: 4}\n  window: chain\n  folds: 3\n"
                           "model:\n  depth: 2\n  filters: [8, 12]\n  kernel: 5\n  dilation: [1, 3]\n"
                           "  batchnorm: true\n  dropout: 0.1\n  dense: 8\n"
                           "training:\n  epochs: 3\n  learning_rate: 0.003\n  batch_residues: 700\n  seed: 2\n";

static void sweeps(void)
{
    FsSweep sw;
    char why[2000];
    CHECK_MSG(sweep_text(&sw, SWEEP, why, sizeof why) == 0, "%s", why);
    CHECK(sw.n_trials == 4 && sw.chain && sw.window == 0);
    int dilated = 0;
    for (int i = 0; i < sw.n_trials; i++) {
        const FsArch *a = &sw.trials[i].arch;
        CHECK(a->chain && sw.trials[i].train.batch_residues == 700);
        if (a->layers[2].dilation == 3) {
            dilated++;
            CHECK(sweep_trial_receptive_field(&sw.trials[i]) == 1 + 4 + 12);
        }
    }
    CHECK(dilated == 2); /* the second convolution (after batch norm) of the dilation: 3 trials */
    CHECK(strstr(sw.canonical, "window: chain") && strstr(sw.canonical, "batch_residues: 700"));
    CHECK(strstr(sw.canonical, "batch_size") == NULL);
    sweep_free(&sw);

    /* Refusals, each at its key. */
    EXPECT("data:\n  synth: {proteins: 20}\n  window: chain\ntraining:\n  batch_size: 8\n", "5:15", "training.batch_size: has no effect with a chain model");
    EXPECT("data:\n  synth: {proteins: 20}\ntraining:\n  batch_residues: 512\n", "4:19", "training.batch_residues: has no effect without data.window: chain");
    EXPECT("data:\n  synth: {proteins: 20}\nmodel:\n  dilation: 2\n", "4:13", "model.dilation: 2 needs a chain model");
    EXPECT("data:\n  synth: {proteins: 20}\nmodel:\n  layers:\n    - conv1d: {filters: 4, width: 3, "
                       "dilation: 2}\n", "5:48", "a dilation needs a chain model");
    EXPECT("data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  depth: 4\n  dilation: 5\n", "6:13", "dilation above 64");
    EXPECT("data:\n  synth: {proteins: 20}\n  window: chian\n", "3:11", "expected an odd integer from 1 "
                                                                                  "to 255 or chain");
    /* A layer list with a dilated conv and a dilated highway. */
    CHECK(sweep_text(&sw, "data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  layers:\n"
                          "    - conv1d: {filters: 4, width: 3}\n    - conv1d: {filters: 4, width: 3, dilation: 4}\n"
                          "    - highway: {width: 3, dilation: 2}\n",
                     why, sizeof why) == 0);
    CHECK(sw.trials[0].arch.layers[1].dilation == 4 && sw.trials[0].arch.layers[2].dilation == 2);
    CHECK(sweep_trial_receptive_field(&sw.trials[0]) == 1 + 2 + 8 + 4);
    CHECK(strstr(sw.trials[0].config, "\"dilation\":4") && strstr(sw.trials[0].config, "\"window\":\"chain\""));
    sweep_free(&sw);

    /* Residual blocks: structured (blocks of 2 convolutions with their
     * batch norm after the first: adds after the 3rd and 5th) and in a
     * layer list (add's default block of 2 layers; add: {layers: 1}). */
    CHECK_MSG(sweep_text(&sw, "data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  depth: 6\n  filters: 4\n"
                              "  batchnorm: true\n  residual: [0, 2]\n  dense: 0\n",
                         why, sizeof why) == 0,
              "%s", why);
    CHECK(sw.n_trials == 2);
    const FsArch *r0 = &sw.trials[0].arch, *r2 = &sw.trials[1].arch;
    CHECK(r0->n_layers == 12 && r2->n_layers == 14);
    CHECK(r2->layers[6].kind == FS_LAYER_ADD && r2->layers[6].units == 4);
    CHECK(r2->layers[11].kind == FS_LAYER_ADD && r2->layers[11].units == 4);
    CHECK(strstr(sw.trials[1].config, "{\"kind\":\"add\",\"layers\":4}") != NULL);
    CHECK(strstr(sw.canonical, "residual: [0, 2]") != NULL);
    sweep_free(&sw);
    CHECK_MSG(sweep_text(&sw, "data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  layers:\n"
                              "    - [{conv1d: {filters: 4, width: 3}}, {conv1d: {filters: 4, width: 3}}, "
                              "{add: {layers: 1}}, {conv1d: {filters: 6, width: 3}}, {conv1d: {filters: 6, width: 3}}, "
                              "add]\n",
                         why, sizeof why) == 0,
              "%s", why);
    CHECK(sw.trials[0].arch.layers[2].units == 1 && sw.trials[0].arch.layers[5].units == 2);
    CHECK(strstr(sw.canonical, "add: {layers: 2}") != NULL);
    sweep_free(&sw);
    EXPECT("data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  layers:\n    - [{conv1d: {filters: 4, width: 3}}, "
           "add]\n",
           "6:7", "layer 2 (add): a residual block starts after the first layer");
    EXPECT("data:\n  synth: {proteins: 20}\n  window: chain\nmodel:\n  layers:\n    - [{conv1d: {filters: 4, width: 3}}, "
           "{conv1d: {filters: 4, width: 3}}, add]\n",
           "6:7", "layer 3 (add): its block spans 1 to 1 of the layers before it, got 2");
    EXPECT("data:\n  synth: {proteins: 20}\nmodel:\n  layers:\n    - [{conv1d: {filters: 4, width: 3}}, "
           "{add: {layers: 0}}]\n",
           "5:57", "an add spans at least 1 layer");
}

/* The `predict` of a file longer than one of its chunks (8,192 residues,
 * predict/forward.c), on 2 threads: a chunk ends where a protein does, and
 * the protein that the 8,192nd residue falls in is predicted as it is
 * alone (its fasta lines, probabilities included in csv, the same). */
static void predict_across_chunks(const char *tmp, const char *exp_dir)
{
    static const char aa[] = "ACDEFGHIKLMNPQRSTVWY";
    char many[400], alone[400], out_many[400], out_alone[400];
    snprintf(many, sizeof many, "%s/many.fa", tmp);
    snprintf(alone, sizeof alone, "%s/alone.fa", tmp);
    snprintf(out_many, sizeof out_many, "%s/many.csv", tmp);
    snprintf(out_alone, sizeof out_alone, "%s/alone.csv", tmp);
    FILE *f = fopen(many, "w"), *g = fopen(alone, "w");
    CHECK(f && g);
    if (!f || !g) return;
    unsigned x = 12345;
    for (int p = 0; p < 40; p++) { /* 40 x 300 residues: the 8,192nd is in protein 27 */
        fprintf(f, ">p%02d\n", p);
        if (p == 27) fprintf(g, ">p%02d\n", p);
        for (int r = 0; r < 300; r++) {
            x = x * 1103515245u + 12345u;
            fputc(aa[(x >> 16) % 20], f);
            if (p == 27) fputc(aa[(x >> 16) % 20], g);
        }
        fputc('\n', f);
        if (p == 27) fputc('\n', g);
    }
    fclose(f);
    fclose(g);
    CHECK(tp_run("predict '%s' '%s' --format csv --threads 2 -o '%s'", exp_dir, many, out_many) == 0);
    CHECK(tp_run("predict '%s' '%s' --format csv --threads 1 -o '%s'", exp_dir, alone, out_alone) == 0);
    CHECK_MSG(tp_count_in_file(out_many, "\n") == 1 + 40 * 300, "%d lines", tp_count_in_file(out_many, "\n"));
    char *m = tp_read_file(out_many, NULL), *a = tp_read_file(out_alone, NULL);
    const char *at = m ? strstr(m, "\np27,") : NULL, *first = a ? strstr(a, "\np27,") : NULL;
    CHECK_MSG(at && first, "no p27 rows");
    if (at && first) CHECK_MSG(!strncmp(at, first, strlen(first)), "protein 27 differs when predicted with others");
    /* With no room to keep workspaces (the first fold model's only), the
     * others laid out per chunk: the same file. */
    char out_lean[400];
    snprintf(out_lean, sizeof out_lean, "%s/lean.csv", tmp);
    setenv("FOLDSWEEP_TEST_PREDICT_KEEP_BYTES", "0", 1);
    CHECK(tp_run("predict '%s' '%s' --format csv --threads 2 -o '%s'", exp_dir, many, out_lean) == 0);
    unsetenv("FOLDSWEEP_TEST_PREDICT_KEEP_BYTES");
    char *lean = tp_read_file(out_lean, NULL);
    CHECK_MSG(m && lean && !strcmp(m, lean), "predict differs when fold models' workspaces are not kept");
    free(lean);
    free(m);
    free(a);
}

/* The scratch folder of runs(), for the board's own output. */
static const char *scratch;
static char *board(const char *dir) { return tr_board(dir, scratch); }

/* Killed right after its kill_at-th mid-fold checkpoint (one every
 * `steps` steps), then resumed from it: its board. */
static char *midfold_board(const char *sweep, const char *dir, const char *log, const char *steps,
                           const char *kill_at)
{
    setenv("FOLDSWEEP_TEST_CKPT_STEPS", steps, 1);
    setenv("FOLDSWEEP_TEST_KILL_AFTER_CKPT", kill_at, 1);
    CHECK(tr_run(sweep, dir, "1", log) != 0);
    unsetenv("FOLDSWEEP_TEST_KILL_AFTER_CKPT");
    tr_wait_unlocked(dir);
    CHECK(tr_run(sweep, dir, "1", log) == 0);
    unsetenv("FOLDSWEEP_TEST_CKPT_STEPS");
    CHECK_MSG(tp_count_in_file(log, "resumed from its checkpoint") >= 1, "%s: no fold resumed mid-fold", dir);
    return tr_board(dir, scratch);
}

static void runs(const char *tmp)
{
    scratch = tmp;
    char sweep[400], one[400], log[500];
    snprintf(sweep, sizeof sweep, "%s/chain.yaml", tmp);
    tp_write_text(sweep, SWEEP);
    snprintf(log, sizeof log, "%s/plan.txt", tmp);
    /* The GPU tiers' verdict for the h200 profile on any build: chain models
     * go to the library tier (#44), every one of the 4 trials. */
    char *plan[] = {"foldsweep", "plan", sweep, "--gpu", "h200", NULL};
    CHECK(tp_run_argv(plan, log) == 0);
    CHECK(tp_count_in_file(log, "chain rf17") == 2 && tp_count_in_file(log, "chain rf9") == 2);
    CHECK(tp_count_in_file(log, "the block tier takes 0 trials, the library tier 4") == 1);
    CHECK(tp_count_in_file(log, "refuse") == 0);

    /* 1 and 2 threads, killed mid-sweep and resumed, 3 MPI ranks: the same
     * board and the same 12 model files. */
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "chain", .board = board, .threads = 2,
                         .kill_folds = 4, .ranks = 3, .models = 12};
    char *b1 = tr_same_everywhere(&same);
    snprintf(one, sizeof one, "%s/chain1", tmp);
    snprintf(log, sizeof log, "%s/chain1.log", tmp);
    CHECK(tp_count_in_file(log, "error") == 0);
    printf("%s", b1);
    CHECK(strstr(b1, ",ok,") != NULL);

    /* Killed right after a mid-fold checkpoint (every 10 steps), then
     * resumed from it: the same numbers and model files. */
    char mid[400];
    snprintf(mid, sizeof mid, "%s/midfold", tmp);
    char *bm = midfold_board(sweep, mid, log, "10", "4");
    CHECK_MSG(!strcmp(b1, bm), "resumed mid-fold differs:\n%s\n%s", b1, bm);
    CHECK(tr_same_models(one, mid, "mid-fold") == 12);
    free(bm);

    /* With a pruner (the median rule from the first epoch): the same
     * decisions and numbers on 1 and 2 threads. */
    char pruned_sweep[400], p1[400], p2[400], text[2000];
    snprintf(pruned_sweep, sizeof pruned_sweep, "%s/pruned.yaml", tmp);
    snprintf(text, sizeof text, "%ssearch:\n  pruner: {kind: median, warmup: 1, min_trials: 1}\n", SWEEP);
    tp_write_text(pruned_sweep, text);
    snprintf(p1, sizeof p1, "%s/pruned1", tmp);
    snprintf(p2, sizeof p2, "%s/pruned2", tmp);
    CHECK(tr_run(pruned_sweep, p1, "1", log) == 0);
    CHECK(tr_run(pruned_sweep, p2, "2", log) == 0);
    char *q1 = tr_board(p1, tmp), *q2 = tr_board(p2, tmp);
    CHECK_MSG(!strcmp(q1, q2), "pruned: 1 and 2 threads differ:\n%s\n%s", q1, q2);
    CHECK(strstr(q1, ",pruned,") != NULL); /* the rule stopped at least one trial */
    free(q1);
    free(q2);

    /* Export, predict, evaluate. */
    char exp_dir[400], fa[400], out[500];
    snprintf(exp_dir, sizeof exp_dir, "%s/export", tmp);
    snprintf(fa, sizeof fa, "%s/q.fa", tmp);
    snprintf(out, sizeof out, "%s/pred.txt", tmp);
    tp_write_text(fa, ">short\nMKV\n>longer\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQV\n");
    CHECK(tp_run("export '%s' --rank 1 -o '%s'", one, exp_dir) == 0);
    snprintf(log, sizeof log, "%s/model.json", exp_dir);
    CHECK(tp_count_in_file(log, "\"window\": \"chain\"") == 1); /* model.json's own member */
    char *pred[] = {"foldsweep", "predict", exp_dir, fa, "--format", "fasta", NULL};
    CHECK(tp_run_argv(pred, out) == 0);
    CHECK(tp_count_in_file(out, ">short") == 1 && tp_count_in_file(out, ">longer") == 1);
    predict_across_chunks(tmp, exp_dir);
    /* evaluate: the ensemble on other synthetic proteins, scored as a chain model reads them. */
    char test_set[400];
    snprintf(test_set, sizeof test_set, "%s/test.txt", tmp);
    snprintf(log, sizeof log, "%s/eval.json", tmp);
    CHECK(tp_run("synth -o '%s' --proteins 25 --seed 77", test_set) == 0);
    CHECK(tp_run("evaluate '%s' '%s' --format json >'%s' 2>&1", exp_dir, test_set, log) == 0);
    CHECK(tp_count_in_file(log, "\"q3\"") >= 1);
    free(b1);
}

/* Recurrent and attention chain models through the same runs (section 5);
 * the attention's dropout mask drawn again in backward across a kill. */
static const char *RNN_SWEEP = "data:\n  synth: {proteins: 60, seed: 5}\n  window: chain\n  folds: 3\n"
                               "model:\n  layers:\n"
                               "    - [{conv1d: {filters: 6, width: 5}}, {gru: {units: 5}}, {dense: {units: 6}}]\n"
                               "    - [{conv1d: {filters: 6, width: 3}}, {lstm: {units: 4, layers: 2}}, layernorm]\n"
                               "    - [{conv1d: {filters: 6, width: 5}}, {attention: {heads: 2, key_dim: 3, dropout: 0.1}},"
                               " {dense: {units: 6}}]\n"
                               "training:\n  epochs: 3\n  learning_rate: 0.005\n  batch_residues: 600\n  seed: 3\n";

static void recurrent_runs(const char *tmp)
{
    char sweep[400], one[400], log[500], mid[400];
    snprintf(sweep, sizeof sweep, "%s/rnn.yaml", tmp);
    tp_write_text(sweep, RNN_SWEEP);
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "rnn", .board = board, .threads = 2,
                         .kill_folds = 2, .ranks = 3, .models = 9};
    char *b1 = tr_same_everywhere(&same);
    printf("%s", b1);
    CHECK(tp_count(b1, ",ok,q3,") == 3); /* every trial done, every fold */
    snprintf(one, sizeof one, "%s/rnn1", tmp);
    snprintf(mid, sizeof mid, "%s/rnn-midfold", tmp);
    snprintf(log, sizeof log, "%s/rnn-mid.log", tmp);
    char *bm = midfold_board(sweep, mid, log, "5", "3");
    CHECK_MSG(!strcmp(b1, bm), "recurrent, resumed mid-fold differs:\n%s\n%s", b1, bm);
    CHECK(tr_same_models(one, mid, "recurrent mid-fold") == 9);
    free(bm);
    /* refit (a final model on all proteins) and evaluate it. */
    char fin[400], test_set[400];
    snprintf(fin, sizeof fin, "%s/rnn-final", tmp);
    snprintf(test_set, sizeof test_set, "%s/rnn-test.txt", tmp);
    CHECK(tp_run("refit '%s' --rank 1 -o '%s' >'%s' 2>&1", one, fin, log) == 0);
    CHECK(tp_run("synth -o '%s' --proteins 20 --seed 78", test_set) == 0);
    snprintf(log, sizeof log, "%s/rnn-eval.json", tmp);
    CHECK(tp_run("evaluate '%s' '%s' --format json >'%s' 2>&1", fin, test_set, log) == 0);
    CHECK(tp_count_in_file(log, "\"q3\"") >= 1);
    free(b1);
}

int main(void)
{
    (void)TR_SWEEP; /* test_runs.h's sweep: this test has its own */
    sweeps();
    char tmp[256];
    tp_tmpdir(tmp, sizeof tmp, "chain_run");
    runs(tmp);
    recurrent_runs(tmp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
