#!/usr/bin/env bash
# The NTK condition number of all 60,000 MNIST images, whole, on a lent GPU machine
# (configs/fig2_mnist_whole60k_gpu.toml: ReLU and linear, depths 1..10, seeds 1..5; the
# kernel formed and factored on the device, ntk_cusolver::whole). Here first:
#   bash scripts/gpu-bench-pack.sh --cusolver --no-wgpu   # .gpu/bin, .gl
#   mkdir -p .gpudata/mnist && for f in train-images-idx3-ubyte train-labels-idx1-ubyte; do
#       gzip -6 -c datasets/data/mnist/$f > .gpudata/mnist/$f.gz; done   # 9.9 MB
# then the device call, from the repository root, carrying [".gl", ".gpu/bin", ".gpudata"]
# (and "runs/fig2_mnist_whole60k_gpu" to resume an earlier call's points):
#   bash experiments/fig2/gpu_whole60k.sh
# 1. the device tests (crates/ntk-cusolver/tests/device.rs, the whole kernel against the
#    host's tiles among them): a failure stops the call before the sweep;
# 2. the sweep one seed at a time (seed 1's twenty points first, then seed 2's, ...) under
#    one deadline (WHOLE60K_DEADLINE_S, default 450 s): finished points are kept, an
#    interrupted one is recomputed by the next call.
# Writes $OUT/whole60k.log, cusolver_tests.log, sweep.log (with the phases' times:
# NTK_CUSOLVER_TRACE) and mnist_whole60k_gpu.tgz (runs/fig2_mnist_whole60k_gpu: `tar xzf`
# it in the repository root, then `ntk-probe collect`).
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

out=runs/fig2_mnist_whole60k_gpu
for seed in ${WHOLE60K_SEEDS:-1 2 3 4 5}; do
    if (($(left) < 40)); then
        echo "deadline: seed $seed not started"
        break
    fi
    echo "=== [${SECONDS}s] seed $seed ($(left) s left)"
    timeout "$(left)" "$BIN/ntk-probe-cusolver" sweep --config configs/fig2_mnist_whole60k_gpu.toml \
        --device wgpu --set "sweep.seeds=[$seed]" 2>&1 | tee -a "$OUT/sweep.log"
    echo "seed $seed: exit ${PIPESTATUS[0]} at ${SECONDS}s"
done
if [ -d "$out" ]; then tar czf "$OUT/mnist_whole60k_gpu.tgz" "$out"; fi
echo "=== [${SECONDS}s] done"
