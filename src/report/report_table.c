/*
 * report_table.c: the leaderboard for people: the terminal table and
 * Markdown, from one grid of cells. Q3 (means, folds, test scores) is in
 * percent with one decimal (fs_format_percent), a loss with 4 decimals; a
 * fold that is absent is "-", one that diverged or failed "div" / "fail".
 *
 * The table (FS_REPORT_TABLE) fits FS_REPORT_TABLE_WIDTH columns: the
 * epochs and seconds columns are left to --wide, ids are cut to the
 * shortest prefix (8 digits at least) that still tells the trials apart
 * (every command takes a unique prefix), and the architecture and the note
 * wrap within the width that is left (the per-fold columns go first when
 * even that is too little). FS_REPORT_WIDE and Markdown hold every column
 * whole, one line per trial.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

/* The narrowest an architecture or note column gets before the per-fold
 * columns make room for it. */
#define MIN_WRAP 16

void report_fold_header(const FsReport *rep, int s, char *out, size_t n)
{
    if (rep->spec.predefined)
        snprintf(out, n, "valid");
    else
        snprintf(out, n, "fold%d", s);
}

/* The pooled MCC of each class (H E C, or an 8-state trial's H G I E B T S C), or "-". */
static void mcc_cell(const FsReportRow *row, char *buf, size_t n)
{
    size_t k = 0;
    if (!row->pooled.n) snprintf(buf, n, "-");
    for (int c = 0; row->pooled.n && c < row->pooled.classes && k < n; c++)
        k += (size_t)snprintf(buf + k, n - k, "%s%.3f", c ? " " : "", row->pooled.mcc[c]);
}

static void fold_cell(const FsReport *rep, const FsReportFold *f, char *out, size_t n)
{
    double v = report_fold_metric(&rep->spec, f);
    if (!f->present) snprintf(out, n, "-");
    else if (f->status == FS_FIT_DIVERGED) snprintf(out, n, "div");
    else if (f->status == FS_FIT_FAILED) snprintf(out, n, "fail");
    else report_metric_text(out, n, rep->spec.metric, v);
}

/* "best/ran" per fold, space separated. */
static void epochs_cell(const FsReport *rep, const FsReportRow *row, char *out, size_t n)
{
    out[0] = '\0';
    size_t k = 0;
    for (int s = 0; s < rep->spec.folds && k + 1 < n; s++) {
        const FsReportFold *f = &row->folds[s];
        int w = f->present ? snprintf(out + k, n - k, "%s%d/%d", s ? " " : "", f->best_epoch, f->epochs)
                           : snprintf(out + k, n - k, "%s-", s ? " " : "");
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* The mean, and "(n/k)" after it when it is over fewer than the k folds (a
 * pruned or incomplete trial's): never read as a k-fold mean. */
static void mean_cell(const FsReport *rep, const FsReportRow *row, char *out, size_t n)
{
    report_metric_text(out, n, rep->spec.metric, row->mean);
    size_t len = strlen(out);
    if (isfinite(row->mean) && row->n_mean < rep->spec.folds)
        snprintf(out + len, n - len, " (%d/%d)", row->n_mean, rep->spec.folds);
}

/* "vs best": the difference to rank 1 and its interval's half-width, Q3
 * in percentage points, a loss with 4 decimals; "-" when not compared. */
static void diff_cell(const FsReport *rep, const FsReportRow *row, char *out, size_t n)
{
    const double d = row->diff, h = 0.5 * (row->diff_hi - row->diff_lo);
    if (!isfinite(d) || !isfinite(h)) snprintf(out, n, "-");
    else if (rep->spec.metric == FS_METRIC_LOSS) snprintf(out, n, "%+.4f +-%.4f", d, h);
    else snprintf(out, n, "%s%s +-%s", d < 0 ? "-" : "+", fs_percent_text(fabs(d)), fs_percent_text(h));
}

/* ---------------------------------------------------------------------- */
/* The grid                                                                 */

enum { C_RIGHT = 1, C_WRAP = 2, C_WIDE = 4 /* --wide and Markdown only */, C_FOLD = 8, C_OFF = 16 };

/* The most columns a grid has besides the folds' (grid_build adds at most
 * this many; add_col checks it). */
#define GRID_FIXED_COLS 20

typedef struct {
    int n_rows, n_cols, max_cols;
    char **cell; /* (n_rows + 1) x n_cols, row 0 = header */
    int *flags;  /* C_* per column */
    int *width;  /* the table's column widths */
} Grid;

static int add_col(Grid *g, const char *header, int flags)
{
    FS_ASSERT(g->n_cols < g->max_cols); /* GRID_FIXED_COLS too small */
    int c = g->n_cols++;
    g->flags[c] = flags;
    g->cell[c] = fs_strdup(header);
    return c;
}

static void set(Grid *g, int r, int c, const char *s) { g->cell[(r + 1) * g->n_cols + c] = fs_strdup(s); }

/* The shortest id prefix, at least 8 digits, that no two rows share. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int id_length(const FsReport *rep)
{
    const char **ids = fs_malloc(((size_t)rep->n_rows + 1) * sizeof *ids);
    for (int i = 0; i < rep->n_rows; i++) ids[i] = rep->rows[i].id;
    qsort(ids, (size_t)rep->n_rows, sizeof *ids, cmp_str);
    int len = 8;
    for (int i = 1; i < rep->n_rows; i++) {
        int k = 0;
        while (ids[i][k] && ids[i][k] == ids[i - 1][k]) k++;
        if (k + 1 > len) len = k + 1;
    }
    free(ids);
    return len;
}

/* A note may hold anything a trainer said: keep it on its lines. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
}

/* An empty grid of n rows with room for max_cols columns' headers. */
static void grid_open(Grid *g, int n, int max_cols)
{
    memset(g, 0, sizeof *g);
    g->n_rows = n;
    g->max_cols = max_cols;
    g->flags = fs_calloc((size_t)max_cols, sizeof *g->flags);
    g->width = fs_calloc((size_t)max_cols, sizeof *g->width);
    g->cell = fs_calloc((size_t)max_cols, sizeof *g->cell); /* the headers, until the columns are known */
}

/* search.replicates: some of the first n trials have more than one seed
 * (then the table has a seeds column). */
static int more_seeds(const FsReport *rep, int n)
{
    for (int i = 0; i < n; i++)
        if (rep->rows[i].seeds > 1) return 1;
    return 0;
}

static void grid_build(Grid *g, const FsReport *rep, int top, int table)
{
    const int k = rep->spec.folds, n = top > 0 && top < rep->n_rows ? top : rep->n_rows;
    const FsMetricKind m = rep->spec.metric;
    const int q = m != FS_METRIC_LOSS;
    grid_open(g, n, GRID_FIXED_COLS + k);
    char buf[1200], h[32];
    const int c_rank = add_col(g, "rank", C_RIGHT), c_id = add_col(g, "id", 0), c_st = add_col(g, "status", 0);
    snprintf(buf, sizeof buf, "%s mean%s", metrics_kind_name(m), q ? " %" : "");
    const int c_mean = add_col(g, buf, C_RIGHT), c_std = add_col(g, "std", C_RIGHT);
    /* Against the best (report_ties.c): the interval's half-width and
     * whether the folds can tell the trial from rank 1. */
    const int c_ci = add_col(g, "+-95%", C_RIGHT), c_diff = add_col(g, "vs best", C_RIGHT),
              c_tied = add_col(g, "tied", 0);
    const int c_seeds = more_seeds(rep, n) ? add_col(g, "seeds", C_RIGHT) : -1;
    const int c_front = rep->spec.n_objectives ? add_col(g, "front", 0) : -1, c_fold = g->n_cols;
    for (int s = 0; s < k; s++) {
        report_fold_header(rep, s, h, sizeof h);
        add_col(g, h, C_RIGHT | C_FOLD);
    }
    const int c_ep = add_col(g, "epochs best/ran", C_WIDE), c_mcc = add_col(g, report_classes(rep) == FS_CLASSES8 ? "mcc H G I E B T S C" : "mcc H E C", C_WIDE);
    int c_test = -1, c_refit = -1;
    if (rep->has_test) {
        c_test = add_col(g, "test q3 %", C_RIGHT);
        add_col(g, "test sov %", C_RIGHT);
        if (rep->has_refit) c_refit = add_col(g, "refit q3 %", C_RIGHT);
    }
    const int c_sec = add_col(g, "seconds", C_RIGHT | C_WIDE), c_par = add_col(g, "params", C_RIGHT);
    const int c_arch = add_col(g, "architecture", C_WRAP), c_note = add_col(g, "note", C_WRAP);
    char **hdr = g->cell;
    g->cell = fs_calloc((size_t)(n + 1) * (size_t)g->n_cols, sizeof *g->cell);
    memcpy(g->cell, hdr, (size_t)g->n_cols * sizeof *g->cell);
    free(hdr);

    const int id_len = table ? id_length(rep) : 16;
    int any_note = 0;
    for (int i = 0; i < n; i++) {
        const FsReportRow *row = &rep->rows[i];
        snprintf(buf, sizeof buf, "%d", row->rank);
        set(g, i, c_rank, buf);
        snprintf(buf, sizeof buf, "%.*s", id_len, row->id);
        set(g, i, c_id, buf);
        set(g, i, c_st, report_status_name(row->status));
        mean_cell(rep, row, buf, sizeof buf);
        set(g, i, c_mean, buf);
        set(g, i, c_std, report_metric_text(buf, sizeof buf, m, row->std));
        set(g, i, c_ci, report_metric_text(buf, sizeof buf, m, row->has_ci ? 0.5 * (row->ci_hi - row->ci_lo) : NAN));
        diff_cell(rep, row, buf, sizeof buf);
        set(g, i, c_diff, buf);
        set(g, i, c_tied, row->tied < 0 ? "-" : i == 0 ? "best" : row->tied ? "yes" : "no");
        if (c_seeds >= 0) set(g, i, c_seeds, (snprintf(buf, sizeof buf, "%d", row->seeds), buf));
        if (c_front >= 0) set(g, i, c_front, row->pareto < 0 ? "-" : row->pareto ? "yes" : "no");
        for (int s = 0; s < k; s++) {
            fold_cell(rep, &row->folds[s], buf, sizeof buf);
            set(g, i, c_fold + s, buf);
        }
        epochs_cell(rep, row, buf, sizeof buf);
        set(g, i, c_ep, buf);
        mcc_cell(row, buf, sizeof buf);
        set(g, i, c_mcc, buf);
        if (c_test >= 0) {
            set(g, i, c_test, fs_percent_text(row->test ? row->test->q3 : NAN));
            set(g, i, c_test + 1, fs_percent_text(row->test ? row->test->sov : NAN));
        }
        if (c_refit >= 0) set(g, i, c_refit, fs_percent_text(row->test_refit ? row->test_refit->q3 : NAN));
        snprintf(buf, sizeof buf, "%.1f", row->seconds);
        set(g, i, c_sec, buf);
        snprintf(buf, sizeof buf, "%ld", row->n_params);
        set(g, i, c_par, buf);
        set(g, i, c_arch, row->arch);
        set(g, i, c_note, row->reason);
        one_line(g->cell[(i + 1) * g->n_cols + c_note]);
        any_note |= row->reason[0] != 0;
    }
    if (table && !any_note) g->flags[c_note] |= C_OFF; /* an empty column is no help in 120 */
    /* No trial compared (a single split, nothing complete): no columns for it. */
    int any_ci = 0;
    for (int i = 0; i < n; i++) any_ci |= rep->rows[i].has_ci;
    if (!any_ci) g->flags[c_ci] |= C_OFF, g->flags[c_tied] |= C_OFF, g->flags[c_diff] |= C_OFF;
}

static void grid_free(Grid *g)
{
    for (int i = 0; i < (g->n_rows + 1) * g->n_cols; i++) free(g->cell[i]);
    free(g->cell);
    free(g->flags);
    free(g->width);
}

/* ---------------------------------------------------------------------- */
/* Widths                                                                   */

static int wrap_at(const char *s, int w, const char **next);

/* The longest line of column c's cells wrapped at width w. */
static int wrapped_width(const Grid *g, int c, int w)
{
    int most = 0;
    for (int r = 0; r <= g->n_rows; r++)
        for (const char *s = g->cell[r * g->n_cols + c], *next; *s; s = next) {
            int len = wrap_at(s, w, &next);
            if (len > most) most = len;
        }
    return most;
}

static int natural(const Grid *g, int c)
{
    int w = 0;
    for (int r = 0; r <= g->n_rows; r++) {
        int len = (int)strlen(g->cell[r * g->n_cols + c]);
        if (len > w) w = len;
    }
    return w;
}

/* Columns shown, and their widths: every column whole (wide), or the
 * table's columns in FS_REPORT_TABLE_WIDTH with the wrapped ones sharing
 * what is left. */
static void lay_out(Grid *g, int wide)
{
    for (int c = 0; c < g->n_cols; c++) {
        if (!wide && (g->flags[c] & C_WIDE)) g->flags[c] |= C_OFF;
        g->width[c] = natural(g, c);
    }
    if (wide) return;
    int wrap[2], n_wrap = 0;
    for (int c = 0; c < g->n_cols; c++)
        if ((g->flags[c] & (C_WRAP | C_OFF)) == C_WRAP && n_wrap < 2) wrap[n_wrap++] = c;
    for (int pass = 0; pass < 2; pass++) {
        int fixed = 0, shown = 0;
        for (int c = 0; c < g->n_cols; c++) {
            if (g->flags[c] & C_OFF) continue;
            shown++;
            if (!(g->flags[c] & C_WRAP)) fixed += g->width[c];
        }
        int left = FS_REPORT_TABLE_WIDTH - fixed - 2 * (shown - 1);
        if (left >= MIN_WRAP * n_wrap || pass) {
            if (left < MIN_WRAP * n_wrap) left = MIN_WRAP * n_wrap; /* wider than asked: nothing left to drop */
            if (n_wrap == 1) {
                if (g->width[wrap[0]] > left) g->width[wrap[0]] = left;
            } else if (n_wrap == 2) {
                int a = g->width[wrap[0]], b = g->width[wrap[1]];
                if (a + b > left) { /* the architecture keeps at least half */
                    int wa = a < left - b ? a : left - b;
                    if (wa < left / 2) wa = a < left / 2 ? a : left / 2;
                    g->width[wrap[0]] = wa;
                    g->width[wrap[1]] = left - wa < b ? left - wa : b;
                }
            }
            for (int i = 0; i < n_wrap; i++) g->width[wrap[i]] = wrapped_width(g, wrap[i], g->width[wrap[i]]);
            return;
        }
        for (int c = 0; c < g->n_cols; c++) /* too narrow: the per-fold columns go (--wide has them) */
            if (g->flags[c] & C_FOLD) g->flags[c] |= C_OFF;
    }
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                  */

/* The length of the next line of s within width w: up to a blank that
 * fits, before an architecture's " > " or " | " when one leaves the line
 * at least half full, else the last (a word longer than w is cut). *next
 * is where the line after it starts. */
static int wrap_at(const char *s, int w, const char **next)
{
    int len = (int)strlen(s);
    if (len <= w) {
        *next = s + len;
        return len;
    }
    int cut = w;
    while (cut > 0 && s[cut] != ' ') cut--;
    for (int c = cut; c >= w / 2; c--)
        if (s[c] == ' ' && (s[c + 1] == '>' || s[c + 1] == '|') && s[c + 2] == ' ') {
            cut = c;
            break;
        }
    if (cut == 0) cut = w;
    int end = cut;
    while (end > 0 && s[end - 1] == ' ') end--;
    const char *p = s + cut;
    while (*p == ' ') p++;
    *next = p;
    return end;
}

/* The ranks of the first n rows whose tie flag is `tied` (at most 24,
 * then how many more), "none" if none. */
static void put_ranks(const FsReport *rep, int n, int tied, FILE *out)
{
    int shown = 0, more = 0;
    for (int i = 1; i < n; i++) {
        if (rep->rows[i].tied != tied) continue;
        if (shown < 24) fprintf(out, "%s%d", shown ? ", " : "", rep->rows[i].rank), shown++;
        else more++;
    }
    if (!shown) fputs("none", out);
    if (more) fprintf(out, " and %d more", more);
}

/* Below the table and the Markdown, where a GPU trained any of the first
 * n rows: which tier, counted (the table has no room for a column within
 * its 120; the CSV and JSON give each trial's gpu_path). */
static void write_gpu_note(const FsReport *rep, int n, FILE *out)
{
    static const char *const words[] = {"block", "library", "mixed", "cpu"};
    int count[4] = {0}, gpu = 0;
    for (int i = 0; i < n; i++)
        for (int w = 0; w < 4 && rep->rows[i].gpu_path; w++)
            if (!strcmp(rep->rows[i].gpu_path, words[w])) count[w]++, gpu |= w < 3;
    if (!gpu) return;
    fputs("\ngpu path (--backend cuda):", out);
    const char *how[] = {"block tier", "library tier", "mixed", "cpu"};
    for (int w = 0, first = 1; w < 4; w++)
        if (count[w]) fprintf(out, "%s %s %d", first ? "" : ",", how[w], count[w]), first = 0;
    fputs(" trials (each trial's: gpu_path in\n--format csv and json)\n", out);
}

/* Below the table and the Markdown: what a partial mean and the tie
 * columns say, for the first n rows. */
static void write_legend(const FsReport *rep, int n, FILE *out)
{
    write_gpu_note(rep, n, out);
    const int k = rep->spec.folds;
    int partial = 0, compared = 0;
    for (int i = 0; i < n; i++) {
        partial |= isfinite(rep->rows[i].mean) && rep->rows[i].n_mean < k;
        compared |= i > 0 && rep->rows[i].tied >= 0;
    }
    if (partial)
        fprintf(out, "\n(n/%d) after a mean: over n of the %d folds (a pruned, incomplete or diverged trial): listed "
                "after the complete trials\nwhatever its mean, and never compared with their %d-fold means.\n",
                k, k, k);
    if (!compared) return;
    fprintf(out, "%svs best: the trial's folds minus rank 1's, fold by fold (the same proteins): their mean and 95%% "
            "interval,\ncorrected resampled variance. tied: the corrected paired t-test on those differences, "
            "Holm-adjusted over the\ntrials compared; yes where p >= %g (run.alpha). Steady small gaps are told apart "
            "where a closer mean with\nscattered gaps is not; the interval is unadjusted, so one just clear of 0 may "
            "still be tied (docs/statistics.md).\n",
            partial ? "" : "\n", report_alpha(&rep->spec));
    fputs("tied with rank 1: ", out);
    put_ranks(rep, n, 1, out);
    fputs("; told apart: ", out);
    put_ranks(rep, n, 0, out);
    fputs("\n", out);
}

static void write_table(const FsReport *rep, int top, int wide, FILE *out)
{
    Grid g;
    grid_build(&g, rep, top, !wide);
    lay_out(&g, wide);
    int last = -1, total = 0;
    for (int c = 0; c < g.n_cols; c++)
        if (!(g.flags[c] & C_OFF)) total += g.width[c] + (last >= 0 ? 2 : 0), last = c;
    const char **rest = fs_calloc((size_t)g.n_cols, sizeof *rest);
    for (int r = 0; r <= g.n_rows; r++) {
        for (int c = 0; c < g.n_cols; c++) rest[c] = g.cell[r * g.n_cols + c];
        for (int more = 1; more;) { /* a row is as many lines as its longest wrapped cell */
            char line[8192];
            size_t k = 0;
            more = 0;
            for (int c = 0; c < g.n_cols && k < sizeof line - 1; c++) {
                if (g.flags[c] & C_OFF) continue;
                const char *s = rest[c], *next = s + strlen(s);
                int len = wide || !(g.flags[c] & C_WRAP) ? (int)strlen(s) : wrap_at(s, g.width[c], &next);
                int pad = g.width[c] - len > 0 ? g.width[c] - len : 0;
                int w = g.flags[c] & C_RIGHT
                            ? snprintf(line + k, sizeof line - k, "%*s%.*s", pad, "", len, s)
                            : snprintf(line + k, sizeof line - k, "%.*s%*s", len, s, c == last ? 0 : pad, "");
                if (w < 0) break;
                k += (size_t)w;
                if (c != last && k < sizeof line) k += (size_t)snprintf(line + k, sizeof line - k, "  ");
                rest[c] = next;
                more |= *next != '\0';
            }
            if (k >= sizeof line) k = sizeof line - 1;
            while (k > 0 && line[k - 1] == ' ') k--; /* no trailing blanks */
            line[k] = '\0';
            fprintf(out, "%s\n", line);
        }
        if (r == 0) {
            for (int i = 0; i < total; i++) fputc('-', out);
            fputc('\n', out);
        }
    }
    int dropped = 0;
    for (int c = 0; c < g.n_cols; c++) dropped |= (g.flags[c] & (C_FOLD | C_OFF)) == (C_FOLD | C_OFF);
    if (dropped) fprintf(out, "(per-fold values left out to fit %d columns: --wide shows them)\n", FS_REPORT_TABLE_WIDTH);
    write_legend(rep, g.n_rows, out);
    free(rest);
    grid_free(&g);
}

static void md_cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputs(" |", out);
}

static void write_md(const FsReport *rep, int top, FILE *out)
{
    Grid g;
    grid_build(&g, rep, top, 0);
    for (int r = 0; r <= g.n_rows; r++) {
        fputc('|', out);
        for (int c = 0; c < g.n_cols; c++) md_cell(out, g.cell[r * g.n_cols + c]);
        fputc('\n', out);
        if (r == 0) {
            fputc('|', out);
            for (int c = 0; c < g.n_cols; c++) fputs(g.flags[c] & C_RIGHT ? " ---: |" : " --- |", out);
            fputc('\n', out);
        }
    }
    write_legend(rep, g.n_rows, out);
    grid_free(&g);
}

void report_write_grid(const FsReport *rep, FsReportFormat fmt, int top, FILE *out)
{
    if (fmt == FS_REPORT_MD) write_md(rep, top, out);
    else write_table(rep, top, fmt == FS_REPORT_WIDE, out);
}
