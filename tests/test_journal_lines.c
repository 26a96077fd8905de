/*
 * test_journal_lines: journal.jsonl is JSON Lines (issue #26 item 9). Each
 * line is one JSON object whose last member "crc" checks the bytes before
 * it (docs/reliability.md, "The journal's lines"; tests/test_lines.h writes
 * the form apart from the code). Checked here:
 *  - a real run's journal (every record kind a run with a test section
 *    writes): each line parses with the project's strict JSON reader, ends
 *    in its crc, and is read by python3's json module (and jq, and pandas,
 *    where installed);
 *  - a journal of an earlier build ("JSON #crc" lines) resumes: the new
 *    lines come in the current form after the old ones, left byte for byte,
 *    and the leaderboard is the one of a run never interrupted; leaderboard,
 *    report and repair read the mixed file;
 *  - every one-bit or one-byte change of a line, in either form, is caught
 *    (a damaged line before the end: named; the last line: dropped);
 *  - a line whose crc is missing or malformed is an error naming the line
 *    and the form expected;
 *  - the run record's ranks and backend (issue #26 item 11) read back.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "journal/journal.h"
#include "json/json.h"
#include "test_lines.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 40, seed: 1}\n"
    "  window: 7\n"
    "  folds: 2\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: [4, 8]\n"
    "  kernel: 3\n"
    "  dense: 8\n"
    "training:\n"
    "  epochs: 2\n"
    "  batch_size: 16\n"
    "  seed: 2\n";

/* DIR/NAME in one of a few static buffers (so two can be used at once);
 * dir is copied first, as it may be one of them. */
static char *path_in(const char *dir, const char *name)
{
    static char p[4][700];
    static int k;
    char d[600];
    snprintf(d, sizeof d, "%s", dir);
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", d, name);
    return p[k];
}

/* The lines of text (no newlines), in place: count, and their starts. */
static int split_lines(char *text, char **lines, int cap)
{
    int n = 0;
    for (char *s = text; *s && n < cap;) {
        char *nl = strchr(s, '\n');
        lines[n++] = s;
        if (!nl) break;
        *nl = '\0';
        s = nl + 1;
    }
    return n;
}

/* Whether a shell command exists here. */
static int have(const char *cmd)
{
    char sh[200];
    snprintf(sh, sizeof sh, "command -v %s >/dev/null 2>&1", cmd);
    return system(sh) == 0;
}

/* (a) A real run's journal, line by line. */
static void test_real_run(void)
{
    char dir[400], sweep[400], test_data[400];
    snprintf(dir, sizeof dir, "%s/real", tmp);
    snprintf(sweep, sizeof sweep, "%s/real.yaml", tmp);
    snprintf(test_data, sizeof test_data, "%s/test.records", tmp);
    CHECK(tp_run("synth -o '%s' -n 6 --seed 9", test_data) == 0);
    char text[2048];
    snprintf(text, sizeof text,
             "%srun:\n  keep_models: 1\ntest:\n  inputs: ['%s']\n  top: 2\n  refit: true\n", SWEEP, test_data);
    tp_write_text(sweep, text);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, dir) == 0);
    const char *journal = path_in(dir, "journal.jsonl");
    size_t n;
    char *file = tp_read_file(journal, &n);
    CHECK(file && n > 0 && file[n - 1] == '\n');
    if (!file) return;
    static char *lines[4096];
    int nl = split_lines(file, lines, 4096);
    const char *kinds[] = {"run", "sweep", "trial", "fold", "refit", "evaluation", "prune"};
    int seen[7] = {0}, bad = 0;
    for (int i = 0; i < nl; i++) {
        size_t len = strlen(lines[i]);
        FsJsonDoc doc;
        char why[160];
        if (json_parse(&doc, lines[i], len, why, sizeof why) != 0) {
            CHECK_MSG(0, "line %d is not JSON for the project's reader: %s", i + 1, why);
            bad++;
            continue;
        }
        const FsJson *last = doc.root->child;
        while (last && last->next) last = last->next;
        CHECK_MSG(doc.root->type == FS_JSON_OBJECT && last && !strcmp(last->key, "crc") && last->type == FS_JSON_STRING,
                  "line %d: the last member is not \"crc\"", i + 1);
        /* The crc is the CRC-32 of the bytes before its member's comma. */
        char want[16];
        snprintf(want, sizeof want, "%08x", (unsigned)fs_crc32(lines[i], len - 18, 0));
        CHECK_MSG(tl_form(lines[i], len) == 1 && last && !strcmp(last->str, want), "line %d: crc %s, want %s", i + 1,
                  last ? last->str : "-", want);
        CHECK_MSG(!strstr(lines[i], "} #"), "line %d has an old checksum suffix", i + 1);
        const FsJson *kind = json_get(doc.root, "kind");
        for (int k = 0; k < 7; k++) seen[k] += kind && kind->type == FS_JSON_STRING && !strcmp(kind->str, kinds[k]);
        json_free(&doc);
    }
    CHECK(bad == 0);
    for (int k = 0; k < 7; k++) CHECK_MSG(seen[k] > 0, "the run wrote no %s record", kinds[k]);
    printf("%d journal lines, each one JSON object ending in its crc\n", nl);
    free(file);

    /* What a user's tools do with it. */
    char cmd[1400];
    if (have("python3")) {
        snprintf(cmd, sizeof cmd, "python3 '%s/tests/journal_lines.py' '%s'", FS_TEST_SRC_DIR, journal);
        printf("$ %s\n", cmd);
        fflush(stdout);
        CHECK_MSG(system(cmd) == 0, "python3 cannot read %s as JSON Lines", journal);
    } else {
        printf("python3 is not installed: its json module not tried\n");
    }
    if (have("jq")) {
        snprintf(cmd, sizeof cmd, "jq -e -s 'length == %d and all(.[]; (keys_unsorted | last) == \"crc\")' '%s' >/dev/null",
                 nl, journal);
        printf("$ %s\n", cmd);
        fflush(stdout);
        CHECK_MSG(system(cmd) == 0, "jq cannot read %s line by line", journal);
    } else {
        printf("jq is not installed: not tried\n");
    }

    /* (d) through the binary, as a user meets it: line 2's crc cut off. */
    file = tp_read_file(journal, &n);
    char *l2 = file ? strchr(file, '\n') + 1 : NULL, *end = l2 ? strchr(l2, '\n') : NULL;
    CHECK(end && tl_form(l2, (size_t)(end - l2)) == 1);
    if (end) {
        memmove(end - 18 + 1, end, strlen(end) + 1); /* ,"crc":"XXXXXXXX"} -> } */
        end[-18] = '}';
        tp_write_text(journal, file);
        CHECK(tp_run("status '%s'", dir) == 0);
        CHECK_CONTAINS(err_text, "journal.jsonl:2: expected the record's last member \"crc\"");
        CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, dir) == 1);
        CHECK_CONTAINS(err_text, "journal.jsonl:2: expected the record's last member \"crc\"");
        CHECK_CONTAINS(err_text, "no \"crc\" member");
    }
    free(file);
}

/* The lines of DIR's journal that are (1) or are not (0) in the current form. */
static int count_form(const char *dir, int form)
{
    size_t n;
    char *text = tp_read_file(path_in(dir, "journal.jsonl"), &n);
    if (!text) return -1;
    static char *lines[4096];
    int nl = split_lines(text, lines, 4096), k = 0;
    for (int i = 0; i < nl; i++) k += (tl_form(lines[i], strlen(lines[i])) == 1) == form;
    free(text);
    return k;
}

/* (b) An earlier build's journal resumes; mixed journals read. */
static void test_old_journal(void)
{
    char ref[400], old[400], sweep[400], cmd[1400];
    snprintf(ref, sizeof ref, "%s/ref", tmp);
    snprintf(old, sizeof old, "%s/old", tmp);
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    tp_write_text(sweep, SWEEP);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, ref) == 0);
    char *board_ref = tr_board(ref, tmp);

    /* The same run as an earlier build left it, killed before its last two
     * folds: every line "JSON #crc", those two fold records gone. */
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", ref, old);
    CHECK(system(cmd) == 0);
    char *text = tp_read_file(path_in(old, "journal.jsonl"), NULL);
    char *aged = tl_convert(text ? text : "", 1);
    free(text);
    for (int drop = 0; drop < 2; drop++) {
        char *f = NULL;
        for (char *p = strstr(aged, "\"kind\":\"fold\""); p; p = strstr(p + 1, "\"kind\":\"fold\"")) f = p;
        CHECK(f != NULL);
        if (!f) break;
        while (f > aged && f[-1] != '\n') f--;
        char *end = strchr(f, '\n');
        memmove(f, end + 1, strlen(end + 1) + 1);
    }
    tp_write_text(path_in(old, "journal.jsonl"), aged);
    CHECK(count_form(old, 1) == 0);

    /* Read as it is: 2 folds to go. */
    CHECK(tp_run("status '%s'", old) == 0);
    CHECK_CONTAINS(out_text, "folds        2 of 4");
    CHECK(!strstr(err_text, "damaged"));

    /* Resumed by this build: the old lines stay as they are, the new ones
     * come in the current form, and the leaderboard is the reference's. */
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, old) == 0);
    char *mixed = tp_read_file(path_in(old, "journal.jsonl"), NULL);
    CHECK(mixed && !strncmp(mixed, aged, strlen(aged)));
    CHECK(mixed && tl_form(mixed, strcspn(mixed, "\n")) == 2);
    int current = count_form(old, 1);
    CHECK_MSG(current >= 3, "%d lines in the current form after the resume", current); /* run, 2 folds */
    if (mixed) {
        static char *lines[4096];
        int nl = split_lines(mixed + strlen(aged), lines, 4096);
        for (int i = 0; i < nl; i++) CHECK_MSG(tl_form(lines[i], strlen(lines[i])) == 1, "appended line %d", i + 1);
        CHECK(tp_count(aged, "\n") + nl == count_form(old, 1) + count_form(old, 0));
    }
    free(mixed);
    char *board = tr_board(old, tmp);
    CHECK_MSG(!strcmp(board, board_ref), "resumed:\n%s\nvs never interrupted:\n%s", board, board_ref);
    free(board);

    /* Readers of the mixed file: status, report, and repair, which drops a
     * damaged line of each form and keeps the others byte for byte. */
    CHECK(tp_run("status '%s'", old) == 0);
    CHECK_CONTAINS(out_text, "folds        4 of 4");
    CHECK(tp_run("report '%s' -o '%s/old.html'", old, tmp) == 0);
    char *html = tp_read_file(path_in(tmp, "old.html"), NULL);
    CHECK(html && strstr(html, "<dt>backend</dt><dd>cpu")); /* the resumed session's run record */
    free(html);
    char *before = tp_read_file(path_in(old, "journal.jsonl"), NULL);
    char *dam = strdup(before ? before : "");
    char *l3 = strchr(dam, '\n') + 1, *l4 = strchr(l3, '\n') + 1;
    l3 = strchr(l4, '\n') + 1; /* line 3, old form: a byte of its JSON changed */
    l3[5] ^= 1;
    char *last_fold = NULL;
    for (char *p = strstr(dam, "\"kind\":\"fold\""); p; p = strstr(p + 1, "\"kind\":\"fold\"")) last_fold = p;
    CHECK(last_fold != NULL);
    if (last_fold) last_fold[1] ^= 1; /* a current-form fold line */
    tp_write_text(path_in(old, "journal.jsonl"), dam);
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, old) == 1);
    CHECK_CONTAINS(err_text, "journal.jsonl:4: checksum mismatch");
    CHECK(tp_run("repair '%s'", old) == 0);
    CHECK_CONTAINS(out_text, "2 damaged lines dropped");
    char *repaired = tp_read_file(path_in(old, "journal.jsonl"), NULL);
    CHECK(repaired && before && strlen(repaired) < strlen(before));
    /* Every kept line is one of the original's, in its own form. */
    if (repaired && before) {
        static char *lines[4096];
        int nl = split_lines(repaired, lines, 4096), missing = 0;
        for (int i = 0; i < nl; i++) missing += !strstr(before, lines[i]);
        CHECK(missing == 0 && nl == tp_count(before, "\n") - 2);
    }
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, old) == 0);
    board = tr_board(old, tmp);
    CHECK_MSG(!strcmp(board, board_ref), "after repair:\n%s\nvs\n%s", board, board_ref);
    free(board), free(repaired), free(before), free(dam), free(aged), free(board_ref);
}

/* A journal of three lines in dir: trial, fold, failure, in the current
 * form (to_old 0) or an earlier build's; line 2 replaced by `mid` when
 * not NULL. Written through test_lines.h, not the journal's writer. */
static void write_three(const char *dir, int to_old, const char *mid)
{
    mkdir(dir, 0777);
    const char *recs[3] = {
        "{\"v\":1,\"kind\":\"trial\",\"time\":1,\"trial\":\"t\",\"index\":0,\"params\":10,\"config\":{}}",
        "{\"v\":1,\"kind\":\"fold\",\"time\":2,\"trial\":\"t\",\"fold\":0,\"status\":\"ok\",\"epochs\":1,"
        "\"best_epoch\":1,\"best_val_loss\":0.5,\"confusion\":[[1,0,0],[0,1,0],[0,0,1]],\"val_examples\":3,"
        "\"curves\":{\"train_loss\":[0.7],\"val_loss\":[0.5],\"val_q3\":[1]}}",
        "{\"v\":1,\"kind\":\"failure\",\"time\":3,\"trial\":\"u\",\"message\":\"no room\"}"};
    char text[4096] = "";
    for (int i = 0; i < 3; i++) {
        char *l = i == 1 && mid ? strdup(mid)
                  : to_old      ? tl_old_line(recs[i], strlen(recs[i]))
                                : tl_line(recs[i], strlen(recs[i]));
        strcat(text, l);
        free(l);
    }
    tp_write_text(path_in(dir, "journal.jsonl"), text);
}

/* Reads dir's journal: 0 sound (3 records), 1 line `line` damaged (named
 * when it is before the end, dropped when it is the last), -1 otherwise. */
static int verdict(const char *dir, long line)
{
    FsJournal j;
    FsErr err = {0};
    if (journal_read(&j, dir, &err) != 0) return -1;
    int rc = -1;
    if (j.bad_lines == 0 && !j.dropped_tail && j.n_trials == 1 && j.n_folds == 1 && j.n_failures == 1) rc = 0;
    if (j.bad_lines == 1 && j.first_bad_line == line && line < 3) rc = 1;
    if (j.bad_lines == 0 && j.dropped_tail && line == 3) rc = 1;
    journal_close(&j);
    return rc;
}

/* (c) Every change of one bit or one byte in a line, of either form. */
static void test_every_change(void)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/flip", tmp);
    for (int to_old = 0; to_old < 2; to_old++) {
        write_three(dir, to_old, NULL);
        CHECK_MSG(verdict(dir, 0) == 0, "the %s form does not read", to_old ? "old" : "current");
        size_t n;
        char *good = tp_read_file(path_in(dir, "journal.jsonl"), &n);
        long missed = 0, tried = 0;
        for (size_t at = 0; good && at < n; at++) {
            if (good[at] == '\n') continue;
            long line = 1 + tp_count(good, "\n") - tp_count(good + at, "\n");
            const unsigned char changes[] = {0x01, 0x02, 0x20, 0x80};
            for (int c = 0; c < 5; c++) {
                char *bad = malloc(n + 1);
                memcpy(bad, good, n + 1);
                bad[at] = c < 4 ? (char)(bad[at] ^ changes[c]) : (bad[at] == '0' ? '1' : '0');
                tp_write_file(path_in(dir, "journal.jsonl"), bad, n, "wb");
                int v = verdict(dir, line);
                tried++;
                if (v != 1) {
                    if (missed++ < 5) fprintf(stderr, "not caught: byte %zu of line %ld, '%c' -> '%c'\n", at, line, good[at], bad[at]);
                }
                free(bad);
            }
        }
        CHECK_MSG(missed == 0, "%s form: %ld of %ld changes were not caught", to_old ? "old" : "current", missed, tried);
        printf("%s form: %ld one-byte changes, each caught\n", to_old ? "old" : "current", tried);
        free(good);
    }
}

/* (d) The crc missing or malformed: an error naming the line and the form. */
static void test_bad_crc(void)
{
    const char *rec = "{\"v\":1,\"kind\":\"fold\",\"time\":2,\"trial\":\"t\",\"fold\":0,\"status\":\"ok\",\"epochs\":1,"
                      "\"best_epoch\":1,\"best_val_loss\":0.5,\"confusion\":[[1,0,0],[0,1,0],[0,0,1]]";
    char good_crc[9];
    snprintf(good_crc, sizeof good_crc, "%08x", (unsigned)fs_crc32(rec, strlen(rec), 0));
    struct {
        const char *tail, *expect;
    } cases[] = {
        {"}", "the line has no \"crc\" member"},
        {",\"crc\":\"DEADBEEF\"}", "expected 8 lowercase hex digits in the \"crc\" member, not \"DEADBEEF\""},
        {",\"crc\":\"1234567g\"}", "not \"1234567g\""},
        {",\"crc\":\"1234\"}", "the \"crc\" member is not in that form, or not last"},
        {",\"crc\":305419896}", "not in that form, or not last"},
        {",\"crc\": \"%s\"}", "not in that form, or not last"},
        {",\"crc\":\"%s\",\"x\":1}", "not in that form, or not last"},
        {",\"crc\":\"%s\"} ", "not in that form, or not last"},
    };
    char dir[400];
    snprintf(dir, sizeof dir, "%s/crc", tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tail[64], line[1024];
        snprintf(tail, sizeof tail, cases[i].tail, good_crc);
        snprintf(line, sizeof line, "%s%s\n", rec, tail);
        write_three(dir, 0, line);
        FsJournal j;
        FsErr err = {0};
        CHECK(journal_open(&j, dir, &err) == -1);
        CHECK_CONTAINS(err.msg, "journal.jsonl:2: expected ");
        CHECK_CONTAINS(err.msg, cases[i].expect);
        CHECK_CONTAINS(err.msg, "foldsweep repair");
        if (i == 0) CHECK_CONTAINS(err.msg, ",\"crc\":\"XXXXXXXX\"} with no spaces");
        memset(&err, 0, sizeof err);
        CHECK(journal_read(&j, dir, &err) == 0);
        CHECK(j.bad_lines == 1 && j.first_bad_line == 2 && j.n_failures == 1);
        CHECK_CONTAINS(j.first_bad_why, cases[i].expect);
        journal_close(&j);
    }
    /* As the last line, the same is a torn record: dropped, never fatal. */
    write_three(dir, 0, NULL);
    char line[1024];
    snprintf(line, sizeof line, "%s}\n", rec);
    tp_write_file(path_in(dir, "journal.jsonl"), line, strlen(line), "ab");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(j.dropped_tail == 1 && j.n_folds == 1);
    journal_close(&j);
}

/* The writer's own lines: the current form, the run record's session
 * fields (issue #26 item 11) read back, and absent from a plain one. */
static void test_run_record(void)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/runrec", tmp);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_run(&j, 3, 2, "q3", 0, &err) == 0);
    FsRunRecord r = {.n_trials = 4, .folds = 5, .metric = "loss", .data_fingerprint = 0xabcull, .ranks = 3};
    snprintf(r.backend, sizeof r.backend, "cuda");
    snprintf(r.device, sizeof r.device, "GPU 0: \"NVIDIA H200\" <sm_90>");
    CHECK(journal_append_run_record(&j, &r, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    journal_close(&j);
    CHECK(journal_read(&j, dir, &err) == 0);
    CHECK(j.n_runs == 2);
    if (j.n_runs == 2) {
        const FsRunRecord *a = &j.runs[0], *b = &j.runs[1];
        CHECK(a->ranks == 0 && !a->backend[0] && !a->device[0] && a->n_trials == 3);
        CHECK(b->ranks == 3 && !strcmp(b->backend, "cuda") && !strcmp(b->device, r.device));
        CHECK(b->n_trials == 4 && b->folds == 5 && !strcmp(b->metric, "loss") && b->data_fingerprint == 0xabc);
        CHECK(b->pid == (long)getpid() && b->time > 1.6e9 && b->host[0]);
    }
    journal_close(&j);
    CHECK(count_form(dir, 1) == 2 && count_form(dir, 0) == 0);
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "jlines");
    (void)TR_SWEEP; /* test_runs.h's: this test's sweep is smaller */
    test_run_record();
    test_bad_crc();
    test_every_change();
    test_real_run();
    test_old_journal();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
