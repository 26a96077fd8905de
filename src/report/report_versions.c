/*
 * report_versions.c: an extended run's rows (docs/sweep-format.md,
 * "Extending a run"). A trial kept from an earlier sweep version keeps its
 * trial record, which names its index in that sweep; the leaderboard shows
 * its index in the folder's sweep (the one a fresh run of that sweep would
 * show), found by its id.
 */
#include <stdlib.h>
#include <string.h>

#include "report/report_int.h"

typedef struct {
    const char *id;
    int index;
} IdIndex;

static int cmp_id(const void *a, const void *b) { return strcmp(((const IdIndex *)a)->id, ((const IdIndex *)b)->id); }

void report_sweep_index(FsReport *rep, const FsSweep *sw)
{
    /* Ids are assigned only where the data fingerprint is known. */
    if (!sw->n_trials || !sw->trials[0].id[0]) return;
    IdIndex *map = fs_malloc(sizeof *map * (size_t)sw->n_trials);
    for (int t = 0; t < sw->n_trials; t++) map[t] = (IdIndex){sw->trials[t].id, t};
    qsort(map, (size_t)sw->n_trials, sizeof *map, cmp_id);
    for (int i = 0; i < rep->n_rows; i++) {
        IdIndex key = {rep->rows[i].id, 0};
        const IdIndex *hit = bsearch(&key, map, (size_t)sw->n_trials, sizeof *map, cmp_id);
        if (hit) rep->rows[i].index = hit->index;
    }
    free(map);
}
