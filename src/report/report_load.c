/*
 * report_load.c: what leaderboard, status, report and repair need from a
 * run folder: the sweep's metric, folds and trial count, and the journal
 * checked against the sweep (journal_set_sweep). The canonical
 * DIR/sweep.yaml is the source; when it is absent, the journal's latest
 * run record (written by the runner from the same sweep) stands in; when
 * it is damaged, the journal's own record of the sweep does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"

/* DIR/sweep.yaml into sw: 0; -1 with *missing set, or with why (the
 * loader's messages). */
static int load_sweep_file(FsSweep *sw, const char *path, int *missing, char *why, size_t why_n)
{
    struct stat st;
    FsErrList errs = {0};
    memset(sw, 0, sizeof *sw);
    *missing = stat(path, &st) != 0;
    if (*missing) return snprintf(why, why_n, "%s", strerror(errno)), -1;
    if (sweep_load_file(sw, path, &errs) == 0) return errlist_free(&errs), 0;
    errlist_join(&errs, why, why_n);
    size_t n = strlen(why);
    if (n && why[n - 1] == '\n') why[n - 1] = '\0';
    errlist_free(&errs);
    sweep_free(sw);
    return -1;
}

int report_spec_load(FsReportSpec *spec, const char *dir, const FsJournal *j, int *from_journal,
                     FsErr *err)
{
    char path[FS_PATH_IN_DIR], why[900];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    FsSweep sw;
    int missing;
    *from_journal = 0;
    if (load_sweep_file(&sw, path, &missing, why, sizeof why) == 0) {
        report_spec_from_sweep(spec, &sw);
        sweep_free(&sw);
        return 0;
    }
    if (missing && j && report_spec_from_journal(spec, j) == 0) {
        *from_journal = 1;
        return 0;
    }
    if (missing)
        fs_err_set(err, "%s: cannot read the sweep (%s), and the journal has no run record with the metric and folds",
                   path, why);
    else
        fs_err_set(err, "%s: cannot load the run folder's sweep:\n%s", path, why);
    return -1;
}

void report_journal_sweep(FsJournalSweep *js, const char **ids, const FsSweep *sw, int folds,
                          const uint64_t *val_residues)
{
    memset(js, 0, sizeof *js);
    for (int t = 0; ids && t < sw->n_trials; t++) ids[t] = sw->trials[t].id;
    js->n_trials = ids ? sw->n_trials : 0;
    js->ids = ids;
    js->folds = folds;
    js->predefined = sw->predefined;
    js->pruner = sw->prune.kind == FS_PRUNER_NONE ? NULL : prune_kind_name(sw->prune.kind);
    js->val_residues = val_residues;
}

/* The training data's fingerprint the journal's runs recorded (0: none). */
static uint64_t journal_fingerprint(const FsJournal *j)
{
    for (int r = j->n_runs - 1; r >= 0; r--)
        if (j->runs[r].data_fingerprint) return j->runs[r].data_fingerprint;
    return 0;
}

/* The folds the run trained: the sweep record's, else the run record's
 * (a prepared file may have other than sweep's data.folds), else the sweep's. */
static int folder_folds(const FsJournal *j, const FsSweep *sw)
{
    const FsRunRecord *run = journal_last_run(j);
    if (j->sweep_text && j->n_sweep_val > 0) return j->n_sweep_val;
    if (run && run->folds > 0) return run->folds;
    return sweep_fold_count(sw);
}

/* The journal checked against sw: trial ids and the folds' validation
 * residues when the journal has a sweep record (written by a build that
 * computes ids as this one does: an earlier build's folder stays readable,
 * test_old_folder) and a run record with the data fingerprint. */
static int check_journal(FsJournal *j, FsSweep *sw, FsErr *err)
{
    /* run.constraints with data.features: the trials the run drew, which
     * count the feature columns its run record gives. */
    int cols = 0;
    for (int r = j->n_runs - 1; r >= 0 && !cols; r--) cols = j->runs[r].feature_columns;
    if (sweep_constraints_pending(sw) && cols > 0) {
        FsErrList errs = {0};
        int rc = sweep_bind_columns(sw, cols, &errs);
        if (rc) fs_err_set(err, "%s", errs.n ? errs.msg[0] : "run.constraints");
        errlist_free(&errs);
        if (rc) return -1;
    }
    uint64_t fp = j->sweep_text ? journal_fingerprint(j) : 0;
    int folds = folder_folds(j, sw);
    const char **ids = fp ? fs_calloc((size_t)sw->n_trials + 1, sizeof *ids) : NULL;
    if (fp) sweep_assign_ids(sw, fp);
    FsJournalSweep js;
    report_journal_sweep(&js, ids, sw, folds, j->n_sweep_val == folds ? j->sweep_val : NULL);
    js.canonical = j->sweep_text; /* an extended run's earlier versions: their own indexes and pruners */
    int rc = journal_set_sweep(j, &js, err);
    free(ids);
    return rc;
}

/* The sweep of folder f: the file, else (damaged or missing) the journal's
 * record of it. 0 with *sw loaded, 1 with no sweep (missing, no record),
 * -1 with err. */
static int folder_sweep(FsReportFolder *f, const char *dir, const FsJournal *j, FsSweep *sw, FsErr *err)
{
    char path[FS_PATH_IN_DIR];
    int missing;
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    if (load_sweep_file(sw, path, &missing, f->sweep_why, sizeof f->sweep_why) == 0) {
        /* The journal's records were written under the sweep it records:
         * a sweep.yaml edited into another sweep must not judge them. */
        if (!j->sweep_text || !strcmp(sw->canonical, j->sweep_text)) return 0;
        sweep_free(sw);
        snprintf(f->sweep_why, sizeof f->sweep_why, "it is not the sweep its journal records");
    }
    f->sweep_damaged = !missing;
    FsErrList errs = {0};
    f->sweep_from_journal =
        j->sweep_text && sweep_load_string(sw, j->sweep_text, "the journal's sweep record", &errs) == 0;
    errlist_free(&errs);
    if (f->sweep_from_journal) return 0;
    if (missing) return 1;
    fs_err_set(err,
               "%s is damaged: %s\nThe journal holds no record of the sweep to rewrite it from (it was written "
               "by an earlier foldsweep): put the file back (`%s plan` of the sweep you ran shows its "
               "canonical form)",
               path, f->sweep_why, fs_program());
    return -1;
}

int report_folder_check(FsReportFolder *f, const char *dir, FsJournal *j, FsErr *err)
{
    memset(f, 0, sizeof *f);
    FsSweep *sw = &f->sweep;
    int rc = folder_sweep(f, dir, j, sw, err);
    if (rc < 0) return -1;
    if (rc == 1) {
        if (report_spec_from_journal(&f->spec, j) == 0) return f->from_journal = 1, 0;
        fs_err_set(err, "%s/sweep.yaml: cannot read the sweep (%s), and the journal has no run record with the "
                        "metric and folds", dir, f->sweep_why);
        return -1;
    }
    f->has_sweep = 1;
    rc = check_journal(j, sw, err);
    report_spec_from_sweep(&f->spec, sw);
    f->spec.sweep = sw; /* for the leaderboard's param_ columns */
    if (rc) report_folder_free(f);
    return rc;
}

void report_folder_free(FsReportFolder *f)
{
    if (f->has_sweep) sweep_free(&f->sweep);
    f->has_sweep = 0;
    f->spec.sweep = NULL;
}
