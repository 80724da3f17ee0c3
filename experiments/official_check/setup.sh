#!/usr/bin/env bash
# The Python side of the official check: a virtual environment with PyTorch (PyPI's wheel;
# it runs on the CPU here), numpy and safetensors, in experiments/official_check/.venv
# (ignored by git). Idempotent: seconds when done, a few minutes (about 3 GB) the first time.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import torch, numpy, safetensors" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet torch numpy safetensors
fi
.venv/bin/python -c "import torch; print('official_check: torch', torch.__version__)"
