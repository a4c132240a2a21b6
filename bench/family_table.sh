#!/bin/sh
# The high-speed TCP family in one table: response-function
# error at three loss rates (periodic and random loss), Jain's index of two
# flows, and one flow's utilisation at 1 and 0.1 BDP, for every registered
# algorithm. Release build; a few minutes on two cores.
set -eu
cd "$(dirname "$0")/.."
exec cargo test --release -p ccarena-sim --test family -- --ignored --exact family_table --nocapture
