/*
 * args.h: private to the cli module. One option-table parser for every
 * subcommand, so options, help pages and usage errors look and behave the
 * same everywhere: "--opt value", "--opt=value", a short alias, "--" ending
 * the options, and "foldsweep: CMD: ..." plus the usage line on a mistake
 * (exit 2), with the nearest option suggested for a misspelt one.
 *
 * A command parses into raw strings first and checks values afterwards
 * (cli_whole_parse, cli_real_parse), so it decides the order in which its
 * mistakes are reported.
 */
#ifndef FS_CLI_ARGS_H
#define FS_CLI_ARGS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *name;  /* long form, "--folds"; the option named "--help" prints the help */
    const char *alias; /* short form, "-k", or NULL */
    const char *arg;   /* the value's name in the help ("K"), or NULL for a flag */
    const char *help;  /* one line; a '\n' continues it under the help column */
    int optional;      /* the value may be left out: "--opt=V", or the next word when
                        * it is a number ("--watch 5"); the option's spelling when not */
} CliOption;

typedef struct {
    const char *cmd;          /* "prepare": the name in messages */
    const char *usage;        /* "usage: foldsweep prepare ...\n" (one or more lines) */
    const char *about;        /* the help's paragraph before "options:" */
    const char *epilog;       /* the help's paragraph after the options, or NULL */
    const CliOption *opts;
    int n_opts;               /* at most CLI_MAX_OPTIONS */
    int column;               /* width of the help's option column */
    int max_args;             /* operands allowed; -1 for any number */
    const char *extra_arg;    /* the mistake of one operand too many */
    const char *no_arg;       /* the mistake of no operand, or NULL where none is needed */
} CliSpec;

#define CLI_MAX_OPTIONS 24
/* A macro's value as a string literal, for a help line that names a
 * default or a limit kept elsewhere: "default " CLI_TEXT(FS_EVAL_SEED). */
#define CLI_TEXT_OF(x) #x
#define CLI_TEXT(x) CLI_TEXT_OF(x)
#define CLI_OPTIONS(table) (table), (int)(sizeof(table) / sizeof((table)[0]))

typedef struct {
    const char *val[CLI_MAX_OPTIONS]; /* per option: its last value, a flag's spelling, or NULL */
    const char **args;                /* the operands in order; cli_args_free releases them */
    int n_args;
} CliArgs;

/* cli_args_parse's "go on" result; any other is the exit code to return. */
enum { CLI_PARSED = -1 };

/* "--name ARG", "-a, --name ARG" or "--name [ARG]" (an optional value), as
 * the help and the manual page show an option. */
void cli_option_label(const CliOption *o, char *out, size_t n);

/* Parses argv[1..] (argv[0] is the command). Returns CLI_PARSED with *a
 * filled, or FS_EXIT_OK after printing the help, or FS_EXIT_USAGE after a
 * usage error (nothing left to free in either case). */
int cli_args_parse(CliArgs *a, const CliSpec *s, int argc, char **argv);
void cli_args_free(CliArgs *a);

void cli_help_print(const CliSpec *s, FILE *out);
/* Help text from column at (the cursor's), filled to the terminal's 80
 * columns, wrapped lines indented by indent: its soft line breaks (the
 * source's, at whatever width its lines had) are spaces; a break before a
 * blank or an indented line, or after an indented line, stays. */
void cli_text_print(FILE *out, const char *text, int at, int indent);

/* "foldsweep: CMD: what arg", the usage and the --help hint on stderr;
 * arg may be NULL. Returns FS_EXIT_USAGE. */
int cli_usage_error(const CliSpec *s, const char *what, const char *arg);

/* Option opt's value as a whole number in [lo, hi] (decimal, or hex after
 * 0x); hi UINT64_MAX means no upper bound. Leaves *v (the default) when the
 * option was not given. Returns 0, or FS_EXIT_USAGE after the usage error. */
int cli_whole_parse(const CliSpec *s, const CliArgs *a, int opt, uint64_t lo, uint64_t hi,
                    uint64_t *v);
/* The same for a finite real number in [lo, hi]; hi may be INFINITY. */
int cli_real_parse(const CliSpec *s, const CliArgs *a, int opt, double lo, double hi, double *v);

/* A command's --trial ID and --rank N (the trial by id prefix or by
 * leaderboard rank: predict_trial_row resolves it): the rank, 1 unless
 * given, into *rank. Returns 0, or FS_EXIT_USAGE after the usage error (a
 * rank that is not a whole number >= 1, or both options given). */
int cli_trial_parse(const CliSpec *s, const CliArgs *a, int opt_trial, int opt_rank, int *rank);
/* --top K (1..max) into *top (0 when absent), refused beside any of the
 * options `others` lists (ended by -1), which choose models another way. */
int cli_top_parse(const CliSpec *s, const CliArgs *a, int opt_top, const int *others, int max, int *top);

#endif
