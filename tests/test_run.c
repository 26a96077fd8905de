/*
 * foldsweep run end to end, through the binary: a complete run, a second
 * run that resumes with nothing left, SIGKILL mid-run then a rerun giving
 * the same leaderboard as an uninterrupted run, SIGTERM giving exit 3 with
 * a journal that a rerun completes, a warning during setup (exit 3) and
 * after the last fold (exit 0), refusal of a changed sweep, exit codes.
 * Each command is printed so a failure can be rerun by hand.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <time.h>

#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

static char *board(const char *dir) { return tr_board(dir, tmp); }

/* Starts argv (its output into tmp/log.txt), sends it sig once its journal
 * holds `folds` fold records, and returns its pid. Waited for up to a
 * minute, not a few seconds: the sanitizer build on two busy cores took
 * over 6 s to its fifth fold (CI stop 49). */
static pid_t signal_after(char **argv, const char *journal, int folds, int sig)
{
    char log[300];
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    pid_t pid = tp_spawn(argv, log);
    for (int i = 0; i < 30000 && tp_count_in_file(journal, "\"kind\":\"fold\"") < folds; i++)
        usleep(2000);
    kill(pid, sig);
    return pid;
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "run");
    char sweep[300], sweep2[300], a[300], b[300], c[300], d[300], log[300];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(sweep2, sizeof sweep2, "%s/s2.yaml", tmp);
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp);
    snprintf(d, sizeof d, "%s/d", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    tp_write_text(sweep, TR_SWEEP);
    char journal_a[320], journal_b[320], journal_c[320];
    snprintf(journal_a, sizeof journal_a, "%s/journal.jsonl", a);
    snprintf(journal_b, sizeof journal_b, "%s/journal.jsonl", b);
    snprintf(journal_c, sizeof journal_c, "%s/journal.jsonl", c);

    /* 1. A complete run: 8 trials x 3 folds, leaderboard files written. */
    char *run_a[] = {"foldsweep", "run", sweep, "--out", a, "--threads", "2", NULL};
    CHECK(tp_run_argv(run_a, log) == 0);
    CHECK(tp_count_in_file(journal_a, "\"kind\":\"fold\"") == 24);
    CHECK(tp_count_in_file(journal_a, "\"kind\":\"trial\"") == 8);
    char path[400];
    snprintf(path, sizeof path, "%s/leaderboard.json", a);
    CHECK(tp_count_in_file(path, "\"rank\":") == 8);
    /* Per-class scores of every fold, as docs/leaderboard-json.md lists them. */
    CHECK(tp_count_in_file(path, "\"mcc\":[") == 24);
    CHECK(tp_count_in_file(path, "\"confusion\":[[") == 24);
    snprintf(path, sizeof path, "%s/profile.json", a);
    /* The whole run's profile and its last session's (one session here). */
    CHECK(tp_count_in_file(path, "\"train_seconds\"") == 2);
    CHECK(tp_count_in_file(path, "\"last_session\"") == 1);
    char *out = tp_read_file(log, NULL);
    CHECK(out && strstr(out, "24 folds to train (0 already done)"));
    free(out);

    /* 2. The same command again: nothing left, nothing duplicated. */
    CHECK(tp_run_argv(run_a, log) == 0);
    CHECK(tp_count_in_file(journal_a, "\"kind\":\"fold\"") == 24);
    out = tp_read_file(log, NULL);
    CHECK(out && strstr(out, "0 folds to train (24 already done)"));
    free(out);
    char *ref = board(a);

    /* 3. SIGKILL mid-run, then the same command: the same leaderboard. */
    char *run_b[] = {"foldsweep", "run", sweep, "--out", b, "--threads", "1", NULL};
    tp_wait(signal_after(run_b, journal_b, 5, SIGKILL));
    int partial = tp_count_in_file(journal_b, "\"kind\":\"fold\"");
    printf("killed after %d fold records\n", partial);
    CHECK(partial >= 5 && partial < 24);
    CHECK(tp_run_argv(run_b, log) == 0);
    CHECK(tp_count_in_file(journal_b, "\"kind\":\"fold\"") == 24);
    char *got = board(b);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboards differ:\n%s\nvs\n%s", ref, got);
    free(got);

    /* 4. SIGTERM with no grace: exit 3, then a rerun completes with the
     * same leaderboard. */
    char *run_c[] = {"foldsweep", "run", sweep, "--out", c, "--threads", "1", "--grace", "0", NULL};
    CHECK(tp_wait(signal_after(run_c, journal_c, 3, SIGTERM)) == 3);
    out = tp_read_file(log, NULL);
    CHECK(out && strstr(out, "interrupted"));
    free(out);
    int after_term = tp_count_in_file(journal_c, "\"kind\":\"fold\"");
    CHECK(after_term >= 3 && after_term < 24);
    char *run_c2[] = {"foldsweep", "run", sweep, "--out", c, "--threads", "2", NULL};
    CHECK(tp_run_argv(run_c2, log) == 0);
    got = board(c);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboards differ after SIGTERM and resume");
    free(got);

    /* 4a. SIGTERM with a grace: the line says what becomes of the folds in
     * flight (their count as last sampled: these folds are short), which
     * finish; exit 3. */
    char g[300], journal_g[320];
    snprintf(g, sizeof g, "%s/g", tmp);
    snprintf(journal_g, sizeof journal_g, "%s/journal.jsonl", g);
    char *run_g[] = {"foldsweep", "run", sweep, "--out", g, "--threads", "1", "--grace", "30", NULL};
    CHECK(tp_wait(signal_after(run_g, journal_g, 3, SIGTERM)) == 3);
    out = tp_read_file(log, NULL);
    const char *stop = out ? strstr(out, "stopping: no new folds; ") : NULL;
    CHECK_MSG(stop && strstr(stop, " in flight get 30 s to finish (signal again to abandon them)\n"),
              "no stop line after SIGTERM with a grace:\n%s", out ? out : "");
    free(out);

    /* 4b. A scheduler's warning (SIGUSR1) during setup, before the folder
     * is open: exit 3 (a requeue), nothing trained; the rerun completes. */
    char e[300], journal_e[320];
    snprintf(e, sizeof e, "%s/e", tmp);
    snprintf(journal_e, sizeof journal_e, "%s/journal.jsonl", e);
    char *run_e[] = {"foldsweep", "run", sweep, "--out", e, "--threads", "2", NULL};
    setenv("FOLDSWEEP_TEST_RAISE", "setup", 1);
    CHECK(tp_run_argv(run_e, log) == 3);
    unsetenv("FOLDSWEEP_TEST_RAISE");
    CHECK(tp_count_in_file(journal_e, "\"kind\":\"fold\"") == 0);
    CHECK(tp_count_in_file(log, "interrupted") == 1);
    /* The same warning once every fold is recorded: nothing is left, so
     * exit 0 (a scheduler must not requeue a finished sweep). */
    setenv("FOLDSWEEP_TEST_RAISE", "trained", 1);
    CHECK(tp_run_argv(run_e, log) == 0);
    unsetenv("FOLDSWEEP_TEST_RAISE");
    CHECK(tp_count_in_file(journal_e, "\"kind\":\"fold\"") == 24);
    got = board(e);
    CHECK_MSG(strcmp(ref, got) == 0, "leaderboards differ after a warning during setup and resume");
    free(got);

    /* 5. A changed sweep into the same folder is refused, naming the change. */
    char *changed = strdup(TR_SWEEP);
    char *p = strstr(changed, "epochs: 3");
    p[8] = '4';
    tp_write_text(sweep2, changed);
    free(changed);
    char *run_changed[] = {"foldsweep", "run", sweep2, "--out", a, NULL};
    CHECK(tp_run_argv(run_changed, log) == 1);
    out = tp_read_file(log, NULL);
    CHECK(out && strstr(out, "different sweep"));
    CHECK(out && strstr(out, "epochs"));
    free(out);

    /* 6. Exit codes: usage 2, missing or invalid sweep 1. */
    char *bad_opt[] = {"foldsweep", "run", sweep, "--threads", "zero", NULL};
    CHECK(tp_run_argv(bad_opt, log) == 2);
    char *no_args[] = {"foldsweep", "run", NULL};
    CHECK(tp_run_argv(no_args, log) == 2);
    char missing[320];
    snprintf(missing, sizeof missing, "%s/none.yaml", tmp);
    char *run_missing[] = {"foldsweep", "run", missing, "--out", d, NULL};
    CHECK(tp_run_argv(run_missing, log) == 1);
    tp_write_text(sweep2, "data:\n  synth: {proteins: 50}\n  window: 8\nmodel:\n  filtres: 8\n");
    char *run_invalid[] = {"foldsweep", "run", sweep2, "--out", d, NULL};
    CHECK(tp_run_argv(run_invalid, log) == 1);
    out = tp_read_file(log, NULL);
    CHECK(out && strstr(out, "s2.yaml:3:"));  /* the even window, with its line */
    CHECK(out && strstr(out, "filters"));     /* the suggestion for the typo */
    free(out);
    char *help[] = {"foldsweep", "run", "--help", NULL};
    CHECK(tp_run_argv(help, log) == 0);

    free(ref);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
