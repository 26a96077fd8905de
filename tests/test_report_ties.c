/*
 * Which trials are tied with the best (report/report_ties.c,
 * docs/statistics.md), on a journal of 3-fold trials whose folds each saw
 * 1,000 validation and 2,000 training residues a epoch (n_val / n_train =
 * 0.5):
 *
 *   best  0.80 0.82 0.84   rank 1: tied with itself, p = 1
 *   near  0.80 0.80 0.83   differences 0, 0.02, 0.01: t = 1.0954 at 2 df
 *   far   0.60 0.62 0.61   differences 0.20, 0.20, 0.23: t = 13.28
 *   inc   two folds only   not compared: null everywhere
 *   cut   pruned after fold 0 at 0.95: after the complete trials, marked
 *
 * The p-values are worked here from Student's t at 2 degrees of freedom in
 * closed form (P(|T| > t) = 1 - t / sqrt(2 + t^2)) and Holm's rule by hand,
 * not by the code under test; then the JSON and CSV carry them, and ranking
 * by loss compares the losses instead. Last (best_rank), the progress
 * line's best against the board's first on trials of equal means.
 */
#include <sys/stat.h>

#include "json/json.h"
#include "report/report.h"
#include "run/progress.h"
#include "test_proc.h"

static char dir[256];

static void add_fold(FsJournal *j, const char *id, int fold, int correct, float loss)
{
    const int epochs = 2, total = 1000;
    FsFitResult r;
    train_result_alloc(&r, epochs);
    r.status = FS_FIT_OK;
    r.epochs = epochs;
    r.best_epoch = 1;
    r.best_val_loss = loss;
    r.best_confusion[0][0] = (uint64_t)correct;
    r.best_confusion[0][1] = (uint64_t)(total - correct);
    r.curves.val_q3[0] = (float)((double)correct / total);
    r.curves.val_loss[0] = loss;
    r.val_examples = (uint64_t)epochs * total;
    r.train_examples = (uint64_t)epochs * 2 * total;
    r.seconds = 1.0;
    FsErr err = {0};
    CHECK_MSG(journal_append_fold(j, id, fold, &r, NULL, &err) == 0, "%s", err.msg);
    train_result_free(&r);
}

static void add_trial(FsJournal *j, const char *id, int index, const int *correct, const float *loss, int folds)
{
    FsErr err = {0};
    /* far is the smallest model: it is on the [q3, params] front. */
    CHECK_MSG(journal_append_trial(j, id, index, strcmp(id, "far") ? 10 : 5, "{}", &err) == 0, "%s", err.msg);
    for (int f = 0; f < folds; f++) add_fold(j, id, f, correct[f], loss[f]);
}

static const FsReportRow *row_of(const FsReport *rep, const char *id)
{
    for (int i = 0; i < rep->n_rows; i++)
        if (!strcmp(rep->rows[i].id, id)) return &rep->rows[i];
    CHECK_MSG(0, "no row %s", id);
    return &rep->rows[0];
}

static double p_two_df(double mean_d, double var_d)
{
    const double t = fabs(mean_d) / sqrt((1.0 / 3.0 + 0.5) * var_d);
    return 1.0 - t / sqrt(2.0 + t * t);
}

static char *render(const FsReport *rep, FsReportFormat fmt)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    report_write(rep, fmt, 0, f);
    fclose(f);
    return buf;
}

/* A trial pruned after fold 0 at 95%, above the best's 82% mean over 3
 * folds: listed after every complete trial, its one-fold mean marked and
 * compared with nothing. And near's "vs best": its folds minus best's (0,
 * -0.02, -0.01), mean -0.01, interval -0.01 +- t(0.975, 2) sqrt((1/3 +
 * 1/2) 0.0001). */
static void pruned_row(FsJournal *j, const FsReportSpec *spec)
{
    const int cut[1] = {950};
    const float lc[1] = {0.2f};
    add_trial(j, "cut", 4, cut, lc, 1);
    FsCutRecord c = {.trial = "cut", .fold = 0, .epoch = 0, .rule = "folds", .value = 0.1, .threshold = 0.0,
                     .reason = "made up"};
    FsErr err = {0};
    CHECK_MSG(journal_append_cut(j, &c, &err) == 0, "%s", err.msg);
    FsReport rep;
    report_build(&rep, j, spec);
    const FsReportRow *r = row_of(&rep, "cut"), *n = row_of(&rep, "near");
    CHECK(r->status == FS_TRIAL_PRUNED && r->n_mean == 1 && fabs(r->mean - 0.95) < 1e-12);
    for (int i = 0; i < rep.n_rows; i++)
        if (rep.rows[i].status == FS_TRIAL_OK) CHECK(rep.rows[i].rank < r->rank);
    CHECK(r->tied == -1 && isnan(r->diff) && !r->has_ci);
    const double tq = 0.95 / sqrt(2.0 * 0.975 * 0.025), half = tq * sqrt((1.0 / 3.0 + 0.5) * 0.0001);
    CHECK_NEAR(n->diff, -0.01, 1e-12);
    CHECK_NEAR(n->diff_lo, -0.01 - half, 1e-12);
    CHECK_NEAR(n->diff_hi, -0.01 + half, 1e-12);
    CHECK(isnan(rep.rows[0].diff)); /* the best against itself: nothing shown */
    char *tab = render(&rep, FS_REPORT_TABLE), *md = render(&rep, FS_REPORT_MD);
    CHECK_CONTAINS(tab, "   5  cut   pruned      95.0 (1/3) ");
    CHECK_CONTAINS(md, "| 5 | cut | pruned | 95.0 (1/3) |");
    CHECK_CONTAINS(md, "(n/3) after a mean: over n of the 3 folds (a pruned, incomplete or diverged trial)");
    free(tab), free(md);
    report_free(&rep);
}

/*
 * The progress line's best is the leaderboard's first (issue #43, item 5):
 * one ranking rule, report_rank_before, for both. A journal of 3-fold
 * trials where the board's order hangs on its tie-breaks:
 *
 *   late   index 2   0.70 0.72 0.74   completes first
 *   early  index 1   0.70 0.72 0.74   the same mean: the lower index ranks first
 *   low    index 0   0.60 0.62 0.61   below both
 *   part   index 3   0.95 0.95        two folds: never the best
 *
 * Offered in completion order (late, early, low, part), the line kept the
 * first of equal means (late) where the board names early. Ranked by loss
 * the order turns. Every pair agrees with report_build's order.
 */
/* The line's best after offering the trials in `order`, against the
 * board's first row; every pair of complete trials in the board's order. */
static void check_metric(const FsJournal *j, FsMetricKind metric, const char *const *order, int n, const char *want)
{
    FsReportSpec spec = {metric, 3, 0, 4, NULL, 0, 0, {0}, 0, 0};
    FsReport rep;
    report_build(&rep, j, &spec);
    CHECK_MSG(!strcmp(rep.rows[0].id, want), "%s: the board's first is %s, expected %s",
              metric == FS_METRIC_LOSS ? "loss" : "q3", rep.rows[0].id, want);
    FsProgress p;
    progress_init(&p, stdout, 1, 0, 4, 0, 3, 12, 0.0);
    progress_rank_by(&p, metric == FS_METRIC_LOSS);
    for (int i = 0; i < n; i++) {
        FsReportRank r;
        int ok = report_trial_rank(j, &spec, order[i], &r);
        CHECK_MSG(ok == (strcmp(order[i], "part") != 0), "%s: complete %d", order[i], ok);
        if (ok) progress_offer_best(&p, &r);
    }
    CHECK(p.have_best);
    CHECK_MSG(!strcmp(p.best.id, rep.rows[0].id), "the line's best %s, the board's first %s", p.best.id,
              rep.rows[0].id);
    CHECK(p.best.mean == rep.rows[0].mean);
    for (int a = 0; a < rep.n_rows; a++)
        for (int b = 0; b < rep.n_rows; b++) {
            FsReportRank ra, rb;
            if (a == b || !report_trial_rank(j, &spec, rep.rows[a].id, &ra) ||
                !report_trial_rank(j, &spec, rep.rows[b].id, &rb))
                continue;
            CHECK_MSG(report_rank_before(&ra, &rb) == (a < b), "%s before %s: %d", ra.id, rb.id,
                      report_rank_before(&ra, &rb));
        }
    report_free(&rep);
}

static void best_rank(void)
{
    char bdir[300];
    snprintf(bdir, sizeof bdir, "%s/best", dir);
    CHECK(mkdir(bdir, 0755) == 0);
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_open(&j, bdir, &err) == 0, "%s", err.msg);
    const int same[3] = {700, 720, 740}, low[3] = {600, 620, 610}, part[2] = {950, 950};
    const float ls[3] = {0.5f, 0.5f, 0.5f}, ll[3] = {0.3f, 0.3f, 0.3f}, lp[2] = {0.1f, 0.1f};
    add_trial(&j, "late", 2, same, ls, 3);
    add_trial(&j, "early", 1, same, ls, 3);
    add_trial(&j, "low", 0, low, ll, 3);
    add_trial(&j, "part", 3, part, lp, 2);
    const char *const order[4] = {"late", "early", "low", "part"};
    check_metric(&j, FS_METRIC_Q3, order, 4, "early");
    check_metric(&j, FS_METRIC_LOSS, order, 4, "low");
    journal_close(&j);
}

int main(void)
{
    tp_tmpdir(dir, sizeof dir, "ties");
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_open(&j, dir, &err) == 0, "%s", err.msg);
    const int best[3] = {800, 820, 840}, near[3] = {800, 800, 830}, far[3] = {600, 620, 610}, inc[2] = {900, 900};
    const float lb[3] = {0.50f, 0.50f, 0.50f}, ln[3] = {0.40f, 0.45f, 0.50f}, lf[3] = {0.90f, 0.95f, 0.90f},
                li[2] = {0.1f, 0.1f};
    add_trial(&j, "best", 0, best, lb, 3);
    add_trial(&j, "near", 1, near, ln, 3);
    add_trial(&j, "far", 2, far, lf, 3);
    add_trial(&j, "inc", 3, inc, li, 2);

    FsReportSpec spec = {FS_METRIC_Q3, 3, 0, 4, NULL, 0, 0, {0}, 0, 0};
    FsReport rep;
    report_build(&rep, &j, &spec);
    const FsReportRow *b = row_of(&rep, "best"), *n = row_of(&rep, "near"), *f = row_of(&rep, "far"),
                      *in = row_of(&rep, "inc");
    CHECK(b->rank == 1);
    /* Best: p = 1, tied with itself, its interval holds its mean: 0.82 +-
     * t(0.975, 2) sqrt((1/3 + 1/2) 0.0004). */
    CHECK(b->has_ci && b->p_vs_best == 1.0 && b->tied == 1);
    const double half = 0.95 / sqrt(2.0 * 0.975 * 0.025) * sqrt((1.0 / 3.0 + 0.5) * 0.0004);
    CHECK_NEAR(b->ci_lo, 0.82 - half, 1e-12);
    CHECK_NEAR(b->ci_hi, 0.82 + half, 1e-12);
    /* Holm over two comparisons: far's 0.0056 doubled stays below 0.05;
     * near's 0.388 is not raised (it is the larger). */
    const double p_near = p_two_df(0.01, 0.0001), p_far = p_two_df(0.21, 0.0003);
    CHECK(p_far * 2.0 < 0.05 && p_near > 0.05);
    CHECK_NEAR(f->p_vs_best, 2.0 * p_far, 1e-12);
    CHECK_NEAR(n->p_vs_best, p_near, 1e-12);
    CHECK(n->tied == 1 && f->tied == 0);
    CHECK(!in->has_ci && isnan(in->p_vs_best) && in->tied == -1 && isnan(in->ci_lo));

    char *js = render(&rep, FS_REPORT_JSON);
    FsJsonDoc doc;
    char why[200];
    CHECK_MSG(json_parse(&doc, js, strlen(js), why, sizeof why) == 0, "%s", why);
    CHECK(doc.root->type == FS_JSON_ARRAY && doc.root->n == 4);
    for (int i = 0; i < doc.root->n; i++) {
        const FsJson *o = json_at(doc.root, i), *id = json_get(o, "id"), *ci = json_get(o, "q3_ci95"),
                     *p = json_get(o, "p_vs_best"), *t = json_get(o, "tied_with_best");
        CHECK(id && ci && p && t);
        if (!id || !ci || !p || !t) continue;
        if (!strcmp(id->str, "inc")) {
            CHECK(ci->type == FS_JSON_NULL && p->type == FS_JSON_NULL && t->type == FS_JSON_NULL);
            continue;
        }
        const FsReportRow *r = row_of(&rep, id->str);
        double lo, hi, pv;
        CHECK(ci->type == FS_JSON_ARRAY && ci->n == 2 && json_f64(json_at(ci, 0), &lo) == 0 &&
              json_f64(json_at(ci, 1), &hi) == 0 && lo == r->ci_lo && hi == r->ci_hi);
        CHECK(json_f64(p, &pv) == 0 && pv == r->p_vs_best);
        CHECK(t->type == (r == f ? FS_JSON_FALSE : FS_JSON_TRUE));
    }
    json_free(&doc);
    free(js);
    char *csv = render(&rep, FS_REPORT_CSV);
    CHECK_CONTAINS(csv, "mean,std,ci95_lo,ci95_hi,p_vs_best,tied_with_best,folds_done");
    CHECK_CONTAINS(csv, "\n1,best,0,ok,q3,0.82,");
    CHECK_CONTAINS(csv, ",1,true,3,");     /* best: p 1, tied, 3 folds */
    CHECK_CONTAINS(csv, "\n4,inc,3,incomplete,q3,0.9,0,,,,,2,"); /* not compared */
    free(csv);
    /* The terminal table: the interval's half-width in points, and the tie. */
    char *tab = render(&rep, FS_REPORT_TABLE);
    char want[200];
    snprintf(want, sizeof want, "  82.0  1.6  %5.1f            -  best ", 100.0 * half);
    CHECK_CONTAINS(tab, "q3 mean %  std  +-95%      vs best  tied ");
    /* What the test compared: each trial's folds minus the best's, their
     * mean and corrected interval, beside the verdict; the legend says so
     * and names the tied ranks. */
    CHECK_CONTAINS(tab, "  -1.0 +-3.9  yes ");
    CHECK_CONTAINS(tab, " -21.0 +-6.8  no ");
    CHECK_CONTAINS(tab, "vs best: the trial's folds minus rank 1's, fold by fold");
    CHECK_CONTAINS(tab, "tied with rank 1: 2; told apart: 3\n");
    /* The incomplete trial's 90.0 is over 2 of 3 folds: marked, listed
     * after the complete ones, and the legend says it is no 3-fold mean. */
    CHECK_CONTAINS(tab, "   4  inc   incomplete  90.0 (2/3) ");
    CHECK_CONTAINS(tab, "never compared with their 3-fold means");
    CHECK_CONTAINS(tab, want);
    CHECK_CONTAINS(tab, "  yes ");
    CHECK_CONTAINS(tab, "  no  ");
    free(tab);
    report_free(&rep);

    /* run.objectives [q3, params]: best (82%, 10 parameters) dominates near
     * (81%, 10); far (61%, 5) is smaller, so on the front too. */
    spec.objectives[0] = FS_OBJ_Q3, spec.objectives[1] = FS_OBJ_PARAMS, spec.n_objectives = 2;
    report_build(&rep, &j, &spec);
    CHECK(row_of(&rep, "best")->pareto == 1 && row_of(&rep, "near")->pareto == 0 && row_of(&rep, "far")->pareto == 1);
    CHECK(row_of(&rep, "inc")->pareto == -1);
    char *pj = render(&rep, FS_REPORT_JSON);
    CHECK_CONTAINS(pj, "\"pareto\":true");
    CHECK_CONTAINS(pj, "\"pareto\":null");
    free(pj);
    char *pt = render(&rep, FS_REPORT_TABLE);
    CHECK_CONTAINS(pt, " front ");
    free(pt);
    report_free(&rep);
    spec.n_objectives = 0;

    /* run.alpha 0.01: far's adjusted 0.0113 is no longer below it: tied. */
    spec.alpha = 0.01;
    report_build(&rep, &j, &spec);
    CHECK(row_of(&rep, "far")->tied == 1 && row_of(&rep, "near")->tied == 1);
    report_free(&rep);
    spec.alpha = 0.0;

    /* By loss (lower is better): near 0.45 mean is the best; best 0.50
     * differs by 0.10, 0.05, 0 against it. */
    spec.metric = FS_METRIC_LOSS;
    report_build(&rep, &j, &spec);
    CHECK(!strcmp(rep.rows[0].id, "near") && rep.rows[0].tied == 1);
    b = row_of(&rep, "best");
    CHECK(b->has_ci && !isnan(b->p_vs_best));
    char *lj = render(&rep, FS_REPORT_JSON);
    CHECK_CONTAINS(lj, "\"loss_ci95\"");
    free(lj);
    report_free(&rep);
    spec.metric = FS_METRIC_Q3;
    pruned_row(&j, &spec);
    journal_close(&j);
    best_rank();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_finish();
}
