"""How the emulator's stalls move a comparison with the simulator (root only).

Runs ``ccarena compare FILE --seed S`` for seeds S..S+N-1, once per stall
mode (``CCARENA_EMU_STALLS``: ``catch-up``, the default, and ``pause``),
the modes alternating so that both see the same stretch of the host. Prints,
per run, each flow's difference from the simulator in goodput and mean RTT
beside what the emulator reports of its timing (stalls: count and time in
all; ACK delivery lateness at the 99th percentile) and the CPU time the host
took from this virtual machine meanwhile (``steal`` in /proc/stat); then, per
mode and flow, a straight-line fit of each difference against the time
stalled and against the ACK lateness: slope, intercept (the difference a
run without stalls would show) and correlation.

    python bench/emu_stalls.py experiment.toml --runs 3
    python bench/emu_stalls.py experiment.toml --runs 5 --seed 4 --modes pause

Each comparison is kept under --out (default: a new temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

CCARENA = Path(sys.executable).with_name("ccarena")
MODES = ("catch-up", "pause")


def steal_s() -> float:
    """CPU time the host has taken from this machine since boot, s (/proc/stat, all CPUs)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def compare(exp: Path, seed: int, mode: str, folder: Path) -> dict[str, Any]:
    """One comparison in `mode`; its per-flow differences and the emulator's timing."""
    before = steal_s()
    proc = subprocess.run(
        [str(CCARENA), "compare", str(exp), "--seed", str(seed), "--out", str(folder), "--no-figure"],
        env={**os.environ, "CCARENA_EMU_STALLS": mode},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{folder.name}: {proc.stderr.strip()}")
    stolen = steal_s() - before
    # The comparison's own table (ccarena.analysis.comparison.differences): per flow, rel = emu / sim - 1.
    rows = json.loads((folder / "compare.json").read_text())["rows"]
    e = json.loads((folder / "emu" / "summary.json").read_text())["emu"]["emulator"]
    flows: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["quantity"] in ("goodput", "mean RTT"):
            row = flows.setdefault(r["flow"], {"flow": r["flow"], "cc": r["cc"]})
            row["goodput" if r["quantity"] == "goodput" else "rtt"] = None if r["rel"] is None else 100.0 * r["rel"]
    return {
        "seed": seed,
        "mode": mode,
        "flows": list(flows.values()),
        "stall_count": e["stalls"]["count"],
        "stall_ms": e["stalls"]["total_ms"],
        "ack_p99_us": e["reverse_delivery_lateness_us"]["p99_us"],
        "steal_s": stolen,
    }


def fit(x: list[float], y: list[float], unit: str) -> str:
    """Intercept, slope and correlation of y against x, or why not (fewer than four distinct runs)."""
    if len(set(x)) < 4:
        return "too few distinct runs"
    slope, icpt = np.polyfit(x, y, 1)
    r = np.corrcoef(x, y)[0, 1]
    return f"{icpt:+.1f} % {slope:+.2f} % per {unit}, r {r:+.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path, help="experiment file (TOML)")
    ap.add_argument("--runs", type=int, default=3, help="seeds per mode (default 3)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated stall modes (default both)")
    ap.add_argument("--out", type=Path, help="folder for the comparisons (must not exist)")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes: expected a comma-separated choice of {', '.join(MODES)}, got {args.modes!r}")
    if args.runs < 1:
        ap.error(f"--runs: expected at least 1, got {args.runs}")
    out = args.out or Path(tempfile.mkdtemp(prefix="ccarena-emu-stalls-"))
    out.mkdir(parents=True, exist_ok=args.out is None)
    runs = []
    print(
        f"{'seed':>4} {'mode':8} {'flow':>4} {'cc':6} {'goodput':>8} {'mean RTT':>9} "
        f"{'stalls':>6} {'stalled':>9} {'ACK p99':>8} {'steal':>6}"
    )
    for seed in range(args.seed, args.seed + args.runs):
        for mode in modes:
            r = compare(args.file, seed, mode, out / f"{mode}-seed-{seed}")
            runs.append(r)
            for f in r["flows"]:
                g = "-" if f["goodput"] is None else f"{f['goodput']:+.1f}%"
                t = "-" if f["rtt"] is None else f"{f['rtt']:+.1f}%"
                print(
                    f"{seed:>4} {mode:8} {f['flow']:>4} {f['cc']:6} {g:>8} {t:>9} {r['stall_count']:>6} "
                    f"{r['stall_ms']:>6.0f} ms {r['ack_p99_us']:>5.0f} us {r['steal_s']:>5.2f}s",
                    flush=True,
                )
    print("\nstraight-line fits of emulator minus simulator (intercept, slope, correlation), per mode and flow:")
    for mode in modes:
        mine = [r for r in runs if r["mode"] == mode]
        for i, f in enumerate(mine[0]["flows"]):
            for q in ("goodput", "rtt"):
                pts = [(r["stall_ms"] / 100, r["ack_p99_us"] / 100, r["flows"][i][q]) for r in mine]
                pts = [p for p in pts if p[2] is not None]
                ys = [p[2] for p in pts]
                print(
                    f"  {mode:8} flow {f['flow']} {f['cc']:6} {q:7}  "
                    f"{fit([p[0] for p in pts], ys, '100 ms stalled')};  "
                    f"{fit([p[1] for p in pts], ys, '100 us of ACK p99')}"
                )
    print(f"\ncomparisons in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
