#!/usr/bin/env bash
# Seed for seed with the authors: the official condition_num.py math (official.py) and our
# probe on the same inputs, the same weights and the same blocks. For two draws of the
# official synthetic set (2000 points of N(0, I_10), inputs_draw{0,1}.npy), ReLU width 512 in
# the official convention, depths 1, 3, 5 and the official seeds 1 and 32: official.py draws
# each network and its block permutation as condition_num.py does and computes each block's
# kappa (float32 kernel, np.linalg.eig); the probe loads those weights (probe.weights) and
# blocks (probe.blocks) and computes the same blocks' kappa in f64 and in f32. Resumable:
# finished pieces are kept in work/ (ignored by git). Then compare.py writes results.csv.
#
#   bash experiments/official_check/setup.sh
#   NTK_PROBE_BIN=target/debug/ntk-probe bash experiments/official_check/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
bin="${NTK_PROBE_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-probe}"
[ -x "$bin" ] || { echo "official_check: $bin not found: cargo build -p ntk-probe first (or set NTK_PROBE_BIN)" >&2; exit 2; }
py="$here/.venv/bin/python"
[ -x "$py" ] || { echo "official_check: run experiments/official_check/setup.sh first" >&2; exit 2; }
depths=(${OFFICIAL_DEPTHS:-1 3 5})
seeds=(${OFFICIAL_SEEDS:-1 32})
for draw in 0 1; do
    work="$here/work/draw$draw"
    "$py" "$here/official.py" --inputs "$here/inputs_draw$draw.npy" --depths "${depths[@]}" \
        --seeds "${seeds[@]}" --out "$work"
    for depth in "${depths[@]}"; do
        for seed in "${seeds[@]}"; do
            name="depth${depth}_seed${seed}"
            for precision in f64 f32; do
                out="$work/probe_${name}_$precision"
                [ -f "$out/blocks.csv" ] && continue
                cat > "$work/probe_${name}_$precision.toml" <<TOML
[data]
dataset = "file"
x = "$work/inputs.npy"
[model]
width = 512
depth = $depth
activation = "relu"
convention = "official"
[probe]
precision = "$precision"
protocol = "blocks"
block_size = 512
weights = "$work/$name.safetensors"
blocks = "$work/$name.blocks"
TOML
                "$bin" ntk --config "$work/probe_${name}_$precision.toml" --out "$out" > /dev/null
                echo "official_check: draw $draw $name $precision done"
            done
        done
    done
done
"$py" "$here/compare.py"
