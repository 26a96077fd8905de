/*
 * run.constraints (issue #30 item 3, src/sweep/constraints.c): trials
 * outside {params: {min, max}} are excluded before training.
 *
 * 1. A grid keeps exactly the trials within the bounds (checked against
 *    each trial's own parameter count); the excluded ones are kept for
 *    plan, with the reason; the constraints are in the canonical sweep.
 * 2. search.random counts only allowed trials: a violating draw does not
 *    count and the sampler draws on, the same way on every load; tpe's
 *    candidates are all allowed.
 * 3. Bad constraints, and constraints that exclude everything, are refused
 *    at their line:col.
 * 4. Through the binary: plan lists the excluded trials with the reason;
 *    the run trains only the allowed ones (their ids alone in the journal
 *    and on the leaderboard).
 * 5. With feature columns (data.features) the first layer's feature
 *    weights count: the constraints wait for the data's column count and
 *    then apply to the parameters plan and the journal show (bounds that
 *    one-hot counts alone would judge otherwise, both ways).
 */
#include "test_proc.h"
#include "test_sweep_expect.h"

#define D "data:\n  synth: {proteins: 30, seed: 4}\n  window: 9\n  folds: 2\n"
#define M "model:\n  depth: 1\n  filters: [4, 8, 16, 32, 64]\n  kernel: 5\n  dense: 0\n"

static int load(FsSweep *sw, const char *text)
{
    char why[2000];
    int rc = sweep_text(sw, text, why, sizeof why);
    CHECK_MSG(rc == 0, "%s", why);
    return rc;
}

static void grid(void)
{
    FsSweep all, sw;
    if (load(&all, D M) || load(&sw, D M "run:\n  constraints: {params: {min: 600, max: 4000}}\n")) return;
    CHECK(all.n_trials == 5);
    int allowed = 0;
    for (int i = 0; i < all.n_trials; i++) {
        long p = sweep_trial_params(&all.trials[i]);
        allowed += p >= 600 && p <= 4000;
    }
    printf("params of the five trials: %ld %ld %ld %ld %ld\n", sweep_trial_params(&all.trials[0]),
           sweep_trial_params(&all.trials[1]), sweep_trial_params(&all.trials[2]), sweep_trial_params(&all.trials[3]),
           sweep_trial_params(&all.trials[4]));
    CHECK(allowed > 0 && allowed < 5);
    CHECK(sw.n_trials == allowed && sw.n_excluded == 5 - allowed && sw.n_excluded_kept == sw.n_excluded);
    for (int i = 0; i < sw.n_trials; i++) {
        long p = sweep_trial_params(&sw.trials[i]);
        CHECK(p >= 600 && p <= 4000 && sw.trials[i].index == i);
    }
    char why[160];
    for (int i = 0; i < sw.n_excluded_kept; i++) {
        const FsExcluded *x = &sw.excluded[i];
        sweep_excluded_why(&sw, x->params, why, sizeof why);
        CHECK_MSG(x->params < 600 ? strstr(why, "< run.constraints.params.min 600") != NULL
                                  : strstr(why, "> run.constraints.params.max 4000") != NULL,
                  "%ld: %s", x->params, why);
    }
    CHECK(!strcmp(sweep_excluded_why(&sw, 1000, why, sizeof why), ""));
    CHECK_CONTAINS(sw.canonical, "run:\n  metric: q3\n  constraints: {params: {min: 600, max: 4000}}\n");
    CHECK(!strstr(all.canonical, "constraints"));
    sweep_free(&all);
    sweep_free(&sw);
}

static void sampled(void)
{
    const char *t = D "model:\n  depth: 1\n  filters: {low: 4, high: 64}\n  kernel: 5\n  dense: 0\n"
                      "search: {random: %d%s}\nrun:\n  constraints: {params: {max: 3000}}\n";
    char a[600], b[600], c[600];
    snprintf(a, sizeof a, t, 6, "");
    snprintf(b, sizeof b, t, 10, "");
    snprintf(c, sizeof c, t, 6, ", sampler: tpe");
    FsSweep sa, sb, sc;
    if (load(&sa, a) || load(&sb, b) || load(&sc, c)) return;
    CHECK(sa.n_trials == 6 && sb.n_trials == 10 && sa.n_excluded > 0);
    for (int i = 0; i < sb.n_trials; i++) CHECK(sweep_trial_params(&sb.trials[i]) <= 3000);
    for (int i = 0; i < sa.n_trials; i++) CHECK(!strcmp(sa.trials[i].config, sb.trials[i].config)); /* drawn on alike */
    CHECK(sc.n_trials > 0 && sc.n_excluded > 0);
    for (int i = 0; i < sc.n_trials; i++) CHECK(sweep_trial_params(&sc.trials[i]) <= 3000);
    sweep_free(&sa), sweep_free(&sb), sweep_free(&sc);
}

static void refusals(void)
{
    EXPECT(D M "run:\n  constraints: {params: {max: 10}}\n", "11:3", "run.constraints: they exclude every trial");
    EXPECT(D M "run:\n  constraints: {params: {max: -5}}\n", "11:31", "run.constraints.params.max: expected a whole");
    EXPECT(D M "run:\n  constraints: {flops: {max: 5}}\n", "11:17", "unknown key 'flops' in run.constraints");
    EXPECT(D M "run:\n  constraints: {params: {min: 900, max: 800}}\n", "11:25", "min (900) is above max (800)");
    EXPECT(D M "run:\n  constraints: {params: {mx: 800}}\n", "11:26", "unknown key 'mx' in run.constraints.params (did you mean 'max'?)");
    EXPECT(D M "run:\n  constraints: 5\n", "11:16", "run.constraints: expected {params: {min: N, max: N}}");
}

static void binary(void)
{
    char tmp[256], sweep[400], dir[400], journal[460];
    tp_tmpdir(tmp, sizeof tmp, "constraints");
    snprintf(sweep, sizeof sweep, "%s/c.yaml", tmp);
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    tp_write_text(sweep, D M "training: {epochs: 1, batch_size: 16}\nrun:\n  constraints: {params: {max: 2500}}\n");
    FsSweep sw;
    if (load(&sw, D M "training: {epochs: 1, batch_size: 16}\nrun:\n  constraints: {params: {max: 2500}}\n")) return;
    CHECK(tp_run("plan '%s'", sweep) == 0);
    char line[200];
    snprintf(line, sizeof line, "excluded by run.constraints: %d trials, never trained:\n", sw.n_excluded);
    CHECK_CONTAINS(out_text, line);
    CHECK(tp_count(out_text, "> run.constraints.params.max 2500)") == sw.n_excluded);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, dir) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 2 * sw.n_trials);
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    CHECK(tp_count(out_text, "\n") == 1 + sw.n_trials);
    /* The excluded ids: in plan's listing, nowhere in the run. */
    CHECK(tp_run("plan '%s'", sweep) == 0);
    const char *at = strstr(out_text, "excluded by run.constraints");
    char *journal_text = tp_read_file(journal, NULL);
    for (int i = 0; at && journal_text && i < sw.n_excluded; i++) {
        at = strstr(at, "\n  ");
        if (!at) break;
        char id[FS_TRIAL_ID_LEN + 1];
        snprintf(id, sizeof id, "%.*s", FS_TRIAL_ID_LEN, at + 3);
        CHECK_MSG(!strstr(journal_text, id), "excluded trial %s in the journal", id);
        at += 3;
    }
    free(journal_text);
    sweep_free(&sw);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
}

/* Loads path, its data, and binds them; the trials' parameters then. */
static int bound(const char *path, FsSweep *sw, FsDataset *ds, FsErrList *errs)
{
    memset(ds, 0, sizeof *ds);
    if (sweep_load_file(sw, path, errs) != 0) return -1;
    CHECK(sweep_load_data(sw, ds, errs) == 0);
    return sweep_bind_data(sw, ds, errs);
}

static void features(void)
{
    char tmp[256], path[400], text[1200];
    tp_tmpdir(tmp, sizeof tmp, "constraints_feat");
    CHECK(tp_run("synth -o '%s/syn' --format fasta --proteins 40 --seed 2 --features 16 --features-format npy", tmp) == 0);
    const char *body = "data:\n  sequences: syn.sequences.fasta\n  labels: syn.labels.fasta\n  mask: syn.mask.fasta\n"
                       "  features: [onehot, {npy: syn.features}]\n  window: 9\n  folds: 2\n"
                       "model:\n  depth: 1\n  filters: [8, 16]\n  kernel: 3\n  dense: 0\n"
                       "training: {epochs: 1, batch_size: 16}\n";
    snprintf(path, sizeof path, "%s/f.yaml", tmp);
    tp_write_text(path, body);
    FsSweep sw;
    FsDataset ds;
    FsErrList errs = {0};
    long onehot[2] = {0, 0}, with[2] = {0, 0};
    if (sweep_load_file(&sw, path, &errs) == 0 && sw.n_trials == 2) {
        for (int i = 0; i < 2; i++) onehot[i] = sweep_trial_params(&sw.trials[i]);
        sweep_free(&sw);
    }
    CHECK(bound(path, &sw, &ds, &errs) == 0 && sw.n_trials == 2);
    for (int i = 0; i < 2 && i < sw.n_trials; i++) with[i] = sweep_trial_params(&sw.trials[i]);
    sweep_free(&sw), data_free(&ds);
    CHECK_MSG(onehot[0] < with[0] && with[0] < onehot[1] && onehot[1] < with[1], "params %ld %ld, %ld %ld", onehot[0],
              with[0], onehot[1], with[1]);
    /* min above trial 0's one-hot count but not its count with features;
     * max below trial 1's with features but above its one-hot count. */
    snprintf(text, sizeof text, "%srun:\n  constraints: {params: {min: %ld, max: %ld}}\n", body, onehot[0] + 1,
             with[1] - 1);
    tp_write_text(path, text);
    CHECK(bound(path, &sw, &ds, &errs) == 0);
    CHECK_MSG(sw.n_trials == 1 && sw.n_excluded == 1 && sweep_trial_params(&sw.trials[0]) == with[0] &&
              sw.excluded[0].params == with[1], "%d trials, %d excluded", sw.n_trials, sw.n_excluded);
    sweep_free(&sw), data_free(&ds);
    CHECK(tp_run("plan '%s'", path) == 0);
    char want[200];
    snprintf(want, sizeof want, "(params %ld > run.constraints.params.max %ld)", with[1], with[1] - 1);
    CHECK_CONTAINS(out_text, want);
    snprintf(want, sizeof want, "%ld", with[0]);
    CHECK_CONTAINS(out_text, want);
    /* The run trains the one trial, and its record says the same count. */
    CHECK(tp_run("run '%s' --out '%s/run' --threads 2 --quiet", path, tmp) == 0);
    char journal[400];
    snprintf(journal, sizeof journal, "%s/run/journal.jsonl", tmp);
    snprintf(want, sizeof want, "\"params\":%ld,", with[0]);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 2 && tp_count_in_file(journal, want) == 1);
    /* The first trial excluded: the one trained is index 0 of the run's
     * list and 1 of the unconstrained one. The leaderboard, which has no
     * data, draws the run's list from the column count the run recorded. */
    snprintf(text, sizeof text, "%srun:\n  constraints: {params: {min: %ld}}\n", body, with[0] + 1);
    tp_write_text(path, text);
    CHECK(tp_run("run '%s' --out '%s/run2' --threads 2 --quiet", path, tmp) == 0);
    snprintf(journal, sizeof journal, "%s/run2/journal.jsonl", tmp);
    CHECK(tp_count_in_file(journal, "\"feature_columns\":16") == 1);
    CHECK(tp_run("leaderboard '%s/run2' --format csv", tmp) == 0);
    CHECK_MSG(!strstr(err_text, "damaged") && !strstr(err_text, "warning"), "%s", err_text);
    snprintf(want, sizeof want, "\n1,");
    CHECK(tp_count(out_text, want) == 1 && tp_count(out_text, "\n2,") == 0 && strstr(out_text, ",0,ok,q3,"));
    /* Bounds no trial meets once the features count: refused at their line:col. */
    snprintf(text, sizeof text, "%srun:\n  constraints: {params: {min: %ld}}\n", body, with[1] + 1);
    tp_write_text(path, text);
    CHECK(bound(path, &sw, &ds, &errs) == -1);
    CHECK_MSG(errs.n == 1 && strstr(errs.msg[0], "f.yaml:15:3: run.constraints: they exclude every trial") &&
              strstr(errs.msg[0], "feature columns counted"), "%s", errs.n ? errs.msg[0] : "no error");
    errlist_free(&errs);
    sweep_free(&sw), data_free(&ds);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
}

int main(void)
{
    features();
    grid();
    sampled();
    refusals();
    binary();
    return test_finish();
}
