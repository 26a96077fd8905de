/*
 * test_stop: each early-stopping criterion on hand-built loss curves. The
 * expected halting epochs are worked out in the comments from Prechelt's
 * definitions (stop.h), not from the implementation.
 */
#include "stop/stop.h"

#include "test.h"

#define MAXN 64

/* The per-epoch record of one run. */
typedef struct {
    int halt;         /* first epoch (1-based) with FS_STOP_HALT, 0 if none */
    int flags[MAXN];  /* stop_update's result per epoch, index t-1 */
    float gl[MAXN], pk[MAXN];
    FsStopState st;   /* state after the last epoch fed */
} Run;

static FsStopSpec spec_make(FsStopKind kind)
{
    FsStopSpec s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.alpha = 5.0f;
    s.strip = 5;
    s.s = 3;
    s.patience = 10;
    s.min_delta = 0.0f;
    s.max_epochs = 1000;
    return s;
}

/* Feeds n epochs, stopping after the first HALT. tr may be NULL (E_tr = 1). */
static void run(Run *r, const FsStopSpec *spec, const float *tr, const float *va, int n)
{
    memset(r, 0, sizeof *r);
    stop_init(&r->st);
    for (int i = 0; i < n && i < MAXN; i++) {
        r->flags[i] = stop_update(&r->st, spec, tr ? tr[i] : 1.0f, va[i]);
        r->gl[i] = r->st.gl;
        r->pk[i] = r->st.pk;
        if (r->flags[i] & FS_STOP_HALT) {
            r->halt = i + 1;
            return;
        }
    }
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define IMPROVED(r, t) (((r).flags[(t) - 1] & FS_STOP_IMPROVED) != 0)

/* ---------------------------------------------------------------------- */

static void test_gl(void)
{
    FsStopSpec sp = spec_make(FS_STOP_GL);
    sp.alpha = 5.0f;
    Run r;

    /* E_opt = 0.7 from t3 on; GL_5 halts once E_va > 1.05 * 0.7 = 0.735.
     *   t4 0.72  -> GL = 100 * (0.72/0.7 - 1)  = 2.857
     *   t5 0.734 -> GL = 100 * (0.734/0.7 - 1) = 4.857  (just under 0.735)
     *   t6 0.70  -> GL = 0 (ties E_opt: not an improvement)
     *   t7 0.74  -> GL = 100 * (0.74/0.7 - 1)  = 5.714 > 5: halt after t7 */
    const float va1[] = {1.0f, 0.8f, 0.7f, 0.72f, 0.734f, 0.70f, 0.74f, 0.9f, 1.0f};
    run(&r, &sp, NULL, va1, N(va1));
    CHECK(r.halt == 7);
    CHECK(IMPROVED(r, 1) && IMPROVED(r, 2) && IMPROVED(r, 3));
    CHECK(!IMPROVED(r, 4) && !IMPROVED(r, 5) && !IMPROVED(r, 6) && !IMPROVED(r, 7));
    CHECK(r.st.best_epoch == 3);
    CHECK_NEAR(r.st.e_opt, 0.7, 1e-7);
    CHECK_NEAR(r.gl[0], 0.0, 1e-6);
    CHECK_NEAR(r.gl[3], 100.0 * (0.72 / 0.7 - 1.0), 1e-4);
    CHECK_NEAR(r.gl[4], 100.0 * (0.734 / 0.7 - 1.0), 1e-4);
    CHECK_NEAR(r.gl[5], 0.0, 1e-6);
    CHECK_NEAR(r.gl[6], 100.0 * (0.74 / 0.7 - 1.0), 1e-4);
    CHECK(r.st.epoch == 7);

    /* GL(t) uses E_opt(t), which moves: t3 is 4% above E_opt = 1.0, t4 sets
     * E_opt = 0.5, t5 is 4% above 0.5, t6 is 6% above 0.5: halt after t6.
     * (Against the stale E_opt = 1.0 nothing after t3 would exceed 5%.) */
    const float va2[] = {2.0f, 1.0f, 1.04f, 0.5f, 0.52f, 0.53f, 0.6f};
    run(&r, &sp, NULL, va2, N(va2));
    CHECK(r.halt == 6);
    CHECK(r.st.best_epoch == 4);
    CHECK_NEAR(r.gl[2], 4.0, 1e-4);
    CHECK(r.gl[3] == 0.0f); /* t4 is the new E_opt itself */
    CHECK_NEAR(r.gl[4], 4.0, 1e-4);
    CHECK_NEAR(r.gl[5], 6.0, 1e-4);

    /* "GL > alpha" is strict. 100 * (1.25/1 - 1) = 25 exactly in float. */
    sp.alpha = 25.0f;
    const float va3[] = {1.0f, 1.25f, 1.5f};
    run(&r, &sp, NULL, va3, N(va3));
    CHECK(r.gl[1] == 25.0f);
    CHECK(r.halt == 3);
}

static void test_pq(void)
{
    FsStopSpec sp = spec_make(FS_STOP_PQ);
    sp.strip = 5;
    sp.alpha = 0.5f;
    Run r;
    /* Strips are t1..5, t6..10, t11..15, t16..20.
     *   strip 1 E_tr 5 4 3 2 1:         sum 15,   min 1,   P = 1000*(15/5 - 1)     = 2000
     *   strip 2 E_tr 1 .9 .8 .8 .8:     sum 4.3,  min 0.8, P = 1000*(4.3/4 - 1)    = 75
     *   strip 3 E_tr .7 .6 .55 .5 .5:   sum 2.85, min 0.5, P = 1000*(2.85/2.5 - 1) = 140
     *   strip 4 E_tr .5 x5:             P = 0 (flat training)
     * E_va falls to E_opt = 0.5 at t6, then
     *   t7 0.6  -> GL = 20, but t7 is not a strip end: no check
     *   t10 0.51 -> GL = 2,  GL/P = 2/75   = 0.0267
     *   t15 0.9  -> GL = 80, GL/P = 80/140 = 0.571 > 0.5: PQ_0.5 halts after t15
     *                                            (<= 0.6: PQ_0.6 goes on)
     *   t20 0.55 -> GL = 10, P = 0 -> quotient +inf: PQ_0.6 halts after t20 */
    const float tr[] = {5, 4, 3, 2, 1,
                        1.0f, 0.9f, 0.8f, 0.8f, 0.8f,
                        0.7f, 0.6f, 0.55f, 0.5f, 0.5f,
                        0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
                        0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    const float va[] = {1.0f, 0.9f, 0.8f, 0.7f, 0.6f,
                        0.5f, 0.6f, 0.55f, 0.52f, 0.51f,
                        0.8f, 0.8f, 0.8f, 0.8f, 0.9f,
                        0.9f, 0.9f, 0.9f, 0.9f, 0.55f,
                        0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    run(&r, &sp, tr, va, N(va));
    CHECK(r.halt == 15);
    CHECK_NEAR(r.pk[4], 2000.0, 1e-2);
    CHECK_NEAR(r.pk[9], 75.0, 1e-2);
    CHECK_NEAR(r.pk[14], 140.0, 1e-2);
    CHECK_NEAR(r.gl[9], 2.0, 1e-4);
    CHECK_NEAR(r.gl[14], 80.0, 1e-4);
    /* P_k exists only at strip ends. */
    for (int t = 1; t <= 15; t++)
        CHECK_MSG((t % 5 == 0) == (r.pk[t - 1] >= 0.0f), "epoch %d pk %g", t, (double)r.pk[t - 1]);
    CHECK(r.st.best_epoch == 6);

    sp.alpha = 0.6f;
    run(&r, &sp, tr, va, N(va));
    CHECK(r.halt == 20);
    CHECK(r.pk[19] == 0.0f);
    CHECK_NEAR(r.gl[19], 10.0, 1e-4);

    /* P = 0 and GL = 0 give quotient 0: a flat training error alone never
     * stops PQ. Strip 2: E_tr 1 1 -> P = 0; E_va keeps improving -> GL = 0. */
    sp.strip = 2;
    const float tr0[] = {1, 1, 1, 1, 1, 1};
    const float va0[] = {1.0f, 0.9f, 0.8f, 0.7f, 0.6f, 0.5f};
    run(&r, &sp, tr0, va0, N(va0));
    CHECK(r.halt == 0);
    CHECK(r.pk[1] == 0.0f && r.pk[5] == 0.0f);

    /* Another strip length, k = 3 (strips t1..3, t4..6, ...), PQ_1:
     * strip 1 E_tr 5 4 3: sum 12, min 3, P = 1000*(12/9 - 1) = 333.3
     * strip 2 E_tr 2 2 2: P = 0
     * E_va: E_opt 1.0 at t1; t3 1.2 -> GL 20, 20/333.3 = 0.06 (no);
     *       t5 1.5 is off-strip (GL 50); t6 1.0 -> GL 0, P 0 -> quotient 0 (no);
     *       t9 1.1 -> GL 10, strip 3 E_tr 2 1.8 1.6: sum 5.4, min 1.6,
     *       P = 1000*(5.4/4.8 - 1) = 125, 10/125 = 0.08 (no);
     *       t12 1.3 -> GL 30, strip 4 E_tr 1.5 1.5 1.5 -> P = 0 -> +inf: halt t12. */
    sp.strip = 3;
    sp.alpha = 1.0f;
    const float tr3[] = {5, 4, 3, 2, 2, 2, 2, 1.8f, 1.6f, 1.5f, 1.5f, 1.5f};
    const float va3[] = {1.0f, 1.1f, 1.2f, 1.3f, 1.5f, 1.0f, 1.0f, 1.0f, 1.1f, 1.0f, 1.0f, 1.3f};
    run(&r, &sp, tr3, va3, N(va3));
    CHECK(r.halt == 12);
    CHECK_NEAR(r.pk[2], 1000.0 * (12.0 / 9.0 - 1.0), 1e-2);
    CHECK(r.pk[5] == 0.0f);
    CHECK_NEAR(r.pk[8], 125.0, 1e-2);
    CHECK(r.pk[11] == 0.0f);
    CHECK(r.pk[4] < 0.0f);
}

static void test_up(void)
{
    FsStopSpec sp = spec_make(FS_STOP_UP);
    sp.strip = 3;
    Run r;
    /* k = 3: strip ends t3, t6, ..., t21. Off-strip values are chosen so a
     * comparison with t-1 instead of t-k would give other answers.
     *   t3  1.0  first strip end: no t-k, count 0
     *   t6  1.1  > E_va(3)  = 1.0   rise, count 1
     *   t9  1.05 < E_va(6)  = 1.1   count 0 (t8 = 2.0 is off-strip)
     *   t12 1.2  > E_va(9)  = 1.05  rise, count 1 (though below t11 = 1.5)
     *   t15 1.1  < E_va(12) = 1.2   count 0 (though above t14 = 0.5)
     *   t18 1.3  > E_va(15) = 1.1   rise, count 1
     *   t21 1.4  > E_va(18) = 1.3   rise, count 2 */
    const float va[] = {0.9f, 0.95f, 1.0f, 1.0f, 1.0f, 1.1f, 1.0f, 2.0f, 1.05f, 1.0f, 1.5f,
                        1.2f, 1.0f, 0.5f, 1.1f, 1.0f, 1.0f, 1.3f, 1.0f, 1.0f, 1.4f};
    sp.s = 1; /* UP_1: the first rise, t6 */
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 6);
    CHECK(r.st.up_count == 1);

    sp.s = 2; /* rises at 6, 12, 18 are not successive; 18 and 21 are */
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 21);
    CHECK(r.st.up_count == 2);
    CHECK(r.st.best_epoch == 14); /* E_va = 0.5, the minimum */
    CHECK_NEAR(r.st.e_opt, 0.5, 1e-7);
    CHECK(IMPROVED(r, 1) && !IMPROVED(r, 2) && IMPROVED(r, 14) && !IMPROVED(r, 15));

    sp.s = 3;
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 0);

    /* UP_2 with the rises non-successive only: truncate before t21. */
    sp.s = 2;
    run(&r, &sp, NULL, va, 20);
    CHECK(r.halt == 0);

    /* The first strip end never counts, however high: k = 2, t2 = 5.0.
     * t4 4.0 < 5.0 (no), t6 4.5 > 4.0: UP_1 halts after t6. */
    sp.strip = 2;
    sp.s = 1;
    const float va2[] = {0.1f, 5.0f, 0.2f, 4.0f, 9.0f, 4.5f};
    run(&r, &sp, NULL, va2, N(va2));
    CHECK(r.halt == 6);

    /* Equal is not a rise: k = 1, UP_2: 1, 2 (rise), 2 (equal, reset), 3 (rise), 4 (rise): halt t5. */
    sp.strip = 1;
    sp.s = 2;
    const float va3[] = {1, 2, 2, 3, 4, 5};
    run(&r, &sp, NULL, va3, N(va3));
    CHECK(r.halt == 5);
}

static void test_patience(void)
{
    FsStopSpec sp = spec_make(FS_STOP_PATIENCE);
    sp.patience = 3;
    sp.min_delta = 0.01f;
    Run r;
    /* Reference moves only on a gain > 0.01:
     *   t1 1.0   reference 1.0 (epoch 1)
     *   t2 0.995 gain 0.005: no (but a new E_opt: IMPROVED)
     *   t3 0.985 gain 0.015 over 1.0: reference 0.985 (epoch 3)
     *   t4 0.98  gain 0.005: no (IMPROVED)
     *   t5 0.99  no
     *   t6 0.976 gain 0.009: no (IMPROVED); 6 - 3 = 3 epochs: halt after t6
     * With min_delta ignored the best would be t6 and nothing would halt. */
    const float va[] = {1.0f, 0.995f, 0.985f, 0.98f, 0.99f, 0.976f, 0.9f};
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 6);
    CHECK(IMPROVED(r, 1) && IMPROVED(r, 2) && IMPROVED(r, 3) && IMPROVED(r, 4));
    CHECK(!IMPROVED(r, 5) && IMPROVED(r, 6));
    CHECK(r.st.best_epoch == 6);
    CHECK(r.st.pat_epoch == 3);

    /* min_delta 0, patience 2: best at t3 (0.5); t4, t5 worse: 5 - 3 = 2, halt t5. */
    sp.patience = 2;
    sp.min_delta = 0.0f;
    const float va2[] = {1.0f, 2.0f, 0.5f, 0.6f, 0.7f, 0.1f};
    run(&r, &sp, NULL, va2, N(va2));
    CHECK(r.halt == 5);
    CHECK(r.st.best_epoch == 3);

    /* patience 1: any epoch without improvement halts. */
    sp.patience = 1;
    const float va3[] = {1.0f, 0.9f, 0.8f, 0.8f, 0.7f};
    run(&r, &sp, NULL, va3, N(va3));
    CHECK(r.halt == 4);
}

static void test_max_epochs(void)
{
    FsStopSpec sp = spec_make(FS_STOP_MAX_EPOCHS);
    sp.max_epochs = 4;
    Run r;
    const float va[] = {1.0f, 2.0f, 3.0f, 0.5f, 0.1f, 0.1f};
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 4);
    CHECK(r.flags[3] == (FS_STOP_IMPROVED | FS_STOP_HALT));
    CHECK(r.flags[1] == 0 && r.flags[2] == 0);
    CHECK(r.st.best_epoch == 4);

    sp.max_epochs = 1;
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 1 && r.flags[0] == (FS_STOP_IMPROVED | FS_STOP_HALT));

    /* max_epochs applies to every kind: GL_5 on a falling curve. */
    sp = spec_make(FS_STOP_GL);
    sp.max_epochs = 3;
    const float fall[] = {3, 2, 1, 0.5f, 0.25f};
    run(&r, &sp, NULL, fall, N(fall));
    CHECK(r.halt == 3);
    sp = spec_make(FS_STOP_UP);
    sp.strip = 1;
    sp.s = 1;
    sp.max_epochs = 2;
    run(&r, &sp, NULL, fall, N(fall));
    CHECK(r.halt == 2);
}

static void test_nonfinite(void)
{
    FsStopSpec sp = spec_make(FS_STOP_MAX_EPOCHS);
    Run r;
    /* NaN and +-inf are never improvements; gl is never NaN. */
    const float va[] = {NAN, INFINITY, 2.0f, -INFINITY, NAN, 1.0f, 1.5f};
    run(&r, &sp, NULL, va, N(va));
    CHECK(r.halt == 0);
    CHECK(!IMPROVED(r, 1) && !IMPROVED(r, 2) && IMPROVED(r, 3));
    CHECK(!IMPROVED(r, 4) && !IMPROVED(r, 5) && IMPROVED(r, 6) && !IMPROVED(r, 7));
    CHECK(r.st.best_epoch == 6);
    CHECK(r.st.e_opt == 1.0f);
    for (int i = 0; i < N(va); i++) CHECK_MSG(!isnan(r.gl[i]), "epoch %d gl NaN", i + 1);
    CHECK(r.gl[0] == 0.0f && r.gl[1] == 0.0f); /* no finite E_opt yet */
    CHECK(isinf(r.gl[3]) && r.gl[3] > 0 && isinf(r.gl[4]));
    CHECK_NEAR(r.gl[6], 50.0, 1e-4);

    /* GL: a diverged validation error is an infinite generalization loss. */
    sp = spec_make(FS_STOP_GL);
    const float va2[] = {1.0f, NAN, 1.0f};
    run(&r, &sp, NULL, va2, N(va2));
    CHECK(r.halt == 2 && r.st.best_epoch == 1);

    /* A NaN training error gives P_k = +inf, not NaN. GL = 20 at t2 would
     * stop PQ_0.5 with any finite P below 40; with P = inf it goes on. */
    sp = spec_make(FS_STOP_PQ);
    sp.strip = 2;
    sp.alpha = 0.5f;
    const float tr3[] = {1.0f, NAN, 1.0f, 1.0f};
    const float va3[] = {1.0f, 1.2f, 1.0f, 0.9f};
    run(&r, &sp, tr3, va3, N(va3));
    CHECK(r.halt == 0);
    CHECK(isinf(r.pk[1]) && r.pk[1] > 0);
    CHECK(r.pk[3] == 0.0f);

    /* Patience with nothing finite: no reference epoch, halts at `patience`. */
    sp = spec_make(FS_STOP_PATIENCE);
    sp.patience = 2;
    const float va4[] = {NAN, NAN, NAN};
    run(&r, &sp, NULL, va4, N(va4));
    CHECK(r.halt == 2 && r.st.best_epoch == 0);

    /* E_opt = 0: a later positive error has GL = +inf, a later 0 has GL = 0. */
    sp = spec_make(FS_STOP_MAX_EPOCHS);
    const float va5[] = {0.0f, 0.0f, 0.1f};
    run(&r, &sp, NULL, va5, N(va5));
    CHECK(r.gl[1] == 0.0f && isinf(r.gl[2]));
}

static void test_init_and_names(void)
{
    FsStopState st;
    memset(&st, 0x5a, sizeof st);
    stop_init(&st);
    CHECK(st.epoch == 0 && st.best_epoch == 0 && st.up_count == 0 && st.pat_epoch == 0);
    CHECK(isinf(st.e_opt) && st.pk < 0.0f && st.gl == 0.0f);

    CHECK(strcmp(stop_kind_name(FS_STOP_MAX_EPOCHS), "none") == 0); /* the sweep format's name */
    CHECK(strcmp(stop_kind_name(FS_STOP_GL), "gl") == 0);
    CHECK(strcmp(stop_kind_name(FS_STOP_PQ), "pq") == 0);
    CHECK(strcmp(stop_kind_name(FS_STOP_UP), "up") == 0);
    CHECK(strcmp(stop_kind_name(FS_STOP_PATIENCE), "patience") == 0);
    CHECK(strcmp(stop_kind_name((FsStopKind)99), "unknown") == 0);
}

/* Expects stop_spec_check to reject sp with a message containing sub. */
static void check_rejects(FsStopSpec sp, const char *sub, int line)
{
    FsErr err;
    memset(&err, 0, sizeof err);
    int rc = stop_spec_check(&sp, &err);
    CHECK_MSG(rc == -1 && err.set, "line %d: accepted", line);
    CHECK_MSG(strstr(err.msg, sub) != NULL, "line %d: \"%s\" lacks \"%s\"", line, err.msg, sub);
}
#define REJECTS(sp, sub) check_rejects((sp), (sub), __LINE__)

static void test_spec_check(void)
{
    FsErr err;
    memset(&err, 0, sizeof err);
    FsStopKind kinds[] = {FS_STOP_MAX_EPOCHS, FS_STOP_GL, FS_STOP_PQ, FS_STOP_UP, FS_STOP_PATIENCE};
    for (int i = 0; i < N(kinds); i++) {
        FsStopSpec sp = spec_make(kinds[i]);
        CHECK(stop_spec_check(&sp, &err) == 0 && !err.set);
    }
    /* Parameters a kind does not use are not checked. */
    FsStopSpec sp = spec_make(FS_STOP_GL);
    sp.strip = 0;
    sp.s = 0;
    sp.patience = 0;
    CHECK(stop_spec_check(&sp, &err) == 0);
    sp = spec_make(FS_STOP_UP);
    sp.strip = FS_STOP_MAX_STRIP;
    sp.s = 1;
    CHECK(stop_spec_check(&sp, &err) == 0);

    sp = spec_make(FS_STOP_GL);
    sp.alpha = 0.0f;
    REJECTS(sp, "alpha is 0; expected a finite number > 0");
    sp.alpha = NAN;
    REJECTS(sp, "alpha");
    sp = spec_make(FS_STOP_PQ);
    sp.alpha = -1.0f;
    REJECTS(sp, "alpha");
    sp = spec_make(FS_STOP_PQ);
    sp.strip = 0;
    REJECTS(sp, "strip is 0; expected an integer in 1..64");
    sp = spec_make(FS_STOP_UP);
    sp.strip = FS_STOP_MAX_STRIP + 1;
    REJECTS(sp, "strip is 65");
    sp = spec_make(FS_STOP_UP);
    sp.s = 0;
    REJECTS(sp, "s is 0; expected an integer >= 1");
    sp = spec_make(FS_STOP_PATIENCE);
    sp.patience = 0;
    REJECTS(sp, "patience is 0; expected an integer >= 1");
    sp = spec_make(FS_STOP_PATIENCE);
    sp.min_delta = -0.1f;
    REJECTS(sp, "min_delta");
    for (int i = 0; i < N(kinds); i++) {
        sp = spec_make(kinds[i]);
        sp.max_epochs = 0;
        REJECTS(sp, "max_epochs is 0; expected an integer >= 1");
    }
    sp = spec_make((FsStopKind)7);
    REJECTS(sp, "kind");
}

int main(void)
{
    test_gl();
    test_pq();
    test_up();
    test_patience();
    test_max_epochs();
    test_nonfinite();
    test_init_and_names();
    test_spec_check();
    return test_finish();
}
