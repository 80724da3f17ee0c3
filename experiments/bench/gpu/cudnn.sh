#!/usr/bin/env bash
# The cuDNN engine's call on a lent GPU machine (made by
# `bash scripts/gpu-bench-pack.sh --cudnn --no-wgpu`, carrying .gpu/bin):
#   1. the step-for-step tests against the host engine (crates/ntk-train/tests/cudnn.rs);
#   2. ResNet-20/56/110 steps at batch 128, every variant: ours (`ntk-train bench --engine
#      cudnn`), then PyTorch (experiments/bench/gpu/torch_resnets.py): eager and the whole
#      step as a CUDA graph, each with cuDNN's autotuner on in NCHW and in channels_last
#      (PyTorch tuned, the peer) and with PyTorch's defaults (autotuner off, NCHW), f32 with
#      TF32 off; then, for CUDNN_TF32's networks, both sides with TF32 on (ours:
#      --fp32-precision tf32), the same six PyTorch rows;
#   3. (CUDNN_TRAIN=1) the headline config for a few hundred real steps on generated
#      CIFAR-format files.
# The summary (experiments/bench/gpu/report.py cudnn) compares ours with the best PyTorch row
# of the same precision, naming it, and with PyTorch's default eager row.
#
# Time on an H200 (issue 63: the whole script at most 8 minutes), estimated from the
# committed raw reports (results/cudnn-2026-11-26/call4-5, results/cusolver-2026-11-26/
# call4, call6): seconds a step at the upper end of what was measured there, ResNet-20
# 0.009, ResNet-56 0.02, ResNet-110 0.045 (eager; graph 0.02-0.03; TF32 eager 0.043); a
# PyTorch row costs ~0.35 s beyond its steps (model, capture: call4 ran 18 rows in ~19 s,
# ~8 s of it steps, ~5 s the start), a process start ~5 s, ours ~1.5 s a run.
#   PyTorch rows a round: 9 configs x 6 = 54 in f32, 4 x 6 = 24 in TF32; eager 5 + 20 steps,
#     graph 3 + capture + 5 + 20 (~29): f32 4 x 6 x 27 x 0.045 + 6 x 27 x 0.02
#     + 4 x 6 x 27 x 0.009 = 38 s, TF32 24 x 27 x 0.045 = 29 s; overhead 78 x 0.35 = 27 s;
#     the autotuner's search, once per layout in each tuned process, ~2 s: 8 s; four
#     processes (default and tuned, f32 and TF32): 20 s. About 122 s.
#   Ours a round: 9 + 2 (no graph) + 4 (TF32) runs x 1.5 s = 23 s.
#   Two rounds ~290 s, setup and tests ~25 s: ~315 s; the headline run (CUDNN_TRAIN=1) ~31 s
#   more: ~350 s, under 6 minutes. Bounds: nothing starts after CUDNN_DEADLINE_S (420 s);
#   torch_resnets.py starts no row within 15 s of it (--deadline-s; later rows are written
#   as skipped), every piece is under `timeout`, and the headline run needs 45 s left and
#   gets at most 45 s past the deadline: the script ends by ~470 s.
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
    timeout $(($(left) - 5)) python3 experiments/bench/gpu/torch_resnets.py \
        --deadline-s $(($(left) - 15)) $configs |
        python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='pytorch'))) for l in sys.stdin if l.startswith('{')]" \
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
    if (($(left) >= 60)); then
        # shellcheck disable=SC2086 # a list
        timeout $(($(left) - 5)) python3 experiments/bench/gpu/torch_resnets.py --tf32 \
            --deadline-s $(($(left) - 15)) $tf32 |
            python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='pytorch'))) for l in sys.stdin if l.startswith('{')]" \
            >>"$OUT/cudnn_bench.jsonl"
    fi
    if [ "${CUDNN_ONE_ROUND:-0}" = 1 ]; then break; fi
done
if [ "${CUDNN_TRAIN:-0}" = 1 ]; then
    if (($(left) >= 45)); then
        echo "=== [${SECONDS}s] the headline config"
        timeout $(($(left) + 45)) bash experiments/bench/gpu/cudnn_train.sh
    else
        echo "deadline: no headline run ($(left) s left)"
    fi
fi
echo "=== [${SECONDS}s] summary (seconds per step)"
python3 experiments/bench/gpu/report.py cudnn "$OUT/cudnn_bench.jsonl"
echo "=== [${SECONDS}s] done"
