#!/usr/bin/env bash
# cuDNN's two BatchNorm modes for training (`NTK_CUDNN_BN`: spatial, the default, or
# persistent) side by side on a lent GPU machine (made by
# `bash scripts/gpu-bench-pack.sh --cudnn --no-wgpu`, carrying .gpu/bin):
#   1. the step-for-step tests against the host engine with NTK_CUDNN_BN=persistent;
#   2. ResNet-20/56/110 batch_norm steps at batch 128, the modes interleaved, two rounds,
#      then PyTorch for the same networks (experiments/bench/gpu/torch_resnets.py: eager and
#      graph, default and tuned, NCHW and channels_last; ~35 s for the three).
# Output in $OUT: cudnn_bn.log, cudnn_bn_tests.log, cudnn_bn.jsonl.
set -uo pipefail
cd "$(dirname "$0")/../../.."
# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh
begin_call cudnn_bn

echo "=== [${SECONDS}s] tests, NTK_CUDNN_BN=persistent"
NTK_CUDNN_BN=persistent timeout 120 "$BIN/cudnn-tests" --nocapture --test-threads=1 2>&1 |
    tee "$OUT/cudnn_bn_tests.log" | grep -E "^test |test result"
echo "tests rc=${PIPESTATUS[0]}"

configs=${CUDNN_BN_CONFIGS:-"110:batch_norm 56:batch_norm 20:batch_norm"}
for round in 1 2; do
    for c in $configs; do
        for mode in spatial persistent; do
            d=${c%%:*} v=${c#*:}
            echo "=== [${SECONDS}s] round $round, resnet-$d $v, $mode"
            NTK_CUDNN_BN=$mode timeout 60 "$BIN/ntk-train-cudnn" bench --resnet "$d" --variant "$v" \
                --batch 128 --steps 20 --engine cudnn 2>&1 | grep '^{' |
                python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$round, side='ours', bn_mode='$mode'))) for l in sys.stdin]" |
                tee -a "$OUT/cudnn_bn.jsonl"
        done
    done
done
echo "=== [${SECONDS}s] PyTorch"
# shellcheck disable=SC2086 # a list
timeout 90 python3 experiments/bench/gpu/torch_resnets.py $configs |
    python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), side='pytorch'))) for l in sys.stdin if l.startswith('{')]" |
    tee -a "$OUT/cudnn_bn.jsonl"
echo "=== [${SECONDS}s] done"
