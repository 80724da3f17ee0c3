#!/usr/bin/env bash
# Fetches NVRTC, CUDA's run-time compiler (PyPI's nvidia-cuda-nvrtc wheel, CUDA 13.0, about
# 90 MB), into ${NTK_NVRTC_DIR:-~/.cache/ntk-nvrtc}, so that the tests compile the cuDNN
# engine's kernels (crates/ntk-engine/src/cudnn/kernels.cu) on a machine without a GPU or a CUDA
# toolkit: NVRTC needs neither. scripts/test.sh puts its lib directory on LD_LIBRARY_PATH.
# Idempotent; best effort: without it that one test says it skipped, and why.
set -uo pipefail
dir="${NTK_NVRTC_DIR:-$HOME/.cache/ntk-nvrtc}"
if [ -f "$dir/lib/libnvrtc.so.13" ]; then
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "setup-nvrtc: fetching nvidia-cuda-nvrtc 13.0 from PyPI into $dir"
if ! python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform manylinux2010_x86_64 -d "$tmp" "nvidia-cuda-nvrtc==13.0.*"; then
    echo "setup-nvrtc: PyPI not reached: the NVRTC kernel test will skip" >&2
    exit 0
fi
mkdir -p "$dir/lib"
python3 "$(dirname "$0")/wheel-libs.py" "$tmp" "$dir/lib"
ls "$dir/lib"
