/*
 * args.c: the subcommands' shared option parser, help printer and usage
 * errors (see args.h). Tables stay in each command's file; only the
 * mechanics live here.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/util.h"

void cli_option_label(const CliOption *o, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
             o->arg ? " " : "", o->arg && o->optional ? "[" : "", o->arg ? o->arg : "",
             o->arg && o->optional ? "]" : "");
}

/* The width help is laid out in: a terminal's 80 columns. */
#define CLI_HELP_WIDTH 80

/* The length of the word at p: to the next blank or line break, a
 * bracketed option of a usage ("[--backend cpu|cuda|auto]") whole. */
static int word_len(const char *p)
{
    const char *close = *p == '[' ? strchr(p, ']') : NULL;
    const char *nl = strchr(p, '\n');
    if (close && (!nl || close < nl)) return (int)(close - p) + 1 + (int)strcspn(close + 1, " \n");
    return (int)strcspn(p, " \n");
}

/* text from column `at`, words wrapped before CLI_HELP_WIDTH and each
 * wrapped line indented by `indent`; a '\n' in text breaks the line too,
 * the next indented by `hard` (a usage's own second line is indented in
 * its text), and a last '\n' ends it. */
static void print_wrapped(FILE *out, const char *text, int at, int indent, int hard)
{
    for (const char *p = text; *p;) {
        if (*p == '\n') {
            fputc('\n', out);
            if (!*++p) break;
            fprintf(out, "%*s", hard, "");
            at = hard;
            continue;
        }
        const int word = word_len(p), space = *p == ' ';
        if (space) {
            p++;
            const int next = word_len(p);
            if (at + 1 + next > CLI_HELP_WIDTH && at > indent) {
                fprintf(out, "\n%*s", indent, "");
                at = indent;
            } else {
                fputc(' ', out), at++;
            }
            continue;
        }
        fwrite(p, 1, (size_t)word, out);
        at += word, p += word;
    }
}

/* text with its soft line breaks made spaces, so that print_wrapped fills
 * the paragraphs to the terminal's width: the help texts are broken by hand
 * in the source, at whatever width the source line had. A break stays
 * where the text means it: before a blank line or an indented line (an
 * example, a list), and after an indented line. malloc'd. */
static char *soften(const char *text)
{
    char *t = fs_strdup(text);
    int indented = t[0] == ' ';
    for (char *p = t; *p; p++) {
        if (*p != '\n') continue;
        const int hard = indented || p[1] == ' ' || p[1] == '\n' || !p[1] || p == t || p[-1] == '\n';
        indented = p[1] == ' ';
        if (!hard) *p = ' ';
    }
    return t;
}

void cli_text_print(FILE *out, const char *text, int at, int indent)
{
    char *t = soften(text);
    print_wrapped(out, t, at, indent, indent);
    free(t);
}

void cli_help_print(const CliSpec *s, FILE *out)
{
    /* The usage line wrapped too, its continuation under the command's first argument. */
    const char *cmd = strstr(s->usage, s->cmd);
    const int hang = cmd ? (int)(cmd - s->usage) + (int)strlen(s->cmd) + 1 : 8;
    print_wrapped(out, s->usage, 0, hang, 0);
    fputc('\n', out);
    cli_text_print(out, s->about, 0, 0);
    fputs("\noptions:\n", out);
    for (int i = 0; i < s->n_opts; i++) {
        const CliOption *o = &s->opts[i];
        char left[64];
        cli_option_label(o, left, sizeof left);
        const int len = (int)strlen(left);
        /* A label wider than the column puts its description on the next line. */
        if (len > s->column)
            fprintf(out, "  %s\n%*s", left, s->column + 3, "");
        else
            fprintf(out, "  %-*s ", s->column, left);
        cli_text_print(out, o->help, s->column + 3, s->column + 3);
        fputc('\n', out);
    }
    if (s->epilog) fputc('\n', out), cli_text_print(out, s->epilog, 0, 0);
}

int cli_usage_error(const CliSpec *s, const char *what, const char *arg)
{
    cli_error("%s: %s%s%s", s->cmd, what, arg ? " " : "", arg ? arg : "");
    fputs(s->usage, stderr);
    fprintf(stderr, "Run '%s %s --help' for details.\n", fs_program(), s->cmd);
    return FS_EXIT_USAGE;
}

void cli_args_free(CliArgs *a)
{
    free(a->args);
    a->args = NULL;
    a->n_args = 0;
}

/* Which option arg names; "--name=value" (options with a value only) puts
 * the value in *inline_val. The alias takes no "=": "-o=x" would be ambiguous
 * with a file named "=x". */
static int option_find(const CliSpec *s, const char *arg, const char **inline_val)
{
    *inline_val = NULL;
    for (int i = 0; i < s->n_opts; i++) {
        const CliOption *o = &s->opts[i];
        size_t n = strlen(o->name);
        if (!strcmp(arg, o->name) || (o->alias && !strcmp(arg, o->alias))) return i;
        if (o->arg && !strncmp(arg, o->name, n) && arg[n] == '=') {
            *inline_val = arg + n + 1;
            return i;
        }
    }
    return -1;
}

static int parse_fail(CliArgs *a, const CliSpec *s, const char *what, const char *arg)
{
    cli_args_free(a);
    return cli_usage_error(s, what, arg);
}

/* An option the command does not have: a long one gets the nearest of the
 * command's long options, when one is near enough to be a typo of it. */
static int unknown_option(CliArgs *a, const CliSpec *s, const char *arg)
{
    const char *near = NULL;
    if (!strncmp(arg, "--", 2)) {
        char word[64];
        const char *names[CLI_MAX_OPTIONS];
        snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        for (int i = 0; i < s->n_opts; i++) names[i] = s->opts[i].name + 2; /* past "--" */
        near = fs_nearest(word, names, s->n_opts);
    }
    if (!near) return parse_fail(a, s, "unknown option", arg);
    char what[160];
    snprintf(what, sizeof what, "unknown option %s; did you mean '--%s'?", arg, near);
    return parse_fail(a, s, what, NULL);
}

/* An optional value given as the next word: a number, so "status --watch
 * DIR" still reads DIR as the operand (a folder named "2024-run" too). */
static int optional_value(const char *next)
{
    char *end;
    if (!next || !isdigit((unsigned char)next[0])) return 0;
    (void)strtod(next, &end);
    return *end == '\0';
}

int cli_args_parse(CliArgs *a, const CliSpec *s, int argc, char **argv)
{
    FS_ASSERT(s->n_opts <= CLI_MAX_OPTIONS);
    memset(a, 0, sizeof *a);
    a->args = fs_malloc((size_t)argc * sizeof *a->args);
    int operands_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *inl;
        /* "-" is an operand: by convention, standard input or output. */
        if (operands_only || arg[0] != '-' || !arg[1]) {
            if (s->max_args >= 0 && a->n_args >= s->max_args)
                return parse_fail(a, s, s->extra_arg, arg);
            a->args[a->n_args++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            operands_only = 1;
            continue;
        }
        int o = option_find(s, arg, &inl);
        if (o < 0) return unknown_option(a, s, arg);
        if (!strcmp(s->opts[o].name, "--help")) {
            cli_args_free(a);
            cli_help_print(s, stdout);
            return FS_EXIT_OK;
        }
        if (!s->opts[o].arg) {
            a->val[o] = arg;
            continue;
        }
        if (s->opts[o].optional && !inl) {
            a->val[o] = i + 1 < argc && optional_value(argv[i + 1]) ? argv[++i] : arg;
            continue;
        }
        /* The next word is the value even if it starts with '-' (a negative
         * number, say); the range checks then name it. */
        if (!inl && i + 1 >= argc) return parse_fail(a, s, "missing value for", arg);
        a->val[o] = inl ? inl : argv[++i];
    }
    if (s->no_arg && a->n_args == 0) return parse_fail(a, s, s->no_arg, NULL);
    return CLI_PARSED;
}

/* Decimal, or hex after 0x; no sign and no spaces: strtoull alone would
 * turn "-1" into 2^64-1. */
static int whole_read(const char *t, uint64_t *v)
{
    int base = 10;
    if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        base = 16;
        t += 2;
    }
    if (!(base == 16 ? isxdigit((unsigned char)t[0]) : isdigit((unsigned char)t[0]))) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(t, &end, base);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

int cli_whole_parse(const CliSpec *s, const CliArgs *a, int opt, uint64_t lo, uint64_t hi,
                    uint64_t *v)
{
    const char *t = a->val[opt];
    uint64_t x;
    if (!t) return 0;
    if (!whole_read(t, &x) && x >= lo && x <= hi) {
        *v = x;
        return 0;
    }
    char what[128];
    const char *name = s->opts[opt].name;
    if (hi != UINT64_MAX)
        snprintf(what, sizeof what, "%s must be a whole number from %llu to %llu, not", name,
                 (unsigned long long)lo, (unsigned long long)hi);
    else if (lo == 0)
        snprintf(what, sizeof what, "%s must be a non-negative whole number, not", name);
    else
        snprintf(what, sizeof what, "%s must be a whole number >= %llu, not", name,
                 (unsigned long long)lo);
    return cli_usage_error(s, what, t);
}

int cli_real_parse(const CliSpec *s, const CliArgs *a, int opt, double lo, double hi, double *v)
{
    const char *t = a->val[opt];
    if (!t) return 0;
    char *end;
    double x = strtod(t, &end);
    if (end != t && !*end && isfinite(x) && x >= lo && x <= hi) {
        *v = x;
        return 0;
    }
    char what[128];
    const char *name = s->opts[opt].name;
    if (isinf(hi))
        snprintf(what, sizeof what, "%s must be a number >= %g, not", name, lo);
    else
        snprintf(what, sizeof what, "%s must be a number from %g to %g, not", name, lo, hi);
    return cli_usage_error(s, what, t);
}

int cli_trial_parse(const CliSpec *s, const CliArgs *a, int opt_trial, int opt_rank, int *rank)
{
    uint64_t r = 1;
    int rc = cli_whole_parse(s, a, opt_rank, 1, 1000000000, &r);
    if (!rc && a->val[opt_trial] && a->val[opt_rank]) rc = cli_usage_error(s, "give --trial or --rank, not both", NULL);
    *rank = (int)r;
    return rc;
}

int cli_top_parse(const CliSpec *s, const CliArgs *a, int opt_top, const int *others, int max, int *top)
{
    uint64_t k = 0;
    int rc = cli_whole_parse(s, a, opt_top, 1, (uint64_t)max, &k);
    *top = (int)k;
    for (int i = 0; !rc && a->val[opt_top] && others[i] >= 0; i++)
        if (a->val[others[i]]) {
            char msg[120];
            snprintf(msg, sizeof msg, "give --top or %s, not both (--top chooses the trials)", s->opts[others[i]].name);
            rc = cli_usage_error(s, msg, NULL);
        }
    return rc;
}
