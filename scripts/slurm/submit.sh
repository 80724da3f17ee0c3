#!/usr/bin/env bash
# Submits a sweep as a Slurm job array and the collect job that runs after it.
#
#   bash scripts/slurm/submit.sh probe configs/fig2_mnist.toml 8 --dry-run   # what each task runs
#   bash scripts/slurm/submit.sh probe configs/fig2_mnist.toml 8             # 8 tasks, then collect
#   bash scripts/slurm/submit.sh train configs/mnist_depth_sweep.toml 20 --any --time 04:00:00
#   bash scripts/slurm/submit.sh train configs/cifar_resnet56.toml 4 --gpu   # --gres=gpu:1, cuda build
#
# Arguments: TOOL (probe or train), CONFIG, TASKS (the array's size: task i runs the points
# p with p mod TASKS = i). Options:
#   --out DIR      the sweep's output directory (default: the config's)
#   --any          collect after the array whatever its end (afterany: collects what
#                  finished and names what did not); default afterok (only if every task
#                  succeeded; a failed task leaves the collect job pending, never run, and
#                  `squeue` shows its reason DependencyNeverSatisfied)
#   --gpu          one GPU per task (--gres=gpu:1), the cuda build, --device cuda
#   --recompute    points made by another config are computed again (the tools' --recompute;
#                  without it a task that meets one fails, naming the keys that differ)
#   --dry-run      print the array's size and each task's points; submit nothing
#   other options  passed to sbatch for the array (--time, --partition, --cpus-per-task, ...)
# Logs: slurm-logs/ntk-sweep-<array job>_<task>.log and slurm-logs/ntk-collect-<job>.log
# (NTK_SLURM_LOGS moves the directory).
# Re-submitting the same command after failures or cancellations computes only the points
# that are missing (with --recompute, also those another config made): never duplicated,
# never mixed.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 3 ] || usage
tool=$1 config=$2 tasks=$3
shift 3
case "$tool" in probe|train) ;; *) echo "TOOL $tool: expected probe or train" >&2; exit 2 ;; esac
[ -f "$config" ] || { echo "$config: no such config" >&2; exit 2; }
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "TASKS $tasks: expected a positive count" >&2; exit 2; }
out= any=0 gpu=0 dry=0 recompute=0 sbatch_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --any) any=1; shift ;;
        --gpu) gpu=1; shift ;;
        --recompute) recompute=1; shift ;;
        --dry-run) dry=1; shift ;;
        *) sbatch_args+=("$1"); shift ;;
    esac
done
target=${CARGO_TARGET_DIR:-target}
bin=$target/debug/ntk-$tool
extra=
if [ "$gpu" = 1 ]; then
    sbatch_args+=(--gres=gpu:1)
    extra="--device cuda"
    build="cargo build -p ntk-$tool --features cuda (after scripts/setup-cuda.sh)"
else
    build="cargo build -p ntk-$tool"
fi
[ -x "$bin" ] || { echo "$bin: not built; run: $build" >&2; exit 2; }
[ "$recompute" = 0 ] || extra="$extra --recompute"
bin=$(realpath "$bin")
if [ -z "$out" ]; then
    # The config's own output directory, as the tool resolves it.
    out=$(sed -n 's/^out *= *"\(.*\)"/\1/p' "$config" | head -1)
    [ -n "$out" ] || out=runs/$([ "$tool" = train ] && echo train || echo sweep)
fi
out=$(realpath -m "$out")
config=$(realpath "$config")
dry() {
    if [ "$tool" = probe ]; then
        "$bin" sweep --config "$config" --out "$out" --shard "$1" --dry-run
    else
        "$bin" --config "$config" --out "$out" --shard "$1" --dry-run
    fi
}
if [ "$dry" = 1 ]; then
    echo "array of $tasks task(s) over $out; each task's points:"
    for ((i = 0; i < tasks; i++)); do
        echo "--- task $i (shard $i/$tasks)"
        dry "$i/$tasks"
    done
    exit 0
fi
# Fails here, before anything is submitted, if the config, --out or the shards are wrong.
dry "0/$tasks" >/dev/null
logs=${NTK_SLURM_LOGS:-slurm-logs}
mkdir -p "$logs"
export TOOL=$tool BIN=$bin CONFIG=$config OUT=$out EXTRA=$extra
array=$(sbatch --parsable --export=ALL --array="0-$((tasks - 1))" \
    --output="$logs/ntk-sweep-%A_%a.log" "${sbatch_args[@]}" scripts/slurm/sweep.sbatch)
dependency=$([ "$any" = 1 ] && echo afterany || echo afterok)
collect=$(sbatch --parsable --export=ALL --dependency="$dependency:${array%%;*}" \
    --kill-on-invalid-dep=no --output="$logs/ntk-collect-%j.log" scripts/slurm/collect.sbatch)
echo "array job ${array%%;*} ($tasks tasks), collect job ${collect%%;*} ($dependency)"
echo "logs: $logs/ntk-sweep-${array%%;*}_<task>.log, $logs/ntk-collect-${collect%%;*}.log"
