/*
 * Faults a cluster user meets sooner or later (issue #12), each through the
 * binary: two runs started at once on one new folder (one runs, the other
 * is told the folder is in use and by which process, the folder stays
 * sound; also with the first held at the racy moment); the data changed
 * under a run folder (refused, naming the data, unless --restart, which
 * keeps the earlier run in DIR/previous-N); a damaged journal line before
 * the end (run refuses, `repair` mends, the lost fold is retrained); a
 * durable write that fails leaves no temporary file behind; a run folder
 * under a path that is not UTF-8 resumes and reads.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include "test_proc.h"
#include "test_runs.h"
#include "util/util.h"

static char tmp[256];

/* Files in dir whose name contains ".tmp". */
static int count_tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) n++;
    if (d) closedir(d);
    return n;
}

static void test_simultaneous_claim(const char *sweep)
{
    /* Both start within microseconds; repeated, since a race is a race. */
    for (int round = 0; round < 4; round++) {
        char dir[320], journal[360], log1[320], log2[320];
        snprintf(dir, sizeof dir, "%s/race%d", tmp, round);
        snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
        snprintf(log1, sizeof log1, "%s/race%d-1.txt", tmp, round);
        snprintf(log2, sizeof log2, "%s/race%d-2.txt", tmp, round);
        char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", dir, "--threads", "1", "--quiet", NULL};
        pid_t a = tp_spawn(argv, log1), b = tp_spawn(argv, log2);
        int ra = tp_wait(a), rb = tp_wait(b);
        CHECK_MSG((ra == 0 && rb == 1) || (ra == 1 && rb == 0), "round %d: exits %d and %d", round, ra, rb);
        const char *loser = ra == 1 ? log1 : log2;
        CHECK_MSG(tp_count_in_file(loser, "another foldsweep run is writing this folder") == 1,
                  "round %d: the second run said:\n%s", round, tp_read_file(loser, NULL));
        CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);
        CHECK(count_tmp_files(dir) == 0);
        /* Sound: the same command resumes with nothing to do. */
        char *again[] = {"foldsweep", "run", (char *)sweep, "--out", dir, NULL};
        CHECK(tp_run_argv(again, log1) == 0);
        CHECK(tp_count_in_file(log1, "0 folds to train (24 already done)") == 1);
    }
}

/* Waits for path to exist (a test hook's signal); 0 once it does. */
static int wait_for_file(const char *path)
{
    for (int i = 0; i < 60000; i++) {
        if (access(path, F_OK) == 0) return 0;
        usleep(10000);
    }
    return -1;
}

/* The racy moment itself, held still (issue #43): the first run holds the
 * folder (FOLDSWEEP_TEST_CLAIM_PAUSE) and has not looked at it yet. A
 * second run started then is told the folder is in use and by whom; it was
 * told "holds 1 file (journal.jsonl) but no journal.jsonl" when it looked
 * before taking the lock, and with the folder looked at first it even ran
 * while the first one waited. The first one then runs the sweep. */
static void test_claim_held(const char *sweep)
{
    char dir[320], journal[360], go[320], reached[340], log1[320], log2[320], who[600];
    snprintf(dir, sizeof dir, "%s/held", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(go, sizeof go, "%s/held-go", tmp);
    snprintf(reached, sizeof reached, "%s.reached", go);
    snprintf(log1, sizeof log1, "%s/held-1.txt", tmp);
    snprintf(log2, sizeof log2, "%s/held-2.txt", tmp);
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", dir, "--threads", "1", "--quiet", NULL};
    setenv("FOLDSWEEP_TEST_CLAIM_PAUSE", go, 1);
    pid_t first = tp_spawn(argv, log1);
    unsetenv("FOLDSWEEP_TEST_CLAIM_PAUSE");
    CHECK_MSG(wait_for_file(reached) == 0, "the first run never reached the claim:\n%s", tp_read_file(log1, NULL));
    CHECK(tp_run_argv(argv, log2) == 1);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(who, sizeof who, "another foldsweep run is writing this folder (pid %ld on %s)", (long)first, host);
    CHECK_MSG(tp_count_in_file(log2, who) == 1, "expected \"%s\"; the second run said:\n%s", who,
              tp_read_file(log2, NULL));
    tp_write_text(go, "");
    CHECK(tp_wait(first) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);
    snprintf(who, sizeof who, "%s/journal.lock", dir);
    CHECK_MSG(access(who, F_OK) != 0, "the holder's note outlived the run");
}

/* An empty journal that no run ever held (a run that lost the lock race on
 * someone's folder made it) does not make a run folder: refused, the file
 * left as found. One whose run held it (its note, journal.lock: killed
 * before its first record) is a run folder: the run goes on there. */
static void test_empty_journal(const char *sweep)
{
    char dir[320], path[360], log[320];
    snprintf(dir, sizeof dir, "%s/empty", tmp);
    snprintf(log, sizeof log, "%s/empty.txt", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    tp_write_text(path, "mine\n");
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    tp_write_text(path, "");
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", dir, "--threads", "1", "--quiet", NULL};
    CHECK(tp_run_argv(argv, log) == 1);
    CHECK_MSG(tp_count_in_file(log, "holds 1 file (notes.txt) but an empty journal.jsonl that no run has written") == 1,
              "%s", tp_read_file(log, NULL));
    CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/journal.lock", dir);
    CHECK(access(path, F_OK) != 0);
    tp_write_text(path, "pid 1 on elsewhere\n");
    CHECK(tp_run_argv(argv, log) == 0);
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    CHECK(tp_count_in_file(path, "\"kind\":\"fold\"") == 24);
}

/* The hook the Slurm test's signalled scenarios stand on
 * (FOLDSWEEP_TEST_HOLD, tests/slurm/run): the 4th fold (the first of the
 * 2nd trial, whose record says it started) waits, in flight, for the
 * signal, so the signal finds the run mid-way on any machine: exit 3 with
 * the 3 folds before it and the held one recorded; the resumed run is not
 * held. */
static void test_hold(const char *sweep)
{
    char dir[320], journal[360], log[320];
    snprintf(dir, sizeof dir, "%s/hold", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(log, sizeof log, "%s/hold.txt", tmp);
    char *argv[] = {"foldsweep", "run", (char *)sweep, "--out", dir, "--threads", "1", "--quiet", NULL};
    setenv("FOLDSWEEP_TEST_HOLD", "4", 1);
    pid_t pid = tp_spawn(argv, log);
    for (int i = 0; i < 60000 && tp_count_in_file(journal, "\"kind\":\"trial\"") < 2; i++) usleep(10000);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 3);
    kill(pid, SIGUSR1);
    CHECK(tp_wait(pid) == 3);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 4);
    CHECK(tp_run_argv(argv, log) == 0);
    unsetenv("FOLDSWEEP_TEST_HOLD");
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24);
}

static void test_changed_data(void)
{
    char data[320], sweep[320], dir[320], journal[360], log[320], cmd[1200];
    snprintf(data, sizeof data, "%s/set.txt", tmp);
    snprintf(sweep, sizeof sweep, "%s/file.yaml", tmp);
    snprintf(dir, sizeof dir, "%s/changed", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(log, sizeof log, "%s/changed.txt", tmp);
    snprintf(cmd, sizeof cmd, "'%s' synth -o '%s' --proteins 60 --seed 4 >/dev/null", FS_TEST_BIN, data);
    CHECK(system(cmd) == 0);
    tp_write_text(sweep, "data:\n  inputs: set.txt\n  window: 7\n  folds: 3\nmodel:\n  filters: [4, 8]\n"
                         "training:\n  epochs: 1\n  batch_size: 32\n");
    char *run[] = {"foldsweep", "run", sweep, "--out", dir, "--quiet", NULL};
    CHECK(tp_run_argv(run, log) == 0);
    CHECK(tp_count_in_file(journal, "\"data_fingerprint\"") == 1);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 6);

    /* Other proteins under the same name: refused, naming the data file. */
    snprintf(cmd, sizeof cmd, "'%s' synth -o '%s' --proteins 60 --seed 5 >/dev/null", FS_TEST_BIN, data);
    CHECK(system(cmd) == 0);
    CHECK(tp_run_argv(run, log) == 1);
    char *out = tp_read_file(log, NULL);
    CHECK_MSG(out && strstr(out, "the training data changed") && strstr(out, "set.txt") && strstr(out, "--restart"),
              "%s", out ? out : "");
    free(out);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 6); /* nothing trained, nothing mixed */

    /* --restart: the old run is kept whole beside a fresh one. */
    char *restart[] = {"foldsweep", "run", sweep, "--out", dir, "--restart", NULL};
    CHECK(tp_run_argv(restart, log) == 0);
    CHECK(tp_count_in_file(log, "previous-1") == 1);
    char old[400];
    snprintf(old, sizeof old, "%s/previous-1/journal.jsonl", dir);
    CHECK(tp_count_in_file(old, "\"kind\":\"fold\"") == 6);
    snprintf(old, sizeof old, "%s/previous-1/leaderboard.csv", dir);
    CHECK(access(old, F_OK) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 6);
    CHECK(tp_count_in_file(journal, "\"kind\":\"run\"") == 1);
    /* The restarted folder resumes as any other. */
    CHECK(tp_run_argv(run, log) == 0);
}

/* A damaged line in the middle of a journal: run refuses, naming the line
 * and `foldsweep repair`; after repair the run trains the lost fold again
 * and the leaderboard equals the undamaged one. */
static void test_damaged_middle_line(const char *sweep)
{
    char dir[320], journal[360], log[320];
    snprintf(dir, sizeof dir, "%s/damaged", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(log, sizeof log, "%s/damaged.txt", tmp);
    char *run[] = {"foldsweep", "run", (char *)sweep, "--out", dir, "--quiet", NULL};
    CHECK(tp_run_argv(run, log) == 0);
    char *ref = tr_board(dir, tmp);
    /* Flip one digit inside the 6th line (a trial record, after the sweep
     * and run records and the first trial's) and inside the next fold
     * record after it; their checksums stay as they were. */
    size_t n = 0;
    char *text = tp_read_file(journal, &n);
    char *line = text;
    for (int k = 0; k < 5 && line; k++) line = strchr(line, '\n') + 1;
    char *digit = line ? strstr(line, "\"epochs\":") : NULL;
    CHECK(digit != NULL);
    if (digit) digit[9] = digit[9] == '1' ? '2' : '1';
    char *fold = line ? strstr(strchr(line, '\n'), "\"kind\":\"fold\"") : NULL;
    char *fold_digit = fold ? strstr(fold, "\"epochs\":") : NULL;
    CHECK(fold_digit != NULL);
    if (fold_digit) fold_digit[9] = fold_digit[9] == '1' ? '2' : '1';
    tp_write_file(journal, text, n, "wb");
    free(text);
    CHECK(tp_run_argv(run, log) == 1);
    CHECK_MSG(tp_count_in_file(log, "journal.jsonl:6: ") == 1 && tp_count_in_file(log, "foldsweep repair") == 1,
              "%s", tp_read_file(log, NULL));
    char *repair[] = {"foldsweep", "repair", dir, NULL};
    CHECK(tp_run_argv(repair, log) == 0);
    CHECK(tp_count_in_file(log, "2 damaged lines dropped") == 1);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 23);
    CHECK(tp_run_argv(run, log) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 24); /* the dropped fold, trained again */
    char *got = tr_board(dir, tmp);
    CHECK_MSG(!strcmp(ref, got), "leaderboard after repair differs:\n%s\nvs\n%s", got, ref);
    free(got);
    free(ref);
    char kept[400];
    snprintf(kept, sizeof kept, "%s/journal.damaged-1.jsonl", dir);
    CHECK(access(kept, F_OK) == 0);
}

/* Data under a folder whose name is not UTF-8 (a Latin-1 home folder):
 * the canonical sweep keeps the path as !hex, so the folder resumes, and
 * leaderboard, status and refit read it. */
static void test_non_utf8_path(void)
{
    char dir[320], cwd[4096], cmd[1200], log[400];
    snprintf(dir, sizeof dir, "%s/caf\xe9-\xff", tmp);
    snprintf(log, sizeof log, "%s/utf8.txt", tmp);
    CHECK(mkdir(dir, 0777) == 0);
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    snprintf(cmd, sizeof cmd, "'%s' synth -o set.txt --proteins 40 >/dev/null", FS_TEST_BIN);
    CHECK(system(cmd) == 0);
    tp_write_text("s.yaml", "data:\n  inputs: set.txt\n  window: 7\n  folds: 2\nmodel:\n  filters: 4\n"
                            "training:\n  epochs: 1\n");
    char *run[] = {"foldsweep", "run", "s.yaml", "--out", "r", "--quiet", NULL};
    CHECK(tp_run_argv(run, log) == 0);
    CHECK(tp_count_in_file("r/sweep.yaml", "!hex") == 1);
    char *again[] = {"foldsweep", "run", "s.yaml", "--out", "r", NULL};
    CHECK_MSG(tp_run_argv(again, log) == 0, "%s", tp_read_file(log, NULL));
    CHECK(tp_count_in_file(log, "0 folds to train (2 already done)") == 1);
    char *board[] = {"foldsweep", "leaderboard", "r", NULL};
    CHECK(tp_run_argv(board, log) == 0);
    char *status[] = {"foldsweep", "status", "r", NULL};
    CHECK(tp_run_argv(status, log) == 0);
    char *refit[] = {"foldsweep", "refit", "r", "--rank", "1", NULL};
    CHECK_MSG(tp_run_argv(refit, log) == 0, "%s", tp_read_file(log, NULL));
    CHECK(chdir(cwd) == 0);
}

static void test_atomic_write_failure(void)
{
    /* The target is a folder: the rename fails after the temporary file was
     * written and synced; it must not stay behind. */
    char dir[320], target[360];
    snprintf(dir, sizeof dir, "%s/atomic", tmp);
    snprintf(target, sizeof target, "%s/leaderboard.json", dir);
    mkdir(dir, 0777);
    mkdir(target, 0777);
    FsErr err = {0};
    CHECK(fs_write_file_atomic(target, "{}", 2, &err) == -1);
    CHECK_CONTAINS(err.msg, "leaderboard.json");
    CHECK(count_tmp_files(dir) == 0);
    /* And the plain case works, leaving only the file. */
    snprintf(target, sizeof target, "%s/ok.txt", dir);
    memset(&err, 0, sizeof err);
    CHECK(fs_write_file_atomic(target, "hello", 5, &err) == 0);
    CHECK(tp_count_in_file(target, "hello") == 1);
    CHECK(count_tmp_files(dir) == 0);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "faults");
    char sweep[300];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, TR_SWEEP);
    test_atomic_write_failure();
    test_changed_data();
    test_damaged_middle_line(sweep);
    test_non_utf8_path();
    test_simultaneous_claim(sweep);
    test_claim_held(sweep);
    test_empty_journal(sweep);
    test_hold(sweep);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
