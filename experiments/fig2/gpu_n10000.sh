#!/usr/bin/env bash
# Liu & Hui Fig. 2 at n = 10,000 (configs/fig2_{mnist,fmnist}_n10000.toml) on a lent GPU
# machine, which has no Rust and no network. Here first:
#   bash scripts/gpu-bench-pack.sh --probe-only      # .gpu/bin: ntk-probe (wgpu) + libraries
#   python3 experiments/fig2/pack_data.py               # .gpudata: the images the configs select
# then the device call, from the repository root, carrying [".gl", ".gpu/bin", ".gpudata"]
# (and "runs" to resume an earlier call's points):
#   bash experiments/fig2/gpu_n10000.sh
# Both sweeps run at once on the one GPU (each point is a chain of small launches and host
# round trips, so two share it well), each under `timeout` (FIG2_DEADLINE_S, default 480 s:
# finished points are kept, an interrupted one is lost and recomputed on the next call).
# The infinite-width theory is left to `ntk-probe collect` afterwards (host eigensolves).
# Writes $OUT/fig2_{mnist,fmnist}_n10000.tgz (runs/fig2_*_n10000, resumable here or there:
# `tar xzf` them in the repository root) and the logs.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/runs/fig2_gpu}
mkdir -p "$OUT" || exit 1
BIN=/tmp/ntk-bin
WORK=$(mktemp -d /tmp/fig2-gpu.XXXXXX)
DEADLINE=${FIG2_DEADLINE_S:-480}
# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh
setup 2>&1 | tee "$OUT/setup.log"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee -a "$OUT/setup.log"
if ! have ntk-probe-wgpu; then
    echo "no ntk-probe-wgpu carried (bash scripts/gpu-bench-pack.sh --probe-only)" >&2
    exit 1
fi
export NTK_DATA_DIR=$PWD/.gpudata
threads=$(($(nproc) / 2))
pids=()
for set in mnist fmnist; do
    OPENBLAS_NUM_THREADS=$threads RAYON_NUM_THREADS=$threads timeout "$DEADLINE" \
        "${OURS_ENV[@]}" "$BIN/ntk-probe-wgpu" sweep --config "configs/fig2_${set}_n10000.toml" \
        --backend wgpu --set sweep.theory=false >"$OUT/sweep_$set.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p"
    echo "sweep pid $p: exit $? at ${SECONDS}s" >>"$OUT/setup.log"
done
# One archive per set: a device call returns files of at most 16 MiB (each is ~12 MiB).
for set in mnist fmnist; do tar czf "$OUT/fig2_${set}_n10000.tgz" "runs/fig2_${set}_n10000"; done
echo "done at ${SECONDS}s" | tee -a "$OUT/setup.log"
