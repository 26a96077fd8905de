/*
 * completion.c: `foldsweep completion bash|zsh`. A shell completion
 * script generated from cli.c's command table and each command's CliSpec:
 * the commands, each command's options (with their help in zsh), nothing
 * after an option that takes a value and the operands as the shell's own
 * file completion. CMake writes both at build time and installs them.
 */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"

enum { OPT_HELP };

static const CliOption options[] = {
    [OPT_HELP] = {"--help", "-h", NULL, "show this help"},
};

static void bash_write(FILE *out);
static void zsh_write(FILE *out);

static const struct {
    const char *name;
    void (*write)(FILE *out);
} shells[] = {{"bash", bash_write}, {"zsh", zsh_write}};
#define N_SHELLS (int)(sizeof shells / sizeof shells[0])

static const CliSpec spec = {
    .cmd = "completion",
    .usage = "usage: foldsweep completion bash|zsh\n",
    .about = "Writes a completion script for the shell: commands, each command's options, and files\n"
             "for their values and operands. For this shell session:\n"
             "  source <(foldsweep completion bash)\n"
             "'cmake --install' installs both: share/bash-completion/completions/foldsweep and\n"
             "share/zsh/site-functions/_foldsweep under the prefix.\n",
    .opts = CLI_OPTIONS(options),
    .column = 12,
    .max_args = 1,
    .extra_arg = "one shell only; extra argument",
    .no_arg = "missing the shell (bash or zsh)",
};
const CliSpec *const cli_completion_spec = &spec; /* for cli.c's table */

/* Names go into the scripts unquoted: letters, digits and '-' only (they
 * are the program's own, so anything else is a mistake in a table). */
static const char *word(const char *s)
{
    FS_ASSERT(s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == strlen(s));
    return s;
}

/* A command's option words; values: only those that take a value (the
 * word after them is not completed as an option). */
static void option_words(FILE *out, const CliSpec *s, int values)
{
    int first = 1;
    for (int i = 0; i < s->n_opts; i++) {
        const CliOption *o = &s->opts[i];
        if (values && (!o->arg || o->optional)) continue;
        fprintf(out, "%s%s", first ? "" : " ", word(o->name));
        if (o->alias) fprintf(out, " %s", word(o->alias));
        first = 0;
    }
}

/* What follows a command that is not an option: commands after `help`,
 * shells after `completion`; nothing (files) elsewhere. */
static void operand_words(FILE *out, const CliCommand *c)
{
    if (!strcmp(c->name, "help"))
        for (int i = 0; i < cli_n_commands; i++) fprintf(out, "%s%s", i ? " " : "", word(cli_commands[i].name));
    if (!strcmp(c->name, "completion"))
        for (int i = 0; i < N_SHELLS; i++) fprintf(out, "%s%s", i ? " " : "", word(shells[i].name));
}

static void bash_write(FILE *out)
{
    fprintf(out, "# bash completion for foldsweep %s, written by 'foldsweep completion bash' from the\n"
                 "# command line's own tables. Install as share/bash-completion/completions/foldsweep\n"
                 "# (cmake --install does), or for one session: source <(foldsweep completion bash)\n",
            FS_VERSION);
    fputs("_foldsweep()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local opts='' values='' operands=''\n"
          "    COMPREPLY=()\n"
          "    if [ \"$COMP_CWORD\" -le 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '",
          out);
    for (int i = 0; i < cli_n_commands; i++) fprintf(out, "%s ", word(cli_commands[i].name));
    option_words(out, &cli_main_spec, 0);
    fputs("' -- \"$cur\"))\n        return 0\n    fi\n    case ${COMP_WORDS[1]} in\n", out);
    for (int i = 0; i < cli_n_commands; i++) {
        const CliCommand *c = &cli_commands[i];
        fprintf(out, "    %s)\n        opts='", word(c->name));
        option_words(out, *c->spec, 0);
        fputs("'\n        values='", out);
        option_words(out, *c->spec, 1);
        fputs("'\n        operands='", out);
        operand_words(out, c);
        fputs("' ;;\n", out);
    }
    fputs("    *) return 0 ;;\n    esac\n"
          "    # The value of an option: the shell's own completion (files).\n"
          "    case \" $values \" in *\" $prev \"*) return 0 ;; esac\n"
          "    case $cur in\n"
          "    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
          "    *) COMPREPLY=($(compgen -W \"$operands\" -- \"$cur\")) ;;\n"
          "    esac\n"
          "    return 0\n}\n"
          "complete -o default -F _foldsweep foldsweep\n",
          out);
}

/* Text inside a zsh single-quoted word; one line. */
static void zsh_quoted(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", out);
        else
            fputc(*s == '\n' ? ' ' : *s, out);
    }
}

/* _describe's "name:description" entries of a spec's options. */
static void zsh_options(FILE *out, const CliSpec *s)
{
    for (int i = 0; i < s->n_opts; i++) {
        const CliOption *o = &s->opts[i];
        for (int k = 0; k < 2; k++) {
            const char *name = k ? o->alias : o->name;
            if (!name) continue;
            fprintf(out, " '%s:", word(name));
            zsh_quoted(out, o->help);
            fputc('\'', out);
        }
    }
}

static void zsh_write(FILE *out)
{
    fprintf(out, "#compdef foldsweep\n"
                 "# zsh completion for foldsweep %s, written by 'foldsweep completion zsh' from the\n"
                 "# command line's own tables. Install as _foldsweep in a folder of $fpath\n"
                 "# (cmake --install: share/zsh/site-functions), or: source <(foldsweep completion zsh)\n",
            FS_VERSION);
    fputs("_foldsweep() {\n  local -a cmds opts values operands\n  if (( CURRENT == 2 )); then\n    cmds=(", out);
    for (int i = 0; i < cli_n_commands; i++) {
        fprintf(out, " '%s:", word(cli_commands[i].name));
        zsh_quoted(out, cli_commands[i].summary);
        fputc('\'', out);
    }
    fputs(")\n    opts=(", out);
    zsh_options(out, &cli_main_spec);
    fputs(")\n    if [[ $PREFIX == -* ]]; then _describe -t options 'option' opts; else _describe -t commands "
          "'foldsweep command' cmds; fi\n    return\n  fi\n  case $words[2] in\n",
          out);
    for (int i = 0; i < cli_n_commands; i++) {
        const CliCommand *c = &cli_commands[i];
        fprintf(out, "  %s)\n    opts=(", word(c->name));
        zsh_options(out, *c->spec);
        fputs(")\n    values=(", out);
        option_words(out, *c->spec, 1);
        fputs(")\n    operands=(", out);
        operand_words(out, c);
        fputs(") ;;\n", out);
    }
    fputs("  *) _files; return ;;\n  esac\n"
          "  if (( ${values[(Ie)$words[CURRENT-1]]} )); then _files; return; fi\n"
          "  if [[ $PREFIX == -* ]]; then _describe -t options 'option' opts\n"
          "  elif (( $#operands )); then compadd -a operands\n"
          "  else _files; fi\n}\n"
          "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _foldsweep \"$@\"; else compdef _foldsweep "
          "foldsweep; fi\n",
          out);
}

int cli_completion(int argc, char **argv)
{
    CliArgs a;
    int rc = cli_args_parse(&a, &spec, argc, argv);
    if (rc != CLI_PARSED) return rc;
    const char *shell = a.args[0];
    const char *names[N_SHELLS];
    int which = -1;
    for (int i = 0; i < N_SHELLS; i++) {
        names[i] = shells[i].name;
        if (!strcmp(shell, names[i])) which = i;
    }
    if (which < 0) {
        const char *near = fs_nearest(shell, names, N_SHELLS);
        char what[96];
        snprintf(what, sizeof what, "unknown shell '%s' (expected bash or zsh)%s%s%s", shell,
                 near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        rc = cli_usage_error(&spec, what, NULL);
        cli_args_free(&a);
        return rc;
    }
    cli_args_free(&a);
    shells[which].write(stdout);
    return cli_output_close(stdout, "standard output") == 0 ? FS_EXIT_OK : FS_EXIT_ERROR;
}
