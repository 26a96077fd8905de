/*
 * write.c: a dataset as text the loaders read back: a record file
 * (synth_write) or a FASTA set (synth_write_fasta). See synth.h for what
 * each layout cannot hold.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "synth/synth.h"

/* Residues of protein p: [*a, *z). */
static void span(const FsDataset *ds, uint32_t p, uint32_t *a, uint32_t *z)
{
    *a = ds->seg_off[ds->prot_seg[p]];
    *z = ds->seg_off[ds->prot_seg[p + 1]];
}

static FILE *open_out(const char *path, FsErr *err)
{
    FILE *f = fopen(path, "w");
    if (!f) fs_err_at(err, path, 0, 0, "cannot create: %s", strerror(errno));
    return f;
}

/* Closes f; -1 with err if any write failed. */
static int close_out(FILE *f, const char *path, FsErr *err)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fs_err_at(err, path, 0, 0, "write failed: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int synth_write(const FsDataset *ds, const char *path, FsErr *err)
{
    FILE *f = open_out(path, err);
    if (!f) return -1;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        uint32_t a, z;
        span(ds, p, &a, &z);
        fprintf(f, ">%s\n", data_protein_name(ds, p));
        for (uint32_t i = a; i < z; i++) putc(fs_aa_letter(ds->aa[i]), f);
        putc('\n', f);
        for (uint32_t i = a; i < z; i++) putc(FS_CLASS_LETTERS[FS_SS_CLASS(ds->ss[i])], f);
        fputs("\n\n", f);
    }
    return close_out(f, path, err);
}

/* Which letter a residue contributes to one of the three FASTA files. */
typedef enum { FA_SEQ, FA_LABEL, FA_MASK } FaPart;

static char fa_letter(const FsDataset *ds, uint32_t i, FaPart part)
{
    switch (part) {
    case FA_SEQ: return fs_aa_letter(ds->aa[i]);
    case FA_LABEL: return FS_CLASS_LETTERS[FS_SS_CLASS(ds->ss[i])];
    case FA_MASK: return FS_SS_SCORED(ds->ss[i]) ? '1' : '0';
    }
    return '?';
}

static int write_fasta_part(const FsDataset *ds, const char *path, FaPart part, FsErr *err)
{
    FILE *f = open_out(path, err);
    if (!f) return -1;
    for (uint32_t p = 0; p < ds->n_prot; p++) {
        uint32_t a, z;
        span(ds, p, &a, &z);
        fprintf(f, ">%s\n", data_protein_name(ds, p));
        for (uint32_t i = a; i < z; i++) {
            putc(fa_letter(ds, i, part), f);
            if ((i - a) % 60 == 59 || i + 1 == z) putc('\n', f);
        }
    }
    return close_out(f, path, err);
}

int synth_write_fasta(const FsDataset *ds, const char *seq_path, const char *label_path,
                      const char *mask_path, FsErr *err)
{
    if (write_fasta_part(ds, seq_path, FA_SEQ, err) ||
        write_fasta_part(ds, label_path, FA_LABEL, err))
        return -1;
    return mask_path ? write_fasta_part(ds, mask_path, FA_MASK, err) : 0;
}

void synth_losses(const FsDataset *ds, FsFormat fmt, uint64_t *unmasked, uint64_t *joined)
{
    *unmasked = fmt == FS_FMT_FASTA ? 0 : ds->stats.residues - ds->stats.scored;
    *joined = (uint64_t)ds->n_seg - ds->n_prot;
}
