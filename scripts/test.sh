#!/usr/bin/env bash
# The test command of the README: fetches the real data sets (idempotent) and runs every
# test of the workspace on the CPU default backend.
set -euo pipefail
cd "$(dirname "$0")/.."
bash datasets/fetch.sh
cargo test --workspace --locked
