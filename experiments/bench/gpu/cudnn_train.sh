#!/usr/bin/env bash
# The headline config on a lent GPU machine with the cuDNN engine, for a few hundred real
# steps (CUDNN_TRAIN_ITERS, default 782: two epochs of CIFAR-10 at batch 128): data loading,
# augmentation, evaluation on 10,000 test images every epoch and checkpoints included.
# CIFAR-10 is not on the machine: generated files in the exact binary layout (random pixels
# and labels) stand in for it. Expects $BIN/ntk-train-cudnn (experiments/bench/gpu/cudnn.sh
# unpacks it) and CUDA's libraries on LD_LIBRARY_PATH. Output: $OUT/cudnn_train.log and the
# run directory's metrics.csv, summary.json, log.
set -uo pipefail
iters=${CUDNN_TRAIN_ITERS:-782}
data=$WORK/cifar
python3 - "$data" <<'PY'
import os, random, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
random.seed(0)
names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
for n in names:
    rec = bytearray(random.randbytes(10000 * 3073))
    rec[0::3073] = bytes(random.randrange(10) for _ in range(10000))
    open(os.path.join(d, n), "wb").write(rec)
open(os.path.join(d, "batches.meta.txt"), "w").write(
    "\n".join(["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]) + "\n")
print("generated", d)
PY
run=$WORK/cifar_resnet110
/usr/bin/time -v "$BIN/ntk-train-cudnn" --config configs/cifar_resnet110.toml --set "data.dir=$data" \
    --set "train.iterations=$iters" --out "$run" 2>&1 | tee "$OUT/cudnn_train.log"
echo "train rc=${PIPESTATUS[0]}"
mkdir -p "$OUT/cudnn_train_run"
cp "$run"/metrics.csv "$run"/summary.json "$run"/*.log "$OUT/cudnn_train_run/" 2>/dev/null
ls -la "$run"
