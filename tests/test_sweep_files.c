/*
 * test_sweep_files.c: every sweep shipped in sweeps/ loads, reloads from its
 * canonical text to the same trials, and is what its comments promise (R1's
 * exact model, a quick quickstart, a grid of about a hundred). Where the data
 * is at hand (synthetic, or ../shared/data), the data loads and checks too.
 * These sweeps are installed (share/foldsweep/sweeps), away from any data
 * file: one that names files says which in its first comment.
 */
#include <dirent.h>
#include <unistd.h>

#include "sweep/sweep.h"
#include "test.h"
#include "test_proc.h"

/* The sweep's first comment (its leading '#' lines) names every data file
 * it reads, so that an installed copy tells its user what to point it at. */
static void check_named(const char *comment, const char *file, const char *name)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    CHECK_MSG(strstr(comment, base) != NULL, "%s: its first comment does not name the data file '%s'", name, base);
}

static void check_first_comment(const char *path, const FsSweep *sw, const char *name)
{
    char *text = tp_read_file(path, NULL);
    CHECK_MSG(text != NULL, "%s: cannot read", name);
    if (!text) return;
    char *end = text;
    while (*end == '#') {
        char *nl = strchr(end, '\n');
        end = nl ? nl + 1 : end + strlen(end);
    }
    *end = '\0';
    for (int i = 0; i < sw->n_inputs; i++) check_named(text, sw->inputs[i], name);
    const char *more[] = {sw->sequences, sw->labels, sw->mask, sw->prepared};
    for (int i = 0; i < 4; i++)
        if (more[i]) check_named(text, more[i], name);
    free(text);
}

static void check_roundtrip(const FsSweep *sw, const char *name)
{
    FsSweep again;
    FsErrList e = {0};
    int rc = sweep_load_string(&again, sw->canonical, "canonical", &e);
    CHECK_MSG(rc == 0, "%s: canonical text does not load: %s", name, e.n ? e.msg[0] : "?");
    errlist_free(&e);
    if (rc) return;
    CHECK_MSG(again.n_trials == sw->n_trials, "%s: %d trials, %d after reload", name, sw->n_trials, again.n_trials);
    for (int i = 0; i < sw->n_trials && i < again.n_trials; i++)
        CHECK_MSG(!strcmp(sw->trials[i].config, again.trials[i].config), "%s: trial %d differs", name, i);
    char diff[1024];
    CHECK_MSG(sweep_diff(sw->canonical, again.canonical, diff, sizeof diff) == 0, "%s: %s", name, diff);
    sweep_free(&again);
}

/* Loads the data when it is at hand; returns 1 if it did. */
static int check_data(const FsSweep *sw, const char *name)
{
    for (int i = 0; i < sw->n_inputs; i++)
        if (access(sw->inputs[i], R_OK) != 0) return 0;
    if (sw->prepared) return 0;
    const char *fasta[3] = {sw->sequences, sw->labels, sw->mask};
    for (int i = 0; i < 3; i++)
        if (fasta[i] && access(fasta[i], R_OK) != 0) return 0;
    for (int i = 0; i < sw->features.n; i++) /* made by `foldsweep synth`, say, first */
        if (access(sw->features.src[i].path, R_OK) != 0) return 0;
    FsDataset ds;
    FsErrList e = {0};
    int rc = sweep_load_data(sw, &ds, &e);
    CHECK_MSG(rc == 0, "%s: data: %s", name, e.n ? e.msg[0] : "?");
    errlist_free(&e);
    if (rc == 0) data_free(&ds);
    return 1;
}

static void check_r1(const FsSweep *sw)
{
    CHECK(sw->n_trials == 1 && sw->window == 17 && sw->folds == 3 && sw->format == FS_FMT_UCI);
    if (sw->n_trials != 1) return;
    const FsArch *a = &sw->trials[0].arch;
    CHECK(a->n_layers == 3);
    for (int i = 0; i < 2; i++)
        CHECK(a->layers[i].kind == FS_LAYER_CONV && a->layers[i].units == 64 && a->layers[i].width == 5 &&
              a->layers[i].act == FS_ACT_SWISH);
    CHECK(a->layers[2].kind == FS_LAYER_DENSE && a->layers[2].units == 128 && a->layers[2].act == FS_ACT_SWISH);
    const FsTrainSpec *t = &sw->trials[0].train;
    CHECK(t->opt == FS_OPT_ADAM && t->lr == 1e-3f && t->batch == 8 && t->stop.max_epochs == 5 &&
          t->stop.kind == FS_STOP_MAX_EPOCHS);
    CHECK(sw->n_inputs == 1 && strstr(sw->inputs[0], "/shared/data/uci/protein-secondary-structure.train"));
}

int main(void)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/sweeps", FS_TEST_SRC_DIR);
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "no %s", dir);
    if (!d) return test_finish();
    int files = 0, seen_quick = 0, seen_r1 = 0, seen_grid = 0, seen_layers = 0, with_data = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".yaml")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FsSweep sw;
        FsErrList e = {0};
        int rc = sweep_load_file(&sw, path, &e);
        for (int i = 0; i < e.n; i++) fprintf(stderr, "  %s\n", e.msg[i]);
        CHECK_MSG(rc == 0, "%s does not load", de->d_name);
        errlist_free(&e);
        if (rc) continue;
        files++;
        printf("%-24s %4d trials (grid %llu)\n", de->d_name, sw.n_trials, (unsigned long long)sw.grid_size);
        CHECK(sw.n_trials > 0);
        check_roundtrip(&sw, de->d_name);
        if (!strcmp(de->d_name, "quickstart.yaml")) {
            seen_quick = 1;
            CHECK(sw.synth_proteins > 0 && sw.n_trials >= 8 && sw.n_trials <= 12);
            for (int i = 0; i < sw.n_trials; i++) CHECK(sw.trials[i].train.stop.max_epochs <= 6);
        }
        if (!strcmp(de->d_name, "r1.yaml")) seen_r1 = 1, check_r1(&sw);
        if (!strcmp(de->d_name, "grid-example.yaml")) {
            seen_grid = 1;
            CHECK(sw.n_trials >= 80 && sw.n_trials <= 128 && sw.window == 17);
        }
        if (!strcmp(de->d_name, "layers-example.yaml")) {
            seen_layers = 1;
            CHECK(sw.n_trials > 1 && sw.trials[0].train.stop.kind != FS_STOP_MAX_EPOCHS);
        }
        check_first_comment(path, &sw, de->d_name);
        with_data += check_data(&sw, de->d_name);
        sweep_free(&sw);
    }
    closedir(d);
    CHECK(files >= 4 && seen_quick && seen_r1 && seen_grid && seen_layers);
    printf("%d sweep files, %d with their data loaded\n", files, with_data);
    return test_finish();
}
