/*
 * repair.c: `foldsweep repair DIR`. The way out the run's error names when
 * a journal line is damaged or does not fit the sweep (journal_repair in
 * src/journal does the work), or when DIR/sweep.yaml is damaged: it is
 * rewritten from the journal's own record of the sweep. Exit 0 when the
 * folder is sound or was repaired, 1 when it could not be.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "journal/journal.h"

enum { OPT_HELP };

static const CliOption options[] = {
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "repair",
    .usage = "usage: foldsweep repair DIR\n",
    .about = "Repairs a run folder whose journal has a damaged line, or a record that does not fit\n"
             "the sweep (a trial or fold it does not have, scores that do not add up), before its\n"
             "end (a run then refuses to resume, naming the line). Writes a journal of the good\n"
             "lines, byte for byte, as DIR/journal.jsonl and keeps the damaged one as\n"
             "DIR/journal.damaged-N.jsonl: nothing is deleted. A damaged or missing DIR/sweep.yaml\n"
             "is rewritten from the journal's own record of the sweep (the damaged file is kept as\n"
             "DIR/sweep.damaged-N.yaml). Folds whose records were dropped are trained again by the\n"
             "next run. Refuses while a run is writing the folder.\n",
    .opts = CLI_OPTIONS(options),
    .column = 16,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder DIR",
};
const CliSpec *const cli_repair_spec = &spec; /* for cli.c's table */

/* Sets a damaged sweep.yaml aside as sweep.damaged-N.yaml (none: nothing). */
static int keep_damaged(const char *path, const char *dir, char *kept, size_t n, FsErr *err)
{
    struct stat sb;
    int k = 1;
    if (lstat(path, &sb) != 0) return kept[0] = '\0', 0;
    do snprintf(kept, n, "%s/sweep.damaged-%d.yaml", dir, k++);
    while (lstat(kept, &sb) == 0 && k < 100000);
    if (rename(path, kept) != 0) return fs_err_set(err, "%s: cannot rename to %s: %s", path, kept, strerror(errno)), -1;
    return 0;
}

/* DIR/sweep.yaml from the journal's record of the sweep when the file does
 * not load or is another sweep than the one the journal records. 1
 * rewritten, 0 nothing to do (sound, or no record), -1 err. */
static int repair_sweep(const char *dir, const FsJournal *j, FsErr *err)
{
    char path[FS_PATH_IN_DIR], kept[FS_PATH_SUFFIXED];
    FsSweep sw;
    FsErrList errs = {0};
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    memset(&sw, 0, sizeof sw);
    int sound = sweep_load_file(&sw, path, &errs) == 0;
    if (sound) {
        sound = !j->sweep_text || !strcmp(sw.canonical, j->sweep_text);
        sweep_free(&sw);
    }
    errlist_free(&errs);
    if (sound || !j->sweep_text) return 0;
    if (sweep_load_string(&sw, j->sweep_text, "the journal's sweep record", &errs) != 0) {
        errlist_free(&errs);
        return 0; /* nothing sound to write */
    }
    sweep_free(&sw);
    if (keep_damaged(path, dir, kept, sizeof kept, err) != 0 ||
        fs_write_file_atomic(path, j->sweep_text, strlen(j->sweep_text), err) != 0)
        return -1;
    printf("repair: %s rewritten from the journal's record of the sweep%s%s\n", path,
           kept[0] ? "; the damaged file is kept as " : " (it was missing)", kept);
    return 1;
}

/* The sweep, rewritten if damaged, and the journal checked against it
 * (j->check); -1 with the error printed when the folder cannot be read. */
static int repair_prepare(const char *dir, FsJournal *j, int *rewrote)
{
    FsErr err = {0};
    FsReportFolder f;
    if (journal_read(j, dir, &err) != 0) return cli_error("%s", err.msg), -1;
    if (journal_is_locked(dir) == 1) {
        char who[160] = "", paren[170] = "";
        if (journal_holder(dir, who, sizeof who) == 0) snprintf(paren, sizeof paren, " (%s)", who);
        cli_error("%s/journal.jsonl: a foldsweep run is writing this folder%s; stop it first", dir, paren);
        journal_close(j);
        return -1;
    }
    if ((*rewrote = repair_sweep(dir, j, &err)) < 0 || report_folder_check(&f, dir, j, &err) != 0) {
        cli_error("%s", err.msg);
        journal_close(j);
        return -1;
    }
    report_folder_free(&f);
    return 0;
}

int cli_repair(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *dir = a.args[0];
    FsJournal j;
    int rewrote = 0;
    if (repair_prepare(dir, &j, &rewrote) != 0) {
        cli_args_free(&a);
        return FS_EXIT_ERROR;
    }
    FsErr err = {0};
    long dropped = journal_repair(dir, j.check, stdout, &err);
    if (dropped < 0) cli_error("%s", err.msg);
    else if (dropped == 0) printf("repair: %s/journal.jsonl has no damaged lines%s\n", dir, rewrote ? "" : "; nothing to do");
    journal_close(&j);
    cli_args_free(&a);
    return dropped < 0 ? FS_EXIT_ERROR : FS_EXIT_OK;
}
