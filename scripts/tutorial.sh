#!/usr/bin/env bash
# Walks docs/tutorial.md as a newcomer would: every ```sh block, in order, from the
# repository root, with the shell's errors fatal; then every ```sh block of README.md's front
# page (the text before its "## Layout", the developer's reference); prints each block's time
# and the total. CI runs it (.ci/run, stage tutorial) so that every command of the tutorial
# and of README's front page works as written. Starts from empty runs/tutorial/ and
# runs/readme/ (where those commands write).
#
# Only ```sh blocks run. A block that cannot run here is fenced ```bash instead and shown,
# not run: README's two commands (the full Fig. 2 sweep and the test command, which CI runs
# as its tests stage), the GPU's (no GPU in CI), the cluster's (CI's slurm stage runs
# submit.sh against its own cluster), the Burn example's (CI's example stage builds and runs
# that crate); the python export is shown too. README's blocks reuse the tutorial's build
# (its block 0) and its quick configs and options, so they add seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf runs/tutorial runs/readme
blocks=$(mktemp -d)
trap 'rm -rf "$blocks"' EXIT
# One file per ```sh block: <prefix>-NN.sh, the prefix ordering the documents.
extract() { # DOC PREFIX STOP (a line that ends the part read; empty: the whole file)
    awk -v dir="$blocks" -v prefix="$2" -v stop="$3" '
        stop != "" && $0 == stop { exit }
        /^```sh$/ { n++; out = sprintf("%s/%s-%02d.sh", dir, prefix, n); inside = 1; next }
        /^```/ && inside { inside = 0; close(out); next }
        inside { print > out }
    ' "$1"
    if ! ls "$blocks/$2"-*.sh >/dev/null 2>&1; then
        echo "error: $1: no sh blocks found" >&2
        exit 2
    fi
}
extract docs/tutorial.md 1-tutorial ""
extract README.md 2-readme "## Layout"
count=$(find "$blocks" -name '*.sh' | wc -l)
t0=$(date +%s)
for f in "$blocks"/*.sh; do
    name=$(basename "$f" .sh)
    case $name in
        1-tutorial-*) doc=docs/tutorial.md ;;
        *) doc="README.md (front page)" ;;
    esac
    echo "=== $doc, block ${name##*-} ($count blocks in all):"
    sed 's/^/    /' "$f"
    s=$(date +%s)
    bash -euo pipefail "$f"
    echo "--- $(($(date +%s) - s)) s"
done
echo "tutorial and README: $count blocks in $(($(date +%s) - t0)) s"
