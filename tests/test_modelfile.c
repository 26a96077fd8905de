/*
 * test_modelfile: the model file's tensor names, shapes and element
 * mapping (docs/models.md) on a net with every layer kind, a bit-exact
 * round trip of weights and metadata, and a clear error for files that are
 * not foldsweep models or disagree with their architecture.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "data/data.h"
#include "modelfile/modelfile.h"
#include "safetensors/safetensors.h"
#include "test.h"

/* conv(4, 3, relu) > batchnorm > highway(3, tanh) > dropout > dense(5, swish) > layernorm > output, window 7. */
static FsArch test_arch(void)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.window = 7;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_BATCHNORM, .eps = 1e-3f, .momentum = 0.99f};
    a.layers[2] = (FsLayerSpec){.kind = FS_LAYER_HIGHWAY, .width = 3, .act = FS_ACT_TANH, .gate_bias = -1.0f};
    a.layers[3] = (FsLayerSpec){.kind = FS_LAYER_DROPOUT, .rate = 0.25f};
    a.layers[4] = (FsLayerSpec){.kind = FS_LAYER_DENSE, .units = 5, .act = FS_ACT_SWISH};
    a.layers[5] = (FsLayerSpec){.kind = FS_LAYER_LAYERNORM, .eps = 1e-5f};
    a.n_layers = 6;
    return a;
}

static float tensor_at(const FsSafetensors *st, const char *name, long i)
{
    const FsTensor *t = safetensors_find(st, name);
    float v = NAN;
    if (t) memcpy(&v, (const char *)t->data + 4 * i, 4);
    return v;
}

static void test_layout(const FsNet *net, const uint8_t *bytes, uint64_t n)
{
    FsSafetensors st;
    FsErr err = {0};
    uint8_t *copy = malloc(n);
    memcpy(copy, bytes, n);
    CHECK(safetensors_parse(&st, copy, n, "mem", &err) == 0);
    /* The nn.Sequential: 0 Conv1d, 1 ReLU, 2 BatchNorm1d, 3 Highway, 4 Dropout,
     * 5 Flatten, 6 Linear, 7 SiLU, 8 LayerNorm, 9 Linear (the output). */
    static const char *names[] = {"0.weight",   "0.bias",     "2.weight",     "2.bias",       "2.running_mean",
                                  "2.running_var", "3.h.weight", "3.h.bias",  "3.t.weight",   "3.t.bias",
                                  "6.weight",   "6.bias",     "8.weight",     "8.bias",       "9.weight",
                                  "9.bias"};
    CHECK(st.n_tensors == 17); /* and the leakage guard's fingerprints */
    const FsTensor *seen = safetensors_find(&st, "foldsweep.seen_proteins");
    CHECK(seen && !strcmp(seen->dtype, "U64") && seen->ndim == 1 && seen->shape[0] == 3);
    for (int i = 0; i < 16 && i < st.n_tensors; i++)
        CHECK_MSG(!strcmp(st.tensors[i].name, names[i]), "tensor %d is %s, expected %s", i, st.tensors[i].name,
                  names[i]);
    const FsTensor *t = safetensors_find(&st, "0.weight");
    CHECK(t && t->ndim == 3 && t->shape[0] == 4 && t->shape[1] == 21 && t->shape[2] == 3 && !strcmp(t->dtype, "F32"));
    t = safetensors_find(&st, "3.t.weight");
    CHECK(t && t->ndim == 3 && t->shape[0] == 4 && t->shape[1] == 4 && t->shape[2] == 3);
    t = safetensors_find(&st, "6.weight");
    CHECK(t && t->ndim == 2 && t->shape[0] == 5 && t->shape[1] == 28);
    t = safetensors_find(&st, "8.weight");
    CHECK(t && t->ndim == 1 && t->shape[0] == 5);
    t = safetensors_find(&st, "9.weight");
    CHECK(t && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 5);
    /* Weights hold their own index: each PyTorch element names its source.
     * conv weight[f=1][c=2][k=0] <- W[(k*21 + c)*4 + f]. */
    CHECK(tensor_at(&st, "0.weight", 1 * 63 + 2 * 3 + 0) == (float)(net->layer[0].w + (0 * 21 + 2) * 4 + 1));
    CHECK(tensor_at(&st, "0.weight", 3 * 63 + 20 * 3 + 2) == (float)(net->layer[0].w + (2 * 21 + 20) * 4 + 3));
    /* dense weight[u=2][c*7 + q] with c=1, q=3 <- W[(q*4 + c)*5 + u] (PyTorch flattens channel-major). */
    CHECK(tensor_at(&st, "6.weight", 2 * 28 + 1 * 7 + 3) == (float)(net->layer[4].w + (3 * 4 + 1) * 5 + 2));
    /* highway gate: the second kernel; biases and BN statistics as they are. */
    CHECK(tensor_at(&st, "3.t.weight", 0) == (float)net->layer[2].w2);
    CHECK(tensor_at(&st, "3.t.bias", 3) == (float)(net->layer[2].b2 + 3));
    CHECK(tensor_at(&st, "2.running_var", 1) == (float)(net->layer[1].s_var + 1));
    CHECK(tensor_at(&st, "8.weight", 1) == (float)(net->layer[5].w + 1)); /* layer norm: gamma, beta */
    CHECK(tensor_at(&st, "8.bias", 4) == (float)(net->layer[5].b + 4));
    CHECK(tensor_at(&st, "9.bias", 2) == (float)(net->layer[6].b + 2));
    const char *arch = safetensors_meta(&st, "arch");
    CHECK(arch && strstr(arch, "\"kind\":\"highway\",\"width\":3,\"activation\":\"tanh\""));
    CHECK(safetensors_meta(&st, "format") && !strcmp(safetensors_meta(&st, "format"), "foldsweep-model"));
    CHECK(safetensors_meta(&st, "fold") && !strcmp(safetensors_meta(&st, "fold"), "2"));
    CHECK(safetensors_meta(&st, "classes") && !strcmp(safetensors_meta(&st, "classes"), "HEC"));
    CHECK(safetensors_meta(&st, "alphabet") && !strcmp(safetensors_meta(&st, "alphabet"), "ACDEFGHIKLMNPQRSTVWYX"));
    safetensors_free(&st);
}

static void test_round_trip(const FsNet *net, const float *w, const uint8_t *bytes, uint64_t n)
{
    FsSavedModel m;
    FsErr err = {0};
    uint8_t *copy = malloc(n);
    memcpy(copy, bytes, n);
    CHECK_MSG(modelfile_parse(&m, copy, n, "mem", 32, &err) == 0, "%s", err.msg);
    long nw = net->n_params + net->n_state;
    CHECK(m.net.n_params == net->n_params && m.net.n_state == net->n_state && m.net.max_batch == 32);
    CHECK(m.weights && memcmp(m.weights, w, sizeof(float) * (size_t)nw) == 0);
    CHECK(m.net.arch.n_layers == 6 && m.net.arch.window == 7);
    CHECK(m.net.arch.layers[5].kind == FS_LAYER_LAYERNORM && m.net.arch.layers[5].eps == 1e-5f);
    CHECK(m.net.arch.layers[0].act == FS_ACT_RELU && m.net.arch.layers[2].kind == FS_LAYER_HIGHWAY);
    CHECK(m.net.arch.layers[1].eps == 1e-3f && m.net.arch.layers[1].momentum == 0.99f);
    CHECK(m.net.arch.layers[3].rate == 0.25f);
    CHECK(!strcmp(m.info.trial, "0123456789abcdef") && m.info.fold == 2 && m.info.folds == 3);
    CHECK(m.info.best_epoch == 7 && m.info.val_q3 == 0.6543f && m.info.val_loss == 0.75f);
    CHECK(m.info.data_fingerprint == 0xfedcba9876543210ULL && m.info.trial_index == 11);
    CHECK(m.info.config && !strcmp(m.info.config, "{\"model\":{\"window\":7}}"));
    CHECK(m.info.n_seen == 3 && m.info.seen && m.info.seen[0] == 3 && m.info.seen[2] == 0xffffffffffffffffULL);
    modelfile_free(&m);
}

/* Files that are safetensors but not this architecture's model. */
static void test_refused(const FsNet *net, const float *w)
{
    FsErr err = {0};
    FsSavedModel m;
    /* No foldsweep metadata. */
    float one = 1.0f;
    FsTensor t = {.name = "x", .ndim = 1, .shape = {1}, .data = &one};
    uint8_t *b;
    uint64_t n;
    safetensors_serialize(&t, 1, NULL, 0, &b, &n);
    CHECK(modelfile_parse(&m, b, n, "plain.safetensors", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "plain.safetensors: not a foldsweep model");

    /* A model whose dense weight has the wrong shape for its architecture. */
    FsModelInfo info = {.trial = "ab", .fold = 0, .folds = 3};
    modelfile_serialize(net, w, &info, &b, &n);
    FsSafetensors st;
    CHECK(safetensors_parse(&st, b, n, "m", &err) == 0);
    FsTensor ts[16];
    FsMetaEntry meta[20];
    int nt = st.n_tensors, nm = st.n_meta;
    for (int i = 0; i < nt; i++) ts[i] = st.tensors[i];
    for (int i = 0; i < nm && i < 20; i++) meta[i] = st.meta[i];
    for (int i = 0; i < nt; i++)
        if (!strcmp(ts[i].name, "6.weight")) ts[i].shape[0] = 28, ts[i].shape[1] = 5; /* transposed */
    safetensors_serialize(ts, nt, meta, nm, &b, &n);
    memset(&err, 0, sizeof err);
    CHECK(modelfile_parse(&m, b, n, "bad.safetensors", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "bad.safetensors");
    CHECK_CONTAINS(err.msg, "6.weight");

    /* An architecture the metadata cannot describe. */
    for (int i = 0; i < nm; i++)
        if (!strcmp(meta[i].key, "arch")) meta[i].value = "{\"window\":7,\"layers\":[{\"kind\":\"lstm\"}]}";
    for (int i = 0; i < nt; i++)
        if (!strcmp(ts[i].name, "6.weight")) ts[i].shape[0] = 5, ts[i].shape[1] = 28;
    safetensors_serialize(ts, nt, meta, nm, &b, &n);
    memset(&err, 0, sizeof err);
    CHECK(modelfile_parse(&m, b, n, "arch.safetensors", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "layer 1 (lstm)");
    safetensors_free(&st);

    /* A truncated model file. */
    modelfile_serialize(net, w, &info, &b, &n);
    memset(&err, 0, sizeof err);
    CHECK(modelfile_parse(&m, b, n - 5, "cut.safetensors", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "cut.safetensors");
}

static void test_verify(const uint8_t *bytes, uint64_t n)
{
    char dir[] = "/tmp/fs_test_modelfile_XXXXXX", path[256], why[200];
    FsErr err = {0};
    if (!mkdtemp(dir)) return;
    snprintf(path, sizeof path, "%s/sub/m.safetensors", dir);
    char sub[200];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(fs_mkdir_p(sub, &err) == 0);
    CHECK(fs_write_file_atomic(path, bytes, (size_t)n, &err) == 0);
    uint32_t crc = modelfile_crc(bytes, n);
    CHECK(modelfile_verify(path, n, crc, why, sizeof why) == 0);
    CHECK(modelfile_verify(path, n + 1, crc, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "bytes, expected");
    CHECK(modelfile_verify(path, n, crc ^ 1, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "checksum");
    FsSavedModel m;
    CHECK(modelfile_load(&m, path, 4, &err) == 0);
    modelfile_free(&m);
    remove(path);
    CHECK(modelfile_verify(path, n, crc, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "missing");
    rmdir(sub);
    rmdir(dir);
}

/* conv1d(4, 3, relu), a bidirectional recurrent layer of kind k (3
 * units), a forward one (2). */
static FsArch rnn_arch(FsLayerKind k)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    a.layers[1] = (FsLayerSpec){.kind = k, .units = 3, .bidir = 1};
    a.layers[2] = (FsLayerSpec){.kind = k, .units = 2};
    a.n_layers = 3;
    return a;
}

/* A recurrent test's model file: arch a compiled, its weights w[i] = i,
 * serialised into *b (*n bytes) and parsed as safetensors into *st. */
static float *serialize_numbered(const FsArch *a, FsNet *net, long *nw, uint8_t **b, uint64_t *n, FsSafetensors *st)
{
    FsErr err = {0};
    CHECK_MSG(model_compile(net, a, 64, &err) == 0, "%s", err.msg);
    *nw = net->n_params + net->n_state;
    float *w = malloc(sizeof(float) * (size_t)*nw);
    for (long i = 0; i < *nw; i++) w[i] = (float)i;
    FsModelInfo info = {.trial = "ab", .fold = 0, .folds = 3};
    modelfile_serialize(net, w, &info, b, n);
    uint8_t *copy = malloc(*n);
    memcpy(copy, *b, *n);
    CHECK(safetensors_parse(st, copy, *n, "rnn", &err) == 0);
    return w;
}

/* A chain model's GRUs (#46): nn.GRU's names and layouts, a bidirectional
 * one's _reverse tensors, the round trip, and a bad `bidirectional` refused. */
static void test_gru(void)
{
    FsArch a = rnn_arch(FS_LAYER_GRU);
    FsNet net;
    FsErr err = {0};
    long nw;
    uint8_t *b;
    uint64_t n;
    FsSafetensors st;
    float *w = serialize_numbered(&a, &net, &nw, &b, &n, &st);
    /* 0 Conv1d, 1 ReLU, 2 GRU (bidirectional), 3 GRU, 4 the output's Conv1d. */
    const FsTensor *t = safetensors_find(&st, "2.rnn.weight_ih_l0_reverse");
    CHECK(t && t->ndim == 2 && t->shape[0] == 9 && t->shape[1] == 4);
    t = safetensors_find(&st, "2.rnn.weight_hh_l0");
    CHECK(t && t->ndim == 2 && t->shape[0] == 9 && t->shape[1] == 3);
    t = safetensors_find(&st, "3.rnn.weight_ih_l0");
    CHECK(t && t->ndim == 2 && t->shape[0] == 6 && t->shape[1] == 6);
    CHECK(safetensors_find(&st, "2.rnn.bias_hh_l0_reverse") && !safetensors_find(&st, "3.rnn.bias_hh_l0_reverse"));
    CHECK(safetensors_find(&st, "4.weight") && safetensors_find(&st, "4.bias"));
    /* weight_ih_l0_reverse[g=2][c=1] <- W_ih[c][3 x 3 + g] (rows of both directions' 18 gates);
     * weight_hh_l0_reverse[g=4][k=2] <- W_hh[1][k][g]; bias_hh_l0_reverse[5] <- b_hh[9 + 5]. */
    const FsLayer *g = &net.layer[1];
    CHECK(tensor_at(&st, "2.rnn.weight_ih_l0_reverse", 2 * 4 + 1) == (float)(g->w + 1 * 18 + 9 + 2));
    CHECK(tensor_at(&st, "2.rnn.weight_hh_l0_reverse", 4 * 3 + 2) == (float)(g->w2 + 27 + 2 * 9 + 4));
    CHECK(tensor_at(&st, "2.rnn.bias_hh_l0_reverse", 5) == (float)(g->b2 + 9 + 5));
    CHECK(tensor_at(&st, "3.rnn.weight_hh_l0", 5 * 2 + 1) == (float)(net.layer[2].w2 + 1 * 6 + 5));
    const char *arch = safetensors_meta(&st, "arch");
    CHECK(arch && strstr(arch, "{\"kind\":\"gru\",\"units\":3,\"bidirectional\":true}") &&
          strstr(arch, "{\"kind\":\"gru\",\"units\":2,\"bidirectional\":false}"));
    FsSavedModel m;
    uint8_t *own = malloc(n); /* the parse's to keep */
    memcpy(own, b, n);
    CHECK_MSG(modelfile_parse(&m, own, n, "gru", 64, &err) == 0, "%s", err.msg);
    CHECK(m.net.arch.chain && m.net.arch.layers[1].kind == FS_LAYER_GRU && m.net.arch.layers[1].bidir == 1 &&
          m.net.arch.layers[1].units == 3 && m.net.arch.layers[2].bidir == 0);
    CHECK(memcmp(m.weights, w, sizeof(float) * (size_t)nw) == 0);
    modelfile_free(&m);
    /* `bidirectional` not a boolean: refused, naming the layer. */
    FsTensor ts[32];
    FsMetaEntry meta[20];
    int nt = st.n_tensors, nm = st.n_meta;
    CHECK(nt <= 32 && nm <= 20);
    for (int i = 0; i < nt && i < 32; i++) ts[i] = st.tensors[i];
    for (int i = 0; i < nm && i < 20; i++) meta[i] = st.meta[i];
    char bad[1024];
    snprintf(bad, sizeof bad, "%s", arch);
    char *at = strstr(bad, "\"bidirectional\":true");
    CHECK(at != NULL);
    if (at) memcpy(at + 16, "1   ", 4);
    for (int i = 0; i < nm && i < 20; i++)
        if (!strcmp(meta[i].key, "arch")) meta[i].value = bad;
    uint8_t *b2;
    uint64_t n2;
    safetensors_serialize(ts, nt, meta, nm, &b2, &n2);
    memset(&err, 0, sizeof err);
    CHECK(modelfile_parse(&m, b2, n2, "bidir.safetensors", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "layer 2 (gru)");
    safetensors_free(&st);
    free(b);
    free(w);
}

/* A chain model's LSTMs: nn.LSTM's names, its four gates a unit in each
 * tensor (the layouts' G), and the round trip. */
static void test_lstm(void)
{
    FsArch a = rnn_arch(FS_LAYER_LSTM);
    FsNet net;
    FsErr err = {0};
    long nw;
    uint8_t *b;
    uint64_t n;
    FsSafetensors st;
    float *w = serialize_numbered(&a, &net, &nw, &b, &n, &st);
    const FsTensor *t = safetensors_find(&st, "2.rnn.weight_ih_l0_reverse");
    CHECK(t && t->ndim == 2 && t->shape[0] == 12 && t->shape[1] == 4);
    t = safetensors_find(&st, "3.rnn.weight_hh_l0");
    CHECK(t && t->ndim == 2 && t->shape[0] == 8 && t->shape[1] == 2);
    /* weight_ih_l0_reverse[g=2][c=1] <- W_ih[c][12 + g] (both directions' 24 gates a row);
     * weight_hh_l0_reverse[g=4][k=2] <- W_hh[1][k][g]; bias_hh_l0_reverse[5] <- b_hh[12 + 5]. */
    const FsLayer *g = &net.layer[1];
    CHECK(tensor_at(&st, "2.rnn.weight_ih_l0_reverse", 2 * 4 + 1) == (float)(g->w + 1 * 24 + 12 + 2));
    CHECK(tensor_at(&st, "2.rnn.weight_hh_l0_reverse", 4 * 3 + 2) == (float)(g->w2 + 36 + 2 * 12 + 4));
    CHECK(tensor_at(&st, "2.rnn.bias_hh_l0_reverse", 5) == (float)(g->b2 + 12 + 5));
    const char *arch = safetensors_meta(&st, "arch");
    CHECK(arch && strstr(arch, "{\"kind\":\"lstm\",\"units\":3,\"bidirectional\":true}"));
    FsSavedModel m;
    uint8_t *own = malloc(n);
    memcpy(own, b, n);
    CHECK_MSG(modelfile_parse(&m, own, n, "lstm", 64, &err) == 0, "%s", err.msg);
    CHECK(m.net.arch.layers[1].kind == FS_LAYER_LSTM && m.net.arch.layers[1].bidir == 1 &&
          m.net.arch.layers[2].kind == FS_LAYER_LSTM && m.net.arch.layers[2].units == 2);
    CHECK(memcmp(m.weights, w, sizeof(float) * (size_t)nw) == 0);
    modelfile_free(&m);
    safetensors_free(&st);
    free(b);
    free(w);
}

/* An attention layer: foldsweep_torch.Attention's names and layouts, and its arch. */
static void test_attention(void)
{
    FsArch a;
    memset(&a, 0, sizeof a);
    a.chain = 1;
    a.layers[0] = (FsLayerSpec){.kind = FS_LAYER_CONV, .units = 4, .width = 3, .act = FS_ACT_RELU};
    a.layers[1] = (FsLayerSpec){.kind = FS_LAYER_ATTENTION, .heads = 2, .key_dim = 3, .max_dist = 2, .rate = 0.25f,
                                .eps = 1e-4f};
    a.n_layers = 2;
    FsNet net;
    FsErr err = {0};
    long nw;
    uint8_t *b;
    uint64_t n;
    FsSafetensors st;
    float *w = serialize_numbered(&a, &net, &nw, &b, &n, &st);
    static const struct { const char *name; int ndim; int64_t s0, s1; } want[] = {
        {"2.q.weight", 2, 6, 4}, {"2.k.bias", 1, 6, 0}, {"2.v.weight", 2, 6, 4}, {"2.out.weight", 2, 4, 6},
        {"2.out.bias", 1, 4, 0}, {"2.norm.weight", 1, 4, 0}, {"2.norm.bias", 1, 4, 0}, {"2.rel.weight", 2, 5, 2},
        {"3.weight", 3, 3, 4}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const FsTensor *t = safetensors_find(&st, want[k].name);
        CHECK_MSG(t && t->ndim == want[k].ndim && t->shape[0] == want[k].s0 && (t->ndim < 2 || t->shape[1] == want[k].s1),
                  "%s", want[k].name);
    }
    /* k.weight[o=1][c=2] <- W[c][6 + o] (q, k, v side by side, 18 a row);
     * out.weight[c=3][k=5] <- Wo[k][c]; rel.weight[bucket 4][head 1] as kept. */
    const FsLayer *y = &net.layer[1];
    CHECK(tensor_at(&st, "2.k.weight", 1 * 4 + 2) == (float)(y->w + 2 * 18 + 6 + 1));
    CHECK(tensor_at(&st, "2.v.bias", 5) == (float)(y->b + 12 + 5));
    CHECK(tensor_at(&st, "2.out.weight", 3 * 6 + 5) == (float)(y->w2 + 5 * 4 + 3));
    CHECK(tensor_at(&st, "2.rel.weight", 4 * 2 + 1) == (float)(y->att_rel + 9));
    CHECK(tensor_at(&st, "2.norm.bias", 2) == (float)(y->att_beta + 2));
    const char *arch = safetensors_meta(&st, "arch");
    CHECK(arch && strstr(arch, "{\"kind\":\"attention\",\"heads\":2,\"key_dim\":3,\"max_distance\":2,"));
    FsSavedModel m;
    uint8_t *own = malloc(n);
    memcpy(own, b, n);
    CHECK_MSG(modelfile_parse(&m, own, n, "attention", 64, &err) == 0, "%s", err.msg);
    const FsLayerSpec *s = &m.net.arch.layers[1];
    CHECK(s->kind == FS_LAYER_ATTENTION && s->heads == 2 && s->key_dim == 3 && s->max_dist == 2 && s->rate == 0.25f &&
          s->eps == 1e-4f);
    CHECK(memcmp(m.weights, w, sizeof(float) * (size_t)nw) == 0);
    modelfile_free(&m);
    /* An edited file's attention of 0 heads: refused, naming the layer. */
    own = malloc(n);
    memcpy(own, b, n);
    uint8_t *at = NULL;
    for (uint64_t k = 0; k + 9 <= n && !at; k++)
        if (!memcmp(own + k, "heads\\\":2", 9)) at = own + k; /* the arch is a JSON string in the header */
    CHECK(at != NULL);
    if (at) at[8] = '0';
    err = (FsErr){0};
    CHECK(modelfile_parse(&m, own, n, "edited", 64, &err) == -1);
    CHECK_CONTAINS(err.msg, "layer 2 (attention)");
    safetensors_free(&st);
    free(b);
    free(w);
}

int main(void)
{
    FsArch a = test_arch();
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, &a, 8, &err) == 0);
    long nw = net.n_params + net.n_state;
    float *w = malloc(sizeof(float) * (size_t)nw);
    for (long i = 0; i < nw; i++) w[i] = (float)i;
    FsModelInfo info = {.trial = "0123456789abcdef", .trial_index = 11, .fold = 2, .folds = 3, .best_epoch = 7,
                        .val_q3 = 0.6543f, .val_loss = 0.75f, .data_fingerprint = 0xfedcba9876543210ULL,
                        .config = "{\"model\":{\"window\":7}}"};
    uint64_t seen[3] = {3, 27, 0xffffffffffffffffULL};
    info.seen = seen;
    info.n_seen = 3;
    uint8_t *bytes, *again;
    uint64_t n, n2;
    modelfile_serialize(&net, w, &info, &bytes, &n);
    modelfile_serialize(&net, w, &info, &again, &n2);
    CHECK(n == n2 && memcmp(bytes, again, n) == 0); /* deterministic bytes */
    free(again);
    test_layout(&net, bytes, n);
    test_round_trip(&net, w, bytes, n);
    test_refused(&net, w);
    test_verify(bytes, n);
    test_gru();
    test_lstm();
    test_attention();
    /* Fingerprints out of order are refused. */
    seen[0] = 30;
    modelfile_serialize(&net, w, &info, &again, &n2);
    FsSavedModel bad;
    memset(&err, 0, sizeof err);
    CHECK(modelfile_parse(&bad, again, n2, "unsorted", 8, &err) == -1);
    CHECK_CONTAINS(err.msg, "not sorted");
    seen[0] = 3;
    /* A predefined split's model names its fold so. */
    info.fold = FS_FOLD_PREDEFINED;
    modelfile_serialize(&net, w, &info, &again, &n2);
    FsSavedModel m;
    CHECK(modelfile_parse(&m, again, n2, "p", 8, &err) == 0 && m.info.fold == FS_FOLD_PREDEFINED);
    modelfile_free(&m);
    free(bytes);
    free(w);
    return test_finish();
}
