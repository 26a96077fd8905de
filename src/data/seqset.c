/*
 * seqset: the residue codes and names of the proteins a run trained or
 * validated on, as a model file keeps them (1 byte a residue) for the
 * identity check of `evaluate` (docs/models.md, "Leakage guard"). A file's
 * arrays are checked before use: the sizes are the file's tensors' (bounded
 * by its bytes), never a count it states.
 */
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

void data_seqset_of(FsSeqSet *s, const FsDataset *ds)
{
    uint32_t n = 0;
    uint64_t res = 0, chars = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        if (!data_in_use(ds, p)) continue;
        n++;
        res += ds->seg_off[ds->prot_seg[p + 1]] - ds->seg_off[ds->prot_seg[p]];
        chars += strlen(data_protein_name(ds, p)) + 1;
    }
    s->n = n;
    s->off = fs_malloc(sizeof(uint32_t) * ((size_t)n + 1));
    s->name_off = fs_malloc(sizeof(uint32_t) * ((size_t)n + 1));
    s->aa = fs_malloc((size_t)res + 1);
    s->names = fs_malloc((size_t)chars + 1);
    uint32_t k = 0;
    s->off[0] = s->name_off[0] = 0;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        if (!data_in_use(ds, p)) continue;
        uint32_t lo = ds->seg_off[ds->prot_seg[p]], hi = ds->seg_off[ds->prot_seg[p + 1]];
        const char *name = data_protein_name(ds, p);
        size_t len = strlen(name) + 1;
        memcpy(s->aa + s->off[k], ds->aa + lo, hi - lo);
        memcpy(s->names + s->name_off[k], name, len);
        s->off[k + 1] = s->off[k] + (hi - lo);
        s->name_off[k + 1] = s->name_off[k] + (uint32_t)len;
        k++;
    }
}

static uint32_t read_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The offsets: n+1 of them, 0 first, n_res last, each protein non-empty. */
static int check_offsets(const uint8_t *off_le, uint64_t n_off, uint64_t n_res, char *why, size_t why_n)
{
    if (n_off < 1 || n_off > UINT32_MAX || n_res >= UINT32_MAX)
        return snprintf(why, why_n, "%llu offsets for %llu residues", (unsigned long long)n_off,
                        (unsigned long long)n_res), -1;
    if (read_u32le(off_le) != 0 || read_u32le(off_le + 4 * (n_off - 1)) != n_res)
        return snprintf(why, why_n, "offsets do not run from 0 to the %llu residues", (unsigned long long)n_res), -1;
    for (uint64_t i = 1; i < n_off; i++)
        if (read_u32le(off_le + 4 * i) <= read_u32le(off_le + 4 * (i - 1)))
            return snprintf(why, why_n, "offset %llu does not increase (an empty protein)", (unsigned long long)i), -1;
    return 0;
}

int data_seqset_from(FsSeqSet *s, const uint8_t *aa, uint64_t n_res, const uint8_t *off_le, uint64_t n_off,
                     const char *names, uint64_t names_len, char *why, size_t why_n)
{
    memset(s, 0, sizeof *s);
    if (check_offsets(off_le, n_off, n_res, why, why_n) != 0) return -1;
    for (uint64_t r = 0; r < n_res; r++)
        if (aa[r] > FS_AA_UNKNOWN) return snprintf(why, why_n, "residue %llu has code %u, above %d",
                                                   (unsigned long long)r, aa[r], FS_AA_UNKNOWN), -1;
    uint64_t nuls = 0;
    for (uint64_t c = 0; c < names_len; c++) nuls += names[c] == '\0';
    if (nuls != n_off - 1 || names_len > UINT32_MAX || (names_len && names[names_len - 1] != '\0'))
        return snprintf(why, why_n, "%llu names for %llu proteins", (unsigned long long)nuls,
                        (unsigned long long)(n_off - 1)), -1;
    s->n = (uint32_t)(n_off - 1);
    s->off = fs_malloc(sizeof(uint32_t) * (size_t)n_off);
    for (uint64_t i = 0; i < n_off; i++) s->off[i] = read_u32le(off_le + 4 * i);
    s->aa = fs_malloc((size_t)n_res + 1);
    memcpy(s->aa, aa, (size_t)n_res);
    s->names = fs_malloc((size_t)names_len + 1);
    memcpy(s->names, names, (size_t)names_len);
    s->name_off = fs_malloc(sizeof(uint32_t) * (size_t)n_off);
    s->name_off[0] = 0;
    for (uint32_t i = 0; i < s->n; i++)
        s->name_off[i + 1] = s->name_off[i] + (uint32_t)strlen(s->names + s->name_off[i]) + 1;
    return 0;
}

void data_seqset_append(FsSeqSet *a, const FsSeqSet *b)
{
    uint32_t na = a->n, res = a->off ? a->off[na] : 0, chars = a->name_off ? a->name_off[na] : 0;
    a->off = fs_realloc(a->off, sizeof(uint32_t) * ((size_t)na + b->n + 1));
    a->name_off = fs_realloc(a->name_off, sizeof(uint32_t) * ((size_t)na + b->n + 1));
    a->aa = fs_realloc(a->aa, (size_t)res + b->off[b->n] + 1);
    a->names = fs_realloc(a->names, (size_t)chars + b->name_off[b->n] + 1);
    memcpy(a->aa + res, b->aa, b->off[b->n]);
    memcpy(a->names + chars, b->names, b->name_off[b->n]);
    for (uint32_t i = 0; i <= b->n; i++) {
        a->off[na + i] = res + b->off[i];
        a->name_off[na + i] = chars + b->name_off[i];
    }
    a->n = na + b->n;
}

int data_seqset_same(const FsSeqSet *a, const FsSeqSet *b)
{
    return a->n == b->n && !memcmp(a->off, b->off, sizeof(uint32_t) * ((size_t)a->n + 1)) &&
           !memcmp(a->aa, b->aa, a->off[a->n]) && !memcmp(a->names, b->names, a->name_off[a->n]);
}

void data_seqset_free(FsSeqSet *s)
{
    free(s->off), free(s->aa), free(s->name_off), free(s->names);
    memset(s, 0, sizeof *s);
}
