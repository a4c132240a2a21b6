"""Runs every full preset (or the IDs given) and prints the README's table of published experiments.

    python bench/reproduce_all.py [ID ...] [--jobs N] [--out DIR]

Each preset runs into DIR/ID (default results/reproduce/ID; a finished campaign is reused,
an interrupted one resumed) and its claim is checked; the table (Markdown) goes to standard
output and to DIR/table.md. Presets that need a feature this ccarena lacks are listed as such.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ccarena.presets import PRESETS, get, reproduce


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ids", nargs="*", metavar="ID")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="results/reproduce")
    args = ap.parse_args()
    presets = [get(i) for i in args.ids] if args.ids else PRESETS
    rows = [
        "| experiment | the paper's claim | ccarena (full preset) | agreement | wall time |",
        "|---|---|---|---|---|",
    ]
    for p in presets:
        missing = p.missing()
        if missing:
            rows.append(f"| {p.id} {p.title} | {p.claim} | - | needs: {', '.join(missing)} | - |")
            continue
        t0 = time.monotonic()
        r = reproduce(p, jobs=args.jobs, out=Path(args.out) / p.id.lower())
        wall = time.monotonic() - t0
        walls = r.campaign.runs["wall_s"].sum()
        if r.check is None:
            result, verdict = f"figure: {r.figures[0].name}", "figure only"
        else:
            result = r.check.measured
            verdict = (
                "**disagrees**" if not r.check.agrees else (f"partly: {r.check.caveat}" if r.check.caveat else "agrees")
            )
        rows.append(f"| {p.id} {p.title} | {p.claim} | {result} | {verdict} | {wall:.0f} s ({walls:.0f} s of runs) |")
        print(rows[-1], file=sys.stderr, flush=True)
    table = "\n".join(rows) + "\n"
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "table.md").write_text(table, encoding="utf-8")
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
