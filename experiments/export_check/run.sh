#!/usr/bin/env bash
# Our exported networks checked in PyTorch (README.md here): probe runs with
# --save-weights for ResNet-20 in every variant and the official code's ReLU MLP, then
# check_torch.py on them. Needs python3 with torch and numpy (PYTHON=... to pick one).
#   bash experiments/export_check/run.sh [OUT]      # OUT defaults to runs/export_check
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/export_check}
python=${PYTHON:-python3}
cargo build -q -p ntk-probe
probe=${CARGO_TARGET_DIR:-target}/debug/ntk-probe
for v in batch_norm norm_relu fixup selu; do
    "$probe" ntk --config experiments/bench/probe_resnet20_n256.toml --out "$out/resnet20_$v" \
        --set data.n=16 --set 'probe.precision="f64"' --set "resnet.variant=\"$v\"" \
        --save-weights --resume > /dev/null
done
"$probe" ntk --config configs/synthetic_ntk.toml --out "$out/mlp_relu_official" \
    --set data.n=32 --set 'probe.precision="f64"' --set 'model.convention="official"' \
    --save-weights --resume > /dev/null
"$python" experiments/export_check/check_torch.py "$out"/resnet20_* "$out/mlp_relu_official" "${@:2}"
