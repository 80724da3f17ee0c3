#!/usr/bin/env bash
# Packs, here on the CPU machine, what experiments/bench/gpu/run.sh needs on a lent GPU
# machine (which has no Rust and reaches no network):
#   .gpu/bin/ntk-probe-wgpu.xz, ntk-train-wgpu.xz   stripped, xz-compressed binaries
#     (built with --features ntk-probe/wgpu; --cuda adds ntk-probe-cuda.xz, --cuda-train
#     also ntk-train-cuda.xz, both built with --features ntk-probe/cuda);
#   .gpu/bin/lib/<soname>.xz    the shared libraries the binaries load that a bare machine may
#     lack (glibc, libgcc_s, libstdc++ and zlib are assumed there), and the OpenBLAS the
#     binaries load at run time (scripts/setup-openblas.sh's, with its libgfortran; found
#     there through NTK_OPENBLAS_DIR, experiments/bench/gpu/env.sh);
#   .gpu/bin/BUILD_INFO         commit, date and what was built with which features;
#   .gl/*.deb                   the Vulkan/GL loaders (wgpu), downloaded if missing.
# It keeps /.gl/ and /.gpu/ in .git/info/exclude (never committed), runs `git gc -q` (loose
# objects count toward what a device call carries) and prints the total that would travel
# (tracked and untracked-not-ignored files + .git + .gl + .gpu/bin) against the 64 MiB limit.
#
#   .gpu/bin/ntk-train-cudnn.xz, cudnn-tests.xz   with --cudnn (and --no-wgpu): ntk-train
#     built with the cuDNN engine (--features ntk-train/cudnn, the CPU backend) and
#     the test binary of crates/ntk-train/tests/cudnn.rs, for experiments/bench/gpu/cudnn.sh
#     (and cudnn_bn.sh: cuDNN's two BatchNorm modes side by side).
#
#   .gpu/bin/ntk-probe-cusolver.xz, cusolver-tests.xz   with --cusolver (and --no-wgpu):
#     ntk-probe built with wgpu and the cuSOLVER eigensolver (--features
#     ntk-probe/wgpu,ntk-probe/cusolver) and the test binary of
#     crates/ntk-cusolver/tests/device.rs, for experiments/bench/gpu/cusolver.sh.
#
#   bash scripts/gpu-bench-pack.sh [--cuda] [--cuda-train] [--cudnn] [--cusolver] [--no-wgpu] [--probe-only] [--no-build]
#   bash scripts/gpu-bench-pack.sh --check
#
# --probe-only packs ntk-probe alone (no ntk-train), for calls that only probe
# (experiments/fig2/gpu_n10000.sh).
#
# Python travels as the working tree does (tracked files, and untracked ones git does not
# ignore): every pack first checks that each Python script the device scripts run
# (experiments/bench/gpu/*.sh, experiments/fig2/gpu_*.sh: `python3 PATH.py`) and every
# module of this repository those scripts import, recursively (torch_resnets.py ->
# experiments/train_bench/pytorch_resnet_step.py -> pytorch_step.py), would travel, and
# stops naming any that would not. --check runs that check alone: no build, no packing,
# nothing written.
#
# --no-build packs the binaries already built. Targets: $CARGO_TARGET_DIR (default
# ~/.cache/ntk-target) for wgpu, $NTK_CUDA_TARGET_DIR (default ~/.cache/ntk-cuda-target) for
# cuda (scripts/setup-cuda.sh first). Sizes: the two wgpu binaries ~21 MiB compressed, each
# cuda binary ~29 MiB, the libraries ~5 MiB: the two wgpu plus the two cuda binaries do not
# fit in one call, hence --cuda packs ntk-probe-cuda alone unless --cuda-train is given
# (--no-wgpu leaves the wgpu binaries out, for a cuda-only call).
#
# Then the device call, from the repository root, carrying `.gl` and `.gpu/bin`:
#   bash experiments/bench/gpu/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

cuda=0 cuda_train=0 cudnn=0 cusolver=0 wgpu=1 build=1 train=1 check_only=0
for arg in "$@"; do
    case $arg in
    --check) check_only=1 ;;
    --cuda) cuda=1 ;;
    --cuda-train) cuda=1 cuda_train=1 ;;
    --cudnn) cudnn=1 ;;
    --cusolver) cusolver=1 ;;
    --no-wgpu) wgpu=0 ;;
    --no-build) build=0 ;;
    --probe-only) train=0 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "gpu-bench-pack: unknown argument $arg (see --help)" >&2
        exit 2
        ;;
    esac
done

# --- the Python the device scripts run travels ------------------------------------------
# check_python: every `python3 PATH.py` of the device scripts, and every module of this
# repository it imports (a NAME.py beside the importer, else anywhere under experiments/ or
# scripts/), recursively, is tracked or untracked-not-ignored; modules found nowhere here
# (torch, numpy, the standard library) are the machine's.
check_python() {
    { git ls-files; git ls-files --others --exclude-standard; } | python3 -c '
import ast, os, re, sys
travels = set(sys.stdin.read().split())
shells = sorted(p for p in travels if re.fullmatch(r"experiments/bench/gpu/[^/]+\.sh|experiments/fig2/gpu_[^/]+\.sh", p))
local = {}
for p in travels:
    if p.endswith(".py") and p.startswith(("experiments/", "scripts/")):
        local.setdefault(os.path.basename(p)[:-3], []).append(p)
entries = []
for sh in shells:
    for m in re.findall(r"python3\s+(?:-\S+\s+)*([\w./-]+\.py)", open(sh).read()):
        if m not in entries:
            entries.append(m)
bad, machine, seen = [], set(), set()
def imports(path):
    try:
        tree = ast.parse(open(path).read(), path)
    except (OSError, SyntaxError) as e:
        bad.append(f"{path}: unreadable ({e})")
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names
def visit(path, chain):
    if path in seen:
        return
    seen.add(path)
    if path not in travels:
        bad.append(" -> ".join(chain + [path]) + ": not in the working tree that travels")
        if not os.path.exists(path):
            return
    for name in imports(path):
        beside = os.path.join(os.path.dirname(path), name + ".py")
        found = [beside] if beside in travels or os.path.exists(beside) else local.get(name, [])
        if not found:
            machine.add(name)
        for f in found:
            visit(f, chain + [path])
for e in entries:
    visit(e, [])
print(f"gpu-bench-pack: python: what the device scripts run or import ({len(seen)} files): "
      + ", ".join(sorted(seen)))
print("gpu-bench-pack: python: from the machine: " + ", ".join(sorted(machine)))
for b in bad:
    print("gpu-bench-pack: python: MISSING " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
'
}
if ! check_python; then
    echo "gpu-bench-pack: commit or un-ignore the files above: the device call would lack them" >&2
    exit 1
fi
if ((check_only)); then exit 0; fi

wgpu_target=${CARGO_TARGET_DIR:-$HOME/.cache/ntk-target}
cuda_target=${NTK_CUDA_TARGET_DIR:-$HOME/.cache/ntk-cuda-target}
dest=.gpu/bin
limit=$((64 * 1024 * 1024))
if ((cudnn && wgpu)); then
    echo "gpu-bench-pack: --cudnn needs --no-wgpu (both build ntk-train in $wgpu_target)" >&2
    exit 2
fi
if ((cusolver && wgpu)); then
    echo "gpu-bench-pack: --cusolver needs --no-wgpu (both build ntk-probe in $wgpu_target)" >&2
    exit 2
fi

# test_binary PACKAGE TEST FEATURES PATH: builds the integration test TEST of PACKAGE (with
# FEATURES, none when empty) without running it and writes the executable's path to PATH.
test_binary() {
    local package=$1 test=$2 features=$3 path=$4
    CARGO_TARGET_DIR=$wgpu_target cargo test --locked -p "$package" ${features:+--features "$features"} \
        --test "$test" --no-run --message-format=json |
        python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$test" >"$path"
}

# --- build -------------------------------------------------------------------------------
if ((build)); then
    if ((wgpu)); then
        echo "gpu-bench-pack: building the wgpu binaries in $wgpu_target"
        wgpu_packages=(-p ntk-probe)
        if ((train)); then wgpu_packages+=(-p ntk-train); fi
        CARGO_TARGET_DIR=$wgpu_target cargo build --locked "${wgpu_packages[@]}" \
            --features ntk-probe/wgpu
    fi
    if ((cudnn)); then
        echo "gpu-bench-pack: building ntk-train with the cuDNN engine and its tests in $wgpu_target"
        CARGO_TARGET_DIR=$wgpu_target cargo build --locked -p ntk-train --features ntk-train/cudnn
        test_binary ntk-train cudnn ntk-train/cudnn "$wgpu_target/cudnn-tests.path"
    fi
    if ((cusolver)); then
        echo "gpu-bench-pack: building ntk-probe with wgpu and cuSOLVER, and its tests, in $wgpu_target"
        CARGO_TARGET_DIR=$wgpu_target cargo build --locked -p ntk-probe \
            --features ntk-probe/wgpu,ntk-probe/cusolver
        test_binary ntk-cusolver device "" "$wgpu_target/cusolver-tests.path"
    fi
    if ((cuda)); then
        bash scripts/setup-cuda.sh
        packages=(-p ntk-probe)
        if ((cuda_train)); then packages+=(-p ntk-train); fi
        echo "gpu-bench-pack: building the cuda binaries (${packages[*]}) in $cuda_target"
        CARGO_TARGET_DIR=$cuda_target cargo build --locked "${packages[@]}" \
            --features ntk-probe/cuda
    fi
fi

# --- the binaries ------------------------------------------------------------------------
mkdir -p "$dest/lib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wanted=()  # "name source" pairs
if ((wgpu)); then
    wanted+=("ntk-probe-wgpu $wgpu_target/debug/ntk-probe")
    if ((train)); then wanted+=("ntk-train-wgpu $wgpu_target/debug/ntk-train"); fi
fi
if ((cuda)); then wanted+=("ntk-probe-cuda $cuda_target/debug/ntk-probe"); fi
if ((cuda_train)); then wanted+=("ntk-train-cuda $cuda_target/debug/ntk-train"); fi
if ((cudnn)); then
    wanted+=("ntk-train-cudnn $wgpu_target/debug/ntk-train")
    wanted+=("cudnn-tests $(cat "$wgpu_target/cudnn-tests.path" 2>/dev/null || echo missing-cudnn-tests)")
fi
if ((cusolver)); then
    wanted+=("ntk-probe-cusolver $wgpu_target/debug/ntk-probe")
    wanted+=("cusolver-tests $(cat "$wgpu_target/cusolver-tests.path" 2>/dev/null || echo missing-cusolver-tests)")
fi

# What is not asked for this time must not travel.
for name in ntk-probe-wgpu ntk-train-wgpu ntk-probe-cuda ntk-train-cuda ntk-train-cudnn cudnn-tests \
    ntk-probe-cusolver cusolver-tests; do
    keep=0
    for w in ${wanted[@]+"${wanted[@]}"}; do
        if [ "${w%% *}" = "$name" ]; then keep=1; fi
    done
    if ((!keep)) && [ -e "$dest/$name.xz" ]; then
        echo "gpu-bench-pack: removing $dest/$name.xz (not asked for)"
        rm -f "$dest/$name.xz"
    fi
done

sources=()
for w in ${wanted[@]+"${wanted[@]}"}; do
    name=${w%% *} src=${w#* }
    if [ ! -x "$src" ]; then
        echo "gpu-bench-pack: $src is missing: build it (without --no-build)" >&2
        exit 1
    fi
    sources+=("$src")
    if [ -f "$dest/$name.xz" ] && [ "$dest/$name.xz" -nt "$src" ]; then
        echo "gpu-bench-pack: $dest/$name.xz is newer than $src: kept"
        continue
    fi
    echo "gpu-bench-pack: strip + xz $src -> $dest/$name.xz"
    strip -o "$tmp/$name" "$src"
    xz -T2 -6 -c "$tmp/$name" >"$tmp/$name.xz"
    mv "$tmp/$name.xz" "$dest/$name.xz"
    rm -f "$tmp/$name"
done

# --- the shared libraries they need beyond the base system -------------------------------
base='^(linux-vdso\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libgcc_s\.so|libstdc\+\+\.so|libz\.so)'
libs=()
if ((${#sources[@]})); then
    while read -r soname path; do
        libs+=("$soname")
        if [ -f "$dest/lib/$soname.xz" ] && [ "$dest/lib/$soname.xz" -nt "$path" ]; then continue; fi
        echo "gpu-bench-pack: xz $path -> $dest/lib/$soname.xz"
        xz -T2 -6 -c "$path" >"$tmp/$soname.xz"
        mv "$tmp/$soname.xz" "$dest/lib/$soname.xz"
    done < <(for s in "${sources[@]}"; do ldd "$s"; done |
        awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | grep -Ev "$base" | sort -u)
fi
# The OpenBLAS loaded at run time (ldd does not see it).
openblas="${NTK_OPENBLAS_DIR:-$HOME/.cache/ntk-openblas}/lib"
if ((${#sources[@]})) && [ -f "$openblas/libscipy_openblas.so" ]; then
    for path in "$openblas"/*.so*; do
        soname=$(basename "$path")
        libs+=("$soname")
        if [ -f "$dest/lib/$soname.xz" ] && [ "$dest/lib/$soname.xz" -nt "$path" ]; then continue; fi
        echo "gpu-bench-pack: xz $path -> $dest/lib/$soname.xz"
        xz -T2 -6 -c "$path" >"$tmp/$soname.xz"
        mv "$tmp/$soname.xz" "$dest/lib/$soname.xz"
    done
fi
for f in "$dest"/lib/*.xz; do
    [ -f "$f" ] || continue
    soname=$(basename "$f" .xz)
    found=0
    for l in ${libs[@]+"${libs[@]}"}; do
        if [ "$l" = "$soname" ]; then found=1; fi
    done
    if ((!found)); then
        echo "gpu-bench-pack: removing $f (no packed binary needs it)"
        rm -f "$f"
    fi
done

{
    echo "packed $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -sm), $(ldd --version 2>&1 | head -1)"
    echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- crates Cargo.toml Cargo.lock || echo ' + uncommitted changes under crates/')"
    for w in ${wanted[@]+"${wanted[@]}"}; do
        name=${w%% *}
        case $name in
        *-wgpu) feat=ntk-probe/wgpu ;;
        *-cudnn | cudnn-tests) feat=ntk-train/cudnn ;;
        *-cusolver | cusolver-tests) feat=ntk-probe/wgpu,ntk-probe/cusolver ;;
        *) feat=ntk-probe/cuda ;;
        esac
        echo "$name: ${w#* } (--features $feat, dev profile), $(stat -c %s "$dest/$name.xz") bytes xz"
    done
    if ((${#libs[@]})); then echo "libraries: ${libs[*]}"; fi
} >"$dest/BUILD_INFO"
cat "$dest/BUILD_INFO"

# --- the Vulkan/GL loaders ---------------------------------------------------------------
missing=0
# The cuSOLVER binary computes its kernels on wgpu too.
if ((!wgpu && !cusolver)); then missing=-1; fi
for p in libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2; do
    if ((missing >= 0)) && ! compgen -G ".gl/${p}_*.deb" >/dev/null; then missing=1; fi
done
if ((missing > 0)); then
    echo "gpu-bench-pack: downloading the Vulkan/GL loader debs into .gl/"
    mkdir -p .gl /tmp/amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
    # shellcheck disable=SC2086 # $o is several options
    apt-get $o update
    # shellcheck disable=SC2086
    (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi

# --- never committed; what travels -------------------------------------------------------
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
touch "$exclude"
for pattern in /.gl/ /.gpu/; do
    if ! grep -qxF "$pattern" "$exclude"; then echo "$pattern" >>"$exclude"; fi
done
git gc -q

# Disk usage, not byte counts: the device tool measured what travels that way (a call at
# 62.5 MiB of bytes was refused; fuzz/corpus's ~8,000 small files took 3 MiB of bytes but
# ~34 MiB of 4 KiB blocks, hence fuzz/corpus.tar.xz).
sum_files() { du -B1 -c --files0-from=- 2>/dev/null | tail -1 | cut -f1; }
tracked=$(git ls-files -z | sum_files)
untracked=$(git ls-files -z --others --exclude-standard | sum_files)
gitdir=$(du -s -B1 "$(git rev-parse --git-dir)" | cut -f1)
gl=$(du -s -B1 .gl 2>/dev/null | cut -f1 || echo 0)
bin=$(du -s -B1 "$dest" | cut -f1)
shared=0
if [ -d shared ]; then shared=$(du -s -B1 -L shared | cut -f1); fi
total=$((tracked + untracked + gitdir + ${gl:-0} + bin + shared))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo
echo "what a device call carrying .gl and .gpu/bin would send:"
echo "  tracked files           $(mib "$tracked")"
echo "  untracked, not ignored  $(mib "$untracked")"
echo "  .git                    $(mib "$gitdir")"
echo "  .gl                     $(mib "${gl:-0}")"
echo "  .gpu/bin                $(mib "$bin")"
if ((shared)); then echo "  shared/                 $(mib "$shared")"; fi
echo "  total                   $(mib "$total"); the working tree (without .git) $(mib $((total - gitdir))) of 64 MiB"
# The device tool's limit is on the working tree that travels (tracked and untracked files,
# shared/, carried paths: /work/.library/device/README.md, Limits), not on .git.
if ((total - gitdir > limit)); then
    echo "WARNING: over the 64 MiB a device call carries: drop --cuda-train, or pack cuda" \
        "alone (--cuda --no-wgpu), or remove untracked files" >&2
fi
echo
echo "device call (from the repository root, carry [\".gl\", \".gpu/bin\"]):"
if ((cudnn)); then echo "  bash experiments/bench/gpu/cudnn.sh   (or cudnn_bn.sh)"; fi
if ((cusolver)); then echo "  bash experiments/bench/gpu/cusolver.sh"; fi
if ((wgpu || cuda)); then echo "  bash experiments/bench/gpu/run.sh"; fi
