#!/usr/bin/env python3
"""PyTorch parity of foldsweep's chain models and residual adds (docs/models.md, issue #28).

usage: torch_chain_parity.py FOLDSWEEP_BINARY [DATA_DIR]

Trains a small chain sweep with the binary (synthetic data, 2 folds, 3
epochs) and a window model with a residual add, exports them, and checks
that python/foldsweep_torch.py gives the probabilities `foldsweep predict
--format csv` prints on every residue: |torch - csv| <= 1e-5 + 5e-7 (the
CSV holds %.6f). The chain cases cover dilated convolutions, batch norm, layer norm, a
dilated highway, dropout, a residual add without a projection (same widths)
and one with a projection (12 from 8 channels), per-residue dense layers, a
dense first layer and a kernel wider than a chain, GRUs and LSTMs (#46): a
bidirectional one and a forward-only one stacked, and attention layers
(#46) with and without a GRU between them. Inputs: synthetic
proteins, proteins of 1 and 3 residues, and the 115 TS115 proteins of
DATA_DIR/ts115 (default: the source tree's ../shared/data; that part is
skipped, with a message, when the file is absent).

It must be able to fail: a dilation set to 1, a flipped dilated kernel, an
add reading the wrong module, a dropped or perturbed projection, a highway
without its dilation, a perturbed batch norm, a BiGRU with its directions or
its r and z gates swapped, a perturbed recurrent bias, an attention layer's
queries and keys swapped, its position biases flipped, its heads' values
exchanged or its layer norm perturbed must NOT match; a chain
file read as a window model, an ensemble mixing chain and window models,
and archs foldsweep refuses must raise ValueError.

Exit status: 0 passed, 1 failed, 77 skipped (no PyTorch).
Set FS_KEEP_TMP=1 to keep the work folder.
"""

import copy
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_common as tc  # noqa: E402  (re-executes under /usr/bin/python3 when this python3 lacks torch)

ft = tc.ft
torch = tc.torch
TOL = tc.TOL
FOLDS = tc.FOLDS
WINDOW = tc.WINDOW

# (name, description, layers); one chain sweep, the alternatives in order.
CHAIN_CASES = [
    (
        "chain-a",
        "dilated convs, bn, add (same width), dilated highway, dropout, add (projection 8->12), dense, ln, bn",
        "[{conv1d: {filters: 8, width: 5, activation: swish}},"
        " {conv1d: {filters: 8, width: 3, dilation: 2, activation: relu}}, batchnorm,"
        " {conv1d: {filters: 8, width: 3, dilation: 4, activation: elu}}, {add: {layers: 3}},"
        " {highway: {width: 3, dilation: 3, activation: tanh}}, {dropout: {rate: 0.1}},"
        " {conv1d: {filters: 12, width: 5, dilation: 2, activation: leaky_relu, leaky_slope: 0.2}},"
        " {add: {layers: 2}}, {dense: {units: 10, activation: swish}}, layernorm, batchnorm]",
    ),
    (
        "chain-b",
        "dense first, wide dilated conv, add (projection 6->10) over conv+bn, dense",
        "[{dense: {units: 6, activation: tanh}}, {conv1d: {filters: 6, width: 3, activation: relu}},"
        " {conv1d: {filters: 10, width: 9, dilation: 3, activation: swish}}, batchnorm, {add: {layers: 2}},"
        " {dense: {units: 8, activation: relu}}]",
    ),
    (
        "chain-gru",
        "conv, BiGRU(6), GRU(5) forward only, ln, dense (#46)",
        "[{conv1d: {filters: 8, width: 5, activation: swish}}, {gru: {units: 6}},"
        " {gru: {units: 5, bidirectional: false}}, layernorm, {dense: {units: 8, activation: relu}}]",
    ),
    (
        "chain-lstm",
        "conv, BiLSTM(6), LSTM(4) forward only, dense (#46)",
        "[{conv1d: {filters: 8, width: 5, activation: swish}}, {lstm: {units: 6}},"
        " {lstm: {units: 4, bidirectional: false}}, {dense: {units: 8, activation: relu}}]",
    ),
    (
        "chain-attention",
        "conv, attention(2 x 4, max_distance 3, dropout), BiGRU(4), attention(1 x 6), dense (#46)",
        "[{conv1d: {filters: 8, width: 5, activation: swish}},"
        " {attention: {heads: 2, key_dim: 4, max_distance: 3, dropout: 0.1}}, {gru: {units: 4}},"
        " {attention: {heads: 1, key_dim: 6}}, {dense: {units: 8, activation: relu}}]",
    ),
]

# A window model with a residual add (a Residual, not a plain Sequential).
WINDOW_CASE = (
    "window-add",
    "window model: conv, conv, conv (8->6), add (projection), dense",
    "[{conv1d: {filters: 8, width: 5, activation: relu}}, {conv1d: {filters: 8, width: 3, activation: swish}},"
    " {conv1d: {filters: 6, width: 3, activation: tanh}}, {add: {layers: 2}}, {dense: {units: 8, activation: relu}}]",
)


def ts115_proteins(data_dir):
    """[(id, sequence)] of TS115 (NetSurfP-2.0 CSV: the `input` column's tokens), or None if absent."""
    path = os.path.join(data_dir, "ts115", "TS115_HHblits.csv")
    if not os.path.isfile(path):
        return None, path
    out = []
    with open(path) as f:
        head = [h.strip() for h in f.readline().split(",")]
        col = head.index("input")
        for k, line in enumerate(f, 1):
            if line.strip():
                out.append((f"ts115_{k:03d}", "".join(line.split(",")[col].split())))
    return out, path


def perturbations(models):
    """(what, perturbed copy of the chain-a ensemble); each must NOT match foldsweep."""
    def of(m, cls):
        return [x for x in m if isinstance(x, cls)]

    def dilated(m):
        return [c for c in of(m, torch.nn.Conv1d) if c.dilation[0] > 1]

    def undilate(m):
        dilated(m)[0].dilation = (1,)

    def highway_undilate(m):
        h = of(m, ft.Highway)[0]
        h.h.dilation = h.t.dilation = (1,)

    def wrong_source(m):
        a = of(m, ft.Add)[0]
        a.source -= 1  # the conv before its activation

    def no_skip(m):
        a = of(m, ft.Add)[0]  # the add without a projection: drop its skip path
        a.forward = lambda x, skip: x

    def no_proj(m):
        a = [x for x in of(m, ft.Add) if x.proj is not None][0]
        a.proj.weight.zero_()

    return tc.perturbed(models, [
        ("dilated conv with dilation 1", undilate),
        ("dilated conv kernel flipped", lambda m: dilated(m)[0].weight.copy_(dilated(m)[0].weight.flip(2))),
        ("highway without its dilation", highway_undilate),
        ("add reading the module before its source", wrong_source),
        ("add without its skip path", no_skip),
        ("projection zeroed", no_proj),
        ("projection weight [0, 0] + 0.5",
         lambda m: [x for x in of(m, ft.Add) if x.proj is not None][0].proj.weight[0, 0, 0].add_(0.5)),
        ("batchnorm running_var[0] x 4", lambda m: of(m, torch.nn.BatchNorm1d)[0].running_var[0].mul_(4)),
        ("per-residue dense bias[0] + 0.5",
         lambda m: [c for c in of(m, torch.nn.Conv1d) if c.kernel_size[0] == 1][-2].bias[0].add_(0.5)),
    ])


def rnn_perturbations(models, cls):
    """(what, perturbed copy of the chain-gru or chain-lstm ensemble, cls
    ft.GRU or ft.LSTM); each must NOT match foldsweep."""
    what = cls.cell

    def grus(m):
        return [x.rnn for x in m if isinstance(x, cls)]

    def swap_directions(m):
        g = grus(m)[0]
        for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
            a, b = getattr(g, name), getattr(g, name + "_reverse")
            t = a.clone()
            a.copy_(b)
            b.copy_(t)

    def swap_gates(m):  # the first two gates (r and z, i and f) exchanged in the input weights
        g = grus(m)[0]
        w = g.weight_ih_l0
        u = g.hidden_size
        t = w[:u].clone()
        w[:u] = w[u:2 * u]
        w[u:2 * u] = t

    def second_gate_bias(m):  # z's, or the forget gate's: the state's or the cell's carry
        g = grus(m)[1]
        g.bias_hh_l0[g.hidden_size].add_(0.5)

    return tc.perturbed(models, [
        (f"Bi{what}'s directions swapped", swap_directions),
        (f"Bi{what}'s first two gates' input weights swapped", swap_gates),
        (f"{what}'s recurrent bias[0] + 0.5", lambda m: grus(m)[1].bias_hh_l0[0].add_(0.5)),
        (f"{what}'s second gate's recurrent bias + 0.5", second_gate_bias),
    ])


def attention_perturbations(models):
    """(what, perturbed copy of the chain-attention ensemble); each must NOT match foldsweep."""
    def atts(m):
        return [x for x in m if isinstance(x, ft.Attention)]

    def swap_qk(m):  # queries and keys exchanged: the scores transposed
        a = atts(m)[0]
        for name in ("weight", "bias"):
            q, k = getattr(a.q, name), getattr(a.k, name)
            t = q.clone()
            q.copy_(k)
            k.copy_(t)

    def flip_distance(m):  # the position biases read as i - j
        a = atts(m)[0]
        a.rel.weight.copy_(a.rel.weight.flip(0))

    def swap_heads(m):  # the two heads' value columns exchanged
        a = atts(m)[0]
        d = a.key_dim
        for t in (a.v.weight, a.v.bias):
            x = t[:d].clone()
            t[:d] = t[d:2 * d]
            t[d:2 * d] = x

    return tc.perturbed(models, [
        ("attention's queries and keys swapped", swap_qk),
        ("attention's position biases flipped (i - j)", flip_distance),
        ("attention's two heads' values swapped", swap_heads),
        ("attention's layer norm bias[0] + 0.5", lambda m: atts(m)[1].norm.bias[0].add_(0.5)),
    ])


def expect_refusal(what, f, needle=None):
    try:
        f()
    except ValueError as e:
        msg = str(e)
        if needle and needle not in msg:
            tc.fail(f"{what}: refused, but without {needle!r}: {msg}")
        else:
            print(f"  refused ({what}): {msg[:140]}")
        return
    tc.fail(f"{what}: no ValueError")


def refusals(chain_file, window_file, tmp):
    chain_arch = json.loads(ft.load(chain_file)[1]["arch"])

    def as_window(h):  # the chain file's arch read as a window model's (no dilations)
        a = json.loads(h["__metadata__"]["arch"])
        a["window"] = 7
        for y in a["layers"]:
            y.pop("dilation", None)
        h["__metadata__"]["arch"] = json.dumps(a)
        h["__metadata__"]["window"] = "7"

    dst = os.path.join(tmp, "as-window.safetensors")
    tc.rewrite(chain_file, dst, as_window)
    expect_refusal("a chain file whose arch says window 7", lambda: ft.load(dst), "does not match its arch")
    expect_refusal("an ensemble of a chain and a window model",
                   lambda: ft.load_ensemble([chain_file, window_file]), "chain")
    chain = ft.load(chain_file)[0]
    win = ft.load(window_file)[0]
    expect_refusal("predict with a chain and a window model", lambda: ft.predict([chain, win], "MKV"), "chain")
    expect_refusal("one_hot_windows(seq, 'chain')", lambda: ft.one_hot_windows("MKV", "chain"), "chain")
    expect_refusal("predict_windows with a chain model",
                   lambda: ft.predict_windows([chain], ft.one_hot_windows("MKV", 11)), "chain")

    def arch_with(edit):
        a = copy.deepcopy(chain_arch)
        edit(a)
        return lambda: ft.build(a)

    def set_layer(i, key, v):
        def f(a):
            a["layers"][i][key] = v
        return f

    add = next(i for i, y in enumerate(chain_arch["layers"]) if y["kind"] == "add")
    expect_refusal("an add spanning more layers than there are", arch_with(set_layer(add, "layers", add)))
    expect_refusal("a dilation of 65", arch_with(set_layer(1, "dilation", 65)))
    dense = next(i for i, y in enumerate(chain_arch["layers"]) if y["kind"] == "dense")
    expect_refusal("a dilation on a dense layer", arch_with(set_layer(dense, "dilation", 2)), "dilation")
    expect_refusal("window 'chains'", arch_with(lambda a: a.__setitem__("window", "chains")))
    w = json.loads(ft.load(window_file)[1]["arch"])
    w["layers"][1]["dilation"] = 2
    expect_refusal("a dilation in a window model", lambda: ft.build(w), "chain")
    w = json.loads(ft.load(window_file)[1]["arch"])
    w["layers"].insert(1, {"kind": "gru", "units": 4, "bidirectional": True})
    expect_refusal("a gru in a window model", lambda: ft.build(w), "chain")
    w["layers"][1]["kind"] = "lstm"
    expect_refusal("an lstm in a window model", lambda: ft.build(w), "chain")
    w["layers"][1] = {"kind": "attention", "heads": 2, "key_dim": 4, "max_distance": 8, "dropout": 0, "eps": 1e-3}
    expect_refusal("an attention layer in a window model", lambda: ft.build(w), "chain")
    g = copy.deepcopy(chain_arch)
    g["layers"].insert(1, {"kind": "attention", "heads": 17, "key_dim": 4, "max_distance": 8, "dropout": 0, "eps": 1e-3})
    expect_refusal("an attention layer of 17 heads", lambda: ft.build(g), "heads")
    g = copy.deepcopy(chain_arch)
    g["layers"].insert(1, {"kind": "gru", "units": 4, "bidirectional": 1})
    expect_refusal("a gru whose bidirectional is 1", lambda: ft.build(g), "bidirectional")


def check_chain_input():
    x = ft.one_hot_chain("aBk")
    want = torch.zeros(1, 21, 3)
    want[0, 0, 0] = want[0, 20, 1] = want[0, ft.ALPHABET.index("K"), 2] = 1
    if x.dtype != torch.float32 or not torch.equal(x, want):
        tc.fail("one_hot_chain('aBk') is not the expected [1, 21, 3] one-hot")
    if ft.one_hot_chain("").shape != (1, 21, 0):
        tc.fail("one_hot_chain('') is not [1, 21, 0]")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    fs = os.path.abspath(sys.argv[1])
    data_dir = sys.argv[2] if len(sys.argv) == 3 else os.path.join(HERE, "..", "..", "shared", "data")
    if torch is None:
        print(f"torch_chain_parity: SKIPPED: {tc.NO_TORCH}")
        return 77
    if not os.access(fs, os.X_OK):
        print(f"torch_chain_parity: {fs} is not an executable")
        return 1
    torch.set_num_threads(1)
    t0 = time.time()
    tmp, cleanup = tc.work_folder("fs-torch-chain-")
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, {fs}")
    check_chain_input()

    syn = os.path.join(tmp, "input")
    tc.must([fs, "synth", "-o", syn, "--proteins", "12", "--seed", "99", "--format", "fasta"])
    synthetic = ft.read_fasta(syn + ".sequences.fasta")
    synthetic += [("one", "M"), ("three", "mkV"), ("odd", "ACDBZUOJXacdefghiklmnpqrstvwyMKV")]
    ts115, ts115_path = ts115_proteins(data_dir)
    if ts115 is None:
        print(f"TS115 part SKIPPED: {ts115_path} is absent (the shared data sets, ../shared/data)")
    inputs = [("synthetic", synthetic)] + ([("TS115", ts115)] if ts115 else [])
    fastas = {}
    for tag, proteins in inputs:
        fastas[tag] = os.path.join(tmp, f"{tag}.fasta")
        tc.write_fasta(fastas[tag], proteins)

    results, exports = [], {}
    for tag, cases, window in (("chain", CHAIN_CASES, "chain"), ("window", [WINDOW_CASE], WINDOW)):
        text = tc.sweep_text(cases, window, epochs=3)
        for (name, desc, _), _tid, _run, exp in tc.trained_cases(fs, tmp, tag, cases, text):
            exports[name] = exp
            try:
                models = ft.load_ensemble(exp)
            except ValueError as e:
                tc.fail(f"case {name}: {e}")
                continue
            kind = ft.Residual if (window == "chain" or "add" in desc) else torch.nn.Sequential
            if len(models) != FOLDS or not all(type(m) is kind for m in models):
                tc.fail(f"case {name}: {[type(m).__name__ for m in models]}, expected {FOLDS} {kind.__name__}")
            if window == "chain" and not all(m.chain and m.window == "chain" for m in models):
                tc.fail(f"case {name}: .chain / .window not set for a chain model")
            for itag, proteins in inputs:
                if itag == "TS115" and window != "chain":
                    continue
                out = os.path.join(tmp, f"pred-{name}-{itag}.csv")
                tc.must([fs, "predict", exp, fastas[itag], "--format", "csv", "-o", out])
                rows = tc.read_csv(out)
                n_res = sum(len(s) for _, s in proteins)
                worst, n = tc.compare(f"case {name} ({itag})", models, proteins, rows)
                ok = worst <= TOL and n == n_res
                if not ok:
                    tc.fail(f"case {name} ({desc}) on {itag}: max |torch - foldsweep| = {worst:.3g} > {TOL:.3g}")
                results.append((name, itag, worst, n))
                print(f"case {name:10s} {itag:9s} {len(proteins):3d} proteins, {n:5d} residues x {len(models)} folds: "
                      f"max |torch - foldsweep| = {worst:.2e} {'ok' if ok else 'FAIL'}", flush=True)
                if name == "chain-gru" and itag == "synthetic":
                    tc.check_perturbed("GRU model", rnn_perturbations(models, ft.GRU), proteins, rows)
                if name == "chain-lstm" and itag == "synthetic":
                    tc.check_perturbed("LSTM model", rnn_perturbations(models, ft.LSTM), proteins, rows)
                if name == "chain-attention" and itag == "synthetic":
                    tc.check_perturbed("attention model", attention_perturbations(models), proteins, rows)
                if name == "chain-a" and itag == "synthetic":
                    tc.check_perturbed("chain model", perturbations(models), proteins, rows)
                    # The command line predicts chain models too, as foldsweep does.
                    r = tc.sh([sys.executable, os.path.join(HERE, "..", "python", "foldsweep_torch.py"), exp,
                               fastas[itag]])
                    got = r.stdout.splitlines()
                    p = tc.torch_probs(models, proteins)
                    want = [x for name_, seq in ft.read_fasta(fastas[itag])  # the model's view: upper case, X
                            for x in (f">{name_}", seq, "".join(ft.CLASSES[k] for k in p[name_].argmax(1).tolist()))]
                    if r.returncode != 0 or got != want:
                        tc.fail(f"foldsweep_torch.py {exp}: exit {r.returncode}, {r.stderr.strip()[:200]}; "
                                f"printed {len(got)} lines, first difference "
                                f"{next(((a, b) for a, b in zip(got, want) if a != b), None)}")
                    else:
                        print(f"  foldsweep_torch.py {os.path.basename(exp)} FASTA: {len(got) // 3} proteins' states "
                              "as predict_chain gives them")

    if "chain-a" in exports and "window-add" in exports:
        refusals(os.path.join(exports["chain-a"], "fold0.safetensors"),
                 os.path.join(exports["window-add"], "fold0.safetensors"), tmp)
    else:
        tc.fail("chain-a or window-add did not run")

    print(f"torch_chain_parity: {len(results)} comparisons, {time.time() - t0:.1f} s, tolerance {TOL:.3g}"
          f"{'' if ts115 else ' (TS115 skipped)'}: {'FAILED' if tc.failures else 'passed'}")
    cleanup()
    return 1 if tc.failures else 0


if __name__ == "__main__":
    sys.exit(main())
