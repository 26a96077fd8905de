/*
 * report.c: `foldsweep report RUN [-o FILE]`. Writes the run folder's
 * report as one self-contained HTML file (report_html_write in src/report):
 * RUN/report.html unless -o names another file. Reads the journal
 * read-only, so it is safe while a run goes on (that run rewrites
 * RUN/report.html itself after each trial). Exit 0, 1 for a folder that
 * cannot be read or a file that cannot be written, 2 for bad usage.
 */
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "report/report.h"

enum { OPT_OUT, OPT_HELP };

static const CliOption options[] = {
    [OPT_OUT] = {"--output", "-o", "FILE", "write the report here (default RUN/report.html)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "report",
    .usage = "usage: foldsweep report RUN [-o FILE]\n",
    .about = "Writes the run as a picture: one HTML file that opens in any browser, offline (inline\n"
             "charts, no network): the sortable leaderboard, every trial's learning curves with the\n"
             "kept epoch and the stop rule's decision, the effect of each swept option on Q3 and\n"
             "its importance, the time profile, the best trials' confusion matrices and the run's\n"
             "identity. A run writes RUN/report.html by itself as it goes and when it ends.\n",
    .opts = CLI_OPTIONS(options),
    .column = 20,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder RUN",
};
const CliSpec *const cli_report_spec = &spec; /* for cli.c's table */

/* Writes dir's report: to path, or (NULL) dir/report.html. 0 or -1 with
 * the message said (as a warning with `warn`). */
static int write_report(const char *dir, const char *path, int warn)
{
    FsJournal j;
    FsReportFolder f;
    if (cli_folder_read(dir, &j, &f)) return -1;
    FsErr err = {0};
    FsStudyStop study;
    cli_folder_study(&f, &j, &study);
    char note[400] = "";
    if (study.stopped) run_study_text(&study, note, sizeof note);
    const FsReportHtmlInfo info = {NULL, 0, 0, study.stopped ? study.proposed : 0, note};
    int rc = report_html_write_file(path, dir, &j, &f.spec, &info, &err);
    if (rc) cli_error("%s%s", warn ? "warning: the report is not brought up to date: " : "", err.msg);
    report_folder_free(&f);
    journal_close(&j);
    return rc;
}

void cli_report_refresh(const char *dir)
{
    char path[FS_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (access(path, F_OK) == 0) write_report(dir, NULL, 1);
}

int cli_report(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *dir = a.args[0], *path = a.val[OPT_OUT];
    rc = write_report(dir, path, 0) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
    if (rc == FS_EXIT_OK) printf("report: %s%s\n", path ? path : dir, path ? "" : "/report.html");
    cli_args_free(&a);
    return rc;
}
