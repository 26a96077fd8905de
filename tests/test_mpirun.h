/*
 * test_mpirun.h: for tests that drive real mpirun (test_mpi, test_mpi_faults,
 * test_chaos): a shell command in the background with its output to a log,
 * the flags mpirun needs here, and the ranks mpirun started. Static inline,
 * as in test_proc.h.
 */
#ifndef FS_TEST_MPIRUN_H
#define FS_TEST_MPIRUN_H

#include <dirent.h>

#include "test_proc.h"

/* Runs `sh -c cmd` in the background, printed first, with both outputs to
 * log_path; returns the shell's pid. */
static inline pid_t tm_start(const char *cmd, const char *log_path)
{
    printf("$ %s\n", cmd);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK_MSG(fd >= 0, "cannot write %s", log_path);
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    pid_t pid = tp_spawn_fds("/bin/sh", argv, fd, fd);
    if (fd >= 0) close(fd);
    return pid;
}

/* tm_start, then its exit code within limit seconds (a hang fails). */
static inline int tm_sh(const char *cmd, const char *log_path, int limit)
{
    return tp_wait_limited(tm_start(cmd, log_path), limit);
}

/* As root Open MPI wants --allow-run-as-root; the tests use more ranks than
 * this machine has cores. */
static inline const char *tm_mpirun_flags(void)
{
    return geteuid() == 0 ? "--allow-run-as-root --oversubscribe" : "--oversubscribe";
}

/* The pids whose parent is ppid (mpirun starts the ranks as its children),
 * at most cap of them. */
static inline int tm_children_of(pid_t ppid, pid_t *out, int cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) && n < cap) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        char *close_paren = strrchr(buf, ')'); /* the name may hold spaces */
        int parent = 0;
        char state;
        if (close_paren && sscanf(close_paren + 1, " %c %d", &state, &parent) == 2 && parent == ppid)
            out[n++] = (pid_t)atol(e->d_name);
    }
    if (d) closedir(d);
    return n;
}

#endif
