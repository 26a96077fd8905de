/*
 * test_sweep_expect.h: the sweep-error tests' one assertion: a sweep text
 * that must fail with a given message at a given line:col, with nothing
 * expanded or loaded. Include after test.h.
 */
#ifndef FS_TEST_SWEEP_EXPECT_H
#define FS_TEST_SWEEP_EXPECT_H

#include "sweep/sweep.h"

/* Loads text as "t.yaml", expects failure, and expects message number
 * `which` (0-based) to start with "t.yaml:POS: " and contain `sub`. */
static inline void expect_at(int line, const char *text, int which, const char *pos, const char *sub)
{
    FsSweep sw;
    FsErrList e = {0};
    int rc = sweep_load_string(&sw, text, "t.yaml", &e);
    CHECK_MSG(rc == -1, "line %d: loaded but should fail", line);
    CHECK_MSG(sw.n_trials == 0 && sw.trials == NULL && sw.canonical == NULL && sw.test_inputs == NULL,
              "line %d: not cleared", line);
    if (rc == 0) sweep_free(&sw);
    char want[64];
    snprintf(want, sizeof want, "t.yaml:%s: ", pos);
    CHECK_MSG(e.n > which, "line %d: %d messages, wanted message %d", line, e.n, which);
    if (e.n > which) {
        CHECK_MSG(!strncmp(e.msg[which], want, strlen(want)), "line %d: \"%s\" is not at %s", line, e.msg[which], pos);
        CHECK_MSG(strstr(e.msg[which], sub) != NULL, "line %d: \"%s\" lacks \"%s\"", line, e.msg[which], sub);
    }
    errlist_free(&e);
}

/* Loads text as "s.yaml" into sw (zeroed first); the messages, one a line,
 * go to why. Returns sweep_load_string's code; sweep_free(sw) either way. */
static inline int sweep_text(FsSweep *sw, const char *text, char *why, size_t n)
{
    FsErrList errs;
    memset(&errs, 0, sizeof errs);
    memset(sw, 0, sizeof *sw);
    const int rc = sweep_load_string(sw, text, "s.yaml", &errs);
    errlist_join(&errs, why, n);
    errlist_free(&errs);
    return rc;
}
#define EXPECT(text, pos, sub) expect_at(__LINE__, (text), 0, (pos), (sub))
#define EXPECT_NTH(which, text, pos, sub) expect_at(__LINE__, (text), (which), (pos), (sub))

#endif
