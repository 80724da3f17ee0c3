#!/usr/bin/env bash
# Mesa's lavapipe (software Vulkan, Debian's mesa-vulkan-drivers) and the Vulkan loader, so
# that the wgpu backend and its tests run on a machine without a GPU (NTK_TEST_WGPU=1; CI).
# Idempotent: installed packages are skipped.
set -euo pipefail
need=()
for pkg in mesa-vulkan-drivers libvulkan1; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "setup-wgpu: installing ${need[*]} (Debian packages)"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if ! $SUDO apt-get update -qq >/dev/null; then
        echo "setup-wgpu: apt-get update failed: Debian's package registry cannot be reached" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
