/*
 * help.c: `foldsweep help [COMMAND | --man]`. The list of commands, one
 * command's help, or the manual page (roff, man(7) macros) generated from
 * cli.c's command table and each command's CliSpec: the same text the
 * --help pages print, so the two cannot drift apart. CMake runs
 * `foldsweep help --man` at build time and installs the page (man1).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"

enum { OPT_MAN, OPT_HELP };

static const CliOption options[] = {
    [OPT_MAN] = {"--man", NULL, NULL, "the manual page of every command, as roff (man -l - reads it)"},
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static const CliSpec spec = {
    .cmd = "help",
    .usage = "usage: foldsweep help [COMMAND | --man]\n",
    .about = "Lists the commands, or shows COMMAND's help (as 'foldsweep COMMAND --help' does). With\n"
             "--man, writes the manual page, generated from the same tables as the help:\n"
             "'foldsweep help --man | man -l -'. An installed foldsweep has it as 'man foldsweep'.\n",
    .opts = CLI_OPTIONS(options),
    .column = 12,
    .max_args = 1,
    .extra_arg = "one command only; extra argument",
};
const CliSpec *const cli_help_spec = &spec; /* for cli.c's table */

/* ---------------------------------------------------------------------- */
/* roff                                                                    */

/* Text as roff reads it: a backslash is \e, a line may not start with a
 * control character ('.' or '\''), every '-' of a word that starts with
 * one (an option) is \-, the ASCII minus (so that it can be searched for
 * and copied; a plain '-' may print as a hyphen), and other
 * characters than ASCII are named by their code point. join: a newline is
 * a space (an option's help, wrapped by hand for the terminal). */
static void roff_text(FILE *out, const char *s, int join)
{
    int line_start = 1, option = 0; /* option: in a word that starts with '-' */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c == '\n') {
            if (!p[1]) break; /* the caller ends the line */
            fputc(join ? ' ' : '\n', out);
            line_start = !join;
            continue;
        }
        if (line_start && (c == '.' || c == '\'')) fputs("\\&", out);
        line_start = 0;
        int word_char = isalnum((int)c) || c == '-' || c == '_';
        int word_start = p == (const unsigned char *)s || !(isalnum(p[-1]) || p[-1] == '-' || p[-1] == '_');
        if (word_start) option = c == '-';
        if (!word_char) option = 0;
        if (c == '\\')
            fputs("\\e", out);
        else if (c == '-' && option)
            fputs("\\-", out);
        else if (c < 0x80)
            fputc((int)c, out);
        else {
            /* UTF-8: the code point, or U+FFFD for a broken sequence. */
            int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
            unsigned cp = n < 0 ? 0xfffd : c & (0x3fu >> n);
            for (int k = 0; k < n; k++) {
                if ((p[1] & 0xc0) != 0x80) {
                    cp = 0xfffd;
                    break;
                }
                cp = cp << 6 | (*++p & 0x3f);
            }
            fprintf(out, "\\[u%04X]", cp);
        }
    }
}

/* A paragraph of lines (an about or an epilog): a blank line starts a new
 * one, an indented line (an example command) stands on its own. */
static void roff_paragraph(FILE *out, const char *s)
{
    fputs(".PP\n", out);
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "\n");
        if (n == 0) {
            fputs(".PP\n", out);
        } else {
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            if (line[0] == ' ') fputs(".nf\n", out);
            roff_text(out, line, 0);
            fputs(line[0] == ' ' ? "\n.fi\n" : "\n", out);
        }
        p += n + (p[n] == '\n');
    }
}

/* A usage text's lines without "usage: " and their indent, unfilled. */
static void roff_usage(FILE *out, const char *usage)
{
    fputs(".PP\n.nf\n", out);
    for (const char *p = usage; *p;) {
        size_t n = strcspn(p, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        const char *t = line;
        if (!strncmp(t, "usage:", 6)) t += 6;
        t += strspn(t, " ");
        roff_text(out, t, 0);
        fputc('\n', out);
        p += n + (p[n] == '\n');
    }
    fputs(".fi\n", out);
}

static void roff_options(FILE *out, const CliSpec *s)
{
    for (int i = 0; i < s->n_opts; i++) {
        const CliOption *o = &s->opts[i];
        fputs(".TP\n", out);
        if (o->alias) {
            fputs("\\fB", out);
            roff_text(out, o->alias, 1);
            fputs("\\fR, ", out);
        }
        fputs("\\fB", out);
        roff_text(out, o->name, 1);
        fputs("\\fR", out);
        if (o->arg) {
            fputs(o->optional ? " [\\fI" : " \\fI", out);
            roff_text(out, o->arg, 1);
            fputs(o->optional ? "\\fR]" : "\\fR", out);
        }
        fputc('\n', out);
        roff_text(out, o->help, 1);
        fputc('\n', out);
    }
}

/* The manual page: the program, then every command of the table with its
 * usage, description, options and closing notes. */
static void man_write(FILE *out)
{
    const CliSpec *m = &cli_main_spec;
    fputs(".\\\" foldsweep(1): written by 'foldsweep help --man' from the command line's own tables\n"
          ".\\\" (src/cli/cli.c and each command's file); edit those, not this page.\n", out);
    fprintf(out, ".TH FOLDSWEEP 1 \"\" \"foldsweep %s\" \"User Commands\"\n.SH NAME\nfoldsweep \\- ", FS_VERSION);
    roff_text(out, m->about, 1);
    fputs("\n.SH SYNOPSIS\n", out);
    roff_usage(out, m->usage);
    fputs(".SH DESCRIPTION\nfoldsweep trains every trial of a sweep file on every fold, resumably, on threads, MPI "
          "ranks or a GPU, and ranks the trials; the commands below then look at a run folder, export, refit and "
          "evaluate its models, and predict with them.\n",
          out);
    fputs(".SH OPTIONS\n", out);
    roff_options(out, m);
    fputs(".SH COMMANDS\n", out);
    for (int i = 0; i < cli_n_commands; i++) {
        const CliCommand *c = &cli_commands[i];
        const CliSpec *s = *c->spec;
        fprintf(out, ".SS \"foldsweep %s\"\n", c->name);
        roff_text(out, c->summary, 1);
        fputs(".\n", out);
        roff_usage(out, s->usage);
        roff_paragraph(out, s->about);
        if (s->n_opts) {
            fputs(".PP\nOptions:\n.RS\n", out);
            roff_options(out, s);
            fputs(".RE\n", out);
        }
        if (s->epilog) roff_paragraph(out, s->epilog);
    }
    /* "exit status: 0 done, ...": the list, under its heading. */
    const char *codes = strchr(cli_exit_status, ':');
    fputs(".SH \"EXIT STATUS\"\n", out);
    roff_text(out, codes ? codes + 2 : cli_exit_status, 1);
    fputs(".\nThe commands that only print end quietly with 0 when what reads their output stops early.\n", out);
    fputs(".SH \"SEE ALSO\"\nREADME.md and docs/ (installed with the documentation): docs/cli.md (the command line), "
          "docs/sweep-format.md (sweep files), docs/models.md (model files and predictions).\n",
          out);
}

int cli_help(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *name = a.n_args ? a.args[0] : NULL;
    int man = a.val[OPT_MAN] != NULL;
    cli_args_free(&a);
    if (man && name) return cli_usage_error(&spec, "give COMMAND or --man, not both", NULL);
    if (man) {
        man_write(stdout);
        return cli_output_close(stdout, "standard output") == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
    }
    if (!name) {
        cli_usage_print(stdout);
        return FS_EXIT_OK;
    }
    const CliCommand *c = cli_command_find(name);
    if (!c) return cli_command_unknown(name);
    static char help_flag[] = "--help";
    char *help_argv[3] = {(char *)c->name, help_flag, NULL};
    return c->run(2, help_argv);
}
