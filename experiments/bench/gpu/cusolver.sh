#!/usr/bin/env bash
# The cuSOLVER eigensolver's call on a lent GPU machine (made by
# `bash scripts/gpu-bench-pack.sh --cusolver --no-wgpu`, carrying .gl and .gpu/bin):
#   1. the device tests against LAPACK and the Burn route (crates/ntk-cusolver/tests/device.rs);
#   2. the NTK at n = 2000 and 10,000, depth 10, width 512, d = 5: the f32 kernel on wgpu,
#      then `eigen = "extreme"` (potrf + Lanczos on cuBLAS) and `full` (syevd), f64 on the
#      device (`ntk-probe bench`), beside PyTorch (experiments/bench/gpu/pytorch_ntk.py: the
#      same kernel formation, `eigvalsh` in f64 through cuSOLVER), two interleaved rounds
#      (CUSOLVER_SIZES overrides the sizes; CUSOLVER_DEADLINE_S the 420 s budget).
# CUDA's libraries come from the machine's Python (PyTorch's nvidia-* wheels) on
# LD_LIBRARY_PATH. Output in $OUT: cusolver.log, cusolver_tests.log, cusolver_bench.jsonl.
set -uo pipefail
cd "$(dirname "$0")/../../.."
DEADLINE=${CUSOLVER_DEADLINE_S:-420}
# shellcheck source=experiments/bench/gpu/env.sh
source experiments/bench/gpu/env.sh
begin_call cusolver
left() { echo $((DEADLINE - SECONDS)); }

echo "=== [${SECONDS}s] tests"
timeout 120 "$BIN/cusolver-tests" --nocapture --test-threads=1 2>&1 | tee "$OUT/cusolver_tests.log"
echo "tests rc=${PIPESTATUS[0]}"

tag() { python3 -c "import json,sys; [print(json.dumps(dict(json.loads(l), round=$1, side='$2', eigen_route='$3'))) for l in sys.stdin if l.startswith('{')]"; }
for round in 1 2; do
    for n in ${CUSOLVER_SIZES:-2000 10000}; do
        for eigen in extreme full; do
            if (($(left) < 60)); then echo "deadline: skipping n=$n $eigen"; continue; fi
            echo "=== [${SECONDS}s] round $round, n=$n, ours, $eigen"
            timeout 120 "$BIN/ntk-probe-cusolver" bench --device wgpu --n "$n" --depths 10 \
                --precisions f32 --repeats 3 --eigen "$eigen" --out "$WORK/ours.json" ||
                echo "ours rc=$?"
            if [ -f "$WORK/ours.json" ]; then
                python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); rows=d if isinstance(d,list) else d.get("rows",[d]); [print(json.dumps(r)) for r in rows]' \
                    "$WORK/ours.json" | tag "$round" ours "$eigen" >>"$OUT/cusolver_bench.jsonl"
                rm -f "$WORK/ours.json"
            fi
        done
        if (($(left) < 60)); then echo "deadline: no PyTorch n=$n"; continue; fi
        echo "=== [${SECONDS}s] round $round, n=$n, PyTorch"
        timeout 120 python3 experiments/bench/gpu/pytorch_ntk.py --n "$n" --depth 10 --width 512 \
            --input-dim 5 --repeats 3 --device cuda --json | tee -a "$OUT/pytorch.txt" |
            tag "$round" pytorch eigvalsh >>"$OUT/cusolver_bench.jsonl"
    done
done
echo "=== [${SECONDS}s] rows"
cat "$OUT/cusolver_bench.jsonl"
echo "=== [${SECONDS}s] done"
