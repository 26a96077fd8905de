/*
 * test_old_folder: a run folder written by a foldsweep from before trial
 * configs printed floats as the shortest text of the float (issue #16
 * item 5). Such a build wrote "dropout 0.3" as 0.300000012 in each trial's
 * config, and trial ids hash the config, so its ids differ from this
 * build's for the same sweep.yaml. The folder is made here from a fresh
 * run (its configs and ids rewritten the old way, the journal's lines
 * framed and checksummed as that build did, "JSON #crc8", the model
 * folders renamed), then:
 *  - `run` on it is refused with one clear message (not a silent second
 *    training of every trial beside the old records), and so is `refit`;
 *  - leaderboard and status still read it, and show the values as written
 *    (drop0.3, lr0.001), not the old long forms;
 *  - `run --restart` sets it aside and completes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>

#include "test_lines.h"
#include "test_proc.h"
#include "util/util.h"

static const char *SWEEP =
    "data:\n"
    "  synth: {proteins: 40, seed: 3}\n"
    "  window: 7\n"
    "  folds: 2\n"
    "model:\n"
    "  layers:\n"
    "    - [{conv1d: {filters: 4, width: 3}}, {dropout: {rate: 0.3}}, {dense: {units: 8}}]\n"
    "    - [{conv1d: {filters: 8, width: 3}}, {dropout: {rate: 0.3}}, {dense: {units: 8}}]\n"
    "training:\n"
    "  epochs: 2\n"
    "  batch_size: 16\n"
    "  learning_rate: 0.001\n"
    "  seed: 1\n";

/* A config as the old build wrote it: every number with a '.' or an
 * exponent (the floats) as %.9g of the float through double. */
static char *old_config(const char *cfg)
{
    size_t cap = strlen(cfg) * 4 + 64, n = 0;
    char *out = malloc(cap);
    for (const char *p = cfg; *p;) {
        int in_number = (*p == '-' || (*p >= '0' && *p <= '9')) && p > cfg && (p[-1] == ':' || p[-1] == ',' || p[-1] == '[');
        if (!in_number) {
            out[n++] = *p++;
            continue;
        }
        const char *e = p + 1;
        while (*e && strchr("0123456789.eE+-", *e)) e++;
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(e - p), p);
        if (strpbrk(tok, ".eE"))
            n += (size_t)snprintf(out + n, cap - n, "%.9g", (double)strtof(tok, NULL));
        else
            n += (size_t)snprintf(out + n, cap - n, "%s", tok);
        p = e;
    }
    out[n] = '\0';
    return out;
}

typedef struct {
    char new_id[17], old_id[17];
    char *new_cfg, *old_cfg;
} IdMap;

/* Replaces every occurrence of `from` in *s by `to` (both NUL-terminated). */
static void replace_all(char **s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), count = 0;
    for (char *p = strstr(*s, from); p; p = strstr(p + fl, from)) count++;
    if (!count) return;
    char *out = malloc(strlen(*s) + count * (tl + 1) + 1), *w = out;
    for (char *p = *s;;) {
        char *q = strstr(p, from);
        if (!q) {
            strcpy(w, p);
            break;
        }
        memcpy(w, p, (size_t)(q - p));
        w += q - p;
        memcpy(w, to, tl);
        w += tl;
        p = q + fl;
    }
    free(*s);
    *s = out;
}

/* Rewrites DIR's journal and model folders as the old build left them.
 * Returns the number of trials rewritten. */
static int make_old(const char *dir)
{
    char path[600], from[2048], to[2048];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    char *text = tp_read_file(path, NULL);
    CHECK(text != NULL);
    if (!text) return 0;
    /* That build framed each line as "JSON #crc8" (test_lines.h). */
    char *aged = tl_convert(text, 1);
    free(text);
    text = aged;
    const char *fpk = strstr(text, "\"data_fingerprint\":\"");
    CHECK(fpk != NULL);
    if (!fpk) return 0;
    char fp[17];
    snprintf(fp, sizeof fp, "%.16s", fpk + strlen("\"data_fingerprint\":\""));
    IdMap map[16];
    int n = 0;
    for (char *p = strstr(text, "\"kind\":\"trial\""); p && n < 16; p = strstr(p + 1, "\"kind\":\"trial\"")) {
        char *id = strstr(p, "\"trial\":\"") + strlen("\"trial\":\"");
        char *cfg = strstr(p, "\"config\":") + strlen("\"config\":");
        char *end = strstr(cfg, "} #"); /* the record's closing brace, then the checksum */
        IdMap *m = &map[n++];
        snprintf(m->new_id, sizeof m->new_id, "%.16s", id);
        m->new_cfg = strndup(cfg, (size_t)(end - cfg));
        m->old_cfg = old_config(m->new_cfg);
        uint64_t h = fs_fnv1a64(m->old_cfg, strlen(m->old_cfg), FS_FNV_OFFSET);
        h = fs_fnv1a64(fp, 16, h);
        snprintf(m->old_id, sizeof m->old_id, "%016llx", (unsigned long long)h);
        CHECK(strcmp(m->old_id, m->new_id) != 0); /* the point: the ids differ */
        CHECK(strstr(m->old_cfg, "0.300000012") && strstr(m->old_cfg, "0.00100000005"));
    }
    for (int i = 0; i < n; i++) {
        replace_all(&text, map[i].new_cfg, map[i].old_cfg);
        replace_all(&text, map[i].new_id, map[i].old_id);
        snprintf(from, sizeof from, "%s/models/%s", dir, map[i].new_id);
        snprintf(to, sizeof to, "%s/models/%s", dir, map[i].old_id);
        CHECK(rename(from, to) == 0);
    }
    /* Every line's checksum again: "JSON #crc8". The old build wrote no
     * sweep record (its text would not be this build's canonical sweep). */
    size_t cap = strlen(text) + 64, k = 0;
    char *out = malloc(cap);
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n'), *hash = strstr(line, " #");
        if (!strncmp(line, "{\"v\":1,\"kind\":\"sweep\",", 22)) {
            line = nl ? nl + 1 : line + strlen(line);
            continue;
        }
        size_t jn = (size_t)(hash - line);
        k += (size_t)snprintf(out + k, cap - k, "%.*s #%08x\n", (int)jn, line,
                              (unsigned)fs_crc32(line, jn, 0));
        line = nl ? nl + 1 : line + strlen(line);
    }
    tp_write_text(path, out);
    free(out);
    free(text);
    for (int i = 0; i < n; i++) free(map[i].new_cfg), free(map[i].old_cfg);
    return n;
}

int main(void)
{
    char tmp[256], sweep[300], dir[300], journal[320], log[300];
    tp_tmpdir(tmp, sizeof tmp, "oldfolder");
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(dir, sizeof dir, "%s/run", tmp);
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    tp_write_text(sweep, SWEEP);

    /* This build's configs hold the values as written. */
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet", sweep, dir) == 0);
    CHECK(tp_count_in_file(journal, "\"rate\":0.3}") == 2);
    CHECK(tp_count_in_file(journal, "\"learning_rate\":0.001,") == 2);
    CHECK(tp_count_in_file(journal, "0.300000012") == 0);

    CHECK(make_old(dir) == 2);
    CHECK(tp_count_in_file(journal, "\"rate\":0.300000012}") == 2);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 4);

    /* Its journal reads (the checksums are right) and reports as before,
     * the old long forms shown as written. */
    CHECK(tp_run("leaderboard '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "drop0.3"); /* "drop0.3 " or at a wrapped line's end */
    CHECK_CONTAINS(out_text, "lr0.001 ");
    CHECK(strstr(out_text, "0.300000012") == NULL && strstr(out_text, "0.00100000005") == NULL);
    CHECK(tp_run("status '%s'", dir) == 0);
    CHECK_CONTAINS(out_text, "2 done (2 ok");
    CHECK_CONTAINS(out_text, "drop0.3"); /* "drop0.3 " or at a wrapped line's end */

    /* A resume would train both trials again beside the old records:
     * refused, in one message that says why and what to do. */
    long before = tp_count_in_file(journal, "\"kind\":\"fold\"");
    CHECK(tp_run("run '%s' --out '%s' --threads 2", sweep, dir) == 1);
    CHECK_CONTAINS(err_text, "the journal names 2 trials that this sweep does not have");
    CHECK_CONTAINS(err_text, "earlier foldsweep");
    CHECK_CONTAINS(err_text, "--restart");
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == before);
    CHECK(tp_count_in_file(journal, "\"kind\":\"trial\"") == 2);
    CHECK(tp_run("refit '%s' --rank 1 -o '%s/refit'", dir, tmp) == 1);
    CHECK_CONTAINS(err_text, "earlier foldsweep");

    /* --restart keeps the old run aside and trains the sweep again. */
    CHECK(tp_run("run '%s' --out '%s' --threads 2 --quiet --restart", sweep, dir) == 0);
    CHECK(tp_count_in_file(journal, "\"kind\":\"fold\"") == 4);
    CHECK(tp_count_in_file(journal, "0.300000012") == 0);
    char aside[400];
    snprintf(aside, sizeof aside, "%s/previous-1/journal.jsonl", dir);
    CHECK(tp_count_in_file(aside, "\"rate\":0.300000012}") == 2);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures) CHECK(system(cmd) == 0);
    return test_finish();
}
