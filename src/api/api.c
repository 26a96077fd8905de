/*
 * api.c: the library API (foldsweep.h) over the command line's own
 * modules: a run is run_sweep with the options `foldsweep run` would
 * make, the leaderboard is the leaderboard command's writer, prediction
 * is predict_find, predict_load and predict_run. Nothing here computes
 * what those do; it only takes C arguments instead of argv.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/foldsweep.h"
#include "cli/cli.h"
#include "data/data.h"
#include "mpi/mpi.h"
#include "predict/predict.h"
#include "report/report.h"
#include "run/run.h"
#include "sweep/sweep.h"

struct foldsweep_model {
    FsModelSet set;
    FsEnsemble ens;
    char features[4096]; /* foldsweep_model_options.features, "" for none */
};

int foldsweep_api_version(void) { return FOLDSWEEP_API_VERSION; }
const char *foldsweep_version(void) { return "foldsweep " FS_VERSION; }
void foldsweep_free(void *p) { free(p); }

/* Messages go where the command line's go: standard error. */
static int api_error(int code, const char *fmt, ...) FS_PRINTF(2, 3);
static int api_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "foldsweep: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
    return code;
}

int foldsweep_main(int argc, char **argv)
{
    /* Reader commands end quietly on a closed pipe (cli_main's SIGPIPE
     * handler): the caller's own disposition comes back after. */
    struct sigaction pipe_was;
    sigaction(SIGPIPE, NULL, &pipe_was);
    int rc = cli_main(argc, argv);
    fflush(stdout);
    sigaction(SIGPIPE, &pipe_was, NULL);
    run_signals_remove(); /* `run` installed the run's; the caller's come back */
    return rc;
}

/* o as `foldsweep run`'s options in r (home: its buffer); an FS_EXIT_*
 * code, the problem said. */
static int run_options(const foldsweep_run_options *o, FsRunOptions *r, char *home, size_t home_n)
{
    if (!o || !o->sweep || !*o->sweep) return api_error(FS_EXIT_USAGE, "run: no sweep given");
    if (o->threads < 0 || o->threads > 4096)
        return api_error(FS_EXIT_USAGE, "run: threads must be 0 (the sweep's) to 4096");
    memset(r, 0, sizeof *r);
    r->backend = o->backend ? sweep_backend_parse(o->backend) : -1; /* -1: the sweep's */
    if (o->backend && r->backend < 0) return api_error(FS_EXIT_USAGE, "run: backend must be cpu, cuda or auto, not %s", o->backend);
    r->sweep_path = o->sweep;
    r->sweep_text = o->sweep_text;
    r->out_dir = o->out && *o->out ? o->out : NULL;
    r->home_dir = !o->sweep_text && run_home_dir(o->sweep, home, home_n) ? home : NULL;
    r->threads = o->threads;
    r->gpu_path = -1;
    r->quiet = o->quiet != 0;
    r->restart = o->restart != 0;
    r->grace = o->grace >= 0 ? o->grace : 30.0;
    r->progress_line = FS_LINE_AUTO;
    r->on_progress = o->progress;
    r->progress_user = o->user;
    return FS_EXIT_OK;
}

/* o's run on this process alone (comm NULL) or over the ranks of the
 * MPI_Comm *comm points at, with the run's signal handlers for its length
 * and the caller's after. */
static int run_on(const foldsweep_run_options *o, const void *comm)
{
    FsRunOptions r;
    char home[FS_PATH_MAX];
    int rc = run_options(o, &r, home, sizeof home);
    if (rc) return rc;
    run_signals_install();
    FsMpi m;
#ifdef FS_HAVE_MPI
    if (comm)
        fsmpi_attach(&m, *(const MPI_Comm *)comm); /* a duplicate: the run's messages never meet the caller's */
    else
#endif
        fsmpi_alone(&m); /* no communicator: this process alone, on its threads */
    (void)comm;
    rc = run_sweep(&r, &m);
    fsmpi_finalize(&m); /* the duplicate; MPI itself stays the caller's */
    run_signals_remove();
    fflush(stdout);
    fflush(stderr);
    return rc;
}

int foldsweep_run(const foldsweep_run_options *o) { return run_on(o, NULL); }

int foldsweep_run_mpi(const foldsweep_run_options *o, const void *comm)
{
#ifdef FS_HAVE_MPI
    int on = 0, level = 0;
    if (!comm) return api_error(FS_EXIT_USAGE, "run: no communicator given (foldsweep_run runs without one)");
    MPI_Initialized(&on);
    if (!on) return api_error(FS_EXIT_USAGE, "run: MPI is not initialised (the caller initialises and finalises it)");
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_FUNNELED)
        return api_error(FS_EXIT_USAGE, "run: MPI was initialised with MPI_THREAD_SINGLE; foldsweep's ranks train on "
                                        "threads and need MPI_THREAD_FUNNELED or more");
    return run_on(o, comm);
#else
    (void)o, (void)comm;
    return api_error(FS_EXIT_USAGE, "run: this foldsweep was built without MPI, so it cannot run on a communicator "
                                    "(rebuild with Open MPI: apt-get install libopenmpi-dev)");
#endif
}

int foldsweep_run_folder(const foldsweep_run_options *o, char *buf, size_t n)
{
    FsRunOptions r;
    char home[FS_PATH_MAX];
    int rc = run_options(o, &r, home, sizeof home);
    if (rc) return rc;
    FsSweep sw;
    FsErrList errs = {0};
    if ((o->sweep_text ? sweep_load_string(&sw, o->sweep_text, o->sweep, &errs)
                       : sweep_load_file(&sw, o->sweep, &errs)) != 0) {
        errlist_print(&errs);
        return FS_EXIT_ERROR;
    }
    FsRunSettings s;
    FsMpi m;
    fsmpi_alone(&m);
    run_settings(&s, &r, &sw, &m);
    sweep_free(&sw);
    if (n) snprintf(buf, n, "%s", s.out_dir);
    return FS_EXIT_OK;
}

/* A run folder's table (the leaderboard in fmt, or the curves) as text. */
static int folder_text(const char *dir, int curves, int fmt, int top, char **text)
{
    size_t n = 0;
    FILE *out = open_memstream(text, &n);
    if (!out) return api_error(FS_EXIT_ERROR, "out of memory");
    int rc = curves ? cli_curves_write(dir, out) : cli_leaderboard_write(dir, fmt, top, out);
    fclose(out);
    if (rc != FS_EXIT_OK) free(*text), *text = NULL;
    return rc;
}

int foldsweep_leaderboard(const char *dir, const char *format, int top, char **text)
{
    *text = NULL;
    if (!dir) return api_error(FS_EXIT_USAGE, "leaderboard: no run folder given");
    const char *f = format ? format : "table";
    const int fmt = !strcmp(f, "wide") ? FS_REPORT_WIDE : report_format_parse(f);
    if (fmt < 0) return api_error(FS_EXIT_USAGE, "leaderboard: format must be table, wide, md, csv or json, not %s", f);
    if (top < 0) return api_error(FS_EXIT_USAGE, "leaderboard: top must be 0 (all) or more");
    return folder_text(dir, 0, fmt, top, text);
}

int foldsweep_curves(const char *dir, char **text)
{
    *text = NULL;
    if (!dir) return api_error(FS_EXIT_USAGE, "curves: no run folder given");
    return folder_text(dir, 1, 0, 0, text);
}

int foldsweep_model_open(const char *source, const foldsweep_model_options *o, foldsweep_model **out)
{
    *out = NULL;
    if (!source) return api_error(FS_EXIT_USAGE, "model: no model source given");
    const foldsweep_model_options none = {NULL, 1, -1, NULL};
    if (!o) o = &none;
    if (o->rank < 0 || o->fold < -1)
        return api_error(FS_EXIT_USAGE, "model: rank must be 1 or more and fold 0 or more (-1: all)");
    if (o->features && strlen(o->features) >= sizeof((*out)->features))
        return api_error(FS_EXIT_USAGE, "model: features: too long");
    foldsweep_model *m = fs_calloc(1, sizeof *m);
    FsErr err = {0};
    if (predict_find(&m->set, source, o->trial, o->rank ? o->rank : 1, o->fold, &err) != 0 ||
        predict_load(&m->ens, &m->set, FS_PREDICT_BATCH, &err) != 0) {
        free(m); /* predict_load releases what it loaded when it fails */
        return api_error(FS_EXIT_ERROR, "%s", err.msg);
    }
    if (o->features) snprintf(m->features, sizeof m->features, "%s", o->features);
    *out = m;
    return FS_EXIT_OK;
}

void foldsweep_model_close(foldsweep_model *m)
{
    if (!m) return;
    predict_free(&m->ens);
    free(m);
}

int foldsweep_model_classes(const foldsweep_model *m) { return m ? m->ens.classes : 0; }
int foldsweep_model_count(const foldsweep_model *m) { return m ? m->set.n : 0; }
const char *foldsweep_model_file(const foldsweep_model *m, int i) { return m && i >= 0 && i < m->set.n ? m->set.path[i] : NULL; }
const char *foldsweep_model_trial(const foldsweep_model *m) { return m ? predict_set_trial(&m->set, &m->ens) : ""; }

void foldsweep_prediction_free(foldsweep_prediction *p)
{
    if (!p) return;
    free(p->offsets);
    free(p->probs);
    free(p->agreement);
    free(p);
}

/* Each protein's first residue, from its first segment. */
static uint32_t *protein_offsets(const FsDataset *ds)
{
    uint32_t *off = fs_malloc(sizeof *off * ((size_t)ds->n_prot + 1));
    for (uint32_t i = 0; i <= ds->n_prot; i++) off[i] = ds->seg_off[ds->prot_seg[i]];
    return off;
}

int foldsweep_predict(const foldsweep_model *m, const char *fasta, size_t n, int threads, foldsweep_prediction **out)
{
    *out = NULL;
    if (!m || !fasta) return api_error(FS_EXIT_USAGE, "predict: no model or no sequences given");
    if (threads < 0 || threads > 4096) return api_error(FS_EXIT_USAGE, "predict: threads must be 0 (all) to 4096");
    FsDataset ds;
    FsErr err = {0};
    if (data_sequences_parse(&ds, fasta, n, "sequences", &err) != 0) return api_error(FS_EXIT_ERROR, "%s", err.msg);
    if (predict_features(&m->ens, m->features[0] ? m->features : NULL, &ds, &err) != 0) {
        data_free(&ds);
        return api_error(FS_EXIT_ERROR, "%s", err.msg);
    }
    const int classes = m->ens.classes;
    foldsweep_prediction *p = fs_calloc(1, sizeof *p);
    p->n_proteins = ds.n_prot;
    p->n_residues = ds.n_res;
    p->classes = classes;
    p->probs = fs_malloc(sizeof(float) * (size_t)classes * ((size_t)ds.n_res + 1));
    p->agreement = fs_malloc(sizeof(float) * ((size_t)ds.n_res + 1));
    p->offsets = protein_offsets(&ds);
    int rc = predict_run(&m->ens, &ds, run_solo_threads(threads), FS_PREDICT_BATCH, p->probs, p->agreement, &err);
    data_free(&ds);
    if (rc != 0) {
        foldsweep_prediction_free(p);
        return api_error(FS_EXIT_ERROR, "%s", err.msg);
    }
    *out = p;
    return FS_EXIT_OK;
}
