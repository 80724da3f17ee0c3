#!/usr/bin/env bash
# Sourced by the scripts that run on a lent GPU machine (experiments/bench/gpu/run.sh,
# experiments/fig2/gpu_n10000.sh): the carried Vulkan loaders (.gl/*.deb) and the carried,
# xz-compressed binaries and libraries (.gpu/bin, made by scripts/gpu-bench-pack.sh) unpacked
# into $BIN. Expects BIN and WORK set; defines OURS_ENV, have, count, unxz_to and setup,
# cuda_libraries, and begin_call (the common start of the cuDNN and cuSOLVER scripts).

# Our binaries run with the carried shared libraries (see scripts/gpu-bench-pack.sh) ahead of
# the machine's, and load the carried OpenBLAS (NTK_OPENBLAS_DIR: $BIN/lib/libscipy_openblas.so);
# PyTorch runs with the machine's alone.
OURS_ENV=(env "LD_LIBRARY_PATH=${BIN:-}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "NTK_OPENBLAS_DIR=${BIN:-}")

have() { [ -x "$BIN/$1" ]; }
# count PROGRAM: how many of its backends (wgpu, cuda) were carried.
count() {
    local c=0 be
    for be in wgpu cuda; do if have "$1-$be"; then c=$((c + 1)); fi; done
    echo "$c"
}

unxz_to() {
    if command -v xz >/dev/null 2>&1; then
        xz -dc -T0 "$1" >"$2"
    else
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
    fi
}

setup() {
    echo "=== [${SECONDS}s] setup"
    # The Vulkan loader (wgpu) from the carried debs; the NVIDIA ICD from the driver mount.
    if compgen -G ".gl/*.deb" >/dev/null; then
        for f in .gl/*.deb; do dpkg -x "$f" / || echo "warning: dpkg -x $f failed"; done
        ldconfig || echo "warning: ldconfig failed"
    else
        echo "no .gl/*.deb carried: relying on the machine's Vulkan loader"
    fi
    local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    local egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
    if [ -f "$egl" ]; then export __EGL_VENDOR_LIBRARY_FILENAMES=$egl; fi
    # wgpu's windowing probes complain on every start without one.
    if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
        export XDG_RUNTIME_DIR="$WORK/xdg"
        mkdir -m 700 "$XDG_RUNTIME_DIR"
    fi

    mkdir -p "$BIN/lib"
    local pids=() name f
    for name in ntk-probe-wgpu ntk-train-wgpu ntk-probe-cuda ntk-train-cuda ntk-train-cudnn cudnn-tests \
        ntk-probe-cusolver cusolver-tests; do
        if [ -f ".gpu/bin/$name.xz" ]; then
            (unxz_to ".gpu/bin/$name.xz" "$BIN/$name" && chmod +x "$BIN/$name") &
            pids+=($!)
        fi
    done
    for f in .gpu/bin/lib/*.xz; do
        [ -f "$f" ] || continue
        unxz_to "$f" "$BIN/lib/$(basename "$f" .xz)" &
        pids+=($!)
    done
    for p in ${pids[@]+"${pids[@]}"}; do wait "$p" || echo "warning: an unpack failed (pid $p)"; done
    for name in ntk-probe-wgpu ntk-train-wgpu ntk-probe-cuda ntk-train-cuda ntk-train-cudnn cudnn-tests \
        ntk-probe-cusolver cusolver-tests; do
        if have "$name"; then
            local missing
            missing=$("${OURS_ENV[@]}" ldd "$BIN/$name" 2>&1 | grep "not found")
            echo "binary $name: $(stat -c %s "$BIN/$name") bytes${missing:+; MISSING: $missing}"
        else
            echo "binary $name: not carried"
        fi
    done
}

# cuda_libraries: CUDA's libraries from the machine's Python (PyTorch's nvidia-* wheels) on
# LD_LIBRARY_PATH, after the carried ones in $BIN/lib; then the machine (GPU, load, torch)
# and what was carried, for the log.
cuda_libraries() {
    local nv
    nv=$(
        python3 - <<'PY'
import glob, os, sys
dirs = set()
for p in sys.path:
    for f in glob.glob(os.path.join(p, "nvidia", "**", "lib"), recursive=True):
        dirs.add(f)
print(":".join(sorted(dirs)))
PY
    )
    export LD_LIBRARY_PATH="$BIN/lib${nv:+:$nv}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "=== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
    uptime
    python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())' || true
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    cat .gpu/bin/BUILD_INFO 2>/dev/null || true
}

# begin_call NAME: the common start of a device script (cudnn.sh, cusolver.sh, cudnn_bn.sh):
# $OUT (default /tmp/ntk-NAME-out), a fresh $WORK holding $BIN, everything after this also
# in $OUT/NAME.log, the carried binaries unpacked (setup) and CUDA's libraries on
# LD_LIBRARY_PATH (cuda_libraries).
begin_call() {
    OUT=${OUT:-/tmp/ntk-$1-out}
    mkdir -p "$OUT"
    WORK=$(mktemp -d)
    BIN=$WORK/bin
    export OUT WORK BIN
    OURS_ENV=(env "LD_LIBRARY_PATH=$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    exec > >(tee "$OUT/$1.log") 2>&1
    setup
    cuda_libraries
}
