/*
 * class_weights.c: training.class_weights written as explicit weights, a
 * mapping {H: w, E: w, C: w} (one of the option's values, beside none and
 * balanced): read, and written back for the canonical sweep and the trial
 * config. The class letters are util's (fs_class_letters: H E C, or the
 * eight DSSP states with data.classes: 8).
 */
#include <string.h>

#include "sweep/sweep_int.h"

int sw_class_weights_read(const YNode *map, const char *where, int classes, SwVal *out, SwErrs *e)
{
    const int K = fs_classes(classes);
    const char *letters = fs_class_letters(K);
    memset(out, 0, sizeof *out);
    out->d = FS_CW_EXPLICIT;
    out->line = map->line;
    out->col = map->col;
    int seen[FS_MAX_CLASSES] = {0}, bad = 0;
    for (int i = 0; i < map->n; i++) {
        const YNode *k = map->key[i], *v = map->item[i];
        const char *at = strlen(k->value) == 1 ? strchr(letters, k->value[0]) : NULL;
        if (!at || !k->value[0]) {
            swerr_add(e, k->line, k->col, "%s: unknown class '%s'; expected the classes %s, each once%s", where,
                      k->value, letters, K == FS_CLASSES8 ? " (data.classes: 8)" : "");
            bad = 1;
            continue;
        }
        const int c = (int)(at - letters);
        double x;
        seen[c] = 1; /* (a key given twice is refused by the YAML reader) */
        if (sw_scalar_float(v, &x) || !(x > 0.0) || !((float)x <= FS_CW_MAX) || !((float)x > 0.0f)) {
            swerr_add(e, v->line, v->col, "%s.%c: expected a weight > 0 and at most %g", where, letters[c],
                      (double)FS_CW_MAX);
            bad = 1;
        } else {
            out->w[c] = (float)x;
        }
    }
    for (int c = 0; c < K && !bad; c++)
        if (!seen[c]) {
            swerr_add(e, map->line, map->col, "%s: missing class %c; give a weight to each of %s", where, letters[c],
                      letters);
            bad = 1;
        }
    return bad ? -1 : 0;
}

/* The classes of explicit weights: 8 where a weight past the third is set. */
static int weights_classes(const float *w)
{
    return w[FS_CLASSES] > 0.0f ? FS_CLASSES8 : FS_CLASSES;
}

void sw_class_weights_text(const SwVal *v, char *out, size_t n)
{
    size_t k = 0;
    char num[FS_FLOAT_TEXT];
    const int K = weights_classes(v->w);
    for (int c = 0; c < K && k < n; c++)
        k += (size_t)snprintf(out + k, n - k, "%s%c: %s", c ? ", " : "{", fs_class_letters(K)[c],
                              fs_format_float(num, sizeof num, v->w[c]));
    if (k < n) snprintf(out + k, n - k, "}");
}

void sw_class_weights_json(const float w[FS_MAX_CLASSES], char *out, size_t n)
{
    /* Keys sorted, as the rest of the config: the classes in letter order. */
    const int K = weights_classes(w);
    const char *letters = fs_class_letters(K);
    int order[FS_MAX_CLASSES];
    for (int c = 0; c < K; c++) order[c] = c;
    for (int i = 1; i < K; i++)
        for (int j = i; j > 0 && letters[order[j]] < letters[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t k = 0;
    char num[FS_FLOAT_TEXT];
    for (int i = 0; i < K && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s\"%c\":%s", i ? "," : "{", letters[order[i]],
                              fs_format_float(num, sizeof num, w[order[i]]));
    if (k < n) snprintf(out + k, n - k, "}");
}
