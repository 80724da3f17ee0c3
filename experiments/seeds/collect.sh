#!/usr/bin/env bash
# Collects every committed training experiment again (tables and figures) from its runs,
# after experiments/seeds/run.sh copied new seeds in: `ntk-train collect DIR`, and with
# `--log` the log-scale loss figure where the experiment draws one. Runs whose recorded
# configs differ beyond the sweep axes are merged with --allow-mixed, listed below with the
# reason (each experiment's README says it too):
# - agarwal_fig5/fmnist_fixup_recipe and fmnist_resnet110_aug: Fixup with its own scalar rate
#   beside NormReLU's runs;
# - experiments whose seed 0 tracked the NTK in f32 (before 2026-11-26) and whose added
#   seeds track it in f64 (the CPU's default since): training is the same.
#
#   bash experiments/seeds/collect.sh          # every experiment
#   bash experiments/seeds/collect.sh fig3/fmnist agarwal_fig7/fmnist
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${NTK_TRAIN_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"

# experiment | draws a log-scale loss figure
all=(
    "fig3/mnist log" "fig3/fmnist log" "fig3/mnist_60k log" "fig3/fmnist_60k log"
    "agarwal_fig1/fmnist -" "agarwal_fig1/fmnist_resnets -"
    "agarwal_fig3/fmnist log" "agarwal_fig3/fmnist_50ep log"
    "agarwal_fig4/fmnist -" "agarwal_fig4/fmnist_resnet110 log"
    "agarwal_fig5/fmnist -" "agarwal_fig5/fmnist_fixup_recipe -" "agarwal_fig5/fmnist_resnet110_aug log"
    "agarwal_fig7/fmnist log" "agarwal_fig8/fmnist -"
    "convergence/mnist2000 log" "convergence/mnist2000_w2048 log" "convergence/synthetic2000 log"
)
mixed=(agarwal_fig5/fmnist_fixup_recipe agarwal_fig5/fmnist_resnet110_aug agarwal_fig7/fmnist
    agarwal_fig3/fmnist agarwal_fig3/fmnist_50ep fig3/mnist fig3/fmnist fig3/mnist_60k fig3/fmnist_60k)

for entry in "${all[@]}"; do
    read -r e log <<< "$entry"
    if [ $# -gt 0 ] && [[ " $* " != *" $e "* ]]; then continue; fi
    flags=()
    for m in "${mixed[@]}"; do [ "$m" = "$e" ] && flags+=(--allow-mixed); done
    "$bin" collect "experiments/$e" "${flags[@]}" > /dev/null
    if [ "$log" = log ]; then "$bin" collect "experiments/$e" --log "${flags[@]}" > /dev/null; fi
    echo "collected experiments/$e ${flags[*]}"
done
