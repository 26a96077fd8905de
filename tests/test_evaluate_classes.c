/*
 * test_evaluate_classes: `evaluate` across label sets (#43 item 6). Model
 * files written here (no training): an 8-state model scored on a 3-state
 * file (a UCI pair file, as CB513's .data) gives the Q3 of its predictions
 * reduced, the Q3 it gets on the same proteins' 8-state labels, with a note
 * and the reduction in the output (it was refused with "use data.classes:
 * 3", a key evaluate does not take); a 3-state model takes the 8-state
 * file, its labels reduced as they load, and gets the Q3 it gets on the
 * 3-state file.
 */
#include <math.h>

#include "model/model.h"
#include "modelfile/modelfile.h"
#include "test_proc.h"
#include "test_made_models.h"

static char tmp[256];

/* Made-up weights that spread the predictions over every class. */
static float spread_weight(long i) { return 0.6f * sinf(1.7f * (float)i); }

/* The same 6 proteins as a record file with DSSP-8 labels and as a UCI
 * pair file with those labels reduced (h e _). */
static void write_data(const char *rec, const char *uci)
{
    FILE *r = fopen(rec, "w"), *u = fopen(uci, "w");
    CHECK(r && u);
    if (!r || !u) return;
    uint64_t x = 99;
    for (int p = 0; p < 6; p++) {
        char seq[80], lab[80];
        int n = 40 + 5 * p;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            seq[i] = "ACDEFGHIKLMNPQRSTVWY"[x % 20];
            lab[i] = "HGIEBTSC"[(i / 4 + p) % 8];
        }
        seq[n] = lab[n] = '\0';
        fprintf(r, ">p%d\n%s\n%s\n\n", p, seq, lab);
        fputs("<>\n", u);
        for (int i = 0; i < n; i++) fprintf(u, "%c %c\n", seq[i], "hhheeccc"[strchr("HGIEBTSC", lab[i]) - "HGIEBTSC"]);
        fputs("end\n", u);
    }
    fclose(r), fclose(u);
}

/* The JSON number after "key": in out_text, or -1. */
static double json_num(const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(out_text, k);
    return p ? atof(p + strlen(k)) : -1;
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "evalclasses");
    char m3[300], m8[300], rec[300], uci[300];
    snprintf(m3, sizeof m3, "%s/m3.safetensors", tmp);
    snprintf(m8, sizeof m8, "%s/m8.safetensors", tmp);
    snprintf(rec, sizeof rec, "%s/r8.txt", tmp);
    snprintf(uci, sizeof uci, "%s/u3.data", tmp);
    tmm_write_model(m3, 3, 6, spread_weight, NULL); /* no training sequences: the guard only warns */
    tmm_write_model(m8, 8, 6, spread_weight, NULL);
    write_data(rec, uci);

    /* 8-state model, 8-state labels: Q8, and Q3 of the predictions reduced. */
    CHECK(tp_run("evaluate '%s' '%s' --format json", m8, rec) == 0);
    double q3_of_8 = json_num("q3");
    CHECK(json_num("q8") >= 0 && q3_of_8 >= 0);
    /* 8-state model, 3-state labels: scored, the same Q3, no Q8, and said so. */
    int rc = tp_run("evaluate '%s' '%s' --format json", m8, uci);
    CHECK_MSG(rc == 0, "8-state model on a UCI file: exit %d: %s", rc, err_text);
    CHECK_MSG(json_num("q3") == q3_of_8, "reduced Q3 %g, on 8-state labels %g", json_num("q3"), q3_of_8);
    CHECK(strstr(out_text, "\"q8\":") == NULL);
    CHECK_CONTAINS(out_text, "\"model_classes\":8,\"reduction\":\"H G I -> H, E B -> E, T S C -> C\"");
    CHECK_CONTAINS(err_text, "u3.data has 3-state labels, not DSSP 8-state ones: the 8-state models' predictions "
                             "are reduced to 3 states");
    CHECK(strstr(err_text, "data.classes") == NULL);
    CHECK(tp_run("evaluate '%s' '%s'", m8, uci) == 0);
    CHECK_CONTAINS(out_text, "8-state models on 3-state labels: Q3 and SOV of their predictions reduced");
    CHECK(strstr(out_text, "Q8") == NULL);
    CHECK_CONTAINS(out_text, "columns predicted H E C)");

    /* 3-state model: the 8-state file's labels reduced as they load, the same Q3. */
    CHECK(tp_run("evaluate '%s' '%s' --format json", m3, uci) == 0);
    double q3_3 = json_num("q3");
    rc = tp_run("evaluate '%s' '%s' --format json", m3, rec);
    CHECK_MSG(rc == 0, "3-state model on an 8-state file: exit %d: %s", rc, err_text);
    CHECK_MSG(json_num("q3") == q3_3 && q3_3 >= 0, "Q3 %g on 8-state labels, %g on 3-state", json_num("q3"), q3_3);
    CHECK(strstr(out_text, "\"q8\":") == NULL && strstr(out_text, "\"reduction\"") == NULL);

    /* A file neither reading takes: the 3-state reading's reason (the line), not "use data.classes: 3". */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad.data", tmp);
    tp_write_text(bad, "<>\nA h\nC q\nend\n");
    CHECK(tp_run("evaluate '%s' '%s'", m8, bad) == 1);
    CHECK_CONTAINS(err_text, "bad.data:3");
    CHECK(strstr(err_text, "data.classes") == NULL);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
