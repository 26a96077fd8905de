/*
 * settings: what a run's options come to, decided in one place. The
 * command line wins over the sweep's run section, which wins over what the
 * machine suggests; everything else reads the result (FsRunSettings)
 * instead of deciding again. A pure function of its arguments, so that a
 * rule can be checked on made-up machines (tests/test_settings.c); the
 * one look at the disk, run_home_dir, is the caller's to make.
 */
#include <string.h>
#include <unistd.h>

#include "run/run.h"

void run_default_out(const char *sweep_path, char *out, size_t n)
{
    const char *base = sweep_path ? strrchr(sweep_path, '/') : NULL;
    base = base ? base + 1 : sweep_path ? sweep_path : "";
    size_t len = strcspn(base, ".");
    snprintf(out, n, "runs/%.*s", (int)len, base);
}

void run_settings(FsRunSettings *s, const FsRunOptions *o, const FsSweep *sw, const FsMpi *m)
{
    memset(s, 0, sizeof *s);
    int asked = o->threads > 0 ? o->threads : sw && sw->threads > 0 ? sw->threads : 0;
    /* Ranks on one node share its cores; rank 0's share may be none (it
     * then only coordinates), a worker rank trains on at least one. */
    int several = m->active && m->size > 1;
    int share = several ? m->node_cores / (m->local_size > 0 ? m->local_size : 1) : m->node_cores;
    s->threads = asked ? asked : share;
    if (m->rank != 0 && s->threads < 1) s->threads = 1;
    /* Work that is one process's alone, after training or outside a run:
     * nothing else trains beside it. */
    s->solo_threads = asked ? asked : m->node_cores > 0 ? m->node_cores : 1;
    s->backend = o->backend >= 0 ? o->backend : sw ? (int)sw->backend : FS_BACKEND_AUTO;
    s->gpu_path = o->gpu_path >= 0 ? o->gpu_path : sw ? sw->gpu_path : FS_GPU_PATH_AUTO;
    if (o->out_dir)
        snprintf(s->out_dir, sizeof s->out_dir, "%s", o->out_dir);
    else if (sw && sw->out_dir)
        snprintf(s->out_dir, sizeof s->out_dir, "%s", sw->out_dir);
    else if (o->home_dir)
        snprintf(s->out_dir, sizeof s->out_dir, "%s", o->home_dir);
    else
        run_default_out(o->sweep_path, s->out_dir, sizeof s->out_dir);
    s->keep_models = sw ? sw->keep_models : FS_KEEP_ALL;
}

int run_progress_redraw(int asked, int out_tty, int launcher_tty)
{
    if (asked != FS_LINE_AUTO) return asked == FS_LINE_BAR;
    return out_tty && launcher_tty != 0;
}

int run_home_dir(const char *sweep_path, char *out, size_t n)
{
    const char *slash = sweep_path ? strrchr(sweep_path, '/') : NULL;
    const char *base = slash ? slash + 1 : sweep_path;
    if (!base || strcmp(base, "sweep.yaml")) return 0;
    if (!slash) snprintf(out, n, ".");
    else if (slash == sweep_path) snprintf(out, n, "/");
    else snprintf(out, n, "%.*s", (int)(slash - sweep_path), sweep_path);
    char journal[FS_PATH_MAX + 16];
    snprintf(journal, sizeof journal, "%s/journal.jsonl", out);
    return access(journal, F_OK) == 0;
}

int run_solo_threads(int threads)
{
    FsRunOptions o = {.threads = threads, .backend = -1, .gpu_path = -1};
    FsRunSettings s;
    FsMpi alone;
    fsmpi_alone(&alone);
    run_settings(&s, &o, NULL, &alone);
    return s.solo_threads;
}
