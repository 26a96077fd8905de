/*
 * fuzz_journal.c: the run journal's reader (journal_read: line splitting,
 * each line's checksum in either form, the torn-last-line rule, and each
 * record kind's decoder), then what leaderboard and status do with an
 * accepted journal: the lookups, the report in every format, and its JSON
 * read back.
 *
 * A line is a JSON object whose last member "crc" checks the bytes before
 * it (src/journal/frame.c); an earlier build's "JSON #crc32" is read too.
 * Random mutations of a record almost never keep its checksum, so each
 * input is read twice: as it is, then with every complete line's checksum
 * made right in its own form (a line in neither form gets the current one
 * when it ends in '}', the old one otherwise), so the record decoders see
 * the mutated JSON. Seeds may therefore be plain JSON lines. A last line
 * without a newline stays as it is: that is the torn record the reader
 * must drop.
 */
#include "fuzz_util.h"
#include "journal/journal.h"
#include "json/json.h"
#include "report/report.h"

/* The input with every complete line's checksum recomputed (malloc'd). */
static char *fix_crcs(const uint8_t *p, size_t n, size_t *out_n)
{
    /* A line of one byte ("\n") grows to 11: " #xxxxxxxx\n"; "}\n" to 19. */
    char *out = malloc(11 * n + 16), *o = out;
    FUZZ_REQUIRE(out != NULL);
    static const char tail[] = ",\"crc\":\""; /* then 8 hex digits and "} */
    size_t pos = 0;
    while (pos < n) {
        const uint8_t *nl = memchr(p + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - p) : n, len = end - pos;
        if (!nl) { /* torn last line: as it is */
            memcpy(o, p + pos, len);
            o += len;
            break;
        }
        const char *s = (const char *)p + pos;
        /* The checksummed bytes, and in which form. */
        size_t body = len;
        int current = 1;
        if (len >= 18 && !memcmp(s + len - 18, tail, 8) && s[len - 1] == '}')
            body = len - 18; /* the object without its closing brace */
        else if (len >= 10 && s[len - 10] == ' ' && s[len - 9] == '#')
            body = len - 10, current = 0;
        else if (len > 0 && s[len - 1] == '}')
            body = len - 1;
        else
            current = 0;
        memcpy(o, s, body);
        o += body;
        if (current)
            o += sprintf(o, "%s%08x\"}\n", tail, (unsigned)fs_crc32(s, body, 0));
        else
            o += sprintf(o, " #%08x\n", (unsigned)fs_crc32(s, body, 0));
        pos = end + 1;
    }
    *out_n = (size_t)(o - out);
    return out;
}

/* The JSON leaderboard of rep parses back as an array of its rows. */
static void check_json_leaderboard(const FsReport *rep)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    FUZZ_REQUIRE(f != NULL);
    report_write(rep, FS_REPORT_JSON, 0, f);
    FUZZ_REQUIRE(fclose(f) == 0);
    FsJsonDoc doc;
    char why[160];
    int rc = json_parse(&doc, text, n, why, sizeof why);
    /* A trial config nested near the reader's depth limit in its journal
     * line sits deeper still in the leaderboard: valid JSON that this
     * reader declines, not a writer fault. */
    if (rc && strstr(why, "nesting")) {
        free(text);
        return;
    }
    if (rc) fprintf(stderr, "leaderboard JSON does not parse: %s\n%s\n", why, text);
    FUZZ_REQUIRE(rc == 0);
    FUZZ_REQUIRE(doc.root->type == FS_JSON_ARRAY && doc.root->n == rep->n_rows);
    json_free(&doc);
    free(text);
}

static void use_journal(const FsJournal *j)
{
    for (int i = 0; i < j->n_folds; i++) {
        const FsFoldRecord *f = &j->folds[i];
        FUZZ_REQUIRE(journal_find_fold(j, f->trial, f->fold) == f);
        (void)journal_find_trial(j, f->trial);
        (void)journal_find_failure(j, f->trial);
        (void)journal_find_refit(j, f->trial);
        (void)journal_is_discarded(j, f->trial);
    }
    for (int i = 0; i < j->n_trials; i++)
        FUZZ_REQUIRE(journal_find_trial(j, j->trials[i].trial) == &j->trials[i]);
    for (int i = 0; i < j->n_evals; i++) {
        const FsEvalRecord *e = &j->evals[i];
        FUZZ_REQUIRE(journal_find_eval(j, e->trial, e->models, e->source, e->data_fingerprint) != NULL);
    }
    for (int i = 0; i < j->n_cuts; i++) FUZZ_REQUIRE(journal_find_cut(j, j->cuts[i].trial) != NULL);
    (void)journal_last_run(j);

    /* The spec as leaderboard takes it from a folder without sweep.yaml,
     * else a 3-fold q3 sweep. */
    FsReportSpec spec = {FS_METRIC_Q3, 3, 0, 0, NULL};
    (void)report_spec_from_journal(&spec, j);
    FsReport rep;
    report_build(&rep, j, &spec);
    for (int fmt = FS_REPORT_TABLE; fmt <= FS_REPORT_WIDE; fmt++)
        report_write(&rep, (FsReportFormat)fmt, 0, fuzz_null());
    check_json_leaderboard(&rep);
    report_free(&rep);
}

static void read_one(const void *p, size_t n)
{
    fuzz_write_file("journal.jsonl", p, n);
    FsJournal j;
    FsErr err = {0};
    if (journal_read(&j, fuzz_tmpdir(), &err) == 0) {
        use_journal(&j);
        journal_close(&j);
    } else {
        FUZZ_REQUIRE(err.set && err.msg[0]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    read_one(p, n);
    size_t fn;
    char *fixed = fix_crcs(p, n, &fn);
    if (fn != n || memcmp(fixed, p, n) != 0) read_one(fixed, fn);
    free(fixed);
    return 0;
}
