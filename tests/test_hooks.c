/*
 * test_hooks: the FOLDSWEEP_TEST_* fault hooks have one reader and one
 * list (src/util/faults.c, fs_test_fault):
 *  1. no file under src/ or kernels/ but faults.c reads one from the
 *     environment itself;
 *  2. every hook the sources ask for (fs_test_fault("NAME")) and every one
 *     the tests set is in the list (FOLDSWEEP_TEST_DATA is the tests' own
 *     variable, not a hook);
 *  3. fs_test_fault gives the variable's value, or NULL when it is unset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util/util.h"

/* Lines of a shell command's output (malloc'd text). */
static char *output_of(const char *cmd)
{
    printf("$ %s\n", cmd);
    FILE *p = popen(cmd, "r");
    if (!p) return strdup("");
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    for (size_t k; (k = fread(s + n, 1, cap - n - 1, p)) > 0;) {
        n += k;
        if (n + 1 == cap) s = realloc(s, cap *= 2);
    }
    s[n] = '\0';
    pclose(p);
    return s;
}

int main(void)
{
    char cmd[2000], listed[1 << 14];
    FILE *f = fmemopen(listed, sizeof listed, "w");
    fs_test_faults_list(f);
    fclose(f);
    printf("%s", listed);

    /* 1 */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && grep -rn 'getenv(\"FOLDSWEEP_TEST_' src kernels --include='*.c' --include='*.h' "
             "--include='*.cu' | grep -v '^src/util/faults.c:'",
             FS_TEST_SRC_DIR);
    char *readers = output_of(cmd);
    CHECK_MSG(!readers[0], "these read a test hook themselves (use fs_test_fault, util/faults.c):\n%s", readers);
    free(readers);

    /* 2 */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && { grep -rhoE 'fs_test_fault\\(\"[A-Z_]+\"' src kernels | sed -E 's/.*\\(\"(.*)\"/\\1/'; "
             "grep -rhoE 'FOLDSWEEP_TEST_[A-Z_]+' tests | sed 's/FOLDSWEEP_TEST_//'; } | sort -u",
             FS_TEST_SRC_DIR);
    char *used = output_of(cmd);
    int n_used = 0;
    for (char *name = strtok(used, "\n"); name; name = strtok(NULL, "\n")) {
        if (!strcmp(name, "DATA")) continue;
        char want[96];
        snprintf(want, sizeof want, "FOLDSWEEP_TEST_%s=", name);
        n_used++;
        CHECK_MSG(strstr(listed, want) != NULL, "hook %s is used but not listed in src/util/faults.c", name);
    }
    CHECK(n_used >= 12);
    free(used);

    /* 3 */
    unsetenv("FOLDSWEEP_TEST_RAISE");
    CHECK(fs_test_fault("RAISE") == NULL);
    setenv("FOLDSWEEP_TEST_RAISE", "nowhere", 1);
    const char *v = fs_test_fault("RAISE");
    CHECK(v && !strcmp(v, "nowhere"));
    unsetenv("FOLDSWEEP_TEST_RAISE");
    return test_finish();
}
