/*
 * fuzz_leaderboard_json.c: the JSON reader (json_parse and its
 * accessors) fed leaderboard.json-shaped input. foldsweep only writes the
 * leaderboard JSON (docs/leaderboard-json.md); the reader that would read
 * it back is the one behind journal lines, export's model.json and
 * safetensors headers, so that is what is fuzzed here, seeded with real
 * leaderboards. (fuzz_journal checks the other direction: every
 * leaderboard written from an accepted journal parses.)
 *
 * Checks: a parse never crashes; every node's typed reads and lookups are
 * memory-safe; the compact form of an accepted document parses and is a
 * fixed point (compacting it again changes nothing).
 */
#include "fuzz_util.h"
#include "json/json.h"

static void walk(const FsJson *v, int depth)
{
    FUZZ_REQUIRE(depth <= FS_JSON_MAX_DEPTH + 1);
    long long i;
    uint64_t u;
    double d;
    float f;
    (void)json_i64(v, &i);
    (void)json_u64(v, &u);
    (void)json_f64(v, &d);
    (void)json_f32(v, &f);
    FUZZ_REQUIRE(v->off <= v->end);
    if (v->type == FS_JSON_STRING || v->type == FS_JSON_NUMBER) FUZZ_REQUIRE(v->str && v->str[v->len] == '\0');
    int k = 0;
    for (const FsJson *c = v->child; c; c = c->next, k++) {
        if (v->type == FS_JSON_OBJECT) {
            FUZZ_REQUIRE(c->key != NULL);
            const FsJson *g = json_get(v, c->key);
            FUZZ_REQUIRE(g != NULL && !strcmp(g->key, c->key)); /* the first of that name */
        } else {
            FUZZ_REQUIRE(json_at(v, k) == c);
        }
        walk(c, depth + 1);
    }
    FUZZ_REQUIRE(k == v->n);
}

/* What a script reads from a leaderboard row (docs/leaderboard-json.md). */
static void read_rows(const FsJson *root)
{
    static const char *const keys[] = {"version", "rank", "id", "index", "status", "reason", "metric",
                                       "folds_done", "folds", "seconds", "params", "arch", "config", "test"};
    for (int r = 0;; r++) {
        const FsJson *row = json_at(root, r);
        if (!row) break;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) (void)json_get(row, keys[k]);
        double mean;
        (void)json_f64(json_get(json_get(row, "metric"), "mean"), &mean);
        const FsJson *folds = json_get(row, "folds");
        for (int i = 0; i < 64; i++) {
            const FsJson *fold = json_at(folds, i);
            if (!fold) break;
            const FsJson *confusion = json_get(fold, "confusion");
            uint64_t cm;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    (void)json_u64(json_at(json_at(confusion, a), b), &cm);
        }
        const FsJson *config = json_get(row, "config");
        if (config) free(json_compact(config));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
    FsJsonDoc doc;
    char why[160];
    if (json_parse(&doc, (const char *)p, n, why, sizeof why) != 0) {
        FUZZ_REQUIRE(!strncmp(why, "column ", 7));
        return 0;
    }
    FUZZ_REQUIRE(doc.root != NULL);
    walk(doc.root, 0);
    read_rows(doc.root);

    char *c1 = json_compact(doc.root);
    FsJsonDoc again;
    int rc = json_parse(&again, c1, strlen(c1), why, sizeof why);
    if (rc) fprintf(stderr, "compact form does not parse: %s\n%s\n", why, c1);
    FUZZ_REQUIRE(rc == 0);
    char *c2 = json_compact(again.root);
    FUZZ_REQUIRE(!strcmp(c1, c2));
    free(c2);
    json_free(&again);
    free(c1);
    json_free(&doc);
    return 0;
}
