# scripts/gpu-check-speed.sh: `scripts/gpu-check --speed`, the block tier's
# speed on a device (#45 part 5), sourced by scripts/gpu-check after its
# build (the helpers say, cap, tcap and run_capped, $out, $fs and $uci are
# its). Caps, in order, within gpu-check's deadline (465 s with the build):
#    60 s  ncu on one launch: R1 at batch 8, 132 models, 1 epoch: FFMA
#          count (FLOP/s per SM), achieved occupancy, shared-memory bank
#          conflicts, the warp stall reasons (WarpStateStats)
#   120 s  bench/gpu-grid.yaml on the GPU, progress.json sampled every 5 s:
#          examples/s in the first and the last minute (target: the last at
#          least 70% of the first)
#    60 s  the same grid on all of this machine's CPU cores: GPU/CPU
#          examples/s (target at least 5x on an H200)
#    70 s  batch 8 against 64 (R1 on UCI, 132 models, 35 s each): examples/s
#          (target: batch 8 at most 1.2x batch 64's cost per example)
# Targets from #45: R1 at batch 8 at least 1.5 million examples/s in one
# launch of 132 models, at least 40 GFLOP/s per block.

# rate_of DIR: examples/s of a run folder (profile.json, else progress.json).
rate_of() {
    python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
for name, ex, wall in (("profile.json", "train_examples", "wall_seconds"), ("progress.json", "examples_done", "elapsed")):
    p = os.path.join(d, name)
    if os.path.exists(p):
        j = json.load(open(p))
        if j.get(wall):
            print("%.0f" % (j[ex] / j[wall]))
            sys.exit(0)
print("none")
PY
}

speed_checks() {
    local r1="data: {inputs: [$uci], window: 17, folds: 3, repeats: 44}
model: {depth: 2, filters: 64, kernel: 5, dense: 128, activation: swish}
training: {epochs: EPOCHS, batch_size: BATCH, optimizer: adam, learning_rate: 0.001, seed: 1}"
    [ -n "$uci" ] || echo "no .deps/data/uci: the R1 steps are skipped (scripts/gpu-check --fetch)"

    say "ncu: one launch of R1 at batch 8, 132 models, 1 epoch (60 s)"
    ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
    if [ -n "$ncu_bin" ] && [ -n "$uci" ]; then
        echo "$r1" | sed -e 's/EPOCHS/1/' -e 's/BATCH/8/' >"$out/ncu.yaml"
        rm -rf "$out/ncu-run"
        run_capped 60 "$out/ncu.txt" "$ncu_bin" --kernel-name regex:fs_fit_kernel --launch-count 1 \
            --metrics gpu__time_duration.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
            --section WarpStateStats "$fs" run "$out/ncu.yaml" --backend cuda --gpu-path block --out "$out/ncu-run" --quiet
        echo "ncu exit status: $?"
        grep -E "gpu__time_duration|ffma|warps_active|bank_conflicts|sm__throughput|Stall|stall" "$out/ncu.txt" | head -30
        python3 - "$out/ncu.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def val(name):
    m = re.search(name + r"\S*\s+(\S+)\s+([\d,.]+)", t)
    return (m.group(1), float(m.group(2).replace(",", ""))) if m else (None, None)
u, ns = val("gpu__time_duration.sum")
_, ffma = val("sm__sass_thread_inst_executed_op_ffma_pred_on.sum")
if ns and ffma:
    sec = ns * {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}.get(u, 1e-9)
    print("FFMA FLOP/s (2 x FFMA / kernel time): %.1f GFLOP/s over the device; per block (132 models): %.2f GFLOP/s"
          % (2 * ffma / sec / 1e9, 2 * ffma / sec / 1e9 / 132))
PY
    else
        echo "skipped: no ncu or no UCI data"
    fi

    say "bench/gpu-grid.yaml on the GPU, examples/s over time (120 s)"
    rm -rf "$out/grid"
    timeout -s TERM -k 20 "$(tcap 120)" "$fs" run bench/gpu-grid.yaml --backend cuda --gpu-path block --out "$out/grid" --quiet --grace 5 &
    local pid=$! t0
    t0=$(date +%s.%N)
    : >"$out/grid-samples.txt"
    while kill -0 "$pid" 2>/dev/null; do
        python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(sys.argv[2], j["examples_done"])' \
            "$out/grid/progress.json" "$(date +%s.%N)" >>"$out/grid-samples.txt" 2>/dev/null
        sleep 5
    done
    wait "$pid"
    grid_rc=$?
    python3 - "$out/grid-samples.txt" "$t0" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
t0 = float(sys.argv[2])
if len(rows) < 4:
    sys.exit("too few samples of progress.json (%d)" % len(rows))
def rate(a, b):
    pts = [r for r in rows if a <= r[0] - t0 <= b]
    return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0]) if len(pts) >= 2 and pts[-1][0] > pts[0][0] else None
end = rows[-1][0] - t0
first, last = rate(0, 60), rate(max(0, end - 60), end)
print("grid on the GPU: first minute %s examples/s, last minute %s, ratio %s (target >= 0.7)" % (
    "%.0f" % first if first else "?", "%.0f" % last if last else "?",
    "%.2f" % (last / first) if first and last else "?"))
PY
    gpu_grid=$(rate_of "$out/grid")
    echo "grid on the GPU: exit $grid_rc, $gpu_grid examples/s over the run"

    say "the same grid on all $(nproc) CPU cores (60 s)"
    rm -rf "$out/grid-cpu"
    timeout -s TERM -k 20 "$(tcap 60)" "$fs" run bench/gpu-grid.yaml --backend cpu --threads "$(nproc)" --out "$out/grid-cpu" \
        --quiet --grace 5
    cpu_grid=$(rate_of "$out/grid-cpu")
    echo "grid on the CPU: $cpu_grid examples/s; GPU / CPU: $(python3 -c 'import sys; g, c = sys.argv[1:]; print("%.2f" % (float(g) / float(c)) if g != "none" and c != "none" and float(c) > 0 else "?")' "$gpu_grid" "$cpu_grid") (target >= 5 on an H200)"

    say "batch 8 against batch 64: R1 on UCI, 132 models in one launch, 35 s each"
    batch_rate=()
    if [ -n "$uci" ]; then
        for b in 8 64; do
            echo "$r1" | sed -e 's/EPOCHS/3/' -e "s/BATCH/$b/" >"$out/batch$b.yaml"
            rm -rf "$out/batch$b"
            timeout -s TERM -k 20 "$(tcap 35)" "$fs" run "$out/batch$b.yaml" --backend cuda --gpu-path block --out "$out/batch$b" --quiet --grace 5
            batch_rate+=("$b:$(rate_of "$out/batch$b")")
        done
        echo "batch (size:examples/s): ${batch_rate[*]} (R1 at batch 8, target >= 1,500,000 examples/s)"
    fi
}
