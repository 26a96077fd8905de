/*
 * test_cli_help: the command line's help as generated from its one table
 * (src/cli/cli.c's cli_commands and each command's CliSpec), checked
 * against that table rather than a list written here: every command and
 * option is in the manual page (`foldsweep help --man`), in its own
 * command's section, and groff renders the page without a warning; the
 * bash completion (`foldsweep completion bash`) completes every command and
 * every command's options, a value as a file and `help`'s commands, and
 * the zsh one the same where zsh is installed (with stand-ins for zsh's
 * completion functions); the files CMake wrote at build time are what the
 * binary writes. And the "did
 * you mean" of a misspelt command, option or shell (util's fs_nearest, the
 * one the sweep loader uses too).
 */
#include <libgen.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "test_proc.h"

static char tmp[256];

/* 1 if the file at path holds exactly text. */
static int file_is(const char *path, const char *text)
{
    char *got = tp_read_file(path, NULL);
    int same = got && !strcmp(got, text);
    free(got);
    return same;
}

/* ---------------------------------------------------------------------- */
/* Typos                                                                   */

static void test_nearest(void)
{
    const char *cmds[] = {"run", "plan", "leaderboard", "status", "report", "repair"};
    CHECK(fs_nearest("leaderbord", cmds, 6) == cmds[2]);
    CHECK(fs_nearest("stauts", cmds, 6) == cmds[3]);
    CHECK(fs_nearest("frobnicate", cmds, 6) == NULL);
    CHECK(fs_nearest("x", cmds, 6) == NULL); /* one letter is no evidence */
    const char *keys[] = {"learning_rate", "s"};
    CHECK(fs_nearest("learning_rat", keys, 2) == keys[0]);
    CHECK(fs_nearest("lr", keys, 2) == NULL);
}

static void test_typos(void)
{
    CHECK(tp_run("leaderbord") == 2);
    CHECK_CONTAINS(err_text, "foldsweep: unknown command 'leaderbord'; did you mean 'leaderboard'?");
    CHECK(tp_run("run x.yaml --thredas 3") == 2);
    CHECK_CONTAINS(err_text, "foldsweep: run: unknown option --thredas; did you mean '--threads'?");
    CHECK(tp_run("run x.yaml --thredas=3") == 2);
    CHECK_CONTAINS(err_text, "did you mean '--threads'?");
    CHECK(tp_run("--verison") == 2);
    CHECK_CONTAINS(err_text, "unknown option '--verison'; did you mean '--version'?");
    CHECK(tp_run("help stauts") == 2);
    CHECK_CONTAINS(err_text, "unknown command 'stauts'; did you mean 'status'?");
    CHECK(tp_run("completion bsh") == 2);
    CHECK_CONTAINS(err_text, "did you mean 'bash'?");
    /* Nothing near: no guess, and the list of commands instead. */
    CHECK(tp_run("frobnicate") == 2);
    CHECK(strstr(err_text, "did you mean") == NULL);
    CHECK_CONTAINS(err_text, "commands:");
    CHECK(tp_run("leaderboard --bogus x") == 2);
    CHECK(strstr(err_text, "did you mean") == NULL);

    /* Every long option of every command: two letters swapped is a typo
     * of it, and the suggestion names it (the parser runs before any other
     * check, so no operand is needed). */
    int checked = 0;
    for (int i = 0; i < cli_n_commands; i++) {
        const CliSpec *s = *cli_commands[i].spec;
        for (int k = 0; k < s->n_opts; k++) {
            const char *name = s->opts[k].name;
            size_t n = strlen(name);
            if (n < 7) continue; /* "--json": too short to tell from another word */
            char typo[64], want[96];
            snprintf(typo, sizeof typo, "%s", name);
            char c = typo[3];
            typo[3] = typo[4], typo[4] = c;
            if (!strcmp(typo, name)) continue;
            snprintf(want, sizeof want, "did you mean '%s'?", name);
            CHECK(tp_run("%s %s", cli_commands[i].name, typo) == 2);
            CHECK_MSG(strstr(err_text, want) != NULL, "%s %s: %s", cli_commands[i].name, typo, err_text);
            checked++;
        }
    }
    printf("%d misspelt options suggested\n", checked);
    CHECK(checked > 20);
}

/* ---------------------------------------------------------------------- */
/* The manual page                                                         */

/* name as it stands in the page: every '-' is \- (option names only hold
 * letters, digits and dashes). */
static void roff_name(const char *name, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 3 < n; p++) {
        if (*p == '-') out[k++] = '\\';
        out[k++] = *p;
    }
    out[k] = '\0';
}

/* Every option of s in text, bold, with its value's name in italics. */
static void check_options(const char *text, const CliSpec *s, const char *where)
{
    for (int k = 0; k < s->n_opts; k++) {
        const CliOption *o = &s->opts[k];
        char want[160], name[80];
        roff_name(o->name, name, sizeof name);
        snprintf(want, sizeof want, "\\fB%s\\fR%s%s%s\n", name, o->arg ? (o->optional ? " [\\fI" : " \\fI") : "",
                 o->arg ? o->arg : "", o->arg ? (o->optional ? "\\fR]" : "\\fR") : "");
        CHECK_MSG(strstr(text, want) != NULL, "%s: no %s", where, want);
        if (o->alias) {
            roff_name(o->alias, name, sizeof name);
            snprintf(want, sizeof want, "\\fB%s\\fR, ", name);
            CHECK_MSG(strstr(text, want) != NULL, "%s: no %s", where, want);
        }
    }
}

static void test_man(const char *built)
{
    CHECK(tp_run("help --man") == 0);
    char *man = strdup(out_text);
    CHECK_CONTAINS(man, ".TH FOLDSWEEP 1 ");
    /* The program's options, then each command's section holding its own options. */
    char *cmds = strstr(man, "\n.SH COMMANDS\n");
    CHECK(cmds != NULL);
    if (!cmds) return;
    *cmds = '\0';
    check_options(man, &cli_main_spec, "OPTIONS");
    *cmds = '\n';
    for (int i = 0; i < cli_n_commands; i++) {
        char head[96];
        snprintf(head, sizeof head, "\n.SS \"foldsweep %s\"\n", cli_commands[i].name);
        char *sec = strstr(cmds, head);
        CHECK_MSG(sec != NULL, "no section %s", head + 1);
        if (!sec) continue;
        char *end = strstr(sec + 1, "\n.S");
        char keep = end ? *end : 0;
        if (end) *end = '\0';
        check_options(sec, *cli_commands[i].spec, cli_commands[i].name);
        if (end) *end = keep;
    }
    /* The build wrote the same page (what cmake --install installs). */
    char path[4200];
    snprintf(path, sizeof path, "%s/cli-docs/foldsweep.1", built);
    CHECK_MSG(file_is(path, man), "%s is not what 'foldsweep help --man' writes", path);

    /* groff reads it without a warning (-ww: all of them). */
    char page[300], cmd[800];
    snprintf(page, sizeof page, "%s/foldsweep.1", tmp);
    tp_write_text(page, man);
    if (system("command -v groff >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "groff -man -Tutf8 -ww -z '%s' 2>&1", page);
        printf("$ %s\n", cmd);
        FILE *p = popen(cmd, "r");
        char warn[4096] = "";
        size_t n = p ? fread(warn, 1, sizeof warn - 1, p) : 0;
        warn[n] = '\0';
        CHECK(p && pclose(p) == 0);
        CHECK_MSG(n == 0, "groff: %s", warn);
    } else {
        printf("note: no groff; the page is not rendered\n");
    }
    free(man);

    /* help: the same commands as the table, in its order. */
    CHECK(tp_run("help") == 0);
    const char *at = out_text;
    for (int i = 0; i < cli_n_commands && at; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %-12s %s\n", cli_commands[i].name, cli_commands[i].summary);
        at = strstr(at, row);
        CHECK_MSG(at != NULL, "help does not list '%s' in the table's order", cli_commands[i].name);
    }
}

/* ---------------------------------------------------------------------- */
/* Shell completion                                                        */

/* Runs each `words|cword` completion of lines (one a line) through the
 * script in bash; out gets one line of COMPREPLY per line. */
static int bash_complete(const char *script, const char *lines, char *out, size_t n)
{
    char prog[300], cmd[700];
    snprintf(prog, sizeof prog, "%s/complete.sh", tmp);
    FILE *f = fopen(prog, "w");
    if (!f) return -1;
    fprintf(f, "source '%s' || exit 9\n"
               "while IFS='|' read -r words cword; do\n"
               "  read -r -a COMP_WORDS <<<\"$words\"\n"
               "  [ \"$cword\" -ge \"${#COMP_WORDS[@]}\" ] && COMP_WORDS+=('')\n"
               "  COMP_CWORD=$cword; COMPREPLY=(); _foldsweep\n"
               "  echo \"[${COMPREPLY[*]}]\"\n"
               "done <<'EOF'\n%sEOF\n",
            script, lines);
    fclose(f);
    snprintf(cmd, sizeof cmd, "bash '%s'", prog);
    printf("$ %s\n", cmd);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = '\0';
    return pclose(p);
}

static void test_bash(const char *built)
{
    if (system("command -v bash >/dev/null 2>&1") != 0) {
        printf("note: no bash; the completion is not tried\n");
        return;
    }
    CHECK(tp_run("completion bash") == 0);
    char script[300];
    snprintf(script, sizeof script, "%s/foldsweep.bash", tmp);
    tp_write_text(script, out_text);
    char path[4200];
    snprintf(path, sizeof path, "%s/cli-docs/foldsweep.bash", built);
    CHECK_MSG(file_is(path, out_text), "%s is not what 'foldsweep completion bash' writes", path);

    /* The brief's two, a value (left to the shell: files) and help's operand. */
    static char got[1 << 16];
    CHECK(bash_complete(script, "foldsweep leaderb|1\nfoldsweep run s.yaml --thr|3\nfoldsweep run --out|3\n"
                                "foldsweep help lead|2\nfoldsweep completion z|2\nfoldsweep status r|2\n",
                        got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, "[leaderboard]\n[--threads]\n[]\n[leaderboard]\n[zsh]\n[]\n"), "completions:\n%s", got);

    /* Every command from its first three letters, and every command's
     * options from "--": all of the table's, none else. */
    char lines[1 << 14] = "", want[1 << 15] = "";
    size_t nl = 0, nw = 0;
    for (int i = 0; i < cli_n_commands; i++) {
        const char *name = cli_commands[i].name;
        nl += (size_t)snprintf(lines + nl, sizeof lines - nl, "foldsweep %.3s|1\nfoldsweep %s --|2\n", name, name);
        nw += (size_t)snprintf(want + nw, sizeof want - nw, "[");
        int first = 1;
        for (int j = 0; j < cli_n_commands; j++)
            if (!strncmp(cli_commands[j].name, name, 3))
                nw += (size_t)snprintf(want + nw, sizeof want - nw, "%s%s", first ? "" : " ", cli_commands[j].name),
                    first = 0;
        nw += (size_t)snprintf(want + nw, sizeof want - nw, "]\n[");
        const CliSpec *s = *cli_commands[i].spec;
        for (int k = 0; k < s->n_opts; k++)
            nw += (size_t)snprintf(want + nw, sizeof want - nw, "%s%s", k ? " " : "", s->opts[k].name);
        nw += (size_t)snprintf(want + nw, sizeof want - nw, "]\n");
    }
    CHECK(bash_complete(script, lines, got, sizeof got) == 0);
    CHECK_MSG(!strcmp(got, want), "completions:\n%s\nexpected:\n%s", got, want);
}

static void test_zsh(const char *built)
{
    CHECK(tp_run("completion zsh") == 0);
    CHECK_CONTAINS(out_text, "#compdef foldsweep\n");
    for (int i = 0; i < cli_n_commands; i++) {
        char entry[64];
        snprintf(entry, sizeof entry, " '%s:", cli_commands[i].name);
        CHECK_CONTAINS(out_text, entry);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/cli-docs/_foldsweep", built);
    CHECK_MSG(file_is(path, out_text), "%s is not what 'foldsweep completion zsh' writes", path);
    if (system("command -v zsh >/dev/null 2>&1") != 0) {
        printf("note: no zsh; the zsh script is not tried\n");
        return;
    }
    /* Outside a completion widget: zsh's completion functions stand in by
     * stand-ins that print what they are given (the candidates; zsh itself
     * then matches them against the word). */
    char script[300], harness[300], cmd[700];
    snprintf(script, sizeof script, "%s/_foldsweep", tmp);
    tp_write_text(script, out_text);
    snprintf(harness, sizeof harness, "%s/complete.zsh", tmp);
    FILE *f = fopen(harness, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "compdef() { :; }\n"
               "_describe() { local n=${@[-1]}; local -a a; a=(\"${(@P)n}\"); print -r -- \"${(j: :)${a[@]%%%%:*}}\"; }\n"
               "compadd() { print -r -- \"${(j: :)${(@P)2}}\"; }\n"
               "_files() { print _files; }\n"
               "source '%s' || exit 9\n"
               "words=(foldsweep le); CURRENT=2; PREFIX=le; _foldsweep\n"
               "words=(foldsweep run --out ''); CURRENT=4; PREFIX=''; _foldsweep\n"
               "words=(foldsweep help ''); CURRENT=3; PREFIX=''; _foldsweep\n",
            script);
    static char want[1 << 15];
    char names[1024];
    size_t nn = 0, nw;
    for (int i = 0; i < cli_n_commands; i++)
        nn += (size_t)snprintf(names + nn, sizeof names - nn, "%s%s", i ? " " : "", cli_commands[i].name);
    nw = (size_t)snprintf(want, sizeof want, "%s\n_files\n%s\n", names, names);
    for (int i = 0; i < cli_n_commands; i++) {
        fprintf(f, "words=(foldsweep %s -); CURRENT=3; PREFIX=-; _foldsweep\n", cli_commands[i].name);
        const CliSpec *s = *cli_commands[i].spec;
        for (int k = 0; k < s->n_opts; k++)
            nw += (size_t)snprintf(want + nw, sizeof want - nw, "%s%s%s%s", k ? " " : "", s->opts[k].name,
                                   s->opts[k].alias ? " " : "", s->opts[k].alias ? s->opts[k].alias : "");
        nw += (size_t)snprintf(want + nw, sizeof want - nw, "\n");
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "zsh -f '%s'", harness);
    printf("$ %s\n", cmd);
    FILE *p = popen(cmd, "r");
    static char got[1 << 15];
    size_t n = p ? fread(got, 1, sizeof got - 1, p) : 0;
    got[n] = '\0';
    CHECK(p && pclose(p) == 0);
    CHECK_MSG(!strcmp(got, want), "zsh completions:\n%s\nexpected:\n%s", got, want);
}

/* ---------------------------------------------------------------------- */
/* The terminal's help: filled to 80 columns                               */

/* Every line of text within 80 columns, and every line of a paragraph
 * as full as the next line's first word allows: the texts were broken by
 * hand at about 90 columns, so lines ran past 80 and an option's help broke
 * after one word ("not"). A paragraph goes on in the next line when both
 * are unindented text, or when the next is indented to where this line's
 * text after an option's label starts (past the usage, which wraps its
 * bracketed options whole). */
static void check_filled(const char *text, const char *what)
{
    const char *line = strstr(text, "\n\n");
    for (line = line ? line + 2 : text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        const int len = (int)(end - line), indent = (int)strspn(line, " ");
        CHECK_MSG(len <= 80, "%s: a line of %d columns: %.*s", what, len, len, line);
        const char *next = *end ? end + 1 : end;
        const int next_indent = (int)strspn(next, " "), word = (int)strcspn(next + next_indent, " \n");
        const int text_on = *next && next[next_indent] != '\n' && len > 0;
        const int para = text_on && indent == 0 && next_indent == 0;
        const int option = text_on && next_indent > 2 && len > next_indent && line[next_indent - 1] == ' ' &&
                           line[next_indent] != ' ';
        if (para || option)
            CHECK_MSG(len + 1 + word > 80, "%s: a line broken early (%d columns, next word %d): %.*s", what, len, word,
                      len, line);
        line = next;
    }
}

/* The help as a user who runs foldsweep from PATH sees it: the texts are
 * filled for that name, and the test's binary is named by its build path
 * (fs_program), whose length depends on where the tree was cloned. */
static void check_filled_named(const char *what)
{
    static char named[1 << 16];
    const size_t bin = strlen(FS_TEST_BIN);
    size_t n = 0;
    for (const char *p = out_text; *p && n + 16 < sizeof named;)
        if (!strncmp(p, FS_TEST_BIN, bin)) n += (size_t)snprintf(named + n, sizeof named - n, "foldsweep"), p += bin;
        else named[n++] = *p++;
    named[n] = '\0';
    check_filled(named, what);
}

static void test_filled(void)
{
    CHECK(tp_run("--help") == 0);
    check_filled_named("foldsweep --help");
    for (int i = 0; i < cli_n_commands; i++) {
        CHECK(tp_run("%s --help", cli_commands[i].name) == 0);
        char what[64];
        snprintf(what, sizeof what, "foldsweep %s --help", cli_commands[i].name);
        check_filled_named(what);
    }
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "cli_help");
    char bin[4200];
    snprintf(bin, sizeof bin, "%s", FS_TEST_BIN);
    const char *built = dirname(bin); /* the build folder: cli-docs/ is beside the binary */
    test_nearest();
    test_typos();
    test_man(built);
    test_bash(built);
    test_zsh(built);
    test_filled();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
