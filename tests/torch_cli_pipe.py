#!/usr/bin/env python3
"""python/foldsweep_torch.py's command line writing into a closed pipe
(`... | head -1` once head has its line): it ends quietly, as SIGPIPE ends
any Unix filter, not with a BrokenPipeError traceback. The reader's end
is closed before the command writes, so the write fails every time (no
race with head). Needs no PyTorch: the command (cli) runs with stand-ins
for the models and the forward pass; what is tested is what it does with
its output.

    python3 tests/torch_cli_pipe.py
"""
import os
import signal
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
python_dir = os.path.join(here, "..", "python")

# The command with stand-ins: every residue predicted H.
RUN = r"""
import sys
sys.path.insert(0, sys.argv[1])
import foldsweep_torch as ft
class P:
    def __init__(self, n): self.n = n
    def argmax(self, dim): return self
    def tolist(self): return [0] * self.n
ft._need_torch = lambda: None
ft.load_ensemble = lambda models: [object()]
ft.predict = lambda models, seq, batch: P(len(seq))
ft.classes_of = lambda models: "HEC"
sys.exit(getattr(ft, "cli", ft.main)(sys.argv[2:]))
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        fasta = os.path.join(tmp, "in.fasta")
        with open(fasta, "w") as f:
            for i in range(2000):
                f.write(f">p{i}\nMKVLAAGIVGLLLAQSPERTWYHHE\n")
        r, w = os.pipe()
        os.close(r)  # the reader is gone before a byte is written
        p = subprocess.run([sys.executable, "-c", RUN, python_dir, "models", fasta], stdout=w,
                           stderr=subprocess.PIPE)
        os.close(w)
    err = p.stderr.decode(errors="replace")
    print(f"foldsweep_torch.py into a closed pipe: exit {p.returncode}, stderr {err[-400:]!r}")
    if p.returncode != -signal.SIGPIPE or err:
        print("FAIL: expected the quiet end of a filter whose reader left (SIGPIPE) and nothing on stderr")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
