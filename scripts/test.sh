#!/usr/bin/env bash
# The test command of the README: installs what is missing (scripts/setup.sh: OpenBLAS, the
# real data sets; idempotent) and runs every test of the workspace on the CPU default
# backend. With NTK_TEST_WGPU=1 it then runs the tests that need the wgpu backend, in a
# build of their own, on Mesa's lavapipe (scripts/test-wgpu.sh; CI runs that as a stage of
# its own).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh     # OpenBLAS, the data sets (idempotent)
# NVRTC (scripts/setup-nvrtc.sh; CI fetches it) for the test that compiles the cuDNN
# engine's kernels; without it that test says it skipped.
nvrtc="${NTK_NVRTC_DIR:-$HOME/.cache/ntk-nvrtc}/lib"
if [ -d "$nvrtc" ]; then export LD_LIBRARY_PATH="$nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
cargo test --workspace --locked
if [ "${NTK_TEST_WGPU:-0}" = 1 ]; then
    bash scripts/test-wgpu.sh
fi
