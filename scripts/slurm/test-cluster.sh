#!/usr/bin/env bash
# The batch scripts against a real Slurm (a single-node cluster on this machine,
# local-cluster.sh; needs root): a small probe sweep and a small training sweep, each
# submitted as an array of several tasks plus the dependent collect (submit.sh), must give
# the results of a serial run bit for bit; then the faults: a task cancelled mid-run and
# the array submitted again completes only the missing points; a failing task leaves the
# afterok collect unrun, and says why; a task at its time limit requeues itself, or, where
# the requeue is refused, fails saying so and resumes when submitted again.
#
#   cargo build -p ntk-probe -p ntk-train && bash scripts/slurm/test-cluster.sh
# Prints one line per check and exits 1 if any failed. Stops the cluster it started.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d /tmp/ntk-slurm-test.XXXX)
# Copies of the binaries, where submit.sh looks for them ($CARGO_TARGET_DIR/debug), so that
# a build while the checks run (CI's later stages) does not replace them under a job.
mkdir -p "$work/target/debug"
cp "$target/debug/ntk-probe" "$target/debug/ntk-train" "$work/target/debug/" || { rm -rf "$work"; exit 1; }
export CARGO_TARGET_DIR=$work/target
probe=$work/target/debug/ntk-probe
train=$work/target/debug/ntk-train
logs=$work/logs
export NTK_SLURM_LOGS=$logs
# One OpenBLAS thread per task (jobs inherit the environment; the serial references run
# with it too). The checks are about scheduling, requeue and resume, and they must hold
# when this machine's CPUs are busy (CI runs them beside its builds): OpenBLAS's threads
# spin waiting for each other, so a task of 2 threads whose second CPU is taken trained
# about 150x slower (2,000 samples/s against 298,000; 2026-11-30, an Intel Xeon, 2 cores),
# past its check's wait. A user's task on a real cluster owns its CPUs and keeps Slurm's
# count (crates/ntk-runs/src/slurm.rs).
export OPENBLAS_NUM_THREADS=1
bad=0
ok() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; bad=1; }

bash scripts/slurm/local-cluster.sh start || exit 1
export SLURM_CONF=${NTK_SLURM_DIR:-/tmp/ntk-slurm}/slurm.conf
cleanup() {
    bash "$root/scripts/slurm/local-cluster.sh" stop
    rm -rf "$work"
}
trap cleanup EXIT

# Waits until every one of the given jobs (comma-separated; an array's tasks included) has
# ended, or waits for a dependency that can never be satisfied (at most $2 seconds).
wait_jobs() {
    local jobs=$1 limit=${2:-300} start=$SECONDS id states
    while :; do
        states=$(for id in ${jobs//,/ }; do scontrol -o show job "$id" 2>/dev/null; done |
            sed -n 's/.*JobState=\([A-Z_]*\) Reason=\([A-Za-z_]*\).*/\1 \2/p')
        if [ -n "$states" ] && ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) |DependencyNeverSatisfied' <<<"$states"; then
            return 0
        fi
        [ $((SECONDS - start)) -lt "$limit" ] || { echo "jobs $jobs still running: $states"; return 1; }
        sleep 1
    done
}
# The job ids submit.sh printed.
ids() { sed -n 's/^array job \([0-9]*\) .*collect job \([0-9]*\) .*/\1 \2/p' <<<"$1"; }

cat >"$work/probe.toml" <<'TOML'
[sweep]
depths = [1, 2, 3]
activations = ["relu", "tanh"]
seeds = [1, 2]
protocols = ["whole"]
out = "unused"
theory = false
[data]
dataset = "synthetic"
n = 40
input_dim = 5
[model]
width = 64
depth = 1
activation = "relu"
[probe]
precision = "f64"
TOML
cat >"$work/train.toml" <<'TOML'
[data]
dataset = "digits"
n = 200
subset = "first"
[model]
width = 32
depth = 1
activation = "relu"
output_dim = 10
seed = 1
[optim]
lr = 0.1
momentum = 0.5
[train]
batch_size = 50
epochs = 3
test_n = 0
[sweep]
depths = [1, 2, 3]
lrs = [0.1, 0.05]
seeds = [1]
families = [{ activation = "relu" }]
TOML

# Bit-for-bit: every eigenvalues.npy of the probe, every metrics.csv (less the seconds
# column) and the final loss of the training runs.
same_probe() {
    local a=$1 b=$2 n=0
    while read -r f; do
        cmp -s "$a/$f" "$b/$f" || { echo "differs: $f"; return 1; }
        n=$((n + 1))
    done < <(cd "$a" && find runs -name eigenvalues.npy | sort)
    [ "$n" -gt 0 ] && [ "$n" = "$(cd "$b" && find runs -name eigenvalues.npy | wc -l)" ]
}
same_train() {
    local a=$1 b=$2 n=0
    while read -r f; do
        diff -q <(cut -d, -f1-5 "$a/$f") <(cut -d, -f1-5 "$b/$f") >/dev/null ||
            { echo "differs: $f"; return 1; }
        n=$((n + 1))
    done < <(cd "$a" && find runs -name metrics.csv -not -path '*/checkpoints/*' | sort)
    [ "$n" -gt 0 ] && [ "$n" = "$(cd "$b" && find runs -name metrics.csv -not -path '*/checkpoints/*' | wc -l)" ]
}

# 0. The dry run: the array's size and each task's points, nothing submitted.
queued=$(squeue -h | wc -l)
said=$(bash scripts/slurm/submit.sh probe "$work/probe.toml" 3 --out "$work/dry" --dry-run 2>&1)
if grep -q "array of 3 task(s)" <<<"$said" && grep -q -- "--- task 2 (shard 2/3)" <<<"$said" &&
    [ ! -e "$work/dry/runs" ] && [ "$(squeue -h | wc -l)" = "$queued" ]; then
    ok "dry run: the array's size and each task's points, nothing submitted"
else
    fail "dry run: $said"
fi

# 1. Serial references.
"$probe" sweep --config "$work/probe.toml" --out "$work/probe-serial" >/dev/null 2>&1 ||
    fail "serial probe sweep"
"$train" --config "$work/train.toml" --out "$work/train-serial" >/dev/null 2>&1 ||
    fail "serial training sweep"

# 2. Arrays of 3 tasks and their collect jobs.
for tool in probe train; do
    out=$work/$tool-array
    said=$(bash scripts/slurm/submit.sh "$tool" "$work/$tool.toml" 3 --out "$out" 2>&1)
    read -r array collect < <(ids "$said")
    if [ -z "${collect:-}" ]; then fail "$tool: submit: $said"; continue; fi
    wait_jobs "$array,$collect" 300
    log=$logs/ntk-collect-$collect.log
    if ! grep -q "every point is done" "$log" 2>/dev/null; then
        fail "$tool: the collect job did not find every point done ($log: $(tail -2 "$log" 2>/dev/null))"
    elif "same_$tool" "$work/$tool-serial" "$out"; then
        ok "$tool: an array of 3 tasks and its collect equal the serial run bit for bit"
    else
        fail "$tool: the array's results differ from the serial run's"
    fi
done

# 3. A task cancelled before it ran, then the same array submitted again: only the
#    missing points are computed.
out=$work/probe-cancel
said=$(bash scripts/slurm/submit.sh probe "$work/probe.toml" 3 --out "$out" --any --begin=now+30 2>&1)
read -r array collect < <(ids "$said")
scancel "${array}_1"
scontrol update JobId="$array" StartTime=now >/dev/null 2>&1
wait_jobs "$array,$collect" 300
if grep -q "not done" "$logs/ntk-collect-$collect.log" 2>/dev/null; then
    ok "probe: the afterany collect names the cancelled task's points as not done"
else
    fail "probe: the afterany collect did not name the missing points"
fi
before=$(find "$out/runs" -name summary.json | wc -l)
said=$(bash scripts/slurm/submit.sh probe "$work/probe.toml" 3 --out "$out" 2>&1)
read -r array collect < <(ids "$said")
wait_jobs "$array,$collect" 300
computed=$(cat "$logs"/ntk-sweep-"${array}"_*.log 2>/dev/null |
    sed -n 's/^sweep: \([0-9]*\) point(s) computed.*/\1/p' | awk '{s += $1} END {print s + 0}')
if [ "$before" -gt 0 ] && [ "${computed:-0}" = 4 ] && same_probe "$work/probe-serial" "$out"; then
    ok "probe: re-submitted, only the 4 missing points were computed, and all equal the serial run"
else
    fail "probe: re-submitted: computed ${computed:-?} point(s) (want 4), $before summaries before"
fi

# 3b. A training task cancelled mid-run (scancel), then the array submitted again: the
#     cancelled run resumes from its checkpoint, the finished one is skipped, and both equal
#     the serial run bit for bit.
sed -e 's/^n = 200/n = 1000/' -e 's/^epochs = 3/epochs = 400/' -e 's/^width = 32/width = 128/' \
    -e 's/^lrs = .*/lrs = [0.1]/' -e 's/^depths = .*/depths = [1, 2]/' "$work/train.toml" >"$work/two.toml"
"$train" --config "$work/two.toml" --out "$work/two-serial" >/dev/null 2>&1 || fail "serial two runs"
out=$work/two-array
said=$(bash scripts/slurm/submit.sh train "$work/two.toml" 2 --out "$out" --any 2>&1)
read -r array collect < <(ids "$said")
for _ in $(seq 1 600); do
    [ -f "$out/runs/depth002_relu_none_lr1e-1_seed1/checkpoint.json" ] && break
    sleep 0.1
done
scancel "${array}_1"
wait_jobs "$array,$collect" 300
if grep -q "not done" "$logs/ntk-collect-$collect.log" 2>/dev/null &&
    grep -qE ' partial .*depth002' "$logs/ntk-collect-$collect.log"; then
    ok "train: a task cancelled mid-run is named by the afterany collect (partial)"
else
    fail "train: cancelled mid-run: $(tail -3 "$logs/ntk-collect-$collect.log" 2>/dev/null)"
fi
said=$(bash scripts/slurm/submit.sh train "$work/two.toml" 2 --out "$out" 2>&1)
read -r array collect < <(ids "$said")
wait_jobs "$array,$collect" 300
if grep -q "0 run(s) trained, 1 already finished" "$logs/ntk-sweep-${array}_0.log" &&
    grep -q "resuming after epoch" "$logs/ntk-sweep-${array}_1.log" &&
    same_train "$work/two-serial" "$out"; then
    ok "train: re-submitted, the finished run was skipped, the cancelled one resumed ($(grep -o 'resuming after epoch [0-9]*' "$logs/ntk-sweep-${array}_1.log")), both equal the serial run"
else
    fail "train: re-submitted after a cancel: $(tail -2 "$logs/ntk-sweep-${array}_1.log" 2>/dev/null)"
fi

# 4. A config that fails at load, or whose points fail the kernel range check (which the
#    dry run foresees), is refused before anything is submitted; a task that fails (every
#    point fails when made) leaves the afterok collect unrun, pending with the reason Slurm
#    gives.
sed 's/^width = 64/widht = 64/' "$work/probe.toml" >"$work/typo.toml"
said=$(bash scripts/slurm/submit.sh probe "$work/typo.toml" 2 --out "$work/typo" 2>&1)
if grep -q "widht" <<<"$said" && ! grep -q "array job" <<<"$said"; then
    ok "probe: a config that fails at load is refused before anything is submitted"
else
    fail "probe: a bad config was submitted: $said"
fi
# ReLU^2 overflows f64 by depth 14: the kernel of one input alone is not finite, which the
# dry run that submit.sh makes first computes (on the host) and refuses.
sed -e 's/^depths = .*/depths = [14, 16]/' -e 's/^activations = .*/activations = ["relu_squared"]/' \
    "$work/probe.toml" >"$work/overflow.toml"
said=$(bash scripts/slurm/submit.sh probe "$work/overflow.toml" 2 --out "$work/overflow" 2>&1)
if grep -q "would fail when made" <<<"$said" && grep -q "overflow" <<<"$said" &&
    ! grep -q "array job" <<<"$said" && [ ! -e "$work/overflow/runs" ]; then
    ok "probe: points the kernel range check fails are refused before anything is submitted"
else
    fail "probe: points that overflow were submitted: $said"
fi
# Every task fails: the array is submitted held (sbatch's --hold, passed on by submit.sh)
# after submit.sh's load and dry-run checks pass, then a file is put where each point's
# directory goes (each task's own check refuses it before any work, as a dry run would now)
# and the array released; the files stay.
mkdir -p "$work/bad/runs"
said=$(bash scripts/slurm/submit.sh probe "$work/probe.toml" 2 --out "$work/bad" --hold 2>&1)
read -r array collect < <(ids "$said")
if [ -z "${collect:-}" ]; then fail "probe: failing tasks: submit: $said"; fi
echo "a user's file" >"$work/bad/runs/relu"
echo "a user's file" >"$work/bad/runs/tanh"
scontrol release "$array"
wait_jobs "$array,$collect" 120
reason=$(squeue -h -j "$collect" -o '%r' 2>/dev/null)
if [ "$reason" = DependencyNeverSatisfied ] && [ ! -f "$logs/ntk-collect-$collect.log" ] &&
    grep -q "where the sweep makes a point's directory" "$logs/ntk-sweep-${array}_0.log" &&
    [ "$(cat "$work/bad/runs/relu")" = "a user's file" ]; then
    ok "probe: failing tasks leave the afterok collect unrun (squeue: $reason)"
    scancel "$collect"
else
    fail "probe: the afterok collect after failing tasks: reason '${reason}'"
fi

# 5. A task signalled before its time limit (USR1, as --signal=B:USR1@300 sends it) stops
#    its run, requeues itself, resumes from the checkpoint and ends with the results of an
#    uninterrupted run, bit for bit.
sed -e 's/^n = 200/n = 1000/' -e 's/^epochs = 3/epochs = 1000/' -e 's/^width = 32/width = 128/' \
    -e 's/^lrs = .*/lrs = [0.1]/' -e 's/^depths = .*/depths = [2]/' "$work/train.toml" >"$work/long.toml"
"$train" --config "$work/long.toml" --out "$work/long-serial" >/dev/null 2>&1 || fail "serial long run"
out=$work/long-array
said=$(bash scripts/slurm/submit.sh train "$work/long.toml" 1 --out "$out" 2>&1)
read -r array collect < <(ids "$said")
run_dir=$out/runs/depth002_relu_none_lr1e-1_seed1
for _ in $(seq 1 600); do
    [ -f "$run_dir/checkpoint.json" ] && break
    sleep 0.1
done
scancel --signal=USR1 --batch "${array}_0"
wait_jobs "$array,$collect" 300
log=$(ls $logs/ntk-sweep-"${array}"_0.log 2>/dev/null)
if grep -q "requeueing" "$log" && grep -q "resuming after epoch" "$log" &&
    [ -f "$run_dir/summary.json" ] && same_train "$work/long-serial" "$out"; then
    ok "train: signalled, requeued, resumed ($(grep -o 'resuming after epoch [0-9]*' "$log" | head -1)), equal to the uninterrupted run bit for bit"
else
    fail "train: signalled task: $(tail -5 "$log" 2>/dev/null)"
fi
# 6. Where the requeue is refused (here: a job submitted with --no-requeue, which Slurm
#    will not requeue), the signalled task stops its run, says so and fails; the same
#    command submitted again resumes from the checkpoint and ends equal to the
#    uninterrupted run.
out=$work/norequeue
said=$(bash scripts/slurm/submit.sh train "$work/long.toml" 1 --out "$out" --no-requeue 2>&1)
read -r array collect < <(ids "$said")
run_dir=$out/runs/depth002_relu_none_lr1e-1_seed1
for _ in $(seq 1 600); do
    [ -f "$run_dir/checkpoint.json" ] && break
    sleep 0.1
done
scancel --signal=USR1 --batch "${array}_0"
wait_jobs "$array,$collect" 120
log=$logs/ntk-sweep-${array}_0.log
state=$(scontrol -o show job "${array}_0" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
scancel "$collect" 2>/dev/null
said=$(bash scripts/slurm/submit.sh train "$work/long.toml" 1 --out "$out" 2>&1)
read -r again collect < <(ids "$said")
wait_jobs "$again,$collect" 300
if grep -q "scontrol requeue was refused" "$log" 2>/dev/null && [ "$state" = FAILED ] &&
    grep -q "resuming after epoch" "$logs/ntk-sweep-${again}_0.log" &&
    same_train "$work/long-serial" "$out"; then
    ok "train: requeue refused, the task failed saying so ($state), the same command resumed it ($(grep -o 'resuming after epoch [0-9]*' "$logs/ntk-sweep-${again}_0.log" | head -1)), equal to the uninterrupted run"
else
    fail "train: requeue refused (state ${state:-?}): $(tail -3 "$log" 2>/dev/null)"
fi
exit $bad
