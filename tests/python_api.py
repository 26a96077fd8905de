"""The Python package (python/foldsweep) over this build's libfoldsweep.so.

    python3 tests/python_api.py BUILD/foldsweep BUILD/libfoldsweep.so

Checks the package against the command line it is built from: a run from a
dict, from its file and by `foldsweep run` rank the same trials with the
same scores; the leaderboard DataFrame is the run's leaderboard.csv; the
curves agree with the leaderboard's fold columns; progress events count the
folds; predictions are `foldsweep predict`'s, and PyTorch's through
to_torch(); errors raise FoldsweepError with the command line's message; a
SIGINT (a notebook's interrupt) stops a run with KeyboardInterrupt, leaves
Python's own handler in place, and the run resumed ranks as one never
interrupted. Exit 77 (skip) where pandas is missing.
"""

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import numpy as np
    import pandas as pd
except ImportError as e:
    alt = "/usr/bin/python3"  # Debian's python3-pandas, where CTest's python3 is another
    if not os.environ.get("FS_PYAPI_REEXEC") and os.access(alt, os.X_OK) and \
            os.path.realpath(sys.executable) != os.path.realpath(alt):
        os.environ["FS_PYAPI_REEXEC"] = "1"
        os.execv(alt, [alt] + sys.argv)
    print(f"python_api: skipped: {e} (apt-get install python3-pandas)")
    sys.exit(77)

BIN, LIB = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.environ["FOLDSWEEP_LIBRARY"] = LIB
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import foldsweep  # noqa: E402

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)


def sh(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"python_api: {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


# A small window sweep (2 trials x 3 folds) and a longer one to interrupt.
SMALL = {"data": {"synth": {"proteins": 80, "seed": 3}, "window": 13, "folds": 3, "fold_seed": 1},
         "model": {"depth": 1, "filters": [8, 16], "dense": 16},
         "training": {"epochs": 3, "seed": 1}, "run": {"backend": "cpu", "threads": 2}}
LONG = {"data": {"synth": {"proteins": 300, "seed": 5}, "window": 13, "folds": 3, "fold_seed": 2},
        "model": {"depth": [1, 2], "filters": [16, 32], "dense": 32},
        "training": {"epochs": 8, "batch_size": 8, "seed": 2}, "run": {"backend": "cpu", "threads": 2}}
if os.environ.get("FS_PYAPI_SANITIZED"):
    # The sanitizer build trains some 10 times slower: a quarter of the work
    # still lasts past the first progress event, which the interrupt waits for.
    LONG["data"]["synth"]["proteins"] = 120
    LONG["model"]["filters"] = [16]
    LONG["training"]["epochs"] = 4
SCORES = ["rank", "id", "status", "mean", "std", "fold0_q3", "fold1_q3", "fold2_q3", "fold0_best_epoch"]


def yaml_file(path, sweep):
    with open(path, "w") as f:
        json.dump(sweep, f, indent=2)  # JSON is YAML's flow style
    return path


def same_board(a, b, what):
    x, y = a.leaderboard()[SCORES], b.leaderboard()[SCORES]
    try:
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True), check_exact=True)
    except AssertionError as e:
        check(False, f"{what}: leaderboards differ: {e}")


def check_runs(work):
    cli = os.path.join(work, "cli")
    sweep = yaml_file(os.path.join(work, "small.yaml"), SMALL)
    sh(BIN, "run", sweep, "--out", cli, "--quiet")
    events = []
    from_dict = foldsweep.run(SMALL, out=os.path.join(work, "dict"), progress=False, quiet=True,
                              on_progress=events.append)
    from_file = foldsweep.run(sweep, out=os.path.join(work, "file"), progress=False, quiet=True)
    check(isinstance(from_dict, foldsweep.Run) and from_dict.path == os.path.join(work, "dict"),
          f"run() returns the Run of its folder: {from_dict!r}")
    same_board(from_dict, foldsweep.open(cli), "run(dict) against `foldsweep run`")
    same_board(from_file, foldsweep.open(cli), "run(path) against `foldsweep run`")

    board = from_dict.leaderboard()
    on_disk = pd.read_csv(os.path.join(from_dict.path, "leaderboard.csv"), dtype={"id": str, "note": str})
    try:
        pd.testing.assert_frame_equal(board, on_disk, check_exact=True)
    except AssertionError as e:
        check(False, f"leaderboard() is not the run's leaderboard.csv: {e}")
    # ... and the JSON leaderboard's rows: the same trials, ranks, options and tie marks.
    rows = json.loads(from_dict.leaderboard(format="json"))
    check([(r["rank"], r["id"], r["param_model_filters"], r["tied_with_best"], r["status"]) for r in rows] ==
          [(int(a), b, int(c), bool(d), e) for a, b, c, d, e in
           board[["rank", "id", "param_model_filters", "tied_with_best", "status"]].itertuples(index=False)],
          "leaderboard() against leaderboard(format='json')")
    check(list(board["rank"]) == [1, 2] and "param_model_filters" in board.columns,
          f"leaderboard(): ranks and param_ columns: {list(board.columns)[:20]}")
    check(len(from_dict.leaderboard(top=1)) == 1, "leaderboard(top=1) has one row")
    text = from_dict.leaderboard(format="table")
    check(board["id"][0][:8] in text, "leaderboard(format='table') is the table")

    curves = from_dict.curves()
    for _, row in board.iterrows():
        for k in range(3):
            c = curves[(curves["trial"] == row["id"]) & (curves["fold"] == k)]
            check(len(c) == row[f"fold{k}_epochs"], f"curves: trial {row['id']} fold {k}: {len(c)} epochs, "
                  f"the leaderboard says {row[f'fold{k}_epochs']}")
            best = c[c["best"]]
            check(len(best) == 1 and int(best["epoch"].iloc[0]) == row[f"fold{k}_best_epoch"],
                  f"curves: trial {row['id']} fold {k}: the kept epoch")
            if len(best) == 1:
                check(abs(best["val_q3"].iloc[0] - row[f"fold{k}_q3"]) < 1e-6,
                      f"curves: fold {k}'s val_q3 at its kept epoch {best['val_q3'].iloc[0]} against "
                      f"the leaderboard's {row[f'fold{k}_q3']}")
    check(set(curves.columns) >= {"train_loss", "val_loss", "seconds", "status"}, "curves(): columns")

    st = from_dict.status()
    check(st["state"] == "finished" and st["folds_done"] == 6, f"status(): {st.get('state')}, {st.get('folds_done')}")
    nested = []

    def call_inside(ev):
        try:
            from_dict.leaderboard()
        except foldsweep.FoldsweepError as e:
            nested.append(str(e))
    foldsweep.run(SMALL, out=os.path.join(work, "dict"), progress=False, quiet=True, on_progress=call_inside)
    check(nested and "on_progress" in nested[0], f"a foldsweep call inside on_progress is refused: {nested[:1]}")
    check(ens_empty(from_dict), "predict([]) and predict({}): empty results")
    check(bool(events) and events[-1]["final"] and events[-1]["folds_done"] == events[-1]["folds_total"] == 6
          and events[-1]["trials_total"] == 2 and events[-1]["best_trial"] == board["id"][0],
          f"progress events: {events[-1] if events else None}")
    rep = from_dict.report(os.path.join(work, "r.html"))
    shown = rep._repr_html_()
    import html
    inner = shown[len('<iframe srcdoc="'):shown.index('"', len('<iframe srcdoc="'))]
    check(shown.startswith('<iframe srcdoc="') and html.unescape(inner) == open(rep.path, encoding="utf-8").read()
          and "<html" in html.unescape(inner)[:400].lower(), "report(): the whole page shown inline, escaped in a frame")
    check(board["id"][0] in foldsweep.main("plan", sweep), "main('plan', ...): the command's output")
    return from_dict


def ens_empty(run):
    ens = run.model()
    return ens.predict([]) == [] and ens.predict({}) == {}


def cli_predict(run, fasta):
    """`foldsweep predict RUN FASTA --format csv`: {id: (states, probs)}."""
    out = {}
    for r in csv.DictReader(io.StringIO(sh(BIN, "predict", run.path, fasta, "--format", "csv"))):
        s, p = out.setdefault(r["id"], ([], []))
        s.append(r["q3"])
        p.append([float(r["p[q3_H]"]), float(r["p[q3_E]"]), float(r["p[q3_C]"])])
    return {k: ("".join(s), np.array(p)) for k, (s, p) in out.items()}


def check_predict(run, work):
    seqs = {"p1": "MKVLAAGIVALLLAAGCSSHHEELLKKAAEEL", "p2": "GSGSPPNGTYEVRVKVTVEV", "one": "W",
            "odd": "MKXBZLLAA*"}
    fasta = os.path.join(work, "in.fasta")
    with open(fasta, "w") as f:
        f.write("".join(f">{k}\n{v}\n" for k, v in seqs.items()))
    ens = run.model(rank=1)
    check(ens.trial == run.leaderboard()["id"][0] and len(ens.files) == 3 and ens.classes == 3,
          f"model(rank=1): {ens!r}")
    got = ens.predict(seqs)
    want = cli_predict(run, fasta)
    states = ens.predict_states(seqs)
    for k in seqs:
        if got[k].shape != want[k][1].shape:
            check(False, f"predict['{k}']: shape {got[k].shape}, `foldsweep predict` {want[k][1].shape}")
            continue
        diff = float(np.abs(got[k] - want[k][1]).max())
        check(diff <= 5e-7 + 1e-7, f"predict['{k}'] against `foldsweep predict` (6 decimals): {diff:.2e}")
        check(states[k] == want[k][0], f"predict_states['{k}']: {states[k]} against {want[k][0]}")
    one = ens.predict(seqs["p2"])
    lst = ens.predict([seqs["p1"], seqs["p2"]])
    check(np.array_equal(one, got["p2"]) and np.array_equal(lst[0], got["p1"]),
          "a str, a list and a dict predict the same numbers")
    probs, agree = ens.predict(seqs["p1"], agreement=True)
    check(agree.shape == (len(seqs["p1"]),) and float(agree.min()) >= 1 / 3, "agreement: a fraction of 3 models")
    check(ens.predict(seqs, threads=1)["p1"].tobytes() == got["p1"].tobytes(), "predict: the same bits on 1 thread")
    fold1 = foldsweep.load(run.path, fold=1)
    check(len(fold1.files) == 1 and fold1.files[0].endswith("fold1.safetensors"), f"load(fold=1): {fold1.files}")
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"python_api: to_torch not checked: {e}")
        return
    import foldsweep_torch as ft
    check_onnx(ens, seqs, got, work)
    models = ens.to_torch()
    for k in ("p1", "p2"):
        t = ft.predict(models, seqs[k]).detach().numpy()
        check(float(np.abs(t - got[k]).max()) < 1e-5, f"to_torch(): PyTorch's '{k}' within 1e-5")


def check_onnx(ens, seqs, got, work):
    """to_onnx(): ONNX Runtime's probabilities of the export within 1e-5 of
    predict's (tests/export_parity.py covers every layer kind)."""
    sys.path.insert(0, os.path.join(HERE, "..", ".deps", "onnx"))
    try:
        import onnxruntime as ort
    except ImportError as e:
        print(f"python_api: to_onnx not checked: {e}")
        return
    import foldsweep_torch as ft
    path = ens.to_onnx(os.path.join(work, "m.onnx"))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    model = ens.to_torch()[0]
    for k in ("p1", "p2"):
        p = sess.run(None, {"x": ft.model_input(model, seqs[k]).numpy()})[0]
        check(p.shape == got[k].shape and float(np.abs(p - got[k]).max()) < 1e-5, f"to_onnx(): '{k}' within 1e-5")


def expect_error(fn, code, words, what):
    try:
        fn()
    except foldsweep.FoldsweepError as e:
        check(e.code == code and all(w in str(e) for w in words),
              f"{what}: exit {e.code}, message {str(e)!r}: expected exit {code} naming {words}")
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: {type(e).__name__}: {e}, not FoldsweepError")
        return
    check(False, f"{what}: no error")


def check_errors(run, work):
    bad = json.loads(json.dumps(SMALL))
    bad["model"]["depth"] = 0
    expect_error(lambda: foldsweep.run(bad, out=os.path.join(work, "bad"), progress=False), 1,
                 ["model.depth", "expected"], "a dict with depth 0")
    expect_error(lambda: foldsweep.run(SMALL, out=os.path.join(work, "b2"), backend="gpu", progress=False), 2,
                 ["backend", "gpu"], "backend='gpu'")
    expect_error(lambda: foldsweep.load(os.path.join(work, "nothing")), 1, ["nothing"], "load() of no model")
    expect_error(lambda: run.model().predict("MKV-LL"), 1, ["'-'"], "a gap in a sequence")
    expect_error(lambda: foldsweep.Run(os.path.join(work, "nothing")).leaderboard(), 1, ["journal.jsonl"],
                 "a folder that is no run")
    expect_error(lambda: foldsweep.main("run", "x.yaml"), 2, ["foldsweep.run"], "main('run', ...)")
    try:
        run.model().predict({"a": "MKV\n>b\nGGG"})
        check(False, "a sequence holding FASTA text: no error")
    except ValueError as e:
        check("'>'" in str(e), f"a sequence holding FASTA text: {e}")
    with foldsweep.load(run.path) as ens:
        check(ens.predict("MKV").shape == (3, 3), "predict in a with block")
    check(ens._m is None, "the with block closed the models")
    check(not os.path.exists(os.path.join(work, "bad")), "a refused sweep writes no run folder")


def check_stop_line():
    """The bar prints a stop line once above itself and says so in its
    description (a real tqdm bar on a string stream)."""
    from tqdm import tqdm
    from foldsweep import _run
    out = io.StringIO()
    bar = tqdm(total=0, file=out)
    bar._fs_stream = out
    prog = _run._Progress(bar, None)
    ev = {"folds_total": 6, "folds_done": 2, "trials_done": 0, "trials_total": 2, "best_mean": None,
          "best_trial": "", "stopping": None, "final": False}
    prog._on(json.dumps(ev).encode(), None)
    check("stopping" not in out.getvalue(), f"a stop line before any stop: {out.getvalue()!r}")
    ev["stopping"] = "stopping: no new folds; 2 in flight get 30 s to finish (signal again to abandon them)"
    for _ in range(3):
        prog._on(json.dumps(ev).encode(), None)
    check(prog.error is None, f"the bar's handler failed: {prog.error!r}")
    check(out.getvalue().count(ev["stopping"]) == 1, f"the stop line once above the bar: {out.getvalue()!r}")
    check(bar.desc.startswith("foldsweep (stopping)"), f"the bar's description: {bar.desc!r}")
    bar.close()


def check_interrupt(work):
    sweep = yaml_file(os.path.join(work, "long.yaml"), LONG)
    whole = os.path.join(work, "whole")
    sh(BIN, "run", sweep, "--out", whole, "--quiet")
    seen = []

    def interrupt(ev):
        seen.append(ev)
        if len(seen) == 1 and not ev["final"]:
            os.kill(os.getpid(), signal.SIGINT)

    cut = os.path.join(work, "cut")
    try:
        foldsweep.run(sweep, out=cut, progress=False, quiet=True, grace=1, on_progress=interrupt)
        check(False, f"SIGINT during run(): no KeyboardInterrupt (events: {len(seen)}; the run may have "
                     "ended before its first event)")
    except KeyboardInterrupt as e:
        check("resume" in str(e), f"KeyboardInterrupt's message: {e}")
    # The stop's line reaches the events (the bar shows it: the run's stderr is captured while it runs).
    said = [ev["stopping"] for ev in seen if ev.get("stopping")]
    check(any(s.startswith("stopping: no new folds; ") and "get 1 s to finish" in s for s in said),
          f"the events' stop lines after SIGINT with grace 1: {said[:3]} (of {len(seen)} events)")
    check(all(ev.get("stopping") is None for ev in seen[:1]), "a stop line before the interrupt")
    check(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Python's SIGINT handler is back")
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 0.1) if hasattr(signal, "sigtimedwait") else None
        check(False, "a SIGINT after the run raised no KeyboardInterrupt")
    except KeyboardInterrupt:
        pass
    st = foldsweep.open(cut).status()
    check(st["folds_done"] < st["folds_total"], f"the interrupted run is unfinished: {st['folds_done']}/"
          f"{st['folds_total']}")
    resumed = foldsweep.run(sweep, out=cut, progress=False, quiet=True)
    same_board(resumed, foldsweep.open(whole), "interrupted and resumed against an uninterrupted run")


def main():
    check(foldsweep.__version__ in sh(BIN, "--version"), f"__version__ {foldsweep.__version__}")
    work = tempfile.mkdtemp(prefix="fs-pyapi-")
    cwd = os.getcwd()
    os.chdir(work)  # a dict's run folder and relative paths: the working directory
    try:
        run = check_runs(work)
        check_predict(run, work)
        check_errors(run, work)
        check_stop_line()
        check_interrupt(work)
    finally:
        os.chdir(cwd)
        if not failures:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"python_api: {len(failures)} failure(s); work folder {work}")
        sys.exit(1)
    print("python_api: ok")


main()
