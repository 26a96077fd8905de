/*
 * training.monitor (#26 item 4): which validation quantity chooses the kept
 * epoch, and what early stopping watches. The sweep key (errors with
 * line:col and hints; the default leaves configs, ids and the canonical
 * sweep as they were; q3 gives other ids); the trainer (with q3 the first
 * epoch of highest Q3 is kept, its weights and its number, on the same
 * training; patience stops on Q3 not improving); and whole runs through the
 * binary: the journal says what chose, the model files hold the best-Q3
 * epoch's weights, the results are bit for bit the same at 1 and 2 threads
 * and across a kill and resume mid-fold, and plan and the report say it.
 * Each command is printed so a failure can be rerun by hand.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/stat.h>

#include "modelfile/modelfile.h"
#include "sweep/sweep.h"
#include "test_lines.h"
#include "test_proc.h"
#include "test_runs.h"

static char tmp[256];

/* A learning rate that overfits within a few epochs, so that the lowest
 * validation loss and the highest validation Q3 fall on different epochs. */
#define DATA                                                                                                     \
    "data:\n  synth: {proteins: 60, seed: 3}\n  window: 9\n  folds: 3\n"                                          \
    "model:\n  depth: 1\n  filters: 8\n  kernel: 3\n  dense: 16\n"
#define TRAINING "training:\n  epochs: 8\n  batch_size: 16\n  learning_rate: 0.01\n  seed: 5\n"
#define EPOCHS 8

/* What the sweep without training.monitor gave before the key existed
 * (the build before it, `foldsweep plan`): its config and its id. */
static const char *PINNED_CONFIG =
    "{\"data\":{\"split\":\"kfold\"},\"model\":{\"init\":\"he\",\"layers\":[{\"activation\":\"swish\",\"filters\":8,"
    "\"kind\":\"conv1d\",\"width\":3},{\"activation\":\"swish\",\"kind\":\"dense\",\"units\":16}],\"window\":9},"
    "\"training\":{\"batch_size\":16,\"beta1\":0.9,\"beta2\":0.999,\"clip_norm\":0,\"early_stopping\":{\"criterion\":"
    "\"none\"},\"epochs\":8,\"epsilon\":1e-07,\"eval_batch\":256,\"learning_rate\":0.01,\"optimizer\":\"adam\","
    "\"seed\":5,"
    "\"weight_decay\":0}}";
static const char *PINNED_ID = "a1ddd9f6abc98970";

static int load(FsSweep *sw, const char *text, char *errs_out, size_t n)
{
    FsErrList errs = {0};
    int rc = sweep_load_string(sw, text, "m.yaml", &errs);
    size_t k = 0;
    if (errs_out) errs_out[0] = '\0';
    for (int i = 0; i < errs.n; i++) {
        printf("  %s\n", errs.msg[i]);
        if (errs_out && k < n) k += (size_t)snprintf(errs_out + k, n - k, "%s\n", errs.msg[i]);
    }
    errlist_free(&errs);
    return rc;
}

/* The sweep's trials with ids on its data (ds filled when not NULL). */
static int load_ids(FsSweep *sw, const char *text, FsDataset *ds)
{
    if (load(sw, text, NULL, 0)) return -1;
    FsDataset d;
    FsErrList errs = {0};
    if (sweep_load_data(sw, &d, &errs)) {
        for (int i = 0; i < errs.n; i++) printf("  %s\n", errs.msg[i]);
        errlist_free(&errs);
        return -1;
    }
    sweep_assign_ids(sw, d.fingerprint);
    if (ds)
        *ds = d;
    else
        data_free(&d);
    return 0;
}

static void sweep_key(void)
{
    char t[4][1024], errs[2048];
    const char *mon[4] = {"", "  monitor: loss\n", "  monitor: q3\n", "  monitor: [loss, q3]\n"};
    FsSweep s[4];
    for (int i = 0; i < 4; i++) {
        snprintf(t[i], sizeof t[i], "%s%s%s", DATA, TRAINING, mon[i]);
        CHECK_MSG(load_ids(&s[i], t[i], NULL) == 0, "sweep %d refused", i);
    }
    if (t_failures) return;
    /* The default stays out of the config, the id and the canonical sweep:
     * run folders and ids from before training.monitor stay valid. */
    CHECK_MSG(!strcmp(s[0].trials[0].config, PINNED_CONFIG), "config %s", s[0].trials[0].config);
    CHECK_MSG(!strcmp(s[0].trials[0].id, PINNED_ID), "id %s", s[0].trials[0].id);
    CHECK(!strcmp(s[0].trials[0].id, s[1].trials[0].id) && !strcmp(s[0].canonical, s[1].canonical));
    CHECK(!strstr(s[0].canonical, "monitor"));
    CHECK(s[0].trials[0].train.monitor == FS_MONITOR_LOSS && s[1].trials[0].train.monitor == FS_MONITOR_LOSS);
    /* q3: in the config (sorted keys), the canonical sweep and the id. */
    CHECK(s[2].trials[0].train.monitor == FS_MONITOR_Q3);
    CHECK(strcmp(s[2].trials[0].id, PINNED_ID) != 0);
    CHECK_CONTAINS(s[2].trials[0].config, "\"learning_rate\":0.01,\"monitor\":\"q3\",\"optimizer\":\"adam\"");
    CHECK_CONTAINS(s[2].canonical, "  seed: 5\n  monitor: q3\n");
    FsSweep again;
    CHECK(load_ids(&again, s[2].canonical, NULL) == 0 && again.n_trials == 1 &&
          !strcmp(again.trials[0].id, s[2].trials[0].id));
    sweep_free(&again);
    /* A list is a grid dimension like any training option. */
    CHECK(s[3].n_trials == 2 && !strcmp(s[3].trials[0].id, PINNED_ID) &&
          !strcmp(s[3].trials[1].id, s[2].trials[0].id));
    CHECK_CONTAINS(s[3].canonical, "  monitor: [loss, q3]\n");
    /* plan's and the progress lines' summary says it when it is not the loss. */
    char sum[256];
    sweep_train_summary(&s[2].trials[0].train, 0, sum, sizeof sum);
    CHECK_CONTAINS(sum, " monitor=q3 ");
    sweep_train_summary(&s[0].trials[0].train, 0, sum, sizeof sum);
    CHECK(!strstr(sum, "monitor"));
    for (int i = 0; i < 4; i++) sweep_free(&s[i]);

    /* Bad values: the value's line:col, what is expected, a hint. */
    const struct {
        const char *line, *want;
    } bad[] = {
        {"  monitor: quality\n", "m.yaml:15:12: training.monitor: expected loss or q3, got 'quality'\n"},
        /* Keras' names get ours as the hint. */
        {"  monitor: val_accuracy\n",
         "m.yaml:15:12: training.monitor: expected loss or q3, got 'val_accuracy' (did you mean 'q3'?)\n"},
        {"  monitor: val_loss\n",
         "m.yaml:15:12: training.monitor: expected loss or q3, got 'val_loss' (did you mean 'loss'?)\n"},
        {"  monitor: q4\n", "m.yaml:15:12: training.monitor: expected loss or q3, got 'q4' (did you mean 'q3'?)\n"},
        {"  monitor: [q3, Loss]\n",
         "m.yaml:15:17: training.monitor[2]: expected loss or q3, got 'Loss' (did you mean 'loss'?)\n"},
        {"  monitor: {q3: 1}\n",
         "m.yaml:15:12: training.monitor: expected loss or q3, or a list of them; got a mapping\n"},
        {"  monitr: q3\n", "m.yaml:15:3: unknown key 'monitr' in training (did you mean 'monitor'?)\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        FsSweep sw;
        snprintf(text, sizeof text, "%s%s%s", DATA, TRAINING, bad[i].line);
        CHECK_MSG(load(&sw, text, errs, sizeof errs) != 0, "%s accepted", bad[i].line);
        CHECK_MSG(!strcmp(errs, bad[i].want), "for %s got: %s", bad[i].line, errs);
    }
}

/* ---------------------------------------------------------------------- */
/* The trainer                                                             */

/* The first epoch (1-based) of the lowest (sign 1) or highest (-1) value. */
static int first_best(const float *v, int n, int sign)
{
    int b = 1;
    for (int e = 2; e <= n; e++)
        if (sign * v[e - 1] < sign * v[b - 1]) b = e;
    return b;
}

/* The epoch patience stops at on a curve (as stop.h defines it, min_delta
 * 0): the first t with t - (last strict improvement) >= patience. */
static int patience_stop(const float *v, int n, int sign, int patience)
{
    int last = 0;
    for (int t = 1; t <= n; t++) {
        if (last == 0 || sign * v[t - 1] < sign * v[last - 1]) last = t;
        if (t - last >= patience) return t;
    }
    return n;
}

static float *fit(const FsArch *a, const FsTrainSpec *ts, const FsDataset *ds, int fold, FsFitResult *r)
{
    train_result_alloc(r, ts->stop.max_epochs);
    float *w = train_result_alloc_weights(r, a);
    FsJob job = {a, ts, ds, fold, r, w, NULL, NULL, NULL, NULL, NULL, 0, 0};
    CHECK(train_job(&job) == 0 && r->status == FS_FIT_OK);
    return w;
}

/* Validation Q3 of weights w on the fold, predicted again. */
static float predict_q3(const FsArch *a, const float *w, const FsDataset *ds, int fold)
{
    FsNet net;
    FsErr err = {0};
    CHECK(model_compile(&net, a, 64, &err) == 0);
    uint32_t nt, nv;
    uint32_t *idx = data_fold_examples(ds, fold, 0, &nt, &nv);
    float *probs = malloc(sizeof(float) * 3 * nv);
    uint8_t *pred = malloc(nv);
    train_predict(&net, w, ds, idx + nt, nv, 64, probs, pred);
    uint64_t ok = 0;
    for (uint32_t i = 0; i < nv; i++) ok += pred[i] == FS_SS_CLASS(ds->ss[idx[nt + i]]);
    free(idx), free(probs), free(pred);
    return nv ? (float)((double)ok / (double)nv) : 0.0f;
}

static float confusion_q3(const uint64_t c[][FS_MAX_CLASSES])
{
    uint64_t n = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) n += c[a][b];
    return n ? (float)((double)(c[0][0] + c[1][1] + c[2][2]) / (double)n) : 0.0f;
}

static void trainer(void)
{
    FsSweep sw;
    FsDataset ds;
    char text[1024];
    snprintf(text, sizeof text, "%s%s  monitor: [loss, q3]\n", DATA, TRAINING);
    if (load_ids(&sw, text, &ds)) {
        CHECK(0);
        return;
    }
    const FsArch *arch = &sw.trials[0].arch;
    FsTrainSpec tl = sw.trials[0].train, tq = sw.trials[1].train;
    /* The same random streams: the same training, only the kept epoch differs. */
    tl.seed[1] = tq.seed[1] = 99;
    float curves[3][2][EPOCHS];
    int differ = 0;
    for (int f = 0; f < 3; f++) {
        tl.seed[2] = tq.seed[2] = (uint64_t)f;
        FsFitResult rl, rq;
        float *wl = fit(arch, &tl, &ds, f, &rl), *wq = fit(arch, &tq, &ds, f, &rq);
        size_t b = sizeof(float) * EPOCHS;
        CHECK(rl.epochs == EPOCHS && rq.epochs == EPOCHS);
        CHECK_MSG(!memcmp(rl.curves.val_loss, rq.curves.val_loss, b) &&
                      !memcmp(rl.curves.val_q3, rq.curves.val_q3, b) &&
                      !memcmp(rl.curves.train_loss, rq.curves.train_loss, b),
                  "fold %d: the monitor changed the training", f);
        int bl = first_best(rl.curves.val_loss, EPOCHS, 1), bq = first_best(rq.curves.val_q3, EPOCHS, -1);
        printf("fold %d: lowest val loss at epoch %d, highest val Q3 at %d\n", f, bl, bq);
        CHECK_MSG(rl.best_epoch == bl && rl.monitor == FS_MONITOR_LOSS, "fold %d: loss kept %d", f, rl.best_epoch);
        CHECK_MSG(rq.best_epoch == bq && rq.monitor == FS_MONITOR_Q3, "fold %d: q3 kept %d, not %d", f, rq.best_epoch,
                  bq);
        /* The result's scores and weights are the kept epoch's. */
        CHECK(rq.best_val_loss == rq.curves.val_loss[bq - 1]);
        CHECK(confusion_q3(rq.best_confusion) == rq.curves.val_q3[bq - 1]);
        CHECK_MSG(predict_q3(arch, wq, &ds, f) == rq.curves.val_q3[bq - 1], "fold %d: q3 weights", f);
        CHECK_MSG(predict_q3(arch, wl, &ds, f) == rl.curves.val_q3[bl - 1], "fold %d: loss weights", f);
        if (bl != bq) {
            differ++;
            CHECK(memcmp(wl, wq, sizeof(float) * (size_t)rq.n_weights) != 0);
        }
        memcpy(curves[f][0], rl.curves.val_loss, b);
        memcpy(curves[f][1], rq.curves.val_q3, b);
        train_result_free(&rl), train_result_free(&rq);
    }
    CHECK_MSG(differ >= 1, "no fold has its best Q3 and best loss on different epochs: nothing tested");

    /* Patience watches the monitored quantity. */
    tl.stop.kind = tq.stop.kind = FS_STOP_PATIENCE;
    tl.stop.patience = tq.stop.patience = 2;
    differ = 0;
    for (int f = 0; f < 3; f++) {
        tl.seed[2] = tq.seed[2] = (uint64_t)f;
        int el = patience_stop(curves[f][0], EPOCHS, 1, 2), eq = patience_stop(curves[f][1], EPOCHS, -1, 2);
        FsFitResult rl, rq;
        fit(arch, &tl, &ds, f, &rl);
        fit(arch, &tq, &ds, f, &rq);
        printf("fold %d: patience 2 stops after epoch %d on loss, %d on Q3\n", f, el, eq);
        CHECK_MSG(rl.epochs == el && rq.epochs == eq, "fold %d: stopped after %d (loss) and %d (q3)", f, rl.epochs,
                  rq.epochs);
        CHECK(rq.halted_by == (eq < EPOCHS) && rq.best_epoch == first_best(curves[f][1], eq, -1));
        differ += el != eq;
        train_result_free(&rl), train_result_free(&rq);
    }
    CHECK_MSG(differ >= 1, "patience stops at the same epoch on loss and on Q3 in every fold: nothing tested");
    data_free(&ds);
    sweep_free(&sw);
}

/* ---------------------------------------------------------------------- */
/* Whole runs                                                              */

static char sweep_path[300], logp[300];

static void same_run(const char *ref, const char *dir, const char *what)
{
    char *a = tr_board(ref, tmp), *b = tr_board(dir, tmp);
    CHECK_MSG(strcmp(a, b) == 0, "%s: leaderboard differs:\n%s\nvs\n%s", what, a, b);
    free(a), free(b);
    CHECK_MSG(tr_same_models(ref, dir, what) == 6, "%s: not 6 model files", what);
}

/* The run's records and model files: what chose each kept epoch. */
static void check_run(const char *dir, const FsSweep *sw, const FsDataset *ds)
{
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_read(&j, dir, &err) == 0, "%s", err.msg);
    CHECK(j.n_folds == 6);
    int halted = 0;
    for (int i = 0; i < j.n_folds; i++) {
        const FsFoldRecord *fr = &j.folds[i];
        int q3 = !strcmp(fr->trial, sw->trials[0].id);
        CHECK(q3 || !strcmp(fr->trial, sw->trials[1].id));
        CHECK(fr->r.monitor == (q3 ? FS_MONITOR_Q3 : FS_MONITOR_LOSS));
        int want = q3 ? first_best(fr->r.curves.val_q3, fr->r.epochs, -1)
                      : first_best(fr->r.curves.val_loss, fr->r.epochs, 1);
        CHECK_MSG(fr->r.best_epoch == want, "%s fold %d: kept %d, not %d", q3 ? "q3" : "loss", fr->fold,
                  fr->r.best_epoch, want);
        if (!q3) continue;
        halted += fr->r.halted_by;
        /* The model file holds that epoch's weights and says which. */
        char path[600];
        snprintf(path, sizeof path, "%s/models/%s/fold%d.safetensors", dir, fr->trial, fr->fold);
        FsSavedModel m;
        CHECK_MSG(modelfile_load(&m, path, 64, &err) == 0, "%s", err.msg);
        if (err.msg[0]) continue;
        CHECK(m.info.best_epoch == fr->r.best_epoch);
        CHECK(predict_q3(&sw->trials[0].arch, m.weights, ds, fr->fold) == fr->r.curves.val_q3[fr->r.best_epoch - 1]);
        modelfile_free(&m);
    }
    CHECK_MSG(halted >= 1, "no fold of the q3 trial stopped early: patience untested");
    journal_close(&j);
    char journal[400];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", dir);
    CHECK(tp_count_in_file(journal, "\"diverged_step\":0,\"monitor\":\"q3\",") == 3); /* the q3 trial's folds */
    CHECK(tp_count_in_file(journal, "\"monitor\":\"loss\"") == 0);                       /* absent: the loss */
}

/* A fold record whose monitor is neither name (its checksum made good) is
 * a damaged line, named, not a loss-chosen fold. */
static void bad_monitor(const char *run)
{
    char src[400], dir[300], dst[400];
    snprintf(src, sizeof src, "%s/journal.jsonl", run);
    snprintf(dir, sizeof dir, "%s/bad", tmp);
    snprintf(dst, sizeof dst, "%s/journal.jsonl", dir);
    CHECK(mkdir(dir, 0755) == 0);
    char *text = tp_read_file(src, NULL);
    FILE *f = fopen(dst, "wb");
    int edited = 0;
    for (char *line = text; f && line && *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *json = tl_json(line, len);
        char *at = json && !edited ? strstr(json, "\"monitor\":\"q3\",\"best_val_loss\"") : NULL;
        if (at) {
            memcpy(at + 11, "Q3", 2);
            char *l = tl_line(json, strlen(json));
            fputs(l, f);
            free(l);
            edited = 1;
        } else {
            fwrite(line, 1, len + (end != NULL), f);
        }
        free(json);
        line = end ? end + 1 : line + len;
    }
    if (f) fclose(f);
    free(text);
    CHECK(edited);
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_read(&j, dir, &err) == 0, "%s", err.msg);
    CHECK(j.bad_lines == 1 && j.n_folds == 5);
    CHECK_CONTAINS(j.first_bad_why, "monitor loss or q3");
    printf("a fold record with monitor \"Q3\": line %ld: %s\n", j.first_bad_line, j.first_bad_why);
    journal_close(&j);
}

static int run_env(const char *env, const char *dir, const char *threads)
{
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "%s '%s' run '%s' --out '%s' --threads %s >'%s' 2>&1", env, FS_TEST_BIN,
             sweep_path, dir, threads, logp);
    printf("$ %s\n", cmd);
    fflush(stdout);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void runs(void)
{
    char text[1024], a[300], b[300], c[300], path[400];
    snprintf(text, sizeof text, "%s%s  monitor: [q3, loss]\n  early_stopping: {criterion: patience, patience: 2}\n",
             DATA, TRAINING);
    snprintf(sweep_path, sizeof sweep_path, "%s/s.yaml", tmp);
    snprintf(logp, sizeof logp, "%s/log.txt", tmp);
    tp_write_text(sweep_path, text);
    FsSweep sw;
    FsDataset ds;
    if (load_ids(&sw, text, &ds)) {
        CHECK(0);
        return;
    }
    snprintf(a, sizeof a, "%s/a", tmp);
    snprintf(b, sizeof b, "%s/b", tmp);
    snprintf(c, sizeof c, "%s/c", tmp);

    CHECK_MSG(run_env("", a, "1") == 0, "%s", tp_read_file(logp, NULL));
    check_run(a, &sw, &ds);
    bad_monitor(a);
    CHECK_MSG(run_env("", b, "2") == 0, "%s", tp_read_file(logp, NULL));
    same_run(a, b, "2 threads");
    /* Killed mid-fold right after a checkpoint (the first fold is the q3
     * trial's: its best and its patience count must come back), resumed. */
    CHECK(run_env("FOLDSWEEP_TEST_CKPT_STEPS=500 FOLDSWEEP_TEST_KILL_AFTER_CKPT=5", c, "1") != 0);
    snprintf(path, sizeof path, "%s/checkpoints/%s", c, sw.trials[0].id);
    struct stat sb;
    CHECK_MSG(stat(path, &sb) == 0, "no checkpoint of the q3 trial before the kill");
    tr_wait_unlocked(c);
    CHECK(run_env("FOLDSWEEP_TEST_CKPT_STEPS=500", c, "1") == 0);
    /* Resumed after its kept epoch, so the best so far and the epochs
     * since came back from the checkpoint. */
    char *log = tp_read_file(logp, NULL), want[200];
    snprintf(want, sizeof want, "trial %s fold 0 resumed from its checkpoint at epoch ", sw.trials[0].id);
    const char *at = log ? strstr(log, want) : NULL;
    int resumed = at ? atoi(at + strlen(want)) : 0;
    FsJournal j;
    FsErr err = {0};
    CHECK_MSG(journal_read(&j, c, &err) == 0, "%s", err.msg);
    const FsFoldRecord *fr = journal_find_fold(&j, sw.trials[0].id, 0);
    CHECK_MSG(fr && resumed > fr->r.best_epoch, "the q3 trial's fold 0 (kept epoch %d) resumed at epoch %d: %s",
              fr ? fr->r.best_epoch : -1, resumed, log);
    journal_close(&j);
    free(log);
    same_run(a, c, "killed and resumed");

    /* plan and the report say what chose the kept epochs. */
    CHECK(tp_run("plan '%s'", sweep_path) == 0);
    CHECK(tp_count(out_text, " monitor=q3 ") == 1);
    snprintf(path, sizeof path, "%s/report.html", a);
    CHECK(tp_count_in_file(path, "kept epoch: highest val Q3") == 1);
    CHECK(tp_count_in_file(path, "kept epoch: lowest val loss") == 1);
    CHECK(tp_count_in_file(path, "stop: patience min_delta=0 patience=2 on val Q3") == 1);
    CHECK(tp_count_in_file(path, "<th>kept (highest val Q3) / epochs</th>") == 1);
    data_free(&ds);
    sweep_free(&sw);
}

int main(void)
{
    (void)TR_SWEEP;
    tp_tmpdir(tmp, sizeof tmp, "monitor");
    sweep_key();
    trainer();
    runs();
    char rm[400];
    snprintf(rm, sizeof rm, "rm -rf %s", tmp);
    if (!t_failures && system(rm) != 0) printf("could not remove %s\n", tmp);
    return test_finish();
}
