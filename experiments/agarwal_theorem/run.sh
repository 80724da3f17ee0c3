#!/usr/bin/env bash
# Agarwal, Awasthi & Kale's main theorem, measured: every sweep of this experiment, then the
# rate fits. Run from the repository root:
#   bash experiments/agarwal_theorem/run.sh
# The sweeps write to runs/agarwal_theorem/<name>/ (a stopped sweep resumes: finished points
# are skipped); their results.csv and summary.csv are copied to experiments/agarwal_theorem/<name>/,
# which fit.py reads (numpy and matplotlib: `python3 -m pip install numpy matplotlib`).
# NTK_PROBE names a built binary instead of `cargo run` (e.g. $CARGO_TARGET_DIR/debug/ntk-probe).
# AGARWAL_SWEEPS limits the sweeps run (default: all seven, in this order).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
probe=${NTK_PROBE:-"cargo run -q -p ntk-probe --"}
mkdir -p runs
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
for name in ${AGARWAL_SWEEPS:-theory_b0 theory_fast theory_slow theory_same_mu finite_b0 finite finite_deep}; do
    start=$(date +%s)
    $probe sweep --config "experiments/agarwal_theorem/$name.toml" > "runs/agarwal_theorem.$name.log" 2>&1 \
        || { echo "sweep $name failed; see runs/agarwal_theorem.$name.log" >&2; exit 1; }
    mkdir -p "$here/$name"
    cp "runs/agarwal_theorem/$name/results.csv" "runs/agarwal_theorem/$name/summary.csv" "$here/$name/"
    echo "$name: $(( $(date +%s) - start )) s wall"
done
python3 "$here/fit.py"
