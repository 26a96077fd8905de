/*
 * testphase: the sweep's test section, once every fold is trained. The
 * fold ensembles of the top N trials (and with test.refit their refits)
 * are scored on the held-out test set; each result is a journal record
 * before the next one starts, so a killed run computes only the missing
 * ones on rerun. The ranking never reads them.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "predict/predict.h"
#include "report/report.h"
#include "run/state.h"

/* Test hook KILL_AFTER_EVAL=N (util/faults.c) kills the process after the
 * Nth test record, mid-phase. */
static void maybe_die_after_eval(void)
{
    static int count;
    const char *s = fs_test_fault("KILL_AFTER_EVAL");
    if (s && ++count == atoi(s)) {
        fflush(NULL);
        raise(SIGKILL);
    }
}

/* One look at the test set through evaluate's pipeline. The run screened
 * the test set against its training data before training (state.c:
 * refused, or the overlap left out), so here the guard only counts. */
static int evaluate_one(RunState *st, const FsModelSet *set, const char *trial, const char *key, FsErr *err)
{
    FsEnsemble *e = fs_calloc(1, sizeof *e);
    FsEvaluation *ev = fs_calloc(1, sizeof *ev);
    FsEvalSpec es = {.overlap = st->sw.test_exclude_overlap ? FS_OVERLAP_EXCLUDE : FS_OVERLAP_REFUSE, .screened = 1,
                     .max_identity = st->sw.test_max_identity, .max_coverage = st->sw.test_max_coverage, .threads = st->set.solo_threads,
                     .reps = FS_EVAL_RESAMPLES, .seed = FS_EVAL_SEED};
    snprintf(ev->data, sizeof ev->data, "%s", st->test_desc);
    int rc = predict_load(e, set, FS_PREDICT_BATCH, err);
    if (rc == 0) rc = predict_evaluate(ev, e, &st->test, &es, err);
    if (rc == 0) rc = predict_evaluate_record(&st->j, NULL, ev, trial, key, "test", err);
    if (rc == 0) maybe_die_after_eval();
    predict_free(e);
    free(e);
    free(ev);
    return rc;
}

/* The refit of a trial, trained now unless an intact one is recorded. */
static int refit_of(RunState *st, const FsTrial *tr, FsModelSet *set, FsErr *err)
{
    const FsRefitRecord *rr = journal_find_refit(&st->j, tr->id);
    char why[200], path[FS_PATH_IN_DIR];
    if (rr) snprintf(path, sizeof path, "%s/%s", st->dir, rr->model.file);
    if (!rr || modelfile_verify(path, rr->model.bytes, rr->model.crc32, why, sizeof why) != 0) {
        if (run_refit_trial(st->dir, &st->j, &st->ds, &st->sw.features, tr, &st->folds, st->seen, st->n_seen, st->set.solo_threads,
                            st->use_gpu ? st->gpu_device : -1, err) != 0)
            return -1;
        rr = journal_find_refit(&st->j, tr->id);
    }
    memset(set, 0, sizeof *set);
    return predict_find(set, strcat(strcat(strcpy(path, st->dir), "/"), rr->model.file), NULL, 0, -1, err);
}

/* A refit that scored below its fold ensemble on the same test proteins is
 * said, with what to ship instead (issue #43: 58.8% against 63.4%, and
 * only the leaderboard's two columns showed it). */
static void refit_below(const RunState *st, FILE *out, const char *id, uint64_t fp)
{
    const FsEvalRecord *e = journal_find_eval(&st->j, id, "ensemble", "test", fp),
                       *r = journal_find_eval(&st->j, id, "refit", "test", fp);
    if (!e || !r || !(r->q3 < e->q3)) return;
    fprintf(out, "test: the refit of trial %s scored Q3 %s%%, below its fold ensemble's %s%% on the same proteins: "
                 "the ensemble is the one to ship (%s export ",
            id, fs_percent_text(r->q3), fs_percent_text(e->q3), fs_program());
    fs_put_shell_word(out, st->dir);
    fprintf(out, " --trial %s -o DIR; docs/models.md, \"Refit or fold ensemble\")\n", id);
}

int run_test_phase(RunState *st, FILE *out, int quiet)
{
    if (!st->sw.has_test || st->io_failed) return 0;
    FsReportSpec spec;
    FsReport rep;
    report_spec_from_sweep(&spec, &st->sw);
    report_build(&rep, &st->j, &spec);
    FsModelSet *set = fs_calloc(1, sizeof *set);
    FsErr err = {0};
    int rc = 0, n = 0, done = 0;
    uint64_t fp = st->test.fingerprint;
    for (int i = 0; i < rep.n_rows && n < st->sw.test_top && rc == 0; i++) {
        const FsReportRow *row = &rep.rows[i];
        if (row->status != FS_TRIAL_OK) continue;
        n++;
        const FsTrial *tr = NULL;
        for (int t = 0; t < st->sw.n_trials; t++)
            if (!strcmp(st->sw.trials[t].id, row->id)) tr = &st->sw.trials[t];
        int want_ens = !journal_find_eval(&st->j, row->id, "ensemble", "test", fp);
        int want_refit = st->sw.test_refit && tr && !journal_find_eval(&st->j, row->id, "refit", "test", fp);
        /* A signal stops the phase before its next piece of work: the run
         * then exits 3 (work is left), and the rerun does the rest. */
        if ((want_ens || want_refit) && *run_stop_flag()) {
            st->test_left = 1;
            break;
        }
        if (want_ens) {
            memset(set, 0, sizeof *set);
            if (predict_find(set, st->dir, row->id, 0, -1, &err) != 0) {
                /* e.g. its models were removed by an earlier run's keep_models */
                fprintf(stderr, "foldsweep: test: trial %s not evaluated: %s\n", row->id, err.msg);
                memset(&err, 0, sizeof err);
            } else if ((rc = evaluate_one(st, set, row->id, "ensemble", &err)) == 0) {
                done++;
            }
        }
        if (rc == 0 && want_refit) {
            if (!quiet) fprintf(out, "test: refitting trial %s on all training proteins\n", row->id);
            rc = refit_of(st, tr, set, &err);
            if (rc == 0 && (rc = evaluate_one(st, set, row->id, "refit", &err)) == 0) {
                done++;
                if (!quiet) refit_below(st, out, row->id, fp);
            }
        }
    }
    if (rc != 0) fprintf(stderr, "foldsweep: test: %s\n", err.msg);
    else if (!quiet && done)
        fprintf(out, "test: %d evaluation%s of the top %d trial%s on %s (held out; the ranking does not use them)\n",
                done, done == 1 ? "" : "s", n, n == 1 ? "" : "s", st->test_desc);
    free(set);
    report_free(&rep);
    return rc;
}
