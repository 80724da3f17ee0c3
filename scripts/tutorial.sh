#!/usr/bin/env bash
# Walks docs/tutorial.md as a newcomer would: every ```sh block, in order, from the
# repository root, with the shell's errors fatal; prints each block's time and the total.
# CI runs it (.ci/run, stage tutorial) so that every command of the tutorial works as
# written. Starts from an empty runs/tutorial/.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/tutorial.md
rm -rf runs/tutorial
blocks=$(mktemp -d)
trap 'rm -rf "$blocks"' EXIT
# One file per ```sh block (the python block is shown, not run).
awk -v dir="$blocks" '
    /^```sh$/ { n++; out = sprintf("%s/%02d.sh", dir, n); inside = 1; next }
    /^```/ && inside { inside = 0; close(out); next }
    inside { print > out }
' "$doc"
count=$(find "$blocks" -name '*.sh' | wc -l)
if [ "$count" -eq 0 ]; then
    echo "error: $doc: no sh blocks found" >&2
    exit 2
fi
t0=$(date +%s)
for f in "$blocks"/*.sh; do
    echo "=== $doc, block $(basename "$f" .sh) of $count:"
    sed 's/^/    /' "$f"
    s=$(date +%s)
    bash -euo pipefail "$f"
    echo "--- $(( $(date +%s) - s )) s"
done
echo "tutorial: $count blocks in $(( $(date +%s) - t0 )) s"
