/*
 * test_models: trained models out of whole runs (docs/models.md).
 *  1. every fold's model file is named in its journal record with the
 *     file's size and CRC, and loading it and scoring its validation fold
 *     gives the journal's confusion matrix exactly (the validation Q3 bit
 *     for bit);
 *  2. one thread and two give byte-identical model files;
 *  3. SIGKILL after a model file is in place but before its journal
 *     record: the rerun completes with the same leaderboard and files;
 *  4. a missing and a damaged file are reported and restored on rerun;
 *  5. run.keep_models: the best N trials' files stay (also across an
 *     interrupted run and its resume), `none` removes all, pruned trials are
 *     not retrained, and export / predict say why they cannot use them;
 *  6. export and predict from the export equal predict from the run folder.
 */
#include <signal.h>
#include <sys/stat.h>

#include "journal/journal.h"
#include "modelfile/modelfile.h"
#include "sweep/sweep.h"
#include "train/train.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256], log_path[320];

static char *board(const char *dir) { return tr_board(dir, tmp); }

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2000];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    printf("$ %s\n", cmd);
    fflush(stdout);
    return system(cmd);
}

static int same_models(const char *a, const char *b)
{
    return sh("diff -r '%s/models' '%s/models'", a, b) == 0;
}

static int run(const char *sweep, const char *dir, const char *threads) { return tr_run(sweep, dir, threads, log_path); }

static int log_has(const char *s)
{
    char *t = tp_read_file(log_path, NULL);
    int r = t && strstr(t, s);
    free(t);
    return r;
}

static int trial_dirs(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s/models' 2>/dev/null | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1) n = -1;
    if (p) pclose(p);
    return n;
}

/* 1: each model scores its own validation fold as the journal says. */
static void check_round_trip(const char *sweep_path, const char *dir)
{
    FsSweep sw;
    FsErrList errs = {0};
    FsDataset ds;
    FsJournal j;
    FsErr err = {0};
    CHECK(sweep_load_file(&sw, sweep_path, &errs) == 0);
    CHECK(sweep_load_data(&sw, &ds, &errs) == 0);
    CHECK(journal_read(&j, dir, &err) == 0);
    int checked = 0;
    for (int i = 0; i < j.n_folds; i++) {
        const FsFoldRecord *fr = &j.folds[i];
        if (fr->r.status != FS_FIT_OK) continue;
        char path[600], why[200];
        snprintf(path, sizeof path, "%s/%s", dir, fr->model.file);
        CHECK_MSG(fr->model.file[0] && modelfile_verify(path, fr->model.bytes, fr->model.crc32, why, sizeof why) == 0,
                  "%s: %s", path, fr->model.file[0] ? why : "not named in the fold record");
        FsSavedModel m;
        if (modelfile_load(&m, path, 64, &err) != 0) {
            CHECK_MSG(0, "%s", err.msg);
            continue;
        }
        CHECK(!strcmp(m.info.trial, fr->trial) && m.info.fold == fr->fold && m.info.best_epoch == fr->r.best_epoch);
        CHECK(m.info.data_fingerprint == ds.fingerprint && m.info.folds == 3);
        uint32_t n = data_examples(&ds, fr->fold, 1, NULL);
        uint32_t *idx = malloc(sizeof(uint32_t) * n);
        data_examples(&ds, fr->fold, 1, idx);
        float *p = malloc(sizeof(float) * 3 * n);
        uint8_t *pred = malloc(n);
        train_predict(&m.net, m.weights, &ds, idx, n, 64, p, pred);
        uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
        for (uint32_t k = 0; k < n; k++) conf[FS_SS_CLASS(ds.ss[idx[k]])][pred[k]]++;
        CHECK_MSG(memcmp(conf, fr->r.best_confusion, sizeof conf) == 0, "trial %s fold %d: the saved model scores "
                  "its validation fold differently from the journal", fr->trial, fr->fold);
        checked++;
        free(idx), free(p), free(pred);
        modelfile_free(&m);
    }
    CHECK_MSG(checked == 24, "%d models checked", checked);
    journal_close(&j);
    data_free(&ds);
    sweep_free(&sw);
}

/* The trial ids of the leaderboard's first n rows (a CSV's second column). */
static void top_ids(const char *dir, int n, char ids[][17])
{
    char *b = board(dir), *line = strchr(b, '\n');
    for (int k = 0; k < n && line; k++) {
        char *c = strchr(line + 1, ',');
        snprintf(ids[k], 17, "%.16s", c ? c + 1 : "");
        line = strchr(line + 1, '\n');
    }
    free(b);
}

static int has_trial_dir(const char *dir, const char *id)
{
    char p[600];
    struct stat s;
    snprintf(p, sizeof p, "%s/models/%s", dir, id);
    return stat(p, &s) == 0;
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "models");
    snprintf(log_path, sizeof log_path, "%s/log.txt", tmp);
    char sweep[300], keep2[300], none[300], a[300], b[300], c[300], d[300], e[300], f[300], text[2000];
    snprintf(sweep, sizeof sweep, "%s/s.yaml", tmp);
    snprintf(keep2, sizeof keep2, "%s/keep2.yaml", tmp);
    snprintf(none, sizeof none, "%s/none.yaml", tmp);
    snprintf(text, sizeof text, "%srun:\n  keep_models: all\n", TR_SWEEP);
    tp_write_text(sweep, text);
    snprintf(text, sizeof text, "%srun:\n  keep_models: 2\n", TR_SWEEP);
    tp_write_text(keep2, text);
    snprintf(text, sizeof text, "%srun:\n  keep_models: none\n", TR_SWEEP);
    tp_write_text(none, text);
    const char *names[] = {a, b, c, d, e, f};
    for (int i = 0; i < 6; i++) snprintf((char *)names[i], 300, "%s/%c", tmp, 'a' + i);

    /* 1, 2 */
    CHECK(run(sweep, a, "2") == 0);
    check_round_trip(sweep, a);
    CHECK(run(sweep, b, "1") == 0);
    CHECK_MSG(same_models(a, b), "model files differ between 1 and 2 threads");
    char *ref = board(a);

    /* 3: killed right after the 5th model file, before its record. */
    char jc[360];
    snprintf(jc, sizeof jc, "%s/journal.jsonl", c);
    setenv("FOLDSWEEP_TEST_KILL_AFTER_MODEL", "5", 1);
    CHECK(run(sweep, c, "1") == 128 + SIGKILL);
    unsetenv("FOLDSWEEP_TEST_KILL_AFTER_MODEL");
    CHECK(tp_count_in_file(jc, "\"kind\":\"fold\"") == 4);
    CHECK(run(sweep, c, "1") == 0);
    CHECK(tp_count_in_file(jc, "\"kind\":\"fold\"") == 24);
    char *got = board(c);
    CHECK_MSG(!strcmp(ref, got), "leaderboard after the kill differs:\n%s\nvs\n%s", got, ref);
    free(got);
    CHECK_MSG(same_models(a, c), "model files after the kill differ");

    /* 4: one file removed, one damaged; the rerun restores both. */
    FsJournal j;
    FsErr err = {0};
    CHECK(journal_read(&j, c, &err) == 0);
    char lost[600], bad[600];
    snprintf(lost, sizeof lost, "%s/%s", c, j.folds[3].model.file);
    snprintf(bad, sizeof bad, "%s/%s", c, j.folds[7].model.file);
    journal_close(&j);
    CHECK(remove(lost) == 0);
    size_t n;
    char *bytes = tp_read_file(bad, &n);
    if (bytes && n > 100) bytes[n - 9] ^= 0x20; /* one bit of one weight */
    tp_write_file(bad, bytes, n, "wb");
    free(bytes);
    CHECK(run(sweep, c, "2") == 0);
    CHECK(log_has("is missing") && log_has(strrchr(lost, '/') + 1));
    CHECK(log_has("checksum") && log_has("is trained again to restore it"));
    CHECK(tp_count_in_file(jc, "\"kind\":\"model\"") == 2);
    CHECK(tp_count_in_file(jc, "\"kind\":\"fold\"") == 24);
    CHECK_MSG(same_models(a, c), "restored model files differ");
    got = board(c);
    CHECK(!strcmp(ref, got));
    free(got);
    CHECK(run(sweep, c, "2") == 0);
    CHECK(!log_has("trained again") && log_has("0 folds to train"));

    /* 5: keep the best 2, across an interruption: SIGTERM once 10 folds are
     * in, then the resume. */
    char jd[360];
    snprintf(jd, sizeof jd, "%s/journal.jsonl", d);
    char *argv_d[] = {"foldsweep", "run", keep2, "--out", d, "--threads", "1", "--grace", "0", NULL};
    pid_t pid = tp_spawn(argv_d, log_path);
    for (int i = 0; i < 5000 && tp_count_in_file(jd, "\"kind\":\"fold\"") < 10; i++) usleep(2000);
    kill(pid, SIGTERM);
    int rc = tp_wait(pid);
    CHECK(rc == 3 || rc == 0);
    printf("interrupted with %d fold records\n", tp_count_in_file(jd, "\"kind\":\"fold\""));
    CHECK(run(keep2, d, "2") == 0);
    char top[3][17];
    top_ids(d, 3, top);
    CHECK(trial_dirs(d) == 2);
    CHECK(has_trial_dir(d, top[0]) && has_trial_dir(d, top[1]) && !has_trial_dir(d, top[2]));
    CHECK(tp_count_in_file(jd, "\"kind\":\"prune\"") == 6);
    got = board(d);
    CHECK(!strcmp(ref, got));
    free(got);
    CHECK(run(keep2, d, "2") == 0); /* nothing retrained, nothing asked for */
    CHECK(log_has("0 folds to train") && !log_has("trained again"));
    CHECK(tp_run("export '%s' --rank 3 -o '%s/x3'", d, tmp) == 1);
    CHECK_CONTAINS(err_text, "were removed at the end of the run (run.keep_models");
    CHECK(tp_run("predict '%s' --rank 3 '%s/in.fasta'", d, tmp) == 1);
    CHECK_CONTAINS(err_text, "run.keep_models");

    /* keep_models: none */
    CHECK(run(none, e, "2") == 0);
    CHECK(log_has("removed the fold models of 8 trials (run.keep_models: none)"));
    CHECK(trial_dirs(e) == 0);
    CHECK(tp_run("export '%s' -o '%s/x0'", e, tmp) == 1);

    /* 6: export, then predict from it and from the run folder. */
    tp_write_text(strcat(strcpy(text, tmp), "/in.fasta"), ">q1 test\nMKVLAAGIVGLLLAQSPERTWYHHE\n>q2\nacdefghiklmnpqrstvwyXB\n");
    char exp[320];
    snprintf(exp, sizeof exp, "%s/export", tmp);
    CHECK(tp_run("export '%s' --rank 2 -o '%s'", a, exp) == 0);
    CHECK_CONTAINS(out_text, "exported trial");
    char mj[400];
    snprintf(mj, sizeof mj, "%s/model.json", exp);
    CHECK(tp_count_in_file(mj, "\"file\": \"fold") == 3);
    CHECK(tp_count_in_file(mj, "\"rank\": 2") == 1);
    CHECK(tp_count_in_file(mj, "\"arch\": {\"window\":9") == 1);
    /* Its fold scores are the leaderboard's, to the last digit (they were
     * the model file's floats, to 9 digits: 0.688634217 for 0.68863419293218719). */
    {
        char *model = tp_read_file(mj, NULL);
        CHECK(tp_run("leaderboard '%s' --format json", a) == 0);
        const char *row = strstr(out_text, "\"rank\":2,"), *f0 = row ? strstr(row, "\"folds\":[{\"fold\":0,") : NULL;
        const char *q3 = f0 ? strstr(f0, "\"q3\":") : NULL, *m0 = model ? strstr(model, "\"fold\": 0,") : NULL;
        const char *vq = m0 ? strstr(m0, "\"val_q3\": ") : NULL;
        CHECK_MSG(q3 && vq && strtod(q3 + 5, NULL) == strtod(vq + 10, NULL), "model.json %.30s, leaderboard %.30s",
                  vq ? vq : "-", q3 ? q3 : "-");
        free(model);
    }
    CHECK(tp_run("predict '%s' '%s' --format csv", exp, text) == 0);
    char *from_export = strdup(out_text);
    CHECK(tp_count(from_export, "\n") == 1 + 25 + 22);
    CHECK_CONTAINS(err_text, "1 residue outside the 20 standard amino acids (B)");
    CHECK(tp_run("predict '%s' --rank 2 '%s' --format csv --threads 1", a, text) == 0);
    CHECK_MSG(!strcmp(from_export, out_text), "predictions from the export and the run folder differ");
    /* The same proteins as a record file (labels under the sequences): read
     * as records, not as sequence, with a note. */
    char rec[400];
    snprintf(rec, sizeof rec, "%s/in.records", tmp);
    tp_write_text(rec, ">q1\nMKVLAAGIVGLLLAQSPERTWYHHE\nCCCCHHHHHHHHHHHCCCCEEEEEC\n\n"
                       ">q2\nacdefghiklmnpqrstvwyXB\nCCCCCCCCCCCCCCCCCCCCCC\n");
    CHECK(tp_run("predict '%s' '%s' --format csv", exp, rec) == 0);
    CHECK(!strcmp(from_export, out_text));
    CHECK_CONTAINS(err_text, "reads as a records file; its labels are not used");
    /* FASTA that only the line count made a record: q1 wrapped over two
     * lines (then a blank line), the same predictions as the one-line
     * FASTA; and a one-letter id after "> " (once read as a UCI file). */
    tp_write_text(rec, "> q1\nMKVLAAGIVGLLL\nAQSPERTWYHHE\n\n>q2\nacdefghiklmnpqrstvwyXB\n");
    CHECK(tp_run("predict '%s' '%s' --format csv", exp, rec) == 0);
    CHECK_MSG(!strcmp(from_export, out_text), "a wrapped FASTA read other than as FASTA: %s", err_text);
    CHECK(!strstr(err_text, "reads as a"));
    /* Several proteins to standard output without --format: fasta, which
     * names them (ss2, the default, holds one); asked for, ss2 is refused. */
    CHECK(tp_run("predict '%s' '%s'", exp, text) == 0);
    CHECK(tp_count(out_text, ">q") == 2 && tp_count(out_text, "\n") == 6);
    CHECK_CONTAINS(err_text, "2 proteins, written as --format fasta");
    CHECK(tp_run("predict '%s' '%s' --format ss2", exp, text) == 1);
    CHECK_CONTAINS(err_text, "a PSIPRED ss2 file holds one and does not name it");
    tp_write_text(rec, "> z\nMKVLAAGIVGLLLAQSPERTWYHHE\n");
    CHECK_MSG(tp_run("predict '%s' '%s' --format csv", exp, rec) == 0, "%s", err_text);
    CHECK(tp_count(out_text, "\nz,") == 25 && !strstr(err_text, "reads as a"));
    /* The trial by id prefix, and one fold alone. */
    char id[3][17];
    top_ids(a, 2, id);
    char prefix[9];
    snprintf(prefix, sizeof prefix, "%.8s", id[1]);
    CHECK(tp_run("predict '%s' --trial %s '%s' --format csv", a, prefix, text) == 0);
    CHECK(!strcmp(from_export, out_text));
    CHECK(tp_run("predict '%s' --fold 1 '%s' --format csv", exp, text) == 0);
    CHECK(strcmp(from_export, out_text) != 0); /* one model is not the ensemble */
    char fold1[400];
    snprintf(fold1, sizeof fold1, "%s/fold1.safetensors", exp);
    char *one = strdup(out_text);
    CHECK(tp_run("predict '%s' '%s' --format csv", fold1, text) == 0);
    CHECK(!strcmp(one, out_text));
    free(one);
    /* Per-protein files. */
    CHECK(tp_run("predict '%s' '%s' -o '%s/ss2/'", exp, text, tmp) == 0);
    char q1[400];
    snprintf(q1, sizeof q1, "%s/ss2/q1.ss2", tmp);
    CHECK(tp_count_in_file(q1, "\n") == 2 + 25); /* PSIPRED's header, a blank line, the rows */
    free(from_export);
    /* A reader that stops early (| head -1) ends predict quietly, exit 0. */
    char big[400], pcmd[1600];
    snprintf(big, sizeof big, "%s/big.fasta", tmp);
    FILE *bf = fopen(big, "w");
    fputs(">big\n", bf);
    for (int i = 0; i < 20000; i++) fputc(FS_AA_LETTERS[(i * 7) % 20], bf);
    fputs("\n", bf);
    fclose(bf);
    snprintf(pcmd, sizeof pcmd, "bash -c \"'%s' predict '%s' '%s' --format csv 2>'%s/pipe.err' | head -1 >/dev/null; "
             "exit \\${PIPESTATUS[0]}\"", FS_TEST_BIN, exp, big, tmp);
    printf("$ %s\n", pcmd);
    fflush(stdout);
    int prc = system(pcmd);
    CHECK_MSG(WIFEXITED(prc) && WEXITSTATUS(prc) == 0, "predict | head -1 exited %d", WEXITSTATUS(prc));
    snprintf(pcmd, sizeof pcmd, "%s/pipe.err", tmp);
    CHECK(tp_count_in_file(pcmd, "foldsweep") == 0);
    /* Mistakes: a usage error and a clear message each. */
    CHECK(tp_run("predict '%s' --trial zzzz '%s'", a, text) == 1);
    CHECK_CONTAINS(err_text, "no trial 'zzzz'");
    CHECK(tp_run("predict '%s'", exp) == 2);
    CHECK(tp_run("predict '%s' '%s' --format pdf", exp, text) == 2);
    CHECK(tp_run("export '%s' -o '%s/x' --rank 99", a, tmp) == 1);
    CHECK_CONTAINS(err_text, "no trial at rank 99");

    free(ref);
    if (!t_failures) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0) printf("could not remove %s\n", tmp);
    }
    return test_finish();
}
