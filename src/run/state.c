/*
 * state: what rank 0 (or a single process) knows about a run: opening it
 * (sweep, data, test set, run folder, the jobs left), closing it, and the
 * leaderboard, profile and summary at its end. How a job becomes a journal
 * record and a step of the progress line is in jobs.c.
 */
#define _GNU_SOURCE /* realpath */
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* isatty */

#include "predict/predict.h"
#include "report/report.h"
#include "run/checkpoints.h"
#include "run/decide.h"
#include "run/gpu_driver.h"
#include "run/state.h"

/* Test proteins identical to training ones (fingerprints): flagged, and
 * the first names in first; returns how many. */
static uint32_t flag_identical(const RunState *st, uint8_t *flag, char *first, size_t n)
{
    uint32_t identical = 0;
    for (uint32_t i = 0; i < st->test.n_prot; i++) {
        if (!data_hash_seen(st->seen, st->n_seen, data_protein_hash(&st->test, i))) continue;
        flag[i] = 1;
        if (identical++ < 3)
            snprintf(first + strlen(first), n - strlen(first), "%s%s", identical > 1 ? ", " : "",
                     data_protein_name(&st->test, i));
    }
    return identical;
}

/* The leakage guard on the test set, before any training: proteins
 * identical to training ones, or above test.max_identity identity to one
 * (a chain, fragment or close homologue), or above test.max_coverage of
 * their residues in near-identical stretches of them (a chimera), are
 * refused (their scores would
 * be optimistic), or with test.exclude_overlap left out of every score. */
static int check_test_overlap(RunState *st, const char *sweep_path)
{
    const FsSweep *sw = &st->sw;
    uint8_t *flag = fs_calloc((size_t)st->test.n_prot + 1, 1);
    FsSeqSet seen;
    FsIdentityReport r;
    data_seqset_of(&seen, &st->ds);
    evaluate_identity_of(&r, &seen, &st->test, sw->test_max_identity, sw->test_max_coverage, flag);
    data_seqset_free(&seen);
    char first[200] = "", what[1200];
    uint32_t identical = flag_identical(st, flag, first, sizeof first), flagged = 0, scored = 0;
    for (uint32_t i = 0; i < st->test.n_prot; i++) flagged += flag[i];
    int rc = -1;
    if (flagged && sw->test_exclude_overlap) {
        evaluate_leave_out(&st->test, flag);
        for (uint32_t x = 0; x < st->test.n_res; x++) scored += FS_SS_SCORED(st->test.ss[x]);
        fprintf(stderr, "foldsweep: note: test: %u protein%s left out of the scores (test.exclude_overlap): %u "
                "identical to training proteins, %u more above %g identity to one or above %g coverage\n", flagged,
                flagged == 1 ? "" : "s", identical, flagged - identical, sw->test_max_identity, sw->test_max_coverage);
        if (!scored) fprintf(stderr, "foldsweep: %s:%d:%d: test: no test protein is left to score\n", sweep_path,
                             sw->test_line, sw->test_col);
        else rc = 0;
    } else if (identical) {
        fprintf(stderr, "foldsweep: %s:%d:%d: test: %u protein%s identical to proteins of the training data (%s%s): "
                        "a test set must be held out; remove them from it, or set test.exclude_overlap: true\n",
                sweep_path, sw->test_line, sw->test_col, identical, identical == 1 ? " is" : "s are", first,
                identical > 3 ? ", ..." : "");
    } else if (flagged) {
        evaluate_identity_refusal(&r, what, sizeof what);
        fprintf(stderr, "foldsweep: %s:%d:%d: test: %s: a test set must be held out; remove them from it, raise "
                "test.max_identity or test.max_coverage, or set test.exclude_overlap: true\n", sweep_path, sw->test_line, sw->test_col,
                what);
    } else {
        rc = 0;
    }
    free(flag);
    return rc;
}

/* The test set, loaded and checked for leakage. */
static int open_test(RunState *st, const char *sweep_path)
{
    FsErrList errs = {0};
    const FsSweep *sw = &st->sw;
    if (sweep_load_test(sw, &st->test, &errs) != 0) {
        errlist_print(&errs);
        return -1;
    }
    if (sw->test_sequences)
        snprintf(st->test_desc, sizeof st->test_desc, "%s", sw->test_sequences);
    for (int i = 0; i < sw->n_test_inputs && !sw->test_sequences; i++)
        snprintf(st->test_desc + strlen(st->test_desc), sizeof st->test_desc - strlen(st->test_desc), "%s%s",
                 i ? " " : "", sw->test_inputs[i]);
    if (fs_classes(st->test.classes) != fs_classes(sw->classes))
        fprintf(stderr, "note: test set %s " FS_REDUCED_NOTE "\n", st->test_desc);
    return check_test_overlap(st, sweep_path);
}

/* A resume must train on the data the folder's earlier folds saw: other
 * data gives other trial ids, so its results would sit beside the old ones
 * in one leaderboard. Journals older than the check carry no fingerprint. */
static int check_data(RunState *st, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    for (int r = 0; r < st->j.n_runs; r++) {
        uint64_t was = st->j.runs[r].data_fingerprint;
        if (!was || was == st->ds.fingerprint) continue;
        const char *src = sw->prepared    ? sw->prepared
                          : sw->sequences ? sw->sequences
                          : sw->n_inputs  ? sw->inputs[0]
                                          : "the synthetic data (data.synth)";
        fs_err_set(err,
                   "%s: the training data changed since this folder's run began (data fingerprint %016llx then, "
                   "%016llx now, from %s%s): a resume would mix results on two data sets. Put the data back, use "
                   "another --out folder, or add --restart to set this folder's run aside (kept in %s/previous-N) "
                   "and start again",
                   st->dir, (unsigned long long)was, (unsigned long long)st->ds.fingerprint, src,
                   sw->n_inputs > 1 ? " and the other inputs" : "", st->dir);
        return -1;
    }
    return 0;
}

/* The sweep and the settings it makes, the backend, the data (trial ids
 * from its fingerprint) and the test set; their time is the profile's data
 * time. */
static int open_inputs(RunState *st, const FsRunOptions *o, const FsMpi *m)
{
    double t0 = fs_now();
    FsErrList errs = {0};
    FsErr err = {0};
    if ((o->sweep_text ? sweep_load_string(&st->sw, o->sweep_text, o->sweep_path, &errs)
                       : sweep_load_file(&st->sw, o->sweep_path, &errs)) != 0) {
        errlist_print(&errs);
        return FS_EXIT_ERROR;
    }
    FsSweep *sw = &st->sw;
    run_settings(&st->set, o, sw, m);
    sweep_set_gpu_path(sw, st->set.gpu_path); /* --gpu-path over run.gpu_path, into every job's spec */
    if (run_choose_backend(st->set.backend, m->local_rank, &st->use_gpu, &st->gpu_device, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    if (sweep_load_data(sw, &st->ds, &errs) != 0 || sweep_bind_data(sw, &st->ds, &errs) != 0) {
        errlist_print(&errs);
        return FS_EXIT_ERROR;
    }
    st->n_seen = data_seen_hashes(&st->ds, &st->seen);
    if (sw->has_test && open_test(st, o->sweep_path) != 0) return FS_EXIT_ERROR;
    st->t_data = fs_now() - t0;
    return FS_EXIT_OK;
}

/* An extension's trials: those of the sweep already in the journal (kept)
 * and those still to train (new; with tpe, of its budget). -1 with err
 * when a tpe budget is below the trials kept. */
static int extension_counts(const RunState *st, int *kept, int *fresh, FsErr *err)
{
    const FsSweep *sw = &st->sw;
    *kept = 0;
    for (int t = 0; t < sw->n_trials; t++) *kept += journal_find_trial(&st->j, sw->trials[t].id) != NULL;
    const int budget = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : sw->n_trials;
    *fresh = budget - *kept;
    if (*fresh >= 0) return 0;
    return fs_err_set(err, "%s: search.random: %d is fewer than the %d trials this folder has trained; an extension "
                      "keeps them all: give at least %d, or add --restart", sw->path, sw->random_n, *kept, *kept),
           -1;
}

/* Locked, set aside (--restart), claimed for this sweep (the same, or one
 * that extends the folder's: *old) and checked against its data and
 * trials; then the sweep is written. */
static int claim_folder(RunState *st, const FsRunOptions *o, FILE *out, char **old, FsErr *err)
{
    FsSweep *sw = &st->sw;
    int fresh = 0, kept = 0, added = 0;
    /* The journal's lock first: two runs started at once on a new folder
     * must not both write its sweep.yaml; the second gets "in use". Then
     * the folder is looked at, by its holder alone. */
    if (journal_open(&st->j, st->dir, err) != 0 || run_folder_foreign(st->dir, &st->j, err) != 0 ||
        (o->restart && run_folder_set_aside(st->dir, &st->j, out, err) != 0) ||
        run_folder_claim(st->dir, sw, old, &fresh, err) != 0 || check_data(st, err) != 0 ||
        run_folder_check_trials(st->dir, &st->j, sw, *old, err) != 0 ||
        (*old && extension_counts(st, &kept, &added, err) != 0) ||
        ((fresh || *old) && run_folder_write_sweep(st->dir, sw, err) != 0))
        return -1;
    if (*old && !o->quiet) fprintf(out, "extends %s: %d trial%s kept, %d new\n", st->dir, kept, kept == 1 ? "" : "s", added);
    return 0;
}

/* The run folder: claimed (claim_folder), the journal checked against the
 * sweep and a sweep record (a new version on an extension), then a run
 * record; and the sweep's folds. */
static int open_folder(RunState *st, const FsRunOptions *o, FILE *out)
{
    FsSweep *sw = &st->sw;
    FsErr err = {0};
    char *old = NULL;
    snprintf(st->dir, sizeof st->dir, "%s", st->set.out_dir);
    if (claim_folder(st, o, out, &old, &err) != 0) {
        free(old);
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    st->folds = data_folds_of(sw->predefined, (int)st->ds.n_folds);
    /* The run record: the sweep's size and data, and how this session runs
     * (the report regenerated from the journal shows them). */
    FsRunRecord run = {.n_trials = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : sw->n_trials,
                       .folds = st->folds.n,
                       .data_fingerprint = st->ds.fingerprint,
                       .ranks = o->ranks > 0 ? o->ranks : 1,
                       .feature_columns = (int)st->ds.feat_dim};
    snprintf(run.metric, sizeof run.metric, "%s", metrics_kind_name(sw->metric));
    /* Absolute, so status names it from any folder; a path longer than the
     * record's field is left out (status then says SWEEP.yaml). */
    char *abs = realpath(o->sweep_path, NULL);
    if (abs && strlen(abs) < sizeof run.sweep_file) memcpy(run.sweep_file, abs, strlen(abs) + 1);
    free(abs);
    snprintf(run.backend, sizeof run.backend, "%s", st->use_gpu ? "cuda" : "cpu");
    run_backend_describe(st->use_gpu, st->gpu_device, run.device, sizeof run.device);
    int rc = run_folder_sense(st, old, &err) != 0 || journal_append_run_record(&st->j, &run, &err) != 0;
    free(old);
    if (rc) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        return FS_EXIT_ERROR;
    }
    if (sw->note && !o->quiet) fprintf(out, "note: %s\n", sw->note);
    if (st->j.dropped_tail && !o->quiet)
        fprintf(out, "note: the journal's last line was torn (a killed run); it was dropped and is retrained\n");
    return FS_EXIT_OK;
}

/* The jobs: every (trial, fold) not already in the journal; with the tpe
 * sampler, of the trials proposed so far (more come batch by batch). Then
 * the progress line, with the best complete trial of earlier runs. */
static int open_jobs(RunState *st, const FsRunOptions *o, FILE *out)
{
    FsSweep *sw = &st->sw;
    FsErr err = {0};
    int nt = sw->n_trials, budget = sw->sampler == FS_SAMPLER_TPE ? sw->random_n : nt;
    /* Never grown: the trainers hold pointers into the records (records.h). */
    const int replicates = run_replicates_jobs(sw, st->folds.n);
    if (replicates < 0) {
        fprintf(stderr, "foldsweep: %s: search.replicates: top x (seeds - 1) x folds is more jobs than a run may "
                "list (%d); choose fewer\n", sw->path, FS_SWEEP_MAX_TRIALS * FS_MAX_FOLDS);
        return FS_EXIT_USAGE;
    }
    st->cap_jobs = budget * st->folds.n + replicates + 1;
    st->jobs = fs_calloc((size_t)st->cap_jobs + 1, sizeof(RunJob));
    st->trials = fs_calloc((size_t)nt + 1, sizeof(RunTrial));
    for (int t = 0; t < nt; t++) st->trials[t].cut = st->folds.n; /* none pruned */
    run_queue_open(&st->queue, st->jobs, st->trials, st->cap_jobs, sw->prune.kind != FS_PRUNER_NONE);
    run_sampler_open(st);
    for (int k = 0; k < st->n_proposed; k++)
        if (state_add_trial(st, st->proposed[k], &err) != 0) {
            fprintf(stderr, "foldsweep: %s\n", err.msg);
            return FS_EXIT_ERROR;
        }
    progress_init(&st->prog, out, o->quiet, run_progress_redraw(o->progress_line, isatty(fileno(out)), run_launcher_tty()),
                  budget, st->trials_done, st->folds.n, st->n_jobs, o->grace);
    /* Every fold of the trials proposed so far that is not queued is in the
     * journal (a failed or pruned trial's too: it trains no more). */
    progress_seed_done(&st->prog, st->n_proposed * st->folds.n - st->n_jobs);
    st->prog.listener = o->on_progress;
    st->prog.listener_user = o->progress_user;
    progress_rank_by(&st->prog, sw->metric == FS_METRIC_LOSS);
    for (int t = 0; t < sw->n_trials; t++)
        if (st->trials[t].folds == st->folds.n && !st->trials[t].bad && !journal_find_cut(&st->j, sw->trials[t].id))
            run_offer_best(st, t);
    return FS_EXIT_OK;
}

int state_open(RunState *st, const FsRunOptions *o, const FsMpi *m, FILE *out)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->cv, NULL);
    int rc = open_inputs(st, o, m);
    if (rc == FS_EXIT_OK) rc = open_folder(st, o, out);
    if (rc == FS_EXIT_OK) rc = open_jobs(st, o, out);
    if (rc != FS_EXIT_OK) return rc;
    FsErr gerr = {0};
    if (st->use_gpu && run_gpu_check_trials(&st->sw, &st->ds, &st->folds, st->gpu_device, &gerr)) {
        fprintf(stderr, "foldsweep: %s\n", gerr.msg);
        return FS_EXIT_USAGE;
    }
    /* The jobs listed so far take their groups; state_list_job gives later ones theirs. */
    if (st->use_gpu && run_gpu_groups(&st->sw, &st->ds, &st->folds, st->gpu_device, NULL, &st->gpu_groups) == 0)
        for (int i = 0; i < st->n_jobs; i++) run_gpu_group_job(&st->gpu_groups, st->jobs[i].trial, &st->jobs[i].job);
    /* Fold-major for the per-epoch rules: every trial's first fold first. */
    if (st->sw.prune.kind == FS_PRUNER_MEDIAN || st->sw.prune.kind == FS_PRUNER_ASHA) run_queue_fold_major(&st->queue);
    FsErr perr = {0};
    if (run_pruning_open(st, &perr) != 0) state_fail(st, &perr); /* the run stops with it (exit 1) */
    /* What the journal's values settle already: pruning decisions, and the
     * seed replicates of a sweep whose own jobs are all done. */
    run_decide(st);
    st->epoch_lines = o->epoch_lines;
    st->prog.sample = state_progress_sample;
    st->prog.sample_ctx = st;
    st->prog.dir = st->dir;
    return FS_EXIT_OK;
}

void state_close(RunState *st)
{
    for (int i = 0; st->jobs && i < st->n_jobs; i++) {
        train_result_free(&st->jobs[i].res);
        free(st->jobs[i].ckpt.bytes); /* attached and not detached: a refused run */
    }
    free(st->jobs);
    run_gpu_groups_free(&st->gpu_groups);
    run_queue_close(&st->queue);
    free(st->proposed);
    run_pruning_close(st);
    free(st->seen);
    data_free(&st->test);
    free(st->trials);
    if (st->j.path) journal_close(&st->j);
    data_free(&st->ds);
    sweep_free(&st->sw);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->cv);
}

int state_report(RunState *st, const FsRunOptions *o, FILE *out, int rc, double train_wall, int threads)
{
    int interrupted = rc == FS_EXIT_INTERRUPTED;
    if (st->io_failed) {
        fprintf(stderr, "foldsweep: %s\n", st->io_err.msg);
        rc = FS_EXIT_ERROR;
    } else if (interrupted) {
        fprintf(out, "foldsweep: interrupted; %d of %d folds of this run are in the journal. Rerun the same "
                     "command to resume.\n",
                st->prog.folds_done, st->n_jobs);
    }
    /* Leaderboard files and the profile, even after an interruption: what
     * is in the journal is ranked. */
    FsProfile prof = {st->t_data, st->busy - st->val, st->val, st->j.write_seconds, train_wall, threads,
                      st->train_examples, st->prog.folds_done, st->pruned_seconds,
                      st->gpu_times.kernel_seconds, st->gpu_times.host_seconds};
    FsErr err = {0};
    /* A finished sweep keeps no checkpoints (a pruned trial's folds from an
     * earlier run may have left some). */
    if (!st->io_failed && !state_work_left(st))
        for (int t = 0; t < st->sw.n_trials; t++)
            for (int k = 0; k < st->folds.n; k++)
                run_ckpt_remove(st->dir, st->sw.trials[t].id, data_fold_id(&st->folds, k));
    if (!st->io_failed && run_models_discard(st, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    if (report_write_files(st->dir, &st->j, &st->sw, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    if (profile_write(st->dir, &prof, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
        memset(&err, 0, sizeof err);
    }
    char study[400] = "";
    if (st->study_stop.stopped) run_study_text(&st->study_stop, study, sizeof study);
    FsReportHtmlInfo html = {st->sw.path, threads, 0, st->study_stop.stopped ? st->study_stop.proposed : 0, study};
    if (report_html_write_run(st->dir, &st->j, &st->sw, &html, &err) != 0) {
        fprintf(stderr, "foldsweep: %s\n", err.msg);
        if (rc == FS_EXIT_OK) rc = FS_EXIT_ERROR;
    }
    if (!o->quiet && rc != FS_EXIT_ERROR) {
        if (!interrupted) report_print_leaderboard(out, st->dir, &st->j, &st->sw, 10);
        if (st->study_stop.stopped && !interrupted) fprintf(out, "study: %s\n", study);
        if (st->models_discarded && st->set.keep_models > 0)
            fprintf(out, "models: removed the fold models of %d trial%s outside the best %d (run.keep_models)\n",
                    st->models_discarded, st->models_discarded == 1 ? "" : "s", st->set.keep_models);
        else if (st->models_discarded)
            fprintf(out, "models: removed the fold models of %d trial%s (run.keep_models: none)\n",
                    st->models_discarded, st->models_discarded == 1 ? "" : "s");
        /* A session that trained nothing (a finished folder run again) has
         * only zeros to show, and idle workers at 100%. */
        if (prof.folds > 0 || prof.train_seconds > 0) profile_print(out, &prof);
    }
    return rc;
}
