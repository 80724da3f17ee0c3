#!/usr/bin/env bash
# Prepares a real, offline `--features cuda` build.
#
# cubecl-cuda 0.11.3 needs cubecl-llvm, whose build script (tracel-llvm-bundler 23.1.0-4)
# downloads an LLVM 23.1 archive at build time; these machines reach package registries
# only. PyPI ships a matching static LLVM (mlc-llvm-static 23.1.1, NVPTX included, with
# headers and llvm-config). This script:
#   1. installs it into a project-owned virtual environment (.venv-llvm, or $NTK_LLVM_VENV);
#   2. points the bundler's install directory,
#      ${XDG_DATA_HOME:-~/.local/share}/tracel/tracel-llvm-23.1.0-4, at it (a symlink);
#   3. creates the marker `.tracel-llvm-installed` there, so the bundler skips its download.
# Idempotent: seconds when done. Then build, e.g.
#   cargo build -p ntk-probe -p ntk-train --features ntk-probe/cuda
# (LLVM_SYS_*_PREFIX is ignored by this build. After pointing the link at another LLVM:
#  cargo clean -p cubecl-llvm -p tracel-llvm-bundler.)
set -euo pipefail
cd "$(dirname "$0")/.."

spec='mlc-llvm-static[all]==23.1.1.post0'
venv="${NTK_LLVM_VENV:-$PWD/.venv-llvm}"
bundle="tracel-llvm-23.1.0-4"

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-cuda: creating $venv"
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import mlc_llvm_static' 2>/dev/null; then
    echo "setup-cuda: installing $spec from PyPI (about 90 MB)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$spec"
fi
prefix="$("$venv/bin/python" -m mlc_llvm_static.config --prefix)"
if [ ! -x "$prefix/bin/llvm-config" ]; then
    echo "setup-cuda: $prefix/bin/llvm-config is missing: the mlc-llvm-static install is incomplete" >&2
    exit 1
fi

data="${XDG_DATA_HOME:-$HOME/.local/share}/tracel"
link="$data/$bundle"
mkdir -p "$data"
if [ -e "$link" ] && [ ! -L "$link" ]; then
    echo "setup-cuda: $link exists and is not a link made by this script; move it away first" >&2
    exit 1
fi
if [ "$(readlink "$link" 2>/dev/null || true)" != "$prefix" ]; then
    ln -sfn "$prefix" "$link"
    echo "setup-cuda: $link -> $prefix (if cubecl-llvm was built against another LLVM before:" \
        "cargo clean -p cubecl-llvm -p tracel-llvm-bundler)"
fi
touch "$link/.tracel-llvm-installed"
echo "setup-cuda: LLVM $("$prefix/bin/llvm-config" --version) ready for --features ntk-probe/cuda"
