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
# A relative NTK_TRAIN_BIN is the caller's, read before the cd below (eighty-second
# hostile round, N4: `NTK_TRAIN_BIN=bin/ntk-train` from another directory was not found).
case "${NTK_TRAIN_BIN:-}" in
'' | /*) ;;
*) NTK_TRAIN_BIN="$PWD/$NTK_TRAIN_BIN" ;;
esac
cd "$(dirname "$0")/../.."
bin="${NTK_TRAIN_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"
# As run.sh says it (eighty-first hostile round, N7: bash's "No such file", status 127).
if [ ! -x "$bin" ]; then
    echo "collect: $bin not found: cargo build -p ntk-train first (or set NTK_TRAIN_BIN)" >&2
    exit 2
fi

list=experiments/seeds/collected.txt
# The list first, checked whole; then every name asked for must be one of its lines exactly
# (an empty name, or two names in one argument, is refused before anything is collected:
# thirty-sixth hostile round, D4: "" collected nothing with exit 0, and "fig3/mnist x"
# collected fig3/mnist before it failed).
names=() logs=() merges=()
# `|| [ -n "$e" ]`: a last line without a newline is read too.
lineno=0
declare -A listed=()
while read -r e log merge || [ -n "$e" ]; do
    lineno=$((lineno + 1))
    case "$e" in ''|'#'*) continue ;; esac
    # A carriage return (CRLF line ends) named, not printed raw where it hides the message
    # (eighty-seventh hostile round, N2).
    case "$e$log$merge" in *$'\r'*)
        echo "error: $list: line $lineno ends in a carriage return (CRLF line ends): save the list with LF line ends" >&2; exit 2 ;;
    esac
    # One spelling per experiment, as its directory under experiments/ is named: `mine` and
    # `./mine` were collected twice (hundred-and-twenty-fifth hostile round, N3), and `/mine`
    # (hundred-and-twenty-sixth, N3).
    case "$e" in .|..|./*|../*|/*|*/|*//*|*/./*|*/../*|*/.|*/..)
        echo "error: $list: line $lineno: experiment '$e' is not spelled as its directory under experiments/ is named (no leading or trailing /, ./, .. or //)" >&2; exit 2 ;;
    esac
    # A directory under experiments/, checked here, before anything is collected
    # (hundred-and-twenty-seventh hostile round, N1: `experiments/mine`, `MINE` or `"mine"`
    # was found missing only when reached, after the lines above it were collected).
    case "$e" in experiments/*)
        echo "error: $list: line $lineno: experiment '$e' is spelled from the repository's root: write it as its directory under experiments/ is named ('${e#experiments/}')" >&2; exit 2 ;;
    esac
    if [ ! -d "experiments/$e" ]; then
        echo "error: $list: line $lineno: experiment '$e': experiments/$e is no directory" >&2; exit 2
    fi
    # An experiment is a training sweep's directory: a run of ntk-train in its runs/ there,
    # not through a link (hundred-and-twenty-eighth hostile round, N4: `seeds` or
    # `mine/runs` was found only when reached; hundred-and-twenty-ninth, N4: an empty
    # runs/, a probe's sweep or a linked runs/ too).
    if [ -L "experiments/$e/runs" ]; then
        echo "error: $list: line $lineno: experiment '$e': experiments/$e/runs is a symbolic link to $(readlink "experiments/$e/runs"), not the sweep's own runs/, so experiments/$e is no experiment's directory (list the directory the link leads to)" >&2; exit 2
    fi
    if [ ! -d "experiments/$e/runs" ] \
        || ! compgen -G "experiments/$e/runs/*/config.toml" > /dev/null; then
        echo "error: $list: line $lineno: experiment '$e': experiments/$e has no runs/ holding a training run (runs/*/config.toml), so it is no experiment's directory" >&2; exit 2
    fi
    # One experiment once, by its real directory (it was collected twice with no word; a
    # link to a listed one too: hundred-and-twenty-eighth hostile round, N4).
    real=$(cd "experiments/$e" && pwd -P)
    if [ -n "${listed[$real]:-}" ]; then
        echo "error: $list: line $lineno: experiment '$e' is listed already (line ${listed[$real]})" >&2; exit 2
    fi
    listed["$real"]=$lineno
    case "$log/$merge" in log/mixed|log/-|-/mixed|-/-) ;;
        *) echo "error: $list: line $lineno ('$e $log $merge'): columns 2-3 must be log|- and mixed|-" >&2; exit 2 ;;
    esac
    names+=("$e") logs+=("$log") merges+=("$merge")
done < "$list"
# A list of comments and blank lines alone collects nothing: said (eighty-eighth hostile
# round, N1: status 0 and no word).
if [ ${#names[@]} -eq 0 ]; then
    echo "error: $list: no experiment listed (only comments or blank lines)" >&2; exit 2
fi
declare -A asked=()
for want in "$@"; do
    found=0
    for e in "${names[@]}"; do [ "$e" = "$want" ] && found=1; done
    if [ "$found" = 0 ]; then
        echo "error: $list: no experiment '$want' (experiments/<name>, as the list spells it, one per argument)" >&2
        exit 2
    fi
    asked["$want"]=1
done
for i in "${!names[@]}"; do
    e="${names[$i]}"
    if [ $# -gt 0 ] && [ -z "${asked[$e]:-}" ]; then continue; fi
    flags=()
    [ "${merges[$i]}" = mixed ] && flags+=(--allow-mixed)
    "$bin" collect "experiments/$e" "${flags[@]}" > /dev/null
    if [ "${logs[$i]}" = log ]; then "$bin" collect "experiments/$e" --log "${flags[@]}" > /dev/null; fi
    echo "collected experiments/$e ${flags[*]}"
done
