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

/* A sanitizer build runs the trainer 4-6 times slower. There a test that
 * proves one result on many configurations (thread counts, rank counts)
 * runs each code path once and leaves the repeats to the plain build, the
 * one that proves the identities (.ci/run runs both): t_repeats("the
 * 2-thread run") says so and returns 0 in a sanitizer build, 1 elsewhere. */
#if defined(__SANITIZE_ADDRESS__)
#define T_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_SANITIZED 1
#endif
#endif
#ifndef T_SANITIZED
#define T_SANITIZED 0
#endif
static inline int t_repeats(const char *what)
{
    if (!T_SANITIZED) return 1;
    printf("sanitizer build: %s is left to the plain build (the same code path runs here once)\n", what);
    return 0;
}

/* Call last in main. */
static inline int test_finish(void)
{
    printf("%d checks, %d failed\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}

#endif
