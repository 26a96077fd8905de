"""The Python package's run on an mpi4py communicator (foldsweep.run(...,
comm=...), the library's foldsweep_run_mpi), under mpirun:

    mpirun -n 3 python3 tests/python_mpi.py BUILD/libfoldsweep.so WORK

Every rank runs the same sweep on MPI.COMM_WORLD; rank 0 then runs it alone
in its own process (no communicator) into another folder and checks that
the two leaderboards rank the same trials with the same scores, bit for bit
(identical numbers on any number of ranks), and that the workers trained
folds (the run records say so). Exit 77 (skip) without mpi4py or pandas.
"""
import json
import os
import sys

try:
    from mpi4py import MPI
    import pandas as pd
except ImportError as e:
    print(f"python_mpi: skipped: {e} (apt-get install python3-mpi4py python3-pandas)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["FOLDSWEEP_LIBRARY"] = os.path.abspath(sys.argv[1])
work = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import foldsweep  # noqa: E402

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
SWEEP = {"data": {"synth": {"proteins": 90, "seed": 8}, "window": 11, "folds": 3, "fold_seed": 1},
         "model": {"depth": [1, 2], "filters": [8, 16], "dense": 16},
         "training": {"epochs": 3, "seed": 1}, "run": {"backend": "cpu", "threads": 1}}
if rank == 0:
    os.makedirs(work, exist_ok=True)
comm.Barrier()
os.chdir(work)
run = foldsweep.run(SWEEP, out="ranks", progress=False, quiet=True, comm=comm)
comm.Barrier()
fails = []
if rank == 0:
    alone = foldsweep.run(SWEEP, out="alone", progress=False, quiet=True)
    cols = ["rank", "id", "mean", "std", "fold0_q3", "fold1_q3", "fold2_q3"]
    a, b = run.leaderboard()[cols], alone.leaderboard()[cols]
    if not a.equals(b):
        fails.append(f"the leaderboard on {comm.Get_size()} ranks differs from one process's:\n{a}\n{b}")
    st = run.status()
    if st["state"] != "finished" or st["folds_done"] != 12:
        fails.append(f"status on ranks: {st['state']}, {st['folds_done']} folds")
    records = [json.loads(line) for line in open("ranks/journal.jsonl") if line.strip()]
    ranks = [r.get("ranks") for r in records if r.get("kind") == "run"]
    if not ranks or ranks[-1] != comm.Get_size():
        fails.append(f"the run record's ranks: {ranks}, expected {comm.Get_size()}")
    for f in fails:
        print("FAIL:", f, flush=True)
    print(f"python_mpi: {'ok' if not fails else 'FAILED'} ({comm.Get_size()} ranks)", flush=True)
code = comm.bcast(1 if fails else 0, root=0)
sys.exit(code)
