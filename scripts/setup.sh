#!/usr/bin/env bash
# Installs what README's two commands need on a fresh machine, nothing more:
# - a current OpenBLAS for the host GEMMs and the eigensolver (scripts/setup-openblas.sh:
#   PyPI's scipy-openblas32, loaded at run time; without it the binaries use faer, about 2x
#   slower);
# - the real data sets the tests read (datasets/fetch.sh: MNIST, Fashion-MNIST, 8x8 digits).
# What only some runs need is installed by its own script: Mesa's lavapipe for the wgpu tests
# (scripts/setup-wgpu.sh; `NTK_TEST_WGPU=1 bash scripts/test.sh` calls it), NVRTC for the
# test that compiles the cuDNN engine's kernels without a GPU (scripts/setup-nvrtc.sh; CI
# calls it), the CUDA build's LLVM (scripts/setup-cuda.sh).
# Idempotent: what is installed and verified is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-openblas.sh
bash datasets/fetch.sh
