/*
 * fuzz_sweep.c: the sweep loader (sweep_load_string: libyaml, the strict
 * validation of every section, grid / random expansion, the canonical
 * form), and sweep_diff over the same text. Data files the sweep names
 * are not opened here.
 *
 * Checks: a refusal lists at least one error; an accepted sweep has
 * trials, summaries and ids for each, and its canonical text (what a run
 * folder keeps and resume and status load again) loads to the same
 * canonical text with the same trials.
 */
#include "fuzz_util.h"
#include "sweep/sweep.h"

/* Absolute, so relative data paths resolve the same way on both loads. */
#define NAME "/fuzz/sweep.yaml"

static void use_sweep(FsSweep *sw)
{
    FUZZ_REQUIRE(sw->n_trials > 0 && sw->n_trials <= FS_SWEEP_MAX_TRIALS && sw->canonical);
    sweep_assign_ids(sw, 0x1234);
    for (int i = 0; i < sw->n_trials; i++) {
        char a[512], t[512];
        FUZZ_REQUIRE(sw->trials[i].config && strlen(sw->trials[i].id) == 16);
        sweep_arch_summary(&sw->trials[i].arch, a, sizeof a);
        sweep_train_summary(&sw->trials[i].train, sw->trials[i].arch.chain, t, sizeof t);
    }
    (void)metrics_kind_name(sw->metric);
    (void)sweep_backend_name(sw->backend);

    FsSweep again;
    FsErrList errs = {0};
    int rc = sweep_load_string(&again, sw->canonical, NAME, &errs);
    if (rc) {
        char msg[2048];
        errlist_join(&errs, msg, sizeof msg);
        fprintf(stderr, "canonical sweep refused:\n%s\n--- canonical:\n%s\n", msg, sw->canonical);
    }
    FUZZ_REQUIRE(rc == 0);
    FUZZ_REQUIRE(!strcmp(again.canonical, sw->canonical) && again.n_trials == sw->n_trials);
    char diff[1024];
    FUZZ_REQUIRE(sweep_diff(sw->canonical, again.canonical, diff, sizeof diff) == 0);
    for (int i = 0; i < sw->n_trials; i++) FUZZ_REQUIRE(!strcmp(again.trials[i].config, sw->trials[i].config));
    errlist_free(&errs);
    sweep_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    char *text = fuzz_cstr(p, n);
    /* A run folder's sweep.yaml may have been edited by hand: resume diffs
     * whatever it holds against the new canonical text. */
    char diff[1024];
    (void)sweep_diff(text, text, diff, sizeof diff);
    FsSweep sw;
    FsErrList errs = {0};
    if (sweep_load_string(&sw, text, NAME, &errs) == 0) {
        use_sweep(&sw);
        sweep_free(&sw);
    } else {
        FUZZ_REQUIRE(errs.n > 0);
        char msg[4096];
        errlist_join(&errs, msg, sizeof msg);
    }
    errlist_free(&errs);
    free(text);
    return 0;
}
