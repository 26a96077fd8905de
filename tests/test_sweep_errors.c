/*
 * test_sweep_errors.c: every kind of bad sweep file is refused with
 * "FILE:LINE:COL: message" pointing at the offending key or value, all
 * problems are reported at once (in file order), and nothing is expanded.
 * Also the checks that need the data (more folds than proteins), and the
 * data files' problems, placed at the file's name in the sweep.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "test.h"
#include "test_proc.h"
#include "test_sweep_expect.h"


#define D "data: {synth: {proteins: 30}, window: 13}\n"
#define C "data: {synth: {proteins: 30}, window: chain}\n"

static void test_keys(void)
{
    EXPECT(D "training:\n  learning_rat: 0.1\n", "3:3", "unknown key 'learning_rat' in training (did you mean 'learning_rate'?)");
    EXPECT(D "trainig: {epochs: 2}\n", "2:1", "unknown key 'trainig' in the sweep (did you mean 'training'?)");
    EXPECT(D "model:\n  fliters: 8\n", "3:3", "(did you mean 'filters'?)");
    EXPECT(D "training:\n  early_stopping: {criterion: gl, alpah: 3}\n", "3:35", "(did you mean 'alpha'?)");
    EXPECT(D "model:\n  zzzzzz: 1\n", "3:3", "unknown key 'zzzzzz' in model");
    /* Another section's key, and Keras' names for ours: pointed to where it goes. */
    EXPECT(D "model:\n  batch_size: 8\n", "3:3", "unknown key 'batch_size' in model (it belongs in training)");
    EXPECT(D "batch_size: 8\n", "2:1", "unknown key 'batch_size' in the sweep (it belongs in training)");
    EXPECT(D "training:\n  patience: 3\n", "3:3", "(it belongs in training.early_stopping)");
    EXPECT(D "run: {folds: 3}\n", "2:7", "unknown key 'folds' in run (it belongs in data)");
    EXPECT(D "training:\n  lr: 0.01\n", "3:3", "unknown key 'lr' in training (foldsweep's name: training.learning_rate)");
    EXPECT(D "model:\n  units: 8\n", "3:3", "(foldsweep's name: model.filters");
    EXPECT(D "model:\n  kernel_size: 5\n", "3:3", "(foldsweep's name: model.kernel)");
    { /* inside a section's own mapping no key is "misplaced": pruner.seed is not training.seed */
        FsSweep sw;
        char why[512];
        CHECK(sweep_text(&sw, D "search: {pruner: {kind: median, seed: 2}}\n", why, sizeof why) == -1);
        CHECK_MSG(strstr(why, "s.yaml:2:33: unknown key 'seed' in search.pruner") && !strstr(why, "belongs"), "%s", why);
    }
    /* Keras Tuner's and Optuna's words for a range's ends. */
    EXPECT(D "training:\n  learning_rate: {min_value: 0.001, max_value: 0.01}\n", "3:19",
           "unknown key 'min_value' in training.learning_rate's range (foldsweep's word: low)");
    EXPECT(D "training:\n  learning_rate: {low: 0.001, high: 0.01, sampling: log}\n", "3:43",
           "unknown key 'sampling' in training.learning_rate's range (foldsweep's word: log: true)");
    /* Optuna's and Keras Tuner's names: the budget, the one objective (run.metric: its nearest key,
     * run.objectives, is a Pareto front), the sampler and pruner classes, Keras' callbacks. */
    EXPECT_NTH(1, D "search: {n_trials: 40}\n", "2:10", "unknown key 'n_trials' in search (foldsweep's name: search.random");
    EXPECT(D "n_trials: 40\n", "2:1", "unknown key 'n_trials' in the sweep (foldsweep's name: search.random");
    EXPECT(D "search: {random: 4, max_trials: 40}\n", "2:21", "(foldsweep's name: search.random");
    EXPECT(D "run: {objective: q3}\n", "2:7", "unknown key 'objective' in run (foldsweep's name: run.metric, the one");
    EXPECT(D "search: {random: 4, sampler: TPESampler}\n", "2:30",
           "search.sampler: expected random or tpe (Optuna's TPESampler is foldsweep's tpe)");
    EXPECT(D "search: {pruner: MedianPruner}\n", "2:18",
           "search.pruner: expected none, median, asha or folds (Optuna's MedianPruner is foldsweep's median)");
    EXPECT(D "search: {pruner: {kind: SuccessiveHalvingPruner}}\n", "2:25", "(Optuna's SuccessiveHalvingPruner is "
                                                                         "foldsweep's asha)");
    { /* a sampler's class as the pruner is no pruner's name */
        FsSweep sw;
        char why[512];
        CHECK(sweep_text(&sw, D "search: {pruner: TPESampler}\n", why, sizeof why) == -1);
        CHECK_MSG(strstr(why, "s.yaml:2:18: search.pruner: expected none") && !strstr(why, "Optuna"), "%s", why);
    }
    EXPECT(D "training:\n  callbacks: [EarlyStopping]\n", "3:3",
           "unknown key 'callbacks' in training (foldsweep's name: training.early_stopping");
    /* Keras' EarlyStopping(patience=3) without a criterion stopped nothing. */
    EXPECT(D "training:\n  early_stopping: {patience: 3}\n", "3:19",
           "training.early_stopping: no criterion, so no early stopping (criterion: none); add criterion: patience");
    EXPECT(D "training:\n  early_stopping: {alpha: 3}\n", "3:19", "add criterion: gl");
    EXPECT("data: {synth: {proteins: 30}, windw: 13}\n", "1:31", "(did you mean 'window'?)");
    EXPECT(D "run: {thread: 2}\n", "2:7", "(did you mean 'threads'?)");
    EXPECT(D "search: {random: 2, sed: 1}\n", "2:21", "(did you mean 'seed'?)");
    EXPECT(D "training:\n  epochs: 2\n  epochs: 3\n", "4:3", "duplicate key 'epochs' (first at line 3)");
    /* Seeds past 2^64-1 are refused, not wrapped or clamped. */
    EXPECT(D "training:\n  seed: 18446744073709551616\n", "3:9", "training.seed: expected a whole number");
    EXPECT("data:\n  synth: {proteins: 30, seed: 99999999999999999999}\n  window: 7\n", "2:31",
           "data.synth.seed");
    /* !hex (how the canonical sweep keeps a non-UTF-8 path) must hold bytes. */
    EXPECT("data:\n  inputs: [!hex \"2f7\"]\n  window: 7\n", "2:12", "!hex: expected pairs of hex digits");
    EXPECT("data:\n  inputs: [!hex \"2f00\"]\n  window: 7\n", "2:12", "!hex: expected pairs of hex digits");
    /* A mapping with 40,000 keys: the duplicate at its end is found (the
     * check is a hash set, not a scan of every earlier key). */
    size_t cap = 40000 * 16 + 64, len = 0;
    char *big = malloc(cap);
    len += (size_t)snprintf(big + len, cap - len, "run:\n  note: {");
    for (int i = 0; i < 40000; i++) len += (size_t)snprintf(big + len, cap - len, "k%d: 1, ", i);
    snprintf(big + len, cap - len, "k17: 2}\n");
    EXPECT(big, "2:428900", "duplicate key 'k17' (first at line 2)");
    free(big);
}

static void test_values(void)
{
    EXPECT(D "training:\n  batch_size: eight\n", "3:15", "training.batch_size: expected an integer from 1 to 65536, got 'eight'");
    EXPECT(D "training:\n  batch_size: 0\n", "3:15", "training.batch_size: expected an integer from 1 to 65536, got '0'");
    EXPECT(D "training:\n  learning_rate: -0.01\n", "3:18", "training.learning_rate: expected a number > 0, got '-0.01'");
    EXPECT(D "training:\n  learning_rate: \"0.1\"\n", "3:18",
           "expected a number > 0, got \"0.1\" in quotes, which YAML reads as text; write it without the quotes");
    EXPECT(D "training:\n  epochs: '5'\n", "3:11", "got \"5\" in quotes, which YAML reads as text");
    EXPECT(D "training:\n  epochs: \"0\"\n", "3:11", "expected an integer from 1 to 100000, got '0'"); /* wrong either way */
    /* Case is no edit: Keras' and Python's spellings get ours as the hint. */
    EXPECT(D "model:\n  activation: ReLU\n", "3:15", "got 'ReLU' (did you mean 'relu'?)");
    EXPECT(D "training:\n  optimizer: SGD\n", "3:14", "(did you mean 'sgd'?)");
    EXPECT(D "model:\n  batchnorm: True\n", "3:14", "expected true or false, got 'True' (did you mean 'true'?)");
    EXPECT(D "training:\n  learning_rate: [0.1, 0, 0.2]\n", "3:24", "training.learning_rate[2]: expected a number > 0");
    EXPECT(D "training:\n  learning_rate: []\n", "3:18", "empty list");
    EXPECT(D "training:\n  learning_rate: {a: 1}\n", "3:18", "got a mapping");
    EXPECT(D "training:\n  optimizer: adma\n", "3:14", "expected sgd, adam or adamw, got 'adma' (did you mean 'adam'?)");
    EXPECT(D "training:\n  epochs: 2.5\n", "3:11", "training.epochs: expected an integer");
    EXPECT(D "training:\n  seed: -1\n", "3:9", "training.seed: expected a whole number");
    EXPECT(D "training:\n  early_stopping: {criterion: gl, alpha: 0}\n", "3:42", "early_stopping.alpha: expected a number > 0");
    EXPECT(D "training:\n  early_stopping: {criterion: pq, strip: 65}\n", "3:42", "strip: expected an integer from 1 to 64");
    EXPECT(D "training:\n  early_stopping: sometimes\n", "3:19", "expected none, gl, pq, up or patience");
    EXPECT(D "model:\n  dropout: 1.0\n", "3:12", "model.dropout: expected a rate >= 0 and < 1, got '1.0'");
    EXPECT(D "model:\n  activation: swsh\n", "3:15", "(did you mean 'swish'?)");
    EXPECT(D "model:\n  batchnorm: yes\n", "3:14", "expected true or false");
    EXPECT(D "model:\n  kernel: 4\n", "3:11", "model.kernel: 4 is even");
    EXPECT(D "model:\n  depth: 0\n", "3:10", "model.depth: expected an integer from 1 to 16");
}

static void test_data_section(void)
{
    EXPECT("data: {synth: {proteins: 30}, window: 16}\n", "1:39", "data.window: 16 is even");
    EXPECT("data: {synth: {proteins: 30}, window: 0}\n", "1:39", "data.window: expected an odd integer");
    EXPECT("data: {synth: {proteins: 30}, folds: 1}\n", "1:38", "data.folds: expected an integer from 2 to 255");
    EXPECT("data: {window: 13}\n", "1:7", "data: no data");
    EXPECT("data: {inputs: [a], prepared: b}\n", "1:7", "give exactly one of");
    EXPECT("data: {inputs: [a], format: xml}\n", "1:29", "data.format: expected auto, uci, fasta, records or csv");
    EXPECT("data: {sequences: s}\n", "1:7", "a FASTA set needs 'labels'");
    EXPECT("data: {inputs: [a], split: random}\n", "1:28", "data.split: expected kfold");
    EXPECT("data: {prepared: p, folds: 3}\n", "1:28", "data.folds: has no effect with a prepared file");
    EXPECT("data: {synth: {proteins: 0}}\n", "1:26", "data.synth.proteins");
    EXPECT("model: {depth: 2}\n", "1:1", "missing section 'data'");
    EXPECT("- a\n- b\n", "1:1", "a sweep file is a mapping");
    EXPECT("", "1:1", "a sweep file is a mapping");
}

static void test_model(void)
{
    /* The kernel list's second value is the one too wide. */
    EXPECT("data: {synth: {proteins: 30}, window: 5}\nmodel:\n  kernel: [3, 7]\n", "3:15",
           "model.kernel: width 7 is wider than the window (5)");
    /* The default kernel (5) against a window of 3: pointed at the window. */
    EXPECT("data: {synth: {proteins: 30}, window: 3}\n", "1:39", "width 5 (the default) is wider than the window (3)");
    EXPECT(D "model:\n  depth: 16\n  batchnorm: true\n", "3:10", "at most 16");
    EXPECT(D "model:\n  filters: 8\n  layers: [[{conv1d: {filters: 8, width: 3}}]]\n", "3:3",
           "model.filters cannot be combined with model.layers");
    EXPECT(D "model:\n  layers:\n    - - conv2d: {filters: 8, width: 3}\n", "4:9",
           "unknown layer kind 'conv2d' (did you mean 'conv1d'?); expected conv1d, dense, dropout, batchnorm, "
           "highway, add, layernorm, gru, lstm or attention");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - layernorm: {epsilon: 0}\n", "5:30",
           "model.layers[1][2].epsilon");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - layernorm: {momentum: 0.9}\n",
           "5:21", "unknown key 'momentum'");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {width: 3}\n", "4:9", "model.layers[1][1] (conv1d): missing 'filters'");
    /* GRUs (#46): chain models only, units required and in range, bidirectional a boolean. */
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 8}\n", "4:7",
           "layer 2 (gru): recurrent layers belong to chain models");
    EXPECT(D "model: {gru: 8}\n", "2:14", "model.gru: recurrent layers belong to chain models");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {bidirectional: true}\n",
           "5:9", "model.layers[1][2] (gru): missing 'units'");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 0}\n", "5:22",
           "a gru needs at least 1 unit");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 2000}\n", "5:22",
           "model.layers[1][2].units");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 8, bidirectional: 2}\n",
           "5:40", "model.layers[1][2].bidirectional");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 8, width: 3}\n",
           "5:25", "unknown key 'width' in model.layers[1][2] (gru)");
    /* LSTMs: the same rules, named as LSTMs. */
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - lstm: {units: 8}\n", "4:7",
           "layer 2 (lstm): recurrent layers belong to chain models");
    EXPECT(D "model: {lstm: [0, 8]}\n", "2:15", "model.lstm: recurrent layers belong to chain models");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - lstm: {units: 0}\n", "5:23",
           "an lstm needs at least 1 unit");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - lstm: {bidirectional: false}\n",
           "5:9", "model.layers[1][2] (lstm): missing 'units'");
    EXPECT(C "model: {lstm: 1025}\n", "2:15", "model.lstm: expected an integer from 0 (no LSTM) to 1024");
    /* Attention: chain models only, heads and key_dim required and in range. */
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - attention: {heads: 2, key_dim: 8}\n",
           "4:7", "layer 2 (attention): attention layers belong to chain models");
    EXPECT(D "model: {attention: 1}\n", "2:20", "model.attention: attention layers belong to chain models");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - attention: {heads: 2}\n", "5:9",
           "model.layers[1][2] (attention): missing 'key_dim'");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - attention: {heads: 17, key_dim: 8}\n",
           "5:28", "model.layers[1][2].heads: expected an integer from 1 to 16");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n"
             "      - attention: {heads: 2, key_dim: 8, max_distance: 0}\n",
           "5:57", "model.layers[1][2].max_distance: expected an integer from 1 to 128");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n"
             "      - attention: {heads: 2, key_dim: 8, dropout: 1}\n",
           "5:52", "model.layers[1][2].dropout: expected a rate >= 0 and < 1");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n"
             "      - attention: {heads: 2, key_dim: 8, units: 4}\n",
           "5:43", "unknown key 'units' in model.layers[1][2] (attention)");
    EXPECT(C "model: {attention: 1, attention_key_dim: 300}\n", "2:42",
           "model.attention_key_dim: expected an integer from 1 to 256");
    /* `layers` stacks a recurrent layer: 1 to 8, and the list's layers then at most 16. */
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 8, layers: 0}\n",
           "5:33", "model.layers[1][2].layers: expected an integer from 1 to 8");
    EXPECT(C "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3}\n      - gru: {units: 8, layers: 8}\n"
             "      - lstm: {units: 8, layers: 8}\n",
           "4:7", "model.layers[1]: 17 layers with the recurrent layers' `layers`; at most 16");
    EXPECT(C "model: {lstm: 8, recurrent_layers: 0}\n", "2:36", "model.recurrent_layers: expected an integer from 1");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 15}\n", "4:37",
           "kernel width 15 is wider than the window (13)");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: 3, units: 4}\n", "4:40",
           "unknown key 'units' in model.layers[1][1] (conv1d)");
    EXPECT(D "model:\n  layers:\n    - - dense: {units: 8}\n      - conv1d: {filters: 8, width: 3}\n", "4:7",
           "model.layers[1]: layer 2 (conv1d): kernel width must be odd and at most the input length 1");
    EXPECT(D "model:\n  layers:\n    - - dropout: {rate: 0.5}\n", "4:7", "the first layer must be conv1d or dense");
    EXPECT(D "model:\n  layers: []\n", "3:11", "model.layers: expected a list of layer lists");
}

static void test_all_at_once(void)
{
    const char *text = "data:\n  synth: {proteins: 30}\n  window: 16\n"
                       "model:\n  kernel: [3, 4]\n  fliters: 8\n"
                       "training:\n  learning_rat: 0.1\n  batch_size: 0\n  learning_rate: -1\n";
    FsSweep sw;
    FsErrList e = {0};
    CHECK(sweep_load_string(&sw, text, "t.yaml", &e) == -1);
    CHECK_MSG(e.n == 6, "%d messages", e.n);
    /* In file order. */
    const char *pos[] = {"t.yaml:3:11: ", "t.yaml:5:15: ", "t.yaml:6:3: ", "t.yaml:8:3: ", "t.yaml:9:15: ", "t.yaml:10:18: "};
    for (int i = 0; i < e.n && i < 6; i++)
        CHECK_MSG(!strncmp(e.msg[i], pos[i], strlen(pos[i])), "message %d: %s", i, e.msg[i]);
    char joined[4096];
    errlist_join(&e, joined, sizeof joined);
    CHECK_CONTAINS(joined, "did you mean 'learning_rate'");
    CHECK_CONTAINS(joined, "\nt.yaml:9:15: ");
    errlist_free(&e);
}

static void test_syntax(void)
{
    EXPECT(D "model: [1, 2\n", "3:1", "YAML syntax error");
    EXPECT(D "model:\n  depth: 2\n   filters: 3\n", "4:11", "YAML syntax error");
    EXPECT(D "x: &a 1\ny: *a\n", "2:4", "anchors");
    EXPECT(D "---\ndata: 1\n---\ndata: 2\n", "2:1", "several documents");

    FsSweep sw;
    FsErrList e = {0};
    CHECK(sweep_load_file(&sw, "/nonexistent/sweep.yaml", &e) == -1);
    CHECK(e.n == 1);
    if (e.n) CHECK_CONTAINS(e.msg[0], "/nonexistent/sweep.yaml: cannot open the sweep file");
    errlist_free(&e);
}

static void test_search(void)
{
    EXPECT(D "search: {random: 0}\n", "2:18", "search.random: expected an integer from 1 to 100000");
    EXPECT(D "search: {seed: 3}\n", "2:9", "search: missing 'random'");
    /* Too big to enumerate: sample it. */
    EXPECT(D "model: {filters: [1,2,3,4,5,6,7,8,9,10], dense: [1,2,3,4,5,6,7,8,9,10]}\n"
             "training: {learning_rate: [1,2,3,4,5,6,7,8,9,10], batch_size: [1,2,3,4,5,6,7,8,9,10],\n"
             "  epochs: [1,2,3,4,5,6,7,8,9,10], eval_batch: [1,2,3,4,5,6,7,8,9,10], seed: [1,2,3,4,5,6,7,8,9,10]}\n",
           "1:1", "the grid has 10000000 points (more than 1000000); sample it with search: {random: N}");
    EXPECT(D "run: {metric: accuracy}\n", "2:15", "run.metric: expected q3");
    EXPECT(D "run: {backend: gpu}\n", "2:16", "run.backend: expected cpu, cuda or auto");
}

static void test_data_checks(void)
{
    FsSweep sw;
    FsErrList e = {0};
    FsDataset ds;
    /* Five folds of three proteins: refused at the line of `folds`. */
    const char *text = "data:\n  synth: {proteins: 3, seed: 2}\n  window: 13\n  folds: 5\n";
    if (sweep_load_string(&sw, text, "t.yaml", &e) == 0) {
        CHECK(sweep_load_data(&sw, &ds, &e) == -1);
        CHECK(e.n == 1);
        if (e.n) CHECK_CONTAINS(e.msg[0], "t.yaml:4:10: data.folds: 5 folds but the data has only 3 proteins");
        sweep_free(&sw);
    }
    errlist_free(&e);
    /* The same with the folds loaded by the sweep: fine. */
    text = "data:\n  synth: {proteins: 12, seed: 2}\n  window: 13\n  folds: 3\n";
    if (sweep_load_string(&sw, text, "t.yaml", &e) == 0) {
        CHECK(sweep_load_data(&sw, &ds, &e) == 0);
        if (!e.n) {
            CHECK(ds.n_folds == 3 && ds.n_prot == 12);
            CHECK(sweep_check_data(&sw, &ds, &e) == 0);
            /* Folds assigned by someone else with another k. */
            FsErr err = {0};
            CHECK(data_assign_folds(&ds, 4, 1, &err) == 0);
            CHECK(sweep_check_data(&sw, &ds, &e) == -1);
            if (e.n) CHECK_CONTAINS(e.msg[0], "t.yaml:4:10: data.folds: the sweep asks for 3 folds, the data has 4");
            data_free(&ds);
        }
        sweep_free(&sw);
    }
    errlist_free(&e);
    /* A predefined split on data without SET= headers. */
    text = "data: {synth: {proteins: 12}, split: predefined}\n";
    if (sweep_load_string(&sw, text, "t.yaml", &e) == 0) {
        CHECK(sweep_load_data(&sw, &ds, &e) == -1);
        CHECK(e.n == 2);
        if (e.n) CHECK_CONTAINS(e.msg[0], "t.yaml:1:7: data.split: predefined, but no protein");
        sweep_free(&sw);
    }
    errlist_free(&e);
    /* A missing input file: the reader's message. */
    if (sweep_load_string(&sw, "data: {inputs: [/nonexistent/x.txt]}\n", "t.yaml", &e) == 0) {
        CHECK(sweep_load_data(&sw, &ds, &e) == -1);
        CHECK(e.n == 1);
        if (e.n) CHECK_CONTAINS(e.msg[0], "/nonexistent/x.txt");
        sweep_free(&sw);
    }
    errlist_free(&e);
}

/* Writes DIR/s.yaml and loads it and its data, which must fail with one
 * message that starts "DIR/s.yaml:POS: ". The message (malloc'd), or an
 * empty string after a failed check. */
static char *data_fail(int line, const char *dir, const char *text, const char *pos)
{
    char path[4200], want[4300];
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    tp_write_text(path, text);
    FsSweep sw;
    FsDataset ds;
    FsErrList e = {0};
    char *msg = NULL;
    if (sweep_load_file(&sw, path, &e)) {
        CHECK_MSG(0, "line %d: the sweep does not load: %s", line, e.n ? e.msg[0] : "?");
    } else {
        CHECK_MSG(sweep_load_data(&sw, &ds, &e) == -1, "line %d: the data loaded", line);
        CHECK_MSG(e.n == 1, "line %d: %d messages", line, e.n);
        snprintf(want, sizeof want, "%s:%s: ", path, pos);
        if (e.n) {
            CHECK_MSG(!strncmp(e.msg[0], want, strlen(want)), "line %d: \"%s\" is not at %s", line, e.msg[0], pos);
            msg = strdup(e.msg[0]);
        }
        sweep_free(&sw);
    }
    errlist_free(&e);
    return msg ? msg : strdup("");
}

/* A data file that is missing, a folder, or not what was declared: the
 * message starts at the file's name in the sweep, names the key and the
 * file, and says what was expected (issue 26, item 7). */
static void test_data_files(void)
{
    char dir[4096], p[4300], hint[4400];
    tp_tmpdir(dir, sizeof dir, "sweep_files");
    snprintf(p, sizeof p, "%s/ok.data", dir);
    tp_write_text(p, ">p1\nACDEFGHIKLMNPQ\nHHHHEEEECCCCHH\n\n>p2\nACDEFGHIKLMNPQ\nCCCCHHHHEEEECC\n\n"
                     ">p3\nACDEFGHIKLMNPQ\nHHHHEEEECCCCHH\n\n");
    snprintf(p, sizeof p, "%s/seq.fasta", dir);
    tp_write_text(p, ">a\nACDEFGHIK\n>b\nLMNPQRSTV\n>c\nWYACDEFGH\n");
    snprintf(p, sizeof p, "%s/sub", dir);
    mkdir(p, 0755);
    snprintf(hint, sizeof hint, "(a relative name is read from the sweep file's folder, %s, not the working directory)",
             dir);
    char *m;

    /* Missing, second of a list, relative: its item, and where it was looked for. */
    m = data_fail(__LINE__, dir, "# a comment\ndata:\n  inputs: [ok.data, missing.data]\n  window: 7\n", "3:21");
    CHECK_CONTAINS(m, "data.inputs[2]: ");
    CHECK_CONTAINS(m, "/missing.data: cannot open: No such file or directory; expected an existing file");
    CHECK_CONTAINS(m, hint);
    free(m);
    /* A single name: the key without an index (`files` is `inputs`). */
    m = data_fail(__LINE__, dir, "data:\n  window: 7\n  files:   nothere.data\n", "3:12");
    CHECK_CONTAINS(m, "data.inputs: ");
    CHECK_CONTAINS(m, "/nothere.data: cannot open");
    CHECK_CONTAINS(m, hint);
    free(m);
    /* Absolute: no word of the sweep's folder. */
    m = data_fail(__LINE__, dir, "data: {inputs: [/nonexistent/x.data], window: 7}\n", "1:17");
    CHECK_CONTAINS(m, "data.inputs[1]: /nonexistent/x.data: cannot open");
    CHECK_CONTAINS(m, "; expected an existing file");
    CHECK_MSG(!strstr(m, "folder"), "\"%s\" speaks of a folder", m);
    free(m);
    /* A folder. */
    m = data_fail(__LINE__, dir, "data:\n  inputs:\n    - ok.data\n    - sub\n  window: 7\n", "4:7");
    CHECK_CONTAINS(m, "data.inputs[2]: ");
    CHECK_CONTAINS(m, "/sub: read error: Is a directory; expected a file, not a folder");
    free(m);
    /* There, but not what was declared: the reader's words, no hint. */
    m = data_fail(__LINE__, dir, "data:\n  inputs: [ok.data]\n  format: uci\n  window: 7\n", "2:12");
    CHECK_CONTAINS(m, "data.inputs[1]: ");
    CHECK_CONTAINS(m, "/ok.data: not ");
    CHECK_MSG(!strstr(m, "; expected an existing"), "\"%s\": a hint for a file that exists", m);
    free(m);
    /* A FASTA set: the file at fault, not the first. */
    m = data_fail(__LINE__, dir, "data:\n  sequences: seq.fasta\n  labels: lab.fasta\n  window: 7\n", "3:11");
    CHECK_CONTAINS(m, "data.labels: ");
    CHECK_CONTAINS(m, "/lab.fasta: cannot open");
    free(m);
    /* A prepared fold file that is not one. */
    m = data_fail(__LINE__, dir, "data:\n  window: 7\n  prepared: ok.data\n", "3:13");
    CHECK_CONTAINS(m, "data.prepared: ");
    CHECK_CONTAINS(m, "/ok.data: not a foldsweep prepared file");
    free(m);

    const char *names[] = {"ok.data", "seq.fasta", "s.yaml"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/sub", dir);
    rmdir(p);
    rmdir(dir);
}

int main(void)
{
    test_keys();
    test_values();
    test_data_section();
    test_model();
    test_all_at_once();
    test_syntax();
    test_search();
    test_data_checks();
    test_data_files();
    return test_finish();
}
