/*
 * test_profile.c: the run's time profile over sessions (run/progress.c
 * profile_write). Two sessions that trained add up in profile.json and
 * profile.txt, the last one shown beside the whole run; a session that
 * trained nothing (a finished sweep rerun) changes nothing; a profile.json
 * of an older foldsweep counts as one session; a damaged or edited one is
 * warned about on stderr, never a crash, and replaced. The report's view of
 * it after a real rerun is in test_html.c.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal.h"
#include "json/json.h"
#include "run/progress.h"
#include "test_proc.h"

static char tmp[256];

/* profile_write with stderr caught in *warning (malloc'd). */
static int write_caught(const char *dir, const FsProfile *p, char **warning)
{
    char path[400];
    snprintf(path, sizeof path, "%s/stderr.txt", tmp);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    FsErr err = {0};
    int rc = profile_write(dir, p, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    *warning = tp_read_file(path, NULL);
    CHECK_MSG(rc == 0, "profile_write: %s", err.msg);
    return rc;
}

static double num(const char *dir, const char *key, int last)
{
    char path[400];
    snprintf(path, sizeof path, "%s/profile.json", dir);
    char *text = tp_read_file(path, NULL);
    FsJsonDoc doc;
    double v = -1;
    if (text && json_parse(&doc, text, strlen(text), NULL, 0) == 0) {
        const FsJson *o = last ? json_get(doc.root, "last_session") : doc.root;
        if (json_f64(json_get(o, key), &v) != 0) v = -1;
        json_free(&doc);
    }
    free(text);
    return v;
}

static void sessions(void)
{
    char dir[400], path[500], *warn = NULL;
    snprintf(dir, sizeof dir, "%s/run", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    FsProfile a = {1.0, 8.0, 2.0, 0.5, 10.0, 2, 4000, 6, 0, 1.5, 0.25}; /* a GPU session: its device and host time */
    FsProfile b = {0.5, 3.0, 1.0, 0.25, 5.0, 1, 1000, 3, 0.5, 0, 0};
    FsProfile idle = {0.75, 0, 0, 0.1, 0.2, 2, 0, 0, 0, 0, 0}; /* a finished sweep rerun: data loaded, nothing trained */

    write_caught(dir, &a, &warn);
    CHECK(warn && !warn[0]);
    free(warn);
    CHECK_NEAR(num(dir, "sessions", 0), 1, 0);
    CHECK_NEAR(num(dir, "examples_per_second", 0), 400, 1e-9);
    CHECK_NEAR(num(dir, "gpu_kernel_seconds", 0), 1.5, 1e-9);
    CHECK_NEAR(num(dir, "gpu_host_seconds", 1), 0.25, 1e-9);
    snprintf(path, sizeof path, "%s/profile.txt", dir);
    char *gtxt = tp_read_file(path, NULL);
    CHECK_CONTAINS(gtxt, "GPU: the device at work          1.50 s  (85.7% of the GPU calls' time)");
    CHECK_CONTAINS(gtxt, "GPU: the host's own share        0.25 s");
    /* Folds trained at once on a GPU: no share of the CPU's worker time, no idle workers. */
    CHECK_CONTAINS(gtxt, "training (all folds)             8.00 s  (summed over the folds, which train at once)");
    CHECK(!strstr(gtxt, "of worker time") && !strstr(gtxt, "idle workers"));
    free(gtxt);

    write_caught(dir, &b, &warn);
    free(warn);
    CHECK_NEAR(num(dir, "sessions", 0), 2, 0);
    CHECK_NEAR(num(dir, "train_examples", 0), 5000, 0);
    CHECK_NEAR(num(dir, "wall_seconds", 0), 15, 1e-9);
    CHECK_NEAR(num(dir, "folds", 0), 9, 0);
    CHECK_NEAR(num(dir, "worker_seconds", 0), 25, 1e-9); /* 10 x 2 + 5 x 1 */
    CHECK_NEAR(num(dir, "idle_seconds", 0), 10 + 0.5, 1e-9); /* 20 - 10, 5 - 4.5 */
    CHECK_NEAR(num(dir, "pruned_seconds", 0), 0.5, 1e-9);
    CHECK_NEAR(num(dir, "gpu_kernel_seconds", 0), 1.5, 1e-9); /* the GPU session's, summed with a CPU one's 0 */
    CHECK_NEAR(num(dir, "gpu_kernel_seconds", 1), 0, 0);
    CHECK_NEAR(num(dir, "examples_per_second", 1), 200, 1e-9);
    CHECK_NEAR(num(dir, "threads", 1), 1, 0);
    snprintf(path, sizeof path, "%s/profile.txt", dir);
    char *txt = tp_read_file(path, NULL);
    CHECK_CONTAINS(txt, "profile of the whole run (2 sessions):");
    CHECK_CONTAINS(txt, "profile of the last session:");
    CHECK_CONTAINS(txt, "training examples per second      333  (9 folds, 15.00 s wall)"); /* a GPU session among them */
    CHECK_CONTAINS(txt, "training examples per second      200  (3 folds)");
    free(txt);

    /* Rerun with nothing to train: both files as they were, no warning. */
    snprintf(path, sizeof path, "%s/profile.json", dir);
    char *before = tp_read_file(path, NULL);
    write_caught(dir, &idle, &warn);
    CHECK(warn && !warn[0]);
    free(warn);
    char *after = tp_read_file(path, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(before), free(after);

    /* An older foldsweep's profile.json: one session to add to. */
    tp_write_text(path, "{\"data_seconds\":1.000,\"train_seconds\":8.000,\"validation_seconds\":2.000,"
                        "\"journal_seconds\":0.500,\"wall_seconds\":10.000,\"threads\":2,\"idle_seconds\":10.000,"
                        "\"train_examples\":4000,\"examples_per_second\":400.0,\"folds\":6,\"pruned_seconds\":0.000}\n");
    write_caught(dir, &b, &warn);
    CHECK(warn && !warn[0]);
    free(warn);
    CHECK_NEAR(num(dir, "sessions", 0), 2, 0);
    CHECK_NEAR(num(dir, "worker_seconds", 0), 25, 1e-9);
    CHECK_NEAR(num(dir, "train_examples", 0), 5000, 0);

    /* Edited by hand, damaged, a number gone wrong: warned, replaced by this session. */
    static const char *bad[] = {"{\"data_seconds\":1, \"train_seconds\":", "[1,2,3]", "",
                                "{\"data_seconds\":1,\"train_seconds\":\"eight\",\"validation_seconds\":2,"
                                "\"journal_seconds\":0,\"wall_seconds\":10,\"train_examples\":4,\"folds\":6}",
                                "{\"data_seconds\":1,\"train_seconds\":8,\"validation_seconds\":2,"
                                "\"journal_seconds\":0,\"wall_seconds\":-10,\"train_examples\":4,\"folds\":6}",
                                "{\"data_seconds\":1,\"train_seconds\":8,\"validation_seconds\":2,\"journal_seconds\":0,"
                                "\"wall_seconds\":10,\"train_examples\":4,\"folds\":6,\"sessions\":1e300}",
                                "{\"data_seconds\":1,\"train_seconds\":8,\"validation_seconds\":2,\"journal_seconds\":0,"
                                "\"wall_seconds\":10,\"train_examples\":4,\"folds\":6,\"gpu_kernel_seconds\":-3}"};
    static const char *why[] = {"not JSON", "not a JSON object", "not JSON", "\"train_seconds\" is not a number",
                                "\"wall_seconds\" is not a number", "out of range",
                                "\"gpu_kernel_seconds\" is not a number of 0 or more"};
    for (int i = 0; i < 7; i++) {
        tp_write_text(path, bad[i]);
        write_caught(dir, &idle, &warn); /* nothing trained: left for its owner to see */
        CHECK_CONTAINS(warn, "warning");
        CHECK_CONTAINS(warn, "left as it is");
        free(warn);
        write_caught(dir, &b, &warn);
        CHECK_CONTAINS(warn, "profile.json");
        CHECK_CONTAINS(warn, why[i]);
        CHECK_CONTAINS(warn, "the profile starts again from this session");
        free(warn);
        CHECK_NEAR(num(dir, "sessions", 0), 1, 0);
        CHECK_NEAR(num(dir, "train_examples", 0), 1000, 0);
    }
}

int main(void)
{
    tp_tmpdir(tmp, sizeof tmp, "profile");
    sessions();
    return test_finish();
}
