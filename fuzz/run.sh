#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer's coverage instrumentation (stable Rust: the
# sancov pass, no sanitizer runtime) and runs each one, with bounded memory and time per
# input, then writes the figures (executions, speed, coverage, corpus, peak memory) to
# fuzz/results/<name>.csv.
#
#   bash fuzz/run.sh                  every target, 1,000,000 executions or 600 s each
#   bash fuzz/run.sh npy idx          some targets
#   FUZZ_RUNS=20000 FUZZ_SECONDS=20 FUZZ_READONLY=1 FUZZ_RESULTS=ci FUZZ_PROFILE=dev bash fuzz/run.sh
#                                     CI: a short run that leaves the committed corpus alone
#
# FUZZ_PROFILE: `release` (the default: optimised, for the long runs) or `dev` (unoptimised,
# the same instrumentation and checks: a cold build in a fraction of the time, for CI's
# short run, where the build and not the executions is the cost; cargo-fuzz's `--dev`).
#
# A crash, a timeout (10 s per input), or an input that allocates past 2 GiB stops the
# target; libFuzzer writes the input to fuzz/artifacts/<target>/ and the script exits 1.
#
# The corpus is committed packed, as corpus.tar.xz (its ~8,000 small files took ~34 MiB of
# disk blocks in every checkout, which a GPU call carries): unpacked into corpus/ (ignored)
# when corpus/ is missing or older than the archive, and packed again after a run that may
# add to it (not FUZZ_READONLY), deterministically (sorted names, no times or owners).
set -euo pipefail
cd "$(dirname "$0")"

if [ -f corpus.tar.xz ] && { [ ! -f corpus/.unpacked ] || [ corpus.tar.xz -nt corpus/.unpacked ]; }; then
    echo "fuzz: unpacking corpus.tar.xz into corpus/"
    rm -rf corpus
    mkdir -p corpus
    tar -xJf corpus.tar.xz -C corpus
    touch corpus/.unpacked
fi
pack_corpus() {
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --exclude=./.unpacked \
        -C corpus -cf - . | xz -9 -T1 >corpus.tar.xz.tmp
    mv corpus.tar.xz.tmp corpus.tar.xz
    touch corpus/.unpacked
}

runs="${FUZZ_RUNS:-1000000}"
seconds="${FUZZ_SECONDS:-600}"
results="results/${FUZZ_RESULTS:-fuzz}.csv"
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/ntk-fuzz-target}"
export CARGO_INCREMENTAL=0
# cargo-fuzz's coverage flags (libFuzzer's inline 8-bit counters, PC table, comparisons).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"

if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for f in fuzz_targets/*.rs; do
        targets+=("$(basename "$f" .rs)")
    done
fi

# An explicit --target keeps RUSTFLAGS off build scripts and proc macros (they would need
# libFuzzer's symbols), as cargo-fuzz does.
triple="$(rustc -vV | sed -n 's/^host: //p')"
case "${FUZZ_PROFILE:-release}" in
    release) profile=(--release); bin="$CARGO_TARGET_DIR/$triple/release" ;;
    dev) profile=(); bin="$CARGO_TARGET_DIR/$triple/debug" ;;
    *) echo "fuzz: FUZZ_PROFILE=$FUZZ_PROFILE: expected release or dev" >&2; exit 2 ;;
esac
echo "fuzz: building ${#targets[@]} target(s) (${FUZZ_PROFILE:-release}) in $CARGO_TARGET_DIR"
cargo build "${profile[@]}" --locked --bins --target "$triple"
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

mkdir -p results
# One target's run: its row of the figures into $2, its verdict as the exit status.
run_one() {
    local t=$1 row=$2 corpus work log start end rc execs rss last cov ft files secs rate crashes
    corpus="corpus/$t"
    mkdir -p "$corpus" "artifacts/$t"
    if [ "${FUZZ_READONLY:-0}" = 1 ]; then
        # New inputs go to a scratch directory; the committed corpus is only read.
        work="$(mktemp -d)"
        dirs=("$work" "$corpus")
    else
        work=""
        dirs=("$corpus")
    fi
    log="$(mktemp)"
    start=$(date +%s.%N)
    set +e
    "$bin/$t" "${dirs[@]}" \
        -runs="$runs" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1
    rc=$?
    set -e
    end=$(date +%s.%N)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo 0)
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo 0)
    files=$(find "$corpus" -type f | wc -l)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    rate=$(awk -v n="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }')
    crashes=0
    if [ $rc -ne 0 ]; then
        crashes=1
        echo "fuzz: $t FAILED (exit $rc); its log:" >&2
        tail -40 "$log" >&2
    fi
    printf '%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$t" "$execs" "$secs" "$rate" "$cov" "$ft" \
        "$files" "$rss" "$crashes" >"$row"
    echo "fuzz: $t: $execs executions in ${secs%.*} s, cov $cov, peak ${rss} MB, exit $rc"
    rm -f "$log"
    [ -n "$work" ] && rm -rf "$work"
    return "$crashes"
}

# FUZZ_JOBS targets at a time (default: one per core), each on one core: the same
# executions per target in a fraction of the wall time. Rows are written in target order.
jobs="${FUZZ_JOBS:-$(nproc)}"
rows="$(mktemp -d)"
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n || true
    done
    run_one "$t" "$rows/$t" &
done
wait
# The verdict from the rows: a crash, or a target that left no row.
status=0
echo "target,executions,seconds,execs_per_second,coverage,features,corpus_files,peak_rss_mb,crashes" >"$results"
for t in "${targets[@]}"; do
    if [ -f "$rows/$t" ]; then
        cat "$rows/$t" >>"$results"
        grep -q ',1$' "$rows/$t" && status=1
    else
        echo "fuzz: $t left no figures" >&2
        status=1
    fi
done
rm -rf "$rows"
echo "fuzz: figures in fuzz/$results"
if [ "${FUZZ_READONLY:-0}" != 1 ]; then
    pack_corpus
    echo "fuzz: corpus packed into fuzz/corpus.tar.xz (commit it)"
fi
# libFuzzer's closing line for the CI log.
echo "$(grep -c ',0$' "$results") passed, $(grep -c ',1$' "$results") failed"
exit $status
