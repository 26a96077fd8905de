"""foldsweep from Python: run sweeps, read run folders as DataFrames,
predict with trained models, hand them to PyTorch (docs/python.md).

    import foldsweep
    run = foldsweep.run("sweeps/quickstart.yaml", out="runs/quickstart")
    run.leaderboard()                     # pandas DataFrame, the CSV's columns
    run.curves()                          # a row per (trial, fold, epoch)
    ens = run.model(rank=1)               # the best trial's fold ensemble
    ens.predict("MKVLAAGIVALLLAAGCSS")    # numpy [length, 3]: H E C

Everything runs in the C library (libfoldsweep.so, src/api/foldsweep.h)
that the `foldsweep` command is built from: the same run folders, the same
numbers, bit for bit.
"""

from ._native import FoldsweepError
from ._run import Run, open, run
from ._ensemble import Ensemble, load
from . import _native

__version__ = _native.lib.foldsweep_version().decode().split()[-1]


def main(*args):
    """The command line in this process: `foldsweep.main("plan", "s.yaml")`.
    Returns its standard output; raises FoldsweepError on an error exit.
    `run` is foldsweep.run (its output is the progress, not a result)."""
    if args and str(args[0]) == "run":
        raise FoldsweepError("foldsweep.main('run', ...): use foldsweep.run(sweep, ...), which shows the progress "
                             "and returns the Run", _native.EXIT_USAGE)
    return _native.main([str(a) for a in args])[1]


__all__ = ["run", "open", "load", "main", "Run", "Ensemble", "FoldsweepError", "__version__"]
