/*
 * test.h: the project's minimal test harness. Each test file is one
 * executable; CHECK records a failure with file:line and goes on, so one
 * run shows every broken assertion. TEST_SKIP exits 77 (CTest "skipped").
 */
#ifndef FS_TEST_H
#define FS_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_checks, t_failures;

#define CHECK(cond)                                                             \
    do {                                                                        \
        t_checks++;                                                             \
        if (!(cond)) {                                                          \
            t_failures++;                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                       \
    } while (0)

#define CHECK_MSG(cond, ...)                                                    \
    do {                                                                        \
        t_checks++;                                                             \
        if (!(cond)) {                                                          \
            t_failures++;                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                   \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol), "%.9g vs %.9g (tol %g)", \
              (double)(a), (double)(b), (double)(tol))

/* The message contains the substring. */
#define CHECK_CONTAINS(msg, sub)                                                \
    CHECK_MSG(strstr((msg), (sub)) != NULL, "\"%s\" lacks \"%s\"", (msg), (sub))

#define TEST_SKIP(...)                                                          \
    do {                                                                        \
        printf("SKIP: ");                                                       \
        printf(__VA_ARGS__);                                                    \
        printf("\n");                                                           \
        exit(77);                                                               \
    } while (0)

/* Call last in main. */
static inline int test_finish(void)
{
    printf("%d checks, %d failed\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}

#endif
