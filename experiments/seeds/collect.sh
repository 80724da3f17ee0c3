#!/usr/bin/env bash
# Collects every committed training experiment again (tables and figures) from its runs,
# after experiments/seeds/run.sh copied new seeds in: `ntk-train collect DIR`, and with
# `--log` the log-scale loss figure where the experiment draws one, and `--allow-mixed` where
# the runs' recorded configs differ beyond the sweep axes: both as experiments/seeds/
# collected.txt lists them (the committed-tables test reads the same list).
#
#   bash experiments/seeds/collect.sh          # every experiment
#   bash experiments/seeds/collect.sh fig3/fmnist agarwal_fig7/fmnist
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${NTK_TRAIN_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"

list=experiments/seeds/collected.txt
matched=()
# `|| [ -n "$e" ]`: a last line without a newline is read too.
while read -r e log merge || [ -n "$e" ]; do
    case "$e" in ''|'#'*) continue ;; esac
    case "$log/$merge" in log/mixed|log/-|-/mixed|-/-) ;;
        *) echo "error: $list: line '$e $log $merge': columns 2-3 must be log|- and mixed|-" >&2; exit 2 ;;
    esac
    if [ $# -gt 0 ] && [[ " $* " != *" $e "* ]]; then continue; fi
    matched+=("$e")
    flags=()
    [ "$merge" = mixed ] && flags+=(--allow-mixed)
    "$bin" collect "experiments/$e" "${flags[@]}" > /dev/null
    if [ "$log" = log ]; then "$bin" collect "experiments/$e" --log "${flags[@]}" > /dev/null; fi
    echo "collected experiments/$e ${flags[*]}"
done < "$list"
# A name asked for that the list does not hold is an error, not a silent no-op.
for want in "$@"; do
    if [[ " ${matched[*]} " != *" $want "* ]]; then
        echo "error: $list: no experiment '$want' (experiments/<name>, as the list spells it)" >&2
        exit 2
    fi
done
