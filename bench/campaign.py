"""Campaign machinery figures: overhead per run, dry run and results of large grids.

Prints:

* the overhead per run beyond the engine's own time, on a campaign of 200
  tiny runs with 2 workers: (workers × wall − Σ engine seconds) / runs;
* the wall time of ``ccarena sweep --dry-run`` on a 10 000-point grid;
* the wall time of ``ccarena results`` on a 10 000-run catalogue (the runs
  of the same tiny scenario, made by running it);
* with ``--leith``: the full Leith, Shorten & McCullagh grid
  (scenarios/leith-2007/b1-grid.toml, 960 runs of 300 s) with --jobs 2.

Usage: python bench/campaign.py [--leith] [--keep DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CCARENA = [sys.executable, "-m", "ccarena"]

TINY = """\
name = "tiny"
duration = "1s"
seed = 1

[topology]
rtt = "20ms"
bottleneck = {{ rate = "2Mbps", buffer = "1bdp", loss = 0.01 }}

[[flows]]
cc = "reno"

[measure]
interval = "100ms"

[sweep]
repeat = {repeat}
"""


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def engine_seconds(file: Path) -> float:
    """The engine's own time summed over every run of the campaign (run here, in one process)."""
    from ccarena import _core
    from ccarena.campaign.campaign import plan

    g, _ = plan(file)
    return sum(float(_core.simulate(r.spec.engine)["stats"]["engine_seconds"]) for r in g.runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--leith", action="store_true", help="also run the full Leith grid (about 10 minutes or more)")
    ap.add_argument("--keep", metavar="DIR", help="keep the campaigns in DIR")
    a = ap.parse_args()
    tmp = Path(a.keep) if a.keep else Path(tempfile.mkdtemp())
    tmp.mkdir(parents=True, exist_ok=True)

    tiny = tmp / "tiny.toml"
    tiny.write_text(TINY.format(repeat=200))
    w = wall([*CCARENA, "sweep", str(tiny), "--out", str(tmp / "tiny200"), "--jobs", "2", "--quiet"])
    eng = engine_seconds(tiny)
    print(f"200 tiny runs, 2 workers: wall {w:.2f} s, engine {eng:.2f} s in all, "
          f"overhead {(2 * w - eng) / 200 * 1000:.1f} ms per run (goal 20)")

    rates = ", ".join(f'"{r}Mbps"' for r in range(1, 101))
    bufs = ", ".join(f'"{b / 100:.2f}bdp"' for b in range(1, 101))
    grid = tmp / "g10k.toml"
    grid.write_text((ROOT / "scenarios" / "quickstart.toml").read_text()
                    + f'\n[sweep]\n"topology.bottleneck.rate" = [{rates}]\n"topology.bottleneck.buffer" = [{bufs}]\n')
    best = min(wall([*CCARENA, "sweep", str(grid), "--dry-run"]) for _ in range(3))
    print(f"--dry-run of a 10 000-point grid: {best:.2f} s (goal 2)")

    big = tmp / "tiny10k.toml"
    big.write_text(TINY.format(repeat=10_000))
    t0 = time.perf_counter()
    subprocess.run([*CCARENA, "sweep", str(big), "--out", str(tmp / "tiny10k"), "--jobs", "2", "--quiet"], check=True)
    made = time.perf_counter() - t0
    best = min(wall([*CCARENA, "results", str(tmp / "tiny10k")]) for _ in range(3))
    print(f"ccarena results over 10 000 runs: {best:.2f} s (goal 1); making them took {made:.0f} s "
          f"({made / 10_000 * 1000:.1f} ms per run with 2 workers)")

    if a.leith:
        t0 = time.perf_counter()
        subprocess.run([*CCARENA, "sweep", str(ROOT / "scenarios" / "leith-2007" / "b1-grid.toml"),
                        "--out", str(tmp / "leith"), "--jobs", "2", "--quiet"], check=True)
        print(f"Leith grid, 960 runs of 300 s, --jobs 2: {time.perf_counter() - t0:.0f} s (goal 600)")


if __name__ == "__main__":
    main()
