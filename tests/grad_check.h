/*
 * grad_check.h: the gradient tests' one comparison (test_grad: window
 * models; test_chain: chain models): each parameter's analytic gradient
 * against a central finite difference of the loss. Include after test.h.
 */
#ifndef FS_TEST_GRAD_CHECK_H
#define FS_TEST_GRAD_CHECK_H

#include <math.h>

/* Every parameter w[0..np) (or an even sample of `sample`) nudged by +-eps:
 * (loss(+) - loss(-)) / 2eps against g[i], relative error over |num| +
 * |ana| + 1e-2 at most tol. Prints the worst and fails the test (naming
 * `name`) on any gradient off. */
static inline void gc_compare(const char *name, float *w, const float *g, long np, long sample,
                              double (*loss)(void *), void *ctx, double eps, double tol)
{
    long stride = np > sample ? np / sample : 1, bad = 0, checked = 0;
    double worst = 0.0;
    for (long i = 0; i < np; i += stride) {
        float keep = w[i];
        w[i] = keep + (float)eps;
        double lp = loss(ctx);
        w[i] = keep - (float)eps;
        double lm = loss(ctx);
        w[i] = keep;
        double num = (lp - lm) / (2.0 * eps), ana = g[i];
        double e = fabs(num - ana) / (fabs(num) + fabs(ana) + 1e-2);
        if (e > worst) worst = e;
        if (e > tol) {
            if (bad < 5) fprintf(stderr, "  %s: param %ld analytic %.6g numeric %.6g\n", name, i, ana, num);
            bad++;
        }
        checked++;
    }
    printf("%-36s %5ld params checked, worst relative error %.2e\n", name, checked, worst);
    CHECK_MSG(bad == 0, "%s: %ld of %ld gradients off", name, bad, checked);
    CHECK(checked > 10);
}

#endif
