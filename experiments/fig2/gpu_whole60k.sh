#!/usr/bin/env bash
# The NTK condition number of all 60,000 MNIST images, whole, on a lent GPU machine
# (configs/fig2_mnist_whole60k_gpu.toml: ReLU and linear, depths 1..10, seeds 1..5; the
# kernel formed and factored on the device, ntk_cusolver::whole). Here first:
#   bash scripts/gpu-bench-pack.sh --cusolver --no-wgpu   # .gpu/bin, .gl
#   mkdir -p .gpudata/mnist && for f in train-images-idx3-ubyte train-labels-idx1-ubyte; do
#       gzip -6 -c datasets/data/mnist/$f > .gpudata/mnist/$f.gz; done   # 9.9 MB
# then the device call, from the repository root, carrying [".gl", ".gpu/bin", ".gpudata"]:
#   WHOLE60K_SEEDS="4 5" bash experiments/fig2/gpu_whole60k.sh
# The committed points (experiments/fig2/mnist_whole60k_gpu/runs) are copied into the sweep's
# out directory (runs/fig2_mnist_whole60k_gpu, WHOLE60K_OUT) first and skipped there: a call
# computes only what is missing.
# 1. the device tests (crates/ntk-cusolver/tests/device.rs, the whole kernel against the
#    host's tiles among them): a failure stops the call before the sweep;
# 2. the sweep one seed at a time (seed 1's twenty points first, then seed 2's, ...) under
#    one deadline (WHOLE60K_DEADLINE_S, default 450 s): finished points are kept, an
#    interrupted one is recomputed by the next call.
# Writes $OUT/whole60k.log, cusolver_tests.log, sweep.log (with the phases' times:
# NTK_CUSOLVER_TRACE) and mnist_whole60k_gpu.tgz (the out directory's runs/: `tar xzf` it in
# the repository root, copy its runs/ into experiments/fig2/mnist_whole60k_gpu/, then
# `ntk-probe collect experiments/fig2/mnist_whole60k_gpu --title "MNIST, all 60,000 images:
# the whole NTK (H200)"`).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
DEADLINE=${WHOLE60K_DEADLINE_S:-450}
# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh
begin_call whole60k
left() { echo $((DEADLINE - SECONDS)); }
export NTK_DATA_DIR=$PWD/.gpudata NTK_CUSOLVER_TRACE=1

echo "=== [${SECONDS}s] device tests"
timeout 150 "$BIN/cusolver-tests" --nocapture --test-threads=1 2>&1 | tee "$OUT/cusolver_tests.log"
rc=${PIPESTATUS[0]}
echo "tests rc=$rc"
if [ "$rc" -ne 0 ]; then
    echo "the device tests failed: no sweep"
    exit 1
fi

out=${WHOLE60K_OUT:-runs/fig2_mnist_whole60k_gpu}
mkdir -p "$out"
cp -rn experiments/fig2/mnist_whole60k_gpu/runs "$out/"
for seed in ${WHOLE60K_SEEDS:-1 2 3 4 5}; do
    if (($(left) < 40)); then
        echo "deadline: seed $seed not started"
        break
    fi
    echo "=== [${SECONDS}s] seed $seed ($(left) s left)"
    timeout "$(left)" "$BIN/ntk-probe-cusolver" sweep --config configs/fig2_mnist_whole60k_gpu.toml \
        --backend wgpu --set "sweep.seeds=[$seed]" --out "$out" 2>&1 | tee -a "$OUT/sweep.log"
    echo "seed $seed: exit ${PIPESTATUS[0]} at ${SECONDS}s"
done
if [ -d "$out/runs" ]; then tar czf "$OUT/mnist_whole60k_gpu.tgz" "$out/runs"; fi
echo "=== [${SECONDS}s] done"
