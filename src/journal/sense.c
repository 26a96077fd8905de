/*
 * sense.c: whether a decoded record makes sense for the run folder's sweep
 * (journal_set_sweep). The CRC guards against torn writes, not against a
 * hand edit with the checksum recomputed: a record must also name a trial
 * and a fold the sweep has, and a fold's numbers must agree with each other
 * and with the data (its confusion adds up to the fold's validation
 * residues, its best epoch is one it ran, its recorded Q3 and loss are the
 * confusion's and the curves'). decode.c calls these after decoding; a
 * failure is a LINE_INVALID line like any other damaged one.
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h" /* the fold vocabulary */
#include "journal/journal_internal.h"

typedef struct {
    char id[FS_TRIAL_ID_LEN + 1]; /* first: bsearch compares a key string with it */
    int index;
} CheckId;

struct FsJournalCheck {
    int n_ids;
    CheckId *ids; /* sorted by id */
    int known_folds; /* the sweep's folds are known: records are checked against them */
    FsFolds folds;
    char pruner[8];
    int known_val; /* val[] holds each fold slot's validation residues */
    uint64_t val[FS_MAX_FOLDS];
    char *canonical;   /* FsJournalSweep.canonical (NULL: every record is the checked sweep's) */
    int first_current; /* records before any sweep record are the checked sweep's */
};

static int cmp_id(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

FsJournalCheck *journal_check_new(const FsJournalSweep *s)
{
    FsJournalCheck *c = fs_calloc(1, sizeof *c);
    c->n_ids = s->ids ? s->n_trials : 0;
    c->ids = fs_calloc((size_t)c->n_ids + 1, sizeof *c->ids);
    for (int i = 0; i < c->n_ids; i++) {
        snprintf(c->ids[i].id, sizeof c->ids[i].id, "%s", s->ids[i]);
        c->ids[i].index = i;
    }
    qsort(c->ids, (size_t)c->n_ids, sizeof *c->ids, cmp_id);
    c->known_folds = s->folds > 0;
    c->folds = data_folds_of(s->predefined, s->folds < FS_MAX_FOLDS ? s->folds : FS_MAX_FOLDS);
    snprintf(c->pruner, sizeof c->pruner, "%s", s->pruner ? s->pruner : "");
    c->known_val = s->val_residues != NULL && c->known_folds;
    for (int k = 0; c->known_val && k < c->folds.n; k++) c->val[k] = s->val_residues[k];
    c->canonical = s->canonical ? fs_strdup(s->canonical) : NULL;
    c->first_current = 1;
    return c;
}

void journal_check_first_version(FsJournalCheck *c, const char *first)
{
    if (c) c->first_current = !c->canonical || !first || !strcmp(first, c->canonical);
}

int journal_sense_current(const FsJournal *j)
{
    const FsJournalCheck *c = j->check;
    if (!c || !c->canonical) return 1;
    return j->sweep_text ? !strcmp(j->sweep_text, c->canonical) : c->first_current;
}

void journal_check_free(FsJournalCheck *c)
{
    if (!c) return;
    free(c->canonical);
    free(c->ids);
    free(c);
}

int journal_sense_trial(const FsJournalCheck *c, const char *trial, int index, char *why, size_t n)
{
    if (!c || !c->n_ids) return 0;
    const CheckId *hit = bsearch(trial, c->ids, (size_t)c->n_ids, sizeof *c->ids, cmp_id);
    if (!hit)
        return snprintf(why, n, "expected a trial of the run folder's sweep (one of its %d trial ids), not trial %s",
                        c->n_ids, trial),
               -1;
    int want = hit->index;
    if (index >= 0 && index != want)
        return snprintf(why, n, "expected trial %s at index %d, as in the sweep, not %d", trial, want, index), -1;
    return 0;
}

int journal_sense_fold_id(const FsJournalCheck *c, int fold, char *why, size_t n)
{
    FsErr e = {0};
    if (!c || !c->known_folds || data_fold_slot(&c->folds, fold, &e) >= 0) return 0;
    return snprintf(why, n, "%s", e.msg), -1;
}

/* The Q3 the trainer records for a confusion (fit.c's q3_of: the same
 * expression, so the same float). */
static float q3_of(const uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES], uint64_t total)
{
    uint64_t ok = 0;
    for (int a = 0; a < FS_MAX_CLASSES; a++) ok += conf[a][a];
    return total ? (float)((double)ok / (double)total) : 0.0f;
}

/* The confusion's total, or -1 when a cell is beyond any data set (2^48
 * residues) and the sum could overflow. */
static int confusion_total(const uint64_t conf[FS_MAX_CLASSES][FS_MAX_CLASSES], uint64_t *total)
{
    *total = 0;
    for (int a = 0; a < FS_MAX_CLASSES; a++)
        for (int b = 0; b < FS_MAX_CLASSES; b++) {
            if (conf[a][b] > ((uint64_t)1 << 48)) return -1;
            *total += conf[a][b];
        }
    return 0;
}

/* The fold's validation residues: the data's (or the sweep record's), else
 * what the record's own val_examples says (every epoch validates them all). */
static int val_residues(const FsJournalCheck *c, int fold, const FsFitResult *r, uint64_t *out)
{
    int slot = c->known_val ? data_fold_slot(&c->folds, fold, NULL) : -1;
    if (slot >= 0) return *out = c->val[slot], 1;
    if (r->val_examples && r->epochs > 0) return *out = r->val_examples / (uint64_t)r->epochs, 1;
    return 0;
}

static int sense_counts(const FsJournalCheck *c, int fold, const FsFitResult *r, uint64_t total, char *why, size_t n)
{
    uint64_t want;
    if (!val_residues(c, fold, r, &want)) return 0;
    if (r->val_examples && r->val_examples != want * (uint64_t)r->epochs)
        return snprintf(why, n, "expected val_examples %llu (%d epochs of the fold's %llu validation residues), not %llu",
                        (unsigned long long)(want * (uint64_t)r->epochs), r->epochs, (unsigned long long)want,
                        (unsigned long long)r->val_examples),
               -1;
    if (r->best_epoch > 0 && total != want)
        return snprintf(why, n, "expected a confusion that adds up to the fold's %llu validation residues, not %llu",
                        (unsigned long long)want, (unsigned long long)total),
               -1;
    return 0;
}

static int sense_scores(const FsFitResult *r, uint64_t total, char *why, size_t n)
{
    int e = r->best_epoch - 1;
    float q3 = q3_of(r->best_confusion, total);
    if (r->curves.val_q3[e] != q3)
        return snprintf(why, n, "expected validation Q3 %.9g at best epoch %d (from the confusion), not %.9g",
                        (double)q3, r->best_epoch, (double)r->curves.val_q3[e]),
               -1;
    if (r->curves.val_loss[e] != r->best_val_loss)
        return snprintf(why, n, "expected best_val_loss %.9g (the validation loss of best epoch %d), not %.9g",
                        (double)r->curves.val_loss[e], r->best_epoch, (double)r->best_val_loss),
               -1;
    return 0;
}

int journal_sense_fold(const FsJournalCheck *c, int fold, const FsFitResult *r, int has_curves, char *why, size_t n)
{
    if (!c) return 0;
    uint64_t total;
    if (r->status == FS_FIT_OK && (r->best_epoch < 1 || r->best_epoch > r->epochs))
        return snprintf(why, n, "expected best_epoch 1..%d (the epochs it ran) on an ok fold, not %d", r->epochs,
                        r->best_epoch),
               -1;
    if (confusion_total(r->best_confusion, &total))
        return snprintf(why, n, "expected confusion counts of residues, not more than 2^48 in one cell"), -1;
    if (r->best_epoch == 0 && total)
        return snprintf(why, n, "expected an empty confusion without a best epoch, not %llu residues",
                        (unsigned long long)total),
               -1;
    if (sense_counts(c, fold, r, total, why, n)) return -1;
    return r->best_epoch > 0 && has_curves ? sense_scores(r, total, why, n) : 0;
}

int journal_sense_cut(const FsJournalCheck *c, const FsCutRecord *cut, char *why, size_t n)
{
    if (!c) return 0;
    if (!c->pruner[0])
        return snprintf(why, n, "expected no pruned record: the sweep has no pruner (search.pruner)"), -1;
    if (strcmp(cut->rule, c->pruner))
        return snprintf(why, n, "expected a decision of the sweep's pruner (%s), not rule '%s'", c->pruner, cut->rule),
               -1;
    return 0;
}
