#!/usr/bin/env bash
# The memory guard against the limits a process inherits (the second hostile review,
# cluster 5), for what a test cannot set up: a memory cgroup of 1 GiB (v2, or v1's memory
# controller; needs root) and `ulimit -v` (RLIMIT_AS). Each case must end in exit code 2
# with a message naming the limit, never the OOM killer (137), an allocation abort (134)
# or a panic (101). Prints one line per case; exits 1 if any case did otherwise.
#
#   cargo build -p ntk-probe -p ntk-train && bash scripts/hostile-memory.sh
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${CARGO_TARGET_DIR:-target}/debug
probe=$bin/ntk-probe
train=$bin/ntk-train
for b in "$probe" "$train"; do
    [ -x "$b" ] || { echo "missing $b: build it first (see the header)"; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
# A training run of about 2 GiB (an MLP of width 8192 on the 8x8 digits: 134 M parameters
# with their gradients and momenta in f32): under this machine's memory, over 1 GiB.
cat >"$work/wide.toml" <<'TOML'
[data]
dataset = "digits"
n = 100
[model]
width = 8192
depth = 2
activation = "relu"
output_dim = 10
[optim]
lr = 0.1
[train]
batch_size = 50
epochs = 1
test_n = 0
TOML

# One case: NAME, the limit the message must name, then the command. Expects exit code 2.
check() {
    local name=$1 limit=$2
    shift 2
    "$@" >"$work/log" 2>&1
    local rc=$?
    local line
    line=$(grep -m1 -E 'error|panicked|abort|memory allocation' "$work/log" | cut -c1-300)
    if [ "$rc" = 2 ] && grep -q "$limit" "$work/log"; then
        echo "ok    $name: rc 2: $line"
    else
        echo "FAIL  $name: rc $rc: ${line:-$(tail -c 300 "$work/log")}"
        bad=1
    fi
}

# A memory cgroup of 1 GiB for the cases below, v2 if mounted, else v1's controller.
cg=
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
    cg=/sys/fs/cgroup/ntk-hostile-$$
    mkdir "$cg" && echo 1G >"$cg/memory.max" || cg=
elif [ -d /sys/fs/cgroup/memory ]; then
    cg=/sys/fs/cgroup/memory/ntk-hostile-$$
    mkdir "$cg" && echo 1G >"$cg/memory.limit_in_bytes" || cg=
fi
in_cgroup() {
    # The shell moves itself into the cgroup, then becomes the command.
    bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
if [ -n "$cg" ]; then
    check "cgroup 1 GiB: ntk-probe ntk, n = 12000 (a 1.1 GiB kernel)" cgroup \
        in_cgroup "$probe" ntk --config configs/synthetic_ntk.toml --out "$work/a" --set data.n=12000
    check "cgroup 1 GiB: ntk-train, an MLP of width 8192 (2 GiB)" cgroup \
        in_cgroup "$train" --config "$work/wide.toml" --out "$work/b"
    rmdir "$cg"
else
    echo "skip  cgroup cases: no memory cgroup can be made here (not root, or no controller)"
fi

# ulimit -v: 2 GiB of address space in all.
check "ulimit -v 2 GiB: ntk-probe ntk, n = 14000" RLIMIT_AS \
    bash -c 'ulimit -v 2097152 && exec "$@"' _ "$probe" ntk --config configs/synthetic_ntk.toml \
    --out "$work/c" --set data.n=14000
check "ulimit -v 2 GiB: ntk-train, an MLP of width 8192 (2 GiB)" RLIMIT_AS \
    bash -c 'ulimit -v 2097152 && exec "$@"' _ "$train" --config "$work/wide.toml" --out "$work/d"
# The guard overruled (--max-memory): the allocation that fails is still an error (exit
# code 2, `ntk_cli::oom`), not an abort.
check "ulimit -v 2 GiB, guard overruled: ntk-probe ntk, n = 14000" "out of memory" \
    bash -c 'ulimit -v 2097152 && exec "$@"' _ "$probe" ntk --config configs/synthetic_ntk.toml \
    --out "$work/e" --set data.n=14000 --max-memory 100G
check "ulimit -v 2 GiB, guard overruled: ntk-train, an MLP of width 8192" "out of memory" \
    bash -c 'ulimit -v 2097152 && exec "$@"' _ "$train" --config "$work/wide.toml" --out "$work/f" \
    --max-memory 100G
exit $bad
