/*
 * test_proc.h: for tests that drive the built foldsweep binary, and the
 * small file helpers they share. Every command is printed before it runs,
 * exactly as a shell takes it, so a failing (or hanging) one can be rerun by
 * hand. Functions are static inline: a test uses only some of them, and
 * unused inline ones draw no warning.
 */
#ifndef FS_TEST_PROC_H
#define FS_TEST_PROC_H

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* What the last tp_run printed on stdout and stderr (cut to fit). */
static char out_text[1 << 17], err_text[1 << 16];

/* ---------------------------------------------------------------------- */
/* Files                                                                   */

/* The whole file, NUL-terminated (malloc'd; *n gets its size if n is not
 * NULL), or NULL if it cannot be opened. */
static inline char *tp_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(len > 0 ? (size_t)len + 1 : 1);
    size_t got = len > 0 ? fread(buf, 1, (size_t)len, f) : 0;
    buf[got] = '\0';
    fclose(f);
    if (n) *n = got;
    return buf;
}

/* Writes (mode "wb") or appends ("ab") n bytes; a failure is a failed check. */
static inline void tp_write_file(const char *path, const void *data, size_t n, const char *mode)
{
    FILE *f = fopen(path, mode);
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return;
    size_t put = fwrite(data, 1, n, f);
    int closed = fclose(f);
    CHECK_MSG(put == n && closed == 0, "cannot write %s", path);
}

static inline void tp_write_text(const char *path, const char *text)
{
    tp_write_file(path, text, strlen(text), "wb");
}

/* Occurrences of sub in s, not overlapping. */
static inline int tp_count(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p += strlen(sub)) n++;
    return n;
}

/* The same in a file; -1 while the file does not exist (yet). */
static inline int tp_count_in_file(const char *path, const char *sub)
{
    char *s = tp_read_file(path, NULL);
    if (!s) return -1;
    int n = tp_count(s, sub);
    free(s);
    return n;
}

/* ---------------------------------------------------------------------- */
/* Processes                                                               */

/* Prints s as one shell word. */
static inline void tp_print_word(const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+") ==
                  strlen(s)) {
        fputs(s, stdout);
        return;
    }
    putchar('\'');
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", stdout); /* close, an escaped quote, reopen */
        else
            putchar(*s);
    putchar('\'');
}

/* Starts path with argv, its stdout and stderr on out_fd and err_fd. */
static inline pid_t tp_spawn_fds(const char *path, char *const argv[], int out_fd, int err_fd)
{
    fflush(NULL); /* the command line shows before anything the child does */
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(err_fd, STDERR_FILENO);
        execv(path, argv);
        _exit(127);
    }
    return pid;
}

/* The exit code, or 128 + the signal that ended it (as a shell reports). */
static inline int tp_wait(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* tp_wait for at most `limit` seconds: a command still running then (a
 * hung job) is killed with its process group and fails the test. */
static inline int tp_wait_limited(pid_t pid, int limit)
{
    for (int i = 0; i < limit * 100; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(10000);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK_MSG(0, "command still running after %d s (a hang): killed", limit);
    return -1;
}

/* Starts the binary with argv (argv[0] is only its name) and both its
 * outputs going to log_path; returns the pid, for signals and tp_wait. */
static inline pid_t tp_spawn(char *const argv[], const char *log_path)
{
    printf("$ ");
    tp_print_word(FS_TEST_BIN);
    for (int i = 1; argv[i]; i++) putchar(' '), tp_print_word(argv[i]);
    printf(" >");
    tp_print_word(log_path);
    printf(" 2>&1\n");
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK_MSG(fd >= 0, "cannot write %s", log_path);
    if (fd < 0) return -1;
    pid_t pid = tp_spawn_fds(FS_TEST_BIN, argv, fd, fd);
    close(fd);
    return pid;
}

static inline int tp_run_argv(char *const argv[], const char *log_path)
{
    pid_t pid = tp_spawn(argv, log_path);
    return pid > 0 ? tp_wait(pid) : -1;
}

static inline void tp_read_stream(FILE *f, char *buf, size_t cap)
{
    rewind(f);
    buf[fread(buf, 1, cap - 1, f)] = '\0';
}

/* Runs `foldsweep ARGS` through the shell, ARGS printf-formatted and already
 * shell-quoted; stdout lands in out_text, stderr in err_text. Returns the
 * exit code. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline int tp_run(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s", FS_TEST_BIN, args);
    printf("$ %s\n", cmd);
    FILE *o = tmpfile(), *e = tmpfile();
    if (!o || !e) {
        perror("tmpfile");
        exit(1);
    }
    char *argv[] = {"sh", "-c", cmd, NULL};
    int rc = tp_wait(tp_spawn_fds("/bin/sh", argv, fileno(o), fileno(e)));
    tp_read_stream(o, out_text, sizeof out_text);
    tp_read_stream(e, err_text, sizeof err_text);
    fclose(o);
    fclose(e);
    printf("  -> exit %d\n", rc);
    return rc;
}

/* A fresh folder $TMPDIR/fs_test_TAG_?????? (mkdtemp's six-letter
 * template) in out; the test is skipped when none can be made. */
static inline void tp_tmpdir(char *out, size_t n, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, n, "%s/fs_test_%s_XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(out)) TEST_SKIP("cannot make a temporary folder %s", out);
}

#endif
