/*
 * report.c: from journal records to ranked leaderboard rows. One row per
 * trial seen in the journal (trial, fold or failure record), its folds
 * looked up by (trial, fold id), statistics over the folds that trained,
 * then one sort: status group, metric, trial index, id.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h" /* the fold vocabulary */
#include "json/json.h"
#include "metrics/metrics.h"
#include "report/report.h"
#include "report/report_int.h"

const char *report_status_name(FsTrialStatus s)
{
    static const char *names[] = {"ok", "incomplete", "pruned", "diverged", "failed"};
    return (unsigned)s < 5 ? names[s] : "?";
}

char *report_metric_text(char *buf, size_t n, FsMetricKind m, double v)
{
    if (m != FS_METRIC_LOSS) return fs_format_percent(buf, n, v);
    if (!isfinite(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.4f", v);
    return buf;
}

int report_format_parse(const char *s)
{
    if (!strcmp(s, "table")) return FS_REPORT_TABLE;
    if (!strcmp(s, "md") || !strcmp(s, "markdown")) return FS_REPORT_MD;
    if (!strcmp(s, "csv")) return FS_REPORT_CSV;
    if (!strcmp(s, "json")) return FS_REPORT_JSON;
    return -1;
}

void report_spec_from_sweep(FsReportSpec *spec, const FsSweep *sw)
{
    memset(spec, 0, sizeof *spec);
    spec->metric = sw->metric;
    spec->predefined = sw->predefined;
    spec->folds = sweep_fold_count(sw);
    spec->repeats = sw->predefined ? 1 : sw->repeats;
    spec->alpha = sw->alpha;
    spec->n_objectives = sw->n_objectives;
    memcpy(spec->objectives, sw->objectives, sizeof spec->objectives);
    spec->n_trials = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : sw->n_trials; /* tpe: the budget, not the grid */
}

int report_spec_from_journal(FsReportSpec *spec, const FsJournal *j)
{
    const FsRunRecord *run = journal_last_run(j);
    int metric = run ? metrics_kind_parse(run->metric) : -1;
    if (!run || run->folds < 1 || metric < 0) return -1;
    memset(spec, 0, sizeof *spec);
    spec->metric = (FsMetricKind)metric;
    spec->folds = run->folds;
    /* A predefined split is one fold with id FS_FOLD_PREDEFINED. */
    spec->predefined = run->folds == 1;
    spec->n_trials = run->n_trials;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Architecture summary                                                     */

static void app(char *out, size_t n, const char *s)
{
    size_t k = strlen(out);
    if (k + 1 < n) snprintf(out + k, n - k, "%s", s);
}

static const char *sval(const FsJson *obj, const char *key)
{
    const FsJson *v = json_get(obj, key);
    return v && (v->type == FS_JSON_STRING || v->type == FS_JSON_NUMBER) ? v->str : NULL;
}

/* A float setting as the value the user wrote: configs of runs made before
 * floats were written shortest hold 0.300000012 for 0.3; both show "0.3". */
static const char *float_sval(const FsJson *obj, const char *key, char *buf, size_t n)
{
    const char *s = sval(obj, key);
    char *end;
    float v = s ? strtof(s, &end) : 0.0f;
    if (!s || end == s || *end) return s;
    return fs_format_float(buf, n, v);
}

static void layer_summary(const FsJson *l, char *out, size_t n)
{
    const char *kind = sval(l, "kind");
    if (!kind) kind = sval(l, "type");
    if (!kind) kind = "?";
    const char *act = sval(l, "activation");
    if (!act) act = sval(l, "act");
    const char *width = sval(l, "width");
    char s[96];
    if (!strncmp(kind, "conv", 4)) {
        const char *f = sval(l, "filters");
        snprintf(s, sizeof s, "conv%sx%s", f ? f : "?", width ? width : "?");
    } else if (!strcmp(kind, "dense")) {
        const char *u = sval(l, "units");
        snprintf(s, sizeof s, "dense%s", u ? u : "?");
    } else if (!strcmp(kind, "dropout")) {
        char num[FS_FLOAT_TEXT];
        const char *r = float_sval(l, "rate", num, sizeof num);
        snprintf(s, sizeof s, "drop%s", r ? r : "?");
    } else if (!strcmp(kind, "batchnorm")) {
        snprintf(s, sizeof s, "bn");
    } else if (!strcmp(kind, "layernorm")) {
        snprintf(s, sizeof s, "ln");
    } else if (!strcmp(kind, "highway")) {
        snprintf(s, sizeof s, "hw%s", width ? width : "?");
    } else if (!strcmp(kind, "gru") || !strcmp(kind, "lstm")) { /* as sweep_arch_summary says it: bigru64, lstm64 */
        const FsJson *bd = json_get(l, "bidirectional");
        const char *u = sval(l, "units");
        snprintf(s, sizeof s, "%s%s%s", bd && bd->type == FS_JSON_FALSE ? "" : "bi", kind, u ? u : "?");
    } else if (!strcmp(kind, "attention")) { /* as sweep_arch_summary says it: att4x16 */
        const char *hd = sval(l, "heads"), *kd = sval(l, "key_dim");
        snprintf(s, sizeof s, "att%sx%s", hd ? hd : "?", kd ? kd : "?");
    } else {
        snprintf(s, sizeof s, "%s", kind);
    }
    app(out, n, s);
    const char *dil = sval(l, "dilation"); /* a chain model's dilated convolution */
    if (dil) app(out, n, "d"), app(out, n, dil);
    if (act && strcmp(kind, "dropout") && strcmp(kind, "batchnorm") && strcmp(kind, "layernorm")) {
        app(out, n, " ");
        app(out, n, act);
    }
}

void report_arch_summary(const char *config, char *out, size_t n)
{
    if (!n) return;
    out[0] = '\0';
    FsJsonDoc d;
    if (!config || json_parse(&d, config, strlen(config), NULL, 0)) return;
    const FsJson *model = json_get(d.root, "model");
    if (!model) model = json_get(d.root, "arch");
    if (!model) model = d.root;
    const FsJson *layers = json_get(model, "layers");
    char s[FS_REPORT_ARCH_TEXT] = "";
    const char *window = sval(model, "window");
    if (window) {
        app(s, sizeof s, strcmp(window, "chain") ? "w" : "");
        app(s, sizeof s, window);
        app(s, sizeof s, " ");
    }
    if (layers && layers->type == FS_JSON_ARRAY) {
        for (const FsJson *l = layers->child; l; l = l->next) {
            if (l != layers->child) app(s, sizeof s, " > ");
            layer_summary(l, s, sizeof s);
        }
    }
    const FsJson *tr = json_get(d.root, "training");
    if (tr) {
        char num[FS_FLOAT_TEXT];
        /* A chain model's batches are rows (batch_residues), not examples. */
        const char *opt = sval(tr, "optimizer"), *lr = float_sval(tr, "learning_rate", num, sizeof num),
                   *br = sval(tr, "batch_residues"), *bs = br ? br : sval(tr, "batch_size");
        if (opt || lr || bs) app(s, sizeof s, s[0] ? " | " : "");
        if (opt) app(s, sizeof s, opt);
        if (lr) app(s, sizeof s, " lr"), app(s, sizeof s, lr);
        if (bs) app(s, sizeof s, br ? " r" : " b"), app(s, sizeof s, bs);
    }
    json_free(&d);
    size_t len = strlen(s);
    if (len >= n) { /* cut with an ellipsis */
        len = n - 1;
        if (len >= 3) memcpy(s + len - 3, "...", 3);
        s[len] = '\0';
    }
    memcpy(out, s, len + 1);
}

/* ---------------------------------------------------------------------- */
/* Rows                                                                     */

static void fill_fold(FsReportFold *f, int fold_id, const FsFoldRecord *fr)
{
    memset(f, 0, sizeof *f);
    f->fold = fold_id;
    f->q3 = f->q8 = f->loss = NAN;
    f->obj = (FsObjectiveFold){NAN, NAN, NAN, NAN, 0};
    if (!fr) return;
    const FsFitResult *r = &fr->r;
    f->obj = train_result_objective(r);
    f->present = 1;
    f->status = r->status;
    FsMetrics m;
    metrics_from_classes(&m, r->classes, r->best_confusion);
    f->m = m;
    f->q3 = m.n && r->best_epoch > 0 ? m.q3 : NAN;
    f->q8 = m.n && r->best_epoch > 0 ? m.q8 : NAN;
    f->loss = r->best_epoch > 0 ? (double)r->best_val_loss : NAN;
    f->epochs = r->epochs;
    f->best_epoch = r->best_epoch;
    f->diverged_epoch = r->diverged_epoch;
    f->diverged_step = r->diverged_step;
    f->seconds = r->seconds;
    f->train_examples = r->train_examples;
    f->val_examples = r->val_examples;
    f->val_seconds = r->val_seconds;
    f->gpu_path = r->gpu_path;
}

static FsFolds folds_of(const FsReportSpec *spec) { return data_folds_of(spec->predefined, spec->folds); }

static void fold_name(const FsReportSpec *spec, int fold_id, char *out, size_t n)
{
    if (fold_id == FS_FOLD_PREDEFINED || spec->predefined)
        snprintf(out, n, "the validation split");
    else
        snprintf(out, n, "fold %d", fold_id);
}

/* A pruned trial counts only the folds before its decision: a fold that
 * finished while the decision was still waiting on earlier trials is not
 * part of the result (which must not depend on timing). A decision at a
 * fold the sweep does not have is none: a reader that checks the journal
 * against the sweep (journal_set_sweep) names its line as damaged. */
static void apply_cut(FsReportRow *row, const FsJournal *j, const FsReportSpec *spec)
{
    row->cut = journal_find_cut(j, row->id);
    if (!row->cut) return;
    FsFolds folds = folds_of(spec);
    int slot = data_fold_slot(&folds, row->cut->fold, NULL);
    if (slot < 0) {
        row->cut = NULL;
        return;
    }
    int first_dropped = row->cut->epoch ? slot : slot + 1;
    for (int s = first_dropped; s < spec->folds; s++) row->folds[s].present = 0;
}

static void finish_row(FsReportRow *row, const FsJournal *j, const FsReportSpec *spec)
{
    int k = spec->folds;
    apply_cut(row, j, spec);
    row->status = FS_TRIAL_OK;
    uint64_t pooled[FS_MAX_CLASSES][FS_MAX_CLASSES] = {{0}};
    double sum = 0, sum3 = 0, sum8 = 0;
    int n_ok = 0, n_q = 0;
    row->classes = FS_CLASSES;
    for (int s = 0; s < k; s++) {
        const FsReportFold *f = &row->folds[s];
        if (!f->present) continue;
        row->n_done++;
        row->seconds += f->seconds;
        /* The fold's tier, "cpu" for none (0): one word while they agree. */
        const char *where = f->gpu_path ? train_gpu_path_name(f->gpu_path) : "cpu";
        row->gpu_path = !row->gpu_path || !strcmp(row->gpu_path, where) ? where : "mixed";
        char fname[32];
        fold_name(spec, f->fold, fname, sizeof fname);
        if (f->status == FS_FIT_FAILED && row->status != FS_TRIAL_FAILED) {
            const FsFoldRecord *fr = journal_find_fold(j, row->id, f->fold);
            row->status = FS_TRIAL_FAILED;
            snprintf(row->reason, sizeof row->reason, "%s failed: %s", fname,
                     fr ? fr->r.message : "");
        } else if (f->status == FS_FIT_DIVERGED && row->status == FS_TRIAL_OK) {
            row->status = FS_TRIAL_DIVERGED;
            snprintf(row->reason, sizeof row->reason, "%s diverged at epoch %d step %ld", fname,
                     f->diverged_epoch, f->diverged_step);
        }
        double v = report_fold_metric(spec, f);
        if (f->status == FS_FIT_OK && !isnan(v)) {
            sum += v;
            n_ok++;
        }
        if (f->status == FS_FIT_OK && f->m.n) { /* the folds the mean is over, with a best epoch */
            row->classes = f->m.classes;
            for (int a = 0; a < FS_MAX_CLASSES; a++)
                for (int b = 0; b < FS_MAX_CLASSES; b++) pooled[a][b] += f->m.confusion[a][b];
            if (!isnan(f->q3)) sum3 += f->q3, sum8 += f->q8, n_q++;
        }
    }
    metrics_from_classes(&row->pooled, row->classes, pooled);
    row->q3_mean = n_q ? sum3 / n_q : NAN;
    row->q8_mean = n_q ? sum8 / n_q : NAN;
    const FsFailureRecord *fail = journal_find_failure(j, row->id);
    if (fail) {
        row->status = FS_TRIAL_FAILED;
        snprintf(row->reason, sizeof row->reason, "%s", fail->message);
    }
    if (row->cut && row->status != FS_TRIAL_FAILED) {
        char fname[32];
        fold_name(spec, row->cut->fold, fname, sizeof fname);
        row->status = FS_TRIAL_PRUNED;
        if (row->cut->epoch)
            snprintf(row->reason, sizeof row->reason, "pruned (%s) at %s epoch %d: %s", row->cut->rule, fname,
                     row->cut->epoch, row->cut->reason);
        else
            snprintf(row->reason, sizeof row->reason, "pruned (%s) after %s: %s", row->cut->rule, fname,
                     row->cut->reason);
    }
    if (row->status == FS_TRIAL_OK && row->n_done < k) {
        row->status = FS_TRIAL_INCOMPLETE;
        snprintf(row->reason, sizeof row->reason, "%d of %d folds done", row->n_done, k);
    }
    row->mean = row->std = NAN;
    row->n_mean = n_ok;
    if (n_ok) {
        row->mean = sum / n_ok;
        double ss = 0;
        for (int s = 0; s < k; s++) {
            const FsReportFold *f = &row->folds[s];
            double v = report_fold_metric(spec, f);
            if (f->present && f->status == FS_FIT_OK && !isnan(v))
                ss += (v - row->mean) * (v - row->mean);
        }
        row->std = sqrt(ss / n_ok); /* population: over the folds, not an estimate beyond them */
    }
    row->seeds = 1;
    row->seed_sd = NAN;
    if (!spec->own_seeds && j->max_seed > 0 && row->status == FS_TRIAL_OK) report_seeds(row, j, spec);
}

/* ---------------------------------------------------------------------- */
/* Swept options                                                            */

/* "param_" + the dotted sweep key with '.' as '_': a name pandas and
 * spreadsheets take as it is (docs/leaderboard-json.md). */
static void param_columns(FsReport *rep, const FsSweep *sw)
{
    rep->n_param = sw->n_dims;
    rep->param_col = fs_calloc((size_t)sw->n_dims + 1, sizeof *rep->param_col);
    for (int d = 0; d < sw->n_dims; d++) {
        char name[64];
        snprintf(name, sizeof name, "param_%s", sw->dims[d].key);
        for (char *c = name; *c; c++)
            if (*c == '.') *c = '_';
        rep->param_col[d] = fs_strdup(name);
    }
}

/* The row's trial in the sweep: its index, and the same config (a sweep.yaml
 * of another sweep, or configs of an older float form, give none). */
static void row_params(FsReportRow *row, const FsReport *rep, const FsSweep *sw)
{
    row->param = fs_calloc((size_t)rep->n_param + 1, sizeof *row->param);
    if (row->index < 0 || row->index >= sw->n_trials) return;
    const FsTrial *t = &sw->trials[row->index];
    if (!t->config || strcmp(t->config, row->config) != 0) return;
    for (int d = 0; d < rep->n_param; d++) {
        char buf[64];
        const char *v = sweep_trial_value(sw, t, d, buf, sizeof buf);
        if (v) row->param[d] = fs_strdup(v);
    }
}

typedef struct {
    int group, index, pos;
    double key; /* lower ranks first */
    const char *id;
} SortKey;

static int cmp_key(const void *pa, const void *pb)
{
    const SortKey *a = pa, *b = pb;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return strcmp(a->id, b->id);
}

static FsReportRow *new_row(FsReport *rep, int *cap, const char *id, const FsJournal *j)
{
    if (rep->n_rows == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        rep->rows = fs_realloc(rep->rows, (size_t)*cap * sizeof *rep->rows);
    }
    FsReportRow *row = &rep->rows[rep->n_rows++];
    memset(row, 0, sizeof *row);
    snprintf(row->id, sizeof row->id, "%s", id);
    const FsTrialRecord *t = journal_find_trial(j, id);
    row->index = t ? t->index : -1;
    row->sweep_version = t ? t->version : 0;
    row->n_params = t ? t->n_params : 0;
    row->config = t && t->config ? t->config : "{}";
    char arch[FS_REPORT_ARCH_TEXT];
    report_arch_summary(row->config, arch, sizeof arch);
    row->arch = fs_strdup(arch);
    int k = rep->spec.folds;
    row->folds = fs_calloc((size_t)k, sizeof *row->folds);
    FsFolds folds = folds_of(&rep->spec);
    for (int s = 0; s < k; s++) {
        int id_s = data_fold_id(&folds, s);
        fill_fold(&row->folds[s], id_s, journal_find_fold(j, id, id_s));
    }
    return row;
}

/* A trial known only from fold or failure records (no trial record). */
static void add_orphan(FsReport *rep, int *cap, const char *id, const FsJournal *j,
                       int first_orphan)
{
    if (journal_find_trial(j, id)) return;
    for (int i = first_orphan; i < rep->n_rows; i++)
        if (!strcmp(rep->rows[i].id, id)) return;
    new_row(rep, cap, id, j);
}

int report_trial_rank(const FsJournal *j, const FsReportSpec *spec, const char *id, FsReportRank *r)
{
    FsReport rep;
    memset(&rep, 0, sizeof rep);
    rep.spec = *spec;
    rep.spec.sweep = NULL; /* the row's params are not needed */
    if (rep.spec.folds < 1) rep.spec.folds = 1;
    int cap = 0;
    FsReportRow *row = new_row(&rep, &cap, id, j);
    finish_row(row, j, &rep.spec);
    const int ok = row->status == FS_TRIAL_OK && row->n_done == rep.spec.folds && !isnan(row->mean);
    if (ok) {
        r->mean = row->mean;
        r->key = spec->metric == FS_METRIC_LOSS ? row->mean : -row->mean;
        r->index = row->index < 0 ? 0x7fffffff : row->index;
        snprintf(r->id, sizeof r->id, "%s", row->id);
    }
    report_free(&rep);
    return ok;
}

int report_rank_before(const FsReportRank *a, const FsReportRank *b)
{
    const SortKey x = {(int)FS_TRIAL_OK, a->index, 0, a->key, a->id}, y = {(int)FS_TRIAL_OK, b->index, 0, b->key, b->id};
    return cmp_key(&x, &y) < 0;
}

void report_build(FsReport *rep, const FsJournal *j, const FsReportSpec *spec)
{
    memset(rep, 0, sizeof *rep);
    rep->spec = *spec;
    if (rep->spec.folds < 1) rep->spec.folds = 1;
    int cap = 0;
    for (int i = 0; i < j->n_trials; i++) new_row(rep, &cap, j->trials[i].trial, j);
    int first_orphan = rep->n_rows;
    for (int i = 0; i < j->n_folds; i++) add_orphan(rep, &cap, j->folds[i].trial, j, first_orphan);
    for (int i = 0; i < j->n_failures; i++)
        add_orphan(rep, &cap, j->failures[i].trial, j, first_orphan);
    for (int i = 0; i < j->n_cuts; i++) add_orphan(rep, &cap, j->cuts[i].trial, j, first_orphan);
    rep->n_versions = j->n_sweep_versions;
    if (spec->sweep) report_sweep_index(rep, spec->sweep);
    if (spec->sweep) param_columns(rep, spec->sweep);
    for (int i = 0; spec->sweep && i < rep->n_rows; i++) row_params(&rep->rows[i], rep, spec->sweep);

    SortKey *keys = fs_malloc((size_t)(rep->n_rows + 1) * sizeof *keys);
    for (int i = 0; i < rep->n_rows; i++) {
        FsReportRow *row = &rep->rows[i];
        finish_row(row, j, &rep->spec);
        if (row->classes == FS_CLASSES8) rep->classes = FS_CLASSES8;
        rep->n_folds_done += row->n_done;
        double key = spec->metric == FS_METRIC_LOSS ? row->mean : -row->mean;
        int ranked = row->status == FS_TRIAL_OK || row->status == FS_TRIAL_INCOMPLETE || row->status == FS_TRIAL_PRUNED;
        keys[i] = (SortKey){(int)row->status, row->index < 0 ? 0x7fffffff : row->index, i,
                            ranked && !isnan(key) ? key : INFINITY, row->id};
    }
    qsort(keys, (size_t)rep->n_rows, sizeof *keys, cmp_key);
    FsReportRow *sorted = fs_malloc((size_t)(rep->n_rows + 1) * sizeof *sorted);
    for (int i = 0; i < rep->n_rows; i++) {
        sorted[i] = rep->rows[keys[i].pos];
        sorted[i].rank = i + 1;
    }
    free(keys);
    free(rep->rows);
    rep->rows = sorted;
    rep->spec.sweep = NULL; /* borrowed for the build only */
    report_ties(rep);
    /* Test results: the latest of each kind (a later test set replaces an earlier one). */
    for (int i = 0; i < rep->n_rows; i++) {
        FsReportRow *row = &rep->rows[i];
        for (int e = 0; e < j->n_evals; e++) {
            const FsEvalRecord *ev = &j->evals[e];
            if (strcmp(ev->trial, row->id) != 0 || strcmp(ev->source, "test") != 0) continue;
            if (!strcmp(ev->models, "ensemble")) row->test = ev;
            if (!strcmp(ev->models, "refit")) row->test_refit = ev;
        }
        rep->has_test |= row->test != NULL;
        rep->has_refit |= row->test_refit != NULL;
    }
}

void report_free(FsReport *rep)
{
    for (int i = 0; i < rep->n_rows; i++) {
        for (int d = 0; rep->rows[i].param && d < rep->n_param; d++) free(rep->rows[i].param[d]);
        free(rep->rows[i].param);
        free(rep->rows[i].folds);
        free(rep->rows[i].split);
        free(rep->rows[i].arch);
    }
    for (int d = 0; d < rep->n_param; d++) free(rep->param_col[d]);
    free(rep->param_col);
    free(rep->rows);
    memset(rep, 0, sizeof *rep);
}
