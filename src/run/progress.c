/*
 * progress: the run's progress line and profile. A thread wakes five times
 * a second: it redraws the line in place on the user's terminal
 * (run_progress_redraw; a plain line every 10 s elsewhere) and,
 * after a stop signal, cancels in-flight folds once the grace period ends.
 */
#include "run/progress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json/json.h"
#include "run/run.h"
#include "util/util.h"

void progress_init(FsProgress *p, FILE *out, int quiet, int redraw, int trials_total, int trials_done,
                   int folds_per_trial, int folds_total, double grace)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->quiet = quiet;
    p->redraw = redraw;
    p->trials_total = trials_total;
    p->trials_done = trials_done;
    p->folds_per_trial = folds_per_trial;
    p->folds_total = folds_total;
    p->grace = grace;
    p->t_start = fs_now();
    pthread_mutex_init(&p->lock, NULL);
}

void progress_offer_best(FsProgress *p, const FsReportRank *r)
{
    pthread_mutex_lock(&p->lock);
    if (!p->have_best || report_rank_before(r, &p->best)) p->best = *r;
    p->have_best = 1;
    pthread_mutex_unlock(&p->lock);
}

void progress_rank_by(FsProgress *p, int lower_better)
{
    pthread_mutex_lock(&p->lock);
    p->lower_better = lower_better;
    pthread_mutex_unlock(&p->lock);
}

void progress_set_best(FsProgress *p, const FsReportRank *r)
{
    pthread_mutex_lock(&p->lock);
    p->best = *r; /* the leaderboard's first, better or not than the line's */
    p->have_best = 1;
    pthread_mutex_unlock(&p->lock);
}

void progress_seed_done(FsProgress *p, int folds_earlier) { p->folds_earlier = folds_earlier; }

static void fmt_time(char *buf, size_t n, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, n, "%lds", t);
}

/* Seconds left (lock held), < 0 when not known: from examples trained
 * against the planned maximum once anything trained, the folds not listed
 * yet at the listed ones' mean plan; from whole folds only without a
 * sample (GPU launches). */
static double eta_of(const FsProgress *p, double el)
{
    const int ahead = p->ahead_trials + p->ahead_replicates, left = p->folds_total + ahead - p->folds_done;
    if (left <= 0) return 0.0;
    const FsProgressSample *s = &p->last;
    if (p->have_sample && s->eta >= 0) {
        if (!ahead) return s->eta;
        if (s->trained > 0 && el > 0 && p->folds_total > 0)
            return s->eta + ahead * (s->planned / p->folds_total) / (s->trained / el);
    }
    return p->folds_done > 0 ? el / p->folds_done * left : -1.0;
}

/* ", 30 still to be proposed" and the like: the part of the total not
 * listed yet, named. */
static void ahead_text(const FsProgress *p, char *out, size_t n)
{
    const int t = p->ahead_trials, r = p->ahead_replicates;
    if (!t && !r) {
        out[0] = 0;
        return;
    }
    char trials[48] = "", reps[48] = "";
    if (t) snprintf(trials, sizeof trials, "%d still to be proposed", t);
    if (r) snprintf(reps, sizeof reps, "up to %d replicate%s to come", r, r == 1 ? "" : "s");
    snprintf(out, n, " (%s%s%s)", trials, t && r ? ", " : "", reps);
}

/* Caller holds the lock. */
static void draw(FsProgress *p, int final)
{
    if (p->quiet) return;
    double el = fs_now() - p->t_start;
    char e[32], eta[32] = "?", best[64] = "-", rate[48] = "", ahead[112];
    fmt_time(e, sizeof e, el);
    const double left = eta_of(p, el);
    if (left >= 0) fmt_time(eta, sizeof eta, left);
    if (p->have_sample && p->last.trained > 0 && el > 0)
        snprintf(rate, sizeof rate, " | %.0f ex/s", p->last.trained / el);
    if (p->have_best && p->lower_better) snprintf(best, sizeof best, "%.4f (%.8s)", p->best.mean, p->best.id);
    else if (p->have_best)
        snprintf(best, sizeof best, "%s%% (%.8s)", fs_percent_text(p->best.mean), p->best.id); /* Q3 */
    char line[640];
    char flight[64] = "";
    if (p->gpu_epochs > 0 && p->in_flight > 0)
        snprintf(flight, sizeof flight, " (%ld epochs in)", p->gpu_epochs);
    else if (p->have_sample && p->last.flight[0] && p->in_flight > 0)
        snprintf(flight, sizeof flight, " (%.50s)", p->last.flight);
    ahead_text(p, ahead, sizeof ahead);
    snprintf(line, sizeof line, "trials %d/%d | folds %d/%d%s, %d in flight%s | %s elapsed%s | ETA %s | best %s",
             p->trials_done, p->trials_total, p->folds_earlier + p->folds_done,
             p->folds_earlier + p->folds_total + p->ahead_trials + p->ahead_replicates, ahead, p->in_flight, flight, e,
             rate, eta, best);
    if (p->redraw)
        fprintf(p->out, "\r%s\033[K%s", line, final ? "\n" : "");
    else
        fprintf(p->out, "%s\n", line);
    fflush(p->out);
}

static void put_fixed(FsJsonOut *w, const char *key, double v, int decimals)
{
    json_key(w, key);
    json_fixed(w, v, decimals);
}

/* What a stop signal does to the folds in flight, as the terminal's line
 * and the listener's event say it (lock held): 0 before a stop. The folds
 * are counted as the stop found them (stop_flight), so that the text
 * changes with the stop's phase only, not as each of them ends. */
static int progress_stop_text(const FsProgress *p, char *out, size_t n)
{
    if (!*run_stop_flag() || p->stop_seen == 0.0) return 0;
    const int k = p->stop_flight;
    if (run_signal_ending() && *run_cancel_flag())
        snprintf(out, n, "stopping: mpirun ends the job within %.0f s (odls_base_sigkill_timeout); %d fold%s in flight "
                         "checkpoint now",
                 run_mpirun_window(), k, k == 1 ? "" : "s");
    else if (!*run_cancel_flag())
        snprintf(out, n, "stopping: no new folds; %d in flight get %.0f s to finish (signal again to abandon them)", k,
                 run_signal_grace(p->grace));
    else
        snprintf(out, n, "stopping: the folds still in flight are abandoned; run again to resume");
    return 1;
}

/* The run's progress as one JSON object (lock held): DIR/progress.json's
 * content and the listener's event. A value not known (not finite) is
 * null, which status reads as not known. */
static void progress_json(FsProgress *p, FsJsonOut *w, int final)
{
    const FsProgressSample *s = &p->last;
    double el = fs_now() - p->t_start;
    json_object_begin(w);
    put_fixed(w, "time", (double)time(NULL), 3);
    json_member_int(w, "pid", (long)getpid());
    put_fixed(w, "elapsed", el, 1);
    json_member_int(w, "folds_done", p->folds_earlier + p->folds_done);
    json_member_int(w, "folds_total", p->folds_earlier + p->folds_total + p->ahead_trials + p->ahead_replicates);
    json_member_int(w, "in_flight", p->in_flight);
    json_member_int(w, "trials_done", p->trials_done);
    json_member_int(w, "trials_total", p->trials_total);
    put_fixed(w, "examples_done", s->done, 0);
    put_fixed(w, "examples_planned", s->planned, 0);
    put_fixed(w, "examples_per_second", el > 0 ? s->trained / el : 0.0, 1);
    /* From examples only: status has the folds' pace itself. -1: not known yet. */
    put_fixed(w, "eta_seconds", s->eta >= 0 ? eta_of(p, el) : -1.0, 1);
    json_member_str(w, "flight", s->flight);
    json_member_str(w, "best_trial", p->have_best ? p->best.id : "");
    json_key(w, "best_mean");
    json_num64(w, p->have_best ? p->best.mean : NAN);
    /* A stop's line, which the listener's owner may show (Python's bar
     * stands where the terminal's line would). */
    char stop[256];
    json_key(w, "stopping");
    if (progress_stop_text(p, stop, sizeof stop))
        json_str(w, stop);
    else
        json_null(w);
    json_key(w, "final");
    json_bool(w, final);
    json_end(w);
    json_tail(w, "\n");
}

/* DIR/progress.json: what `foldsweep status` shows of a live run. */
static void progress_write_json(FsProgress *p)
{
    char path[FS_PATH_IN_DIR];
    FsErr err = {0};
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL};
    progress_json(p, &w, 0);
    snprintf(path, sizeof path, "%s/progress.json", p->dir);
    /* advisory: a failure costs only status's view */
    if (!json_out_error(&w)) (void)fs_write_file_atomic(path, w.p, w.n, &err);
    json_out_free(&w);
}

/* The listener's event, built under the lock and posted to its own thread
 * (progress_tell.c): a slow listener (Python's) holds up neither the folds
 * that report to the line nor the line, progress.json and the grace timer. */
static void progress_tell(FsProgress *p, int final)
{
    if (!p->listener) return;
    FsJsonOut w = {.nonfinite = FS_JSON_NONFINITE_NULL};
    progress_json(p, &w, final);
    p->told_at = fs_now();
    if (!json_out_error(&w) && p->teller.running) {
        teller_post(&p->teller, w.p, w.n);
    } else if (!json_out_error(&w)) {
        /* No thread of its own (none could start, or the progress thread
         * never ran): told here, without the lock, as the listener may
         * take its time. */
        pthread_mutex_unlock(&p->lock);
        p->listener(w.p, p->listener_user);
        pthread_mutex_lock(&p->lock);
    }
    json_out_free(&w);
}

/* After a stop signal (lock held): says what happens to the folds in
 * flight, once, and cancels them when the grace period is over. Under
 * mpirun a SIGTERM leaves only mpirun's window (run_signal_grace). */
static void progress_grace(FsProgress *p, double now)
{
    if (!*run_stop_flag()) return;
    double grace = run_signal_grace(p->grace);
    if (p->stop_seen == 0.0) {
        p->stop_seen = now;
        p->stop_flight = p->in_flight;
        char stop[256];
        /* A cancel without mpirun's window (a second signal already, or no
         * grace) says nothing here, as before: the run's end says it. */
        const int says = !*run_cancel_flag() || run_signal_ending();
        if (!p->quiet && says && progress_stop_text(p, stop, sizeof stop))
            fprintf(p->out, "%s%s\n", p->redraw ? "\n" : "", stop);
    } else if (!*run_cancel_flag() && now - p->stop_seen >= grace) {
        run_request_stop(1);
    }
}

static void *progress_main(void *arg)
{
    FsProgress *p = arg;
    double last = fs_now(); /* progress_start drew the first line */
    for (;;) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        FsProgressSample smp;
        if (p->sample) p->sample(p->sample_ctx, &smp); /* before p->lock: it takes the run's lock */
        pthread_mutex_lock(&p->lock);
        if (p->sample) p->last = smp, p->have_sample = 1;
        if (p->have_sample && p->dir && fs_now() - p->json_at >= 2.0) {
            progress_write_json(p);
            p->json_at = fs_now();
        }
        int finish = p->finish;
        double now = fs_now();
        progress_grace(p, now);
        if (!finish && now - last >= (p->redraw ? 0.5 : 10.0)) {
            draw(p, 0);
            last = now;
        }
        if (!finish && p->have_sample && now - p->told_at >= 0.5) progress_tell(p, 0);
        pthread_mutex_unlock(&p->lock);
        if (finish) break;
    }
    return NULL;
}

void progress_start(FsProgress *p)
{
    /* The totals from the start, where the first redraw came 0.2 s in
     * (after a short run's end, never). */
    pthread_mutex_lock(&p->lock);
    draw(p, 0);
    pthread_mutex_unlock(&p->lock);
    if (p->listener) teller_start(&p->teller, p->listener, p->listener_user);
    p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
}

void progress_stop(FsProgress *p)
{
    pthread_mutex_lock(&p->lock);
    p->finish = 1;
    pthread_mutex_unlock(&p->lock);
    if (p->running) pthread_join(p->thread, NULL);
    pthread_mutex_lock(&p->lock);
    draw(p, 1);
    progress_tell(p, 1);
    pthread_mutex_unlock(&p->lock);
    if (p->listener) teller_stop(&p->teller); /* the final event told before the run returns */
    if (p->dir) {
        /* The run is no longer live: status reads the journal alone. */
        char path[FS_PATH_IN_DIR];
        snprintf(path, sizeof path, "%s/progress.json", p->dir);
        (void)unlink(path);
    }
}

void progress_gpu_epochs(FsProgress *p, long epochs)
{
    pthread_mutex_lock(&p->lock);
    p->gpu_epochs = epochs;
    pthread_mutex_unlock(&p->lock);
}

void progress_fold_started(FsProgress *p)
{
    pthread_mutex_lock(&p->lock);
    p->in_flight++;
    pthread_mutex_unlock(&p->lock);
}

void progress_fold_finished(FsProgress *p, int counted, int trial_complete)
{
    pthread_mutex_lock(&p->lock);
    p->in_flight--;
    if (counted) p->folds_done++;
    if (p->in_flight == 0) p->gpu_epochs = 0;
    if (trial_complete) p->trials_done++;
    pthread_mutex_unlock(&p->lock);
}

void progress_add_folds(FsProgress *p, int n)
{
    pthread_mutex_lock(&p->lock);
    p->folds_total += n;
    pthread_mutex_unlock(&p->lock);
}

void progress_ahead(FsProgress *p, int trials_total, int trial_folds, int replicate_folds)
{
    pthread_mutex_lock(&p->lock);
    p->trials_total = trials_total;
    p->ahead_trials = trial_folds;
    p->ahead_replicates = replicate_folds;
    pthread_mutex_unlock(&p->lock);
}

void progress_trial_pruned(FsProgress *p, int n_skipped)
{
    pthread_mutex_lock(&p->lock);
    p->folds_done += n_skipped;
    p->trials_done++;
    pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------------- */

/* The whole run: every session's profile summed. threads is the last
 * session's; worker (wall x threads) and idle are summed per session. */
typedef struct {
    FsProfile p;
    double worker, idle;
    int sessions; /* 0: a single session's (worker and idle from its own counts) */
} ProfileSum;

static ProfileSum profile_one(const FsProfile *p)
{
    ProfileSum s = {*p, p->wall_seconds * p->threads, 0, 0};
    s.idle = s.worker - p->train_seconds - p->val_seconds - p->pruned_seconds;
    if (s.idle < 0) s.idle = 0;
    return s;
}

static void print_body(FILE *out, const ProfileSum *s)
{
    const FsProfile *p = &s->p;
    double worker = s->worker, idle = s->idle;
    fprintf(out, "  loading and preparing data  %9.2f s\n", p->data_seconds);
    if (p->gpu_kernel_seconds > 0 || p->gpu_host_seconds > 0) {
        /* A GPU trains many folds at once: their seconds add up to more
         * than the wall time, and the CPU's worker threads are not what
         * trained them, so no share of worker time and no idle line. */
        fprintf(out, "  training (all folds)        %9.2f s  (summed over the folds, which train at once)\n",
                p->train_seconds);
        fprintf(out, "  validating                  %9.2f s\n", p->val_seconds);
        if (p->pruned_seconds > 0)
            fprintf(out, "  folds of pruned trials      %9.2f s  (trained up to the cut, not kept)\n", p->pruned_seconds);
        fprintf(out, "  writing the journal         %9.2f s\n", p->journal_seconds);
        const double all = p->gpu_kernel_seconds + p->gpu_host_seconds;
        fprintf(out, "  GPU: the device at work     %9.2f s  (%4.1f%% of the GPU calls' time)\n", p->gpu_kernel_seconds,
                100.0 * p->gpu_kernel_seconds / all);
        fprintf(out, "  GPU: the host's own share   %9.2f s  (laying out, queuing, copying, recording)\n",
                p->gpu_host_seconds);
        fprintf(out, "  training examples per second %8.0f  (%d folds, %.2f s wall)\n",
                p->wall_seconds > 0 ? p->train_examples / p->wall_seconds : 0.0, p->folds, p->wall_seconds);
        return;
    }
    fprintf(out, "  training (all folds)        %9.2f s  (%4.1f%% of worker time)\n", p->train_seconds,
            worker > 0 ? 100.0 * p->train_seconds / worker : 0.0);
    fprintf(out, "  validating                  %9.2f s  (%4.1f%%)\n", p->val_seconds,
            worker > 0 ? 100.0 * p->val_seconds / worker : 0.0);
    if (p->pruned_seconds > 0)
        fprintf(out, "  folds of pruned trials      %9.2f s  (%4.1f%%; trained up to the cut, not kept)\n", p->pruned_seconds,
                worker > 0 ? 100.0 * p->pruned_seconds / worker : 0.0);
    fprintf(out, "  writing the journal         %9.2f s\n", p->journal_seconds);
    if (s->sessions)
        fprintf(out, "  idle workers                %9.2f s  (%4.1f%%; %.2f s of worker time, %.2f s wall)\n", idle,
                worker > 0 ? 100.0 * idle / worker : 0.0, worker, p->wall_seconds);
    else
        fprintf(out, "  idle workers                %9.2f s  (%4.1f%%; %d thread%s x %.2f s wall)\n", idle,
                worker > 0 ? 100.0 * idle / worker : 0.0, p->threads, p->threads == 1 ? "" : "s", p->wall_seconds);
    fprintf(out, "  training examples per second %8.0f  (%d folds)\n",
            p->wall_seconds > 0 ? p->train_examples / p->wall_seconds : 0.0, p->folds);
}

void profile_print(FILE *out, const FsProfile *p)
{
    ProfileSum s = profile_one(p);
    fprintf(out, "profile:\n");
    print_body(out, &s);
}

/* ---------------------------------------------------------------------- */
/* The whole run: what profile.json held, plus this session                */

/* One profile's members: seconds to the millisecond, rates to a tenth. */
static void json_profile(FsJsonOut *w, const ProfileSum *s)
{
    const FsProfile *p = &s->p;
    double wall = p->wall_seconds;
    put_fixed(w, "data_seconds", p->data_seconds, 3);
    put_fixed(w, "train_seconds", p->train_seconds, 3);
    put_fixed(w, "validation_seconds", p->val_seconds, 3);
    put_fixed(w, "journal_seconds", p->journal_seconds, 3);
    put_fixed(w, "wall_seconds", wall, 3);
    json_member_int(w, "threads", p->threads);
    put_fixed(w, "idle_seconds", s->idle, 3);
    put_fixed(w, "worker_seconds", s->worker, 3);
    put_fixed(w, "train_examples", p->train_examples, 0);
    put_fixed(w, "examples_per_second", wall > 0 ? p->train_examples / wall : 0.0, 1);
    json_member_int(w, "folds", p->folds);
    put_fixed(w, "pruned_seconds", p->pruned_seconds, 3);
    put_fixed(w, "gpu_kernel_seconds", p->gpu_kernel_seconds, 3);
    put_fixed(w, "gpu_host_seconds", p->gpu_host_seconds, 3);
}

/* A number >= 0 under key; optional keys may be missing (0). */
static int jget(const FsJson *root, const char *key, int optional, double *v, char *why, size_t n)
{
    const FsJson *x = json_get(root, key);
    *v = 0;
    if (!x && optional) return 0;
    if (!x) return snprintf(why, n, "\"%s\" is missing", key), -1;
    if (json_f64(x, v) != 0 || !isfinite(*v) || *v < 0)
        return snprintf(why, n, "\"%s\" is not a number of 0 or more", key), -1;
    return 0;
}

/* The whole run so far from DIR/profile.json. 1: read; 0: no file; -1:
 * cannot be read (why says what is wrong). A profile.json of an older
 * foldsweep (no "sessions") is one session. */
static int profile_read(const char *path, ProfileSum *t, char *why, size_t n)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 0;
        return snprintf(why, n, "cannot open: %s", strerror(errno)), -1;
    }
    size_t max = 1 << 16, len;
    char *text = fs_malloc(max + 1);
    len = fread(text, 1, max + 1, f);
    fclose(f);
    if (len > max) return free(text), snprintf(why, n, "larger than %zu bytes", max), -1;
    FsJsonDoc doc;
    char jwhy[160] = "";
    if (json_parse(&doc, text, len, jwhy, sizeof jwhy) != 0) {
        free(text);
        return snprintf(why, n, "not JSON (%s)", jwhy[0] ? jwhy : "cannot parse"), -1;
    }
    free(text);
    const FsJson *r = doc.root;
    double v[14];
    int rc = r && r->type == FS_JSON_OBJECT ? 0 : (snprintf(why, n, "not a JSON object"), -1);
    static const char *keys[] = {"data_seconds", "train_seconds",  "validation_seconds", "journal_seconds",
                                 "wall_seconds", "train_examples", "folds",              "threads",
                                 "pruned_seconds", "idle_seconds", "worker_seconds",     "sessions",
                                 "gpu_kernel_seconds", "gpu_host_seconds"};
    /* From "threads" on optional: an older foldsweep's profile lacks them. */
    for (int i = 0; rc == 0 && i < 14; i++) rc = jget(r, keys[i], i >= 7, &v[i], why, n);
    if (rc == 0 && (v[6] > 1e9 || v[7] > 1e6 || v[11] > 1e9))
        rc = -1, snprintf(why, n, "\"folds\", \"threads\" or \"sessions\" is out of range");
    if (rc == 0) {
        *t = (ProfileSum){{v[0], v[1], v[2], v[3], v[4], (int)v[7], v[5], (int)v[6], v[8], v[12], v[13]}, v[10], v[9],
                          (int)v[11]};
        if (!json_get(r, "sessions")) { /* an older foldsweep's: one session */
            t->sessions = 1;
            t->worker = v[4] * v[7];
        } else if (t->sessions < 1) {
            rc = -1, snprintf(why, n, "\"sessions\" is not 1 or more");
        }
    }
    json_free(&doc);
    return rc < 0 ? -1 : 1;
}

static int write_text(const char *dir, const char *name, char *text, size_t len, FsErr *err)
{
    char path[FS_PATH_IN_DIR];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = fs_write_file_atomic(path, text, len, err);
    free(text);
    return rc;
}

int profile_write(const char *dir, const FsProfile *p, FsErr *err)
{
    char path[FS_PATH_IN_DIR], why[200] = "";
    snprintf(path, sizeof path, "%s/profile.json", dir);
    ProfileSum t, one = profile_one(p);
    int have = profile_read(path, &t, why, sizeof why);
    int trained = p->folds > 0 || p->train_seconds > 0 || p->pruned_seconds > 0;
    if (have < 0)
        fprintf(stderr, "foldsweep: warning: %s: %s; %s\n", path, why,
                trained ? "the time of earlier sessions is not counted: the profile starts again from this session"
                        : "left as it is (this session trained nothing)");
    /* A session that trained nothing (a finished sweep rerun for its test
     * section, say) would only dilute the run's rates. */
    if (!trained && have != 0) return 0;
    if (have <= 0) memset(&t, 0, sizeof t);
    FsProfile *q = &t.p;
    q->data_seconds += p->data_seconds, q->train_seconds += p->train_seconds, q->val_seconds += p->val_seconds;
    q->journal_seconds += p->journal_seconds, q->wall_seconds += p->wall_seconds, q->threads = p->threads;
    q->train_examples += p->train_examples, q->folds += p->folds, q->pruned_seconds += p->pruned_seconds;
    q->gpu_kernel_seconds += p->gpu_kernel_seconds, q->gpu_host_seconds += p->gpu_host_seconds;
    t.worker += one.worker, t.idle += one.idle, t.sessions++;

    FsJsonOut w = {0}; /* a time that is not a number is refused, not written as JSON no reader takes */
    json_object_begin(&w);
    json_profile(&w, &t);
    json_member_int(&w, "sessions", t.sessions);
    json_key(&w, "last_session");
    json_object_begin(&w);
    json_profile(&w, &one);
    json_end(&w);
    json_end(&w);
    json_tail(&w, "\n");
    if (json_out_error(&w)) {
        fs_err_set(err, "%s: cannot write the profile: %s", path, json_out_error(&w));
        json_out_free(&w);
        return -1;
    }
    if (write_text(dir, "profile.json", w.p, w.n, err) != 0) return -1; /* it frees w's text */
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    if (!(f = open_memstream(&text, &len))) return fs_err_set(err, "%s: cannot write the profile: out of memory", dir), -1;
    fprintf(f, "profile of the whole run (%d session%s):\n", t.sessions, t.sessions == 1 ? "" : "s");
    print_body(f, &t);
    fprintf(f, "\nprofile of the last session:\n");
    print_body(f, &one);
    fclose(f);
    return write_text(dir, "profile.txt", text, len, err);
}
