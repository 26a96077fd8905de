"""foldsweep's trained models in PyTorch (docs/models.md).

Standard library and torch only: the safetensors files are parsed here, so
nothing but PyTorch needs installing.

    import foldsweep_torch as ft
    models = ft.load_ensemble("r1-best")     # folder from `foldsweep export`
    probs = ft.predict(models, "MKVLAAGIVAL") # [length, 3], H E C

Window models are an nn.Sequential over one-hot windows [batch, 21, W]
returning [batch, 3] logits; chain models (`data.window: chain`) a
Residual (an nn.Sequential whose Add modules reach back to an earlier
module's output) over whole chains [batch, 21, length] returning
[batch, 3, length]. predict takes either kind. A model trained with
feature columns (`data.features`) reads 21 + D channels (one-hot first, or
the D alone without onehot): pass the protein's [length, D] columns as
predict's `features`.

Command line: python3 foldsweep_torch.py MODEL... INPUT.fasta
(MODEL: an exported folder or .safetensors files) prints, per protein, the
three lines `>id`, the sequence and the predicted states.
"""

import array
import copy
import glob
import json
import math
import os
import signal
import struct
import sys

try:
    import torch
    from torch import nn
except ImportError:  # the FASTA reader (read_fasta) works without PyTorch
    torch = nn = None

ALPHABET = "ACDEFGHIKLMNPQRSTVWYX"
CLASSES = "HEC"
CLASSES8 = "HGIEBTSC"  # an 8-state model's (data.classes: 8): DSSP's states, foldsweep's order


def classes_of(models):
    """The class letters of a model or an ensemble: the output width's (3 or 8)."""
    m = models[0] if isinstance(models, (list, tuple)) else models
    return getattr(m, "classes", CLASSES)
FORMAT = "foldsweep-model"
FORMAT_VERSION = "1"
MAX_LAYERS = 16  # foldsweep's limit, the output layer not counted
MAX_DILATION = 64  # foldsweep's widest spacing of a chain model's taps
MAX_RNN_UNITS = 1024  # a gru's or lstm's units (each direction's), foldsweep's FS_MAX_RNN_UNITS
MAX_HEADS, MAX_KEY_DIM, MAX_ATT_DIST = 16, 256, 128  # an attention layer's limits (FS_MAX_HEADS, ...)
MAX_FEATURES = 8192  # foldsweep's most feature columns per residue (FS_FEAT_MAX_DIM)
_INDEX = {a: i for i, a in enumerate(ALPHABET)}
_X = ALPHABET.index("X")


class Highway(nn.Module if nn is not None else object):
    """y = T*H + (1 - T)*x, H = act(h(x)), T = sigmoid(t(x)); h, t keep the channels.

    padding: K//2 (a window model's) or 'same' (a chain model's); dilation:
    the taps' spacing (chain models)."""

    def __init__(self, channels, width, act=None, dilation=1, padding=None):
        super().__init__()
        if padding is None:
            padding = width // 2 * dilation
        self.h = nn.Conv1d(channels, channels, width, padding=padding, dilation=dilation)
        self.t = nn.Conv1d(channels, channels, width, padding=padding, dilation=dilation)
        self.act = act if act is not None else nn.Identity()

    def forward(self, x):
        t = torch.sigmoid(self.t(x))
        return t * self.act(self.h(x)) + (1.0 - t) * x


class LayerNorm(nn.LayerNorm if nn is not None else object):
    """foldsweep's layernorm: nn.LayerNorm over each position's channels, on
    [batch, C, length] (transposed to put the channels last and back) or on a
    dense layer's [batch, C]. The state-dict names are nn.LayerNorm's."""

    def forward(self, x):
        if x.dim() == 3:
            return super().forward(x.transpose(1, 2)).transpose(1, 2)
        return super().forward(x)


class GRU(nn.Module if nn is not None else object):
    """foldsweep's gru (a chain model's): nn.GRU(C, units, batch_first=True,
    bidirectional) as .rnn over [batch, C, length], each batch row one chain
    (the state starts at zero at its first residue and the backward
    direction at its last); out [batch, units or 2 x units, length], the
    forward direction's outputs then the backward's. The state-dict names
    are nn.GRU's: .rnn.weight_ih_l0, .rnn.weight_hh_l0_reverse, ..."""

    cell = "GRU"

    def __init__(self, channels, units, bidirectional):
        super().__init__()
        self.rnn = getattr(nn, self.cell)(channels, units, batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        return self.rnn(x.transpose(1, 2))[0].transpose(1, 2)


class LSTM(GRU):
    """foldsweep's lstm: as GRU, with nn.LSTM (gates i, f, g, o; the cell
    state, like the hidden one, zero at each chain's start)."""

    cell = "LSTM"


class Attention(nn.Module if nn is not None else object):
    """foldsweep's attention (a chain model's): multi-head self-attention over
    each batch row's whole chain [batch, C, length], then the residual add
    and the layer norm: norm(x + out(softmax(q k^T / sqrt(key_dim) + rel) v)).
    q, k, v: nn.Linear(C, heads x key_dim), each head's key_dim columns in
    turn; rel: nn.Embedding(2 max_distance + 1, heads), the learned bias of
    the distance j - i clipped to +-max_distance; drop: the dropout on the
    attention weights (training only); norm: nn.LayerNorm(C)."""

    def __init__(self, channels, heads, key_dim, max_distance, dropout, eps):
        super().__init__()
        hd = heads * key_dim
        self.heads, self.key_dim, self.max_distance = heads, key_dim, max_distance
        self.q = nn.Linear(channels, hd)
        self.k = nn.Linear(channels, hd)
        self.v = nn.Linear(channels, hd)
        self.out = nn.Linear(hd, channels)
        self.norm = nn.LayerNorm(channels, eps=eps)
        self.rel = nn.Embedding(2 * max_distance + 1, heads)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x.transpose(1, 2)  # [batch, length, C]
        b, n, _ = x.shape
        h, d, m = self.heads, self.key_dim, self.max_distance

        def heads(t):
            return t.view(b, n, h, d).transpose(1, 2)  # [batch, heads, length, key_dim]

        pos = torch.arange(n, device=x.device)
        bucket = (pos[None, :] - pos[:, None]).clamp(-m, m) + m  # [i, j]: j - i clipped
        scores = heads(self.q(x)) @ heads(self.k(x)).transpose(-1, -2) / math.sqrt(d)
        scores = scores + self.rel(bucket).permute(2, 0, 1)
        ctx = self.drop(torch.softmax(scores, dim=-1)) @ heads(self.v(x))
        return self.norm(x + self.out(ctx.transpose(1, 2).reshape(b, n, h * d))).transpose(1, 2)

    def extra_repr(self):
        return f"heads={self.heads}, key_dim={self.key_dim}, max_distance={self.max_distance}"


class Add(nn.Module if nn is not None else object):
    """A residual block's end (foldsweep's add layer): x + proj(skip), skip the
    output of module `source` of the Residual holding it (the block's input).
    proj is Conv1d(C_src, C, 1, bias=False) where the widths differ, else
    absent (the identity). Called by Residual.forward, never alone."""

    def __init__(self, source, c_src, c):
        super().__init__()
        self.source = source
        self.proj = nn.Conv1d(c_src, c, 1, bias=False) if c_src != c else None

    def forward(self, x, skip):
        if self.proj is not None:
            # A window model's block may start or end at a dense layer of one
            # position ([B, C]): the projection reads [B, C, 1].
            skip = self.proj(skip.unsqueeze(-1) if skip.dim() == 2 else skip)
        return x + skip.reshape(x.shape)

    def extra_repr(self):
        return f"source={self.source}"


class Residual(nn.Sequential if nn is not None else object):
    """An nn.Sequential whose Add modules add the output of an earlier module
    (its `source` index) to their input: the state-dict names are those of
    the plain Sequential (docs/models.md), and forward walks the modules in
    order, keeping the outputs a later Add reads."""

    def forward(self, x):
        keep = {m.source for m in self if isinstance(m, Add)}
        outs = {}
        for i, m in enumerate(self):
            x = m(x, outs[m.source]) if isinstance(m, Add) else m(x)
            if i in keep:
                outs[i] = x
        return x


# ---------------------------------------------------------------------------
# safetensors


SEEN = "foldsweep.seen_proteins"  # U64 fingerprints of the proteins the run saw (not a weight)


def _need_torch():
    if torch is None:
        raise ImportError(f"PyTorch is not installed for {sys.executable}: the models need it (pip install torch, "
                          "or apt-get install python3-torch); only read_fasta / parse_fasta work without it")


def read_safetensors(path):
    """(tensors {name: float32 tensor}, metadata {str: str}) of a foldsweep model file.

    The one U64 tensor, foldsweep.seen_proteins (the leakage guard's
    fingerprints), is checked and left out: it is not a weight."""
    _need_torch()
    where = str(path)
    if os.path.isdir(path):
        raise ValueError(f"{where} is a folder: load() reads one .safetensors model file; load_ensemble() reads "
                         "a folder `foldsweep export` wrote")
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:1] == b"{":
        raise ValueError(f"{where}: a JSON file, not a model: for an exported folder's models use "
                         "load_ensemble(its folder)")
    if len(raw) < 8:
        raise ValueError(f"{where}: {len(raw)} bytes; not a safetensors file (no 8-byte header length)")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError(f"{where}: header length {n} runs past the end of the file ({len(raw)} bytes)")
    try:
        header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{where}: the safetensors header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{where}: the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError(f"{where}: __metadata__ must be an object of strings")
    data = memoryview(raw)[8 + n :]
    tensors = {}
    for name, t in header.items():
        if not isinstance(t, dict):
            raise ValueError(f"{where}: tensor {name!r}: expected an object with dtype, shape, data_offsets")
        dtype, shape, offs = t.get("dtype"), t.get("shape"), t.get("data_offsets")
        size = {"U64": 8, "U32": 4, "U8": 1}.get(dtype)
        if name.startswith("foldsweep.") and size:  # the leakage guard's memory, not a weight
            if not isinstance(shape, list) or len(shape) != 1 or not isinstance(offs, list) or len(offs) != 2:
                raise ValueError(f"{where}: tensor {name!r}: expected a 1-D {dtype} tensor")
            if offs[1] - offs[0] != size * shape[0] or not 0 <= offs[0] <= offs[1] <= len(data):
                raise ValueError(f"{where}: tensor {name!r}: data_offsets {offs!r} do not hold {shape[0]} {dtype} values")
            continue
        if dtype != "F32":
            raise ValueError(f"{where}: tensor {name!r} has dtype {dtype!r}; foldsweep models hold F32 tensors only")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ValueError(f"{where}: tensor {name!r}: shape {shape!r} is not a list of sizes")
        if (
            not isinstance(offs, list)
            or len(offs) != 2
            or not all(isinstance(o, int) for o in offs)
            or not 0 <= offs[0] <= offs[1] <= len(data)
        ):
            raise ValueError(f"{where}: tensor {name!r}: data_offsets {offs!r} outside the {len(data)} data bytes")
        numel = math.prod(shape)
        if offs[1] - offs[0] != 4 * numel:
            raise ValueError(
                f"{where}: tensor {name!r}: shape {shape} needs {4 * numel} bytes, data_offsets give {offs[1] - offs[0]}"
            )
        buf = bytearray(data[offs[0] : offs[1]])
        if sys.byteorder == "big":
            a = array.array("f", bytes(buf))
            a.byteswap()
            buf = bytearray(a.tobytes())
        tensors[name] = torch.frombuffer(buf, dtype=torch.float32).reshape(shape) if numel else torch.zeros(shape)
    return tensors, dict(meta)


# ---------------------------------------------------------------------------
# building the Sequential


def _activation(layer, where):
    act = layer.get("activation", "linear")
    p = float(layer.get("act_param", 0))
    if act == "linear":
        return None
    if act == "relu":
        return nn.ReLU()
    if act == "leaky_relu":
        return nn.LeakyReLU(p)
    if act == "swish":
        return nn.SiLU()
    if act == "tanh":
        return nn.Tanh()
    if act == "elu":
        return nn.ELU(alpha=p)
    raise ValueError(f"{where}: unknown activation {act!r}")


def _int(layer, key, lo, hi, where):
    v = layer.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise ValueError(f"{where}: {key} must be an integer from {lo} to {hi}, got {v!r}")
    return v


def _num(layer, key, where):
    v = layer.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise ValueError(f"{where}: {key} must be a number, got {v!r}")
    return float(v)


def build(arch):
    """The model (untrained) of an arch object ({"window", "layers"}), by docs/models.md.

    A window model ("window": W, odd) is an nn.Sequential over [batch, 21, W]
    returning [batch, 3]; a chain model ("window": "chain") a Residual over
    [batch, 21, length] returning [batch, 3, length]. A window model with a
    residual add is a Residual too. The result has .chain (bool) and
    .window (W, or "chain")."""
    if not isinstance(arch, dict) or not isinstance(arch.get("layers"), list):
        raise ValueError('arch: expected {"window": W or "chain", "layers": [...]}')
    chain = arch.get("window") == "chain"
    if chain:
        window = "chain"
    else:
        if isinstance(arch.get("window"), str):
            raise ValueError(f'arch: window must be an odd integer from 1 to 255 or "chain", got {arch["window"]!r}')
        window = _int(arch, "window", 1, 255, "arch")
        if window % 2 == 0:
            raise ValueError(f"arch: window must be odd, got {window}")
    layers = arch["layers"]
    if not 1 <= len(layers) <= MAX_LAYERS + 1:
        raise ValueError(f"arch: expected 1 to {MAX_LAYERS + 1} layers (the output last), got {len(layers)}")
    mods = []
    # l: positions (None along a chain); ends[i], chans[i], lens[i]: the module
    # index, channels and positions of foldsweep layer i's output.
    onehot, n_features = _input(arch)
    c, l, flat = (len(ALPHABET) if onehot else 0) + n_features, (None if chain else window), False
    ends, chans, lens = [], [], []
    residual = chain
    for i, y in enumerate(layers):
        kind = y.get("kind") if isinstance(y, dict) else None
        where = f"arch: layer {i + 1} ({kind})"
        last = i == len(layers) - 1
        if (kind == "output") != last:
            raise ValueError(f"{where}: the output layer must be last, and only last")
        if i == 0 and kind not in ("conv1d", "dense", "output"):
            raise ValueError(f"{where}: the first layer must be conv1d or dense (it reads the one-hot input)")
        if isinstance(y, dict) and "dilation" in y and kind not in ("conv1d", "highway"):
            raise ValueError(f"{where}: only conv1d and highway layers take a dilation")
        if kind in ("conv1d", "highway"):
            k = _int(y, "width", 1, 255, where)
            d = _int(y, "dilation", 1, MAX_DILATION, where) if "dilation" in y else 1
            if flat:
                mods.append(nn.Unflatten(1, (c, 1)))
                flat = False
            if k % 2 == 0 or (not chain and k > l):
                raise ValueError(f"{where}: width must be odd and at most the input length {l}, got {k}")
            if not chain and d > 1:
                raise ValueError(f"{where}: dilation needs a chain model (window \"chain\"), got {d}")
            # A window model's padding K//2 equals 'same' for odd K; the chain
            # model's is spelled as PyTorch users write it.
            pad = "same" if chain else k // 2
            act = _activation(y, where)
            if kind == "conv1d":
                f = _int(y, "filters", 1, 1 << 20, where)
                mods.append(nn.Conv1d(c, f, k, padding=pad, dilation=d))
                if act is not None:
                    mods.append(act)
                c = f
            else:
                mods.append(Highway(c, k, act, dilation=d, padding=pad))
        elif kind in ("dense", "output"):
            if kind == "output":
                u = _int(y, "units", len(CLASSES), len(CLASSES8), where)
                if u not in (len(CLASSES), len(CLASSES8)):
                    raise ValueError(f"{where}: output units {u}: expected {len(CLASSES)} or {len(CLASSES8)}")
                act = None
            else:
                u = _int(y, "units", 1, 1 << 20, where)
                act = _activation(y, where)
            if chain:  # on each residue: a width-1 convolution, no Flatten
                mods.append(nn.Conv1d(c, u, 1))
            else:
                if not flat:
                    mods.append(nn.Flatten())
                    flat = True
                mods.append(nn.Linear(c * l, u))
                l = 1
            if act is not None:
                mods.append(act)
            c = u
        elif kind == "batchnorm":
            eps, m = _num(y, "eps", where), _num(y, "momentum", where)
            if not eps > 0 or not 0 <= m < 1:
                raise ValueError(f"{where}: eps must be > 0 and momentum in [0, 1), got {eps} and {m}")
            mods.append(nn.BatchNorm1d(c, eps=eps, momentum=1.0 - m))
        elif kind == "layernorm":
            eps = _num(y, "eps", where)
            if not 0 < eps <= 1:
                raise ValueError(f"{where}: eps must be > 0 and <= 1, got {eps}")
            mods.append(LayerNorm(c, eps=eps))
        elif kind in ("gru", "lstm"):
            if not chain:
                raise ValueError(f"{where}: recurrent layers belong to chain models (window \"chain\")")
            u = _int(y, "units", 1, MAX_RNN_UNITS, where)
            bd = y.get("bidirectional")
            if not isinstance(bd, bool):
                raise ValueError(f"{where}: bidirectional must be true or false, got {bd!r}")
            mods.append((GRU if kind == "gru" else LSTM)(c, u, bd))
            c = u * (2 if bd else 1)
        elif kind == "attention":
            if not chain:
                raise ValueError(f"{where}: attention layers belong to chain models (window \"chain\")")
            h = _int(y, "heads", 1, MAX_HEADS, where)
            kd = _int(y, "key_dim", 1, MAX_KEY_DIM, where)
            md = _int(y, "max_distance", 1, MAX_ATT_DIST, where)
            r, eps = _num(y, "dropout", where), _num(y, "eps", where)
            if not 0 <= r < 1 or not 0 < eps <= 1:
                raise ValueError(f"{where}: dropout must be in [0, 1) and eps > 0 and <= 1, got {r} and {eps}")
            mods.append(Attention(c, h, kd, md, r, eps))
        elif kind == "dropout":
            r = _num(y, "rate", where)
            if not 0 <= r < 1:
                raise ValueError(f"{where}: rate must be in [0, 1), got {r}")
            mods.append(nn.Dropout(r))
        elif kind == "add":
            # The block's input is the output of the layer `layers` layers
            # before this one's input (foldsweep's src = i - 1 - layers).
            n = _int(y, "layers", 1, MAX_LAYERS, where)
            if i < 2 or n > i - 1:
                raise ValueError(
                    f"{where}: a residual block spans 1 to {max(i - 1, 0)} layers after the first "
                    f"(the one-hot input starts none), got {n}"
                )
            src = i - 1 - n
            if lens[src] != l:
                raise ValueError(
                    f"{where}: its block's input has {lens[src]} positions and its output {l} "
                    "(a dense layer between them flattens the window)"
                )
            mods.append(Add(ends[src], chans[src], c))
            residual = True
        else:
            raise ValueError(f"arch: layer {i + 1}: unknown kind {kind!r}")
        ends.append(len(mods) - 1)
        chans.append(c)
        lens.append(l)
    model = (Residual if residual else nn.Sequential)(*mods)
    model.chain = chain
    model.window = window
    model.onehot = onehot
    model.features = n_features
    return model


def _input(arch):
    """(one-hot read, feature columns) of an arch: its optional "input"."""
    inp = arch.get("input")
    if inp is None:
        return True, 0
    if not isinstance(inp, dict) or not isinstance(inp.get("onehot"), bool):
        raise ValueError('arch: input: expected {"onehot": true or false, "features": 0..8192}')
    d = _int(inp, "features", 0, MAX_FEATURES, "arch: input")
    if not inp["onehot"] and d == 0:
        raise ValueError("arch: input: neither one-hot codes nor feature columns")
    return inp["onehot"], d


def load(path):
    """(model in eval mode, metadata dict) of one foldsweep model file.

    The model (build's: an nn.Sequential of a window model, a Residual of a
    chain model) has `.window` (the input window, or "chain"), `.chain` and
    `.metadata` set too."""
    tensors, meta = read_safetensors(path)
    where = str(path)
    if meta.get("format") != FORMAT:
        raise ValueError(f"{where}: metadata format is {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{where}: format_version {meta.get('format_version')!r}; this loader reads version {FORMAT_VERSION}"
        )
    parsed = _json_or_none(meta["arch"]) if "arch" in meta else None
    layers = parsed.get("layers", []) if isinstance(parsed, dict) else []
    units = next((y.get("units") for y in layers if isinstance(y, dict) and y.get("kind") == "output"), None)
    classes = CLASSES8 if units == len(CLASSES8) else CLASSES
    for key, want in (("alphabet", ALPHABET), ("classes", classes)):
        if key in meta and meta[key] != want:
            raise ValueError(f"{where}: metadata {key} is {meta[key]!r}, expected {want!r}")
    if "arch" not in meta:
        raise ValueError(f"{where}: metadata has no arch")
    try:
        arch = json.loads(meta["arch"])
    except ValueError as e:
        raise ValueError(f"{where}: metadata arch is not JSON ({e})") from None
    try:
        model = build(arch)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    if "window" in meta and meta["window"] != str(arch["window"]):
        raise ValueError(f"{where}: metadata window {meta['window']} differs from arch window {arch['window']}")
    want = model.state_dict()
    state = {}
    problems = []
    for name, t in want.items():
        if name.endswith("num_batches_tracked"):
            state[name] = torch.zeros((), dtype=torch.long)
        elif name not in tensors:
            problems.append(f"missing tensor {name} {list(t.shape)}")
        elif tensors[name].shape != t.shape:
            problems.append(f"tensor {name} has shape {list(tensors[name].shape)}, expected {list(t.shape)}")
        else:
            state[name] = tensors[name]
    problems += [f"unexpected tensor {n}" for n in tensors if n not in want]
    if problems:
        raise ValueError(f"{where}: does not match its arch: " + "; ".join(problems))
    model.load_state_dict(state, strict=True)
    model.eval()
    model.metadata = meta
    model.classes = classes
    return model, meta


def _model_json_files(folder):
    """Fold files named by an export's model.json, or None if it names none."""
    try:
        with open(os.path.join(folder, "model.json")) as f:
            doc = json.load(f)
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise ValueError(f"{folder}/model.json is not JSON ({e})") from None
    for key in ("folds", "files", "models"):
        items = doc.get(key) if isinstance(doc, dict) else None
        if not isinstance(items, list):
            continue
        files = []
        for it in items:
            name = it if isinstance(it, str) else (it.get("file") or it.get("path")) if isinstance(it, dict) else None
            if isinstance(name, str):
                files.append(name if os.path.isabs(name) else os.path.join(folder, name))
        if files:
            return files
    return None


def load_ensemble(path):
    """[model, ...] from an exported folder (model.json's files, else its *.safetensors,
    sorted), one .safetensors file, or a list of files. The models must all
    be window models of one window, or all chain models."""
    if isinstance(path, (list, tuple)):
        files = [os.fspath(p) for p in path]
    elif os.path.isdir(path):
        files = _model_json_files(path)
        if files is None:
            files = sorted(glob.glob(os.path.join(glob.escape(os.fspath(path)), "*.safetensors")))
        if not files:
            run = os.path.exists(os.path.join(os.fspath(path), "journal.jsonl"))
            raise ValueError(f"{path}: no model.json fold list and no .safetensors files" +
                             (": a run folder; `foldsweep export RUN -o DIR` writes a trial's models to load"
                              if run else ""))
    else:
        files = [os.fspath(path)]
    models = [load(f)[0] for f in files]
    _same_kind(models, files)
    for m, f in zip(models, files):
        if m.classes != models[0].classes:
            raise ValueError(f"{f}: classes {m.classes}, but {files[0]} has {models[0].classes}: one ensemble "
                             "predicts one set of classes")
    return models


def _kind(m):
    return "a chain model" if getattr(m, "chain", False) else f"a window model (window {getattr(m, 'window', '?')})"


def _same_kind(models, names=None):
    """Refuses an ensemble mixing chain and window models, or windows."""
    if len({(getattr(m, "onehot", True), getattr(m, "features", 0)) for m in models}) > 1:
        raise ValueError("ensemble: the models must read the same inputs (one-hot codes and feature columns)")
    if len({str(getattr(m, "window", None)) for m in models}) > 1:
        names = names or [f"model {k}" for k in range(len(models))]
        what = ", ".join(f"{n}: {_kind(m)}" for n, m in zip(names, models))
        raise ValueError(
            "ensemble: the models must all be chain models or all window models of one window, got " + what
        )


# ---------------------------------------------------------------------------
# input and prediction


def clean_sequence(seq):
    """One protein's sequence (a str) by the FASTA rule's sequence part
    (parse_fasta: blanks and line breaks ignored, a '*' ending a line
    dropped, letters in any case, other letters X); anything but a str, or
    a character that is no letter, raises. A list's text ("['MKV', ...]")
    once became residues, each bracket and quote an X."""
    if not isinstance(seq, str):
        raise TypeError(f"a protein's sequence is a str (predict takes a list of them for several), "
                        f"got {type(seq).__name__}")
    if seq and all(a in _INDEX for a in seq):
        return seq  # the common case, already clean
    if ">" in seq:
        raise ValueError("<sequence>: one protein's sequence expected, found '>' (FASTA text: parse_fasta, "
                         "then predict the list it gives)")
    if seq.strip() == "":
        return ""
    return parse_fasta(">sequence\n" + seq, "<sequence>")[0][0][1]


def encode(seq):
    """Residue codes (LongTensor) of a sequence (clean_sequence): ALPHABET index, X for other letters."""
    return torch.tensor([_INDEX.get(a, _X) for a in clean_sequence(seq)], dtype=torch.long)


def one_hot_windows(seq, window):
    """FloatTensor [len, 21, window]: residue i's one-hot window i-W//2..i+W//2, zero beyond the ends."""
    if window == "chain":
        raise ValueError('window "chain": a chain model reads the whole chain (one_hot_chain), not windows')
    if not isinstance(window, int) or window < 1 or window % 2 == 0:
        raise ValueError(f"window must be an odd positive integer, got {window!r}")
    codes = encode(seq)
    n, h = len(codes), window // 2
    if n == 0:
        return torch.zeros(0, len(ALPHABET), window)
    pad = torch.zeros(len(ALPHABET), n + 2 * h)
    pad[codes, torch.arange(n) + h] = 1.0
    return pad.unfold(1, window, 1).permute(1, 0, 2).contiguous()


def one_hot_chain(seq):
    """FloatTensor [1, 21, len]: a chain model's input, residue i's one-hot in column i."""
    codes = encode(seq)
    x = torch.zeros(1, len(ALPHABET), len(codes))
    x[0, codes, torch.arange(len(codes))] = 1.0
    return x


def _json_or_none(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _columns(model, seq, features):
    """The protein's feature columns as a FloatTensor [len, D] checked
    against what the model reads (None for a one-hot model)."""
    d = getattr(model, "features", 0)
    if d == 0:
        if features is not None:
            raise ValueError("features: the model reads no feature columns (one-hot input only)")
        return None
    if features is None:
        raise ValueError(f"features: the model reads {d} columns per residue: pass features [len, {d}]")
    f = torch.as_tensor(features, dtype=torch.float32)
    if f.dim() != 2 or f.shape[0] != len(seq) or f.shape[1] != d:
        raise ValueError(f"features: expected [{len(seq)}, {d}] (residues, columns), got {list(f.shape)}")
    return f


def model_input(model, seq, features=None):
    """The model's whole input for one protein: a window model's [len, C, W]
    (residue i's window), a chain model's [1, C, len]; C = the 21 one-hot
    channels (unless the model reads none) then its D feature columns."""
    seq = clean_sequence(seq)
    f = _columns(model, seq, features)
    onehot = getattr(model, "onehot", True)
    if getattr(model, "chain", False):
        parts = ([one_hot_chain(seq)] if onehot else []) + ([f.t().unsqueeze(0)] if f is not None else [])
        return torch.cat(parts, dim=1)
    w = model.window
    parts = [one_hot_windows(seq, w)] if onehot else []
    if f is not None:
        n, h = len(seq), w // 2
        pad = torch.zeros(f.shape[1], n + 2 * h)
        pad[:, h : h + n] = f.t()
        parts.append(pad.unfold(1, w, 1).permute(1, 0, 2).contiguous() if n else torch.zeros(0, f.shape[1], w))
    return torch.cat(parts, dim=1)


def _on_model(models, x):
    """x on the models' device and in their dtype (a model moved with
    .to("cuda") or .double() takes its input there)."""
    p = next(models[0].parameters(), None)
    return x if p is None else x.to(device=p.device, dtype=p.dtype)


def predict_chain(models, seq, features=None):
    """[len(seq), 3] mean softmax of chain models over one pass of the whole chain."""
    if isinstance(models, nn.Module):
        models = [models]
    x = _on_model(models, model_input(models[0], seq, features))
    acc = torch.zeros(len(classes_of(models)), x.shape[2], device=x.device, dtype=x.dtype)
    if x.shape[2] == 0:
        return acc.t().contiguous()
    with torch.no_grad():
        for m in models:
            acc += torch.softmax(m(x)[0], dim=0)
    return (acc / len(models)).t().contiguous()


def predict_windows(models, x, batch=256):
    """[n, 3] mean softmax of the models over one-hot windows x [n, 21, W]."""
    if isinstance(models, nn.Module):
        models = [models]
    if any(getattr(m, "chain", False) for m in models):
        raise ValueError("predict_windows: a chain model reads whole chains (predict_chain), not windows")
    x = _on_model(models, x)
    out = torch.empty(x.shape[0], len(classes_of(models)), device=x.device, dtype=x.dtype)
    with torch.no_grad():
        for s in range(0, x.shape[0], batch):
            xb = x[s : s + batch]
            acc = torch.zeros(xb.shape[0], len(classes_of(models)), device=x.device, dtype=x.dtype)
            for m in models:
                acc += torch.softmax(m(xb), dim=1)
            out[s : s + batch] = acc / len(models)
    return out


def predict(models, seq, batch=256, features=None):
    """FloatTensor [len(seq), 3]: the ensemble's mean probabilities, H E C,
    on the models' device and in their dtype.

    seq is one protein's sequence (a str, clean_sequence's rule), or a list
    or tuple of them (or of (id, sequence) pairs, as read_fasta gives): then
    a list of tensors, one per protein (each its own
    pass: padding chains of different lengths into one batch would change
    the shorter ones' probabilities at their ends). Window models: one
    window per residue, `batch` windows a pass; chain models: one pass over
    the whole chain (batch unused). Models trained with feature columns
    (data.features) take the protein's [len(seq), D] columns, as foldsweep
    read them (docs/sweep-format.md), in `features` (a list of them for a
    list of proteins)."""
    if isinstance(models, nn.Module):
        models = [models]
    if not models:
        raise ValueError("predict: no models")
    if isinstance(seq, (list, tuple)):
        fs = features if features is not None else [None] * len(seq)
        if len(fs) != len(seq):
            raise ValueError(f"predict: {len(seq)} proteins but {len(fs)} feature tensors")
        # (id, sequence) pairs, as read_fasta gives them, predict their sequences
        seqs = [s[1] if isinstance(s, tuple) and len(s) == 2 and isinstance(s[1], str) else s for s in seq]
        return [predict(models, s, batch, f) for s, f in zip(seqs, fs)]
    _same_kind(models)
    was = [m.training for m in models]
    for m in models:
        m.eval()
    try:
        if getattr(models[0], "chain", False):
            return predict_chain(models, seq, features)
        return predict_windows(models, model_input(models[0], seq, features), batch)
    finally:
        for m, t in zip(models, was):
            m.train(t)


class EnsembleProbs(nn.Module if nn is not None else object):
    """An ensemble as one module: the mean over its models of each one's
    softmax over the classes (dim 1), what predict returns, for export.
    Models in eval mode; x is model_input's ([n, C, W] windows of a window
    model, [1, C, length] one chain of a chain model)."""

    def __init__(self, models):
        super().__init__()
        _same_kind(models)
        self.models = nn.ModuleList(models)
        for name in ("window", "chain", "features", "onehot"):
            if hasattr(models[0], name):
                setattr(self, name, getattr(models[0], name))

    def forward(self, x):
        acc = None
        for m in self.models:
            p = torch.softmax(m(x), dim=1)
            acc = p if acc is None else acc + p
        return acc / len(self.models)


def export_onnx(models, path, opset=17):
    """Writes an ensemble (one model or a list) as one ONNX graph at path:
    input "x" as model_input gives it (a window model: [n, C, W], n dynamic;
    a chain model: [1, C, length], one chain a call, length dynamic, as
    predict passes it), output "probs", the mean probabilities predict
    returns ([n, classes], or [1, classes, length]). C: 21 one-hot channels
    (A C D ... Y, X) unless the models read none, then their feature columns.
    Returns path."""
    _need_torch()
    if isinstance(models, nn.Module):
        models = [models]
    ens = EnsembleProbs(copy.deepcopy(list(models))).eval()
    # padding="same" traces to an operator ONNX lacks (torch 1.13): the
    # widths are odd, so it is d (k - 1) / 2 on each side, written out.
    for m in ens.modules():
        if isinstance(m, nn.Conv1d) and m.padding == "same":
            m.padding = (m.dilation[0] * (m.kernel_size[0] - 1) // 2,)
    first = models[0]
    c = (len(ALPHABET) if getattr(first, "onehot", True) else 0) + getattr(first, "features", 0)
    chain = getattr(first, "chain", False)
    x = torch.zeros(1, c, 17) if chain else torch.zeros(2, c, first.window)
    axes = {0: "batch", 2: "length"} if chain else {0: "batch"}
    import warnings
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on an RNN's batch size, not ours to act on
        torch.onnx.export(ens, x, os.fspath(path), input_names=["x"], output_names=["probs"],
                          dynamic_axes={"x": axes, "probs": axes if chain else {0: "batch"}}, opset_version=opset)
    return path


_SPACE = b" \t\n\v\f\r"  # C's isspace


def parse_fasta(data, where="<fasta>"):
    """([(id, sequence)], {letter: count of letters read as X, X itself not counted}) of FASTA bytes, by foldsweep predict's rule
    (src/data/read_sequences.c; docs/models.md, "The FASTA rule"): a UTF-8 BOM
    is skipped; a line starting with '>' starts a protein whose id is the
    header's first word (at most 255 bytes); blanks, tabs and CR anywhere are
    ignored; a '*' that ends a line is dropped; letters are read in any case,
    and those outside the 20 standard amino acids become X (counted in the
    dict). Anything else, text before the first header, an empty sequence
    or no sequence at all raises ValueError naming where:line:col. The
    sequences are the model's view: upper case, 'X' for the other letters."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data:
        raise ValueError(f"{where}: empty file (expected protein sequences)")
    for no, line in enumerate(data.split(b"\n"), 1):
        for col, c in enumerate(line, 1):
            if c < 0x20 and c not in b"\t\r\f\v":
                raise ValueError(f"{where}:{no}:{col}: binary data (byte 0x{c:02x}): expected a text file")
    out, unknown = [], {}
    name, hdr, seq = None, 0, []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for no, line in enumerate(lines, 1):
        line = line.rstrip(_SPACE)
        if line[:1] == b">":
            if name is not None:
                if not seq:
                    raise ValueError(f"{where}:{hdr}: sequence '{name}' is empty")
                out.append((name, "".join(seq)))
            words = line[1:].split()
            if not words:
                raise ValueError(f"{where}:{no}:2: expected a sequence id after '>'")
            name, hdr, seq = words[0][:255].decode("utf-8", "replace"), no, []
            continue
        for i, c in enumerate(line):
            if c in _SPACE:
                continue
            if name is None:
                raise ValueError(f"{where}:{no}:{i + 1}: expected a '>' header line before the sequence")
            if c == 0x2A and i + 1 == len(line):  # '*', a stop codon, ends a line
                continue
            a = chr(c).upper() if c < 0x80 and chr(c).isalpha() else None
            if a is None:
                what = f"'{chr(c)}'" if 0x21 <= c < 0x7F else f"byte 0x{c:02x}"
                hint = " (aligned sequences: remove the gaps)" if c in b"-." else ""
                raise ValueError(f"{where}:{no}:{i + 1}: expected an amino-acid letter, found {what}{hint}")
            if a not in _INDEX:
                unknown[a] = unknown.get(a, 0) + 1
                a = "X"
            seq.append(a)
    if name is not None:
        if not seq:
            raise ValueError(f"{where}:{hdr}: sequence '{name}' is empty")
        out.append((name, "".join(seq)))
    if not out:
        raise ValueError(f"{where}: no sequences (expected FASTA: '>id' lines)")
    return out, unknown


def read_fasta(path):
    """[(id, sequence)] of a FASTA file by foldsweep predict's rule (parse_fasta)."""
    with open(path, "rb") as f:
        return parse_fasta(f.read(), str(path))[0]


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="Secondary structure of a FASTA file with foldsweep models in PyTorch.")
    ap.add_argument("models", nargs="+", help="an exported folder or .safetensors files")
    ap.add_argument("fasta", help="input FASTA")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = ap.parse_args(argv)
    try:
        _need_torch()
        if a.threads > 0:
            torch.set_num_threads(a.threads)
        models = load_ensemble(a.models[0] if len(a.models) == 1 else a.models)
    except (ImportError, ValueError, OSError) as e:  # a message, not a traceback
        print(f"foldsweep_torch: {e}", file=sys.stderr)
        return 1
    if getattr(models[0], "features", 0):
        ap.error("the models read feature columns (data.features): call predict(models, seq, features=...) from "
                 "Python with each protein's columns")
    with open(a.fasta, "rb") as f:
        proteins, unknown = parse_fasta(f.read(), a.fasta)
    n = sum(unknown.values())
    if n:
        print(f"warning: {a.fasta}: {n} residue{'' if n == 1 else 's'} outside the 20 standard amino acids "
              f"({''.join(sorted(unknown))}) read as X", file=sys.stderr)
    for name, seq in proteins:
        p = predict(models, seq, a.batch)
        states = "".join(classes_of(models)[i] for i in p.argmax(dim=1).tolist()) if len(seq) else ""
        print(f">{name}\n{seq}\n{states}")
    return 0


def cli(argv=None):
    """main() as a command. A reader that goes away (`... | head -1` once it
    has its line) ends it quietly, as SIGPIPE ends any Unix filter, where
    Python's own default (SIGPIPE ignored) made it a BrokenPipeError
    traceback. Not for a library's caller: only the command changes the
    process's signal handling."""
    if hasattr(signal, "SIGPIPE"):  # not on Windows
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return main(argv)


if __name__ == "__main__":
    sys.exit(cli())
