#!/usr/bin/env python3
"""Seed replicates' statistics (search.replicates; src/report/report_seeds.c
and report_ties.c) against an independent computation with SciPy.

Runs a small synthetic sweep (3 folds x 2 repeats, the top 2 trials
replicated with 3 seeds) with the foldsweep binary, then recomputes every
trial's statistics from the journal's fold records alone, as
docs/statistics.md states them: each split's mean over the trial's
complete seeds, the mean and 95% interval over those n = k x r split means
with the corrected variance (1/n + n_val/n_train) s^2 and Student's t at
n - 1 degrees of freedom (scipy.stats.t.ppf), the corrected paired t-test
of each trial's split means against the best's (scipy.stats.t.sf), Holm's
adjustment, and the pooled seed standard deviation within splits
(n (S - 1) degrees of freedom); and compares them with `leaderboard
--format json`. Skips (77) where SciPy is absent.

usage: replicates_scipy.py PATH/TO/foldsweep
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy import stats
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: SciPy is not installed ({e}); scripts/test installs python3-scipy")
    sys.exit(77)

SWEEP = """data:
  synth: {proteins: 40, seed: 2}
  window: 9
  folds: 3
  repeats: 2
model:
  depth: 1
  filters: [4, 6, 8, 12]
  kernel: 3
  dense: 8
training:
  epochs: 2
  batch_size: 16
search:
  replicates: {top: 2, seeds: 3}
"""
FOLDS = 6


def journal_folds(path):
    """(trial, fold, seed) -> (q3, val_examples, train_examples) of ok folds."""
    out = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") != "fold" or rec["status"] != "ok" or rec["best_epoch"] < 1:
                continue
            cm = rec["confusion"]
            q3 = sum(cm[i][i] for i in range(3)) / sum(sum(r) for r in cm)
            out[(rec["trial"], rec["fold"], rec.get("seed", 0))] = (q3, rec["val_examples"], rec["train_examples"])
    return out


def expected(folds, trial):
    """Split means over the complete seeds, the seeds, the ratio, the seed sd."""
    seeds = [s for s in range(100) if all((trial, k, s) in folds for k in range(FOLDS))]
    x = np.array([[folds[(trial, k, s)][0] for k in range(FOLDS)] for s in seeds])
    va = sum(folds[(trial, k, 0)][1] for k in range(FOLDS))
    tr = sum(folds[(trial, k, 0)][2] for k in range(FOLDS))
    m = x.mean(axis=0)
    sd = math.sqrt(((x - m) ** 2).sum() / (FOLDS * (len(seeds) - 1))) if len(seeds) > 1 else None
    return m, len(seeds), va / tr, sd


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    adj, run = [0.0] * len(p), 0.0
    for j, i in enumerate(order):
        run = max(run, min(1.0, (len(p) - j) * p[i]))
        adj[i] = run
    return adj


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def main():
    binary = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="fs_replicates_scipy")
    try:
        sweep = os.path.join(tmp, "s.yaml")
        with open(sweep, "w") as f:
            f.write(SWEEP)
        out = os.path.join(tmp, "run")
        subprocess.run([binary, "run", sweep, "-o", out, "--threads", "2", "--quiet"], check=True)
        board = json.loads(subprocess.run([binary, "leaderboard", out, "--format", "json"], check=True,
                                          capture_output=True, text=True).stdout)
        folds = journal_folds(os.path.join(out, "journal.jsonl"))
        rows = {r["id"]: r for r in board}
        best = board[0]["id"]
        bm, _, _, _ = expected(folds, best)
        worst, pvals, ids = 0.0, [], []
        for r in board:
            m, seeds, ratio, sd = expected(folds, r["id"])
            n = len(m)
            assert r["seeds"] == seeds, (r["id"], r["seeds"], seeds)
            assert close(r["metric"]["mean"], m.mean()), (r["metric"]["mean"], m.mean())
            half = stats.t.ppf(0.975, n - 1) * math.sqrt((1.0 / n + ratio) * m.var(ddof=1))
            lo, hi = r["q3_ci95"]
            assert close(lo, m.mean() - half) and close(hi, m.mean() + half), (lo, hi, m.mean(), half)
            worst = max(worst, abs(lo - (m.mean() - half)), abs(hi - (m.mean() + half)))
            if sd is None:
                assert r["seed_sd"] is None
            else:
                assert close(r["seed_sd"], sd), (r["seed_sd"], sd)
            if r["id"] != best:
                d = m - bm
                t = d.mean() / math.sqrt((1.0 / n + ratio) * d.var(ddof=1))
                pvals.append(2.0 * stats.t.sf(abs(t), n - 1))
                ids.append(r["id"])
        for i, p in zip(ids, holm(pvals)):
            assert close(rows[i]["p_vs_best"], p, 1e-7), (i, rows[i]["p_vs_best"], p)
            worst = max(worst, abs(rows[i]["p_vs_best"] - p))
        assert [r["seeds"] for r in board].count(3) == 2, [r["seeds"] for r in board]
        print(f"{len(board)} trials, {sum(1 for k in folds if k[2])} replicate folds: "
              f"largest difference {worst:.2g}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
