/*
 * test_classes8_run: an 8-state run end to end, through the binary (#31
 * item 2). Made-up proteins with DSSP-8 labels in a record file; a sweep
 * with data.classes: 8; the leaderboard's JSON carries q8 (and q3, the
 * 8-state predictions reduced) and 8 x 8 confusions; SIGKILL mid-run then
 * the same command gives the leaderboard of an uninterrupted run; predict
 * writes 8-state probabilities (csv) and letters (fasta); evaluate reports
 * Q8 and the 8 x 8 matrix, and scores 3-state labels by the predictions reduced.
 */
#define _GNU_SOURCE
#include <signal.h>

#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

/* 90 made-up proteins: segments of one DSSP-8 state, each state favouring
 * a few residues, so that a small model learns something of every state. */
static void write_records(const char *path, int n_prot, uint64_t seed)
{
    static const char *const favour[8] = {"AELMQK", "AELP", "ELMH", "VIYFWT", "VITC", "GNDP", "GSNDP", "GPSNDK"};
    FILE *f = fopen(path, "w");
    uint64_t x = seed;
    for (int p = 0; p < n_prot; p++) {
        char seq[200], lab[200];
        int n = 0;
        while (n < 60) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int state = (int)(x % 8), len = 2 + (int)((x >> 8) % 6);
            for (int k = 0; k < len && n < 190; k++, n++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const char *fav = favour[state];
                seq[n] = x % 4 ? fav[(x >> 4) % strlen(fav)] : "ACDEFGHIKLMNPQRSTVWY"[(x >> 4) % 20];
                lab[n] = "HGIEBTSC"[state];
            }
        }
        seq[n] = lab[n] = '\0';
        fprintf(f, ">p%d\n%s\n%s\n\n", p, seq, lab);
    }
    fclose(f);
}

/* n random proteins in UCI's layout (a residue and h, e or _ a line). */
static void write_uci(const char *path, int n, uint64_t x)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    for (int p = 0; p < n; p++) {
        fputs("<>\n", f);
        for (int i = 0; i < 50 + 7 * p; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            fprintf(f, "%c %c\n", FS_AA_LETTERS[x % 20], "he_"[(i / 5 + p) % 3]);
        }
        fputs("end\n", f);
    }
    fclose(f);
}

static const char *SWEEP8 = "data:\n"
                            "  inputs: [r8.txt]\n"
                            "  classes: 8\n"
                            "  window: 9\n"
                            "  folds: 3\n"
                            "model:\n"
                            "  depth: 1\n"
                            "  filters: [8, 16]\n"
                            "  kernel: 5\n"
                            "  dense: 0\n"
                            "training:\n"
                            "  epochs: 3\n"
                            "  batch_size: 16\n"
                            "  class_weights: balanced\n"
                            "  seed: 5\n"
                            "test:\n"
                            "  inputs: [r8t.txt]\n";

static char *run_out(char **argv, const char *log)
{
    CHECK_MSG(tp_run_argv(argv, log) == 0, "%s %s failed", argv[0], argv[1]);
    return tp_read_file(log, NULL);
}

static void check_predict_evaluate(const char *dir, const char *log)
{
    char fa[300], uci[300], path[300];
    snprintf(fa, sizeof fa, "%s/q.fasta", tmp);
    tp_write_text(fa, ">q1\nMKVLAAGIVGLLEELMQKAAGNDP\n");
    char *pcsv[] = {"foldsweep", "predict", (char *)dir, fa, "--format", "csv", NULL};
    char *out = run_out(pcsv, log);
    CHECK(out && strstr(out, "id,seq,n,q3,p[q3_H],p[q3_E],p[q3_C],q8,p[q8_H],p[q8_G],p[q8_I],p[q8_E],p[q8_B],p[q8_T],"
                             "p[q8_S],p[q8_C],agree\n"));
    CHECK(out && tp_count(out, "\nq1,") == 24);
    free(out);
    char *pfa[] = {"foldsweep", "predict", (char *)dir, fa, "--format", "fasta", NULL};
    out = run_out(pfa, log);
    CHECK(out && !strncmp(out, ">q1\nMKVLAAGIVGLLEELMQKAAGNDP\n", 29) && strlen(out) == 29 + 25);
    CHECK(out && strspn(out + 29, "HGIEBTSC") == 24); /* 8-state letters */
    free(out);
    snprintf(path, sizeof path, "%s/r8.txt", tmp);
    char *ev[] = {"foldsweep", "evaluate", (char *)dir, path, "--allow-overlap", "--format", "json", NULL};
    out = run_out(ev, log);
    CHECK(out && strstr(out, "\"q8\":") && strstr(out, "\"reduction\":\"H G I -> H, E B -> E, T S C -> C\""));
    CHECK(out && strstr(out, "\"G\":{\"precision\"") && strstr(out, "\"S\":{\"precision\""));
    const char *cm = out ? strstr(out, "\"confusion\":[") : NULL;
    CHECK(cm && tp_count(cm, "],[") == 7); /* 8 rows */
    free(out);
    char *evt[] = {"foldsweep", "evaluate", (char *)dir, path, "--allow-overlap", NULL};
    out = run_out(evt, log);
    CHECK(out && strstr(out, "Q8  ") && strstr(out, "columns predicted H G I E B T S C)"));
    free(out);
    /* 3-state labels for 8-state models: the predictions reduced, with a
     * note naming the file (test_evaluate_classes checks the scores). */
    snprintf(uci, sizeof uci, "%s/u.txt", tmp);
    tp_write_text(uci, "<>\nM h\nK e\nV _\nend\n");
    char *evu[] = {"foldsweep", "evaluate", (char *)dir, uci, "--allow-overlap", NULL};
    CHECK(tp_run_argv(evu, log) == 0);
    out = tp_read_file(log, NULL);
    CHECK_MSG(out && strstr(out, "u.txt has 3-state labels") && strstr(out, "8-state models on 3-state labels"),
              "%s", out ? out : "");
    free(out);
}

static char *board(const char *dir) { return tr_board(dir, tmp); }

int main(void)
{
    (void)TR_SWEEP; /* test_runs.h's 3-state sweep: this test writes its own */
    tp_tmpdir(tmp, sizeof tmp, "classes8");
    char sweep[300], a[300], log[300], path[400];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(log, sizeof log, "%s/log.txt", tmp);
    snprintf(path, sizeof path, "%s/r8.txt", tmp);
    write_records(path, 90, 88172645463325252ull);
    snprintf(path, sizeof path, "%s/r8t.txt", tmp);
    write_records(path, 20, 1234567);
    tp_write_text(sweep, SWEEP8);

    /* 1. A complete run: 2 trials x 3 folds (a1, on 1 thread), the same
     * board and models after a SIGKILL after 2 folds and a resume (a-kill);
     * the JSON has q8 and q3. */
    const TrSame same = {.sweep = sweep, .scratch = tmp, .tag = "a", .board = board, .kill_folds = 2, .models = 6};
    free(tr_same_everywhere(&same));
    snprintf(a, sizeof a, "%s/a1", tmp);
    snprintf(path, sizeof path, "%s/leaderboard.json", a);
    CHECK(tp_count_in_file(path, "\"rank\":") == 2);
    CHECK(tp_count_in_file(path, "\"classes\":8") == 2);
    CHECK(tp_count_in_file(path, "\"name\":\"q8\"") == 2);
    /* Each row's mean and each fold's (and the test section's, below). */
    CHECK(tp_count_in_file(path, "\"q8\":0.") >= 2 + 6 && tp_count_in_file(path, "\"q3\":0.") >= 2 + 6);
    CHECK(tp_count_in_file(path, "\"mcc_G\":") == 2);
    /* The test section's look at r8t.txt: Q3 (reduced) and Q8. */
    char *board_json = tp_read_file(path, NULL);
    const char *test = board_json ? strstr(board_json, "\"test\":{\"q3\":0.") : NULL;
    CHECK(test && !strncmp(strchr(test + 14, ','), ",\"q8\":0.", 8));
    free(board_json);
    snprintf(path, sizeof path, "%s/journal.jsonl", a);
    CHECK(tp_count_in_file(path, "\"kind\":\"fold\"") == 6);
    CHECK(tp_count_in_file(path, "\"confusion\":[[") == 6);
    snprintf(path, sizeof path, "%s/report.html", a);
    CHECK(tp_count_in_file(path, "&middot; Q8 ") >= 1 && tp_count_in_file(path, "<th>G (3-10 helix)</th>") >= 1);
    /* The learning curves name the accuracy they plot: Q8, not Q3. */
    CHECK(tp_count_in_file(path, ">val Q8<") >= 1 && tp_count_in_file(path, ">val Q3<") == 0);
    char *board_a = tr_board(a, tmp);
    CHECK(strstr(board_a, ",q3,q8,mcc_H,mcc_G,mcc_I,mcc_E,mcc_B,mcc_T,mcc_S,mcc_C,"));

    free(board_a);

    /* 3. A changed data.classes is refused on resume (the canonical sweep differs). */
    char sweep3[300];
    snprintf(sweep3, sizeof sweep3, "%s/s3.yaml", tmp);
    char *three = strdup(SWEEP8);
    memcpy(strstr(three, "classes: 8"), "classes: 3", 10);
    tp_write_text(sweep3, three);
    free(three);
    CHECK(tr_run(sweep3, a, "2", log) != 0);
    char *out = tp_read_file(log, NULL);
    CHECK_MSG(out && strstr(out, "classes"), "%s", out ? out : "");
    free(out);

    /* 4. A test section of 3-state labels (a UCI file) for 8-state trials:
     * scored by their predictions reduced, said in a note, the board's
     * test column Q3 alone (it was refused: "use data.classes: 3"). */
    char uci_sweep[300], c[300];
    snprintf(path, sizeof path, "%s/u3t.txt", tmp);
    write_uci(path, 6, 77);
    snprintf(uci_sweep, sizeof uci_sweep, "%s/s4.yaml", tmp);
    char *four = strdup(SWEEP8);
    memcpy(strstr(four, "r8t.txt"), "u3t.txt", 7);
    tp_write_text(uci_sweep, four);
    free(four);
    snprintf(c, sizeof c, "%s/c", tmp);
    CHECK(tr_run(uci_sweep, c, "2", log) == 0);
    out = tp_read_file(log, NULL);
    CHECK_MSG(out && strstr(out, "u3t.txt has 3-state labels, not DSSP 8-state ones"), "%s", out ? out : "");
    free(out);
    snprintf(path, sizeof path, "%s/leaderboard.json", c);
    board_json = tp_read_file(path, NULL);
    test = board_json ? strstr(board_json, "\"test\":{\"q3\":0.") : NULL;
    CHECK_MSG(test && !strncmp(strchr(test + 14, ','), ",\"q3_ci95\":", 11), "%s", board_json ? board_json : "");
    free(board_json);

    check_predict_evaluate(a, log);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return test_finish();
}
