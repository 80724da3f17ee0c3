#!/usr/bin/env bash
# The CIFAR ResNet training step beside PyTorch eager on this CPU, interleaved per network:
# ours (`ntk-train bench --resnet`), PyTorch (pytorch_resnet_step.py) in each memory format
# (NCHW, its default, and NHWC, `channels_last`: the peer is the better of the two), ours
# again; batch 128, f32, 2 threads, STEPS timed steps after warm-up. One JSON line per
# measurement on stdout (`who` is "ours" or "pytorch"; PyTorch's rows carry `layout`). Run on a quiet machine (check `uptime`; pause background
# jobs with kill -STOP).
#   NTK_TRAIN=target/debug/ntk-train PYTHON=python3 bash experiments/train_bench/resnet_side_by_side.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${NTK_TRAIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"
py="${PYTHON:-python3}"
steps="${STEPS:-4}"
depths="${DEPTHS:-20 56 110}"
variants="${VARIANTS:-batch_norm norm_relu fixup}"
export OMP_NUM_THREADS=2
ours() {
    "$bin" bench --resnet "$1" --variant "$2" --batch 128 --steps "$steps" 2>/dev/null |
        grep '^{' | sed 's/^{/{"who":"ours",/'
}
torch() {
    "$py" experiments/train_bench/pytorch_resnet_step.py --device cpu --threads 2 --depth "$1" \
        --variant "$2" --layout "$3" --batch 128 --steps "$steps" --warmup 2 --json |
        grep '^{' | sed 's/^{/{"who":"pytorch",/'
}
for d in $depths; do
    for v in $variants; do
        ours "$d" "$v"
        torch "$d" "$v" nchw
        torch "$d" "$v" nhwc
        ours "$d" "$v"
    done
done
