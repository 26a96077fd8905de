/*
 * test_sweep.c: valid sweep files: grid sizes and order, duplicate trials
 * dropped, random sampling (deterministic, prefix-stable, clamped), the
 * FsArch / FsTrainSpec each trial gets, ids (stable, sensitive to data and
 * options), the canonical text (round trip, run-only options left out,
 * absolute paths) and sweep_diff.
 */
#include "sweep/sweep.h"
#include "test.h"

#define DATA "data: {synth: {proteins: 30, seed: 1}, window: 13}\n"

static int load_at(FsSweep *sw, const char *text, const char *name, int line)
{
    FsErrList e = {0};
    int rc = sweep_load_string(sw, text, name, &e);
    CHECK_MSG(rc == 0, "line %d: sweep did not load: %s", line, e.n ? e.msg[0] : "?");
    for (int i = 1; i < e.n; i++) fprintf(stderr, "  also: %s\n", e.msg[i]);
    errlist_free(&e);
    return rc;
}
#define load(sw, text) load_at((sw), (text), "t.yaml", __LINE__)

static void test_grid(void)
{
    FsSweep sw;
    if (load(&sw, DATA "model: {depth: [1, 2], filters: [8, 16, 32], kernel: [3, 5], dense: 0}\n")) return;
    CHECK(sw.n_trials == 12);
    CHECK(sw.grid_size == 12);
    CHECK(sw.window == 13);
    /* depth slowest, kernel fastest (documented option order). */
    const int want[12][3] = {{1, 8, 3},  {1, 8, 5},  {1, 16, 3}, {1, 16, 5}, {1, 32, 3}, {1, 32, 5},
                             {2, 8, 3},  {2, 8, 5},  {2, 16, 3}, {2, 16, 5}, {2, 32, 3}, {2, 32, 5}};
    for (int i = 0; i < sw.n_trials && i < 12; i++) {
        const FsArch *a = &sw.trials[i].arch;
        CHECK(sw.trials[i].index == i);
        CHECK_MSG(a->n_layers == want[i][0], "trial %d: %d layers", i, a->n_layers);
        CHECK(a->layers[0].kind == FS_LAYER_CONV);
        CHECK(a->layers[0].units == want[i][1]);
        CHECK(a->layers[0].width == want[i][2]);
        CHECK(a->layers[0].act == FS_ACT_SWISH);
        CHECK(a->window == 13);
        CHECK(sw.trials[i].id[0] == '\0'); /* ids wait for the data fingerprint */
    }
    sweep_free(&sw);

    /* Training lists multiply in too: learning_rate before batch_size. */
    if (load(&sw, DATA "training: {batch_size: [8, 16], learning_rate: [0.1, 0.01], epochs: 2}\n")) return;
    CHECK(sw.n_trials == 4);
    CHECK_NEAR(sw.trials[0].train.lr, 0.1f, 0);
    CHECK(sw.trials[0].train.batch == 8);
    CHECK(sw.trials[1].train.batch == 16);
    CHECK_NEAR(sw.trials[2].train.lr, 0.01f, 0);
    CHECK(sw.trials[3].train.stop.max_epochs == 2);
    sweep_free(&sw);
}

static void test_duplicates_dropped(void)
{
    FsSweep sw;
    /* Momentum only matters for SGD: Adam x 2 momenta is one trial. */
    if (load(&sw, DATA "training: {optimizer: adam, momentum: [0.5, 0.9]}\n")) return;
    CHECK(sw.grid_size == 2);
    CHECK(sw.n_trials == 1);
    /* ... and said: the sweep tunes nothing with it. */
    CHECK_MSG(sw.note && strstr(sw.note, "training.momentum is given but changes none of the trials"), "%s",
              sw.note ? sw.note : "(no note)");
    sweep_free(&sw);
    if (load(&sw, DATA "training: {optimizer: [sgd, adam], momentum: [0.5, 0.9], lr_schedule: constant,\n"
                       "  early_stopping: {criterion: patience, patience: 3, alpha: 2}}\n")) return;
    CHECK(sw.grid_size == 4);
    CHECK_MSG(sw.note && strstr(sw.note, "training.early_stopping.alpha is given") && !strstr(sw.note, "momentum") &&
                  !strstr(sw.note, "lr_schedule"), "%s", sw.note ? sw.note : "(no note)"); /* sgd's; a default */
    CHECK(sw.n_trials == 3);
    CHECK(sw.trials[0].train.opt == FS_OPT_SGD && sw.trials[1].train.opt == FS_OPT_SGD);
    CHECK(sw.trials[2].train.opt == FS_OPT_ADAM);
    sweep_free(&sw);
    /* The leaky slope only matters to leaky_relu layers. */
    if (load(&sw, DATA "model: {activation: [relu, leaky_relu], leaky_slope: [0.01, 0.2]}\n")) return;
    CHECK(sw.n_trials == 3);
    CHECK_NEAR(sw.trials[2].arch.layers[0].act_param, 0.2f, 0);
    CHECK(sw.trials[0].arch.layers[0].act_param == 0.0f);
    sweep_free(&sw);
}

static void configs(const FsSweep *sw, char out[][2048], int n)
{
    for (int i = 0; i < n && i < sw->n_trials; i++) snprintf(out[i], 2048, "%s", sw->trials[i].config);
}

static void test_random(void)
{
    const char *space = DATA "model: {depth: [1, 2], filters: [8, 16, 32], kernel: [3, 5], dense: [0, 16]}\n";
    char text[1024];
    static char a[24][2048], b[24][2048];
    FsSweep sw;
    snprintf(text, sizeof text, "%ssearch: {random: 5, seed: 3}\n", space);
    if (load(&sw, text)) return;
    CHECK(sw.n_trials == 5);
    CHECK(sw.grid_size == 24);
    CHECK(sw.random_n == 5);
    CHECK(sw.note == NULL);
    configs(&sw, a, 5);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < i; j++) CHECK_MSG(strcmp(a[i], a[j]) != 0, "trials %d and %d are equal", i, j);
    sweep_free(&sw);
    /* Deterministic. */
    if (load(&sw, text)) return;
    configs(&sw, b, 5);
    for (int i = 0; i < 5; i++) CHECK(strcmp(a[i], b[i]) == 0);
    sweep_free(&sw);
    /* Prefix-stable: random: 3 is the first 3 of random: 5. */
    snprintf(text, sizeof text, "%ssearch: {random: 3, seed: 3}\n", space);
    if (load(&sw, text)) return;
    CHECK(sw.n_trials == 3);
    configs(&sw, b, 3);
    for (int i = 0; i < 3; i++) CHECK(strcmp(a[i], b[i]) == 0);
    sweep_free(&sw);
    /* Another seed, another sample. */
    snprintf(text, sizeof text, "%ssearch: {random: 5, seed: 4}\n", space);
    if (load(&sw, text)) return;
    configs(&sw, b, 5);
    int same = 0;
    for (int i = 0; i < 5; i++) same += !strcmp(a[i], b[i]);
    CHECK(same < 5);
    sweep_free(&sw);
    /* More than the grid: the whole grid, with a note. */
    snprintf(text, sizeof text, "%ssearch: {random: 100}\n", space);
    if (load(&sw, text)) return;
    CHECK(sw.n_trials == 24);
    CHECK(sw.note != NULL);
    if (sw.note) CHECK_CONTAINS(sw.note, "only 24 distinct");
    configs(&sw, a, 24);
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < i; j++) CHECK(strcmp(a[i], a[j]) != 0);
    sweep_free(&sw);
    /* A huge grid can be sampled (not enumerated). */
    if (load(&sw, DATA "model: {filters: [1,2,3,4,5,6,7,8,9,10], dense: [1,2,3,4,5,6,7,8,9,10]}\n"
                       "training: {learning_rate: [1,2,3,4,5,6,7,8,9,10], batch_size: [1,2,3,4,5,6,7,8,9,10],\n"
                       "  epochs: [1,2,3,4,5,6,7,8,9,10], eval_batch: [1,2,3,4,5,6,7,8,9,10], seed: [1,2,3,4,5,6,7,8,9,10]}\n"
                       "search: {random: 7, seed: 1}\n"))
        return;
    CHECK(sw.grid_size == 10000000ULL);
    CHECK(sw.n_trials == 7);
    sweep_free(&sw);
}

static void test_trial_contents(void)
{
    FsSweep sw;
    if (load(&sw, DATA "model:\n  depth: 2\n  filters: 8\n  kernel: 3\n  batchnorm: true\n  highway: 1\n"
                       "  dropout: 0.25\n  dense: 16\n  activation: elu\n  elu_alpha: 0.5\n  init: glorot\n"
                       "  bn_epsilon: 0.01\n  gate_bias: -2\n"
                       "training:\n  optimizer: sgd\n  learning_rate: 0.05\n  momentum: 0.8\n  clip_norm: 2\n"
                       "  weight_decay: 0.001\n  batch_size: 4\n  epochs: 7\n  seed: 42\n"
                       "  early_stopping: {criterion: up, s: 2, strip: 3}\n"))
        return;
    CHECK(sw.n_trials == 1);
    const FsArch *a = &sw.trials[0].arch;
    /* conv, bn, conv, bn, highway, dropout, dense, dropout */
    const FsLayerKind want[] = {FS_LAYER_CONV, FS_LAYER_BATCHNORM, FS_LAYER_CONV, FS_LAYER_BATCHNORM,
                                FS_LAYER_HIGHWAY, FS_LAYER_DROPOUT, FS_LAYER_DENSE, FS_LAYER_DROPOUT};
    CHECK(a->n_layers == 8);
    for (int i = 0; i < 8 && i < a->n_layers; i++) CHECK_MSG(a->layers[i].kind == want[i], "layer %d", i);
    CHECK(a->init == FS_INIT_GLOROT);
    CHECK_NEAR(a->layers[0].act_param, 0.5f, 0);
    CHECK_NEAR(a->layers[1].eps, 0.01f, 0);
    CHECK_NEAR(a->layers[1].momentum, 0.99f, 0);
    CHECK(a->layers[4].width == 3);
    CHECK_NEAR(a->layers[4].gate_bias, -2.0f, 0);
    CHECK_NEAR(a->layers[5].rate, 0.25f, 0);
    CHECK(a->layers[6].units == 16);
    const FsTrainSpec *t = &sw.trials[0].train;
    FsTrainSpec d;
    train_spec_defaults(&d);
    CHECK(t->opt == FS_OPT_SGD);
    CHECK_NEAR(t->lr, 0.05f, 0);
    CHECK_NEAR(t->momentum, 0.8f, 0);
    CHECK_NEAR(t->clip_norm, 2.0f, 0);
    CHECK_NEAR(t->weight_decay, 0.001f, 0);
    CHECK(t->batch == 4);
    CHECK(t->eval_batch == d.eval_batch);
    CHECK(t->seed[0] == 42 && t->seed[1] == 0 && t->seed[2] == 0);
    CHECK(t->stop.kind == FS_STOP_UP && t->stop.s == 2 && t->stop.strip == 3 && t->stop.max_epochs == 7);
    FsErr err = {0};
    CHECK(train_spec_check(t, &err) == 0);
    FsNet net;
    CHECK(model_compile(&net, a, t->batch, &err) == 0);
    /* The config holds what matters and nothing else. */
    const char *c = sw.trials[0].config;
    CHECK_CONTAINS(c, "\"momentum\":0.8,"); /* the value as written, not %.9g's 0.800000012 */
    CHECK_CONTAINS(c, "\"rate\":0.25}");
    CHECK_CONTAINS(c, "\"learning_rate\":0.05,");
    CHECK_CONTAINS(c, "\"early_stopping\":{\"criterion\":\"up\",\"s\":2,\"strip\":3}");
    CHECK_CONTAINS(c, "\"init\":\"glorot\"");
    CHECK(strstr(c, "beta1") == NULL);
    sweep_free(&sw);

    /* Defaults: the trainer's own, and R1's architecture. */
    if (load(&sw, DATA)) return;
    CHECK(sw.n_trials == 1);
    t = &sw.trials[0].train;
    CHECK(t->opt == d.opt && t->lr == d.lr && t->batch == d.batch && t->eps == d.eps &&
          t->stop.max_epochs == d.stop.max_epochs && t->stop.kind == FS_STOP_MAX_EPOCHS);
    CHECK(t->seed[0] == 1);
    a = &sw.trials[0].arch;
    CHECK(a->n_layers == 3 && a->layers[0].units == 64 && a->layers[0].width == 5 &&
          a->layers[2].kind == FS_LAYER_DENSE && a->layers[2].units == 128);
    CHECK(sw.folds == 3 && sw.fold_seed == 1 && sw.metric == FS_METRIC_Q3 && sw.backend == FS_BACKEND_AUTO);
    sweep_free(&sw);
}

static void test_layers(void)
{
    FsSweep sw;
    if (load(&sw, DATA "model:\n  leaky_slope: 0.2\n  bn_momentum: 0.9\n  layers:\n"
                       "    - - conv1d: {filters: 16, width: 5, activation: leaky_relu}\n"
                       "      - batchnorm\n"
                       "      - highway: {width: 3, activation: leaky_relu, leaky_slope: 0.3}\n"
                       "      - dense: {units: 32}\n"
                       "    - [{conv1d: {filters: 8, width: 3}}, {dropout: {rate: 0.5}}]\n"
                       "training: {learning_rate: [0.001, 0.01]}\n"))
        return;
    CHECK(sw.n_trials == 4); /* alternatives slowest */
    const FsArch *a = &sw.trials[0].arch;
    CHECK(a->n_layers == 4);
    CHECK_NEAR(a->layers[0].act_param, 0.2f, 0);
    CHECK(a->layers[1].kind == FS_LAYER_BATCHNORM);
    CHECK_NEAR(a->layers[1].momentum, 0.9f, 0);
    CHECK_NEAR(a->layers[1].eps, 1e-3f, 0);
    CHECK_NEAR(a->layers[2].act_param, 0.3f, 0);
    CHECK_NEAR(a->layers[2].gate_bias, -1.0f, 0);
    CHECK(a->layers[3].act == FS_ACT_SWISH); /* the default activation */
    CHECK(sw.trials[1].arch.n_layers == 4);
    CHECK(sw.trials[2].arch.n_layers == 2 && sw.trials[2].arch.layers[1].kind == FS_LAYER_DROPOUT);
    CHECK_NEAR(sw.trials[3].train.lr, 0.01f, 0);
    sweep_free(&sw);

    /* Layer norm: bn_epsilon's default (Keras's 1e-3, as batch norm's), or
     * its own epsilon; another epsilon is another trial. */
    if (load(&sw, DATA "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3}}, layernorm,"
                       " {dense: {units: 6}}, {layernorm: {epsilon: 0.00001}}]\n"
                       "    - [{conv1d: {filters: 8, width: 3}}, {layernorm: {epsilon: 0.001}}]\n"
                       "    - [{conv1d: {filters: 8, width: 3}}, {layernorm: {epsilon: 0.01}}]\n"))
        return;
    CHECK(sw.n_trials == 3);
    a = &sw.trials[0].arch;
    CHECK(a->n_layers == 4 && a->layers[1].kind == FS_LAYER_LAYERNORM && a->layers[3].kind == FS_LAYER_LAYERNORM);
    CHECK_NEAR(a->layers[1].eps, 1e-3f, 0);
    CHECK_NEAR(a->layers[3].eps, 1e-5f, 0);
    CHECK_CONTAINS(sw.trials[0].config, "{\"epsilon\":1e-05,\"kind\":\"layernorm\"}");
    CHECK_NEAR(sw.trials[2].arch.layers[1].eps, 0.01f, 0);
    sweep_assign_ids(&sw, 5);
    CHECK(strcmp(sw.trials[1].id, sw.trials[2].id) != 0);
    CHECK_CONTAINS(sw.canonical, "- layernorm: {}\n      - dense: {units: 6, activation: swish}\n"
                                 "      - layernorm: {epsilon: 1e-05}");
    char summary[200];
    sweep_arch_summary(a, summary, sizeof summary);
    CHECK_CONTAINS(summary, "conv8x3-ln-dense6-ln");
    sweep_free(&sw);

    /* GRUs (#46): bidirectional unless the layer or model.bidirectional
     * says otherwise; units a grid dimension of the structured form. */
#define CHAIN "data: {synth: {proteins: 30, seed: 1}, window: chain}\n"
    if (load(&sw, CHAIN "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3}}, {gru: {units: 16}},"
                        " {gru: {units: 4, bidirectional: false}}]\n"))
        return;
    CHECK(sw.n_trials == 1);
    a = &sw.trials[0].arch;
    CHECK(a->n_layers == 3 && a->layers[1].kind == FS_LAYER_GRU && a->layers[1].units == 16 && a->layers[1].bidir);
    CHECK(a->layers[2].kind == FS_LAYER_GRU && a->layers[2].units == 4 && !a->layers[2].bidir);
    CHECK_CONTAINS(sw.trials[0].config, "{\"bidirectional\":true,\"kind\":\"gru\",\"units\":16},"
                                        "{\"bidirectional\":false,\"kind\":\"gru\",\"units\":4}");
    CHECK_CONTAINS(sw.canonical, "- gru: {units: 16}\n      - gru: {units: 4, bidirectional: false}");
    sweep_arch_summary(a, summary, sizeof summary);
    CHECK_CONTAINS(summary, "conv8x3-bigru16-gru4 swish chain rf whole");
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3, dense: 0, gru: [0, 8], bidirectional: false}\n"))
        return;
    CHECK(sw.n_trials == 2);
    CHECK(sw.trials[0].arch.n_layers == 2 && sw.trials[1].arch.n_layers == 3);
    CHECK(sw.trials[1].arch.layers[2].kind == FS_LAYER_GRU && sw.trials[1].arch.layers[2].units == 8);
    CHECK(!sw.trials[1].arch.layers[2].bidir);
    /* The option at its default leaves a sweep's text (and trial ids) as before. */
    CHECK(strstr(sw.canonical, "gru: [0, 8]") != NULL);
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3}\n")) return;
    CHECK(strstr(sw.canonical, "gru") == NULL && strstr(sw.canonical, "bidirectional") == NULL &&
          strstr(sw.canonical, "lstm") == NULL && strstr(sw.canonical, "recurrent") == NULL);
    sweep_free(&sw);
    /* LSTMs: the same, in both forms; a structured GRU and LSTM, the LSTM after. */
    if (load(&sw, CHAIN "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3}}, {lstm: {units: 8}}]\n"
                        "    - [{conv1d: {filters: 8, width: 3}}, {lstm: {units: 16}},"
                        " {lstm: {units: 4, bidirectional: false}}]\n"))
        return;
    CHECK(sw.n_trials == 2);
    a = &sw.trials[1].arch;
    CHECK(a->n_layers == 3 && a->layers[1].kind == FS_LAYER_LSTM && a->layers[1].units == 16 && a->layers[1].bidir);
    CHECK(a->layers[2].kind == FS_LAYER_LSTM && a->layers[2].units == 4 && !a->layers[2].bidir);
    CHECK_CONTAINS(sw.trials[1].config, "{\"bidirectional\":true,\"kind\":\"lstm\",\"units\":16},"
                                        "{\"bidirectional\":false,\"kind\":\"lstm\",\"units\":4}");
    CHECK_CONTAINS(sw.canonical, "- lstm: {units: 16}\n      - lstm: {units: 4, bidirectional: false}");
    sweep_arch_summary(a, summary, sizeof summary);
    CHECK_CONTAINS(summary, "conv8x3-bilstm16-lstm4 swish chain rf whole");
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3, dense: 0, gru: [0, 8], lstm: [0, 6]}\n")) return;
    CHECK(sw.n_trials == 4);
    CHECK(sw.trials[1].arch.n_layers == 3 && sw.trials[1].arch.layers[2].kind == FS_LAYER_LSTM &&
          sw.trials[1].arch.layers[2].units == 6 && sw.trials[1].arch.layers[2].bidir);
    CHECK(sw.trials[3].arch.n_layers == 4 && sw.trials[3].arch.layers[2].kind == FS_LAYER_GRU &&
          sw.trials[3].arch.layers[3].kind == FS_LAYER_LSTM);
    CHECK(strstr(sw.canonical, "lstm: [0, 6]") != NULL);
    sweep_free(&sw);
    /* A recurrent layer's `layers`: that many of it, stacked: the same trial
     * (config and id) as listing it that many times. */
    FsSweep s3;
    if (load(&sw, CHAIN "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3}}, {gru: {units: 8, layers: 2}},"
                        " {lstm: {units: 4, layers: 3, bidirectional: false}}]\n"))
        return;
    if (load(&s3, CHAIN "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3}}, {gru: {units: 8}},"
                        " {gru: {units: 8}}, {lstm: {units: 4, bidirectional: false}},"
                        " {lstm: {units: 4, bidirectional: false}}, {lstm: {units: 4, bidirectional: false}}]\n")) {
        sweep_free(&sw);
        return;
    }
    a = &sw.trials[0].arch;
    CHECK(a->n_layers == 6 && a->layers[2].kind == FS_LAYER_GRU && a->layers[3].kind == FS_LAYER_LSTM &&
          a->layers[5].kind == FS_LAYER_LSTM && !a->layers[5].bidir);
    CHECK(!strcmp(sw.trials[0].config, s3.trials[0].config));
    sweep_assign_ids(&sw, 5);
    sweep_assign_ids(&s3, 5);
    CHECK(!strcmp(sw.trials[0].id, s3.trials[0].id));
    CHECK_CONTAINS(sw.canonical, "- gru: {units: 8, layers: 2}\n      - lstm: {units: 4, bidirectional: false, layers: 3}");
    sweep_free(&s3);
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3, dense: 0, lstm: 6, recurrent_layers: [1, 2]}\n"))
        return;
    CHECK(sw.n_trials == 2 && sw.trials[0].arch.n_layers == 3 && sw.trials[1].arch.n_layers == 4);
    CHECK(sw.trials[1].arch.layers[2].kind == FS_LAYER_LSTM && sw.trials[1].arch.layers[3].kind == FS_LAYER_LSTM);
    CHECK(strstr(sw.canonical, "recurrent_layers: [1, 2]") != NULL);
    sweep_free(&sw);
    /* Attention (#46), in both forms: a layer list's names its heads and
     * key_dim and may name max_distance, dropout and epsilon (else the
     * model's attention_* options and bn_epsilon apply); the structured
     * `attention` puts that many after the recurrent layers. */
    if (load(&sw, CHAIN "model:\n  attention_max_distance: 12\n  layers:\n"
                        "    - [{conv1d: {filters: 8, width: 3}}, {attention: {heads: 2, key_dim: 8}}]\n"
                        "    - [{conv1d: {filters: 8, width: 3}}, {attention: {heads: 4, key_dim: 4, max_distance: 64,"
                        " dropout: 0.1, epsilon: 0.00001}}]\n"))
        return;
    CHECK(sw.n_trials == 2);
    a = &sw.trials[0].arch;
    CHECK(a->n_layers == 2 && a->layers[1].kind == FS_LAYER_ATTENTION && a->layers[1].heads == 2 &&
          a->layers[1].key_dim == 8 && a->layers[1].max_dist == 12 && a->layers[1].rate == 0.0f &&
          a->layers[1].eps == 1e-3f);
    a = &sw.trials[1].arch;
    CHECK(a->layers[1].heads == 4 && a->layers[1].key_dim == 4 && a->layers[1].max_dist == 64 &&
          a->layers[1].rate == 0.1f && a->layers[1].eps == 1e-5f);
    CHECK_CONTAINS(sw.trials[1].config, "{\"dropout\":0.1,\"epsilon\":1e-05,\"heads\":4,\"key_dim\":4,"
                                        "\"kind\":\"attention\",\"max_distance\":64}");
    CHECK_CONTAINS(sw.canonical, "- attention: {heads: 2, key_dim: 8}\n");
    CHECK_CONTAINS(sw.canonical, "- attention: {heads: 4, key_dim: 4, max_distance: 64, dropout: 0.1, epsilon: 1e-05}");
    CHECK_CONTAINS(sw.canonical, "attention_max_distance: 12");
    sweep_arch_summary(a, summary, sizeof summary);
    CHECK_CONTAINS(summary, "conv8x3-att4x4 swish chain rf whole");
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3, dense: 0, gru: 8, attention: [0, 2], attention_heads: 2}\n"))
        return;
    CHECK(sw.n_trials == 2 && sw.trials[0].arch.n_layers == 3 && sw.trials[1].arch.n_layers == 5);
    a = &sw.trials[1].arch;
    CHECK(a->layers[2].kind == FS_LAYER_GRU && a->layers[3].kind == FS_LAYER_ATTENTION &&
          a->layers[4].kind == FS_LAYER_ATTENTION && a->layers[4].heads == 2 && a->layers[4].key_dim == 16 &&
          a->layers[4].max_dist == 32);
    CHECK(strstr(sw.canonical, "attention: [0, 2]") != NULL && strstr(sw.canonical, "attention_heads: 2") != NULL &&
          strstr(sw.canonical, "attention_key_dim") == NULL);
    sweep_free(&sw);
    if (load(&sw, CHAIN "model: {depth: 2, filters: 8, kernel: 3}\n")) return;
    CHECK(strstr(sw.canonical, "attention") == NULL);
    sweep_free(&sw);
#undef CHAIN

    /* A layer list and the structured options that say the same thing give
     * the same trial: same config, same id. */
    FsSweep s2;
    if (load(&sw, DATA "model: {depth: 2, filters: 64, kernel: 5, dense: 128, activation: swish}\n")) return;
    if (load(&s2, DATA "model:\n  layers:\n    - conv1d: {filters: 64, width: 5, activation: swish}\n"
                       "    - conv1d: {filters: 64, width: 5}\n    - dense: {units: 128}\n")) {
        sweep_free(&sw);
        return;
    }
    CHECK(s2.n_trials == 1);
    sweep_assign_ids(&sw, 77);
    sweep_assign_ids(&s2, 77);
    CHECK(!strcmp(sw.trials[0].config, s2.trials[0].config));
    CHECK(!strcmp(sw.trials[0].id, s2.trials[0].id));
    sweep_free(&sw);
    sweep_free(&s2);
}

static void test_ids(void)
{
    const char *text = DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001}\n";
    FsSweep a, b;
    if (load(&a, text)) return;
    if (load(&b, text)) {
        sweep_free(&a);
        return;
    }
    sweep_assign_ids(&a, 0x1234);
    sweep_assign_ids(&b, 0x1234);
    for (int i = 0; i < a.n_trials; i++) {
        CHECK(strlen(a.trials[i].id) == 16);
        CHECK(strspn(a.trials[i].id, "0123456789abcdef") == 16);
        CHECK(!strcmp(a.trials[i].id, b.trials[i].id));
    }
    CHECK(strcmp(a.trials[0].id, a.trials[1].id) != 0);
    char id0[17];
    memcpy(id0, a.trials[0].id, 17);
    /* Another data fingerprint: other ids. */
    sweep_assign_ids(&b, 0x1235);
    CHECK(strcmp(id0, b.trials[0].id) != 0);
    sweep_free(&b);
    /* Any option that affects training changes the id. */
    const char *variants[] = {
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.002}\n",
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001, seed: 2}\n",
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001, batch_size: 9}\n",
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001, epochs: 3}\n",
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001, clip_norm: 1}\n",
        DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001, early_stopping: gl}\n",
        DATA "model: {filters: [8, 16], init: glorot}\ntraining: {learning_rate: 0.001}\n",
        DATA "model: {filters: [8, 16], kernel: 3}\ntraining: {learning_rate: 0.001}\n",
        "data: {synth: {proteins: 30, seed: 1}, window: 15}\nmodel: {filters: [8, 16]}\ntraining: {learning_rate: 0.001}\n",
        "data: {synth: {proteins: 30, seed: 1}, window: 13, split: predefined}\nmodel: {filters: [8, 16]}\n"
        "training: {learning_rate: 0.001}\n",
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        if (load(&b, variants[v])) continue;
        sweep_assign_ids(&b, 0x1234);
        CHECK_MSG(strcmp(id0, b.trials[0].id) != 0, "variant %zu keeps the id", v);
        sweep_free(&b);
    }
    /* Run-only options do not. */
    if (!load(&b, DATA "model: {filters: [8, 16]}\ntraining: {learning_rate: 0.001}\n"
                       "run: {threads: 7, backend: cpu, out: elsewhere}\n")) {
        sweep_assign_ids(&b, 0x1234);
        CHECK(!strcmp(id0, b.trials[0].id));
        CHECK(!strcmp(a.canonical, b.canonical));
        CHECK(b.threads == 7 && b.backend == FS_BACKEND_CPU && !strcmp(b.out_dir, "elsewhere"));
        sweep_free(&b);
    }
    sweep_free(&a);
}

static void test_canonical(void)
{
    const char *text =
        "# a comment\n"
        "data:\n  inputs: [../d/a.txt, /abs/b.txt]\n  format: records\n  window: 15\n  folds: 4\n  fold_seed: 9\n"
        "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3, activation: elu, elu_alpha: 0.5}}, batchnorm]\n"
        "    - [{conv1d: {filters: 8, width: 3}}, {dropout: {rate: 0.1}}, {highway: {width: 3, gate_bias: -3}}]\n"
        "training:\n  learning_rate: [0.1, 0.001]\n  optimizer: [adam, sgd]\n  early_stopping: {criterion: patience, patience: 3}\n"
        "search: {random: 5, seed: 11}\n"
        "run: {metric: loss, threads: 2}\n";
    FsSweep a, b;
    if (load_at(&a, text, "/some/dir/sweep.yaml", __LINE__)) return;
    CHECK(a.n_inputs == 2);
    if (a.n_inputs == 2) {
        CHECK(!strcmp(a.inputs[0], "/some/d/a.txt"));
        CHECK(!strcmp(a.inputs[1], "/abs/b.txt"));
    }
    CHECK_CONTAINS(a.canonical, "\"/some/d/a.txt\"");
    CHECK(strstr(a.canonical, "threads:") == NULL);
    CHECK_CONTAINS(a.canonical, "metric: loss");
    /* Reloads (from anywhere) to the same trials, ids and text. */
    if (load_at(&b, a.canonical, "elsewhere/sweep.yaml", __LINE__)) {
        sweep_free(&a);
        return;
    }
    CHECK(a.n_trials == 5 && b.n_trials == 5);
    sweep_assign_ids(&a, 5);
    sweep_assign_ids(&b, 5);
    for (int i = 0; i < a.n_trials && i < b.n_trials; i++) {
        CHECK(!strcmp(a.trials[i].config, b.trials[i].config));
        CHECK(!strcmp(a.trials[i].id, b.trials[i].id));
    }
    CHECK(!strcmp(a.canonical, b.canonical));
    char diff[2048];
    CHECK(sweep_diff(a.canonical, b.canonical, diff, sizeof diff) == 0);
    CHECK(diff[0] == '\0');
    CHECK(b.metric == FS_METRIC_LOSS && b.folds == 4 && b.fold_seed == 9 && b.window == 15);
    sweep_free(&b);

    /* A changed option is listed. */
    const char *changed =
        "data:\n  inputs: [../d/a.txt, /abs/b.txt]\n  format: records\n  window: 15\n  folds: 4\n  fold_seed: 9\n"
        "model:\n  layers:\n    - [{conv1d: {filters: 8, width: 3, activation: elu, elu_alpha: 0.5}}, batchnorm]\n"
        "    - [{conv1d: {filters: 16, width: 3}}, {dropout: {rate: 0.1}}, {highway: {width: 3, gate_bias: -3}}]\n"
        "training:\n  learning_rate: [0.1, 0.002]\n  optimizer: [adam, sgd]\n  early_stopping: {criterion: patience, patience: 3}\n"
        "search: {random: 5, seed: 11}\n";
    if (!load_at(&b, changed, "/some/dir/sweep.yaml", __LINE__)) {
        int n = sweep_diff(a.canonical, b.canonical, diff, sizeof diff);
        CHECK_MSG(n == 3, "%d differences:\n%s", n, diff);
        CHECK_CONTAINS(diff, "training.learning_rate: [0.1, 0.001] -> [0.1, 0.002]\n");
        CHECK_CONTAINS(diff, "model.layers[2][1].conv1d.filters: 8 -> 16\n");
        CHECK_CONTAINS(diff, "run.metric: loss -> q3\n");
        sweep_free(&b);
    }
    /* Absent keys and an unreadable text are differences too. */
    CHECK(sweep_diff("a: 1\nb: 2\n", "a: 1\nc: 3\n", diff, sizeof diff) == 2);
    CHECK_CONTAINS(diff, "b: 2 -> (absent)");
    CHECK_CONTAINS(diff, "c: (absent) -> 3");
    CHECK(sweep_diff(a.canonical, "data: [", diff, sizeof diff) >= 1);
    sweep_free(&a);

    /* Extending a run: model, training, search.random and the pruner may
     * change; data, search.seed, run.metric and a sweep with search.stop
     * may not, each named with why. */
    static const char *const ext_a = "data:\n  folds: 3\nmodel:\n  filters: 8\nsearch:\n  random: 4\n  seed: 1\n"
                                     "run:\n  metric: q3\n";
    CHECK(sweep_diff_fixed(ext_a, "data:\n  folds: 3\nmodel:\n  filters: [8, 16]\nsearch:\n  random: 8\n  seed: 1\n"
                                  "  pruner: {kind: median}\nrun:\n  metric: q3\n", diff, sizeof diff) == 0);
    CHECK(diff[0] == '\0');
    CHECK(sweep_diff_fixed(ext_a, "data:\n  folds: 4\nmodel:\n  filters: [8, 16]\nsearch:\n  random: 4\n  seed: 2\n"
                                  "run:\n  metric: loss\n", diff, sizeof diff) == 3);
    CHECK_CONTAINS(diff, "data.folds: 3 -> 4 (");
    CHECK_CONTAINS(diff, "search.seed: 1 -> 2 (");
    CHECK_CONTAINS(diff, "run.metric: q3 -> loss (");
    CHECK(!strstr(diff, "model.filters"));
    CHECK(sweep_diff_fixed(ext_a, "data:\n  folds: 3\nmodel:\n  filters: [8, 16]\nsearch:\n  random: 4\n  seed: 1\n"
                                  "  stop: {after: 3}\nrun:\n  metric: q3\n", diff, sizeof diff) == 2);
    CHECK_CONTAINS(diff, "model.filters: 8 -> [8, 16] (search.stop and search.replicates");

    /* Equal spellings, equal canonical text: [x] is x, 0.10 is 0.1, key order free. */
    FsSweep c, d;
    if (load(&c, DATA "training: {learning_rate: [0.10], batch_size: 8}\nmodel: {filters: [16]}\n")) return;
    if (!load(&d, "model: {filters: 16}\ntraining: {batch_size: 8, learning_rate: 0.1}\n" DATA)) {
        CHECK(!strcmp(c.canonical, d.canonical));
        sweep_free(&d);
    }
    sweep_free(&c);
}

static void test_shorthands(void)
{
    FsSweep sw;
    if (load(&sw, "data: {files: x.txt, window: 9}\ntraining: {early_stopping: gl}\n"
                  "model: {layers: [{conv1d: {filters: 4, width: 3}}]}\n")) return;
    CHECK(sw.n_inputs == 1 && sw.n_trials == 1);
    CHECK(sw.trials[0].train.stop.kind == FS_STOP_GL);
    CHECK(sw.trials[0].arch.n_layers == 1);
    sweep_free(&sw);
    if (load(&sw, "data: {sequences: s.fa, labels: l.fa, mask: m.fa, split: predefined}\n")) return;
    CHECK(sw.format == FS_FMT_FASTA && sw.predefined && sw.sequences && sw.labels && sw.mask);
    CHECK_CONTAINS(sw.canonical, "split: predefined");
    sweep_free(&sw);
    if (load(&sw, "data: {prepared: folds.prep, window: 11}\n")) return;
    CHECK(sw.prepared != NULL && sw.window == 11);
    sweep_free(&sw);
}

int main(void)
{
    test_grid();
    test_duplicates_dropped();
    test_random();
    test_trial_contents();
    test_layers();
    test_ids();
    test_canonical();
    test_shorthands();
    return test_finish();
}
