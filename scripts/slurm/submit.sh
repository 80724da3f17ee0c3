#!/usr/bin/env bash
# Submits a sweep as a Slurm job array and the collect job that runs after it.
#
#   bash scripts/slurm/submit.sh probe configs/fig2_mnist.toml 8 --dry-run   # what would be submitted
#   bash scripts/slurm/submit.sh probe configs/fig2_mnist.toml 8             # 8 tasks, then collect
#   bash scripts/slurm/submit.sh train configs/mnist_depth_sweep.toml 20 --any --time 04:00:00
#   bash scripts/slurm/submit.sh train configs/cifar_resnet110.toml 1 --gpu --time 01:00:00
#
# Arguments: TOOL (probe or train), CONFIG, TASKS (the array's size: task i runs the points
# p with p mod TASKS = i; 1 for a single run). Options:
#   --out DIR      the sweep's output directory (default: the config's)
#   --any          collect after the array whatever its end (afterany: collects what
#                  finished and names what did not); default afterok (only if every task
#                  succeeded; a failed task leaves the collect job pending, never run, and
#                  `squeue` shows its reason DependencyNeverSatisfied)
#   --gpu          one GPU per task (--gres=gpu:1, unless a --gres or --gpus option is given)
#                  on the fast route: train with the cuDNN engine (--engine cudnn;
#                  build: cargo build -p ntk-train --features cudnn), probe with the kernel on
#                  wgpu and its eigenvalues on cuSOLVER (--backend wgpu; build: cargo build -p
#                  ntk-probe --features wgpu,cusolver; a cuda,cusolver build runs --backend
#                  cuda). The binary's --version names its features; one that lacks these
#                  is refused (exit 2) with the command that builds it
#   --bin PATH     the binary the tasks run (default: $CARGO_TARGET_DIR/debug/ntk-TOOL, with
#                  target/ for an unset CARGO_TARGET_DIR)
#   --recompute    points made by another config are computed again (the tools' --recompute;
#                  without it a task that meets one fails, naming the keys that differ)
#   --dry-run      print the binary, the two sbatch command lines, and each task's command
#                  with its points (that command's own --dry-run); submit nothing
#   other options  passed to sbatch for the array (--time, --partition, --cpus-per-task, ...)
# CONFIG, --out, --bin and NTK_SLURM_LOGS are read from the directory the script is run in,
# as the tools read them.
# Logs: slurm-logs/ntk-sweep-<array job>_<task>.log and slurm-logs/ntk-collect-<job>.log in
# the repository (NTK_SLURM_LOGS moves the directory).
# Re-submitting the same command after failures or cancellations computes only the points
# that are missing (with --recompute, also those another config made): never duplicated,
# never mixed.
set -euo pipefail
# The repository: the jobs' scripts are there, and the default binary and logs. The
# arguments are resolved in the caller's directory first and made absolute; the script
# changes to the repository only after that (it resolved them there: 61st hostile round).
repo=$(cd "$(dirname "$0")/../.." && pwd)
# The comment above, without its marks.
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 2; }
[ $# -ge 3 ] || usage
tool=$1 config=$2 tasks=$3
shift 3
case "$tool" in probe|train) ;; *) echo "TOOL $tool: expected probe or train" >&2; exit 2 ;; esac
[ -f "$config" ] || { echo "$config: no such config" >&2; exit 2; }
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "TASKS $tasks: expected a positive count" >&2; exit 2; }
out= any=0 gpu=0 dry=0 recompute=0 bin= sbatch_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out|--bin)
            [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1: expected a value" >&2; exit 2; }
            if [ "$1" = --out ]; then out=$2; else bin=$2; fi
            shift 2 ;;
        --any) any=1; shift ;;
        --gpu) gpu=1; shift ;;
        --recompute) recompute=1; shift ;;
        --dry-run) dry=1; shift ;;
        *) sbatch_args+=("$1"); shift ;;
    esac
done
bin=${bin:-${CARGO_TARGET_DIR:-$repo/target}/debug/ntk-$tool}
if [ "$tool" = train ]; then gpu_build="cargo build -p ntk-train --features cudnn"
else gpu_build="cargo build -p ntk-probe --features wgpu,cusolver"; fi
if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
    build="cargo build -p ntk-$tool"
    [ "$gpu" = 0 ] || build=$gpu_build
    if [ -d "$bin" ]; then echo "$bin: a directory, not the binary (--bin names the file)" >&2
    else echo "$bin: not built; run: $build" >&2; fi
    exit 2
fi
bin=$(realpath "$bin")
# The features the binary was built with, as its --version names them (`features: flex
# cudnn`); empty for a build older than this script. A binary that cannot say its version
# (it does not start here, or is not one of the tools) is refused, with what it said
# (sixty-second hostile round, D4: the script ended silently with its exit status).
if ! version=$("$bin" --version 2>&1); then
    echo "$bin: cannot run --version here, so neither it nor its features can be checked: ${version:-no output}" >&2
    exit 2
fi
# The other tool's binary would run every task with the wrong command.
case "$version" in
    "ntk-$tool "*) ;;
    *) echo "$bin: not ntk-$tool (its --version says: $(head -1 <<<"$version"))" >&2; exit 2 ;;
esac
features=$(sed -n 's/^features: //p' <<<"$version")
has() { [[ " $features " == *" $1 "* ]]; }
lacks() {
    local said=${features:-none named: a build older than this script}
    echo "$bin: built with features: $said; --gpu needs $1: run $gpu_build" >&2
    exit 2
}
extra=() device=
if [ "$gpu" = 1 ]; then
    if [ "$tool" = train ]; then
        has cudnn || lacks "cudnn (the cuDNN engine)"
        extra+=(--engine cudnn)
    else
        # wgpu with cuSOLVER is the probe's fastest measured route (README, Backends: the NTK
        # of n = 10,000 with its kappa in 0.52-0.56 s on an H200, against 2.4 s on wgpu alone
        # on an H100); cuda with cuSOLVER for nodes without Vulkan.
        has cusolver || lacks "cusolver (the eigenvalues on cuSOLVER) and wgpu"
        if has wgpu; then device=wgpu
        elif has cuda; then device=cuda
        else lacks "wgpu (the kernel on the GPU) beside cusolver"; fi
        extra+=(--backend "$device")
    fi
    gres=0
    for a in ${sbatch_args[@]+"${sbatch_args[@]}"}; do
        case "$a" in --gres*|--gpus*|-G*) gres=1 ;; esac
    done
    [ "$gres" = 1 ] || sbatch_args+=(--gres=gpu:1)
fi
[ "$recompute" = 0 ] || extra+=(--recompute)
if [ -z "$out" ]; then
    # The config's own output directory, as the tool resolves it: its dry run's first line,
    # "N point(s) ... in OUT; this shard (0/1) owns N:" (a sed of the file missed every
    # spelling but out = "...", e.g. a literal string or an indented key, and sent the tasks
    # to runs/sweep: ninth hostile round). A config the dry run refuses keeps the default
    # here; the check below shows the tool's error.
    plan_cmd=("$bin" --config "$config" --dry-run)
    [ "$tool" = train ] || plan_cmd=("$bin" sweep --config "$config" --dry-run)
    first=$("${plan_cmd[@]}" 2>/dev/null | head -1 || true)
    case "$first" in
        *" in "*"; this shard ("*) rest=${first#* in }; out=${rest%; this shard (*} ;;
    esac
    [ -n "$out" ] || out=runs/$([ "$tool" = train ] && echo train || echo sweep)
fi
out=$(realpath -m "$out")
config=$(realpath "$config")
logs=$(realpath -m "${NTK_SLURM_LOGS:-$repo/slurm-logs}")
if [ -e "$logs" ] && [ ! -d "$logs" ]; then
    echo "NTK_SLURM_LOGS: $logs exists and is not a directory (the logs' directory)" >&2
    exit 2
fi
cd "$repo"
dependency=$([ "$any" = 1 ] && echo afterany || echo afterok)
# What the jobs are given (sbatch --export=ALL): sweep.sbatch and collect.sbatch build the
# tools' commands from these.
export TOOL=$tool BIN=$bin CONFIG=$config OUT=$out EXTRA="${extra[*]}" DEVICE=$device
array_cmd=(sbatch --parsable --export=ALL --array="0-$((tasks - 1))"
    --output="$logs/ntk-sweep-%A_%a.log" ${sbatch_args[@]+"${sbatch_args[@]}"}
    scripts/slurm/sweep.sbatch)
# The collect job's sbatch command (into `collect`), after the array job $1.
collect_cmd() {
    collect=(sbatch --parsable --export=ALL --dependency="$dependency:$1"
        --kill-on-invalid-dep=no --output="$logs/ntk-collect-%j.log" scripts/slurm/collect.sbatch)
}
# Task i of n as the array runs it (sweep.sbatch, `--shard slurm`), with --dry-run: its
# command on stdout's first line, then its points; fails exactly when the task would.
task_dry() {
    SWEEP_DRY_RUN=1 SLURM_ARRAY_JOB_ID=dry SLURM_ARRAY_TASK_ID=$1 SLURM_ARRAY_TASK_MIN=0 \
        SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=$2 bash scripts/slurm/sweep.sbatch
}
if [ "$dry" = 1 ]; then
    quoted() { printf '%q ' "$@" | sed 's/ $//'; }
    echo "binary: $bin (features: ${features:-not named})"
    echo "environment: $(quoted TOOL="$TOOL" BIN="$BIN" CONFIG="$CONFIG" OUT="$OUT" EXTRA="$EXTRA" DEVICE="$DEVICE")"
    echo "array: $(quoted "${array_cmd[@]}")"
    collect_cmd ARRAY_JOB_ID
    echo "collect: $(quoted "${collect[@]}")"
    echo "array of $tasks task(s) over $out; each task's command and points:"
    for ((i = 0; i < tasks; i++)); do
        echo "--- task $i (shard $i/$tasks)"
        task_dry "$i" "$tasks"
    done
    exit 0
fi
# Fails here, before anything is submitted, if the config, --out, the flags or a point
# (stale without --recompute, another engine's checkpoint) would fail a task: every point
# of the sweep, planned as one task's.
task_dry 0 1 >/dev/null
mkdir -p "$logs"
array=$("${array_cmd[@]}")
collect_cmd "${array%%;*}"
collect=$("${collect[@]}")
echo "array job ${array%%;*} ($tasks tasks), collect job ${collect%%;*} ($dependency)"
echo "logs: $logs/ntk-sweep-${array%%;*}_<task>.log, $logs/ntk-collect-${collect%%;*}.log"
