#!/usr/bin/env bash
# `pip install .` as a user does it (pyproject.toml, scikit-build-core), into
# a fresh virtual environment, then the installed package from outside the
# source tree: `import foldsweep` finds its own libfoldsweep.so, `foldsweep`
# is on the environment's PATH, foldsweep_torch is importable, and a run,
# its leaderboard and a prediction work end to end. Then
# examples/quickstart.ipynb is executed headless (nbclient) on a kernel of
# that environment; any error in a cell fails the test.
#   tests/python_package.sh SOURCE_DIR WORK_DIR
# Exit 77 (skip) where no venv can be made or PyPI (scikit-build-core) is
# out of reach.
set -euo pipefail
src=$1
work=$2
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
rm -rf "$work"
mkdir -p "$work"
if ! "$py" -m venv --system-site-packages "$work/venv" >"$work/venv.log" 2>&1; then
    echo "python_package: skipped: $py -m venv failed (apt-get install python3-venv): $(tail -n 1 "$work/venv.log")"
    exit 77
fi
# The system's numpy, pandas and torch stay visible (--system-site-packages);
# CUDA off: the wheel's kernels are the plain build's (minutes of nvcc).
if ! "$work/venv/bin/pip" install --disable-pip-version-check "$src" \
    --config-settings=cmake.define.FOLDSWEEP_CUDA=OFF --config-settings=build-dir="$work/build" \
    >"$work/pip.log" 2>&1; then
    if grep -qE "Failed to establish|Temporary failure in name resolution|Could not find a version that satisfies the requirement scikit-build-core|No matching distribution found for scikit-build-core|Network is unreachable" "$work/pip.log"; then
        echo "python_package: skipped: PyPI is out of reach for the build backend (scikit-build-core): $(grep -m1 -E 'Failed|Could not|No matching|unreachable' "$work/pip.log")"
        exit 77
    fi
    echo "python_package: pip install failed:"
    tail -n 40 "$work/pip.log"
    exit 1
fi
cd "$work"
export PATH="$work/venv/bin:$PATH"
unset FOLDSWEEP_LIBRARY PYTHONPATH
foldsweep --version | head -n 1 | grep -q '^foldsweep ' || { echo "python_package: no foldsweep on PATH"; exit 1; }
VENV="$work/venv" "$work/venv/bin/python" - <<'PY'
import os, sys
import numpy as np
import foldsweep, foldsweep_torch

venv = os.environ["VENV"]
fails = []
def check(ok, msg):
    if not ok:
        fails.append(msg)
        print("FAIL:", msg)

check(foldsweep.__file__.startswith(venv), f"foldsweep imported from {foldsweep.__file__}, not the venv")
import importlib.metadata
dist = importlib.metadata.version("foldsweep")
check(dist == foldsweep.__version__, f"the package's metadata says {dist}, the library {foldsweep.__version__} "
      "(both from CMakeLists.txt's project VERSION)")
check(foldsweep_torch.__file__.startswith(venv), f"foldsweep_torch from {foldsweep_torch.__file__}")
lib = os.path.join(os.path.dirname(foldsweep.__file__), "libfoldsweep.so")
check(os.path.exists(lib), "libfoldsweep.so beside the package")
check(os.path.exists(os.path.join(os.path.dirname(foldsweep.__file__), "include", "foldsweep.h")),
      "foldsweep.h installed with the package")
sweep = {"data": {"synth": {"proteins": 60, "seed": 1}, "window": 11, "folds": 2},
         "model": {"depth": 1, "filters": [8, 16], "dense": 16}, "training": {"epochs": 2},
         "run": {"backend": "cpu", "threads": 2}}
run = foldsweep.run(sweep, out="runs/pkg", progress=False, quiet=True)
board = run.leaderboard()
check(len(board) == 2 and board["status"].eq("ok").all(), f"leaderboard: {board[['rank', 'id', 'status']]}")
p = run.model().predict("MKVLAAGIVALLLAAGCSS")
check(p.shape == (19, 3) and np.allclose(p.sum(axis=1), 1, atol=1e-5), f"predict: {p.shape}")
if fails:
    sys.exit(1)
print("python_package: ok (", foldsweep.__version__, "from", os.path.dirname(foldsweep.__file__), ")")
PY

# The notebook, on a kernel of this environment (its own kernel spec), from
# a copy of examples/ beside sweeps/ as in the repository.
if ! "$work/venv/bin/python" -c "import nbclient, nbformat, ipykernel" >/dev/null 2>&1; then
    echo "python_package: the notebook is not run: nbclient, nbformat or ipykernel is missing (apt-get install python3-nbclient python3-ipykernel)"
    exit 0
fi
mkdir -p "$work/nb/examples" "$work/nb/sweeps"
cp "$src/examples/quickstart.ipynb" "$work/nb/examples/"
cp "$src/sweeps/quickstart.yaml" "$work/nb/sweeps/"
"$work/venv/bin/python" -m ipykernel install --prefix "$work/venv" --name foldsweep-test >/dev/null 2>&1
JUPYTER_PATH="$work/venv/share/jupyter" "$work/venv/bin/python" - "$work/nb/examples/quickstart.ipynb" <<'PY'
import sys, time
import nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
t = time.time()
NotebookClient(nb, kernel_name="foldsweep-test", timeout=600,
               resources={"metadata": {"path": path.rsplit("/", 1)[0]}}).execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
assert not errors, errors
nbformat.write(nb, path + ".executed.ipynb")
print(f"python_package: examples/quickstart.ipynb executed: {sum(c.cell_type == 'code' for c in nb.cells)} cells "
      f"in {time.time() - t:.1f} s")
PY
