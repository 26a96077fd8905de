#!/usr/bin/env python3
"""PyTorch parity of foldsweep's trained models (docs/models.md).

usage: torch_parity.py FOLDSWEEP_BINARY

Trains tiny real models with the binary (synthetic data, 2 folds, 2 epochs),
exports them, and checks that python/foldsweep_torch.py gives the
probabilities `foldsweep predict --format csv` prints on every residue:
|torch - csv| <= 1e-5 + 5e-7 (the CSV holds %.6f, so up to 5e-7 of the
difference is rounding). Covered: (a) conv + batchnorm + highway + dropout +
dense + batchnorm; (b) one model per activation; (c) a dense first layer;
(ln) layer norm over a convolution's channels and over a dense layer's;
(d) a conv and a highway after a dense layer (width 1), when the sweep
format accepts it. It must be able to fail: perturbed weights, a wrong
flatten order and a flipped kernel must NOT match, and damaged files must be
refused with ValueError.

Before any of that, and without PyTorch: the FASTA rule (docs/models.md)
on both sides, foldsweep_torch.read_fasta against what `foldsweep predict`
reads (sequences, and the same file:line:col refusals), and PSIPRED's ss2 /
horiz layout of `predict -o DIR/`.

Exit status: 0 passed, 1 failed, 77 skipped (no PyTorch; the checks that
need none passed).
Set FS_KEEP_TMP=1 to keep the work folder.
"""

import copy
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import (  # noqa: E402  (re-executes under /usr/bin/python3 when this python3 lacks torch)
    FOLDS,
    NO_TORCH,
    TOL,
    WINDOW,
    check_perturbed,
    compare,
    fail,
    failures,
    ft,
    margin,
    must,
    perturbed,
    read_csv,
    rewrite,
    sh,
    sweep_text,
    torch,
    trained_cases,
    work_folder,
    write_fasta,
)

# ---------------------------------------------------------------------------
# the models

ACTS = ["relu", "leaky_relu", "swish", "tanh", "elu", "linear"]


def case_layers():
    """[(name, description, layers YAML flow text)]; the sweep's alternatives in order."""
    cases = [
        (
            "a",
            "conv+batchnorm+highway+dropout+dense+batchnorm",
            "[{conv1d: {filters: 8, width: 5, activation: swish}}, {batchnorm: {epsilon: 0.01}},"
            " {highway: {width: 3, activation: relu}}, {dropout: {rate: 0.1}},"
            " {dense: {units: 16, activation: swish}}, batchnorm]",
        )
    ]
    for act in ACTS:
        extra = {"leaky_relu": ", leaky_slope: 0.2", "elu": ", elu_alpha: 0.7"}.get(act, "")
        cases.append(
            (
                f"b-{act}",
                f"conv+dense, {act}",
                f"[{{conv1d: {{filters: 6, width: 3, activation: {act}{extra}}}}},"
                f" {{dense: {{units: 8, activation: {act}{extra}}}}}]",
            )
        )
    cases.append(
        (
            "c",
            "dense first (reads the one-hot window)",
            "[{dense: {units: 12, activation: relu}}, {dense: {units: 8, activation: tanh}}]",
        )
    )
    cases.append(
        (
            "ln",
            "conv+layernorm+dense+layernorm",
            "[{conv1d: {filters: 8, width: 5, activation: swish}}, {layernorm: {epsilon: 0.00001}},"
            " {dense: {units: 12, activation: relu}}, layernorm]",
        )
    )
    return cases


CASE_D = (
    "d",
    "conv and highway (width 1) after a dense layer",
    "[{conv1d: {filters: 6, width: 3, activation: elu}}, {dense: {units: 10, activation: swish}},"
    " {conv1d: {filters: 7, width: 1, activation: relu}}, {highway: {width: 1, activation: tanh}}, batchnorm]",
)


# ---------------------------------------------------------------------------
# damaged files


def first_tensor(header, suffix, ndim):
    return next(k for k, v in header.items() if k.endswith(suffix) and len(v.get("shape", [])) == ndim)


def damaged_files(src, tmp):
    def set_meta(key, value):
        def f(h):
            h["__metadata__"][key] = value

        return f

    def dtype(h):
        h[first_tensor(h, ".weight", 3)]["dtype"] = "F16"

    def reshape(h):
        k = first_tensor(h, ".weight", 3)
        f, c, w = h[k]["shape"]
        h[k]["shape"] = [f, w, c]  # same bytes, wrong layout

    def drop(h):
        k = first_tensor(h, "running_var", 1)
        del h[k]

    def extra(h):
        k = first_tensor(h, ".bias", 1)
        h["99.bias"] = dict(h[k])

    def bad_arch(h):
        a = json.loads(h["__metadata__"]["arch"])
        a["layers"][0]["filters"] += 1
        h["__metadata__"]["arch"] = json.dumps(a)

    cases = [
        ("format", set_meta("format", "something-else"), None),
        ("format_version", set_meta("format_version", "2"), None),
        ("dtype F16", dtype, None),
        ("shape [F, K, C]", reshape, None),
        ("missing running_var", drop, None),
        ("unexpected tensor", extra, None),
        ("arch disagreeing with the tensors", bad_arch, None),
        ("arch not JSON", set_meta("arch", "{layers"), None),
        ("truncated", None, -100),
        ("header only", None, 12),
    ]
    dst = os.path.join(tmp, "damaged.safetensors")
    rewrite(src, dst)
    try:
        ft.load(dst)
    except ValueError as e:
        fail(f"an unchanged rewrite of {src} was refused: {e}")
    for what, edit, cut in cases:
        rewrite(src, dst, edit, cut)
        try:
            ft.load(dst)
            fail(f"damaged file ({what}) was loaded without a ValueError")
        except ValueError as e:
            print(f"  damaged file refused ({what}): {str(e).replace(dst, 'FILE')[:110]}")


# ---------------------------------------------------------------------------


def check_one_hot():
    x = ft.one_hot_windows("aB", 3)
    want = torch.zeros(2, 21, 3)
    want[0, 0, 1] = want[0, 20, 2] = 1  # A at the centre, B (X) on the right, zero left
    want[1, 0, 0] = want[1, 20, 1] = 1
    if x.dtype != torch.float32 or not torch.equal(x, want):
        fail("one_hot_windows('aB', 3) is not the expected [2, 21, 3] one-hot")
    if ft.one_hot_windows("", 5).shape != (0, 21, 5):
        fail("one_hot_windows('', 5) is not [0, 21, 5]")


def check_api(models, proteins, run):
    """predict as a PyTorch user calls it: a list of proteins (or read_fasta's
    pairs) gives a list, each the protein's own prediction (a list's text was
    once read as residues); a sequence is read by the FASTA rule (line breaks,
    case, a final '*'); anything else is refused; a model moved to float64
    takes its input there; a folder or a run folder given to load says what."""
    a, b = proteins[0][1], proteins[1][1]
    one = ft.predict(models, a)
    many = ft.predict(models, [a, b])
    pairs = ft.predict(models, proteins[:2])
    if not (isinstance(many, list) and len(many) == 2 and torch.equal(many[0], one) and
            torch.equal(many[1], ft.predict(models, b)) and all(torch.equal(x, y) for x, y in zip(many, pairs))):
        fail("predict(models, [a, b]) is not [predict(models, a), predict(models, b)]")
    wrapped = a[:10].lower() + "\n" + a[10:] + "*"
    if not torch.equal(ft.predict(models, wrapped), one):
        fail("a sequence wrapped over lines, in lower case, ending in '*', predicts other than the clean one")
    for bad, kind in ((5, TypeError), ("MK-V", ValueError), (">x\nMKV", ValueError)):
        try:
            ft.predict(models, bad)
            fail(f"predict(models, {bad!r}) raised nothing")
        except kind:
            pass
    wide = [copy.deepcopy(m).double() for m in models]
    p64 = ft.predict(wide, a)
    if p64.dtype != torch.float64 or (p64 - one.double()).abs().max() > 1e-5:
        fail(f"a float64 ensemble: dtype {p64.dtype}, max difference {(p64 - one.double()).abs().max():.3g}")
    try:
        ft.load(run)
        fail(f"load({run}) (a folder) raised nothing")
    except ValueError as e:
        if "is a folder" not in str(e):
            fail(f"load of a folder: {e}")
    try:
        ft.load_ensemble(run)
        fail(f"load_ensemble({run}) (a run folder) raised nothing")
    except ValueError as e:
        if "foldsweep export" not in str(e):
            fail(f"load_ensemble of a run folder: {e}")


def perturbations(models):
    """(what, perturbed copy of the ensemble); each must NOT match foldsweep."""
    mods = lambda m, cls: [x for x in m if isinstance(x, cls)]  # noqa: E731
    L = ft.ALPHABET.index("L")

    def flatten_order(m):  # position-major instead of PyTorch's channel-major
        lin = mods(m, torch.nn.Linear)[0]
        u, cl = lin.weight.shape
        c = cl // WINDOW  # the first dense layer of case a reads [C, WINDOW]
        lin.weight.copy_(lin.weight.reshape(u, cl // c, c).transpose(1, 2).reshape(u, cl))

    return perturbed(models, [
        ("conv weight [0, L, centre] + 0.5", lambda m: mods(m, torch.nn.Conv1d)[0].weight[0, L, 2].add_(0.5)),
        ("conv kernel flipped", lambda m: mods(m, torch.nn.Conv1d)[0].weight.copy_(
            mods(m, torch.nn.Conv1d)[0].weight.flip(2))),
        ("batchnorm running_var[0] x 4", lambda m: mods(m, torch.nn.BatchNorm1d)[0].running_var[0].mul_(4)),
        ("batchnorm running_mean[0] + 0.5", lambda m: mods(m, torch.nn.BatchNorm1d)[0].running_mean[0].add_(0.5)),
        ("highway gate bias[0] + 1", lambda m: mods(m, ft.Highway)[0].t.bias[0].add_(1.0)),
        ("dense weight in position-major flatten order", flatten_order),
        ("output bias[2] + 0.05", lambda m: mods(m, torch.nn.Linear)[-1].bias[2].add_(0.05)),
    ])


# ---------------------------------------------------------------------------
# without PyTorch: one FASTA rule on both sides, PSIPRED's files

# (what, FASTA bytes); each is read by foldsweep predict and by read_fasta.
FASTA_CASES = [
    ("a final '*'", b">p1 desc\nMKVLA*\n"),
    ("'*' after a blank", b">p1\nMKVLA *\n"),
    ("wrapped, '*' ending a line", b">p1\nMKV*\nLAA\n>p2\nGG\n"),
    ("lower case, tabs, blanks, CRLF, BOM", b"\xef\xbb\xbf>p1\tx\r\nm k\tv\r\n\r\n  ac  \r\n"),
    ("other letters", b">p1\nBZUOJXacdBz*\n"),
    ("no final newline", b">p1\nMKV"),
    ("'*' inside", b">p1\nMK*V\n"),
    ("two '*'", b">p1\nMK**\n"),
    ("only '*'", b">p1\n*\n>p2\nMK\n"),
    ("a gap", b">p1\nMK-V\n"),
    ("a digit", b">p1\nMK1V\n"),
    ("a sequence before a header", b"MK\n>p1\nMK\n"),
    ("an indented header", b" >p1\nMK\n"),
    ("no id", b">\nMK\n"),
    ("UTF-8 in a sequence", b">p1\nMK\xc3\xa9\n"),
    ("a control byte", b">p1\nMK\x01\n"),
]


def read_predict_fasta(text):
    """[(id, sequence)] of `predict --format fasta` output."""
    lines = text.splitlines()
    return [(lines[i][1:], lines[i + 1]) for i in range(0, len(lines) - 2, 3)]


def check_fasta_rule(fs, model, tmp):
    path = os.path.join(tmp, "rule.fasta")
    for what, data in FASTA_CASES:
        with open(path, "wb") as f:
            f.write(data)
        r = sh([fs, "predict", model, path, "--format", "fasta", "--input-format", "fasta"])
        try:
            py, err = ft.read_fasta(path), None
        except ValueError as e:
            py, err = None, str(e)
        if r.returncode == 0:
            c = read_predict_fasta(r.stdout)
            if py != c:
                fail(f"FASTA rule, {what}: foldsweep predict reads {c}, read_fasta {py}{' ' + err if err else ''}")
            else:
                print(f"  FASTA rule, {what}: both read {c}")
        elif r.returncode == 1:
            if err is None or err not in r.stderr:
                fail(f"FASTA rule, {what}: foldsweep predict refuses it ({r.stderr.strip()}), "
                     f"read_fasta {'says ' + err if err else 'reads ' + str(py)}")
            else:
                print(f"  FASTA rule, {what}: both refuse it: {err.replace(path, 'FILE')}")
        else:
            fail(f"FASTA rule, {what}: foldsweep predict exited {r.returncode}: {r.stderr.strip()}")


def check_psipred(fs, model, tmp):
    """PSIPRED 4's ss2 / horiz: the header, no id, no foldsweep line; one protein a file."""
    fasta = os.path.join(tmp, "two.fasta")
    with open(fasta, "w") as f:
        f.write(">p1\nMKVLAAGIVALLA\n>p2\n" + "ACDEFGHIKLMNPQRSTVWY" * 4 + "\n")
    for fmt in ("ss2", "horiz"):
        r = sh([fs, "predict", model, fasta, "--format", fmt])
        if r.returncode != 1 or "2 proteins, but a PSIPRED" not in r.stderr:
            fail(f"{fmt} of 2 proteins to standard output: exit {r.returncode}, {r.stderr.strip()!r}; "
                 "expected a refusal naming -o DIR/")
        out = os.path.join(tmp, f"psipred-{fmt}/")
        must([fs, "predict", model, fasta, "--format", fmt, "-o", out])
        for name, n in (("p1", 13), ("p2", 80)):
            lines = open(os.path.join(out, f"{name}.{fmt}")).read().split("\n")
            if fmt == "ss2":
                ok = lines[:2] == ["# PSIPRED VFORMAT (PSIPRED V4.0)", ""] and len(lines) == n + 3
                row = lines[2].split() if len(lines) > 2 else []
                ok = ok and len(row) == 6 and row[:2] == ["1", "M" if name == "p1" else "A"]
                ok = ok and row[2] == "CHE"[max(range(3), key=lambda k: float(row[3 + k]))]
                ok = ok and abs(sum(float(x) for x in row[3:]) - 1) < 2e-3
            else:
                ok = lines[:2] == ["# PSIPRED HFORMAT (PSIPRED V4.0)", ""] and lines[2].startswith("Conf: ")
                ok = ok and "".join(x[6:] for x in lines if x.startswith("  AA: ")) == (
                    "MKVLAAGIVALLA" if name == "p1" else "ACDEFGHIKLMNPQRSTVWY" * 4)
                ok = ok and [len(x) - 6 for x in lines if x.startswith("Pred: ")] == ([13] if n == 13 else [60, 20])
            if not ok:
                fail(f"{out}{name}.{fmt} is not PSIPRED's layout:\n" + "\n".join(lines[:6]))
        print(f"  {fmt}: PSIPRED V4.0 layout, one file per protein; 2 proteins to one stream refused")


def write_records8(path, n=40):
    """Made-up proteins with DSSP-8 labels (a record file), each state favouring a few residues."""
    favour = ["AELMQK", "AELP", "ELMH", "VIYFWT", "VITC", "GNDP", "GSNDP", "GPSNDK"]
    x = 88172645463325252
    with open(path, "w") as f:
        for p in range(n):
            seq, lab = [], []
            while len(seq) < 50:
                x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
                state, length = x % 8, 2 + (x >> 8) % 6
                for _ in range(length):
                    x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
                    fav = favour[state] if x % 4 else "ACDEFGHIKLMNPQRSTVWY"
                    seq.append(fav[(x >> 4) % len(fav)])
                    lab.append(ft.CLASSES8[state])
            f.write(f">r{p}\n{''.join(seq)}\n{''.join(lab)}\n\n")


def check_classes8(fs, tmp, fasta, proteins):
    """An 8-state model (data.classes: 8): predict's 8 probabilities (p[q8_H] .. p[q8_C]) against torch's."""
    rec = os.path.join(tmp, "r8.txt")
    write_records8(rec)
    y = os.path.join(tmp, "c8.yaml")
    open(y, "w").write(f"""data:
  inputs: [{rec}]
  classes: 8
  window: {WINDOW}
  folds: {FOLDS}
model:
  layers:
    - [{{conv1d: {{filters: 8, width: 5, activation: swish}}}}, batchnorm, {{dense: {{units: 12, activation: relu}}}}]
training:
  epochs: 2
  batch_size: 16
  learning_rate: 0.01
""")
    run, exp, out = (os.path.join(tmp, n) for n in ("run-c8", "exp-c8", "pred-c8.csv"))
    must([fs, "run", y, "--out", run, "--threads", "2", "--quiet"])
    must([fs, "export", run, "--rank", "1", "-o", exp])
    must([fs, "predict", exp, fasta, "--format", "csv", "-o", out])
    models = ft.load_ensemble(exp)
    if ft.classes_of(models) != ft.CLASSES8 or any(m.metadata.get("classes") != ft.CLASSES8 for m in models):
        fail(f"8-state models: classes {ft.classes_of(models)}, metadata {[m.metadata.get('classes') for m in models]}")
        return
    with open(out, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        want = ["id", "seq", "n", "q3", "p[q3_H]", "p[q3_E]", "p[q3_C]", "q8"] + [f"p[q8_{c}]" for c in ft.CLASSES8]
        if head != want + ["agree"]:
            fail(f"{out}: 8-state CSV header {head}")
            return
        rows = {}
        for row in r:
            rows.setdefault(row[0], []).append(row)
    worst, n = 0.0, 0
    for name, seq in proteins:
        got = rows.get(name, [])
        p = ft.predict(models, seq)
        if len(got) != len(seq) or p.shape != (len(seq), 8):
            fail(f"8-state {name}: {len(got)} rows, torch {tuple(p.shape)}, {len(seq)} residues")
            continue
        c = torch.tensor([[float(v) for v in row[8:16]] for row in got], dtype=torch.float64).reshape(-1, 8)
        d = (p.double() - c).abs()
        worst = max(worst, d.max().item() if d.numel() else 0.0)
        n += len(seq)
        sure = margin(p) > 2 * TOL
        bad = [i for i in range(len(seq)) if sure[i] and got[i][7] != ft.CLASSES8[int(p[i].argmax())]]
        if bad:
            fail(f"8-state {name} residue {bad[0] + 1}: foldsweep q8 {got[bad[0]][7]}, torch {p[bad[0]].tolist()}")
    ok = worst <= TOL
    if not ok:
        fail(f"8-state models: max |torch - foldsweep| = {worst:.3g} > {TOL:.3g}")
    print(f"case e (8 states)  {'conv+batchnorm+dense, data.classes: 8':50s} {n} residues x {len(models)} folds: "
          f"max |torch - foldsweep| = {worst:.2e} {'ok' if ok else 'FAIL'}", flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    fs = os.path.abspath(sys.argv[1])
    if not os.access(fs, os.X_OK):
        print(f"torch_parity: {fs} is not an executable")
        return 1
    for cmd in ("export", "predict"):
        if sh([fs, cmd, "--help"]).returncode != 0:
            print(f"torch_parity: '{os.path.basename(fs)} {cmd}' is missing (docs/models.md)")
            return 1
    t0 = time.time()
    tmp, cleanup = work_folder("fs-torch-parity-")

    # Without PyTorch: one tiny model for the binary to read FASTA with.
    y = os.path.join(tmp, "rule.yaml")
    open(y, "w").write(sweep_text([case_layers()[1]], epochs=1))
    must([fs, "run", y, "--out", os.path.join(tmp, "run-rule"), "--threads", "2", "--quiet"])
    must([fs, "export", os.path.join(tmp, "run-rule"), "--rank", "1", "-o", os.path.join(tmp, "exp-rule")])
    check_fasta_rule(fs, os.path.join(tmp, "exp-rule"), tmp)
    check_psipred(fs, os.path.join(tmp, "exp-rule"), tmp)
    if torch is None:
        print(f"torch_parity: the FASTA rule and PSIPRED layout {'FAILED' if failures else 'passed'}; "
              f"parity SKIPPED: {NO_TORCH}", flush=True)
        cleanup()
        return 1 if failures else 77

    torch.set_num_threads(1)  # small tensors; and no OpenMP threads spinning beside foldsweep
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, {fs}")
    check_one_hot()

    # Input: synthetic proteins (other seed than the training set), wrapped
    # lines, plus short, lower-case and non-standard-letter ones.
    syn = os.path.join(tmp, "input")
    must([fs, "synth", "-o", syn, "--proteins", "12", "--seed", "99", "--format", "fasta"])
    proteins = ft.read_fasta(syn + ".sequences.fasta")
    proteins += [
        ("one", "M"),
        ("three", "mkV"),
        ("odd", "ACDBZUOJXacdefghiklmnpqrstvwyMKV"),
        ("lower", proteins[0][1].lower()[:40]),
    ]
    fasta = os.path.join(tmp, "input.fasta")
    write_fasta(fasta, proteins)
    n_res = sum(len(s) for _, s in proteins)

    # The sweeps: the main one, and (d) on its own in case the format refuses it.
    cases = case_layers()
    runs = [("main", cases)]
    d_yaml = os.path.join(tmp, "d.yaml")
    open(d_yaml, "w").write(sweep_text([CASE_D]))
    r = sh([fs, "plan", d_yaml])
    if r.returncode == 0:
        runs.append(("d", [CASE_D]))
    else:
        print(f"case d skipped: the sweep format refuses a conv after a dense layer:\n{r.stdout}{r.stderr}")

    results = []
    case_a = None
    for tag, cs in runs:
        for (name, desc, _), tid, run, exp in trained_cases(fs, tmp, tag, cs, sweep_text(cs)):
            out = os.path.join(tmp, f"pred-{name}.csv")
            must([fs, "predict", exp, fasta, "--format", "csv", "-o", out])
            try:
                models = ft.load_ensemble(exp)
            except ValueError as e:
                fail(f"case {name}: {e}")
                continue
            if len(models) != FOLDS:
                fail(f"case {name}: {len(models)} fold models in {exp}, expected {FOLDS}")
            for k, m in enumerate(models):
                md = m.metadata
                if (md.get("trial"), md.get("fold"), md.get("folds"), md.get("window")) != (
                    tid, str(k), str(FOLDS), str(WINDOW)):
                    fail(f"case {name}: fold {k} metadata {md}")
            rows = read_csv(out)
            worst, n = compare(f"case {name}", models, proteins, rows)
            ok = worst <= TOL and n == n_res
            if not ok:
                fail(f"case {name} ({desc}): max |torch - foldsweep| = {worst:.3g} > {TOL:.3g}")
            results.append((name, desc, worst, n))
            print(f"case {name:13s} {desc:50s} {n} residues x {len(models)} folds: "
                  f"max |torch - foldsweep| = {worst:.2e} {'ok' if ok else 'FAIL'}", flush=True)
            if name == "a":
                case_a = (models, rows, run, tid)

    if case_a:
        models, rows, run, tid = case_a
        # The run folder's own files load the same as the export's.
        files = sorted(os.path.join(run, "models", tid, f) for f in os.listdir(os.path.join(run, "models", tid)))
        same = ft.load_ensemble(files)
        w, _ = compare("case a (run folder files)", same, proteins, rows, quiet=True)
        print(f"case a from the run folder's files: max |torch - foldsweep| = {w:.2e}")
        if w > TOL:
            fail(f"case a from {files}: {w:.3g}")
        check_api(models, proteins, run)
        # Sensitivity: each of these must be caught.
        check_perturbed("model", perturbations(models), proteins, rows)
        damaged_files(files[0], tmp)
    else:
        fail("case a did not run")
    check_classes8(fs, tmp, fasta, proteins)

    print(f"torch_parity: {len(results)} cases, {n_res} residues each, {time.time() - t0:.1f} s, "
          f"tolerance {TOL:.3g}: {'FAILED' if failures else 'passed'}")
    cleanup()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
