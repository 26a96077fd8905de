/*
 * lock.c: the journal's lock and its holder's note.
 *
 * The lock is an exclusive flock on DIR/journal.jsonl, held while a run,
 * refit or evaluation writes the folder. The name may move on while a
 * process waits for nothing in between: a run that found someone's files
 * removes the journal it created, --restart and repair set the journal
 * aside. A lock on a file the name no longer holds guards nothing, so the
 * lock counts only once the name is seen to hold the locked file (else the
 * open is tried again).
 *
 * DIR/journal.lock names the holder ("pid 4242 on node7"), so that the
 * refusal of a second run says who holds the folder (a flock has no owner
 * to ask for, and on a cluster the holder may be another machine's).
 * Whoever takes the lock (journal_open, repair) writes it, and removes it
 * before letting go, so a process refused the lock reads the holder's own
 * note. Its presence tells one more thing: a journal that is empty and
 * whose lock nobody ever held (no note) was made by a run that never got
 * the folder, so the folder may still be someone's own (journal_open's
 * `fresh`). The note of a journal that is still empty is therefore left in
 * place on close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_internal.h"

/* DIR/journal.lock from DIR/journal.jsonl. */
static void note_path(const char *journal, char *out, size_t n)
{
    size_t stem = strlen(journal) - strlen("jsonl");
    snprintf(out, n, "%.*slock", (int)stem, journal);
}

/* 1 when the note names a process of this machine that is gone (a killed
 * holder's note, read in the moment before the new holder writes its own). */
static int note_stale(const char *note)
{
    long pid;
    int at = 0;
    char host[256] = "";
    if (sscanf(note, "pid %ld on %n", &pid, &at) != 1 || !at) return 0;
    if (gethostname(host, sizeof host - 1) != 0 || strcmp(note + at, host)) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int journal_holder(const char *dir, char *out, size_t n)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/journal.lock", dir);
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    ssize_t k = read(fd, out, n - 1);
    close(fd);
    out[k > 0 ? k : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    if (note_stale(out)) out[0] = '\0';
    return out[0] ? 0 : -1;
}

/* The refusal: the folder is held, by whom if its note says. */
static int refuse(const char *journal, const char *dir, FsErr *err)
{
    char who[160];
    if (journal_holder(dir, who, sizeof who) != 0)
        return fs_err_set(err, "%s: another foldsweep run is writing this folder", journal), -1;
    return fs_err_set(err, "%s: another foldsweep run is writing this folder (%s)", journal, who), -1;
}

/* 1 when path still names the file open as fd. */
static int still_named(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* One try: the journal opened (created if absent) and locked. 1 when the
 * name moved on meanwhile (try again), 0, or -1 with err. */
static int open_once(FsJournal *j, const char *dir, FsErr *err)
{
    j->created = 1;
    int fd = open(j->path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
        j->created = 0;
        fd = open(j->path, O_RDWR | O_APPEND | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) return 1; /* removed since the first open */
    }
    if (fd < 0) return fs_err_set(err, "%s: cannot open: %s", j->path, strerror(errno)), -1;
    if (j->created) fs_sync_dir(dir); /* the new file's name is durable too */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) return refuse(j->path, dir, err);
        return fs_err_set(err, "%s: cannot lock: %s", j->path, strerror(e)), -1;
    }
    if (!still_named(fd, j->path)) return close(fd), 1;
    j->fd = fd;
    return 0;
}

void journal_note_write(const char *journal, int *held)
{
    char path[FS_PATH_IN_DIR], host[256] = "", text[320];
    note_path(journal, path, sizeof path);
    *held = access(path, F_OK) == 0;
    if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "an unnamed host");
    int n = snprintf(text, sizeof text, "pid %ld on %s\n", (long)getpid(), host);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return; /* a refusal then names no holder; nothing else depends on it */
    if (write(fd, text, (size_t)n) != n) (void)ftruncate(fd, 0);
    close(fd);
}

void journal_note_remove(const char *journal)
{
    char path[FS_PATH_IN_DIR];
    note_path(journal, path, sizeof path);
    unlink(path);
}

int journal_lock(FsJournal *j, const char *dir, FsErr *err)
{
    for (int tries = 0; tries < 16; tries++) {
        int rc = open_once(j, dir, err);
        if (rc <= 0) {
            if (rc == 0) journal_note_write(j->path, &j->was_held);
            return rc;
        }
    }
    return fs_err_set(err, "%s: the file was replaced each time it was locked (16 tries): another process keeps "
                      "moving it", j->path), -1;
}

void journal_unlock(FsJournal *j, int keep_note)
{
    /* Before the lock goes: the next holder's note is its own. */
    if (j->fd >= 0 && !j->read_only && !keep_note) journal_note_remove(j->path);
}

void journal_discard(FsJournal *j)
{
    if (j->fd >= 0 && !j->read_only) {
        if (j->created && j->size == 0) unlink(j->path);
        journal_unlock(j, 0);
    }
    journal_close(j);
}

int journal_is_locked(const char *dir)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0) rc = errno == EWOULDBLOCK ? 1 : -1;
    close(fd); /* drops our shared lock, if taken */
    return rc;
}
