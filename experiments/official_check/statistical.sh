#!/usr/bin/env bash
# The statistical comparison: the official code with its own initialization (torch seeds
# 1..N) against the probe with its own (model seeds 1..N), on the same inputs (draw 0), ReLU
# width 512, official convention, depth 1, blocks of 512: the per-seed mean block kappa of
# each side, compared by their means (compare.py's second table, Welch's t-test). Seed for
# seed agreement is run.sh's; this checks that the two initializations draw from one
# distribution. N = OFFICIAL_STAT_SEEDS (default 40). Resumable (work/stat/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
bin="${NTK_PROBE_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-probe}"
[ -x "$bin" ] || { echo "official_check: $bin not found (set NTK_PROBE_BIN)" >&2; exit 2; }
py="$here/.venv/bin/python"
[ -x "$py" ] || { echo "official_check: run experiments/official_check/setup.sh first" >&2; exit 2; }
n="${OFFICIAL_STAT_SEEDS:-40}"
work="$here/work/stat"
mkdir -p "$work"
"$py" "$here/official.py" --inputs "$here/inputs_draw0.npy" --depths 1 --seeds $(seq 1 "$n") \
    --out "$work/official"
seeds="$(seq -s, 1 "$n")"
cat > "$work/sweep.toml" <<TOML
[sweep]
depths = [1]
activations = ["relu"]
seeds = [$seeds]
protocols = ["blocks"]
theory = false
out = "$work/probe"
[data]
dataset = "file"
x = "$work/official/inputs.npy"
[model]
width = 512
depth = 1
activation = "relu"
convention = "official"
[probe]
precision = "f64"
block_size = 512
TOML
"$bin" sweep --config "$work/sweep.toml" --out "$work/probe" --resume > /dev/null
echo "official_check: statistical comparison over $n seeds done"
"$py" "$here/compare.py"
