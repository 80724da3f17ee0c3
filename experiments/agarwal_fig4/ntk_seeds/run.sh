#!/usr/bin/env bash
# The NTK at initialization of ResNet-20 with BatchNorm, NormReLU and Fixup on the same 64
# Fashion-MNIST images (the configs ../ntk_resnet20_*_fmnist.toml), at network seeds 1-4
# beside the committed seed 0 (../ntk_resnet20_*): 5 seeds per variant. Each run writes
# <variant>/seed<S>/{summary.json, eigenvalues.npy}; a finished run (its summary.json) is
# kept, so rerunning continues after an interruption. Then table.py prints the table.
#
# BatchNorm at initialization in evaluation mode is the identity (running statistics 0, 1),
# so the same BatchNorm network is also measured with the batch's own statistics
# (`probe.batch_norm_statistics = "batch"`: the NTK of the batch map, as an SGD step on
# these 64 images sees it), seeds 0-4, in batch_norm_batch/seed<S>/.
#
#   NTK_PROBE_BIN=target/debug/ntk-probe bash experiments/agarwal_fig4/ntk_seeds/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin="${NTK_PROBE_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-probe}"
[ -x "$bin" ] || { echo "ntk_seeds: $bin not found: cargo build -p ntk-probe first (or set NTK_PROBE_BIN)" >&2; exit 2; }
here=experiments/agarwal_fig4/ntk_seeds
for variant in batch_norm norm_relu fixup; do
    for seed in 1 2 3 4; do
        out="$here/$variant/seed$seed"
        if [ -f "$out/summary.json" ]; then continue; fi
        echo "=== $(date -u +%FT%TZ) $variant seed $seed"
        "$bin" ntk --config "experiments/agarwal_fig4/ntk_resnet20_${variant}_fmnist.toml" \
            --out "$out" --set "resnet.seed=$seed"
    done
done
for seed in 0 1 2 3 4; do
    out="$here/batch_norm_batch/seed$seed"
    if [ -f "$out/summary.json" ]; then continue; fi
    echo "=== $(date -u +%FT%TZ) batch_norm (batch statistics) seed $seed"
    "$bin" ntk --config experiments/agarwal_fig4/ntk_resnet20_batch_norm_fmnist.toml \
        --out "$out" --set "resnet.seed=$seed" --set probe.batch_norm_statistics=batch
done
