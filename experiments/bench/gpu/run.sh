#!/usr/bin/env bash
# The one-call GPU benchmark (issue 16 item 3): our binaries (wgpu, and cuda where packed)
# against PyTorch eager on the same GPU, interleaved (ours, then the peer), into ONE report.
#
# On the lent GPU machine, from the repository root, with `.gl` and `.gpu/bin` carried
# (scripts/gpu-bench-pack.sh makes them here first):
#
#   bash experiments/bench/gpu/run.sh
#
# Writes $OUT/gpu_bench.md (the tables: what, ours s, PyTorch s, ratio; the machine on top),
# $OUT/gpu_bench.jsonl (one raw JSON line per piece) and $OUT/gpu_bench.log (everything
# printed). Pieces, each under `timeout`, none able to stop the others:
#   - the PyTorch NTK's correctness check (structured K against torch.func, n = 64), and a
#     cross-check: our probe's kernel (n = 2000, the bench's network) rebuilt by PyTorch from
#     our saved weights and inputs (relative error; both sides' lambda_min, lambda_max);
#   - NTK, n = 2000 and 10,000, depth 10, f32: `ntk-probe bench --eigen extreme` against
#     experiments/bench/gpu/pytorch_ntk.py (formation; extreme eigenvalues);
#   - training steps: the MLP 784-512x10-10 at batch 500 (`ntk-train bench`) against
#     experiments/train_bench/pytorch_step.py; CIFAR ResNet-20 and -110 (batch_norm) at batch
#     128 against experiments/train_bench/pytorch_resnet_step.py; ResNet-110 norm_relu and
#     fixup if time allows; then a second round of the core pieces if time allows.
# Environment: OUT (default runs/gpu_bench), GPU_BENCH_DEADLINE_S (default 470: no piece runs
# past this many seconds after the start, and one whose minimum no longer fits is skipped and
# recorded as such), GPU_BENCH_ROUNDS (default 2), GPU_BENCH_DRY=1 (a dry run of the plumbing
# on a machine without a GPU: PyTorch on the CPU, tiny sizes; the figures mean nothing).
set -u
export PYTHONUNBUFFERED=1
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname "$0")/../../.." || exit 1

OUT=${OUT:-$PWD/runs/gpu_bench}
mkdir -p "$OUT" || exit 1
LOG=$OUT/gpu_bench.log
JSONL=$OUT/gpu_bench.jsonl
MD=$OUT/gpu_bench.md
WORK=$(mktemp -d /tmp/gpu-bench.XXXXXX)
BIN=/tmp/ntk-bin
DEADLINE=${GPU_BENCH_DEADLINE_S:-470}
ROUNDS=${GPU_BENCH_ROUNDS:-2}
REPORT=(python3 experiments/bench/gpu/report.py)
TORCH_DEV=cuda NTK_SMALL=2000 NTK_LARGE=10000 BATCH=128 STEPS_OURS=10 STEPS_TORCH=20 WARMUP=3
MLP_STEPS=20
if [ "${GPU_BENCH_DRY:-0}" = 1 ]; then
    TORCH_DEV=cpu NTK_SMALL=200 NTK_LARGE=400 BATCH=4 STEPS_OURS=1 STEPS_TORCH=1 WARMUP=1
    MLP_STEPS=2
fi
: >"$JSONL"
: >"$LOG"

# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh

header() {
    {
        echo "# GPU benchmark: ntk-conditioning against PyTorch eager"
        echo
        echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash experiments/bench/gpu/run.sh\`" \
            "(deadline ${DEADLINE} s, rounds ${ROUNDS}). Ratios are ours / PyTorch on the same" \
            "GPU, adjacent runs; f32 throughout unless a row says otherwise (PyTorch with TF32" \
            "off; its eigenvalues in f64)."
        echo
        echo '```'
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
        echo "nproc: $(nproc); memory: $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB"}')"
        python3 -c 'import sys, torch
print("python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "| cuDNN", torch.backends.cudnn.version(),
      "| device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")' 2>&1
        echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)')"
        if [ -f .gpu/bin/BUILD_INFO ]; then cat .gpu/bin/BUILD_INFO; fi
        echo "vulkan loader: $(ldconfig -p 2>/dev/null | grep -c 'libvulkan.so') libvulkan entries; VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
        echo '```'
    } >"$WORK/header.md"
    cat "$WORK/header.md"
}

N=0
SKIP_GROUP=0
# group NEED_S: the pieces that follow (ours and their peer) run only if NEED_S seconds are
# left now, so that no side of a comparison runs alone.
group() {
    SKIP_GROUP=0
    if ((DEADLINE - SECONDS < $1)); then SKIP_GROUP=1; fi
}

# piece ROUND GROUP IMPL LIMIT_S NEED_S [--json-file FILE] -- COMMAND...
# Runs COMMAND under timeout (LIMIT_S, cut to what is left before the deadline) if at least
# NEED_S are left (and its group was not skipped), else records it as skipped; appends its
# record to the JSONL either way.
piece() {
    local round=$1 group=$2 impl=$3 limit=$4 need=$5
    shift 5
    local jsonf=""
    if [ "${1:-}" = "--json-file" ]; then jsonf=$2; shift 2; fi
    if [ "${1:-}" = "--" ]; then shift; fi
    N=$((N + 1))
    local cmd="$*"
    cmd=${cmd#env LD_LIBRARY_PATH=* }
    local left=$((DEADLINE - SECONDS))
    if ((SKIP_GROUP || left < need)); then
        local why="${left} s left, needs ${need} s"
        if ((SKIP_GROUP)); then why="${left} s left: the comparison does not fit"; fi
        echo "=== [${SECONDS}s] skipped: round $round | $group | $impl ($why)"
        "${REPORT[@]}" record --jsonl "$JSONL" --round "$round" --group "$group" --impl "$impl" \
            --rc -1 --cmd "$cmd"
        return 0
    fi
    ((limit > left)) && limit=$left
    echo "=== [${SECONDS}s] round $round | $group | $impl | limit ${limit} s"
    echo "\$ $cmd"
    local out="$WORK/piece$N.out"
    if [ -n "$jsonf" ]; then rm -f "$jsonf"; fi
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout -k 10 "$limit" "$@" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    t1=$(date +%s.%N)
    local wall
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    local extra=()
    if [ -n "$jsonf" ]; then extra=(--json-file "$jsonf"); fi
    "${REPORT[@]}" record --jsonl "$JSONL" --round "$round" --group "$group" --impl "$impl" \
        --rc "$rc" --wall "$wall" --stdout "$out" ${extra[@]+"${extra[@]}"} --cmd "$cmd" ||
        echo "warning: recording the piece failed"
    return 0
}

# NTK, depth 10, f32: ours on each packed backend, then PyTorch.
ntk() {
    local r=$1 n=$2 limit need be
    if ((n > NTK_SMALL)); then limit=200 need=60; else limit=150 need=30; fi
    group $((need * $(count ntk-probe) + 20))
    for be in wgpu cuda; do
        have "ntk-probe-$be" || continue
        local js="$WORK/ntk_${be}_n${n}_r${r}.json"
        piece "$r" "ntk n=$n" "ours-$be" "$limit" "$need" --json-file "$js" -- \
            "${OURS_ENV[@]}" "$BIN/ntk-probe-$be" bench --backend "$be" --n "$n" --depths 10 \
            --precisions f32 --repeats 3 --eigen extreme --out "$js"
    done
    piece "$r" "ntk n=$n" pytorch "$((limit - 30))" 20 -- \
        python3 experiments/bench/gpu/pytorch_ntk.py --n "$n" --depth 10 --width 512 \
        --input-dim 5 --repeats 3 --device "$TORCH_DEV" --json
}

# The MLP 784-512x10-10 step at batch 500.
mlp() {
    local r=$1 be
    group $((20 * $(count ntk-train) + 15))
    for be in wgpu cuda; do
        have "ntk-train-$be" || continue
        piece "$r" "mlp 784-512x10-10 batch 500" "ours-$be" 90 20 -- \
            "${OURS_ENV[@]}" "$BIN/ntk-train-$be" bench --backend "$be" --steps "$MLP_STEPS"
    done
    piece "$r" "mlp 784-512x10-10 batch 500" pytorch 60 15 -- \
        python3 experiments/train_bench/pytorch_step.py --device "$TORCH_DEV" \
        --steps "$MLP_STEPS" --json
}

# A CIFAR ResNet step at batch 128.
resnet() {
    local r=$1 depth=$2 variant=$3 limit need be
    if ((depth > 50)); then limit=150 need=45; else limit=120 need=30; fi
    group $((need * $(count ntk-train) + 20))
    for be in wgpu cuda; do
        have "ntk-train-$be" || continue
        piece "$r" "resnet-$depth $variant batch $BATCH" "ours-$be" "$limit" "$need" -- \
            "${OURS_ENV[@]}" "$BIN/ntk-train-$be" bench --device "$be" --resnet "$depth" \
            --variant "$variant" --batch "$BATCH" --steps "$STEPS_OURS"
    done
    piece "$r" "resnet-$depth $variant batch $BATCH" pytorch 90 20 -- \
        python3 experiments/train_bench/pytorch_resnet_step.py --device "$TORCH_DEV" \
        --depth "$depth" --variant "$variant" --batch "$BATCH" --steps "$STEPS_TORCH" \
        --warmup "$WARMUP" --json
}

# The same network and inputs on both sides: our probe (the bench's network: seed 1, inputs
# seed 0, f32 kernel on the device, every eigenvalue on the host in f64) saves its weights,
# inputs and kernel; PyTorch rebuilds the kernel from them and compares.
cross_check() {
    local r=$1 n=$2 be=""
    if have ntk-probe-wgpu; then be=wgpu; elif have ntk-probe-cuda; then be=cuda; else return 0; fi
    local dir="$WORK/probe_${be}_n$n"
    group 40
    piece "$r" "cross-check n=$n" "ours-$be" 120 20 --json-file "$dir/summary.json" -- \
        "${OURS_ENV[@]}" "$BIN/ntk-probe-$be" ntk --config configs/synthetic_ntk.toml --n "$n" \
        --precision f32 --device "$be" --out "$dir" --save-weights
    if [ -f "$dir/weights.safetensors" ]; then
        piece "$r" "cross-check n=$n" pytorch 90 15 -- \
            python3 experiments/bench/gpu/pytorch_ntk.py --from "$dir" --repeats 1 \
            --device "$TORCH_DEV" --json
    fi
}

core_round() {
    local r=$1
    ntk "$r" "$NTK_SMALL"
    mlp "$r"
    resnet "$r" 20 batch_norm
    resnet "$r" 110 batch_norm
    ntk "$r" "$NTK_LARGE"
}

main() {
    echo "gpu bench: OUT=$OUT, work in $WORK, deadline ${DEADLINE} s"
    setup
    header
    piece 1 "ntk check" pytorch 90 20 -- \
        python3 experiments/bench/gpu/pytorch_ntk.py --check --device "$TORCH_DEV" --depth 10 --json
    cross_check 1 "$NTK_SMALL"
    core_round 1
    resnet 1 110 norm_relu
    resnet 1 110 fixup
    local r
    for ((r = 2; r <= ROUNDS; r++)); do core_round "$r"; done
    SKIP_GROUP=0
    echo "=== [${SECONDS}s] done; GPU after the runs:"
    nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used --format=csv 2>&1
    "${REPORT[@]}" md --jsonl "$JSONL" --header "$WORK/header.md" >"$MD" ||
        echo "warning: the markdown report failed; the JSONL holds every record"
    echo
    cat "$MD"
    echo
    echo "=== [${SECONDS}s] wrote $MD, $JSONL, $LOG"
}

main 2>&1 | tee -a "$LOG"
exit "${PIPESTATUS[0]}"
