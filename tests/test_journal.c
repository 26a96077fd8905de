/*
 * test_journal.c: the run journal. Bitwise round trip of every record
 * field, appends visible to a second reader, torn and garbage tails dropped
 * (and later appends readable), a bad line in the middle reported with its
 * line number and left alone, duplicates ignored, the lock, and a fuzz of
 * the JSON reader and of the line reader (never a crash).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal.h"
#include "json/json.h"
#include "journal/journal_internal.h" /* journal_add_* for the index test */
#include "test_lines.h"                /* lines written by hand */
#include "test_proc.h"

static char tmp_root[256];

static const char *tmp_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp_root, name);
    return path;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static const char *jpath(const char *dir)
{
    static char p[600];
    snprintf(p, sizeof p, "%s/journal.jsonl", dir);
    return p;
}

static uint32_t fbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

/* A result with awkward values in every field. */
static void make_result(FsFitResult *r, int epochs, FsFitStatus status, unsigned seed)
{
    train_result_alloc(r, epochs);
    r->status = status;
    r->epochs = epochs;
    r->best_epoch = epochs > 0 ? 1 + (int)(seed % (unsigned)epochs) : 0;
    r->halted_by = (int)(seed & 1);
    r->diverged_epoch = status == FS_FIT_DIVERGED ? epochs + 1 : 0;
    r->diverged_step = status == FS_FIT_DIVERGED ? 41 + (long)seed : 0;
    r->best_val_loss = 0.1f + 1.0f / (3.0f + (float)seed);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            r->best_confusion[a][b] = (uint64_t)(a * 3 + b) * 1000003u + seed;
    r->best_confusion[2][2] = UINT64_MAX - seed;
    r->train_examples = 123456789012345ull + seed;
    r->val_examples = 987654321ull;
    r->seconds = 12.345678901234567 + seed;
    r->val_seconds = 1.0 / 3.0;
    const float odd[] = {1e-45f, -0.0f, 3.4028235e38f, 1.17549435e-38f, 0.1f, 2.5e-10f, 7.0f};
    for (int e = 0; e < epochs; e++) {
        r->curves.train_loss[e] = 1.0f / (float)(e + 1 + (int)seed);
        r->curves.val_loss[e] = odd[(e + seed) % 7];
        r->curves.val_q3[e] = 0.5f + 0.01f * (float)e;
        r->curves.seconds[e] = 0.25f * (float)(e + 1) + 1e-7f;
    }
    snprintf(r->message, sizeof r->message, "%s",
             status == FS_FIT_FAILED ? "bad \"layer\" 2:\n\twidth \\ 4 \x01 caf\xc3\xa9" : "");
}

static void check_same_result(const FsFitResult *a, const FsFitResult *b)
{
    CHECK(a->status == b->status);
    CHECK(a->epochs == b->epochs);
    CHECK(a->best_epoch == b->best_epoch);
    CHECK(a->halted_by == b->halted_by);
    CHECK(a->diverged_epoch == b->diverged_epoch);
    CHECK(a->diverged_step == b->diverged_step);
    CHECK(fbits(a->best_val_loss) == fbits(b->best_val_loss));
    CHECK(memcmp(a->best_confusion, b->best_confusion, sizeof a->best_confusion) == 0);
    CHECK(a->train_examples == b->train_examples);
    CHECK(a->val_examples == b->val_examples);
    CHECK(dbits(a->seconds) == dbits(b->seconds));
    CHECK(dbits(a->val_seconds) == dbits(b->val_seconds));
    int bad = 0;
    for (int e = 0; e < a->epochs && e < b->epochs; e++) {
        bad += fbits(a->curves.train_loss[e]) != fbits(b->curves.train_loss[e]);
        bad += fbits(a->curves.val_loss[e]) != fbits(b->curves.val_loss[e]);
        bad += fbits(a->curves.val_q3[e]) != fbits(b->curves.val_q3[e]);
        bad += fbits(a->curves.seconds[e]) != fbits(b->curves.seconds[e]);
    }
    CHECK_MSG(bad == 0, "%d curve values differ", bad);
    CHECK(strcmp(a->message, b->message) == 0);
}

static const char *CONFIG =
    "{\"layers\":[{\"act\":\"relu\",\"filters\":64,\"kind\":\"conv\",\"width\":7}],"
    "\"lr\":0.001,\"name\":\"a \\\"q\\\" \\u00e9\\n\"}";

static void test_round_trip(void)
{
    const char *dir = tmp_dir("rt/nested");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(j.n_folds == 0 && j.dropped_tail == 0);
    CHECK(journal_append_run(&j, 20, 3, "q3", 0x0123456789abcdefull, &err) == 0);
    CHECK(journal_append_trial(&j, "00112233aabbccdd", 7, 123456, CONFIG, &err) == 0);
    FsFitResult r[3];
    make_result(&r[0], 12, FS_FIT_OK, 1);
    make_result(&r[1], 3, FS_FIT_DIVERGED, 2);
    make_result(&r[2], 0, FS_FIT_FAILED, 3);
    r[1].best_val_loss = INFINITY;
    r[0].gpu_path = FS_GPU_PATH_LIBRARY; /* the GPU tier that trained it; r[2]: the CPU (absent) */
    r[1].gpu_path = FS_GPU_PATH_BLOCK;
    r[0].gpu_group = 12; /* the library tier's group width */
    for (int f = 0; f < 3; f++)
        CHECK(journal_append_fold(&j, "00112233aabbccdd", f, &r[f], NULL, &err) == 0);
    CHECK(journal_append_fold(&j, "ffff", FS_FOLD_PREDEFINED, &r[0], NULL, &err) == 0);
    CHECK(journal_append_failure(&j, "ffff", "out of \"memory\"\nline 2", &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(j.write_seconds > 0);
    long lines = j.lines;
    CHECK(lines == 7);
    journal_close(&j);

    FsJournal k;
    CHECK(journal_open(&k, dir, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(k.dropped_tail == 0 && k.duplicates == 0 && k.lines == 7);
    CHECK(k.n_folds == 4 && k.n_trials == 1 && k.n_failures == 1 && k.n_runs == 1);
    const FsRunRecord *run = journal_last_run(&k);
    CHECK(run && run->n_trials == 20 && run->folds == 3 && !strcmp(run->metric, "q3"));
    CHECK(run && run->pid == (long)getpid() && run->time > 1.6e9);
    CHECK(run && run->data_fingerprint == 0x0123456789abcdefull);
    const FsTrialRecord *t = journal_find_trial(&k, "00112233aabbccdd");
    CHECK(t && t->index == 7 && t->n_params == 123456);
    CHECK(t && !strcmp(t->config, CONFIG));
    for (int f = 0; f < 3; f++) {
        const FsFoldRecord *fr = journal_find_fold(&k, "00112233aabbccdd", f);
        CHECK(fr != NULL);
        if (fr) check_same_result(&fr->r, &r[f]);
        CHECK(fr && fr->r.gpu_path == r[f].gpu_path && fr->r.gpu_group == r[f].gpu_group);
    }
    const FsFoldRecord *pre = journal_find_fold(&k, "ffff", FS_FOLD_PREDEFINED);
    CHECK(pre != NULL);
    if (pre) check_same_result(&pre->r, &r[0]);
    CHECK(journal_find_fold(&k, "ffff", 0) == NULL);
    CHECK(journal_find_fold(&k, "00112233aabbccdd", 3) == NULL);
    const FsFailureRecord *fl = journal_find_failure(&k, "ffff");
    CHECK(fl && !strcmp(fl->message, "out of \"memory\"\nline 2"));
    CHECK(journal_find_failure(&k, "00112233aabbccdd") == NULL);

    /* Appending what is already there writes nothing. */
    long size = file_size(jpath(dir));
    CHECK(journal_append_fold(&k, "00112233aabbccdd", 1, &r[0], NULL, &err) == 0);
    CHECK(journal_append_trial(&k, "00112233aabbccdd", 9, 1, "{}", &err) == 0);
    CHECK(journal_append_failure(&k, "ffff", "again", &err) == 0);
    CHECK(file_size(jpath(dir)) == size);
    CHECK(journal_find_trial(&k, "00112233aabbccdd")->index == 7);

    /* Bad arguments are errors, not records. */
    FsErr e2 = {0};
    CHECK(journal_append_trial(&k, "abc", 1, 1, "{\"a\":", &e2) == -1);
    CHECK_CONTAINS(e2.msg, "not JSON");
    FsErr e3 = {0};
    CHECK(journal_append_fold(&k, "0123456789abcdef0", 0, &r[0], NULL, &e3) == -1);
    FsErr e4 = {0};
    r[0].status = FS_FIT_CANCELLED; /* not a result: retrained on resume */
    CHECK(journal_append_fold(&k, "abc", 0, &r[0], NULL, &e4) == -1);
    CHECK_CONTAINS(e4.msg, "cancelled");
    r[0].status = FS_FIT_OK;
    CHECK(file_size(jpath(dir)) == size);
    /* A config with whitespace is stored compact (no newline can split a line). */
    CHECK(journal_append_trial(&k, "abc", 1, 1, "{ \"a\" :\n [1, 2] }", &err) == 0);
    CHECK(!strcmp(journal_find_trial(&k, "abc")->config, "{\"a\":[1,2]}"));
    journal_close(&k);
    for (int f = 0; f < 3; f++) train_result_free(&r[f]);

    /* The NaN of a diverged curve comes back as NaN. */
    FsFitResult n;
    make_result(&n, 2, FS_FIT_DIVERGED, 4);
    n.curves.train_loss[1] = NAN;
    n.best_val_loss = NAN;
    const char *d2 = tmp_dir("nan");
    CHECK(journal_open(&j, d2, &err) == 0);
    CHECK(journal_append_fold(&j, "aa", 0, &n, NULL, &err) == 0);
    journal_close(&j);
    CHECK(journal_read(&j, d2, &err) == 0);
    CHECK(j.n_folds == 1 && isnan(j.folds[0].r.curves.train_loss[1]) &&
          isnan(j.folds[0].r.best_val_loss));
    journal_close(&j);
    train_result_free(&n);
}

/* Writes a journal of n fold records for trial "t" in dir; returns the size. */
static long write_folds(const char *dir, int n)
{
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_trial(&j, "t", 0, 10, "{}", &err) == 0);
    for (int f = 0; f < n; f++) {
        FsFitResult r;
        make_result(&r, 4, FS_FIT_OK, (unsigned)f);
        CHECK(journal_append_fold(&j, "t", f, &r, NULL, &err) == 0);
        train_result_free(&r);
    }
    CHECK_MSG(!err.set, "%s", err.msg);
    journal_close(&j);
    return file_size(jpath(dir));
}

static void test_second_reader_and_lock(void)
{
    const char *dir = tmp_dir("two");
    FsJournal w, r;
    FsErr err = {0};
    CHECK(journal_open(&w, dir, &err) == 0);
    CHECK(journal_is_locked(dir) == 1);
    FsErr e2 = {0};
    CHECK(journal_open(&r, dir, &e2) == -1);
    CHECK_CONTAINS(e2.msg, "another foldsweep run");
    CHECK(journal_append_trial(&w, "x", 0, 5, "{}", &err) == 0);
    FsFitResult res;
    make_result(&res, 2, FS_FIT_OK, 9);
    CHECK(journal_append_fold(&w, "x", 0, &res, NULL, &err) == 0);
    /* Before close: the record is already on disk for a reader. */
    CHECK(journal_read(&r, dir, &err) == 0);
    CHECK(r.n_folds == 1 && r.n_trials == 1 && r.read_only);
    const FsFoldRecord *f = journal_find_fold(&r, "x", 0);
    CHECK(f != NULL);
    if (f) check_same_result(&f->r, &res);
    FsErr e3 = {0};
    CHECK(journal_append_fold(&r, "x", 1, &res, NULL, &e3) == -1); /* read-only */
    CHECK_CONTAINS(e3.msg, "read-only");
    journal_close(&r);
    journal_close(&w);
    CHECK(journal_is_locked(dir) == 0);
    train_result_free(&res);

    FsErr e4 = {0};
    CHECK(journal_read(&r, tmp_dir("missing"), &e4) == -1);
    CHECK_CONTAINS(e4.msg, "no such run folder");
    CHECK(journal_is_locked(tmp_dir("missing")) == -1);
}

static void test_torn_tail(void)
{
    const char *dir = tmp_dir("torn");
    long full = write_folds(dir, 3);
    size_t n;
    char *text = tp_read_file(jpath(dir), &n);
    /* Start of the last line. */
    char *last = text + n - 1;
    while (last > text && last[-1] != '\n') last--;
    long good = (long)(last - text);
    free(text);

    /* Cut mid-record: the reader skips it and changes nothing ... */
    CHECK(truncate(jpath(dir), full - 7) == 0);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_read(&j, dir, &err) == 0);
    CHECK(j.dropped_tail == 1 && j.n_folds == 2);
    journal_close(&j);
    CHECK(file_size(jpath(dir)) == full - 7);
    /* ... the writer truncates it away, and appends after it read back. */
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(j.dropped_tail == 1 && j.n_folds == 2 && j.n_trials == 1);
    CHECK(file_size(jpath(dir)) == good);
    FsFitResult r;
    make_result(&r, 5, FS_FIT_OK, 77);
    CHECK(journal_append_fold(&j, "t", 2, &r, NULL, &err) == 0);
    journal_close(&j);
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(j.dropped_tail == 0 && j.n_folds == 3);
    const FsFoldRecord *f = journal_find_fold(&j, "t", 2);
    CHECK(f && f->r.epochs == 5);
    if (f) check_same_result(&f->r, &r);
    journal_close(&j);
    long size = file_size(jpath(dir));

    /* Garbage after the last record, with and without a newline. */
    const char *tails[] = {"garbage",
                           "garbage\n",
                           "{\"v\":1,\"kind\":\"fold\"",
                           "\n",
                           "{} #00000000\n",
                           "{\"v\":1} #zzzzzzzz\n",
                           "{\"v\":1,\"crc\":\"00000000\"}\n",
                           "{\"v\":1,\"crc\":\"zzzzzzzz\"}\n",
                           "{\"v\":1,\"kind\":\"fold\",\"crc\":\""};
    for (int i = 0; i < 9; i++) {
        tp_write_file(jpath(dir), tails[i], strlen(tails[i]), "ab");
        CHECK(journal_open(&j, dir, &err) == 0);
        CHECK_MSG(!err.set, "tail %d: %s", i, err.msg);
        err.set = 0;
        CHECK(j.dropped_tail == 1 && j.n_folds == 3);
        CHECK(file_size(jpath(dir)) == size);
        journal_close(&j);
    }
    CHECK(journal_open(&j, dir, &err) == 0);
    CHECK(journal_append_failure(&j, "t", "late", &err) == 0);
    journal_close(&j);
    CHECK(journal_read(&j, dir, &err) == 0);
    CHECK(j.dropped_tail == 0 && j.n_failures == 1 && j.n_folds == 3);
    journal_close(&j);
    train_result_free(&r);
}

static void test_bad_middle_line(void)
{
    const char *dir = tmp_dir("middle");
    long full = write_folds(dir, 3); /* lines: trial, fold 0, 1, 2 */
    size_t n;
    char *text = tp_read_file(jpath(dir), &n);
    char *line2 = strchr(text, '\n') + 1;
    char *p = strstr(line2, "\"epochs\":4");
    CHECK(p != NULL);
    if (p) p[9] = '5'; /* content changed, checksum not */
    tp_write_file(jpath(dir), text, n, "wb");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == -1);
    CHECK_CONTAINS(err.msg, "journal.jsonl:2: ");
    CHECK_CONTAINS(err.msg, "checksum");
    CHECK_CONTAINS(err.msg, "foldsweep repair");
    CHECK(file_size(jpath(dir)) == full); /* nothing cut */
    /* A reader skips the damaged line and keeps the rest. */
    FsErr e2 = {0};
    CHECK(journal_read(&j, dir, &e2) == 0);
    CHECK(j.bad_lines == 1 && j.first_bad_line == 2 && strstr(j.first_bad_why, "checksum"));
    CHECK(j.n_folds == 2 && j.n_trials == 1);
    journal_close(&j);
    /* repair: the good lines as the journal, the original kept beside it. */
    char *before = tp_read_file(jpath(dir), NULL);
    CHECK(journal_repair(dir, NULL, NULL, &e2) == 1);
    CHECK(journal_open(&j, dir, &e2) == 0);
    CHECK(j.n_folds == 2 && j.bad_lines == 0);
    journal_close(&j);
    char kept[700];
    snprintf(kept, sizeof kept, "%s/journal.damaged-1.jsonl", dir);
    char *after_kept = tp_read_file(kept, NULL);
    CHECK(before && after_kept && !strcmp(before, after_kept));
    free(before);
    free(after_kept);
    CHECK(journal_repair(dir, NULL, NULL, &e2) == 0); /* sound now: nothing to do */

    /* Two bad lines at the end: the first one is not the last, so error. */
    if (p) p[9] = '4';
    tp_write_file(jpath(dir), text, n, "wb");
    tp_write_file(jpath(dir), "junk\nmore junk", 14, "ab");
    FsErr e3 = {0};
    CHECK(journal_open(&j, dir, &e3) == -1);
    CHECK_CONTAINS(e3.msg, "journal.jsonl:5: ");
    CHECK(file_size(jpath(dir)) == full + 14);
    free(text);

    /* A whole record of a newer format version: refused, not dropped. */
    const char *d2 = tmp_dir("newer");
    write_folds(d2, 1);
    const char *rec = "{\"v\":2,\"kind\":\"fold\",\"time\":1}";
    char *line = tl_line(rec, strlen(rec));
    tp_write_file(jpath(d2), line, strlen(line), "ab");
    free(line);
    FsErr e4 = {0};
    CHECK(journal_open(&j, d2, &e4) == -1);
    CHECK_CONTAINS(e4.msg, "journal.jsonl:3: record format 2 is newer");
    /* An unknown kind of this version is skipped. */
    const char *d3 = tmp_dir("kind");
    write_folds(d3, 1);
    rec = "{\"v\":1,\"kind\":\"note\",\"time\":1,\"text\":\"hi\"}";
    line = tl_line(rec, strlen(rec));
    tp_write_file(jpath(d3), line, strlen(line), "ab");
    free(line);
    FsErr e5 = {0};
    CHECK(journal_open(&j, d3, &e5) == 0);
    CHECK(j.n_folds == 1 && j.lines == 3);
    journal_close(&j);
}

static void test_duplicates(void)
{
    /* B holds a different result for the same (trial, fold) as A. */
    char a[512], b[512];
    snprintf(a, sizeof a, "%s", tmp_dir("dupA"));
    snprintf(b, sizeof b, "%s", tmp_dir("dupB"));
    write_folds(a, 2);
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, b, &err) == 0);
    FsFitResult r;
    make_result(&r, 9, FS_FIT_DIVERGED, 5);
    CHECK(journal_append_trial(&j, "t", 3, 99, "{\"x\":1}", &err) == 0);
    CHECK(journal_append_fold(&j, "t", 1, &r, NULL, &err) == 0);
    CHECK(journal_append_failure(&j, "t", "first", &err) == 0);
    journal_close(&j);
    train_result_free(&r);
    size_t n;
    char *text = tp_read_file(jpath(b), &n);
    tp_write_file(jpath(a), text, n, "ab"); /* trial t again, fold 1 again, a failure */
    tp_write_file(jpath(a), text, n, "ab"); /* and everything once more */
    free(text);
    CHECK(journal_open(&j, a, &err) == 0);
    CHECK_MSG(!err.set, "%s", err.msg);
    CHECK(j.n_trials == 1 && j.n_folds == 2 && j.n_failures == 1);
    CHECK_MSG(j.duplicates == 5, "%d", j.duplicates);
    CHECK(journal_find_trial(&j, "t")->index == 0);
    CHECK(journal_find_fold(&j, "t", 1)->r.epochs == 4);
    CHECK(journal_find_fold(&j, "t", 1)->r.status == FS_FIT_OK);
    journal_close(&j);
}

/* Many keys: the hash index finds every one and no absent one. */
static void test_many(void)
{
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, tmp_dir("many"), &err) == 0);
    FsFitResult r;
    make_result(&r, 3, FS_FIT_OK, 0); /* curves for up to 3 epochs */
    char id[17];
    for (int t = 0; t < 300; t++) {
        snprintf(id, sizeof id, "%016x", t * 7919);
        journal_add_trial(&j, id, t, t, "{}", 0);
        for (int f = 0; f < 3; f++) {
            r.epochs = 1 + (t + f) % 3;
            journal_add_fold(&j, id, f, 0, &r, 0);
        }
    }
    int bad = 0;
    for (int t = 0; t < 300; t++) {
        snprintf(id, sizeof id, "%016x", t * 7919);
        const FsTrialRecord *tr = journal_find_trial(&j, id);
        bad += !tr || tr->index != t;
        for (int f = 0; f < 3; f++) {
            const FsFoldRecord *fr = journal_find_fold(&j, id, f);
            bad += !fr || fr->r.epochs != 1 + (t + f) % 3;
        }
        bad += journal_find_fold(&j, id, 3) != NULL;
    }
    CHECK(bad == 0);
    CHECK(j.n_trials == 300 && j.n_folds == 900);
    journal_close(&j);
    train_result_free(&r);
}

static void test_json_reader(void)
{
    FsJsonDoc d;
    char why[128];
    const char *ok =
        " {\"a\":[1,-2.5e3,true,false,null,\"x\\u00e9\\ud83d\\ude00\\n\"],\"b\":{},\"c\":[]} ";
    CHECK(json_parse(&d, ok, strlen(ok), why, sizeof why) == 0);
    const FsJson *a = json_get(d.root, "a");
    CHECK(a && a->n == 6);
    long long i;
    double x;
    CHECK(json_i64(json_at(a, 0), &i) == 0 && i == 1);
    CHECK(json_i64(json_at(a, 1), &i) == -1);
    CHECK(json_f64(json_at(a, 1), &x) == 0 && x == -2500.0);
    CHECK(json_at(a, 2)->type == FS_JSON_TRUE);
    CHECK(json_at(a, 4)->type == FS_JSON_NULL);
    CHECK(!strcmp(json_at(a, 5)->str, "x\xc3\xa9\xf0\x9f\x98\x80\n"));
    CHECK(json_at(a, 6) == NULL && json_get(d.root, "z") == NULL);
    char *c = json_compact(d.root);
    CHECK(!strcmp(c, "{\"a\":[1,-2.5e3,true,false,null,\"x\xc3\xa9\xf0\x9f\x98\x80\\u000a\"],\"b\":"
                     "{},\"c\":[]}"));
    free(c);
    json_free(&d);

    const char *bad[] = {"",           " ",     "{",       "[1,]",        "{\"a\"}",
                         "{\"a\":1,}", "01",    "1.",      "-",           "1e",
                         "tru",        "\"abc", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"",
                         "\"a\nb\"",   "[1] 2", "{1:2}",   "nul",         "\"\\u12g4\"",
                         "[",          "]",     "+1",      ".5",          "{\"a\":1 \"b\":2}"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = json_parse(&d, bad[k], strlen(bad[k]), why, sizeof why);
        CHECK_MSG(rc == -1, "accepted '%s'", bad[k]);
        CHECK(!strncmp(why, "column ", 7));
        if (rc == 0) json_free(&d);
    }
    /* Deep nesting is refused, not a stack overflow. */
    size_t deep = 100000;
    char *s = malloc(deep * 2);
    memset(s, '[', deep);
    memset(s + deep, ']', deep);
    CHECK(json_parse(&d, s, deep * 2, why, sizeof why) == -1);
    CHECK_CONTAINS(why, "nesting");
    CHECK(json_parse(&d, s + deep - 64, 128, why, sizeof why) == 0);
    json_free(&d);
    free(s);
}

static uint64_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

/* Random bytes and mutations of real records: any result, never a crash
 * (ASan and UBSan builds run this too). */
static void test_fuzz(void)
{
    const char *dir = tmp_dir("fuzzsrc");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    FsFitResult r;
    make_result(&r, 6, FS_FIT_DIVERGED, 3);
    CHECK(journal_append_run(&j, 3, 3, "loss", 0, &err) == 0);
    CHECK(journal_append_trial(&j, "abcdef", 1, 2, CONFIG, &err) == 0);
    CHECK(journal_append_fold(&j, "abcdef", 0, &r, NULL, &err) == 0);
    CHECK(journal_append_failure(&j, "abcdef", "x", &err) == 0);
    journal_close(&j);
    train_result_free(&r);
    size_t n;
    char *seed = tp_read_file(jpath(dir), &n);
    const char alphabet[] = "{}[]\",:\\u0123456789eE+-.tfnalsr #\n";
    char *buf = malloc(2 * n + 64);
    int parsed = 0;
    for (int it = 0; it < 4000; it++) {
        size_t len;
        if (it % 4 == 0) { /* random bytes from a JSON-ish alphabet or any byte */
            len = rnd() % 200;
            for (size_t k = 0; k < len; k++)
                buf[k] = (it & 8) ? (char)rnd() : alphabet[rnd() % (sizeof alphabet - 1)];
        } else { /* mutations of the real journal, or of one of its records' JSON */
            memcpy(buf, seed, n);
            len = n;
            if (it % 2) {
                size_t at = rnd() % n, end;
                while (at > 0 && seed[at - 1] != '\n') at--;
                for (end = at; end < n && seed[end] != '\n'; end++) {
                }
                char *rec = tl_json(seed + at, end - at); /* without its "crc" */
                len = rec ? strlen(rec) : 0;
                memcpy(buf, rec ? rec : "", len);
                free(rec);
            }
            int m = 1 + (int)(rnd() % 6);
            for (int k = 0; k < m && len > 0; k++) {
                size_t at = rnd() % len;
                switch (rnd() % 4) {
                case 0: buf[at] = (char)rnd(); break;
                case 1: buf[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
                case 2: memmove(buf + at, buf + at + 1, len - at - 1), len--; break;
                default: len = at; break;
                }
            }
        }
        FsJsonDoc d;
        if (json_parse(&d, buf, len, NULL, 0) == 0) {
            parsed++;
            char *c = json_compact(d.root);
            FsJsonDoc d2;
            CHECK(json_parse(&d2, c, strlen(c), NULL, 0) == 0);
            json_free(&d2);
            free(c);
            json_free(&d);
        }
        /* A single line of the seed, mutated, as JSON. */
        const char *nl = memchr(buf, '\n', len);
        if (nl && json_parse(&d, buf, (size_t)(nl - buf), NULL, 0) == 0)
            json_free(&d);
        /* And the whole thing as a journal file. */
        if (it % 8 == 1) {
            const char *fd = tmp_dir("fuzz");
            mkdir(fd, 0777);
            tp_write_file(jpath(fd), buf, len, "wb");
            FsErr e = {0};
            if (journal_read(&j, fd, &e) == 0)
                journal_close(&j);
            else
                CHECK(e.set && strstr(e.msg, "journal.jsonl:") != NULL);
        }
    }
    printf("fuzz: %d of 4000 inputs parsed as JSON\n", parsed);
    free(buf);
    free(seed);
}

/* The records of trained models and test data: model files, a refit, a
 * prune, evaluations; they read back as written. */
static void test_model_records(void)
{
    const char *dir = tmp_dir("models");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    FsFitResult r;
    make_result(&r, 4, FS_FIT_OK, 9);
    FsModelRef m = {"models/aa/fold0.safetensors", 1234, 0xdeadbeef}, m2 = {"models/aa/fold0.safetensors", 99, 7};
    CHECK(journal_append_fold(&j, "aa", 0, &r, &m, &err) == 0);
    CHECK(journal_append_model(&j, "aa", 1, &m, &err) == -1); /* no fold record for it */
    CHECK(journal_append_model(&j, "aa", 0, &m2, &err) == 0);
    CHECK(journal_append_refit(&j, "aa", 3, &m, &err) == 0);
    CHECK(journal_append_discard(&j, "bb", &err) == 0);
    FsEvalRecord e = {.trial = "aa", .models = "ensemble", .source = "test", .data = "ts115.csv",
                      .data_fingerprint = 0x0123456789abcdefULL, .proteins = 114, .scored = 27291, .overlap = 1,
                      .q3 = 0.723, .q3_lo = 0.707, .q3_hi = 0.738, .sov = 0.659};
    CHECK(journal_append_eval(&j, &e, &err) == 0);
    journal_close(&j);
    FsJournal k;
    memset(&err, 0, sizeof err);
    CHECK_MSG(journal_read(&k, dir, &err) == 0, "%s", err.msg);
    const FsFoldRecord *f = journal_find_fold(&k, "aa", 0);
    CHECK(f && f->model.bytes == 99 && f->model.crc32 == 7); /* the later model record counts */
    CHECK(journal_is_discarded(&k, "bb") && !journal_is_discarded(&k, "aa"));
    const FsRefitRecord *rf = journal_find_refit(&k, "aa");
    CHECK(rf && rf->epochs == 3 && rf->model.crc32 == 0xdeadbeef);
    const FsEvalRecord *g = journal_find_eval(&k, "aa", "ensemble", "test", 0x0123456789abcdefULL);
    CHECK(g && g->q3 == 0.723 && g->q3_hi == 0.738 && g->proteins == 114 && g->overlap == 1 && !strcmp(g->data, "ts115.csv"));
    CHECK(!journal_find_eval(&k, "aa", "refit", "test", 0x0123456789abcdefULL));
    journal_close(&k);
    train_result_free(&r);
}

/* Counts the reader would reject are never written, and a record that
 * claims more epochs than a sweep allows is refused on reading (it would
 * allocate its curves). */
static void test_bounds(void)
{
    const char *dir = tmp_dir("bounds");
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_open(&j, dir, &err) == 0);
    FsFitResult r;
    make_result(&r, 4, FS_FIT_OK, 3);
    r.halted_by = 5;
    long lines = j.lines;
    CHECK(journal_append_fold(&j, "t", 0, &r, NULL, &err) == -1);
    CHECK_CONTAINS(err.msg, "halted_by 5");
    CHECK(j.lines == lines);
    journal_close(&j);
    train_result_free(&r);
    const char *json = "{\"v\":1,\"kind\":\"fold\",\"time\":1,\"trial\":\"t\",\"fold\":0,\"status\":\"ok\","
                       "\"epochs\":200000,\"best_epoch\":1,\"best_val_loss\":0.5,"
                       "\"confusion\":[[1,0,0],[0,1,0],[0,0,1]]}";
    char path[600], *line = tl_line(json, strlen(json));
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    tp_write_text(path, line);
    free(line);
    FsJournal k;
    memset(&err, 0, sizeof err);
    CHECK(journal_open(&k, dir, &err) == -1);
    CHECK_CONTAINS(err.msg, "journal.jsonl:1: expected a fold record");
    CHECK(journal_read(&k, dir, &err) == 0); /* a reader skips it, allocating nothing for it */
    CHECK(k.bad_lines == 1 && k.n_folds == 0);
    CHECK_CONTAINS(k.first_bad_why, "expected a fold record");
    journal_close(&k);
}

/* A fold record's gpu_group (the library tier's group width) is read back,
 * and refused out of range or beside another tier, naming the field (a
 * bad line before the last: the journal does not open). */
static void test_gpu_group(void)
{
    static const char *const edits[][2] = {
        {"\"gpu_group\":8", "\"gpu_group\":40"},
        {"\"gpu_group\":8", "\"gpu_group\":0"},
        {"\"gpu_path\":\"library\"", "\"gpu_path\":\"block\""},
    };
    for (int e = 0; e < 3; e++) {
        char name[32];
        snprintf(name, sizeof name, "group%d", e);
        const char *dir = tmp_dir(name);
        FsJournal j;
        FsErr err = {0};
        CHECK(journal_open(&j, dir, &err) == 0);
        FsFitResult r;
        make_result(&r, 4, FS_FIT_OK, 3);
        r.gpu_path = FS_GPU_PATH_LIBRARY;
        r.gpu_group = 8;
        /* Two records: the edited first one is not a torn tail. */
        CHECK(journal_append_fold(&j, "t", 0, &r, NULL, &err) == 0 && journal_append_fold(&j, "t", 1, &r, NULL, &err) == 0);
        journal_close(&j);
        train_result_free(&r);
        size_t n = 0;
        char *text = tp_read_file(jpath(dir), &n), *at = text ? strstr(text, edits[e][0]) : NULL;
        CHECK(at != NULL);
        if (!at) {
            free(text);
            continue;
        }
        if (e == 0) { /* unedited, it reads back */
            FsJournal k;
            CHECK(journal_open(&k, dir, &err) == 0 && k.n_folds == 2 && k.folds[0].r.gpu_group == 8);
            journal_close(&k);
        }
        /* The first line edited, its checksum made again (tl_line), the second kept. */
        char *nl = strchr(text, '\n');
        CHECK(nl && at < nl && (size_t)(nl - text) > TL_TAIL_N);
        if (!nl || at > nl) {
            free(text);
            continue;
        }
        char body[8192], edited[16384];
        snprintf(body, sizeof body, "%.*s%s%.*s}", (int)(at - text), text, edits[e][1],
                 (int)(nl - TL_TAIL_N - at - strlen(edits[e][0])), at + strlen(edits[e][0]));
        char *line = tl_line(body, strlen(body));
        snprintf(edited, sizeof edited, "%s%s", line, nl + 1);
        free(line);
        free(text);
        tp_write_text(jpath(dir), edited);
        FsJournal k;
        memset(&err, 0, sizeof err);
        CHECK(journal_open(&k, dir, &err) == -1);
        CHECK_CONTAINS(err.msg, "gpu_group: the library tier's group width (1 to 32), with gpu_path library");
    }
}

int main(void)
{
    tp_tmpdir(tmp_root, sizeof tmp_root, "journal");
    test_model_records();
    test_bounds();
    test_gpu_group();
    test_round_trip();
    test_second_reader_and_lock();
    test_torn_tail();
    test_bad_middle_line();
    test_duplicates();
    test_many();
    test_json_reader();
    test_fuzz();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_finish();
}
