/*
 * curves.c: every fold's learning curves as one long table (CSV), a row
 * per (trial, fold, seed, epoch), in the journal's order: what the
 * library API's foldsweep_curves returns (the Python package's
 * Run.curves() DataFrame). The report's charts draw the same numbers.
 */
#include <stdio.h>

#include "report/report.h"

/* A float as the journal holds it: shortest round trip, "" for none. */
static void cell(FILE *out, float v)
{
    if (v != v) return; /* NaN: no value (an epoch without validation) */
    fprintf(out, "%.9g", (double)v);
}

void report_curves_csv(FILE *out, const FsJournal *j)
{
    fprintf(out, "trial,fold,seed,epoch,train_loss,val_loss,val_q3,seconds,best,status\n");
    for (int i = 0; i < j->n_folds; i++) {
        const FsFoldRecord *f = &j->folds[i];
        const FsCurves *c = &f->r.curves;
        for (int e = 0; e < f->r.epochs; e++) {
            fprintf(out, "%s,%d,%d,%d,", f->trial, f->fold, f->seed, e + 1);
            if (c->train_loss) cell(out, c->train_loss[e]);
            fputc(',', out);
            if (c->val_loss) cell(out, c->val_loss[e]);
            fputc(',', out);
            if (c->val_q3) cell(out, c->val_q3[e]);
            fputc(',', out);
            if (c->seconds) cell(out, c->seconds[e]);
            fprintf(out, ",%d,%s\n", e + 1 == f->r.best_epoch, train_status_name(f->r.status));
        }
    }
}
