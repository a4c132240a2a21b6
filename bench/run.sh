#!/usr/bin/env bash
# Engine throughput benchmark: bottleneck data packets and events per wall
# second on fixed scenarios (see crates/sim/examples/bench.rs).
# Usage: bash bench/run.sh [--repeat N] [--only a,b,b/red,...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p ccarena-sim --example bench -- "$@"
