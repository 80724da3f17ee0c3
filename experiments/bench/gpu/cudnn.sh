#!/usr/bin/env bash
# The cuDNN engine's call on a lent GPU machine (made by
# `bash scripts/gpu-bench-pack.sh --cudnn --no-wgpu`, carrying .gpu/bin):
#   1. the step-for-step tests against the host engine (crates/ntk-train/tests/cudnn.rs);
#   2. ResNet-20/56/110 steps at batch 128, every variant: ours (`ntk-train bench --engine
#      cudnn`), then PyTorch eager and PyTorch with its whole step as a CUDA graph (one
#      process: experiments/bench/gpu/torch_resnets.py), f32 with TF32 off; then, for
#      CUDNN_TF32's networks, both sides with TF32 on (ours: --fp32-precision tf32);
#   3. (CUDNN_TRAIN=1) the headline config for a few hundred real steps on generated
#      CIFAR-format files.
# CUDA's libraries come from the machine's Python (PyTorch's nvidia-* wheels) on
# LD_LIBRARY_PATH. Output in $OUT: cudnn.log, cudnn_tests.log, cudnn_bench.jsonl (and
# cudnn_train.log, cudnn_train_run/ with CUDNN_TRAIN=1).
set -uo pipefail
cd "$(dirname "$0")/../../.."
DEADLINE=${CUDNN_DEADLINE_S:-420}
# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh
begin_call cudnn
left() { echo $((DEADLINE - SECONDS)); }

echo "=== [${SECONDS}s] tests"
timeout 240 "$BIN/cudnn-tests" --nocapture --test-threads=1 2>&1 | tee "$OUT/cudnn_tests.log"
echo "tests rc=${PIPESTATUS[0]}"

configs=${CUDNN_CONFIGS:-"20:batch_norm 20:norm_relu 20:fixup 20:selu 56:batch_norm 110:batch_norm 110:norm_relu 110:fixup 110:selu"}
for round in 1 2; do
    echo "=== [${SECONDS}s] bench round $round"
    for c in $configs; do
        if (($(left) < 30)); then echo "deadline: skipping $c"; continue; fi
        d=${c%%:*} v=${c#*:}
        timeout 60 "$BIN/ntk-train-cudnn" bench --resnet "$d" --variant "$v" --batch 128 \
            --steps 20 --engine cudnn 2>&1 | tee -a "$OUT/cudnn_bench.txt" | grep '^{' |
            python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='ours'))) for l in sys.stdin]" \
            >>"$OUT/cudnn_bench.jsonl"
    done
    if (($(left) < 60)); then echo "deadline: no PyTorch round $round"; continue; fi
    # shellcheck disable=SC2086 # $configs is a list
    timeout $(($(left) - 10)) python3 experiments/bench/gpu/torch_resnets.py $configs |
        python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='pytorch'))) for l in sys.stdin]" \
        >>"$OUT/cudnn_bench.jsonl"
    # Ours without the CUDA graph (every kernel launched from the host), for what the graph saves.
    nograph=${CUDNN_NOGRAPH:-"20:batch_norm 110:batch_norm"}
    for c in $nograph; do
        if (($(left) < 30)); then continue; fi
        d=${c%%:*} v=${c#*:}
        NTK_CUDNN_GRAPH=0 timeout 60 "$BIN/ntk-train-cudnn" bench --resnet "$d" --variant "$v" \
            --batch 128 --steps 20 --engine cudnn 2>&1 | grep '^{' |
            python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='ours-nograph'))) for l in sys.stdin]" \
            >>"$OUT/cudnn_bench.jsonl"
    done
    # Both sides with TF32 (the tensor cores): ours by --fp32-precision tf32, the user's
    # explicit choice (train.fp32_precision), PyTorch by its fp32_precision switches.
    tf32=${CUDNN_TF32:-"110:batch_norm 110:norm_relu 110:fixup 110:selu"}
    for c in $tf32; do
        if (($(left) < 30)); then continue; fi
        d=${c%%:*} v=${c#*:}
        timeout 60 "$BIN/ntk-train-cudnn" bench --resnet "$d" --variant "$v" --batch 128 \
            --steps 20 --engine cudnn --fp32-precision tf32 2>&1 | tee -a "$OUT/cudnn_bench.txt" | grep '^{' |
            python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='ours-tf32'))) for l in sys.stdin]" \
            >>"$OUT/cudnn_bench.jsonl"
    done
    if (($(left) >= 40)); then
        # shellcheck disable=SC2086 # a list
        timeout 60 python3 experiments/bench/gpu/torch_resnets.py --tf32 $tf32 |
            python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='pytorch'))) for l in sys.stdin]" \
            >>"$OUT/cudnn_bench.jsonl"
    fi
    if [ "${CUDNN_ONE_ROUND:-0}" = 1 ]; then break; fi
done
if [ "${CUDNN_TRAIN:-0}" = 1 ]; then
    echo "=== [${SECONDS}s] the headline config"
    timeout 200 bash experiments/bench/gpu/cudnn_train.sh
fi
echo "=== [${SECONDS}s] summary (seconds per step)"
python3 - "$OUT/cudnn_bench.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
best = {}
for r in rows:
    if r.get("seconds_per_step") is None:
        continue
    model = r["model"]
    key = (model, r["side"] if r["side"].startswith("ours") else "pytorch " + r["engine"] + ("" if r["precision"] == "f32" else " " + r["precision"]))
    best[key] = min(best.get(key, 1e9), r["seconds_per_step"])
models = sorted({k[0] for k in best})
print("| model | ours s | ours, no graph s | PyTorch eager s | PyTorch graph s | ours / eager | ours / graph | ours TF32 s | PyTorch eager TF32 s | PyTorch graph TF32 s | TF32: ours / eager | TF32: ours / graph |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for m in models:
    o, n = best.get((m, "ours")), best.get((m, "ours-nograph"))
    e, g = best.get((m, "pytorch eager")), best.get((m, "pytorch graph"))
    ot = best.get((m, "ours-tf32"))
    et, gt = best.get((m, "pytorch eager tf32")), best.get((m, "pytorch graph tf32"))
    f = lambda v: "-" if v is None else f"{v:.4f}"
    r = lambda a, b: "-" if a is None or b is None else f"{a / b:.2f}"
    print(f"| {m} | {f(o)} | {f(n)} | {f(e)} | {f(g)} | {r(o, e)} | {r(o, g)} | {f(ot)} | {f(et)} | {f(gt)} | {r(ot, et)} | {r(ot, gt)} |")
PY
echo "=== [${SECONDS}s] done"
