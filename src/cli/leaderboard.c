/*
 * leaderboard.c: `foldsweep leaderboard DIR [--top N] [--format F] [--wide]`. Reads
 * the run folder's journal (read-only: safe while a run is writing it) and
 * its sweep, and prints the ranked trials. Exit 0, 1 for a missing folder
 * or a journal / sweep that cannot be read (the message names the file and
 * line), 2 for bad usage.
 */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "report/report.h"

enum { OPT_TOP, OPT_FORMAT, OPT_WIDE, OPT_HELP };

static const CliOption options[] = {
    [OPT_TOP] = {"--top", NULL, "N", "only the best N trials"},
    [OPT_FORMAT] = {"--format", NULL, "F",
                    "table (default), md (Markdown), csv, or json\n"
                    "(json layout: docs/leaderboard-json.md)"},
    [OPT_WIDE] = {"--wide", NULL, NULL, "the table with every column whole, one line a trial\n"
                                        "(by default it fits 120 columns)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "leaderboard",
    .usage = "usage: foldsweep leaderboard DIR [--top N] [--format table|md|csv|json] [--wide]\n",
    .about =
        "Ranks the trials of a run folder (DIR/journal.jsonl, with the metric and folds of\n"
        "DIR/sweep.yaml) by the mean validation metric over folds: Q3 at each fold's best epoch,\n"
        "higher first, or best validation loss, lower first. Complete trials come first, then\n"
        "incomplete ones, then diverged and failed ones with their reason. std is the\n"
        "population standard deviation over the folds. Q3 is in percent in the table and\n"
        "Markdown, a fraction in CSV and JSON, which also hold each trial's per-class MCC\n"
        "and its value of every swept option (param_ columns). Safe to run while the run\n"
        "goes on.\n",
    .opts = CLI_OPTIONS(options),
    .column = 24,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder DIR",
};
const CliSpec *const cli_leaderboard_spec = &spec; /* for cli.c's table */

/* Why dir is not a run folder, with what the user may have meant: a sweep
 * file's run folder, or the run folders inside a folder of them. */
static void not_a_run_folder(const char *dir, const struct stat *st, int found)
{
    const size_t n = strlen(dir);
    const int yaml = n > 5 && (!strcmp(dir + n - 5, ".yaml") || !strcmp(dir + n - 4, ".yml"));
    if (!found) {
        cli_error("%s: no such run folder", dir);
    } else if (!S_ISDIR(st->st_mode) && yaml) {
        char out[FS_PATH_MAX];
        run_default_out(dir, out, sizeof out);
        cli_error("%s is a sweep file, not a run folder: foldsweep run writes its run folder, %s unless --out or "
                  "run.out names another (its first line says which)", dir, out);
    } else if (!S_ISDIR(st->st_mode)) {
        cli_error("%s is a file, not a run folder (a folder with a journal.jsonl)", dir);
    } else {
        char list[1024] = "";
        size_t at = 0;
        int k = 0;
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d)) && at < sizeof list;) {
            char path[FS_PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s/journal.jsonl", dir, e->d_name);
            if (e->d_name[0] == '.' || access(path, F_OK) != 0) continue;
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s/%s", k++ ? ", " : "", dir, e->d_name);
        }
        if (d) closedir(d);
        if (k)
            cli_error("%s has no journal.jsonl: not a run folder, but it holds %d: %s", dir, k, list);
        else
            cli_error("%s has no journal.jsonl: not a run folder (foldsweep run writes one)", dir);
    }
}

int cli_folder_read(const char *dir, FsJournal *j, FsReportFolder *f)
{
    struct stat st;
    char journal[FS_PATH_MAX + 16];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    const int found = stat(dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode) || access(journal, F_OK) != 0) {
        not_a_run_folder(dir, &st, found);
        return -1;
    }
    FsErr err = {0};
    if (journal_read(j, dir, &err) != 0) {
        cli_error("%s", err.msg);
        return -1;
    }
    if (report_folder_check(f, dir, j, &err) != 0) {
        cli_error("%s", err.msg);
        journal_close(j);
        return -1;
    }
    if (f->sweep_from_journal)
        cli_error("warning: %s/sweep.yaml is damaged (%s); the journal's own record of the sweep is used. "
                  "`%s repair %s` rewrites the file from it (keeping the damaged one)",
                  dir, f->sweep_why, fs_program(), dir);
    if (j->bad_lines)
        cli_error("warning: %s:%ld: %s; %ld damaged line%s skipped, the rest is shown. `%s repair %s` "
                  "writes a sound journal (keeping this one)",
                  j->path, j->first_bad_line, j->first_bad_why, j->bad_lines, j->bad_lines == 1 ? "" : "s",
                  fs_program(), dir);
    return 0;
}

void cli_folder_study(const FsReportFolder *f, const FsJournal *j, FsStudyStop *out)
{
    memset(out, 0, sizeof *out);
    if (!f->has_sweep) return;
    const FsFolds folds = data_folds_of(f->sweep.predefined, sweep_fold_count(&f->sweep));
    run_study_replay(&f->sweep, j, &folds, out);
}

int cli_leaderboard(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *dir = a.args[0], *fmt_s = a.val[OPT_FORMAT];
    uint64_t top = 0; /* all */
    int fmt = fmt_s ? report_format_parse(fmt_s) : FS_REPORT_TABLE;
    if (fmt < 0)
        rc = cli_usage_error(&spec, "unknown --format (expected table, md, csv or json):", fmt_s);
    else if (a.val[OPT_WIDE] && fmt != FS_REPORT_TABLE)
        rc = cli_usage_error(&spec, "--wide is for the table; this --format holds every column already:", fmt_s);
    else
        rc = cli_whole_parse(&spec, &a, OPT_TOP, 1, 1000000000, &top);
    if (a.val[OPT_WIDE]) fmt = FS_REPORT_WIDE;
    cli_args_free(&a);
    if (rc) return rc;

    return cli_leaderboard_write(dir, fmt, (int)top, stdout);
}

int cli_leaderboard_write(const char *dir, int fmt, int top, FILE *out)
{
    FsJournal j;
    FsReportFolder f;
    if (cli_folder_read(dir, &j, &f)) return FS_EXIT_ERROR;
    if (f.from_journal)
        cli_error(
            "note: %s/sweep.yaml is missing; metric and folds come from the journal's run record",
            dir);
    if (j.dropped_tail)
        cli_error("note: the journal's last line is incomplete (a run writing or killed); skipped");
    FsReport rep;
    report_build(&rep, &j, &f.spec);
    report_write(&rep, (FsReportFormat)fmt, top, out);
    const int text = fmt == FS_REPORT_TABLE || fmt == FS_REPORT_WIDE;
    if (text && rep.n_rows == 0) fprintf(out, "(no trials in the journal yet)\n");
    FsStudyStop study;
    cli_folder_study(&f, &j, &study);
    if ((text || fmt == FS_REPORT_MD) && study.stopped) {
        char line[400];
        run_study_text(&study, line, sizeof line);
        fprintf(out, "\nThe study %s.\n", line);
    }
    report_free(&rep);
    report_folder_free(&f);
    journal_close(&j);
    return fflush(out) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}

int cli_curves_write(const char *dir, FILE *out)
{
    FsJournal j;
    FsReportFolder f;
    if (cli_folder_read(dir, &j, &f)) return FS_EXIT_ERROR;
    report_curves_csv(out, &j);
    report_folder_free(&f);
    journal_close(&j);
    return fflush(out) == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}
