"""libfoldsweep.so through ctypes: the one place the package meets C.

Every call goes to the library API (src/api/foldsweep.h). Messages the C
code prints on standard error are captured around each call (the notebook
user sees none of the process's stderr) and become FoldsweepError's text,
or warnings printed on sys.stderr after a call that succeeded.
"""

import contextlib
import ctypes
import os
import sys
import tempfile
import threading

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 3


class FoldsweepError(RuntimeError):
    """A foldsweep call failed: its message is the command line's."""

    def __init__(self, message, code=EXIT_ERROR):
        super().__init__(message)
        self.code = code


ProgressFn = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)


class RunOptions(ctypes.Structure):
    _fields_ = [("sweep", ctypes.c_char_p), ("sweep_text", ctypes.c_char_p), ("out", ctypes.c_char_p),
                ("threads", ctypes.c_int), ("backend", ctypes.c_char_p), ("quiet", ctypes.c_int),
                ("restart", ctypes.c_int), ("grace", ctypes.c_double), ("progress", ProgressFn),
                ("user", ctypes.c_void_p)]


class ModelOptions(ctypes.Structure):
    _fields_ = [("trial", ctypes.c_char_p), ("rank", ctypes.c_int), ("fold", ctypes.c_int),
                ("features", ctypes.c_char_p)]


class Prediction(ctypes.Structure):
    _fields_ = [("n_proteins", ctypes.c_uint32), ("n_residues", ctypes.c_uint32), ("classes", ctypes.c_int),
                ("offsets", ctypes.POINTER(ctypes.c_uint32)), ("probs", ctypes.POINTER(ctypes.c_float)),
                ("agreement", ctypes.POINTER(ctypes.c_float))]


API_VERSION = 1  # FOLDSWEEP_API_VERSION of the header these prototypes follow


def _library_path():
    """FOLDSWEEP_LIBRARY (a build tree's libfoldsweep.so), else the one
    installed beside this package."""
    given = os.environ.get("FOLDSWEEP_LIBRARY")
    if given:
        return given
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libfoldsweep.so")


def _prototypes(lib):
    c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p
    table = {
        "foldsweep_api_version": (c_int, []),
        "foldsweep_version": (c_char_p, []),
        "foldsweep_free": (None, [c_void_p]),
        "foldsweep_cpu_missing": (c_int, [c_char_p, ctypes.c_size_t]),
        "foldsweep_main": (c_int, [c_int, ctypes.POINTER(c_char_p)]),
        "foldsweep_run": (c_int, [ctypes.POINTER(RunOptions)]),
        "foldsweep_run_mpi": (c_int, [ctypes.POINTER(RunOptions), c_void_p]),
        "foldsweep_run_folder": (c_int, [ctypes.POINTER(RunOptions), c_char_p, ctypes.c_size_t]),
        "foldsweep_leaderboard": (c_int, [c_char_p, c_char_p, c_int, ctypes.POINTER(c_void_p)]),
        "foldsweep_curves": (c_int, [c_char_p, ctypes.POINTER(c_void_p)]),
        "foldsweep_model_open": (c_int, [c_char_p, ctypes.POINTER(ModelOptions), ctypes.POINTER(c_void_p)]),
        "foldsweep_model_close": (None, [c_void_p]),
        "foldsweep_model_classes": (c_int, [c_void_p]),
        "foldsweep_model_count": (c_int, [c_void_p]),
        "foldsweep_model_file": (c_char_p, [c_void_p, c_int]),
        "foldsweep_model_trial": (c_char_p, [c_void_p]),
        "foldsweep_predict": (c_int, [c_void_p, c_char_p, ctypes.c_size_t, c_int,
                                      ctypes.POINTER(ctypes.POINTER(Prediction))]),
        "foldsweep_prediction_free": (None, [ctypes.POINTER(Prediction)]),
    }
    for name, (res, args) in table.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"foldsweep: cannot load its library {path}: {e} (pip install . builds it; "
                          "FOLDSWEEP_LIBRARY names another)") from None
    lib.foldsweep_cpu_missing.restype = ctypes.c_int
    lib.foldsweep_cpu_missing.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(256)
    if lib.foldsweep_cpu_missing(buf, len(buf)):
        raise ImportError(f"foldsweep: this CPU lacks {buf.value.decode()}, which {path} was compiled to use; "
                          "reinstall it on this machine (pip install . builds for the machine it runs on)")
    _prototypes(lib)
    if lib.foldsweep_api_version() != API_VERSION:
        raise ImportError(f"foldsweep: {path} has library API version {lib.foldsweep_api_version()}, "
                          f"this package expects {API_VERSION}: reinstall the package")
    return lib


lib = _load()
# One call at a time: the library redirects nothing itself, but a run owns
# the process's signals and threads, and the capture below owns fd 1 and 2.
_lock = threading.Lock()
# Set on the run's progress thread while on_progress runs: a foldsweep call
# from there would wait for the run that waits for it.
in_callback = threading.local()


def _b(s):
    return None if s is None else os.fsencode(s) if not isinstance(s, bytes) else s


@contextlib.contextmanager
def _captured(fd):
    """fd (1 or 2) into a temporary file for the block; .text afterwards."""
    class Box:
        text = ""
    box = Box()
    libc_flush()  # what C buffered before the call goes where it was meant to
    for f in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            f.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            yield box
        finally:
            libc_flush()
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            box.text = tmp.read().decode("utf-8", "replace")


_libc = ctypes.CDLL(None)


def libc_flush():
    _libc.fflush(None)


def call(fn, *args, capture_out=False, what=None):
    """fn(*args) with its messages captured: returns (code, stdout text)
    and raises FoldsweepError on an error exit, KeyboardInterrupt on exit 3
    (a signal stopped it: the run folder resumes). Warnings of a call that
    succeeded are written to sys.stderr."""
    if getattr(in_callback, "on", False):
        raise FoldsweepError("foldsweep cannot be called from on_progress (the run waits for the callback): "
                             "keep the event and call after run() returns", EXIT_USAGE)
    with _lock:
        out = contextlib.nullcontext(None)
        with _captured(2) as err, (_captured(1) if capture_out else out) as got:
            code = fn(*args)
    text = err.text.strip()
    if code == EXIT_INTERRUPTED:
        if text:
            sys.stderr.write(text + "\n")
        raise KeyboardInterrupt(f"foldsweep: {what or 'the call'} stopped; run it again to resume")
    if code != EXIT_OK:
        raise FoldsweepError(text or f"foldsweep: {what or 'the call'} failed (exit {code})", code)
    if text:
        sys.stderr.write(text + "\n")
    return code, (got.text if capture_out else None)


def main(args):
    """The command line in this process: (exit code, standard output)."""
    argv = (ctypes.c_char_p * (len(args) + 2))(b"foldsweep", *[_b(a) for a in args], None)
    return call(lib.foldsweep_main, len(args) + 1, argv, capture_out=True, what=args[0] if args else None)


def take_text(ptr):
    """A malloc'd C string returned through a void** into str, freed."""
    try:
        return ctypes.string_at(ptr).decode("utf-8") if ptr else ""
    finally:
        lib.foldsweep_free(ptr)
