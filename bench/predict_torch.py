#!/usr/bin/env python3
"""PyTorch baseline for `foldsweep predict` (bench/run-predict).

usage: predict_torch.py MODEL INPUT.fasta [--batch N] [--threads N] [--repeat R] [--compare CSV] [--json]

Loads MODEL (a `foldsweep export` folder, or .safetensors files separated by
commas) with python/foldsweep_torch.py, builds every residue's one-hot window
once ([N, 21, W] float32, outside the timing), then times the ensemble as a
PyTorch user would run it: per batch of N windows, each fold model's forward
pass, softmax, and the mean over the models (torch.inference_mode, eval
mode). `seconds` is the best of --repeat passes over all residues;
residues_per_second = residues / seconds. --compare CSV (foldsweep predict
--format csv of the same input) adds the largest |torch - foldsweep|
probability difference. Run it with the python that has torch (Debian's:
/usr/bin/python3); see bench/r1_torch.py on BLAS and threads.
"""

import os
import sys


def _pre_threads(argv):
    """--threads, read before torch (and its BLAS) load."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, _pre_threads(sys.argv[1:]))

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import foldsweep_torch as ft  # noqa: E402


# The same probe as the R1 baseline's (bench/r1_torch.py, beside this file).
from r1_torch import blas_library  # noqa: E402


def run(models, x, batch):
    """The timed work: forward, softmax and mean over the models, batch by batch."""
    n = x.shape[0]
    out = torch.empty(n, 3)
    with torch.inference_mode():
        for s in range(0, n, batch):
            xb = x[s : s + batch]
            acc = torch.softmax(models[0](xb), dim=1)
            for m in models[1:]:
                acc = acc + torch.softmax(m(xb), dim=1)
            out[s : s + batch] = acc / len(models)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="an exported folder, or .safetensors files separated by commas")
    ap.add_argument("fasta")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="passes over the input; the best is reported")
    ap.add_argument("--compare", help="foldsweep predict --format csv output of the same input")
    ap.add_argument("--json", action="store_true", help="one JSON line")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    models = ft.load_ensemble(a.model.split(",") if "," in a.model else a.model)
    proteins = ft.read_fasta(a.fasta)
    window = models[0].window
    x = torch.cat([ft.one_hot_windows(s, window) for _, s in proteins if s])
    run(models, x[: 4 * a.batch], a.batch)  # warm-up (allocator, first-call costs)
    best = None
    for _ in range(max(1, a.repeat)):
        t0 = time.perf_counter()
        p = run(models, x, a.batch)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    res = {
        "framework": "pytorch",
        "torch_version": torch.__version__,
        "blas": blas_library(),
        "batch": a.batch,
        "threads": a.threads,
        "models": len(models),
        "window": window,
        "proteins": len(proteins),
        "residues": int(x.shape[0]),
        "seconds": round(best, 6),
        "residues_per_second": round(x.shape[0] / best, 1),
    }
    if a.compare:
        with open(a.compare, newline="") as f:
            rows = list(csv.DictReader(f))
        c = torch.tensor([[float(r[k]) for k in ("p[q3_H]", "p[q3_E]", "p[q3_C]")] for r in rows])
        res["max_abs_diff_vs_foldsweep"] = (p - c).abs().max().item() if c.shape == p.shape else None
    if a.json:
        print(json.dumps(res), flush=True)
    else:
        for k, v in res.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
