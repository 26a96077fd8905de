/*
 * test_progress_line.c: the run's progress line through the binary.
 *
 * Where it goes: redrawn in place ("\r...ESC[K") only on the user's
 * terminal. Open MPI gives its ranks a pseudo-terminal of its own whatever
 * mpirun's output is, so a log of `mpirun ... > log` filled with redraws:
 * here mpirun's part is played by a process whose output is a file and
 * whose child (the rank, with Open MPI's variables) writes to a
 * pseudo-terminal. (A build with MPI cannot take those variables without
 * mpirun; test_mpi checks the real one's log.) --progress-line bar and
 * plain choose either way.
 *
 * Its totals: the whole budget from the first line, the part not listed
 * yet named: a tpe sweep's trials still to be proposed (the total was the
 * first batch's folds, then grew: 11/12 with "ETA 0s", then 48/48), and
 * the seed replicates until they are chosen (1/24, then 34/36).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <termios.h>

#include "test_proc.h"

static char tmp[256];

/* 8 candidates, a budget of 6 in batches of 2, 2 folds: 12 folds. */
static const char *const TPE =
    "data: {synth: {proteins: 40, seed: 3}, window: 9, folds: 2}\n"
    "model: {depth: 1, filters: [4, 8], kernel: [3, 5], dense: [0, 8]}\n"
    "training: {epochs: 1, batch_size: 16}\n"
    "search: {random: 6, sampler: tpe, batch: 2}\n";

/* 4 trials x 2 folds, and the top 2 again with 2 more seeds: 8 + 8 folds. */
static const char *const REPLICATES =
    "data: {synth: {proteins: 40, seed: 3}, window: 9, folds: 2}\n"
    "model: {depth: 1, filters: [4, 8], kernel: [3, 5]}\n"
    "training: {epochs: 1, batch_size: 16}\n"
    "search: {replicates: {top: 2, seeds: 3}}\n";

/* The rank: the binary with args on the terminal slave (output as written:
 * no "\n" to "\r\n"), under Open MPI's variables when ompi. */
static void exec_rank(const char *slave, int ompi, char **argv)
{
    int fd = open(slave, O_RDWR | O_NOCTTY);
    struct termios t;
    if (fd < 0 || tcgetattr(fd, &t) != 0) _exit(126);
    t.c_oflag &= ~(tcflag_t)OPOST;
    tcsetattr(fd, TCSANOW, &t);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    if (ompi) setenv("OMPI_COMM_WORLD_SIZE", "1", 1), setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    execv(FS_TEST_BIN, argv);
    _exit(127);
}

/* Runs `foldsweep ARGV` as mpirun runs a rank: its output a terminal,
 * its parent's output the file launcher_log. What it wrote goes to out;
 * returns its exit code. */
static int run_on_terminal(char **argv, int ompi, const char *launcher_log, char *out, size_t cap)
{
    printf("$ %s%s", ompi ? "OMPI_COMM_WORLD_SIZE=1 " : "", FS_TEST_BIN);
    for (int i = 1; argv[i]; i++) putchar(' '), tp_print_word(argv[i]);
    printf("  (on a terminal; its parent's output: %s)\n", launcher_log);
    fflush(NULL);
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    CHECK(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
    char slave[128];
    CHECK(ptsname_r(master, slave, sizeof slave) == 0);
    pid_t launcher = fork();
    if (launcher == 0) { /* mpirun: its output a file, the rank its child */
        int log = open(launcher_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(log, STDOUT_FILENO);
        close(master);
        pid_t rank = fork();
        if (rank == 0) exec_rank(slave, ompi, argv);
        int st = 0;
        waitpid(rank, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128);
    }
    size_t n = 0;
    for (;;) { /* until the slave's last holder is gone (EIO) */
        struct pollfd pf = {master, POLLIN, 0};
        if (poll(&pf, 1, 60000) <= 0) break;
        ssize_t got = read(master, out + n, cap - 1 - n);
        if (got <= 0) break;
        n += (size_t)got;
        if (n == cap - 1) break;
    }
    out[n] = 0;
    close(master);
    const int rc = tp_wait_limited(launcher, 120);
    printf("  -> exit %d, %zu bytes\n", rc, n);
    return rc;
}

static int redrawn(const char *s) { return strchr(s, '\r') || strchr(s, '\033'); }

static void test_terminal(void)
{
    char sweep[320], dir[320], launcher_log[320];
    snprintf(sweep, sizeof sweep, "%s/rep.yaml", tmp);
    snprintf(launcher_log, sizeof launcher_log, "%s/mpirun.log", tmp);
    tp_write_text(sweep, REPLICATES);
    static char out[1 << 16];
    /* The user's terminal: redrawn. */
    snprintf(dir, sizeof dir, "%s/tty", tmp);
    char *run[] = {"foldsweep", "run", sweep, "--out", dir, "--threads", "1", NULL};
    CHECK(run_on_terminal(run, 0, launcher_log, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "\rtrials ") && strstr(out, "\033[K"), "not redrawn on a terminal:\n%s", out);
    /* A file: plain lines. */
    CHECK(tp_run("run '%s' --out '%s/file' --threads 1", sweep, tmp) == 0);
    CHECK_MSG(strstr(out_text, "trials 0/4") && !redrawn(out_text), "%s", out_text);
#ifndef FS_HAVE_MPI
    /* A rank's terminal, mpirun's output a file: plain lines, as in the file itself. */
    snprintf(dir, sizeof dir, "%s/rank", tmp);
    CHECK(run_on_terminal(run, 1, launcher_log, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "trials 0/4") && !redrawn(out), "redrawn under mpirun into a file:\n%s", out);
    /* --progress-line chooses: bar under mpirun, plain on the terminal. */
    snprintf(dir, sizeof dir, "%s/bar", tmp);
    char *bar[] = {"foldsweep", "run", sweep, "--out", dir, "--threads", "1", "--progress-line", "bar", NULL};
    CHECK(run_on_terminal(bar, 1, launcher_log, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "\rtrials "), "--progress-line bar:\n%s", out);
#endif
    snprintf(dir, sizeof dir, "%s/plain", tmp);
    char *plain[] = {"foldsweep", "run", sweep, "--out", dir, "--threads", "1", "--progress-line", "plain", NULL};
    CHECK(run_on_terminal(plain, 0, launcher_log, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "trials 0/4") && !redrawn(out), "--progress-line plain:\n%s", out);
    CHECK(tp_run("run '%s' --progress-line dots", sweep) == 2);
    CHECK_CONTAINS(err_text, "--progress-line must be auto, bar or plain, not dots");
    CHECK(tp_run("run '%s' --progress plain", sweep) == 2); /* not "extra argument plain" */
    CHECK_CONTAINS(err_text, "--progress takes no value (it adds a line per epoch); the progress line's form is "
                             "--progress-line plain, not --progress plain");
}

/* Every progress line of text (plain) shows folds N/total; the first says
 * what is not listed yet. */
static void check_totals(const char *text, int total, const char *first_ahead)
{
    char want[64];
    snprintf(want, sizeof want, "/%d", total);
    int lines = 0;
    for (const char *p = text; (p = strstr(p, "trials ")); p++) {
        const char *folds = strstr(p, "| folds "), *eol = strchr(p, '\n');
        if (!folds || (eol && folds > eol)) continue;
        const char *slash = strchr(folds, '/');
        CHECK_MSG(slash && !strncmp(slash, want, strlen(want)) && !isdigit((unsigned char)slash[strlen(want)]),
                  "a line's total is not %d: %.120s", total, p);
        if (!lines++) CHECK_MSG(strstr(p, first_ahead) && (!eol || strstr(p, first_ahead) < eol),
                                "the first line lacks \"%s\": %.120s", first_ahead, p);
    }
    CHECK_MSG(lines >= 2, "%d progress lines:\n%s", lines, text);
}

static void test_totals(void)
{
    char sweep[320];
    snprintf(sweep, sizeof sweep, "%s/tpe.yaml", tmp);
    tp_write_text(sweep, TPE);
    CHECK(tp_run("run '%s' --out '%s/tpe' --threads 1 --progress-line plain", sweep, tmp) == 0);
    check_totals(out_text, 12, "folds 0/12 (8 still to be proposed)");
    CHECK_CONTAINS(out_text, "trials 6/6 | folds 12/12, 0 in flight");
    snprintf(sweep, sizeof sweep, "%s/rep.yaml", tmp);
    tp_write_text(sweep, REPLICATES);
    CHECK(tp_run("run '%s' --out '%s/rep' --threads 1 --progress-line plain", sweep, tmp) == 0);
    check_totals(out_text, 16, "folds 0/16 (up to 8 replicates to come)");
    CHECK_CONTAINS(out_text, "| folds 16/16, 0 in flight");
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "progress_line");
    test_terminal();
    test_totals();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
