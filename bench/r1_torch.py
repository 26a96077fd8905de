#!/usr/bin/env python3
"""R1 reference workload, PyTorch baseline for foldsweep benchmarks.

README-torch
============

Which python: PyTorch comes from Debian (``apt-get install -y python3-torch``,
package 1.13.1+dfsg-4 on Debian 12; ``torch.__version__`` reports
``1.13.0a0``). It installs into the system interpreter ``/usr/bin/python3``
(3.11.2). The ``python3`` found first on PATH may be a pyenv 3.11 that does
not see Debian's dist-packages (``No module named 'torch'``), so run the
script explicitly with ``/usr/bin/python3``:

    /usr/bin/python3 bench/r1_torch.py --data /work/shared/data/uci/protein-secondary-structure.train \
        --max-folds 1 --batch 8 --epochs 5 --threads 1 --json

BLAS matters (2-5x): Debian's torch is built with BLAS_INFO=generic and
links ``libblas.so.3``; python3-torch alone leaves that pointing at the
reference netlib BLAS (``/usr/lib/x86_64-linux-gnu/blas/``), which makes the
dense layers slow. Install ``libopenblas0-openmp`` (update-alternatives then
picks OpenBLAS automatically; the OpenMP build shares torch's libgomp, so
``torch.set_num_threads`` governs it too). The JSON ``blas`` field names the
libblas actually mapped (first entry). To measure against the reference BLAS
without changing the system: ``LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas``.
The script also sets OMP/OPENBLAS/MKL_NUM_THREADS to ``--threads`` (unless
already set) before importing torch.

Workload (R1)
-------------
* Data: the UCI protein secondary-structure training file. One ``AA label``
  per line (labels ``h e _``), ``#`` comments and blank lines ignored,
  ``<>`` starts a segment (also inside a protein, as a chain break),
  ``end`` or ``<end>`` ends a protein. 91 proteins, 111 segments, 18,105
  residues.
* Folds: k-fold CV by protein. Assignment is deterministic and balanced by
  residue count: proteins sorted by residue count (descending, ties by file
  order), each given to the fold with the fewest residues so far (ties: the
  lowest fold index). Fold f validates on its proteins and trains on the
  others.
* Input: window of 17 centred on each residue; positions outside the
  residue's segment are padding (all-zero one-hot). One-hot over 21 symbols
  (20 standard amino acids in ``ACDEFGHIKLMNPQRSTVWY`` order + 1 unknown).
  Precomputed once as a float32 tensor [N, 21, 17] (channels x window
  positions), as a Keras user would, so the timing covers training only.
* Model: conv1d(21->64, width 5, same padding, swish) -> conv1d(64->64, 5,
  same, swish) -> flatten (64*17) -> dense(128, swish) -> dense(3); softmax
  cross-entropy (``nn.CrossEntropyLoss`` on logits).
* Training: Adam lr 1e-3, batch 8 (``--batch``), 5 epochs (``--epochs``),
  training set reshuffled each epoch (torch.randperm with a seeded
  generator), last partial batch kept. After each epoch a forward pass over
  the held-out fold (in chunks of 4096, no grad) gives validation Q3.
* Timing: ``train_seconds`` is wall time (time.perf_counter) inside the
  training loops, including the per-epoch validation, summed over the folds
  run; model construction and data preparation are outside it.
  ``train_examples`` = sum over folds of epochs * n_train;
  ``examples_per_second`` = train_examples / train_seconds.
* Determinism: ``torch.manual_seed(seed + fold)`` before building each fold's
  model; the shuffle uses its own generator seeded the same way.

Options: ``--data PATH`` ``--batch N`` ``--epochs N`` ``--folds N`` (k, default
3) ``--max-folds M`` (run only the first M folds) ``--threads N``
(torch.set_num_threads, default 1) ``--seed S`` ``--json`` (one JSON line with
framework, torch_version, batch, epochs, folds_run, threads, blas, train_examples,
train_seconds, examples_per_second, mean_val_q3 (last epoch, mean over the
folds run)).

Measured on the 2-core development machine (AMD EPYC, AVX2), one thread,
fold 0 of 3 (12,060 train / 6,045 validation residues), 5 epochs,
train_examples 60,300, torch 1.13.0a0 from Debian; separate runs (noisy shared VM):
  OpenBLAS 0.3.21 (openmp):  batch 8:  4,180 / 4,283 / 4,704 / 5,471 examples/s
                             batch 64: 10,300 / 12,575 / 11,954 / 12,747 examples/s
  reference netlib BLAS:     batch 8:  1,755 / 1,843 / 1,962 examples/s
                             batch 64: 2,558 / 2,587 / 2,691 examples/s
  val Q3 after epoch 5 (identical across runs and BLAS): 0.5927 (batch 8),
  0.6278 (batch 64).
"""

import argparse
import json
import os
import sys
import time


def _pre_threads(argv):
    """--threads, read before torch (and its BLAS) load: a pthread OpenBLAS
    takes its thread count from the environment at load time only."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, _pre_threads(sys.argv[1:]))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

AA_LETTERS = "ACDEFGHIKLMNPQRSTVWY"
AA_INDEX = {c: i for i, c in enumerate(AA_LETTERS)}
N_INPUTS = 21  # 20 standard + unknown
UNKNOWN = 20
LABELS = {"h": 0, "e": 1, "_": 2}
WINDOW = 17


def parse_uci(path):
    """Returns a list of proteins; a protein is a list of segments; a segment
    is a list of (aa_code, label) pairs."""
    proteins = []
    protein = []
    segment = None
    with open(path, "r", encoding="ascii") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line == "<>":
                if segment:
                    protein.append(segment)
                segment = []
                continue
            if line in ("end", "<end>"):
                if segment:
                    protein.append(segment)
                if protein:
                    proteins.append(protein)
                protein = []
                segment = None
                continue
            parts = line.split()
            if len(parts) != 2 or parts[1] not in LABELS:
                raise ValueError(f"{path}:{lineno}: expected 'AA label', got {line!r}")
            if segment is None:
                segment = []
            segment.append((AA_INDEX.get(parts[0].upper(), UNKNOWN), LABELS[parts[1]]))
    if segment:
        protein.append(segment)
    if protein:
        proteins.append(protein)
    return proteins


def assign_folds(proteins, k):
    sizes = [sum(len(s) for s in p) for p in proteins]
    if k < 2 or k > len(proteins):
        raise ValueError(f"folds must be in 2..{len(proteins)}")
    order = sorted(range(len(proteins)), key=lambda i: (-sizes[i], i))
    load = [0] * k
    fold_of = [0] * len(proteins)
    for i in order:
        f = min(range(k), key=lambda j: (load[j], j))
        fold_of[i] = f
        load[f] += sizes[i]
    return fold_of


def encode(proteins):
    """One-hot windows for every residue: X [N, 21, 17] float32, y [N] int64,
    prot [N] protein index."""
    half = WINDOW // 2
    rows_aa = []  # per residue: list of 17 codes, -1 = padding
    ys = []
    prot = []
    for pi, p in enumerate(proteins):
        for seg in p:
            codes = [a for a, _ in seg]
            n = len(codes)
            for r in range(n):
                w = []
                for o in range(-half, half + 1):
                    j = r + o
                    w.append(codes[j] if 0 <= j < n else -1)
                rows_aa.append(w)
                ys.append(seg[r][1])
                prot.append(pi)
    idx = torch.tensor(rows_aa, dtype=torch.long)  # [N, 17]
    n = idx.shape[0]
    x = torch.zeros(n, N_INPUTS + 1, WINDOW, dtype=torch.float32)
    # scatter into channel idx (padding -> extra channel N_INPUTS, dropped)
    x.scatter_(1, torch.where(idx < 0, torch.full_like(idx, N_INPUTS), idx).unsqueeze(1), 1.0)
    x = x[:, :N_INPUTS, :].contiguous()
    return x, torch.tensor(ys, dtype=torch.long), torch.tensor(prot, dtype=torch.long)


def blas_library():
    """The BLAS torch's convolutions and linear layers run on. A PyPI wheel
    links MKL (and oneDNN) into libtorch_cpu itself, so its build
    configuration says so; otherwise the BLAS/LAPACK shared objects mapped
    into this process, libblas first (the one whose symbols torch's BLAS
    calls bind to; Debian's torch links the generic libblas.so.3 /
    liblapack.so.3, whose providers update-alternatives picks; the reference
    netlib libblas lives in .../blas/, OpenBLAS in .../openblas-*/)."""
    config = torch.__config__.show()
    if "BLAS_INFO=mkl" in config:
        onednn = "oneDNN" if "USE_MKLDNN=ON" in config and torch.backends.mkldnn.is_available() else "no oneDNN"
        return f"MKL linked into libtorch ({onednn})"
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                base = os.path.basename(path)
                if any(k in base for k in ("libblas", "openblas", "libmkl", "blis", "liblapack")):
                    if path not in found:
                        found.append(path)
    except OSError:
        pass
    found.sort(key=lambda p: 0 if os.path.basename(p).startswith("libblas") else 1)
    return ", ".join(found) if found else "unknown"


class R1Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(N_INPUTS, 64, 5, padding=2)
        self.c2 = nn.Conv1d(64, 64, 5, padding=2)
        self.d1 = nn.Linear(64 * WINDOW, 128)
        self.d2 = nn.Linear(128, 3)

    def forward(self, x):
        x = F.silu(self.c1(x))
        x = F.silu(self.c2(x))
        x = F.silu(self.d1(x.flatten(1)))
        return self.d2(x)


def evaluate(model, x, y):
    model.eval()
    correct = 0
    with torch.no_grad():
        for s in range(0, x.shape[0], 4096):
            pred = model(x[s:s + 4096]).argmax(1)
            correct += (pred == y[s:s + 4096]).sum().item()
    model.train()
    return correct / max(1, x.shape[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--max-folds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--device", default="cpu",
                    help="cpu or cuda: on cuda the folds go to the GPU once, and each batch is a "
                         "separate launch, as in the user's Keras setup")
    a = ap.parse_args(argv)
    dev = torch.device(a.device)

    torch.set_num_threads(a.threads)
    proteins = parse_uci(a.data)
    fold_of = assign_folds(proteins, a.folds)
    x, y, prot = encode(proteins)
    fold_t = torch.tensor(fold_of, dtype=torch.long)[prot]
    n_run = a.folds if a.max_folds is None else max(1, min(a.folds, a.max_folds))
    if not a.json:
        print(f"torch {torch.__version__} ({sys.executable}), threads {torch.get_num_threads()}, "
              f"BLAS {blas_library()}")
        print(f"data: {len(proteins)} proteins, {x.shape[0]} residues; "
              f"{a.folds} folds, running {n_run}; batch {a.batch}, epochs {a.epochs}")

    train_examples = 0
    train_seconds = 0.0
    q3s = []
    for fold in range(n_run):
        tr = fold_t != fold
        xtr, ytr = x[tr].contiguous().to(dev), y[tr].contiguous().to(dev)
        xva, yva = x[~tr].contiguous().to(dev), y[~tr].contiguous().to(dev)
        ntr = xtr.shape[0]
        torch.manual_seed(a.seed + fold)
        gen = torch.Generator().manual_seed(a.seed + fold)
        model = R1Net().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        model.train()
        q3 = 0.0
        t0 = time.perf_counter()
        for ep in range(a.epochs):
            te = time.perf_counter()
            perm = torch.randperm(ntr, generator=gen).to(dev)
            total = 0.0
            for s in range(0, ntr, a.batch):
                bi = perm[s:s + a.batch]
                xb, yb = xtr[bi], ytr[bi]
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
                # On the GPU .item() would add a host round trip per batch.
                total += (loss.item() if dev.type == "cpu" else loss.detach()) * bi.shape[0]
            q3 = evaluate(model, xva, yva)
            total = float(total)
            if not a.json:
                print(f"fold {fold} epoch {ep + 1}: loss {total / ntr:.4f} val Q3 {q3:.4f} "
                      f"({time.perf_counter() - te:.2f} s)")
        if dev.type == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        train_seconds += dt
        train_examples += a.epochs * ntr
        q3s.append(q3)
        if not a.json:
            print(f"fold {fold}: n_train {ntr}, n_valid {xva.shape[0]}, {dt:.2f} s, "
                  f"{a.epochs * ntr / dt:.1f} examples/s, final val Q3 {q3:.4f}")

    res = {
        "framework": "pytorch" if dev.type == "cpu" else "pytorch-cuda",
        "device": str(dev),
        "torch_version": torch.__version__,
        "batch": a.batch,
        "epochs": a.epochs,
        "folds_run": n_run,
        "threads": torch.get_num_threads(),
        "blas": blas_library(),
        "train_examples": train_examples,
        "train_seconds": round(train_seconds, 4),
        "examples_per_second": round(train_examples / train_seconds, 2) if train_seconds > 0 else 0.0,
        "mean_val_q3": round(sum(q3s) / len(q3s), 4),
    }
    if a.json:
        print(json.dumps(res))
    else:
        print(f"total: {train_examples} examples in {train_seconds:.2f} s = "
              f"{res['examples_per_second']:.1f} examples/s; mean val Q3 {res['mean_val_q3']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
