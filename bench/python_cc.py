"""Algorithms written in Python against the built-ins: bottleneck data packets per wall second of the
engine (set-up and output excluded), Rust's Reno and CUBIC beside the Python ports of
examples/python_cc/ on the same scenario (2 flows, 100 Mbit/s, 50 ms, 1 BDP, 30 s). The machine may be
shared: each pair runs alternately, and the best of the repeats is kept.

    python bench/python_cc.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ccarena

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = {
    "name": "bench-python-cc",
    "duration": "30s",
    "seed": 1,
    "topology": {"rtt": "50ms", "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"}},
    "flows": [{"cc": "reno", "count": 2}],
    "measure": {"interval": "100ms"},
}


def pps(cc: str) -> float:
    doc = {**SCENARIO, "flows": [{"cc": cc, "count": 2}]}
    r = ccarena.run(doc, figure=False)
    stats = r.raw["stats"]
    return float(stats["bottleneck_data_packets"]) / float(stats["engine_seconds"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "examples" / "python_cc"))
    import cubic  # noqa: F401 - registers py_cubic
    import reno  # noqa: F401 - registers py_reno

    print(f"{'algorithm':<12} {'Rust pkts/s':>14} {'Python pkts/s':>14} {'ratio':>7}")
    for rust, python in (("reno", "py_reno"), ("cubic", "py_cubic")):
        best = [0.0, 0.0]
        for _ in range(args.repeat):
            best = [max(best[0], pps(rust)), max(best[1], pps(python))]
        print(f"{rust:<12} {best[0]:>14.0f} {best[1]:>14.0f} {best[1] / best[0]:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
