/*
 * Journal records that pass their checksum but not common sense (a hand
 * edit with the CRC recomputed), through the binary: each must behave as a
 * damaged line does: leaderboard and status skip it and name its line,
 * run refuses with the line and `foldsweep repair`, repair drops it, and
 * the next run trains the lost fold again (the leaderboard is then the
 * undamaged one). Also a sweep.yaml that no longer loads: named as
 * damaged, and rewritten by repair from the journal's own record of it.
 */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "test_proc.h"
#include "test_lines.h"
#include "test_runs.h"
#include "util/util.h"

static char tmp[256], sweep[300], ref_dir[300];

/* Two trials x 3 folds x 2 epochs, no pruner: about a second. */
static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 60, seed: 3}\n"
    "  window: 7\n"
    "  folds: 3\n"
    "model:\n"
    "  depth: 1\n"
    "  filters: 8\n"
    "  kernel: [3, 5]\n"
    "  dense: 8\n"
    "training:\n"
    "  epochs: 2\n"
    "  batch_size: 16\n"
    "  seed: 5\n";

/* A copy of the reference run folder as tmp/NAME in dir. */
static void fresh_copy(const char *name, char *dir, size_t n)
{
    snprintf(dir, n, "%s/%s", tmp, name);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", dir, ref_dir, dir);
    CHECK(system(cmd) == 0);
}

/* Replaces the first `from` in the nth (1-based) line of DIR's journal
 * holding `kind` with `to`, and recomputes that line's checksum (what a
 * careful hand edit does). Returns the line number, or 0. */
static long edit_record(const char *dir, const char *kind, int nth, const char *from, const char *to)
{
    char path[400], *out, *text;
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    size_t n;
    text = tp_read_file(path, &n);
    out = calloc(n + strlen(to) + 64, 1);
    long line_no = 0, edited = 0;
    size_t k = 0;
    for (char *line = text; line && *line; line_no++) {
        char *nl = strchr(line, '\n');
        size_t len = (size_t)(nl - line);
        char *is_kind = strstr(line, kind), *hit = NULL;
        if (is_kind && is_kind < nl && --nth == 0) hit = strstr(line, from);
        char *rec = hit && hit < nl ? tl_json(line, len) : NULL; /* the record without its checksum */
        if (rec) {
            size_t at = (size_t)(hit - line);
            char json[1 << 16];
            snprintf(json, sizeof json, "%.*s%s%s", (int)at, rec, to, rec + at + strlen(from));
            char *edited_line = tl_line(json, strlen(json));
            k += (size_t)sprintf(out + k, "%s", edited_line);
            free(edited_line);
            free(rec);
            edited = line_no + 1;
        } else {
            memcpy(out + k, line, len + 1);
            k += len + 1;
        }
        line = nl + 1;
    }
    tp_write_file(path, out, k, "wb");
    free(out);
    free(text);
    CHECK_MSG(edited > 0, "no %s line with %s", kind, from);
    return edited;
}

/* The first two cells of the confusion of DIR's nth fold record. */
static void first_cells(const char *dir, int nth, unsigned long long *a, unsigned long long *b)
{
    char path[400];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *text = tp_read_file(path, NULL);
    const char *p = text;
    for (int k = 0; k < nth && p; k++) p = strstr(p + 1, "\"kind\":\"fold\"");
    p = p ? strstr(p, "\"confusion\":[[") : NULL;
    *a = *b = 0;
    CHECK(p && sscanf(p + strlen("\"confusion\":[["), "%llu,%llu", a, b) == 2);
    free(text);
}

/* Appends one record (JSON) with its checksum to DIR's journal; its line. */
static long append_record(const char *dir, const char *json)
{
    char path[400], *line = tl_line(json, strlen(json));
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    tp_write_file(path, line, strlen(line), "ab");
    free(line);
    size_t n;
    char *text = tp_read_file(path, &n);
    long lines = tp_count(text, "\n");
    free(text);
    return lines;
}

/* The fault's whole path: leaderboard and status skip the record, naming
 * DIR/journal.jsonl:LINE and `expect`; run refuses with the line and
 * `foldsweep repair`; repair drops it; the next run retrains what was lost
 * and the leaderboard equals the reference. */
static void check_fault(const char *dir, long line, const char *expect, const char *ref)
{
    char where[420], log[400];
    snprintf(where, sizeof where, "journal.jsonl:%ld: ", line);
    snprintf(log, sizeof log, "%s.log", dir);
    CHECK(tp_run("leaderboard '%s' --format csv", dir) == 0);
    CHECK_CONTAINS(err_text, where);
    CHECK_CONTAINS(err_text, expect);
    CHECK_MSG(!strstr(out_text, "0.99999"), "the record was ranked:\n%s", out_text);
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(err_text, where);
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, dir) == 1);
    CHECK_CONTAINS(err_text, where);
    CHECK_CONTAINS(err_text, expect);
    CHECK_CONTAINS(err_text, "foldsweep repair");
    CHECK(tp_run("repair '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, where);
    CHECK_CONTAINS(out_text, "1 damaged line dropped");
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, dir) == 0);
    char *got = tr_board(dir, tmp);
    CHECK_MSG(!strcmp(ref, got), "leaderboard after repair differs:\n%s\nvs\n%s", got, ref);
    free(got);
}

/* Item 9: a confusion cell of 3.4e12 (Q3 0.999999999 otherwise). */
static void test_huge_confusion_cell(const char *ref)
{
    char dir[300];
    fresh_copy("huge", dir, sizeof dir);
    unsigned long long a, b;
    char from[80], to[80];
    first_cells(dir, 1, &a, &b);
    snprintf(from, sizeof from, "\"confusion\":[[%llu,%llu,", a, b);
    snprintf(to, sizeof to, "\"confusion\":[[3400000000000,%llu,", b);
    long line = edit_record(dir, "\"kind\":\"fold\"", 1, from, to);
    check_fault(dir, line, "validation residues", ref);
}

/* Item 9: best_epoch 0 on an ok fold (ranked as complete before). */
static void test_ok_without_best_epoch(const char *ref)
{
    char dir[300];
    fresh_copy("best0", dir, sizeof dir);
    long line = edit_record(dir, "\"kind\":\"fold\"", 2, "\"best_epoch\":", "\"best_epoch\":0,\"was\":");
    check_fault(dir, line, "best_epoch 1..", ref);
}

/* Item 9: the confusion's counts moved off the diagonal (same total): the
 * recorded Q3 is no longer the confusion's. */
static void test_q3_not_the_confusions(const char *ref)
{
    char dir[300];
    fresh_copy("q3", dir, sizeof dir);
    unsigned long long a, b;
    char from[80], to[80];
    first_cells(dir, 3, &a, &b);
    CHECK(a != b);
    snprintf(from, sizeof from, "\"confusion\":[[%llu,%llu,", a, b);
    snprintf(to, sizeof to, "\"confusion\":[[%llu,%llu,", b, a);
    long line = edit_record(dir, "\"kind\":\"fold\"", 3, from, to);
    check_fault(dir, line, "from the confusion", ref);
}

/* Item 10: a pruned record naming fold 99 of a 3-fold sweep. */
static void test_pruned_unknown_fold(const char *ref, const char *id)
{
    char dir[300], json[1024];
    fresh_copy("fold99", dir, sizeof dir);
    snprintf(json, sizeof json,
             "{\"v\":1,\"kind\":\"pruned\",\"time\":1,\"trial\":\"%s\",\"fold\":99,\"epoch\":1,\"rule\":\"median\","
             "\"value\":0.5,\"threshold\":0.6,\"reason\":\"hand\",\"curve\":[0.5]}",
             id);
    long line = append_record(dir, json);
    check_fault(dir, line, "not fold 99", ref);
}

/* Issue 27 item 4: a pruned record of the best trial naming fold -1 (the
 * predefined split's id) in a 3-fold sweep. The readers that pick a trial
 * by rank without checking the journal against the sweep (refit, export)
 * took it as a decision before every fold, so the best trial dropped out
 * and they silently refitted and exported the second one. Now a fold the
 * sweep lacks is never a slot: they pick the leaderboard's best; then the
 * fault's whole path as the others. */
static void test_pruned_fold_of_no_slot(const char *ref)
{
    char dir[300], json[1024], best[17] = "", want[80];
    fresh_copy("noslot", dir, sizeof dir);
    const char *row = strstr(ref, "\n1,");
    CHECK(row != NULL);
    if (row) snprintf(best, sizeof best, "%.16s", row + 3);
    snprintf(json, sizeof json,
             "{\"v\":1,\"kind\":\"pruned\",\"time\":1,\"trial\":\"%s\",\"fold\":-1,\"epoch\":1,"
             "\"rule\":\"median\",\"value\":0.5,\"threshold\":0.6,\"reason\":\"hand\",\"curve\":[0.5]}",
             best);
    long line = append_record(dir, json);
    snprintf(want, sizeof want, "trial %s: refitting", best);
    CHECK(tp_run("refit '%s' --rank 1 --threads 1", dir) == 0);
    CHECK_CONTAINS(out_text, want);
    snprintf(want, sizeof want, "exported trial %s (rank 1", best);
    CHECK(tp_run("export '%s' -o '%s/noslot-export'", dir, tmp) == 0);
    CHECK_CONTAINS(out_text, want);
    check_fault(dir, line, "not fold -1", ref);
}

/* Item 10: a fold record of a trial the sweep does not have (an extra
 * leaderboard row, index -1, before). */
static void test_unknown_trial(const char *ref, const char *id)
{
    char dir[300];
    fresh_copy("stranger", dir, sizeof dir);
    char from[40];
    snprintf(from, sizeof from, "\"trial\":\"%s\"", id);
    long line = edit_record(dir, "\"kind\":\"fold\"", 1, from, "\"trial\":\"00000000deadbeef\"");
    check_fault(dir, line, "not trial 00000000deadbeef", ref);
}

/* Item 10: an extra pruned record for the complete best trial in a sweep
 * without a pruner (it turned the trial into "pruned" before). */
static void test_extra_pruned(const char *ref, const char *id)
{
    char dir[300], json[1024];
    fresh_copy("extra", dir, sizeof dir);
    snprintf(json, sizeof json,
             "{\"v\":1,\"kind\":\"pruned\",\"time\":1,\"trial\":\"%s\",\"fold\":0,\"epoch\":1,\"rule\":\"median\","
             "\"value\":0.5,\"threshold\":0.6,\"reason\":\"hand\",\"curve\":[0.5]}",
             id);
    long line = append_record(dir, json);
    check_fault(dir, line, "no pruner", ref);
}

/* Item 11: a sweep.yaml that no longer loads is named as damaged (not "a
 * different sweep"); leaderboard and status read the journal's record of
 * it; repair rewrites it, keeping the damaged one; the run then resumes. */
static void test_damaged_sweep_file(const char *ref)
{
    char dir[300], path[400], kept[400];
    fresh_copy("sweepfile", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    snprintf(kept, sizeof kept, "%s/sweep.damaged-1.yaml", dir);
    char *good = tp_read_file(path, NULL);
    tp_write_text(path, "data: {synth: [unclosed\n");
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, dir) == 1);
    CHECK_CONTAINS(err_text, "sweep.yaml is damaged");
    CHECK_CONTAINS(err_text, "foldsweep repair");
    CHECK_MSG(!strstr(err_text, "different sweep"), "%s", err_text);
    CHECK(tp_run("leaderboard '%s'", dir) == 0);
    CHECK_CONTAINS(err_text, "damaged");
    CHECK_CONTAINS(out_text, " ok ");
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "2 done (2 ok");
    CHECK(tp_run("repair '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "rewritten from the journal's record of the sweep");
    char *now = tp_read_file(path, NULL);
    CHECK(good && now && !strcmp(good, now));
    CHECK(tp_count_in_file(kept, "unclosed") == 1);
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, dir) == 0);
    char *got = tr_board(dir, tmp);
    CHECK_MSG(!strcmp(ref, got), "leaderboard after repair differs:\n%s\nvs\n%s", got, ref);
    free(got);
    free(now);
    free(good);
}

/* A sweep.yaml edited into another valid sweep does not judge the journal
 * (every record would be an unknown trial): readers use the journal's
 * record and say so, repair rewrites the file and drops nothing. */
static void test_edited_sweep_file(const char *ref)
{
    char dir[300], path[400];
    fresh_copy("edited", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    char *good = tp_read_file(path, NULL);
    char *other = good ? strdup(good) : NULL;
    char *k = other ? strstr(other, "kernel: [3, 5]") : NULL;
    CHECK(k != NULL);
    if (k) memcpy(k, "kernel: [1, 7]", 14);
    if (other) tp_write_text(path, other);
    CHECK(tp_run("leaderboard '%s'", dir) == 0);
    CHECK_CONTAINS(err_text, "not the sweep its journal records");
    CHECK(tp_count(out_text, " ok ") == 2);
    CHECK(tp_run("repair '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "rewritten from the journal's record of the sweep");
    CHECK_CONTAINS(out_text, "no damaged lines");
    char *now = tp_read_file(path, NULL);
    CHECK(good && now && !strcmp(good, now));
    char *got = tr_board(dir, tmp);
    CHECK_MSG(!strcmp(ref, got), "leaderboard after repair differs:\n%s\nvs\n%s", got, ref);
    free(got);
    free(now);
    free(other);
    free(good);
}

int main(void)
{
    (void)TR_SWEEP; /* this file's sweep is smaller */
    tp_tmpdir(tmp, sizeof tmp, "sense");
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(ref_dir, sizeof ref_dir, "%s/ref", tmp);
    tp_write_text(sweep, SWEEP);
    CHECK(tp_run("run '%s' --out '%s' --quiet", sweep, ref_dir) == 0);
    char *ref = tr_board(ref_dir, tmp);
    char path[400], id[17] = "";
    snprintf(path, sizeof path, "%s/journal.jsonl", ref_dir);
    char *text = tp_read_file(path, NULL);
    const char *t = text ? strstr(text, "\"kind\":\"trial\",") : NULL;
    t = t ? strstr(t, "\"trial\":\"") : NULL;
    if (t) snprintf(id, sizeof id, "%.16s", t + strlen("\"trial\":\""));
    free(text);
    CHECK(strlen(id) == 16);
    test_huge_confusion_cell(ref);
    test_ok_without_best_epoch(ref);
    test_q3_not_the_confusions(ref);
    test_pruned_unknown_fold(ref, id);
    test_pruned_fold_of_no_slot(ref);
    test_unknown_trial(ref, id);
    test_extra_pruned(ref, id);
    test_damaged_sweep_file(ref);
    test_edited_sweep_file(ref);
    free(ref);
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
