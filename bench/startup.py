"""Start-up and per-run overhead of the ccarena command, beside the engine's own time.

Prints, each the minimum of N runs (default 5) of a fresh process:

* ``ccarena --help`` and ``ccarena list cc``, wall seconds;
* ``import ccarena``, and whether it imported numpy, pandas, pyarrow or matplotlib;
* ``ccarena run FILE --no-figure``: wall seconds, the engine's seconds (as the
  run reports them) and the difference, which is what the command adds;
* the figure: ``ccarena run FILE`` minus ``--no-figure``.

Usage: python bench/startup.py [FILE] [--repeat N]   (FILE: scenarios/quickstart.toml)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CCARENA = [sys.executable, "-c", "import sys; from ccarena.cli import main; sys.exit(main())"]


def timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, out


def best(cmd: list[str], n: int) -> tuple[float, str]:
    runs = [timed(cmd) for _ in range(n)]
    return min(runs, key=lambda r: r[0])


def engine_seconds(out: str) -> float:
    m = re.search(r"events in ([0-9.]+) s", out)
    if m is None:
        raise SystemExit(f"no engine time in the output:\n{out}")
    return float(m.group(1))


def run_overhead(file: str, figure: bool, n: int) -> tuple[float, float]:
    """Minimum over n runs of (wall, wall - engine)."""
    walls, extras = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n):
            cmd = [*CCARENA, "run", file, "--out", f"{tmp}/r{i}"] + ([] if figure else ["--no-figure"])
            wall, out = timed(cmd)
            walls.append(wall)
            extras.append(wall - engine_seconds(out))
    return min(walls), min(extras)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "scenarios" / "quickstart.toml"))
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.repeat
    timed([*CCARENA, "--help"])  # warm the file cache
    help_s, _ = best([*CCARENA, "--help"], n)
    list_s, _ = best([*CCARENA, "list", "cc"], n)
    probe = "import sys, ccarena; print(','.join(m for m in ('numpy','pandas','pyarrow','matplotlib') if m in sys.modules))"
    import_s, heavy = best([sys.executable, "-c", probe], n)
    run_s, run_extra = run_overhead(a.file, False, n)
    fig_s, _ = run_overhead(a.file, True, n)
    _, out = timed([*CCARENA, "run", a.file, "--no-figure", "--out", tempfile.mkdtemp() + "/x"])
    print(f"minimum of {n} runs each, {Path(a.file).name}")
    print(f"ccarena --help                 {help_s:.3f} s   (goal 0.15)")
    print(f"ccarena list cc                {list_s:.3f} s   (goal 0.15)")
    print(f"import ccarena                 {import_s:.3f} s   heavy modules imported: {heavy.strip() or 'none'}")
    print(f"run --no-figure                {run_s:.3f} s   engine {engine_seconds(out):.3f} s, "
          f"beyond the engine {run_extra:.3f} s (goal 0.25)")
    print(f"run with figure                {fig_s:.3f} s   the figure {fig_s - run_s:.3f} s (goal 0.30)")


if __name__ == "__main__":
    main()
