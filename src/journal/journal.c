/*
 * journal.c: opening, reading and closing the journal file (its lock is
 * lock.c's).
 * (Lines are decoded in decode.c into the in-memory records of records.c;
 * record text and the durable append are in journal_write.c, repair in
 * repair.c; the JSON reader and writer are the json module's.)
 *
 * Reading: every line must be a record with its checksum (frame.c: the
 * current form or an earlier build's); the last line may be torn (no
 * newline) or corrupt (bad CRC, bad JSON): it is dropped, and journal_open
 * truncates the file back to the last good line so appends start clean. A
 * bad line anywhere else is an error naming the line, and nothing is
 * changed, so no record is ever lost to a repair. A record whose checksum
 * is right but whose content is not understood (a newer format version, a
 * missing field) is an error even on the last line: it was written whole;
 * so is, once journal_set_sweep gave the sweep, a record that does not fit
 * it (sense.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_internal.h"

/* ---------------------------------------------------------------------- */
/* Open, read, close                                                        */

int journal_read_fd(int fd, char **out, size_t *n)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = fs_malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = fs_realloc(buf, cap *= 2);
        ssize_t k = read(fd, buf + len, cap - 1 - len);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            free(buf);
            return -1;
        }
        if (k == 0) break;
        len += (size_t)k;
    }
    *out = buf;
    *n = len;
    return 0;
}

/* Reads every line; on success sets j->size to the good bytes. A damaged
 * line before the last is an error, or with tolerant skipped and counted. */
static int load(FsJournal *j, int fd, int tolerant, FsErr *err)
{
    char *buf;
    size_t n;
    if (journal_read_fd(fd, &buf, &n)) {
        fs_err_set(err, "%s: cannot read: %s", j->path, strerror(errno));
        return -1;
    }
    size_t pos = 0;
    long line = 0;
    int rc = 0;
    while (pos < n) {
        line++;
        char *nl = memchr(buf + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - buf) : n;
        int last = !nl || end + 1 == n;
        char why[256];
        int lr = nl ? journal_decode_line(j, buf + pos, end - pos, why, sizeof why) : LINE_CORRUPT;
        if (!nl) snprintf(why, sizeof why, "torn record (no newline)");
        if (lr == LINE_CORRUPT && last) {
            j->dropped_tail = 1;
            break;
        }
        if (lr != LINE_OK && tolerant) {
            if (!j->bad_lines++) {
                j->first_bad_line = line;
                snprintf(j->first_bad_why, sizeof j->first_bad_why, "%s", why);
            }
        } else if (lr != LINE_OK) {
            char dir[FS_PATH_MAX];
            snprintf(dir, sizeof dir, "%.*s", (int)(strlen(j->path) - strlen("/journal.jsonl")), j->path);
            fs_err_at(err, j->path, line, 0,
                      "%s. This line is damaged and more records follow it: `%s repair %s` writes a "
                      "journal without the damaged lines and keeps this one beside it (nothing is deleted); "
                      "`%s status` shows what the rest holds",
                      why, fs_program(), dir, fs_program());
            rc = -1;
            break;
        }
        pos = end + 1;
        j->size = (long long)pos;
        j->lines = line;
    }
    free(buf);
    return rc;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = fs_malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void init(FsJournal *j, const char *dir)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    j->path = join_path(dir, "journal.jsonl");
}

int journal_open(FsJournal *j, const char *dir, FsErr *err)
{
    init(j, dir);
    if (fs_mkdir_p(dir, err) || journal_lock(j, dir, err)) goto fail;
    if (load(j, j->fd, 0, err)) goto fail;
    if (j->dropped_tail) {
        if (ftruncate(j->fd, (off_t)j->size) != 0 || fsync(j->fd) != 0) {
            fs_err_set(err, "%s: cannot drop the torn last line: %s", j->path, strerror(errno));
            goto fail;
        }
    }
    j->fresh = j->size == 0 && !j->was_held;
    return 0;
fail:
    journal_close(j);
    return -1;
}

int journal_read(FsJournal *j, const char *dir, FsErr *err)
{
    init(j, dir);
    j->read_only = 1;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fs_err_set(err, "%s: no such run folder", dir);
        goto fail;
    }
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fs_err_set(err, "%s: cannot open: %s", j->path, strerror(errno));
        goto fail;
    }
    int rc = load(j, fd, 1, err);
    close(fd);
    if (rc) goto fail;
    return 0;
fail:
    journal_close(j);
    return -1;
}

/* Frees what was read (records, indexes); the file, path and checks stay. */
static void free_records(FsJournal *j)
{
    for (int i = 0; i < j->n_folds; i++) train_result_free(&j->folds[i].r);
    for (int i = 0; i < j->n_trials; i++) free(j->trials[i].config);
    for (int i = 0; i < j->n_failures; i++) free(j->failures[i].message);
    free(j->folds);
    free(j->trials);
    free(j->failures);
    free(j->runs);
    free(j->discarded);
    free(j->evals);
    free(j->refits);
    for (int i = 0; i < j->n_cuts; i++) free(j->cuts[i].curve);
    free(j->cuts);
    free(j->fold_index);
    free(j->trial_index);
    free(j->sweep_text);
    free(j->sweep_val);
    for (int i = 0; i < j->n_sweep_versions; i++) free(j->sweep_versions[i]);
    free(j->sweep_versions);
}

void journal_close(FsJournal *j)
{
    journal_unlock(j, j->size == 0);
    if (j->fd >= 0) close(j->fd);
    free_records(j);
    journal_check_free(j->check);
    free(j->path);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}

int journal_set_sweep(FsJournal *j, const FsJournalSweep *s, FsErr *err)
{
    FsJournalCheck *check = journal_check_new(s); /* first: s may point into j's records */
    FsJournal keep = *j;
    /* Records before the first sweep record belong to the first version. */
    journal_check_first_version(check, keep.n_sweep_versions ? keep.sweep_versions[0] : NULL);
    free_records(j);
    memset(j, 0, sizeof *j);
    j->path = keep.path;
    j->fd = keep.fd;
    j->read_only = keep.read_only;
    j->created = keep.created, j->was_held = keep.was_held, j->fresh = keep.fresh;
    j->write_seconds = keep.write_seconds;
    journal_check_free(keep.check);
    j->check = check;
    int fd = j->read_only ? open(j->path, O_RDONLY | O_CLOEXEC) : j->fd;
    if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0) {
        fs_err_set(err, "%s: cannot read again: %s", j->path, strerror(errno));
        if (j->read_only && fd >= 0) close(fd);
        return -1;
    }
    int rc = load(j, fd, j->read_only, err);
    if (j->read_only) close(fd);
    j->dropped_tail |= keep.dropped_tail; /* journal_open truncated it away already */
    return rc;
}
