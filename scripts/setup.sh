#!/usr/bin/env bash
# Installs what a fresh machine lacks for the tests and the GPU code path:
# - OpenBLAS (Debian package libopenblas-dev): the host GEMMs and the eigensolver of the
#   probe and of the training engine link it when present (crates/ntk-probe/build.rs; without
#   it they fall back to faer, about 2x slower);
# - Mesa's lavapipe (software Vulkan, Debian package mesa-vulkan-drivers) and the Vulkan
#   loader, so the wgpu backend runs without a GPU;
# - the real data sets (datasets/fetch.sh);
# - NVRTC from PyPI (scripts/setup-nvrtc.sh), for the test that compiles the cuDNN engine's
#   kernels without a GPU (best effort).
# Idempotent: installed packages and verified files are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in libopenblas-dev mesa-vulkan-drivers libvulkan1; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]} (Debian packages)"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if ! $SUDO apt-get update -qq >/dev/null; then
        echo "setup: apt-get update failed: Debian's package registry cannot be reached" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bash datasets/fetch.sh
bash scripts/setup-nvrtc.sh
