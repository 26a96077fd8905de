/*
 * repair.c: `foldsweep repair DIR`. The way out the run's error names when
 * a journal line before the last is damaged (journal_repair in src/journal
 * does the work). Exit 0 when the journal is sound or was repaired, 1 when
 * it could not be.
 */
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
    .about = "Repairs a run folder whose journal has a damaged line before its end (a run then\n"
             "refuses to resume, naming the line). Writes a journal of the good lines, byte for\n"
             "byte, as DIR/journal.jsonl and keeps the damaged one as DIR/journal.damaged-N.jsonl:\n"
             "nothing is deleted. Folds whose records were dropped are trained again by the next\n"
             "run. Refuses while a run is writing the folder.\n",
    .opts = CLI_OPTIONS(options),
    .column = 16,
    .max_args = 1,
    .extra_arg = "one run folder only; extra argument",
    .no_arg = "missing the run folder DIR",
};

int cli_repair(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    FsErr err = {0};
    long dropped = journal_repair(a.args[0], stdout, &err);
    if (dropped < 0) cli_error("%s", err.msg);
    else if (dropped == 0) printf("repair: %s/journal.jsonl has no damaged lines; nothing to do\n", a.args[0]);
    cli_args_free(&a);
    return dropped < 0 ? FS_EXIT_ERROR : FS_EXIT_OK;
}
