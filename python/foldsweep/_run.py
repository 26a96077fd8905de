"""foldsweep.run and foldsweep.open: a run folder as a Run."""

import ctypes
import io
import json
import os
import sys

from . import _native
from ._native import lib


def _progress_bar(enabled):
    """A tqdm.auto bar over the run's folds, or None (no tqdm, or not wanted).
    Where sys.stderr is the process's fd 2 (a terminal, a script), the bar
    writes to a copy of it made now: the run's messages are captured from
    fd 2 while it runs, the bar must not be."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    stream = None
    try:
        if sys.stderr.fileno() == 2:
            stream = io.open(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        stream = None  # a notebook's stream: not fd 2, nothing to dodge
    bar = tqdm(total=0, unit="fold", desc="foldsweep", dynamic_ncols=True, file=stream)
    bar._fs_stream = stream
    return bar


def _bar_close(bar):
    bar.close()
    if bar._fs_stream is not None:
        bar._fs_stream.close()


class _Progress:
    """The run's progress events into a tqdm bar and a user callback."""

    def __init__(self, bar, callback):
        self.bar, self.callback, self.error = bar, callback, None
        self.events = 0
        self.stop_said = None
        self.c = _native.ProgressFn(self._on)

    def _on(self, text, _user):
        _native.in_callback.on = True
        try:
            ev = json.loads(text.decode())
            self.events += 1
            if self.bar is not None:
                self.bar.total = ev["folds_total"]
                self.bar.n = ev["folds_done"]
                best = ev.get("best_mean")
                post = {"trials": f"{ev['trials_done']}/{ev['trials_total']}"}
                if best is not None:
                    post["best"] = f"{best:.4f} ({ev['best_trial'][:8]})"
                self.bar.set_postfix(post, refresh=False)
                self.bar.refresh()
                self._say_stop(ev.get("stopping"))
            if self.callback is not None:
                self.callback(ev)
        except BaseException as e:  # an exception must not cross into C
            self.error = self.error or e
        finally:
            _native.in_callback.on = False

    def _say_stop(self, stop):
        """After an interrupt, the run's stop line (what the terminal's line
        would say: the folds in flight and their grace) above the bar, once
        a state: the run's own stderr is captured until it returns."""
        if not stop or stop == self.stop_said:
            return
        self.stop_said = stop
        self.bar.set_description("foldsweep (stopping)", refresh=False)
        stream = self.bar._fs_stream if self.bar._fs_stream is not None else sys.stderr
        self.bar.write(stop, file=stream)


def _sweep_text(sweep):
    """A dict as the sweep's YAML: JSON is YAML's flow style, and the C
    parser checks it with the same schema and messages as a file."""
    return json.dumps(sweep, indent=1).encode()


def _options(sweep, out, threads, backend, restart, quiet, grace):
    o = _native.RunOptions()
    if isinstance(sweep, dict):
        o.sweep = os.fsencode(os.path.join(os.getcwd(), "sweep.yaml"))
        o.sweep_text = _sweep_text(sweep)
    else:
        o.sweep = os.fsencode(os.fspath(sweep))
    o.out = None if out is None else os.fsencode(os.fspath(out))
    o.threads = int(threads or 0)
    o.backend = None if backend is None else backend.encode()
    o.quiet = 1 if quiet else 0
    o.restart = 1 if restart else 0
    o.grace = -1.0 if grace is None else float(grace)
    return o


def run(sweep, out=None, threads=None, backend=None, restart=False, quiet=False, progress=True, grace=None,
        on_progress=None, comm=None):
    """Trains every trial of a sweep on every fold and returns its Run.

    sweep: a sweep file's path, or a dict of the same schema (checked with
    the same messages; relative data paths are read from the working
    directory, and the run folder is runs/sweep unless out or run.out says).
    Calling it again on the same folder resumes. threads, backend ("cpu",
    "cuda", "auto"), restart and grace are `foldsweep run`'s options.
    progress: a tqdm.auto bar over the folds where tqdm is installed (it
    replaces the terminal's line); quiet: neither, and no summary.
    on_progress(event): called with each progress event (a dict:
    docs/python.md). Ctrl-C (a notebook's interrupt) stops the run as SIGINT
    does: folds in flight finish or checkpoint within grace seconds, then
    KeyboardInterrupt; run it again to resume.

    comm: an mpi4py communicator: every rank of it calls run() alike; rank 0
    coordinates and writes the run folder (its bar and events), the others
    train, as under `mpirun foldsweep run` (threads: each rank's)."""
    o = _options(sweep, out, threads, backend, restart, quiet, grace)
    folder = ctypes.create_string_buffer(4096)
    _native.call(lib.foldsweep_run_folder, ctypes.byref(o), folder, len(folder), what="the sweep")
    leader = comm is None or comm.Get_rank() == 0
    bar = _progress_bar(progress and not quiet and leader)
    if bar is not None:
        o.quiet = 1
    prog = _Progress(bar, on_progress)
    o.progress = prog.c
    try:
        if comm is None:
            _native.call(lib.foldsweep_run, ctypes.byref(o), what="the run")
        else:
            from mpi4py import MPI
            _native.call(lib.foldsweep_run_mpi, ctypes.byref(o), ctypes.c_void_p(MPI._addressof(comm)),
                         what="the run")
    except BaseException as e:
        if prog.error is not None and e.__cause__ is None:
            raise e from prog.error  # the callback's own failure, not lost
        raise
    finally:
        if bar is not None:
            _bar_close(bar)
    if prog.error is not None:
        raise prog.error
    return Run(os.fsdecode(folder.value))


def open(path):  # noqa: A001 (foldsweep.open, as the issue's API names it)
    """The Run of an existing run folder."""
    return Run(path)


class Run:
    """A run folder (its journal.jsonl): the leaderboard, the curves, the
    status and report, and its models."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.exists(os.path.join(self.path, "journal.jsonl")):
            raise _native.FoldsweepError(f"{self.path} has no journal.jsonl: not a run folder "
                                         "(foldsweep.run writes one)")

    def __repr__(self):
        return f"foldsweep.Run({self.path!r})"

    def _text(self, fn, *args):
        ptr = ctypes.c_void_p()
        _native.call(fn, os.fsencode(self.path), *args, ctypes.byref(ptr), what=f"reading {self.path}")
        return _native.take_text(ptr.value)

    def leaderboard(self, top=None, format=None):
        """A pandas DataFrame of the leaderboard CSV's rows and columns
        (rank, id, mean, ci95_lo/hi, tied_with_best, param_*, fold scores...),
        best first; with format ("table", "wide", "md", "csv", "json") the
        text `foldsweep leaderboard --format` prints instead."""
        if format is not None:
            return self._text(lib.foldsweep_leaderboard, format.encode(), int(top or 0))
        import pandas as pd
        text = self._text(lib.foldsweep_leaderboard, b"csv", int(top or 0))
        return pd.read_csv(io.StringIO(text), dtype={"id": str, "note": str})

    def curves(self):
        """Every fold's learning curves, long form: trial, fold, seed, epoch,
        train_loss, val_loss, val_q3, seconds (from the fold's start to the
        epoch's end), best (True at the kept epoch), status."""
        import pandas as pd
        df = pd.read_csv(io.StringIO(self._text(lib.foldsweep_curves)), dtype={"trial": str})
        df["best"] = df["best"].astype(bool)
        return df

    def status(self):
        """`foldsweep status --json` as a dict."""
        return json.loads(_native.main(["status", self.path, "--json"])[1])

    def report(self, path=None):
        """Writes the HTML report (RUN/report.html, or path) and returns it
        as a Report, which a notebook shows inline."""
        target = os.fspath(path) if path else os.path.join(self.path, "report.html")
        _native.main(["report", self.path, "-o", target])
        return Report(target)

    def model(self, rank=1, trial=None, fold=None, features=None):
        """The Ensemble of a trial's fold models: the one at leaderboard rank
        `rank`, or `trial` (an id or a unique prefix); fold: that fold's model
        alone."""
        from ._ensemble import load
        return load(self.path, rank=rank, trial=trial, fold=fold, features=features)

    def plot_curves(self, trial=None, ax=None):
        """Validation Q3 per epoch of a trial's folds (the best trial's by
        default) with matplotlib; returns the axes."""
        import matplotlib.pyplot as plt
        df = self.curves()
        if trial is None:
            trial = self.leaderboard(top=1)["id"].iloc[0]
        df = df[df["trial"].str.startswith(trial)]
        ax = ax or plt.subplots()[1]
        for fold, g in df.groupby("fold"):
            ax.plot(g["epoch"], g["val_q3"], marker=".", label=f"fold {fold}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("validation Q3")
        ax.set_title(f"trial {trial[:8]}")
        ax.legend()
        return ax


    def plot_effects(self, top=None, axes=None):
        """Each swept option's effect (matplotlib): the trials' mean metric
        against the option's values (the leaderboard's param_ columns with
        more than one value), one panel an option; returns the axes."""
        import matplotlib.pyplot as plt
        board = self.leaderboard(top=top)
        board = board[board["status"] == "ok"]
        params = [c for c in board.columns if c.startswith("param_") and board[c].nunique(dropna=True) > 1]
        if not params:
            raise ValueError(f"{self.path}: no swept option varies among its complete trials")
        if axes is None:
            axes = plt.subplots(1, len(params), figsize=(3.2 * len(params), 3), squeeze=False)[1][0]
        for ax, col in zip(axes, params):
            values = sorted(board[col].dropna().unique(), key=lambda v: (isinstance(v, str), v))
            pos = {v: i for i, v in enumerate(values)}
            ax.scatter([pos[v] for v in board[col]], board["mean"], alpha=0.6)
            means = board.groupby(col)["mean"].mean()
            ax.plot(range(len(values)), [means[v] for v in values], color="black", marker="_", linestyle="none",
                    markersize=20)
            ax.set_xticks(range(len(values)), [str(v) for v in values])
            ax.set_xlabel(col[len("param_"):])
            ax.set_ylabel(board["metric"].iloc[0] if len(board) else "")
        return axes


class Report:
    """An HTML report file; shown inline in Jupyter."""

    def __init__(self, path):
        self.path = path

    def __repr__(self):
        return f"foldsweep.Report({self.path!r})"

    def _repr_html_(self):
        # In a frame of its own: the page's styles and scripts stay out of
        # the notebook's (and the notebook's out of the page's).
        import html
        with io.open(self.path, encoding="utf-8") as f:
            page = f.read()
        return (f'<iframe srcdoc="{html.escape(page, quote=True)}" style="width: 100%; height: 640px; '
                'border: 1px solid #ccc"></iframe>')
