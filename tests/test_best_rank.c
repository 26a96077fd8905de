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
#include "report/report.h"
#include "run/progress.h"
#include "test_proc.h"

static char dir[256];

static void add_fold(FsJournal *j, const char *id, int fold, int correct, float loss)
{
    const int epochs = 1, total = 1000;
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
    r.val_examples = (uint64_t)total;
    r.train_examples = (uint64_t)2 * total;
    r.seconds = 1.0;
    FsErr err = {0};
    CHECK_MSG(journal_append_fold(j, id, fold, &r, NULL, &err) == 0, "%s", err.msg);
    train_result_free(&r);
}

static void add_trial(FsJournal *j, const char *id, int index, const int *correct, const float *loss, int folds)
{
    FsErr err = {0};
    CHECK_MSG(journal_append_trial(j, id, index, 10, "{}", &err) == 0, "%s", err.msg);
    /* Folds recorded last first: the board sums them fold by fold. */
    for (int f = folds - 1; f >= 0; f--) add_fold(j, id, f, correct[f], loss[f]);
}

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

int main(void)
{
    tp_tmpdir(dir, sizeof dir, "best_rank");
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_open(&j, dir, &err) == 0, "%s", err.msg);
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
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_finish();
}
