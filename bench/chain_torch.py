#!/usr/bin/env python3
"""Chain model (issue #28 item 3), PyTorch baseline for bench/run-chain.

The same net as bench/bench_chain.c's chain model, as a PyTorch user writes
it: Conv1d(21->64, 5, padding='same', dilation) -> SiLU -> Conv1d(64->64,
5, 'same', dilation) -> SiLU -> Conv1d(64->128, k=1) -> SiLU ->
Conv1d(128->3, k=1) over a (batch, channels, length) input, cross-entropy
over the labelled residues only (ignore_index), Adam lr 1e-3, one thread
(see r1_torch.py's README-torch for which python and which BLAS).

Batches are built as foldsweep builds them: each epoch the training chains
in a seeded random order, each batch the next chains whose rows (residues
plus --pad pad rows each: the widest kernel's reach, 2 for R1) fit in
--batch-residues, at least one. Two layouts of the same batches:

* packed: foldsweep's own, one (1, 21, rows) tensor, each chain followed by
  its pad rows; after the first convolution the pad rows are zeroed again
  (a mask multiply) so that no chain sees its neighbour.
* padded: the usual PyTorch one, (chains, 21, longest) with zeros after
  each chain, masked the same way.

Data: the UCI training set (chains = segments of the proteins outside fold
0 of 3, folds as r1_torch.py assigns them, which are foldsweep's) or FLIP
(--flip SEQ LABELS MASK: the first --max-train proteins with SET=train
VALIDATION=False, file order; residues with mask 0 are read but not
labelled). Inputs are one-hot tensors built before the timed loops, as in
r1_torch.py; timing covers the training steps only (no validation), and
predict covers forward + softmax over the training chains in file order
(batches of the same budget, model.eval(), no_grad), the best of
--predict-reps passes. Rates count labelled residues, as foldsweep does.

usage: chain_torch.py (--uci FILE | --flip SEQ LABELS MASK) [--max-train N]
       [--epochs N] [--batch-residues N] [--dilation D] [--pad N] [--layout packed|padded]
       [--gru U | --lstm U | --attention N]
       [--threads N] [--seed S] [--predict-reps N] [--json]
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# r1_torch sets the BLAS thread variables from --threads before importing torch.
from r1_torch import AA_INDEX, UNKNOWN, assign_folds, blas_library, parse_uci  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

N_INPUTS = 21
FLIP_LABELS = {"H": 0, "E": 1, "C": 2}


class Attention(nn.Module):
    """foldsweep's attention layer as a PyTorch user writes it over a padded
    batch: nn.Linear projections, a learned bias per head for each clipped
    distance (nn.Embedding), the padding masked out of the softmax, the
    residual add and nn.LayerNorm."""

    def __init__(self, c, heads=4, key_dim=16, max_distance=32):
        super().__init__()
        self.h, self.d, self.m = heads, key_dim, max_distance
        self.qkv = nn.Linear(c, 3 * heads * key_dim)
        self.out = nn.Linear(heads * key_dim, c)
        self.rel = nn.Embedding(2 * max_distance + 1, heads)
        self.norm = nn.LayerNorm(c)

    def forward(self, x, keep):  # x [batch, C, length], keep [batch, 1, length]
        x = x.transpose(1, 2)
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        pos = torch.arange(n)
        bias = self.rel((pos[None, :] - pos[:, None]).clamp(-self.m, self.m) + self.m).permute(2, 0, 1)
        s = q @ k.transpose(-1, -2) / self.d ** 0.5 + bias
        s = s.masked_fill(keep[:, :, None, :] == 0, float("-inf"))
        ctx = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, n, self.h * self.d)
        return self.norm(x + self.out(ctx)).transpose(1, 2)


class ChainNet(nn.Module):
    """gru > 0: a bidirectional nn.GRU(64, gru) between the convolutions and
    the dense layer (foldsweep's bench_chain --gru; cell "LSTM": nn.LSTM,
    bench_chain --lstm), run the way a PyTorch
    user runs one over a batch of chains of different lengths: the padded
    layout (chains x longest) through pack_padded_sequence, so that each
    chain's backward direction starts at its own last residue."""

    def __init__(self, dilations=(1, 1), gru=0, cell="GRU", attention=0):
        super().__init__()
        self.att = nn.ModuleList(Attention(64) for _ in range(attention))
        self.c1 = nn.Conv1d(N_INPUTS, 64, 5, padding="same", dilation=dilations[0])
        self.c2 = nn.Conv1d(64, 64, 5, padding="same", dilation=dilations[1])
        self.gru = getattr(nn, cell)(64, gru, batch_first=True, bidirectional=True) if gru else None
        self.dense = nn.Conv1d(2 * gru if gru else 64, 128, 1)
        self.out = nn.Conv1d(128, 3, 1)

    def forward(self, x, keep):
        h = F.silu(self.c1(x)) * keep  # pad rows back to zero: they are the next layer's padding
        h = F.silu(self.c2(h))  # per-residue layers follow: pad rows are never read again
        for att in self.att:
            h = att(h, keep)
        if self.gru is not None:
            lengths = keep[:, 0].sum(1).long().cpu()
            packed = nn.utils.rnn.pack_padded_sequence(h.transpose(1, 2), lengths, batch_first=True,
                                                       enforce_sorted=False)
            h = nn.utils.rnn.pad_packed_sequence(self.gru(packed)[0], batch_first=True,
                                                 total_length=x.shape[2])[0].transpose(1, 2)
        return self.out(F.silu(self.dense(h)))


def uci_chains(path):
    proteins = parse_uci(path)
    fold_of = assign_folds(proteins, 3)
    return [([a for a, _ in seg], [l for _, l in seg]) for p, f in zip(proteins, fold_of) if f != 0 for seg in p]


def read_fasta(path):
    recs, head, seq = [], None, []
    for line in open(path):
        line = line.strip()
        if line.startswith(">"):
            if head is not None:
                recs.append((head, "".join(seq)))
            head, seq = line[1:], []
        elif line:
            seq.append(line)
    if head is not None:
        recs.append((head, "".join(seq)))
    return recs


def flip_chains(seq_path, lab_path, mask_path, max_train):
    chains = []
    for (_, s), (h, lab), (_, m) in zip(read_fasta(seq_path), read_fasta(lab_path), read_fasta(mask_path)):
        if "SET=train" not in h or "VALIDATION=True" in h:
            continue
        if max_train >= 0 and len(chains) >= max_train:
            break
        codes = [AA_INDEX.get(c.upper(), UNKNOWN) for c in s]
        labels = [FLIP_LABELS[c] if k == "1" else -1 for c, k in zip(lab, m)]
        chains.append((codes, labels))
    return chains


def pack(order, chains, budget, pad):
    """foldsweep's rule (step_chain_batch): as many chains as fit, at least one."""
    batches, i = [], 0
    while i < len(order):
        rows, k = 0, i
        while k < len(order):
            rows += len(chains[order[k]][0]) + pad
            if rows > budget and k > i:
                break
            k += 1
        batches.append(order[i:k])
        i = k
    return batches


def tensors(batch, chains, pad, layout):
    """(x, keep, target) of one batch in the given layout."""
    if layout == "packed":
        rows = sum(len(chains[c][0]) + pad for c in batch)
        codes = torch.full((1, rows), -1, dtype=torch.long)
        target = torch.full((1, rows), -1, dtype=torch.long)
        at = 0
        for c in batch:
            a, lab = chains[c]
            codes[0, at:at + len(a)] = torch.tensor(a)
            target[0, at:at + len(a)] = torch.tensor(lab)
            at += len(a) + pad
    else:
        longest = max(len(chains[c][0]) for c in batch)
        codes = torch.full((len(batch), longest), -1, dtype=torch.long)
        target = torch.full((len(batch), longest), -1, dtype=torch.long)
        for b, c in enumerate(batch):
            a, lab = chains[c]
            codes[b, :len(a)] = torch.tensor(a)
            target[b, :len(a)] = torch.tensor(lab)
    keep = (codes >= 0).unsqueeze(1).float()
    x = torch.zeros(codes.shape[0], N_INPUTS + 1, codes.shape[1])
    x.scatter_(1, torch.where(codes < 0, N_INPUTS, codes).unsqueeze(1), 1.0)
    return x[:, :N_INPUTS].contiguous(), keep, target


def train(model, chains, a):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(a.seed)
    seconds, residues, loss_sum = 0.0, 0, 0.0
    for _ in range(a.epochs):
        order = torch.randperm(len(chains), generator=gen).tolist()
        data = [tensors(b, chains, a.pad, a.layout) for b in pack(order, chains, a.batch_residues, a.pad)]
        t0 = time.perf_counter()
        for x, keep, target in data:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x, keep), target, ignore_index=-1)
            loss.backward()
            opt.step()
            loss_sum += loss.item()
        seconds += time.perf_counter() - t0
        residues += sum(int((t >= 0).sum()) for _, _, t in data)
    return residues, seconds, loss_sum


def predict(model, chains, a):
    data = [tensors(b, chains, a.pad, a.layout) for b in pack(list(range(len(chains))), chains, a.batch_residues, a.pad)]
    residues = sum(int((t >= 0).sum()) for _, _, t in data)
    model.eval()
    best = float("inf")
    with torch.no_grad():
        for _ in range(a.predict_reps):
            t0 = time.perf_counter()
            for x, keep, _ in data:
                torch.softmax(model(x, keep), 1)
            best = min(best, time.perf_counter() - t0)
    model.train()
    return residues, best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uci")
    ap.add_argument("--flip", nargs=3, metavar=("SEQ", "LABELS", "MASK"))
    ap.add_argument("--max-train", type=int, default=-1)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-residues", type=int, default=2048)
    ap.add_argument("--dilation", type=int, default=1, help="the second convolution's")
    ap.add_argument("--gru", type=int, default=0, help="a bidirectional GRU of this many units (needs --layout padded)")
    ap.add_argument("--lstm", type=int, default=0, help="a bidirectional LSTM of this many units (needs --layout padded)")
    ap.add_argument("--attention", type=int, default=0,
                    help="this many attention layers (4 heads of 16, needs --layout padded)")
    ap.add_argument("--pad", type=int, default=None, help="pad rows per chain (default: 2 x dilation, the reach)")
    ap.add_argument("--layout", choices=("packed", "padded"), default="packed")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--predict-reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if (a.uci is None) == (a.flip is None):
        ap.error("give one of --uci FILE, --flip SEQ LABELS MASK")
    a.pad = 2 * max(1, a.dilation) if a.pad is None else a.pad
    torch.set_num_threads(a.threads)
    chains = uci_chains(a.uci) if a.uci else flip_chains(*a.flip, a.max_train)
    torch.manual_seed(a.seed)
    if (a.gru or a.lstm or a.attention) and a.layout != "padded":
        ap.error("--gru and --lstm need --layout padded (a recurrence over packed rows would cross chains)")
    if a.gru and a.lstm:
        ap.error("give one of --gru, --lstm")
    model = ChainNet((1, a.dilation), a.gru or a.lstm, "LSTM" if a.lstm else "GRU", a.attention)
    residues, seconds, loss_sum = train(model, chains, a)
    p_res, p_sec = predict(model, chains, a)
    res = {
        "framework": "pytorch", "model": "chain", "layout": a.layout, "data": "uci" if a.uci else "flip",
        "torch_version": torch.__version__, "threads": torch.get_num_threads(), "blas": blas_library(),
        "dilation": a.dilation, "gru": a.gru, "lstm": a.lstm, "attention": a.attention, "epochs": a.epochs, "batch_residues": a.batch_residues, "chains": len(chains),
        "train_residues": residues, "train_seconds": round(seconds, 3),
        "train_residues_per_second": round(residues / seconds, 1),
        "predict_residues": p_res, "predict_residues_per_second": round(p_res / p_sec, 1),
    }
    print(json.dumps(res) if a.json else "\n".join(f"{k}: {v}" for k, v in res.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
