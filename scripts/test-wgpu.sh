#!/usr/bin/env bash
# The tests that need the wgpu backend, in a build of their own: the `wgpu-tests` profile
# (Cargo.toml: everything unoptimised, so that the wgpu and cubecl crates, most of the
# build, compile in a fraction of the optimised time) with `--features ntk-probe/wgpu`; on
# Mesa's lavapipe (software Vulkan, scripts/setup-wgpu.sh) where there is no GPU. The tests:
# the NTK on wgpu in f32 and f64 against flex and autodiff
# (crates/ntk-kernel/tests/kernel/wgpu_backend.rs), kappa solved on wgpu against LAPACK
# (extreme.rs), a probe sweep on wgpu as a Slurm job meets it
# (crates/ntk-probe/tests/probe/wgpu_cli.rs). Every other test runs in the default build
# (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-wgpu.sh
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
cargo test --profile wgpu-tests --locked -p ntk-kernel -p ntk-probe --features ntk-probe/wgpu \
    --test kernel --test probe -- wgpu
