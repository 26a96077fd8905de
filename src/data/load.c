/*
 * load.c: data_load. Decides each input's layout (declared or detected
 * from its content), runs the matching reader, and refuses a file whose
 * content contradicts the declared layout rather than misreading it.
 */
#include <ctype.h>
#include <string.h>

#include "data/reader.h"

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

static int is_word(const char *s, size_t n, const char *w)
{
    return n == strlen(w) && memcmp(s, w, n) == 0;
}

/* Leading/trailing whitespace removed. */
static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) (*s)++, (*n)--;
    while (*n && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

/* Whether the lines after a '>' header (from pos) are a record's: exactly
 * two lines, then a blank line or the end. With `content`, the second must
 * also be a label line as long as the first, made of label letters: where
 * labels are optional (predict), a sequence wrapped over two lines (61 to
 * 120 residues at UniProt's 60 a line) was read as a record, its second
 * line as labels, when only the line count decided. Without it (a labelled
 * input) a record with a wrong label line stays a record, for the reader
 * to say which line is off. */
static int first_record(const DataText *t, size_t pos, int content)
{
    const char *line;
    size_t len, seq_len = 0;
    int lines = 0;
    while (data_text_line(t, &pos, &line, &len)) {
        if (is_blank(line, len)) break;
        if (line[0] == '>' || ++lines > 2) return 0;
        trim(&line, &len);
        if (!content) continue;
        if (lines == 1) {
            seq_len = len;
            continue;
        }
        if (len != seq_len) return 0;
        for (size_t i = 0; i < len; i++)
            if (data_ss_code((unsigned char)line[i]) < 0 && data_ss8_code((unsigned char)line[i]) < 0) return 0;
    }
    return lines == 2;
}

/* data_detect, with first_record's `content` rule for '>' files. */
static FsFormat detect(const DataText *t, int content)
{
    size_t pos = 0, len;
    const char *line;
    while (data_text_line(t, &pos, &line, &len)) {
        trim(&line, &len);
        if (len == 0 || line[0] == '#') continue;
        if (len >= 6 && strncmp(line, "input", 5) == 0 && memchr(line, ',', len)) return FS_FMT_CSV;
        if (is_word(line, len, "<>") || is_word(line, len, "end") || is_word(line, len, "<end>"))
            return FS_FMT_UCI;
        /* "A h": a residue letter, spaces, a label (never "> id", a FASTA header). */
        if (len >= 3 && isalpha((unsigned char)line[0]) && isspace((unsigned char)line[1])) {
            size_t j = 1;
            while (j < len && isspace((unsigned char)line[j])) j++;
            if (j == len - 1) return FS_FMT_UCI;
        }
        if (line[0] == '>') return first_record(t, pos, content) ? FS_FMT_RECORDS : FS_FMT_FASTA;
        for (size_t i = 0; i < len; i++)
            if (!isalpha((unsigned char)line[i])) return FS_FMT_AUTO;
        return FS_FMT_RECORDS;
    }
    return FS_FMT_AUTO;
}

FsFormat data_detect(const DataText *t) { return detect(t, 0); }

FsFormat data_detect_file(const char *path, FsErr *err)
{
    DataText t;
    if (data_text_read(&t, path, err) != 0) return (FsFormat)-1;
    FsFormat f = detect(&t, 1);
    data_text_free(&t);
    return f;
}

static int load_input(DataBuilder *b, FsFormat declared, const char *path, FsErr *err)
{
    DataText t;
    if (data_text_read(&t, path, err)) return -1;
    FsFormat seen = data_detect(&t), use = declared == FS_FMT_AUTO ? seen : declared;
    int rc = -1;
    /* Records and FASTA differ only in line counts, so a declared record
     * file is parsed as one: its reader then says exactly which line is off. */
    int fasta_like = declared == FS_FMT_RECORDS && seen == FS_FMT_FASTA;
    if (fasta_like) use = FS_FMT_RECORDS;
    if (declared != FS_FMT_AUTO && seen != FS_FMT_AUTO && seen != declared && !fasta_like) {
        fs_err_at(err, path, 0, 0, "not %s as declared (--format %s): the content looks like %s",
                  data_format_desc(declared), data_format_name(declared), data_format_desc(seen));
    } else if (use == FS_FMT_AUTO) {
        fs_err_at(err, path, 0, 0,
                  "unrecognised content: expected a UCI pair file, a record file or a NetSurfP-2.0 "
                  "CSV (or give a FASTA set as sequences + labels files)");
    } else if (use == FS_FMT_FASTA) {
        fs_err_at(err, path, 0, 0,
                  "looks like a FASTA file: give a FASTA set as sequences + labels files "
                  "(--sequences S.fasta --labels L.fasta [--mask M.fasta])");
    } else {
        uint32_t before = b->ds->n_prot;
        if (use == FS_FMT_UCI && b->classes == FS_CLASSES8)
            fs_err_at(err, path, 0, 0,
                      "data.classes: 8 needs DSSP 8-state labels, and a UCI pair file's are 3-state (h e _); "
                      "use data.classes: 3");
        else if (use == FS_FMT_UCI)
            rc = data_read_uci(b, &t, err);
        else if (use == FS_FMT_RECORDS)
            rc = data_read_records(b, &t, err);
        else
            rc = data_read_csv(b, &t, err);
        if (rc == 0 && b->ds->n_prot == before) {
            fs_err_at(err, path, 0, 0, "no proteins found (expected %s)", data_format_desc(use));
            rc = -1;
        }
        if (rc == 0) rc = data_build_check8(b, path, err);
    }
    data_text_free(&t);
    return rc;
}

int data_load(FsDataset *ds, const FsLoadSpec *spec, FsErr *err) { return data_load_classes(ds, spec, FS_CLASSES, err); }

int data_load_classes(FsDataset *ds, const FsLoadSpec *spec, int classes, FsErr *err)
{
    DataBuilder b;
    data_build_init(&b, ds);
    b.classes = ds->classes = fs_classes(classes);
    int rc = 0;
    if (spec->sequences || spec->labels || spec->mask) {
        if (spec->format != FS_FMT_AUTO && spec->format != FS_FMT_FASTA) {
            fs_err_set(err, "sequences/labels files form a FASTA set, not %s",
                       data_format_desc(spec->format));
            rc = -1;
        } else if (!spec->sequences || !spec->labels) {
            fs_err_set(err, "a FASTA set needs both a sequences file and a labels file");
            rc = -1;
        } else if (spec->n_inputs > 0) {
            fs_err_set(err, "give either a FASTA set or input files, not both");
            rc = -1;
        } else {
            rc = data_read_fasta_set(&b, spec->sequences, spec->labels, spec->mask, err);
            if (rc == 0) rc = data_build_check8(&b, spec->labels, err);
        }
    } else if (spec->format == FS_FMT_FASTA) {
        fs_err_set(err, "the FASTA layout needs a sequences file and a labels file");
        rc = -1;
    } else if (spec->n_inputs <= 0) {
        fs_err_set(err, "no input files");
        rc = -1;
    } else {
        for (int i = 0; i < spec->n_inputs && rc == 0; i++)
            rc = load_input(&b, spec->format, spec->inputs[i], err);
    }
    if (rc) {
        data_free(ds);
        return -1;
    }
    data_build_finish(&b);
    return 0;
}

int data_load_scoring(FsDataset *ds, const FsLoadSpec *spec, int classes, FsErr *err)
{
    int rc = data_load_classes(ds, spec, classes, err);
    if (rc != 0 && fs_classes(classes) == FS_CLASSES8) {
        FsErr err3 = {0};
        if ((rc = data_load_classes(ds, spec, FS_CLASSES, &err3)) != 0) *err = err3;
    }
    return rc;
}
