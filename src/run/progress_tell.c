/*
 * progress_tell: the listener's own thread (FsRunOptions.on_progress, the
 * Python package's bar and callback). The progress thread posts each event
 * here and goes on: a slow listener delays neither the line, progress.json
 * nor the grace timer that turns a stop into a cancel. Events are
 * snapshots, so a listener slower than they come sees the latest; the last
 * one posted (the final event) is always told, before progress_stop
 * returns.
 */
#include <stdlib.h>
#include <string.h>

#include "run/progress.h"

static void *teller_main(void *arg)
{
    FsTeller *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->pending && !t->closing) pthread_cond_wait(&t->cv, &t->lock);
        if (!t->pending) break; /* closing, and all told */
        char *ev = t->pending;
        t->pending = NULL;
        pthread_mutex_unlock(&t->lock);
        t->listener(ev, t->user);
        free(ev);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

void teller_start(FsTeller *t, void (*listener)(const char *json, void *user), void *user)
{
    memset(t, 0, sizeof *t);
    t->listener = listener;
    t->user = user;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->running = pthread_create(&t->thread, NULL, teller_main, t) == 0;
    if (!t->running) { /* the caller tells its events itself (progress_tell) */
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->lock);
    }
}

void teller_post(FsTeller *t, const char *json, size_t n)
{
    char *ev = fs_malloc(n + 1);
    memcpy(ev, json, n);
    ev[n] = '\0';
    pthread_mutex_lock(&t->lock);
    free(t->pending); /* an older snapshot not told yet: this one replaces it */
    t->pending = ev;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lock);
}

void teller_stop(FsTeller *t)
{
    if (!t->running) return;
    pthread_mutex_lock(&t->lock);
    t->closing = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->running = 0;
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->lock);
}
