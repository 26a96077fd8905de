/*
 * test_trial: "a trial by id prefix or rank" (predict_trial_row), the one
 * rule behind --trial ID and --rank N of export, refit, predict and
 * evaluate, on a leaderboard built by hand: a unique prefix and a whole id
 * find their trial, a rank its row; an ambiguous prefix, an unknown id and
 * a rank beyond the board are refused with the folder named and what to do;
 * a trial that is not complete and ok is refused only where its fold models
 * must form an ensemble (and says why, with its reason).
 */
#include <string.h>

#include "predict/predict.h"
#include "test.h"

static FsReportRow rows[4];
static FsReport rep = {.rows = rows, .n_rows = 4};

static void board(void)
{
    const char *ids[] = {"ab12000000000000", "ab34000000000000", "cd56000000000000", "ef78000000000000"};
    const FsTrialStatus st[] = {FS_TRIAL_OK, FS_TRIAL_OK, FS_TRIAL_PRUNED, FS_TRIAL_INCOMPLETE};
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 4; i++) {
        rows[i].rank = i + 1;
        snprintf(rows[i].id, sizeof rows[i].id, "%s", ids[i]);
        rows[i].status = st[i];
    }
    snprintf(rows[2].reason, sizeof rows[2].reason, "median rule at fold 0, epoch 2");
}

/* The row found, or NULL with err.msg holding the refusal. */
static const FsReportRow *pick(const char *trial, int rank, int whole, FsErr *err)
{
    memset(err, 0, sizeof *err);
    const FsReportRow *r = predict_trial_row(&rep, "RUN", trial, rank, whole, err);
    CHECK_MSG((r != NULL) != err->set, "a row %s, and an error %s", r ? "found" : "not found",
              err->set ? "set" : "not set");
    return r;
}

int main(void)
{
    FsErr err;
    board();
    /* Found: a unique prefix, a whole id, a rank; --trial wins over the rank. */
    CHECK(pick("ab3", 0, 1, &err) == &rows[1]);
    CHECK(pick("cd56000000000000", 0, 0, &err) == &rows[2]);
    CHECK(pick(NULL, 2, 1, &err) == &rows[1]);
    CHECK(pick(NULL, 1, 1, &err) == &rows[0]);
    CHECK(pick("ef", 1, 0, &err) == &rows[3]);

    /* An ambiguous prefix names two of the trials it matches. */
    CHECK(pick("ab", 0, 1, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: trial 'ab' is ambiguous (ab12000000000000, ab34000000000000, ...): give more of "
                           "its id"));
    CHECK(pick("", 0, 0, &err) == NULL); /* every id starts with "" */
    CHECK_CONTAINS(err.msg, "is ambiguous");

    /* Unknown: an id no trial starts with, a longer one, a rank past the end. */
    CHECK(pick("zz", 0, 1, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: no trial 'zz' in the journal (see foldsweep leaderboard RUN)"));
    CHECK(pick("ab12000000000000ff", 0, 1, &err) == NULL);
    CHECK_CONTAINS(err.msg, "no trial 'ab12000000000000ff'");
    CHECK(pick(NULL, 5, 1, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: no trial at rank 5 (the leaderboard has 4)"));
    FsReport empty = {0};
    memset(&err, 0, sizeof err);
    CHECK(predict_trial_row(&empty, "RUN", NULL, 1, 0, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: no trial at rank 1 (the leaderboard has 0)"));

    /* Not complete and ok: no ensemble (whole), but one fold model may serve. */
    CHECK(pick(NULL, 3, 1, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: trial cd56000000000000 is pruned: median rule at fold 0, epoch 2: its fold models "
                           "do not form an ensemble (give --fold K for one)"));
    CHECK(pick("ef", 0, 1, &err) == NULL);
    CHECK(!strcmp(err.msg, "RUN: trial ef78000000000000 is incomplete: its fold models do not form an ensemble "
                           "(give --fold K for one)"));
    CHECK(pick(NULL, 3, 0, &err) == &rows[2]);
    return test_finish();
}
