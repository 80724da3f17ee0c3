#!/usr/bin/env bash
# The convergence experiment (issue 47): for each activation, depth and seed, the rate from
# the network's own NTK at initialization (a one-step run writes predicted_spectrum.csv; the
# rate is half its stability limit, lr = n / lambda_max), then the run at that rate with
# its linearized prediction. Resumable: finished runs are kept (ntk-train --resume).
#
#   cargo build -p ntk-train && bash experiments/convergence/run.sh
#   CONV_DEPTHS="1 2" CONV_ACTS=relu CONV_SEEDS=1 bash experiments/convergence/run.sh
#   CONV_WIDTH=2048 CONV_DEPTHS="1 2 4 6" CONV_ACTS=relu bash experiments/convergence/run.sh
#   CONV_SET=synthetic bash experiments/convergence/run.sh   # N(0, I_5), random labels
# Runs go to runs/convergence_<set>[_w<width>]/<act>_d<depth>_s<seed> (set: mnist2000 or
# synthetic2000); each finished run's own files are copied into
# experiments/convergence/<set>[_w<width>]/runs/, and
# `ntk-train collect` writes there convergence.csv, convergence_rate.png and the
# training-loss figures with the predictions.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${NTK_TRAIN_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"
case "${CONV_SET:-mnist}" in
    mnist) set=mnist2000 title="MNIST, 2,000 images" ;;
    synthetic)
        set=synthetic2000 title="synthetic: N(0, I_5), random labels, 2,000 points"
        python3 experiments/convergence/synthetic_data.py runs/convergence_synthetic/data
        ;;
    *) echo "CONV_SET ${CONV_SET}: expected mnist or synthetic" >&2; exit 2 ;;
esac
config=experiments/convergence/$set.toml
width="${CONV_WIDTH:-512}"
suffix=$([ "$width" = 512 ] || echo "_w$width")
out="${CONV_OUT:-runs/convergence_$set$suffix}"
for seed in ${CONV_SEEDS:-1 2 3}; do
    for act in ${CONV_ACTS:-relu linear}; do
        for depth in ${CONV_DEPTHS:-1 2 4 6 8 10}; do
            name="${act}_d$(printf %02d "$depth")_s$seed"
            run="$out/$name" probe="$out/lambda/$name"
            net=(--set model.depth="$depth" --set model.width="$width" --set model.activation="$act"
                --set model.seed="$seed")
            if [ ! -f "$probe/predicted_spectrum.csv" ]; then
                rm -rf "$probe"
                "$bin" --config "$config" --out "$probe" "${net[@]}" --set train.epochs=1 \
                    --set train.test_n=0 --set 'prediction.kernels=["empirical"]' > /dev/null
            fi
            # lr = lr_stability_limit / 2 = n / lambda_max (empirical kernel).
            lr=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "lr_stability_limit") c = i }
                NR == 2 { printf "%.6g", $c / 2 }' "$probe/predicted_spectrum.csv")
            echo "=== $(date -u +%FT%TZ) $name: lr $lr"
            "$bin" --config "$config" --out "$run" --resume "${net[@]}" --set optim.lr="$lr"
        done
    done
done

dest="${CONV_DEST:-experiments/convergence/$set$suffix}"
for run in "$out"/*_d*/; do
    run="${run%/}"
    [ -f "$run/summary.json" ] || continue
    mkdir -p "$dest/runs/$(basename "$run")"
    for f in config.toml metrics.csv predicted.csv predicted_spectrum.csv summary.json; do
        cp -p "$run/$f" "$dest/runs/$(basename "$run")/$f"
    done
done
"$bin" collect "$dest" --title "$title, width $width" > /dev/null
"$bin" collect "$dest" --log --title "$title, width $width"
