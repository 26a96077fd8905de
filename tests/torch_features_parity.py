#!/usr/bin/env python3
"""PyTorch parity of foldsweep's models with feature columns (data.features; docs/models.md, issue #31).

usage: torch_features_parity.py FOLDSWEEP_BINARY

Writes a synthetic FASTA set with 12 feature columns per residue
(`foldsweep synth --features 12 --features-format npy`), trains window
models (a conv first layer and a dense one, with the one-hot codes, and a
conv reading the columns alone) and a chain model (dilated conv, batch norm,
a residual add) on them, exports each, and checks that
python/foldsweep_torch.py given each protein's columns (numpy.load of its
.npy) gives the probabilities `foldsweep predict --format csv` prints on
every residue: |torch - csv| <= 1e-5 + 5e-7.

It must be able to fail: the first layer's feature weights zeroed, or two
feature columns swapped, must NOT match; predict without the columns, or
with columns of another width, must raise ValueError.

Exit status: 0 passed, 1 failed, 77 skipped (no PyTorch).
Set FS_KEEP_TMP=1 to keep the work folder.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_common as tc  # noqa: E402  (re-executes under /usr/bin/python3 when this python3 lacks torch)

ft = tc.ft
torch = tc.torch
D = 12

WINDOW_CASES = [
    ("feat-conv", "one-hot + 12 columns, conv first", "[onehot, {npy: syn.features}]",
     "[{conv1d: {filters: 8, width: 5, activation: swish}}, {dense: {units: 10, activation: relu}}]"),
    ("feat-dense", "one-hot + 12 columns, dense first", "[onehot, {npy: syn.features}]",
     "[{dense: {units: 12, activation: tanh}}, batchnorm]"),
    ("feat-only", "the 12 columns alone, conv first", "[{npy: syn.features}]",
     "[{conv1d: {filters: 6, width: 3, activation: elu}}, {conv1d: {filters: 6, width: 3}}]"),
]
CHAIN_CASE = ("feat-chain", "chain: one-hot + 12 columns, dilated conv, bn, add", "[onehot, {npy: syn.features}]",
              "[{conv1d: {filters: 8, width: 5, activation: swish}},"
              " {conv1d: {filters: 8, width: 3, dilation: 2, activation: relu}}, batchnorm, {add: {layers: 2}},"
              " {dense: {units: 8, activation: swish}}]")


def sweep(features, layers, window):
    batch = "batch_residues: 600" if window == "chain" else "batch_size: 16"
    return f"""data:
  sequences: syn.sequences.fasta
  labels: syn.labels.fasta
  mask: syn.mask.fasta
  features: {features}
  window: {window}
  folds: {tc.FOLDS}
model:
  bn_momentum: 0.9
  layers:
    - {layers}
training:
  epochs: 2
  {batch}
  learning_rate: 0.01
run:
  keep_models: all
"""


def columns(tmp, proteins):
    import numpy as np

    return {name: np.load(os.path.join(tmp, "syn.features", name + ".npy")) for name, _ in proteins}


def first_layer_weight(m):
    for x in m.modules():
        if isinstance(x, (torch.nn.Conv1d, torch.nn.Linear)):
            return x.weight
    raise ValueError("no first layer")


def perturbations(models, onehot, window):
    c0 = 21 if onehot else 0

    def cols(w):  # the first layer's weights of feature columns (as its input channels)
        if w.dim() == 3:
            return w[:, c0:, :]
        return w.view(w.shape[0], -1, window)[:, c0:, :]  # Linear after Flatten: channel-major

    def zero(m):
        cols(first_layer_weight(m)).zero_()

    def swap(m):
        c = cols(first_layer_weight(m))
        c[:, [0, 1], :] = c[:, [1, 0], :].clone()

    return tc.perturbed(models, [("feature weights zeroed", zero), ("feature columns 0 and 1 swapped", swap)])


def refusals(models, seq):
    import numpy as np

    for what, f in [("no columns", None), ("7 columns", np.zeros((len(seq), 7), np.float32)),
                    ("rows of another protein", np.zeros((len(seq) + 1, D), np.float32))]:
        try:
            ft.predict(models, seq, features=f)
        except ValueError as e:
            print(f"  refused ({what}): {str(e)[:120]}")
            continue
        tc.fail(f"predict with {what}: no ValueError")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    fs = sys.argv[1]
    tmp, cleanup = tc.work_folder("fs_torch_features_")
    torch.set_num_threads(1)
    tc.must([fs, "synth", "-o", os.path.join(tmp, "syn"), "--format", "fasta", "--proteins", "40", "--seed", "3",
             "--features", str(D), "--features-format", "npy"])
    proteins = ft.read_fasta(os.path.join(tmp, "syn.sequences.fasta"))
    feats = columns(tmp, proteins)
    csv_path = os.path.join(tmp, "pred.csv")
    for case in WINDOW_CASES + [CHAIN_CASE]:
        name, desc, features, layers = case
        window = "chain" if case is CHAIN_CASE else tc.WINDOW
        for _, _, _, exp in tc.trained_cases(fs, tmp, name, [case], sweep(features, layers, window)):
            models = ft.load_ensemble(exp)
            if models[0].features != D or models[0].onehot != ("onehot" in features):
                tc.fail(f"{name}: the loader reads onehot={models[0].onehot} features={models[0].features}")
            tc.must([fs, "predict", exp, os.path.join(tmp, "syn.sequences.fasta"), "--format", "csv", "-o", csv_path])
            rows = tc.read_csv(csv_path)
            worst, checked = tc.compare(name, models, proteins, rows, features=feats)
            ok = worst <= tc.TOL and checked > 1000
            print(f"case {name} ({desc}): {checked} residues, max |torch - foldsweep| = {worst:.2e} "
                  f"{'ok' if ok else 'FAIL'}", flush=True)
            if not ok:
                tc.fail(f"case {name}: max |torch - foldsweep| = {worst:.3g} over {checked} residues")
            if window != "chain":
                tc.check_perturbed(name, perturbations(models, "onehot" in features, window), proteins, rows,
                                   features=feats)
            refusals(models, proteins[0][1])
    cleanup()
    if tc.failures:
        print(f"torch_features_parity: {len(tc.failures)} failure(s)")
        return 1
    print("torch_features_parity: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
