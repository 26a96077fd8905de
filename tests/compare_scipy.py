#!/usr/bin/env python3
"""The statistics that compare trials (src/metrics/compare.c) against SciPy.

`test_compare --dump SEED N` prints random cases (split scores of two
trials, a validation/training ratio, a t and df, a probability) with the C
code's answers; this script computes the same quantities independently
with scipy.stats (Student's t cdf and ppf; the corrected resampled t-test
and interval written out from Nadeau and Bengio's formula) and fails on
any difference beyond the tolerance. Skips (77) where SciPy is absent:
scripts/test installs Debian's python3-scipy.

usage: compare_scipy.py PATH/TO/test_compare
"""
import json
import math
import subprocess
import sys

try:
    import numpy as np
    from scipy import stats
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: SciPy is not installed ({e}); scripts/test installs python3-scipy")
    sys.exit(77)


def corrected(a, b, ratio):
    """Two-sided p of the corrected resampled paired t-test, and the 95%
    interval of a's mean with the corrected variance."""
    a, b = np.asarray(a), np.asarray(b)
    n = len(a)
    d = a - b
    var_d = d.var(ddof=1)
    se = math.sqrt((1.0 / n + ratio) * var_d)
    if se == 0.0:
        p = 1.0 if d.mean() == 0.0 else 0.0
    else:
        p = 2.0 * stats.t.sf(abs(d.mean() / se), n - 1)
    half = stats.t.ppf(0.975, n - 1) * math.sqrt((1.0 / n + ratio) * a.var(ddof=1))
    return p, a.mean() - half, a.mean() + half


def main():
    exe = sys.argv[1]
    out = subprocess.run([exe, "--dump", "20261204", "500"], check=True, capture_output=True, text=True).stdout
    cases = [json.loads(line) for line in out.splitlines()]
    assert len(cases) == 500, f"{len(cases)} cases"
    worst = {"p": 0.0, "ci": 0.0, "cdf": 0.0, "quantile": 0.0}
    fails = 0
    for i, c in enumerate(cases):
        p, lo, hi = corrected(c["a"], c["b"], c["ratio"])
        got = {
            "p": abs(p - c["p"]),
            "ci": max(abs(lo - c["lo"]), abs(hi - c["hi"])),
            "cdf": abs(stats.t.cdf(c["t"], c["df"]) - c["cdf"]),
            # SciPy's ppf itself is good to about 1e-10 (its df = 2 answer is
            # 1.6e-10 off the closed form), so compare relative to the value.
            "quantile": abs(stats.t.ppf(c["q"], c["df"]) - c["quantile"]) / max(1.0, abs(c["quantile"])),
        }
        tol = {"p": 1e-9, "ci": 1e-8, "cdf": 1e-10, "quantile": 1e-8}
        for k, v in got.items():
            worst[k] = max(worst[k], v)
            if not v <= tol[k]:
                fails += 1
                if fails <= 10:
                    print(f"case {i}: {k} differs by {v:.3g} (tolerance {tol[k]:g}): {c}")
    print(f"{len(cases)} cases against SciPy {stats.__name__} {__import__('scipy').__version__}: largest differences "
          + ", ".join(f"{k} {v:.2g}" for k, v in worst.items()))
    if fails:
        print(f"FAILED: {fails} differences beyond tolerance")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
