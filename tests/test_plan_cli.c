/*
 * test_plan_cli.c: `foldsweep plan` through the built binary: exit codes
 * 0 / 1 / 2, every error on stderr as "foldsweep: FILE:LINE:COL: ...", the
 * trial listing and the --json array; a tpe sweep's first proposals, with
 * --all its every candidate.
 */
#include "test_data_util.h"
#include "test_proc.h"

/* The number after the n-th (from 0) occurrence of key in text; -1 if none. */
static double json_nth(const char *text, const char *key, int n)
{
    const char *p = text;
    for (int i = 0; p && i <= n; i++) {
        p = strstr(p, key);
        if (p && i < n) p += strlen(key);
    }
    return p ? strtod(p + strlen(key), NULL) : -1;
}

int main(void)
{
    CHECK(tp_run("plan") == 2);
    CHECK_CONTAINS(err_text, "missing the sweep file");
    CHECK_CONTAINS(err_text, "usage: foldsweep plan");
    CHECK(tp_run("plan --bogus x.yaml") == 2);
    CHECK_CONTAINS(err_text, "unknown option --bogus");
    CHECK(tp_run("plan a.yaml b.yaml") == 2);
    CHECK(tp_run("plan --help") == 0);
    CHECK_CONTAINS(out_text, "usage: foldsweep plan SWEEP.yaml [--json]");
    CHECK(tp_run("help plan") == 0);
    CHECK_CONTAINS(out_text, "--json");
    CHECK(tp_run("--help") == 0);
    CHECK_CONTAINS(out_text, "plan");

    /* Valid: 2 x 2 trials on a record file; ids in the listing. */
    const char *rec = td_write("in.rec", ">a\nACDEFGHIKL\nHHHHEEECCC\n\n>b\nMNPQRSTVWY\nCCHHHHEECC\n\n"
                                         ">c\nACDEFGHIKLMN\nCCCEEEEHHHHC\n\n>d\nGHIKLMNP\nHHHHCCCC\n");
    (void)rec;
    const char *ok = td_write("ok.yaml", "data:\n  inputs: [in.rec]\n  format: records\n  window: 7\n  folds: 2\n"
                                         "model: {depth: [1, 2], filters: [4, 8], kernel: 3, dense: 0}\n"
                                         "training: {epochs: 1, batch_size: 4}\n");
    CHECK(tp_run("plan '%s'", ok) == 0);
    CHECK_CONTAINS(out_text, "data: 4 proteins, 40 residues, 2 folds (fingerprint ");
    CHECK_CONTAINS(out_text, "trials: 4\n");
    CHECK_CONTAINS(out_text, "conv4x3 swish w7 | adam lr=0.001 batch=4 epochs=1");
    CHECK_CONTAINS(out_text, "conv8x3-conv8x3 swish w7");
    CHECK(err_text[0] == '\0');
    CHECK(tp_run("plan --json '%s'", ok) == 0);
    CHECK(out_text[0] == '[');
    CHECK(tp_count(out_text, "\"id\": \"") == 4);
    CHECK(tp_count(out_text, "\"config\": {\"data\"") == 4);
    CHECK_CONTAINS(out_text, "\"index\": 3");
    /* A window-7 model sees its 7 residues (it said 3, the kernel's). */
    CHECK(tp_count(out_text, "\"receptive_field\": 7,") == 4);

    /* Sampled: the grid size is said. */
    const char *sampled = td_write("s.yaml", "data: {inputs: [in.rec], window: 7, folds: 2}\n"
                                             "model: {filters: [4, 8, 16], kernel: [1, 3], dense: 0}\nsearch: {random: 2}\n");
    CHECK(tp_run("plan '%s'", sampled) == 0);
    CHECK_CONTAINS(out_text, "trials: 2, sampled from a grid of 6 (search.random: 2, seed 1)");

    /* tpe: the first batches' proposals (random: every run trains them) and a count of the candidates the
     * results choose from; --all lists every candidate. 24 candidates, a budget of 14 in batches of 4. */
    const char *tpe = td_write("tpe.yaml", "data: {synth: {proteins: 30}, window: 9, folds: 2}\n"
                                           "model: {filters: [4, 8, 16], kernel: [3, 5], dense: [0, 16]}\n"
                                           "training: {learning_rate: [0.001, 0.0001]}\n"
                                           "search: {random: 14, sampler: tpe, batch: 4}\n");
    CHECK(tp_run("plan '%s'", tpe) == 0);
    CHECK_CONTAINS(out_text, "trials: 14 proposed by tpe in batches of 4 from 24 candidates");
    CHECK_CONTAINS(out_text, "listed: the first 12 proposals (3 batches at random: every run of this sweep and seed "
                             "trains them); tpe proposes the other 2 from their results, out of the 12 candidates not "
                             "listed (plan --all lists all 24)");
    CHECK(tp_count(out_text, " swish w9 | ") == 12);
    CHECK(tp_run("plan --all '%s'", tpe) == 0);
    CHECK_CONTAINS(out_text, "from these 24 candidates");
    CHECK(tp_count(out_text, " swish w9 | ") == 24 && !strstr(out_text, "listed:"));
    CHECK(tp_run("plan --json '%s'", tpe) == 0);
    CHECK(tp_count(out_text, "\"id\": \"") == 12 && tp_count(out_text, "\"batch\": 3,") == 4);
    CHECK(tp_run("plan --json --all '%s'", tpe) == 0);
    CHECK(tp_count(out_text, "\"id\": \"") == 24 && tp_count(out_text, "\"batch\": null,") == 12);
    /* Ranges: a pool of 1024 candidates, of which a budget of 8 is proposed at random. */
    const char *ranged = td_write("ranged.yaml", "data: {synth: {proteins: 30}, window: 9, folds: 2}\n"
                                                 "training: {learning_rate: {low: 0.0001, high: 0.01, log: true}}\n"
                                                 "search: {random: 8, sampler: tpe}\n");
    CHECK(tp_run("plan '%s'", ranged) == 0);
    CHECK_CONTAINS(out_text, "listed: all 8 proposals (1 batch at random: every run of this sweep and seed trains "
                             "them); the other 1016 candidates are not listed (plan --all lists all 1024)");
    CHECK(tp_count(out_text, " swish w9 | ") == 8);
    CHECK(tp_run("plan --all '%s' | grep -c ' swish w9 | '", ranged) == 0); /* longer than out_text holds */
    CHECK_CONTAINS(out_text, "1024\n");

    /* Invalid: every error, each with its position, exit 1. */
    const char *bad = td_write("bad.yaml", "data:\n  inputs: [in.rec]\n  window: 8\n"
                                           "training:\n  learning_rat: 0.1\n  batch_size: 0\n");
    CHECK(tp_run("plan '%s'", bad) == 1);
    CHECK(out_text[0] == '\0');
    char want[1024];
    snprintf(want, sizeof want, "foldsweep: %s:3:11: data.window: 8 is even", bad);
    CHECK_CONTAINS(err_text, want);
    snprintf(want, sizeof want, "foldsweep: %s:5:3: unknown key 'learning_rat' in training (did you mean 'learning_rate'?)", bad);
    CHECK_CONTAINS(err_text, want);
    snprintf(want, sizeof want, "foldsweep: %s:6:15: training.batch_size", bad);
    CHECK_CONTAINS(err_text, want);
    CHECK(tp_count(err_text, "foldsweep: ") == 3);

    /* Data problems: more folds than proteins, a missing input. */
    const char *folds = td_write("folds.yaml", "data:\n  inputs: [in.rec]\n  window: 7\n  folds: 9\n");
    CHECK(tp_run("plan '%s'", folds) == 1);
    snprintf(want, sizeof want, "foldsweep: %s:4:10: data.folds: 9 folds but the data has only 4 proteins", folds);
    CHECK_CONTAINS(err_text, want);
    const char *missing = td_write("missing.yaml", "data: {inputs: [nothere.rec]}\n");
    CHECK(tp_run("plan '%s'", missing) == 1);
    CHECK_CONTAINS(err_text, "nothere.rec");
    CHECK(tp_run("plan '%s'", td_path("absent.yaml")) == 1);
    CHECK_CONTAINS(err_text, "cannot open the sweep file");

    /* The shipped quickstart plans (synthetic data, no files). */
    CHECK(tp_run("plan '%s/sweeps/quickstart.yaml'", FS_TEST_SRC_DIR) == 0);
    CHECK_CONTAINS(out_text, "300 proteins");
    /* The GPU path's column only where the build has the backend (or --gpu
     * asks), and one line for trials refused for one reason. */
    const int cuda = tp_run("--version") == 0 && !strstr(out_text, "CUDA none") && !strstr(out_text, "cuda none");
    char *version = strdup(out_text);
    CHECK(tp_run("plan '%s/sweeps/quickstart.yaml'", FS_TEST_SRC_DIR) == 0);
    if (cuda)
        CHECK_MSG(strstr(out_text, "params  gpu      gpu time  architecture") != NULL, "%s\n%s", version, out_text);
    else
        CHECK_MSG(strstr(out_text, "params  architecture") &&
                      strstr(out_text, "gpu: this build has no CUDA backend (plan --gpu h200 shows"),
                  "%s\n%s", version, out_text);
    /* --json says the same: a CPU-only build's GPU path takes no trial (it
     * said "gpu": true); --gpu NAME gives that profile's verdict. */
    CHECK(tp_run("plan --json '%s'", ok) == 0);
    CHECK(tp_count(out_text, cuda ? "\"gpu\": true" : "\"gpu\": false") == 4);
    if (!cuda) CHECK(tp_count(out_text, "\"gpu_why\": \"this build has no CUDA backend") == 4);
    CHECK(tp_run("plan --json '%s' --gpu h200", ok) == 0);
    CHECK(tp_count(out_text, "\"gpu\": true") == 4);
    free(version);
    /* Chain models go to the library tier (#44); run.gpu_path: block refuses them with the block's reason. */
    const char *chain = td_write("chain.yaml", "data: {synth: {proteins: 30}, window: chain}\n"
                                               "model: {filters: [4, 8, 16]}\n");
    CHECK(tp_run("plan '%s' --gpu h200", chain) == 0);
    CHECK_CONTAINS(out_text, "params  gpu      gpu time  architecture");
    CHECK_CONTAINS(out_text, "gpu: on the h200 profile (--backend cuda, run.gpu_path: auto) the block tier takes 0 "
                             "trials, the library tier 3 (in groups 3 wide)\n");
    CHECK(tp_count(out_text, "  library  ") == 3 && !strstr(out_text, "refuses"));
    CHECK_CONTAINS(out_text, "gpu: ");
    CHECK(tp_run("plan --json '%s' --gpu a100", chain) == 0);
    CHECK(tp_count(out_text, "\"gpu_path\": \"library\"") == 3 && tp_count(out_text, "\"gpu\": true") == 3);
    const char *chain_block = td_write("chain_block.yaml", "data: {synth: {proteins: 30}, window: chain}\n"
                                                           "model: {filters: [4, 8, 16]}\nrun: {gpu_path: block}\n");
    CHECK(tp_run("plan '%s' --gpu h200", chain_block) == 0);
    CHECK_CONTAINS(out_text, "; it refuses all 3 (run them with --backend cpu): a chain model needs the library tier "
                             "(run.gpu_path: library or auto)");
    CHECK(tp_count(out_text, "  refused         -  ") == 3);
    /* run.gpu_path: library takes window models too (auto keeps these small ones on the block tier). */
    const char *win_lib = td_write("win_lib.yaml", "data: {synth: {proteins: 30}, window: 9}\n"
                                                   "model: {filters: [4, 8]}\nrun: {gpu_path: library}\n");
    CHECK(tp_run("plan '%s' --gpu h200", win_lib) == 0);
    CHECK_CONTAINS(out_text, "gpu: on the h200 profile (--backend cuda, run.gpu_path: library) the block tier takes 0 "
                             "trials, the library tier 2 (in groups 3 wide)\n");
    CHECK(tp_count(out_text, "  library  ") == 2 && !strstr(out_text, "refuses"));
    /* The library tier's groups (run/gpu_groups.c): trials of one shape that
     * differ in training options share a group as wide as their jobs in the
     * sweep (3 learning rates x 3 folds: 9; 4 x 3 = 12 of one shape beside
     * 3 of another); a sweep proposed in batches (tpe) groups a trial's own
     * folds; FOLDSWEEP_GPU_GROUP caps the width. */
    const char *lrs = td_write("lrs.yaml", "data: {synth: {proteins: 30}, window: chain}\n"
                                           "model: {filters: [8]}\ntraining: {learning_rate: [0.01, 0.003, 0.001]}\n");
    CHECK(tp_run("plan '%s' --gpu h200", lrs) == 0);
    CHECK_CONTAINS(out_text, "the library tier 3 (in groups 9 wide)\n");
    CHECK(tp_run("plan --json '%s' --gpu h200", lrs) == 0);
    CHECK(tp_count(out_text, "\"gpu_group\": 9") == 3);
    const char *mixed_w = td_write("mixed_w.yaml", "data: {synth: {proteins: 30}, window: chain}\n"
                                                   "model: {filters: [8, 16]}\n"
                                                   "training: {learning_rate: [0.01, 0.003, 0.001, 0.0003]}\n");
    CHECK(tp_run("plan --json '%s' --gpu h200", mixed_w) == 0);
    CHECK(tp_count(out_text, "\"gpu_group\": 12") == 8);
    CHECK(tp_run("plan '%s' --gpu h200", mixed_w) == 0);
    CHECK_CONTAINS(out_text, "the library tier 8 (in groups 12 wide)\n");
    setenv("FOLDSWEEP_GPU_GROUP", "5", 1);
    CHECK(tp_run("plan '%s' --gpu h200", mixed_w) == 0);
    CHECK_CONTAINS(out_text, "the library tier 8 (in groups 5 wide)\n");
    unsetenv("FOLDSWEEP_GPU_GROUP");
    const char *tpe_w = td_write("tpe_w.yaml", "data: {synth: {proteins: 30}, window: chain}\nmodel: {filters: [8]}\n"
                                               "training: {learning_rate: [0.01, 0.003, 0.001]}\n"
                                               "search: {random: 2, sampler: tpe, batch: 1}\n");
    CHECK(tp_run("plan --json --all '%s' --gpu h200", tpe_w) == 0);
    CHECK(tp_count(out_text, "\"gpu_group\": 3") > 0 && tp_count(out_text, "\"gpu_group\": 9") == 0);
    CHECK(tp_run("plan --json '%s'", ok) == 0);
    CHECK(tp_count(out_text, "\"gpu_group\": null") == 4); /* window models: the block tier */
    /* A wrong value: file, line, column, the choices and the nearest. */
    const char *bad_path = td_write("bad_path.yaml", "data: {synth: {proteins: 30}, window: 9}\nrun:\n  gpu_path: blok\n");
    CHECK(tp_run("plan '%s'", bad_path) == 1);
    snprintf(want, sizeof want, "foldsweep: %s:3:13: run.gpu_path: expected auto, block or library (did you mean "
                                "'block'?)", bad_path);
    CHECK_CONTAINS(err_text, want);
    CHECK(tp_run("run '%s' --gpu-path fast", win_lib) == 2);
    CHECK_CONTAINS(err_text, "--gpu-path must be auto, block or library, not");

    /* Estimates (#44 item 7): the CPU's and, on a profile, the GPU's, per trial and for the sweep; a larger
     * model is estimated slower on both, and the A100 slower than the H200 on the library tier. */
    CHECK(tp_run("plan '%s' --gpu h200", ok) == 0);
    CHECK_CONTAINS(out_text, "estimate (a roofline from each trial's FLOP and bytes, not a measurement;");
    CHECK_CONTAINS(out_text, "  cpu: ");
    CHECK_CONTAINS(out_text, " on the h200 profile (block tier ");
    CHECK_CONTAINS(out_text, "67 TFLOP/s FP32, 4.8 TB/s");
    CHECK(tp_run("plan --json '%s' --gpu h200", ok) == 0);
    double small_s = json_nth(out_text, "\"gpu_seconds\": ", 0), big_s = json_nth(out_text, "\"gpu_seconds\": ", 3);
    double small_f = json_nth(out_text, "\"flop\": ", 0), big_f = json_nth(out_text, "\"flop\": ", 3);
    CHECK_MSG(small_s > 0 && big_s > small_s && small_f > 0 && big_f > small_f, "%g %g %g %g", small_s, big_s, small_f,
              big_f);
    CHECK(tp_run("plan --json '%s' --gpu h200", chain) == 0);
    double h200 = json_nth(out_text, "\"gpu_seconds\": ", 2);
    CHECK(tp_run("plan --json '%s' --gpu a100", chain) == 0);
    double a100 = json_nth(out_text, "\"gpu_seconds\": ", 2);
    CHECK_MSG(h200 > 0 && a100 > h200, "%g %g", h200, a100);
    CHECK(tp_run("plan '%s' --gpu a100", chain) == 0);
    CHECK_CONTAINS(out_text, "  gpu: ");
    CHECK(strstr(out_text, "library tier 0.00 s") == NULL); /* the library tier's trials are counted */
    CHECK(strstr(out_text, "attention's pairs") == NULL);
    /* Attention's scores grow with the chains: counted over the chain a
     * residue sees (data_chain_pair_mean), at their own CPU rate; an
     * attention layer costs more than its projections alone. */
    const char *att = td_write("att.yaml", "data: {synth: {proteins: 30}, window: chain}\n"
                                           "model: {filters: 8, attention: [0, 1]}\n");
    CHECK(tp_run("plan '%s'", att) == 0);
    CHECK_CONTAINS(out_text, "; attention's pairs 8, over chains of ");
    CHECK(tp_run("plan --json '%s'", att) == 0);
    const double no_att = json_nth(out_text, "\"flop\": ", 0), with_att = json_nth(out_text, "\"flop\": ", 1);
    CHECK_MSG(no_att > 0 && with_att > 2 * no_att, "flop without attention %g, with one layer %g", no_att, with_att);
    return test_finish();
}
