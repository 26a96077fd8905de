"""What the PyTorch parity scripts share (tests/torch_parity.py, tests/torch_chain_parity.py).

Imported by both from their own folder: PyTorch (re-executing the script
under /usr/bin/python3 once when this python3 lacks it), python/foldsweep_torch.py,
the tolerance, failures, running the binary, the sweep they train, a work
folder, reading foldsweep's predictions and comparing them with PyTorch's,
and the perturbed models each script must catch.
"""

import copy
import csv
import json
import os
import struct
import subprocess
import sys
import tempfile

NO_TORCH = None  # why PyTorch is missing, when it is
try:
    import torch
except ImportError as e:
    # CTest's python3 may be another interpreter (pyenv, venv) than the
    # system one Debian's python3-torch installs into: try that one once.
    alt = "/usr/bin/python3"
    if (
        not os.environ.get("FS_TORCH_PARITY_REEXEC")
        and os.access(alt, os.X_OK)
        and os.path.realpath(sys.executable) != os.path.realpath(alt)
    ):
        os.environ["FS_TORCH_PARITY_REEXEC"] = "1"
        os.execv(alt, [alt] + sys.argv)
    torch = None  # the FASTA rule and the file formats are still checked
    NO_TORCH = f"PyTorch is not importable ({e}); apt-get install python3-torch"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import foldsweep_torch as ft  # noqa: E402

TOL = 1e-5 + 5e-7  # parity tolerance plus the CSV's %.6f rounding
WINDOW = 11
FOLDS = 2
failures = []


def script():
    """The running script's name (torch_parity, torch_chain_parity) for its messages."""
    return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", flush=True)


def sh(args, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    return r


def must(args):
    r = sh(args)
    if r.returncode != 0:
        print(f"{script()}: command failed ({r.returncode}): {' '.join(map(str, args))}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def work_folder(prefix):
    """(folder, cleanup): a temporary folder, kept (and named) when FS_KEEP_TMP is set."""
    if os.environ.get("FS_KEEP_TMP"):
        tmp = tempfile.mkdtemp(prefix=prefix)
        print(f"work folder: {tmp}")
        return tmp, lambda: None
    tmpobj = tempfile.TemporaryDirectory(prefix=prefix)
    return tmpobj.name, tmpobj.cleanup


# ---------------------------------------------------------------------------
# the sweep


def sweep_text(cases, window=WINDOW, epochs=2):
    """A sweep over the cases' layer lists [(name, description, layers YAML flow text)], in order."""
    alts = "\n".join(f"    - {layers}" for _, _, layers in cases)
    batch = "batch_residues: 512" if window == "chain" else "batch_size: 16"
    return f"""data:
  synth: {{proteins: 30, seed: 7}}
  window: {window}
  folds: {FOLDS}
model:
  bn_momentum: 0.9
  layers:
{alts}
training:
  epochs: {epochs}
  {batch}
  learning_rate: 0.01
run:
  keep_models: all
"""


def trained_cases(fs, tmp, tag, cases, text):
    """Writes the sweep text to TAG.yaml, checks that its plan lists one trial
    per case, trains it into run-TAG and exports each case's trial to
    exp-NAME: yields (case, trial id, run folder, export folder)."""
    y = os.path.join(tmp, f"{tag}.yaml")
    open(y, "w").write(text)
    plan = json.loads(must([fs, "plan", y, "--json"]))
    if len(plan) != len(cases):
        fail(f"{tag}.yaml: plan lists {len(plan)} trials, expected {len(cases)}")
        return
    run = os.path.join(tmp, f"run-{tag}")
    must([fs, "run", y, "--out", run, "--threads", "2", "--quiet"])
    for case, trial in zip(cases, plan):
        exp = os.path.join(tmp, f"exp-{case[0]}")
        must([fs, "export", run, "--trial", trial["id"], "-o", exp])
        yield case, trial["id"], run, exp


# ---------------------------------------------------------------------------
# input proteins, foldsweep's output


def write_fasta(path, proteins):
    with open(path, "w") as f:
        for name, seq in proteins:
            f.write(f">{name} test protein\n")
            for i in range(0, len(seq), 50):
                f.write(seq[i : i + 50] + "\n")


def read_csv(path):
    """{id: [row, ...]} in file order."""
    out = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        want = ["id", "seq", "n", "q3", "p[q3_H]", "p[q3_E]", "p[q3_C]", "agree"]
        if head != want:
            fail(f"{path}: CSV header {head}, expected {want}")
            return {}
        for row in r:
            out.setdefault(row[0], []).append(row)
    return out


def rewrite(src, dst, edit=None, cut=None):
    """Copies a safetensors file, letting edit(header) change the header."""
    raw = open(src, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    if edit:
        edit(header)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    out = struct.pack("<Q", len(h)) + h + raw[8 + n :]
    open(dst, "wb").write(out[:cut] if cut else out)


# ---------------------------------------------------------------------------
# comparison


def margin(p):
    """Top-1 minus top-2 of each row."""
    s = torch.sort(p, dim=1, descending=True).values
    return s[:, 0] - s[:, 1]


def torch_probs(models, proteins, features=None):
    """{name: probabilities}; features: {name: [len, D] columns} for models that read them."""
    return {name: ft.predict(models, seq, features=features[name] if features else None) for name, seq in proteins}


def compare(label, models, proteins, rows, quiet=False, features=None):
    """Max |torch - csv| over every residue; also checks n, seq, q3 and agree."""
    worst = 0.0
    checked = 0
    probs = torch_probs(models, proteins, features)
    for name, seq in proteins:
        got = rows.get(name, [])
        if len(got) != len(seq):
            fail(f"{label}: {name}: foldsweep printed {len(got)} residues, the protein has {len(seq)}")
            continue
        p = probs[name]
        c = torch.tensor([[float(x) for x in row[4:7]] for row in got], dtype=torch.float64).reshape(-1, 3)
        d = (p.double() - c).abs()
        worst = max(worst, d.max().item() if d.numel() else 0.0)
        checked += len(seq)
        if quiet:
            continue
        for i, row in enumerate(got):
            a = seq[i].upper()
            if row[2] != str(i + 1) or not (row[1].upper() == a or (row[1] == "X" and a not in ft.ALPHABET[:20])):
                fail(f"{label}: {name} residue {i + 1}: CSV row {row[:3]} does not match residue {a!r}")
                break
        sure = margin(p) > 2 * TOL
        states = [ft.CLASSES[k] for k in p.argmax(dim=1).tolist()]
        bad = [i for i in range(len(seq)) if sure[i] and got[i][3] != states[i]]
        if bad:
            i = bad[0]
            fail(f"{label}: {name} residue {i + 1}: foldsweep q3 {got[i][3]}, torch {states[i]} ({p[i].tolist()})")
        # agree: the fraction of fold models whose own prediction is the ensemble's
        each = [ft.predict(m, seq, features=features[name] if features else None) for m in models]
        ens = p.argmax(dim=1)
        for i in range(len(seq)):
            if not sure[i] or any(margin(e[i : i + 1])[0] <= 2 * TOL for e in each):
                continue
            frac = sum(int(e[i].argmax() == ens[i]) for e in each) / len(each)
            if abs(float(got[i][7]) - frac) > 1e-3:
                fail(f"{label}: {name} residue {i + 1}: agree {got[i][7]}, torch's fold models give {frac}")
                break
    return worst, checked


# ---------------------------------------------------------------------------
# perturbed models: the parity must be able to fail


def perturbed(models, edits):
    """[(what, copy of the ensemble with edit applied to its first model)] for each (what, edit)."""
    out = []
    for what, edit in edits:
        ms = [copy.deepcopy(m) for m in models]
        with torch.no_grad():
            edit(ms[0])
        out.append((what, ms))
    return out


def check_perturbed(kind, variants, proteins, rows, features=None):
    """Each perturbed ensemble of variants [(what, models)] must NOT match foldsweep's rows."""
    for what, ms in variants:
        w, _ = compare("perturbed", ms, proteins, rows, quiet=True, features=features)
        caught = w > TOL
        print(f"  perturbed ({what}): max diff {w:.2e} {'detected' if caught else 'NOT DETECTED'}")
        if not caught:
            fail(f"a perturbed {kind} ({what}) still matches foldsweep within {TOL:.3g}")
