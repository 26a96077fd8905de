/*
 * leaderboard.c: `foldsweep leaderboard DIR [--top N] [--format F]`. Reads
 * the run folder's journal (read-only: safe while a run is writing it) and
 * its sweep, and prints the ranked trials. Exit 0, 1 for a missing folder
 * or a journal / sweep that cannot be read (the message names the file and
 * line), 2 for bad usage.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "report/report.h"

#define LB_USAGE "usage: foldsweep leaderboard DIR [--top N] [--format table|md|csv|json]\n"

static void lb_help(FILE *out)
{
    fputs(LB_USAGE, out);
    fputs(
        "\nRanks the trials of a run folder (DIR/journal.jsonl, with the metric and folds of\n"
        "DIR/sweep.yaml) by the mean validation metric over folds: Q3 at each fold's best epoch,\n"
        "higher first, or best validation loss, lower first. Complete trials come first, then\n"
        "incomplete ones, then diverged and failed ones with their reason. std is the\n"
        "population standard deviation over the folds. Safe to run while the run goes on.\n\n"
        "options:\n"
        "  --top N                  only the best N trials\n"
        "  --format F               table (default), md (Markdown), csv, or json\n"
        "                           (json layout: docs/leaderboard-json.md)\n"
        "  -h, --help               show this help\n",
        out);
}

static int lb_usage_error(const char *what, const char *arg)
{
    cli_error("leaderboard: %s%s%s", what, arg ? " " : "", arg ? arg : "");
    fputs(LB_USAGE, stderr);
    fputs("Run 'foldsweep leaderboard --help' for details.\n", stderr);
    return FS_EXIT_USAGE;
}

/* "--opt VALUE" or "--opt=VALUE": returns the value and advances *i, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, int *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    *missing = 0;
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

int cli_leaderboard(int argc, char **argv)
{
    const char *dir = NULL, *top_s = NULL, *fmt_s = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            lb_help(stdout);
            return FS_EXIT_OK;
        }
        if ((v = opt_value(argc, argv, &i, "--top", &missing)) || missing) {
            if (missing) return lb_usage_error("missing value for", a);
            top_s = v;
        } else if ((v = opt_value(argc, argv, &i, "--format", &missing)) || missing) {
            if (missing) return lb_usage_error("missing value for", a);
            fmt_s = v;
        } else if (a[0] == '-' && a[1]) {
            return lb_usage_error("unknown option", a);
        } else if (dir) {
            return lb_usage_error("one run folder only; extra argument", a);
        } else {
            dir = a;
        }
    }
    if (!dir) return lb_usage_error("missing the run folder DIR", NULL);
    int fmt = fmt_s ? report_format_parse(fmt_s) : FS_REPORT_TABLE;
    if (fmt < 0)
        return lb_usage_error("unknown --format (expected table, md, csv or json):", fmt_s);
    long top = 0;
    if (top_s) {
        char *end;
        errno = 0;
        top = strtol(top_s, &end, 10);
        if (errno || *end || end == top_s || top < 1 || top > 1000000000)
            return lb_usage_error("--top must be a whole number >= 1, not", top_s);
    }

    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cli_error("%s: no such run folder", dir);
        return FS_EXIT_ERROR;
    }
    FsJournal j;
    FsErr err = {0};
    if (journal_read(&j, dir, &err) != 0) {
        cli_error("%s", err.msg);
        return FS_EXIT_ERROR;
    }
    FsReportSpec spec;
    int from_journal;
    if (report_spec_load(&spec, dir, &j, &from_journal, &err) != 0) {
        cli_error("%s", err.msg);
        journal_close(&j);
        return FS_EXIT_ERROR;
    }
    if (from_journal)
        cli_error(
            "note: %s/sweep.yaml is missing; metric and folds come from the journal's run record",
            dir);
    if (j.dropped_tail)
        cli_error("note: the journal's last line is incomplete (a run writing or killed); skipped");
    FsReport rep;
    report_build(&rep, &j, &spec);
    report_write(&rep, (FsReportFormat)fmt, (int)top, stdout);
    if (fmt == FS_REPORT_TABLE && rep.n_rows == 0) printf("(no trials in the journal yet)\n");
    report_free(&rep);
    journal_close(&j);
    return fflush(stdout) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}
