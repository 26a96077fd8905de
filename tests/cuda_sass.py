#!/usr/bin/env python3
"""cuda_sass: the block kernel's GEMM read from its machine code (#45 part 2).

    cuda_sass.py --nvcc NVCC --nvdisasm NVDISASM --src ROOT --archs "80-real;90"
                 --out DIR [--flags "..."]

For each architecture with machine code it compiles kernels/fit_kernel.cu as
the library does, disassembles it (nvdisasm: function boundaries and branch
labels) and finds, in each function of the GEMM (ops_gemm, ops_gemm_rows:
src/train/gemm.c), the innermost loops (a backward branch with no other
inside it) with the most FFMA instructions: the forms of the block's
whole-tile k loop (src/train/gemm_block.h). It prints each one's FFMA share
and the instructions that fill the rest, and fails, naming the architecture
and the figure, when the best form's share is below FS_GPU_FFMA_FLOOR or any
form's below FS_GPU_FFMA_FLOOR_EVERY (src/train/kernel.h: one place). The
floors hold today's figures, so a change that makes a loop worse fails. It
fails too where a function of the GEMM loads with LDG (global memory only):
a block's weights may be in its shared memory. Without nvdisasm the test is skipped (exit 77) with a message: scripts/test
installs it from PyPI (nvidia-cuda-nvdisasm) into .deps/.
"""
import argparse
import collections
import os
import re
import subprocess
import sys


def macro(src, name):
    text = open(os.path.join(src, "src", "train", "kernel.h")).read()
    m = re.search(r"#define\s+%s\s+([0-9]+)" % name, text)
    if not m:
        sys.exit("cuda_sass: no #define %s <number> in src/train/kernel.h" % name)
    return int(m.group(1))


def functions(dis):
    """name -> list of (address, opcode, text), and name -> {label: address}."""
    funcs, labels = {}, {}
    name, pending = None, []
    for line in dis.splitlines():
        m = re.match(r"\s*\.type\s+(\S+),@function", line)
        if m:
            name = m.group(1)
            funcs[name], labels[name] = [], {}
            continue
        if name is None:
            continue
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        for p in pending:
            labels[name][p] = addr
        pending = []
        body = re.sub(r"^@!?U?P[T0-9]+\s+", "", m.group(2).strip())
        funcs[name].append((addr, body.split()[0] if body else "", body))
    return funcs, labels


def k_loops(ins, labels):
    """The innermost loops with the most FFMA (the whole-tile loop's forms):
    a list of (ffma, instructions, opcode counts), best share first."""
    at = {a: i for i, (a, _, _) in enumerate(ins)}
    loops = []
    for i, (a, op, text) in enumerate(ins):
        if not op.startswith("BRA"):
            continue
        m = re.search(r"(\.L_x_\d+)", text)
        target = labels.get(m.group(1)) if m else None
        if target is None:
            m = re.search(r"0x([0-9a-f]+)", text)
            target = int(m.group(1), 16) if m else None
        if target is not None and target <= a and target in at:
            loops.append((at[target], i))
    inner = [l for l in loops if not any(o != l and o[0] >= l[0] and o[1] <= l[1] for o in loops)]
    found = []
    for s, e in inner:
        ops = collections.Counter(op.split(".")[0] for _, op, _ in ins[s:e + 1])
        found.append((ops.get("FFMA", 0), e - s + 1, ops))
    most = max((f[0] for f in found), default=0)
    return sorted([f for f in found if f[0] == most and most > 0], key=lambda f: f[1])


def main():
    ap = argparse.ArgumentParser()
    for a in ("--nvcc", "--nvdisasm", "--src", "--archs", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--flags", default="")
    o = ap.parse_args()
    if not (os.path.isfile(o.nvdisasm) and os.access(o.nvdisasm, os.X_OK)):
        print("cuda_sass SKIPPED: no nvdisasm (%s); scripts/test installs it from PyPI (nvidia-cuda-nvdisasm)" % o.nvdisasm)
        return 77
    floor = macro(o.src, "FS_GPU_FFMA_FLOOR")
    floor_every = macro(o.src, "FS_GPU_FFMA_FLOOR_EVERY")
    os.makedirs(o.out, exist_ok=True)
    failures, checked = [], 0
    for arch in [a for a in o.archs.split(";") if a]:
        if arch.endswith("-virtual"):
            print("%s: PTX only, no machine code to check" % arch)
            continue
        m = re.match(r"^([0-9]+[af]?)(-real)?$", arch)
        if not m:
            sys.exit("cuda_sass: cannot read the architecture '%s'" % arch)
        sm = "sm_" + m.group(1)
        cubin = os.path.join(o.out, "fit_kernel_%s.cubin" % sm)
        cmd = [o.nvcc, "-arch=" + sm, "-cubin", "-DFS_HAVE_CUDA=1", "-I" + os.path.join(o.src, "src")]
        cmd += [f for f in o.flags.split(";") if f]
        cmd += [os.path.join(o.src, "kernels", "fit_kernel.cu"), "-o", cubin]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("cuda_sass: %s: nvcc failed (%d):\n%s" % (sm, r.returncode, r.stdout + r.stderr))
        r = subprocess.run([o.nvdisasm, "-c", cubin], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("cuda_sass: %s: nvdisasm failed (%d):\n%s" % (sm, r.returncode, r.stderr))
        open(os.path.join(o.out, "fit_kernel_%s.sass" % sm), "w").write(r.stdout)
        funcs, labels = functions(r.stdout)
        # Mangled names: _Z<length><name>; nvdisasm prefixes the kernel's.
        gemms = [n for n in funcs if any(re.search(r"_Z%d%s" % (len(g), g), n) for g in ("ops_gemm", "ops_gemm_rows"))]
        # B staged in chunks (gemm_stage.h): a call of its own, internal.
        gemms += [n for n in funcs if re.search(r"\d+gemm_stagedE", n)]
        if not gemms:
            sys.exit("cuda_sass: %s: no ops_gemm function in the disassembly (inlined? gemm.c's FS_NOINLINE)" % sm)
        # The GEMM's loads stay generic (LD): a block's weights may lie in
        # its shared memory (kernels/fit_kernel.cu), where a global-only
        # load (LDG) faults on a device; the stand-in cannot tell.
        for n in sorted(f for f in funcs if re.search(r"ops_gemm|gemm_tile|gemm_stage", f)):
            ldg = sum(1 for _, op, _ in funcs[n] if op.startswith("LDG"))
            if ldg:
                failures.append("%s %s: %d global-only loads (LDG); the GEMM's operands may be in shared memory" % (
                    sm, n, ldg))
        for n in sorted(gemms):
            short = "ops_gemm_rows" if "ops_gemm_rows" in n else "gemm_staged" if "gemm_staged" in n else "ops_gemm"
            forms = k_loops(funcs[n], labels[n])
            if not forms:
                failures.append("%s %s: no loop with FFMA found" % (sm, short))
                continue
            # The whole-tile loop's forms (gemm_block.h: B's rows aligned
            # and A's k contiguous, B's rows aligned, neither), best first.
            for f, (ffma, total, ops) in enumerate(forms):
                share = 100.0 * ffma / total
                rest = ", ".join("%s %d" % (k, v) for k, v in ops.most_common(7) if k != "FFMA")
                print("%s %s: k loop %s%d FFMA of %d instructions (%.0f%%); the rest: %s" % (
                    sm, short, "" if len(forms) == 1 else "form %d of %d: " % (f + 1, len(forms)), ffma, total,
                    share, rest))
            best = 100.0 * forms[0][0] / forms[0][1]
            worst = 100.0 * forms[-1][0] / forms[-1][1]
            if best < floor:
                failures.append("%s %s: FFMA %.0f%% of the best k loop, below FS_GPU_FFMA_FLOOR %d%%" % (
                    sm, short, best, floor))
            if worst < floor_every:
                failures.append("%s %s: FFMA %.0f%% of a k loop, below FS_GPU_FFMA_FLOOR_EVERY %d%%" % (
                    sm, short, worst, floor_every))
        checked += 1
    if checked == 0:
        sys.exit("cuda_sass: no architecture with machine code in '%s'" % o.archs)
    if failures:
        print("cuda_sass: FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("cuda_sass: %d architecture(s), the GEMM's best k loop at or above FS_GPU_FFMA_FLOOR %d%%, every one at or "
          "above FS_GPU_FFMA_FLOOR_EVERY %d%%" % (checked, floor, floor_every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
