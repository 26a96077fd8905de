/*
 * run.c: `foldsweep run SWEEP.yaml [--out DIR] [--threads N]
 * [--backend cpu|cuda|auto] [--grace S] [--quiet]`. Parses the options and
 * hands over to run_sweep (src/run), which owns the whole run.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "run/run.h"

#define RUN_USAGE "usage: foldsweep run SWEEP.yaml [--out DIR] [--threads N] [--backend cpu|cuda|auto] [--grace S] [--quiet]\n"

static void run_help(FILE *out)
{
    fputs(RUN_USAGE, out);
    fputs("\nTrains every trial of the sweep on every fold and ranks them. Rerunning the same\n"
          "command on the same folder resumes: finished folds are kept, the rest are trained.\n\n"
          "options:\n"
          "  --out DIR          run folder (default: the sweep's run.out, else runs/<sweep name>)\n"
          "  --threads N        worker threads (default: the sweep's run.threads, else all cores)\n"
          "  --backend B        cpu, cuda or auto (default: the sweep's run.backend)\n"
          "  --grace S          after SIGINT/SIGTERM, seconds in-flight folds may finish (default 30)\n"
          "  --quiet            no progress line and no summary\n"
          "  --help             this help\n\n"
          "exit status: 0 done, 1 error, 2 usage, 3 interrupted (rerun the command to resume)\n",
          out);
}

static int run_usage(const char *what, const char *arg)
{
    cli_error("run: %s%s%s", what, arg ? " " : "", arg ? arg : "");
    fputs(RUN_USAGE, stderr);
    return FS_EXIT_USAGE;
}

/* Parses a whole decimal number in [lo, hi]; -1 on failure. */
static long parse_long(const char *s, long lo, long hi)
{
    char *end;
    long v = strtol(s, &end, 10);
    return (*s && !*end && v >= lo && v <= hi) ? v : -1;
}

int cli_run(int argc, char **argv)
{
    FsRunOptions o;
    memset(&o, 0, sizeof o);
    o.backend = -1;
    o.grace = 30.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            run_help(stdout);
            return FS_EXIT_OK;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--out") || !strcmp(a, "-o")) {
            if (!v) return run_usage("missing value for", a);
            o.out_dir = v;
            i++;
        } else if (!strcmp(a, "--threads") || !strcmp(a, "-j")) {
            if (!v || (o.threads = (int)parse_long(v, 1, 4096)) < 1)
                return run_usage("--threads expects a whole number from 1 to 4096, got", v ? v : "nothing");
            i++;
        } else if (!strcmp(a, "--grace")) {
            char *end;
            if (!v || (o.grace = strtod(v, &end), *end) || o.grace < 0)
                return run_usage("--grace expects seconds >= 0, got", v ? v : "nothing");
            i++;
        } else if (!strcmp(a, "--backend")) {
            if (!v) return run_usage("missing value for", a);
            if (!strcmp(v, "cpu"))
                o.backend = FS_BACKEND_CPU;
            else if (!strcmp(v, "cuda"))
                o.backend = FS_BACKEND_CUDA;
            else if (!strcmp(v, "auto"))
                o.backend = FS_BACKEND_AUTO;
            else
                return run_usage("--backend expects cpu, cuda or auto, got", v);
            i++;
        } else if (a[0] == '-' && a[1]) {
            return run_usage("unknown option", a);
        } else if (o.sweep_path) {
            return run_usage("one sweep file only; extra argument", a);
        } else {
            o.sweep_path = a;
        }
    }
    if (!o.sweep_path) return run_usage("missing the sweep file", NULL);
    return run_sweep(&o);
}
