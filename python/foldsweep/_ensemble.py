"""foldsweep.load and Ensemble: trained models predicting through the C
forward pass (`foldsweep predict`'s numbers)."""

import ctypes
import os

from . import _native
from ._native import lib

LABELS = {3: "HEC", 8: "HGIEBTSC"}


def load(source, rank=1, trial=None, fold=None, features=None):
    """An Ensemble from a run folder (the trial at leaderboard rank `rank`,
    or `trial`, its fold models together), an exported folder, or one
    .safetensors file. fold: that fold's model alone. features: models that
    read feature columns, their sources as `predict --features` takes them
    (default: those they were trained with)."""
    return Ensemble(source, rank=rank, trial=trial, fold=fold, features=features)


def _fasta(sequences):
    """(FASTA text, ids, how to return) from a str, a list or a dict."""
    if isinstance(sequences, str):
        items, kind = [("seq1", sequences)], "one"
    elif isinstance(sequences, dict):
        items, kind = list(sequences.items()), "dict"
    else:
        items, kind = [(f"seq{i + 1}", s) for i, s in enumerate(sequences)], "list"
    lines = []
    for i, (name, seq) in enumerate(items):
        if not isinstance(seq, str):
            raise TypeError(f"sequence {name!r}: expected a str of amino-acid letters, got {type(seq).__name__}")
        if ">" in seq:
            raise ValueError(f"sequence {name!r}: '>' found: one protein's sequence expected, not FASTA text")
        # The C reader's id ends at the first space: a key it cannot hold
        # whole is numbered there (the caller's keys are kept on this side).
        safe = isinstance(name, str) and name and not any(c.isspace() for c in name)
        lines.append(f">{name if safe else f'p{i + 1}'}\n{seq}\n")
    return "".join(lines).encode(), [k for k, _ in items], kind


class Ensemble:
    """A trial's fold models (or one model) loaded by the C library."""

    def __init__(self, source, rank=1, trial=None, fold=None, features=None):
        o = _native.ModelOptions()
        o.trial = None if trial is None else trial.encode()
        o.rank = int(rank or 1)
        o.fold = -1 if fold is None else int(fold)
        o.features = None if features is None else features.encode()
        self._m = ctypes.c_void_p()  # set before the call: close() frees it whatever happens after
        _native.call(lib.foldsweep_model_open, os.fsencode(os.fspath(source)), ctypes.byref(o),
                     ctypes.byref(self._m), what=f"loading {source}")
        handle = self._m
        self.source = os.fspath(source)
        self.classes = lib.foldsweep_model_classes(handle)
        self.labels = LABELS[self.classes]
        self.files = [os.fsdecode(lib.foldsweep_model_file(handle, i)) for i in range(lib.foldsweep_model_count(handle))]
        self.trial = (lib.foldsweep_model_trial(handle) or b"").decode()
        # How the command line names the same models (evaluate): a run
        # folder's trial by its id, which a resumed run cannot move.
        run_folder = os.path.isdir(self.source) and os.path.exists(os.path.join(self.source, "journal.jsonl"))
        self._args = [self.source] + (["--trial", self.trial] if run_folder and self.trial else [])
        self._args += (["--fold", str(fold)] if fold is not None else []) + \
            (["--features", features] if features is not None else [])

    def close(self):
        """Releases the models (also when the Ensemble is collected). Not
        while another thread predicts with it."""
        m = getattr(self, "_m", None)
        if m is not None and m.value:
            lib.foldsweep_model_close(m)
        self._m = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self):
        return f"foldsweep.Ensemble({self.source!r}, trial={self.trial[:16]!r}, models={len(self.files)})"

    def predict(self, sequences, threads=None, agreement=False):
        """Per-residue probabilities (numpy float32 [length, classes], in
        `labels` order) of a sequence; a list of them for a list, a dict for
        a dict. Letters outside the 20 amino acids read as X, as in
        `foldsweep predict`. agreement: also each residue's fraction of
        models that agree with the ensemble, as (probs, agreement) pairs."""
        import numpy as np
        if self._m is None:
            raise ValueError("this Ensemble is closed")
        text, ids, kind = _fasta(sequences)
        if not ids:
            return {} if kind == "dict" else []
        pred = ctypes.POINTER(_native.Prediction)()
        try:
            _native.call(lib.foldsweep_predict, self._m, text, len(text), int(threads or 0), ctypes.byref(pred),
                         what="predict")
            p = pred.contents
            n_res, classes, n_prot = p.n_residues, p.classes, p.n_proteins
            off = np.ctypeslib.as_array(p.offsets, shape=(p.n_proteins + 1,)).copy()
            probs = np.ctypeslib.as_array(p.probs, shape=(n_res * classes,)).copy().reshape(n_res, classes)
            agree = np.ctypeslib.as_array(p.agreement, shape=(n_res,)).copy()
        finally:
            if pred:
                lib.foldsweep_prediction_free(pred)  # p is freed with it
        if n_prot != len(ids):
            raise _native.FoldsweepError(f"predict: {len(ids)} sequences given, {n_prot} proteins read")
        out = []
        for i in range(len(ids)):
            a, b = off[i], off[i + 1]
            out.append((probs[a:b], agree[a:b]) if agreement else probs[a:b])
        if kind == "one":
            return out[0]
        return dict(zip(ids, out)) if kind == "dict" else out

    def predict_states(self, sequences, threads=None):
        """The predicted states as strings ("HHHEEC..."), shaped as predict's
        result."""
        res = self.predict(sequences, threads=threads)
        states = lambda a: "".join(self.labels[k] for k in a.argmax(axis=1))  # noqa: E731
        if isinstance(res, dict):
            return {k: states(v) for k, v in res.items()}
        return [states(v) for v in res] if isinstance(res, list) else states(res)

    def evaluate(self, data, exclude_overlap=False, allow_overlap=False, max_identity=None, seed=None,
                 resamples=None, threads=None, input_format=None):
        """Scores on a held-out test set (a file of labelled proteins, or a
        list of them), as `foldsweep evaluate ... --format json` reports
        them: a dict with q3 and its bootstrap q3_ci95, sov, per-class
        scores, the confusion matrix, per-protein Q3. The leakage guard
        refuses test proteins the models trained on unless exclude_overlap
        (leave them out) or allow_overlap; a run folder's journal records
        the look at test data, as the command does."""
        files = [os.fspath(d) for d in (data if isinstance(data, (list, tuple)) else [data])]
        opts = (["--exclude-overlap"] if exclude_overlap else []) + (["--allow-overlap"] if allow_overlap else [])
        for flag, v in (("--max-identity", max_identity), ("--seed", seed), ("--resamples", resamples),
                        ("--threads", threads), ("--input-format", input_format)):
            opts += [flag, str(v)] if v is not None else []
        out = _native.main(["evaluate"] + self._args + files + opts + ["--format", "json"])[1]
        import json
        return json.loads(out)

    def to_torch(self):
        """The models in PyTorch (foldsweep_torch's loader): a list of
        nn.Module in eval mode, one per model file."""
        import foldsweep_torch
        return foldsweep_torch.load_ensemble(self.files)

    def to_keras(self):
        """The models as tf.keras Models, one per model file, each computing
        its logits channels last (foldsweep.keras: [n, W, C] windows or
        [batch, length, C] chains; foldsweep.keras.model_input gives them);
        batch norm in inference mode. The mean of their softmax is predict's.
        Needs TensorFlow and PyTorch (the model files are read once, by
        foldsweep_torch)."""
        from . import keras as fk
        return [fk.from_torch(m) for m in self.to_torch()]

    def to_onnx(self, path, opset=17):
        """The ensemble as one ONNX graph at path (through PyTorch's
        exporter): input "x", a window model's [n, C, W] windows or a chain
        model's [1, C, length] chain (foldsweep_torch.model_input gives
        both), output "probs", the mean probabilities predict returns.
        Returns path."""
        import foldsweep_torch
        return foldsweep_torch.export_onnx(self.to_torch(), path, opset=opset)
