#!/usr/bin/env bash
# Fetches a current OpenBLAS, the one numpy and scipy ship (PyPI's scipy-openblas32 wheel:
# OpenBLAS 0.3.31, built for every x86 core type and choosing its kernels by CPUID at load;
# about 9 MB), into ${NTK_OPENBLAS_DIR:-~/.cache/ntk-openblas}/lib, where the host linear
# algebra looks first (crates/ntk-numerics/src/linalg/library.rs). Loaded at run time, not
# linked: the build needs no BLAS.
#
# Why not Debian's libopenblas: its 0.3.21 does not know newer processors and falls back to
# generic SSE3 kernels on them (an Intel Xeon family 6 model 207: "Prescott", 2.2x slower
# GEMMs). Where PyPI cannot be reached, Debian's library (libopenblas0) is installed instead
# and the binaries warn when it runs older kernels than the CPU allows; without either, the
# host linear algebra is faer (pure Rust, about 2x slower).
# Idempotent: a library already fetched is kept.
set -uo pipefail
dir="${NTK_OPENBLAS_DIR:-$HOME/.cache/ntk-openblas}"
version="0.3.31.188.0"
if [ -f "$dir/lib/libscipy_openblas.so" ] && [ "$(cat "$dir/VERSION" 2>/dev/null)" = "$version" ]; then
    exit 0
fi
# Only a folder this script made (it holds VERSION) is ever replaced; anything else at that
# path (a symlink, a folder of the user's) is refused, not emptied.
if [ -L "$dir" ] || { [ -e "$dir" ] && [ ! -f "$dir/VERSION" ]; }; then
    echo "setup-openblas: $dir exists and is not a folder this script made (no VERSION file): leaving it alone; set NTK_OPENBLAS_DIR to another place" >&2
    exit 1
fi
case "$(uname -sm)" in
    "Linux x86_64") platform=manylinux2014_x86_64 ;;
    "Linux aarch64") platform=manylinux2014_aarch64 ;;
    *) platform="" ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$platform" ] && python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform "$platform" -d "$tmp" "scipy-openblas32==$version" 2>"$tmp/err"; then
    mkdir -p "$(dirname "$dir")"
    partial=$(mktemp -d "$dir.partial.XXXXXX") || exit 1
    mkdir -p "$partial/lib"
    python3 "$(dirname "$0")/wheel-libs.py" "$tmp" "$partial/lib" || { rm -rf "$partial"; exit 1; }
    echo "$version" >"$partial/VERSION"
    rm -rf "$dir"
    mv "$partial" "$dir"
    echo "setup-openblas: OpenBLAS $version (PyPI scipy-openblas32) in $dir/lib"
    exit 0
fi
echo "setup-openblas: PyPI's scipy-openblas32 not fetched ($(tail -1 "$tmp/err" 2>/dev/null)); trying Debian's libopenblas0" >&2
if ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0'; then
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if $SUDO apt-get update -qq >/dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libopenblas0 >/dev/null; then
    echo "setup-openblas: Debian's libopenblas0 installed (it may not know the newest CPUs: the binaries say so)"
else
    echo "setup-openblas: no OpenBLAS installed: the host linear algebra will be faer (about 2x slower)" >&2
fi
exit 0
