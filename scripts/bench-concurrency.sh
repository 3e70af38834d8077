#!/bin/sh
# Concurrent trials under model latency (docs/BENCHMARKS.md): builds the release `bureau` and
# the scripted model server, then runs scripts/bench_concurrency.py (its options pass through:
# --cases 1,100,1000, --latency-ms 1000, --tool-calls 4, --serial, --work DIR, --scratch DIR).
set -eu
cd "$(dirname "$0")/.."
cargo build --release -p bureau-cli
cargo build --release -p bureau-agents --example scripted_model
target="${CARGO_TARGET_DIR:-target}"
exec python3 scripts/bench_concurrency.py \
  --bureau "$target/release/bureau" \
  --server "$target/release/examples/scripted_model" "$@"
