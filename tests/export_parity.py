"""The exports to other frameworks against `foldsweep predict`: ONNX
(foldsweep_torch.export_onnx, the package's Ensemble.to_onnx) run by ONNX
Runtime, or Keras (foldsweep.keras.from_torch, Ensemble.to_keras) run by
TensorFlow.

    python3 tests/export_parity.py onnx BUILD/foldsweep
    python3 tests/export_parity.py keras BUILD/foldsweep

Trains the layers the PyTorch parity tests cover (chain models: convolutions
with dilation, batch and layer norm, residual adds, highway, BiGRU and GRU,
BiLSTM and LSTM, attention; a window model with a residual add; an 8-state
model; window and chain models reading feature columns), exports each fold
ensemble (ONNX: one graph of the ensemble's mean; Keras: one model a fold,
their softmax averaged here), and compares the probabilities with predict's
on every residue of synthetic proteins (one-residue and odd-letter ones
too) within 1e-5 (+ the CSV's rounding). A perturbed export must fail the
comparison. Exit 77 (skip) where PyTorch or the framework is missing
(scripts/test installs onnxruntime from PyPI into .deps/onnx, and
tensorflow-cpu into the virtual environment .deps/tf, which this script
runs itself under when its python3 lacks TensorFlow).
"""

import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FORMAT = sys.argv[1] if len(sys.argv) > 1 else ""
if FORMAT == "keras":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        venv = os.path.join(HERE, "..", ".deps", "tf", "bin", "python")
        if not os.environ.get("FS_EXPORT_PARITY_REEXEC") and os.access(venv, os.X_OK):
            os.environ["FS_EXPORT_PARITY_REEXEC"] = "1"
            os.execv(venv, [venv] + sys.argv)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import torch_common as tc  # noqa: E402  (re-executes under /usr/bin/python3 when this python3 lacks torch)

ft, torch = tc.ft, tc.torch
TOL = tc.TOL


def import_ort():
    try:
        import onnxruntime
        return onnxruntime, None
    except ImportError:
        pass
    sys.path.insert(0, os.path.join(HERE, "..", ".deps", "onnx"))
    try:
        import onnxruntime
        return onnxruntime, None
    except ImportError as e:
        return None, f"{e} (scripts/test installs it: pip install --target .deps/onnx onnxruntime)"


def read_probs(path, classes):
    """{id: [[p, ...] per residue]} from predict's CSV (the 3- or 8-state columns)."""
    out = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        first = head.index("p[q8_H]") if classes == 8 else head.index("p[q3_H]")
        for row in r:
            out.setdefault(row[0], []).append([float(v) for v in row[first:first + classes]])
    return out


def import_tf():
    try:
        import importlib.util
        import tensorflow  # noqa: F401
        # foldsweep/keras.py alone: the package's __init__ would load libfoldsweep.so, not needed here.
        spec = importlib.util.spec_from_file_location("foldsweep_keras",
                                                      os.path.join(HERE, "..", "python", "foldsweep", "keras.py"))
        fk = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fk)
        return fk, None
    except ImportError as e:
        return None, f"{e} (scripts/test installs tensorflow-cpu into .deps/tf)"


def keras_probs(fk, models, proteins, features=None):
    """{name: numpy [len, classes]}: each fold's Keras model, softmax, mean."""
    import numpy as np
    import tensorflow as tf
    ks = [fk.from_torch(m) for m in models]
    out = {}
    for name, seq in proteins:
        x = fk.model_input(models[0], seq, features[name] if features else None)
        if x.shape[0] == 0 or x.shape[1] == 0:
            continue
        acc = None
        for k in ks:
            lo = k(x.astype(np.float32), training=False)
            lo = lo[0] if getattr(models[0], "chain", False) else lo
            p = tf.nn.softmax(lo, axis=-1).numpy()
            acc = p if acc is None else acc + p
        out[name] = acc / len(ks)
    return out


def onnx_probs(ort, path, model, proteins, features=None):
    """{name: numpy [len, classes]} from ONNX Runtime, one protein a call."""
    import numpy as np
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    out = {}
    for name, seq in proteins:
        x = ft.model_input(model, seq, features[name] if features else None).numpy()
        if x.shape[-1] == 0 or x.shape[0] == 0:
            continue
        p = sess.run(None, {"x": x.astype(np.float32)})[0]
        out[name] = p[0].T if getattr(model, "chain", False) else p
    return out


def compare(fw, label, models, proteins, csv_path, tmp, features=None, classes=3):
    """Max |export - predict| over every residue of proteins."""
    import numpy as np
    if FORMAT == "onnx":
        path = ft.export_onnx(models, os.path.join(tmp, f"{label}.onnx"))
        got = onnx_probs(fw, path, models[0], proteins, features)
    else:
        got = keras_probs(fw, models, proteins, features)
    want = read_probs(csv_path, classes)
    worst, n = 0.0, 0
    for name, seq in proteins:
        if name not in got:
            continue
        w = np.array(want.get(name, []))
        if w.shape != got[name].shape:
            tc.fail(f"{label}: {name}: ONNX {got[name].shape}, predict {w.shape}")
            continue
        worst = max(worst, float(np.abs(got[name] - w).max()))
        n += len(seq)
    return worst, n


def check(fw, label, models, proteins, csv_path, tmp, features=None, classes=3):
    worst, n = compare(fw, label, models, proteins, csv_path, tmp, features, classes)
    ok = worst <= TOL and n > 0
    print(f"case {label:16s} {n:5d} residues x {len(models)} folds: max |{FORMAT} - foldsweep| = {worst:.2e} "
          f"{'ok' if ok else 'FAIL'}", flush=True)
    if not ok:
        tc.fail(f"case {label}: max |{FORMAT} - foldsweep predict| = {worst:.3g} over {n} residues")


def main():
    if len(sys.argv) != 3 or FORMAT not in ("onnx", "keras"):
        print(__doc__)
        return 2
    fs = os.path.abspath(sys.argv[2])
    me = f"{FORMAT}_parity"
    if torch is None:
        print(f"{me}: SKIPPED: {tc.NO_TORCH}")
        return 77
    ort, why = import_ort() if FORMAT == "onnx" else import_tf()
    if ort is None:
        print(f"{me}: SKIPPED: {'ONNX Runtime' if FORMAT == 'onnx' else 'TensorFlow'} is not importable: {why}")
        return 77
    import warnings
    warnings.filterwarnings("ignore")  # the exporter's notes on GRU/LSTM batch sizes
    import torch_chain_parity as tcp
    import torch_features_parity as tfp
    import torch_parity as tp
    torch.set_num_threads(1)
    t0 = time.time()
    tmp, cleanup = tc.work_folder(f"fs-{FORMAT}-")
    ver = ort.__version__ if FORMAT == "onnx" else __import__("tensorflow").__version__
    print(f"torch {torch.__version__}, {'onnxruntime' if FORMAT == 'onnx' else 'tensorflow'} {ver}, {fs}")
    syn = os.path.join(tmp, "syn")
    tc.must([fs, "synth", "-o", syn, "--proteins", "10", "--seed", "99", "--format", "fasta",
             "--features", str(tfp.D), "--features-format", "npy"])
    proteins = ft.read_fasta(syn + ".sequences.fasta")
    extra = [("one", "M"), ("odd", "ACDBZUOJXacdefghiklmnpqrstvwyMKV")]
    fasta = os.path.join(tmp, "in.fasta")
    tc.write_fasta(fasta, proteins + extra)
    csv_path = os.path.join(tmp, "pred.csv")

    # Chain models of every layer kind, and a window model with a residual add.
    for tag, cases, window in (("chain", tcp.CHAIN_CASES, "chain"), ("window", [tcp.WINDOW_CASE], tc.WINDOW)):
        for (name, _desc, _), _tid, _run, exp in tc.trained_cases(fs, tmp, tag, cases, tc.sweep_text(cases, window)):
            models = ft.load_ensemble(exp)
            tc.must([fs, "predict", exp, fasta, "--format", "csv", "-o", csv_path])
            check(ort, name, models, proteins + extra, csv_path, tmp)
            if name == "chain-attention":
                # One distance's bias (a shift of all of them would leave the softmax as it is).
                def edit(m):
                    next(x for x in m.modules() if isinstance(x, ft.Attention)).rel.weight[0, 0] += 0.5
                bad = tc.perturbed(models, [("an attention bias", edit)])[0][1]
                worst, _ = compare(ort, "perturbed", bad, proteins, csv_path, tmp)
                print(f"  perturbed export (an attention bias): max diff {worst:.2e} "
                      f"{'detected' if worst > TOL else 'NOT DETECTED'}")
                if worst <= TOL:
                    tc.fail(f"a perturbed attention model's {FORMAT} export still matches foldsweep")

    # An 8-state model (data.classes: 8), as torch_parity trains it.
    rec = os.path.join(tmp, "r8.txt")
    tp.write_records8(rec)
    y8 = os.path.join(tmp, "c8.yaml")
    open(y8, "w").write(tc.sweep_text([("c8", "", "[{conv1d: {filters: 8, width: 5, activation: swish}}, batchnorm,"
                                        " {dense: {units: 12, activation: relu}}]")])
                        .replace("  synth: {proteins: 30, seed: 7}\n", f"  inputs: [{rec}]\n  classes: 8\n"))
    tc.must([fs, "run", y8, "--out", os.path.join(tmp, "run-c8"), "--threads", "2", "--quiet"])
    tc.must([fs, "export", os.path.join(tmp, "run-c8"), "--rank", "1", "-o", os.path.join(tmp, "exp-c8")])
    tc.must([fs, "predict", os.path.join(tmp, "exp-c8"), fasta, "--format", "csv", "-o", csv_path])
    check(ort, "8-state", ft.load_ensemble(os.path.join(tmp, "exp-c8")), proteins + extra, csv_path, tmp, classes=8)

    # Feature columns: a window model and a chain model reading one-hot + 12 .npy columns.
    feats = tfp.columns(tmp, proteins)
    for case in (tfp.WINDOW_CASES[0], tfp.CHAIN_CASE):
        name, _desc, features, layers = case
        window = "chain" if case is tfp.CHAIN_CASE else tc.WINDOW
        for _, _, _, exp in tc.trained_cases(fs, tmp, name, [case], tfp.sweep(features, layers, window)):
            tc.must([fs, "predict", exp, syn + ".sequences.fasta", "--format", "csv", "-o", csv_path])
            check(ort, name, ft.load_ensemble(exp), proteins, csv_path, tmp, features=feats)

    print(f"{me}: {time.time() - t0:.1f} s, tolerance {TOL:.3g}: {'FAILED' if tc.failures else 'passed'}")
    cleanup()
    return 1 if tc.failures else 0


if __name__ == "__main__":
    sys.exit(main())
