#!/bin/sh
# The TCP family in one table, one row per registered algorithm: Jain's
# index of two flows, one flow's utilisation at 1 and 0.1 BDP, and, where an
# analytic response function exists, its error at three loss rates under
# periodic and random loss. Release build; about a minute on two cores.
set -eu
cd "$(dirname "$0")/.."
exec cargo test --release -p ccarena-sim --test family -- --ignored --exact family_table --nocapture
