/*
 * repair.c: `foldsweep repair DIR`. A journal damaged in the middle (a bad
 * disk block, an editor, a copy gone wrong) stops `run` with the line and
 * the reason; repair writes the good lines, byte for byte, as a new
 * journal and keeps the damaged one beside it. Given the sweep, a record
 * that passes its checksum but does not fit the sweep (sense.c) is dropped
 * the same way. Folds whose records were lost are simply trained again by
 * the next run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_internal.h"

/* Moves the good lines of buf to its front (in order; *kept bytes) and
 * reports each bad one. Returns the number dropped. */
static long sift(char *buf, size_t n, const char *path, const FsJournalCheck *checks, size_t *kept, FILE *out)
{
    FsJournal scratch;
    memset(&scratch, 0, sizeof scratch);
    scratch.fd = -1;
    scratch.check = (FsJournalCheck *)checks; /* borrowed: taken back before journal_close */
    long line = 0, dropped = 0;
    *kept = 0;
    for (size_t pos = 0; pos < n;) {
        line++;
        const char *nl = memchr(buf + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - buf) : n;
        char why[256];
        int ok = nl && journal_check_line(&scratch, buf + pos, end - pos, why, sizeof why) == 0;
        if (!nl) snprintf(why, sizeof why, "torn record (no newline)");
        if (ok) { /* *kept <= pos: the line moves down over dropped ones, if any */
            memmove(buf + *kept, buf + pos, end - pos + 1);
            *kept += end - pos + 1;
        } else {
            dropped++;
            if (out) fprintf(out, "repair: %s:%ld: dropped: %s\n", path, line, why);
        }
        pos = end + 1;
    }
    scratch.check = NULL;
    journal_close(&scratch);
    return dropped;
}

long journal_repair(const char *dir, const FsJournalCheck *checks, FILE *out, FsErr *err)
{
    char path[FS_PATH_IN_DIR], kept[FS_PATH_SUFFIXED], clean_tmp[FS_PATH_SUFFIXED];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return fs_err_set(err, "%s: cannot open: %s", path, strerror(errno)), -1;
    /* The run's own lock: no run may append while the file is replaced. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        char who[160] = "", paren[170] = "";
        if (journal_holder(dir, who, sizeof who) == 0) snprintf(paren, sizeof paren, " (%s)", who);
        if (e == EWOULDBLOCK)
            return fs_err_set(err, "%s: a foldsweep run is writing this folder%s; stop it first", path, paren), -1;
        return fs_err_set(err, "%s: cannot lock: %s", path, strerror(e)), -1;
    }
    int held;
    journal_note_write(path, &held);
    char *buf = NULL;
    size_t n = 0;
    if (journal_read_fd(fd, &buf, &n) != 0) {
        fs_err_set(err, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t kept_n;
    long dropped = sift(buf, n, path, checks, &kept_n, out);
    long rc = dropped;
    if (dropped == 0) goto done;
    struct stat sb;
    int k = 1;
    do snprintf(kept, sizeof kept, "%s/journal.damaged-%d.jsonl", dir, k++);
    while (lstat(kept, &sb) == 0 && k < 100000);
    snprintf(clean_tmp, sizeof clean_tmp, "%s/journal.repaired.jsonl", dir);
    /* Durable clean copy first; then the original steps aside (rename keeps
     * it whole); then the copy takes the name. link() refuses to replace a
     * journal a new run might have created in between. */
    if (fs_write_file_atomic(clean_tmp, buf, kept_n, err) != 0) {
        rc = -1;
    } else if (rename(path, kept) != 0) {
        fs_err_set(err, "%s: cannot rename to %s: %s", path, kept, strerror(errno));
        unlink(clean_tmp);
        rc = -1;
    } else if (link(clean_tmp, path) != 0) {
        fs_err_set(err, "%s: cannot put the repaired journal in place (%s); it is in %s, the original in %s", path,
                   strerror(errno), clean_tmp, kept);
        rc = -1;
    } else {
        unlink(clean_tmp);
        fs_sync_dir(dir);
        if (out)
            fprintf(out, "repair: %ld damaged line%s dropped; the original journal is kept as %s. The next run "
                         "trains again any fold whose record was dropped.\n",
                    dropped, dropped == 1 ? "" : "s", kept);
    }
done:
    free(buf);
    if (n > 0 || !held) journal_note_remove(path); /* an empty journal keeps a run's, as on close (lock.c) */
    close(fd);
    return rc;
}
