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
# CI adds its cuDNN Slurm check's build to this one (NTK_WGPU_WITH_CUDNN=1: ntk-train with its
# cudnn feature; .ci/run's slurm-cudnn stage then runs crates/ntk-train/tests/slurm_scripts.rs
# on it and compiles only that test), instead of a second optimised build of ntk-train.
packages=(-p ntk-kernel -p ntk-probe)
features=ntk-probe/wgpu
if [ "${NTK_WGPU_WITH_CUDNN:-0}" = 1 ]; then
    packages+=(-p ntk-train)
    features+=,ntk-train/cudnn
fi
cargo test --profile wgpu-tests --locked "${packages[@]}" --features "$features" \
    --test kernel --test probe -- wgpu
