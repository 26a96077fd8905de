/*
 * test_features_util.h: what the tests of the feature readers share
 * (test_features, test_features_faults): a spec of one source, and a load
 * expected to fail at once (a FIFO waited on ends the test by SIGALRM),
 * leaving the data set as it was, with every NULL-terminated substring in
 * its message. Include after test_proc.h (or test.h).
 */
#ifndef FS_TEST_FEATURES_UTIL_H
#define FS_TEST_FEATURES_UTIL_H

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "features/features.h"

static inline FsFeatSpec tf_one_source(FsFeatKind kind, const char *path)
{
    FsFeatSpec s;
    memset(&s, 0, sizeof s);
    s.n = 1;
    s.src[0].kind = kind;
    s.src[0].path = path;
    return s;
}

static inline void tf_expect_fail_at(int line, FsDataset *ds, const FsFeatSpec *spec, ...)
{
    FsErr err = {0};
    const uint64_t fp = ds->fingerprint;
    void *feat = ds->feat;
    alarm(20);
    int rc = features_load(ds, spec, &err);
    alarm(0);
    CHECK_MSG(rc == -1, "line %d: features loaded but should fail", line);
    CHECK_MSG(ds->fingerprint == fp && ds->feat == feat, "line %d: a failed load changed the data set", line);
    va_list ap;
    va_start(ap, spec);
    for (const char *sub; (sub = va_arg(ap, const char *));)
        CHECK_MSG(strstr(err.msg, sub) != NULL, "line %d: \"%s\" lacks \"%s\"", line, err.msg, sub);
    va_end(ap);
}
#define expect_fail(ds, spec, ...) tf_expect_fail_at(__LINE__, ds, spec, __VA_ARGS__, (const char *)NULL)

#endif
