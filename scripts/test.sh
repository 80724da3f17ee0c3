#!/usr/bin/env bash
# The test command of the README: installs what is missing (scripts/setup.sh: OpenBLAS,
# lavapipe, the real data sets; idempotent) and runs every
# test of the workspace on the CPU default backend. With NTK_TEST_WGPU=1 (CI sets it) the
# same run also builds the wgpu backend and runs its tests (crates/ntk-kernel/tests/kernel/wgpu_backend.rs), which
# need a Vulkan adapter: Mesa's lavapipe on a machine without a GPU (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh     # OpenBLAS, lavapipe, the data sets (idempotent)
# NVRTC (scripts/setup-nvrtc.sh) for the test that compiles the cuDNN engine's kernels.
nvrtc="${NTK_NVRTC_DIR:-$HOME/.cache/ntk-nvrtc}/lib"
if [ -d "$nvrtc" ]; then export LD_LIBRARY_PATH="$nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
features=()
if [ "${NTK_TEST_WGPU:-0}" = 1 ]; then
    features=(--features ntk-probe/wgpu)
fi
cargo test --workspace --locked "${features[@]}"
