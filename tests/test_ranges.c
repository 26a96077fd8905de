/*
 * Ranges (issue #30 item 1, src/sweep/ranges.c): a numeric option written
 * as {low, high[, step][, log]} and sampled by search.random and tpe.
 *
 * 1. Sampled values lie in their ranges: integers on low + k step, kernel
 *    widths odd, floats as float32 and printed in the shortest form that
 *    reads back (the trial config's text).
 * 2. log: true is log-uniform: a chi-square over the four decades of
 *    [1e-5, 1e-1] stays below the 0.1% critical value of 3 degrees of
 *    freedom, which a sampler uniform in linear space exceeds by far; a
 *    linear range is uniform over five equal bins the same way.
 * 3. The first M trials of random: N are those of random: M; the canonical
 *    sweep reloads to the same trials.
 * 4. A grid over a range is refused at the range's line:col with a hint;
 *    grid_points: N makes N values (log-spaced with log); bad ranges are
 *    refused where they are written.
 * 5. Layer lists take ranges per layer parameter.
 * 6. tpe over a range: proposals are a function of the scores, never
 *    repeat, and beat random sampling on a smooth objective of log(lr).
 */
#include <math.h>

#include "sample/sample.h"
#include "test.h"
#include "test_sweep_expect.h"

#define D "data:\n  synth: {proteins: 30}\n  window: 9\n"

static int load(FsSweep *sw, const char *text)
{
    char why[2000];
    int rc = sweep_text(sw, text, why, sizeof why);
    CHECK_MSG(rc == 0, "%s", why);
    return rc;
}

static int dim_of(const FsSweep *sw, const char *key)
{
    for (int d = 0; d < sw->n_dims; d++)
        if (!strcmp(sw->dims[d].key, key)) return d;
    return -1;
}

/* Trial t's text for dimension d reads back as its value, a float32, no
 * longer than the 9 digits that always suffice. */
static void check_text(const FsSweep *sw, const FsTrial *t, int d)
{
    char buf[64];
    const char *s = sweep_trial_value(sw, t, d, buf, sizeof buf);
    CHECK_MSG(s != NULL, "trial %d: no value for %s", t->index, sw->dims[d].key);
    if (!s) return;
    CHECK_MSG(strtof(s, NULL) == (float)t->x[d] && (double)(float)t->x[d] == t->x[d], "%s: %s vs %.17g", sw->dims[d].key,
              s, t->x[d]);
    char nine[64];
    snprintf(nine, sizeof nine, "%.9g", t->x[d]);
    CHECK_MSG(strlen(s) <= strlen(nine), "%s longer than %s", s, nine);
    char in_config[96];
    snprintf(in_config, sizeof in_config, ":%s", s);
    CHECK_MSG(strstr(t->config, in_config) != NULL, "config lacks %s: %s", in_config, t->config);
}

static void bounds(void)
{
    FsSweep sw;
    if (load(&sw, D "model:\n  depth: 1\n  filters: {low: 16, high: 128, step: 16}\n  kernel: {low: 3, high: 9}\n"
                    "  dropout: {low: 0.0, high: 0.5}\n  dense: {low: 8, high: 40, step: 16}\n"
                    "training:\n  learning_rate: {low: 1e-4, high: 1e-2, log: true}\n  momentum: {low: 0.5, high: 0.99}\n"
                    "  optimizer: sgd\n  clip_norm: {low: 0.0, high: 0.5, step: 0.1}\nsearch: {random: 300}\n"))
        return;
    CHECK(sw.n_trials == 300 && sw.n_dims == 7);
    const int f = dim_of(&sw, "model.filters"), k = dim_of(&sw, "model.kernel"), dr = dim_of(&sw, "model.dropout");
    const int de = dim_of(&sw, "model.dense"), lr = dim_of(&sw, "training.learning_rate");
    const int mo = dim_of(&sw, "training.momentum"), cn = dim_of(&sw, "training.clip_norm");
    CHECK(f >= 0 && k >= 0 && dr >= 0 && de >= 0 && lr >= 0 && mo >= 0 && cn >= 0);
    if (f < 0 || k < 0 || dr < 0 || de < 0 || lr < 0 || mo < 0 || cn < 0) return sweep_free(&sw);
    CHECK(sw.dims[lr].range && sw.dims[lr].log && !sw.dims[f].log && sw.dims[f].n == 0);
    int seen_k[10] = {0}, seen_d[3] = {0}, seen_c[6] = {0};
    for (int i = 0; i < sw.n_trials; i++) {
        const FsTrial *t = &sw.trials[i];
        const FsLayerSpec *conv = &t->arch.layers[0];
        CHECK(conv->units == (int)t->x[f] && conv->units % 16 == 0 && conv->units >= 16 && conv->units <= 128);
        CHECK(conv->width == (int)t->x[k] && conv->width % 2 == 1 && conv->width >= 3 && conv->width <= 9);
        CHECK(t->x[de] == 8 || t->x[de] == 24 || t->x[de] == 40); /* 56 would pass high */
        CHECK(t->x[dr] >= 0.0 && t->x[dr] <= 0.5 && t->x[lr] >= (double)1e-4f && t->x[lr] <= (double)1e-2f);
        CHECK(t->x[mo] >= 0.5 && t->x[mo] <= (double)0.99f && t->train.momentum == (float)t->x[mo]);
        CHECK(t->train.lr == (float)t->x[lr]);
        seen_k[(int)t->x[k]]++;
        const int step = (int)lround(t->x[cn] / 0.1); /* 0, 0.1, ..., 0.5 as floats */
        CHECK_MSG(step >= 0 && step <= 5 && (float)t->x[cn] == (float)(step * 0.1f), "clip_norm %.9g", t->x[cn]);
        if (step >= 0 && step <= 5) seen_c[step]++;
        seen_d[((int)t->x[de] - 8) / 16]++;
        check_text(&sw, t, lr);
        check_text(&sw, t, dr);
    }
    CHECK(seen_k[3] && seen_k[5] && seen_k[7] && seen_k[9]); /* every odd width, the ends too */
    CHECK(seen_d[0] && seen_d[1] && seen_d[2]);
    CHECK(seen_c[0] && seen_c[1] && seen_c[2] && seen_c[3] && seen_c[4] && seen_c[5]); /* high itself too */
    CHECK_CONTAINS(sw.canonical, "  learning_rate: {low: 0.0001, high: 0.01, log: true}\n");
    CHECK_CONTAINS(sw.canonical, "  filters: {low: 16, high: 128, step: 16}\n");
    CHECK_CONTAINS(sw.canonical, "  kernel: {low: 3, high: 9}\n");
    /* The canonical sweep is itself a sweep with the same trials. */
    FsSweep again;
    if (load(&again, sw.canonical) == 0) {
        CHECK(again.n_trials == sw.n_trials && !strcmp(again.canonical, sw.canonical));
        for (int i = 0; i < sw.n_trials && i < again.n_trials; i++)
            CHECK_MSG(!strcmp(sw.trials[i].config, again.trials[i].config), "trial %d differs after reloading", i);
        sweep_free(&again);
    }
    sweep_free(&sw);
}

/* Pearson's chi-square of counts against equal expectations. */
static double chi_square(const int *count, int bins, int n)
{
    double chi = 0, e = (double)n / bins;
    for (int b = 0; b < bins; b++) chi += (count[b] - e) * (count[b] - e) / e;
    return chi;
}

static void distribution(void)
{
    FsSweep sw;
    if (load(&sw, D "model:\n  dropout: {low: 0.0, high: 0.5}\n"
                    "training:\n  learning_rate: {low: 0.00001, high: 0.1, log: true}\nsearch: {random: 2000, seed: 7}\n"))
        return;
    CHECK(sw.n_trials == 2000);
    const int lr = dim_of(&sw, "training.learning_rate"), dr = dim_of(&sw, "model.dropout");
    int decade[4] = {0}, bin[5] = {0}, linear[4] = {0};
    for (int i = 0; i < sw.n_trials; i++) {
        const double x = sw.trials[i].x[lr];
        int b = (int)floor(log10(x) + 5.0);
        decade[b < 0 ? 0 : b > 3 ? 3 : b]++;
        b = (int)(sw.trials[i].x[dr] / 0.1);
        bin[b > 4 ? 4 : b]++;
        /* What a sampler uniform in linear space would give over the same decades. */
        const double u = 1e-5 + (i + 0.5) / sw.n_trials * (0.1 - 1e-5);
        b = (int)floor(log10(u) + 5.0);
        linear[b < 0 ? 0 : b > 3 ? 3 : b]++;
    }
    const double crit3 = 16.27, crit4 = 18.47; /* chi-square 0.1% critical values, 3 and 4 degrees of freedom */
    const double chi_log = chi_square(decade, 4, sw.n_trials), chi_lin = chi_square(linear, 4, sw.n_trials);
    printf("decades of lr: %d %d %d %d, chi-square %.2f (a linear sampler's: %.0f); dropout bins chi-square %.2f\n",
           decade[0], decade[1], decade[2], decade[3], chi_log, chi_lin, chi_square(bin, 5, sw.n_trials));
    CHECK(chi_log < crit3);
    CHECK(chi_lin > crit3); /* the threshold tells the two apart */
    CHECK(chi_square(bin, 5, sw.n_trials) < crit4);
    sweep_free(&sw);
}

static void prefix_and_ids(void)
{
    const char *t = D "model:\n  filters: {low: 4, high: 64}\ntraining:\n  weight_decay: {low: 0.0, high: 0.01}\n"
                      "search: {random: %d, seed: 3}\n";
    char a[400], b[400];
    snprintf(a, sizeof a, t, 8);
    snprintf(b, sizeof b, t, 20);
    FsSweep sa, sb, sc;
    if (load(&sa, a) || load(&sb, b) || load(&sc, a)) return;
    CHECK(sa.n_trials == 8 && sb.n_trials == 20);
    sweep_assign_ids(&sa, 42);
    sweep_assign_ids(&sb, 42);
    sweep_assign_ids(&sc, 42);
    for (int i = 0; i < 8; i++) {
        CHECK_MSG(!strcmp(sa.trials[i].config, sb.trials[i].config), "trial %d of random: 8 is not that of random: 20", i);
        CHECK(!strcmp(sa.trials[i].id, sb.trials[i].id) && !strcmp(sa.trials[i].id, sc.trials[i].id));
    }
    sweep_free(&sa), sweep_free(&sb), sweep_free(&sc);
}

static void refusals(void)
{
    EXPECT(D "training:\n  learning_rate: {low: 0.0001, high: 0.01, log: true}\n", "5:18",
           "training.learning_rate: a range is sampled, and this sweep is a grid (no search.random); give a list of "
           "values, [a, b, c], or grid_points: N");
    EXPECT(D "model:\n  filters: [4, 8]\n  kernel: {low: 3, high: 7}\nsearch: {pruner: median}\n", "6:11",
           "model.kernel: a range is sampled");
#define R "search: {random: 4}\n"
    EXPECT(D "training:\n  learning_rate: {low: 0.01, high: 0.001}\n" R, "5:18", "low must be below high");
    EXPECT(D "training:\n  weight_decay: {low: 0, high: 0.1, log: true}\n" R, "5:42", "log: true needs low above 0");
    EXPECT(D "training:\n  learning_rate: {low: 0.001}\n" R, "5:18", "a range needs low and high");
    EXPECT(D "training:\n  learning_rate: {low: 0.001, hi: 0.1}\n" R, "5:31", "unknown key 'hi'");
    EXPECT(D "training:\n  learning_rate: {low: -1, high: 0.1}\n" R, "5:24", "training.learning_rate.low: expected a number > 0");
    EXPECT(D "model:\n  kernel: {low: 4, high: 9}\n" R, "5:17", "model.kernel.low: 4 is even");
    EXPECT(D "model:\n  kernel: {low: 3, high: 9, step: 3}\n" R, "5:35", "model.kernel.step: expected an even step");
    EXPECT(D "model:\n  kernel: {low: 3, high: 11}\n" R, "5:11", "the range's high 11 is wider than the window (9)");
    EXPECT(D "model:\n  filters: {low: 4, high: 64, step: 2.5}\n" R, "5:37", "model.filters.step: expected a whole number");
    EXPECT(D "model:\n  filters: {low: 4, high: 64, step: 4, log: true}\n" R, "5:37", "step and log: true do not go");
    EXPECT(D "training:\n  seed: {low: 1, high: 9}\n" R, "5:9", "training.seed: expected a whole number");
    EXPECT(D "model:\n  layers:\n    - - conv1d: {filters: 8, width: {low: 3, high: 7, grid_points: 3}}\n" R, "6:68",
           "grid_points: not in a layer list");
    EXPECT(D "training:\n  learning_rate: {low: 0.001, high: 0.1, grid_points: 1}\n", "5:55",
           "grid_points: expected an integer from 2 to 1000");
#undef R
}

static void grid_points(void)
{
    FsSweep sw;
    if (load(&sw, D "training:\n  learning_rate: {low: 0.0001, high: 0.01, log: true, grid_points: 3}\n"
                    "model:\n  kernel: {low: 3, high: 9, grid_points: 4}\n"))
        return;
    CHECK(sw.n_trials == 12 && sw.grid_size == 12);
    CHECK_CONTAINS(sw.canonical, "  learning_rate: [0.0001, 0.001, 0.01]\n");
    CHECK_CONTAINS(sw.canonical, "  kernel: [3, 5, 7, 9]\n");
    sweep_free(&sw);
}

static void layer_lists(void)
{
    FsSweep sw;
    if (load(&sw, D "model:\n  layers:\n    - - conv1d: {filters: {low: 8, high: 64, step: 8}, width: 5}\n"
                    "      - dropout: {rate: {low: 0.1, high: 0.5}}\n      - dense: {units: 16}\n"
                    "    - - conv1d: {filters: 4, width: {low: 3, high: 9}}\nsearch: {random: 40}\n"))
        return;
    const int f = dim_of(&sw, "model.layers[1][1].filters"), r = dim_of(&sw, "model.layers[1][2].rate");
    const int w = dim_of(&sw, "model.layers[2][1].width"), alt = dim_of(&sw, "model.layers");
    CHECK(f >= 0 && r >= 0 && w >= 0 && alt >= 0);
    if (f < 0 || r < 0 || w < 0 || alt < 0) return sweep_free(&sw);
    int firsts = 0;
    for (int i = 0; i < sw.n_trials; i++) {
        const FsTrial *t = &sw.trials[i];
        char buf[64];
        if (t->at[alt] == 0) {
            firsts++;
            CHECK(t->arch.layers[0].units == (int)t->x[f] && t->arch.layers[0].units % 8 == 0);
            CHECK(t->arch.layers[1].rate == (float)t->x[r] && t->x[r] >= (double)0.1f && t->x[r] <= 0.5);
            CHECK(sweep_trial_value(&sw, t, w, buf, sizeof buf) == NULL); /* the other list's width: no effect */
        } else {
            CHECK(t->arch.layers[0].width == (int)t->x[w] && t->arch.layers[0].width % 2 == 1);
            CHECK(sweep_trial_value(&sw, t, f, buf, sizeof buf) == NULL);
        }
    }
    CHECK(sw.n_trials == 40 && sw.n_trials - firsts == 4); /* the second list's 4 widths, each once */
    CHECK_CONTAINS(sw.canonical, "conv1d: {filters: {low: 8, high: 64, step: 8}, width: 5, activation: swish}");
    CHECK_CONTAINS(sw.canonical, "dropout: {rate: {low: 0.1, high: 0.5}}");
    sweep_free(&sw);
}

/* Higher is better, peaked at lr = 1e-3 in log space. */
static double objective(const FsSweep *sw, int t) { double z = log10(sw->trials[t].x[0]) + 3.0; return -z * z; }

static double search(const FsSweep *sw, int budget, int tpe, int *order)
{
    unsigned char *taken = calloc((size_t)sw->n_trials, 1);
    double score[64], best = -INFINITY;
    for (int n = 0, b = 0; n < budget; b++) {
        int got = sample_propose(sw, order, tpe ? score : NULL, tpe ? n : 0, taken, 4, b, order + n);
        CHECK(got == 4);
        for (int k = n; k < n + got; k++) {
            CHECK_MSG(!taken[order[k]], "trial %d proposed twice", order[k]);
            taken[order[k]] = 1;
            score[k] = objective(sw, order[k]);
            if (score[k] > best) best = score[k];
        }
        n += got;
    }
    free(taken);
    return best;
}

static void tpe(void)
{
    double sum_tpe = 0, sum_random = 0;
    for (int seed = 1; seed <= 10; seed++) {
        char text[400];
        snprintf(text, sizeof text, D "training:\n  learning_rate: {low: 0.000001, high: 1, log: true}\n"
                 "search: {random: 24, sampler: tpe, batch: 4, seed: %d}\n", seed);
        FsSweep sw;
        if (load(&sw, text)) return;
        CHECK(sw.n_trials == sweep_tpe_pool(24) && sw.n_dims == 1 && sw.dims[0].range);
        int order[64], again[64], rnd[64];
        sum_tpe += search(&sw, 24, 1, order);
        search(&sw, 24, 1, again);
        CHECK_MSG(!memcmp(order, again, sizeof(int) * 24), "seed %d: other proposals the second time", seed);
        sum_random += search(&sw, 24, 0, rnd);
        sweep_free(&sw);
    }
    printf("best of 24 trials, mean over 10 seeds: tpe %.5f, random %.5f (optimum 0)\n", sum_tpe / 10, sum_random / 10);
    CHECK(sum_tpe > sum_random);
}

int main(void)
{
    bounds();
    distribution();
    prefix_and_ids();
    refusals();
    grid_points();
    layer_lists();
    tpe();
    return test_finish();
}
