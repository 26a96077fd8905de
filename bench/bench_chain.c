/*
 * bench_chain: the same convolution stack as a window model and as a chain
 * model (issue #28 item 3), trained and predicting on one thread.
 *
 * R1's layers, conv1d(64, 5, swish) -> conv1d(64, 5, swish) ->
 * dense(128, swish) -> softmax, Adam 1e-3: the window model over windows
 * of 17 in batches of 8 (bench_r1's workload), the chain model over whole
 * chains in batches of --batch-residues rows (its dense layer acts per
 * residue). Data: the UCI training set (3 folds by protein, fold 0 run) or
 * FLIP's predefined split, optionally cut to its first N training and M
 * validation proteins (file order) so that a run stays short.
 *
 * Prints one JSON line per model: training residues per second (scored
 * residues trained on over the time of the training steps, validation
 * excluded), and predict residues per second (train_predict over the
 * training residues with the trained weights: one pass per chain for the
 * chain model, batches of 256 windows for the window model). bench/run-chain
 * runs it beside the PyTorch baseline (bench/chain_torch.py).
 *
 * usage: bench_chain (--uci FILE | --flip SEQ LABELS MASK) [--model window|chain]
 *        [--epochs N] [--batch N] [--batch-residues N] [--max-train N] [--max-valid N]
 *        [--dilation D] [--predict-reps N]   (D: the second convolution's dilation)
 *        [--gru U | --lstm U | --extra-conv F | --attention N]
 *
 * --gru U puts a bidirectional GRU of U units a direction between the
 * convolutions and the dense layer (#46 item 3; PyTorch's side:
 * chain_torch.py --gru U), --lstm U a bidirectional LSTM; --extra-conv F a third convolution (F filters,
 * width 5) there instead: a layer as wide as the GRU's 2U outputs, to
 * compare the recurrence's cost per residue with a convolution's.
 * --attention N puts N self-attention layers there (4 heads of 16, as wide
 * as the convolutions' 64 channels; max_distance 32; PyTorch's side:
 * chain_torch.py --attention N).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"
#include "metrics/metrics.h"
#include "train/train.h"

typedef struct {
    const char *uci, *seq, *lab, *mask;
    int chain, epochs, batch, batch_residues, predict_reps, dilation, gru, lstm, extra_conv, attention;
    long max_train, max_valid;
} Opts;

static int parse(Opts *o, int argc, char **argv)
{
    *o = (Opts){.chain = 1, .epochs = 3, .batch = 8, .batch_residues = FS_TRAIN_BATCH_RESIDUES, .predict_reps = 3,
                .dilation = 1, .max_train = -1, .max_valid = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const int more = argc - i - 1;
        if (!strcmp(a, "--uci") && more >= 1) o->uci = argv[++i];
        else if (!strcmp(a, "--flip") && more >= 3) o->seq = argv[++i], o->lab = argv[++i], o->mask = argv[++i];
        else if (!strcmp(a, "--model") && more >= 1) o->chain = !strcmp(argv[++i], "chain");
        else if (!strcmp(a, "--epochs") && more >= 1) o->epochs = atoi(argv[++i]);
        else if (!strcmp(a, "--batch") && more >= 1) o->batch = atoi(argv[++i]);
        else if (!strcmp(a, "--batch-residues") && more >= 1) o->batch_residues = atoi(argv[++i]);
        else if (!strcmp(a, "--max-train") && more >= 1) o->max_train = atol(argv[++i]);
        else if (!strcmp(a, "--max-valid") && more >= 1) o->max_valid = atol(argv[++i]);
        else if (!strcmp(a, "--dilation") && more >= 1) o->dilation = atoi(argv[++i]);
        else if (!strcmp(a, "--predict-reps") && more >= 1) o->predict_reps = atoi(argv[++i]);
        else if (!strcmp(a, "--gru") && more >= 1) o->gru = atoi(argv[++i]);
        else if (!strcmp(a, "--lstm") && more >= 1) o->lstm = atoi(argv[++i]);
        else if (!strcmp(a, "--extra-conv") && more >= 1) o->extra_conv = atoi(argv[++i]);
        else if (!strcmp(a, "--attention") && more >= 1) o->attention = atoi(argv[++i]);
        else return fprintf(stderr, "bench_chain: unknown option or missing value: %s\n", a), -1;
    }
    if (!o->uci == !o->seq) return fprintf(stderr, "bench_chain: give one of --uci FILE, --flip SEQ LABELS MASK\n"), -1;
    return 0;
}

/* FLIP cut to its first max_train training and max_valid validation
 * proteins: the others move to the test set, which neither model sees. */
static void cut_sets(FsDataset *ds, long max_train, long max_valid)
{
    long seen[4] = {0, 0, 0, 0};
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        const int s = ds->prot_set[p];
        const long cap = s == FS_SET_TRAIN ? max_train : s == FS_SET_VALID ? max_valid : -1;
        if (cap >= 0 && seen[s] >= cap) ds->prot_set[p] = FS_SET_TEST;
        else seen[s]++;
    }
}

static int load(FsDataset *ds, const Opts *o, int *fold)
{
    FsErr err = {0};
    const char *inputs[1] = {o->uci};
    FsLoadSpec spec = {o->uci ? FS_FMT_UCI : FS_FMT_FASTA, inputs, o->uci ? 1 : 0, o->seq, o->lab, o->mask};
    if (data_load(ds, &spec, &err) != 0) return fprintf(stderr, "bench_chain: %s\n", err.msg), -1;
    if (o->uci) {
        *fold = 0;
        if (data_assign_folds(ds, 3, 1, &err) != 0) return fprintf(stderr, "bench_chain: %s\n", err.msg), -1;
    } else {
        *fold = FS_FOLD_PREDEFINED;
        cut_sets(ds, o->max_train, o->max_valid);
    }
    return 0;
}

/* R1's layers; a chain model's dense layer acts per residue; a BiGRU or a
 * third convolution before it where asked, or attention layers. */
static void r1_arch(FsArch *arch, const Opts *o)
{
    const int chain = o->chain, dilation = o->dilation, gru = o->gru, lstm = o->lstm, extra_conv = o->extra_conv;
    memset(arch, 0, sizeof *arch);
    arch->chain = chain;
    arch->window = chain ? 0 : 17;
    arch->n_layers = 3;
    arch->layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH};
    arch->layers[1] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 64, .width = 5, .act = FS_ACT_SWISH,
                                    .dilation = dilation};
    arch->layers[2] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 128, .act = FS_ACT_SWISH};
    if (gru > 0 || lstm > 0 || extra_conv > 0) {
        arch->layers[3] = arch->layers[2];
        arch->layers[2] = gru > 0    ? (FsLayerSpec){.kind = FS_LAYER_GRU, .units = gru, .bidir = 1}
                          : lstm > 0 ? (FsLayerSpec){.kind = FS_LAYER_LSTM, .units = lstm, .bidir = 1}
                                     : (FsLayerSpec){.kind = FS_LAYER_CONV, .units = extra_conv, .width = 5,
                                                     .act = FS_ACT_SWISH};
        arch->n_layers = 4;
    }
    for (int k = 0; k < o->attention && arch->n_layers < FS_MAX_LAYERS; k++) {
        arch->layers[arch->n_layers] = arch->layers[arch->n_layers - 1]; /* the dense layer stays last */
        arch->layers[arch->n_layers - 1] =
            (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 4, .key_dim = 16, .max_dist = 32, .eps = 1e-5f};
        arch->n_layers++;
    }
}

/* The best of reps timings of train_predict over the fold's training
 * residues; residues/s. */
static double predict_rate(const FsNet *net, const float *w, const FsDataset *ds, int fold, int reps, uint32_t *n_out)
{
    uint32_t n = data_examples(ds, fold, 0, NULL);
    uint32_t *idx = malloc(sizeof *idx * (n ? n : 1));
    float *probs = malloc(sizeof *probs * FS_CLASSES * (n ? n : 1));
    data_examples(ds, fold, 0, idx);
    double best = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = fs_now();
        train_predict(net, w, ds, idx, n, 256, probs, NULL);
        double rate = (double)n / (fs_now() - t0);
        if (rate > best) best = rate;
    }
    free(idx);
    free(probs);
    *n_out = n;
    return best;
}

/* FNV-1a over the trained weights' bytes: two builds (or two runs) that
 * train alike print the same value (bit-identity checks of kernel changes). */
static uint64_t weights_hash(const float *w, long n)
{
    const unsigned char *p = (const unsigned char *)w;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(float) * (size_t)n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    Opts o;
    FsDataset ds;
    int fold = 0;
    if (parse(&o, argc, argv) != 0 || load(&ds, &o, &fold) != 0) return 2;
    FsArch arch;
    r1_arch(&arch, &o);
    FsTrainSpec ts;
    train_spec_defaults(&ts);
    ts.opt = FS_OPT_ADAM;
    ts.lr = 1e-3f;
    ts.batch = o.batch;
    ts.batch_residues = o.batch_residues;
    ts.stop.kind = FS_STOP_MAX_EPOCHS;
    ts.stop.max_epochs = o.epochs;
    ts.seed[0] = 1;

    FsFitResult res;
    train_result_alloc(&res, o.epochs);
    float *w = train_result_alloc_weights(&res, &arch);
    FsJob job = {&arch, &ts, &ds, fold, &res, w, NULL, NULL, NULL, NULL, NULL, 0, 0};
    if (!w || train_job(&job) != 0 || res.status != FS_FIT_OK) {
        fprintf(stderr, "bench_chain: %s %s\n", train_status_name(res.status), res.message);
        return 1;
    }
    FsNet net;
    FsErr err = {0};
    if ((o.chain ? train_chain_rows(&arch, &ts, data_longest_chain(&ds), &net, &err)
                 : model_compile(&net, &arch, o.batch, &err)) != 0) {
        fprintf(stderr, "bench_chain: %s\n", err.msg);
        return 1;
    }
    uint32_t n_pred = 0;
    double pred = predict_rate(&net, w, &ds, fold, o.predict_reps, &n_pred);
    const double train_s = res.seconds - res.val_seconds;
    printf("{\"framework\":\"foldsweep-cpu\",\"model\":\"%s\",\"data\":\"%s\",\"threads\":1,\"dilation\":%d,"
           "\"gru\":%d,\"lstm\":%d,\"extra_conv\":%d,\"attention\":%d,\"epochs\":%d,"
           "\"batch\":%d,\"batch_residues\":%d,\"train_residues\":%llu,\"train_seconds\":%.3f,"
           "\"train_residues_per_second\":%.1f,\"val_q3\":%.4f,\"predict_residues\":%u,"
           "\"predict_residues_per_second\":%.1f,\"params\":%ld,\"weights_fnv\":\"%016llx\"}\n",
           o.chain ? "chain" : "window", o.uci ? "uci" : "flip", o.dilation, o.gru, o.lstm, o.extra_conv, o.attention, res.epochs, o.chain ? 0 : o.batch,
           o.chain ? o.batch_residues : 0, (unsigned long long)res.train_examples, train_s,
           (double)res.train_examples / train_s, res.curves.val_q3[res.epochs - 1], n_pred, pred, net.n_params,
           (unsigned long long)weights_hash(w, net.n_params + net.n_state));
    train_result_free(&res);
    data_free(&ds);
    return 0;
}
