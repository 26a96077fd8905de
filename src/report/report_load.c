/*
 * report_load.c: what leaderboard and status need from a run folder: the
 * sweep's metric, folds and trial count. The canonical DIR/sweep.yaml is
 * the source; when it is absent, the journal's latest run record (written
 * by the runner from the same sweep) stands in.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"

int report_spec_load(FsReportSpec *spec, const char *dir, const FsJournal *j, int *from_journal,
                     FsErr *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    struct stat st;
    *from_journal = 0;
    if (stat(path, &st) != 0) {
        int e = errno;
        if (j && report_spec_from_journal(spec, j) == 0) {
            *from_journal = 1;
            return 0;
        }
        fs_err_set(err,
                   "%s: cannot read the sweep (%s), and the journal has no run record "
                   "with the metric and folds",
                   path, strerror(e));
        return -1;
    }
    FsSweep sw;
    FsErrList errs = {0};
    memset(&sw, 0, sizeof sw);
    if (sweep_load_file(&sw, path, &errs) != 0) {
        char msg[900];
        errlist_join(&errs, msg, sizeof msg);
        size_t n = strlen(msg);
        if (n && msg[n - 1] == '\n') msg[n - 1] = '\0';
        fs_err_set(err, "%s: cannot load the run folder's sweep:\n%s", path, msg);
        errlist_free(&errs);
        sweep_free(&sw);
        return -1;
    }
    report_spec_from_sweep(spec, &sw);
    errlist_free(&errs);
    sweep_free(&sw);
    return 0;
}
