/*
 * nearest.c: the "did you mean" of every error about a misspelt name: the
 * sweep loader's keys and values, the command line's commands and options.
 * One rule for all of them, so a typo is caught the same way everywhere.
 */
#include <ctype.h>
#include <string.h>

#include "util/util.h"

/* Levenshtein distance, letters compared without case (so ReLU, SGD and
 * True are next to relu, sgd and true: three edits apart with case, too
 * many for a four-letter word); names longer than 63 bytes are never "near". */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

const char *fs_nearest(const char *s, const char *const *cand, int n)
{
    /* Close means at most a third of the word changed (and at most 3 edits),
     * so "lr" does not suggest "s" but "learning_rat" suggests "learning_rate". */
    int best = 99;
    const char *pick = NULL;
    int limit = (int)strlen(s) / 3 + 1;
    if (limit > 3) limit = 3;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(s, cand[i]);
        if (d < best) best = d, pick = cand[i];
    }
    return best <= limit ? pick : NULL;
}
