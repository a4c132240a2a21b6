"""Runs every full preset (or the IDs given), stores what each measured beside its campaign file,
and writes the README's table of published experiments from the stored results.

    python bench/reproduce_all.py [ID ...] [--jobs N] [--out DIR] [--backend emu|host] [--table-only]

Each preset runs into DIR/ID (default results/reproduce/ID; a finished campaign is reused, an
interrupted one resumed), with the other sides of its dispute beside it. Its values go to
scenarios/<paper>/results/<id>.json with the commit, version, date, runs and wall time; then the
README's table (between its markers) is rewritten from every stored result, each verdict judged
afresh. --backend emu runs the presets on the kernel's TCP through the emulator (root; the E
series) and stores them as <id>-emu.json, shown beside the simulator's in the table; --backend
host reruns the presets whose paper ran on a testbed in the simulator with the testbed's sending
hosts (1 Gbit/s NICs, 64 KB TSO bursts) and stores them as <id>-host.json, shown likewise.
--table-only rewrites the table without running anything.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ccarena.presets import PRESETS, get, reproduce
from ccarena.presets.stored import readme_table, replace_readme_section, save

README = Path(__file__).resolve().parents[1] / "README.md"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ids", nargs="*", metavar="ID")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="results/reproduce")
    ap.add_argument("--backend", choices=("sim", "emu", "host"), default="sim",
                    help="host: the simulator with the testbed's sending hosts (presets whose paper ran on a testbed)")
    ap.add_argument("--table-only", action="store_true", help="rewrite the README's table from the stored results")
    args = ap.parse_args()
    presets = [get(i) for i in args.ids] if args.ids else PRESETS
    if args.backend == "host":
        presets = [p for p in presets if p.testbed]
    done: set[str] = set()
    for p in [] if args.table_only else presets:
        if p.missing():
            print(f"{p.id}: needs {', '.join(p.missing())}; skipped", file=sys.stderr)
            continue
        if p.id in done:
            continue
        t0 = time.monotonic()
        suffix = "" if args.backend == "sim" else f"-{args.backend}"
        r = reproduce(p, jobs=args.jobs, out=Path(args.out) / f"{p.id.lower()}{suffix}", backend=args.backend)
        wall = time.monotonic() - t0
        if r.others:  # the elapsed time holds the other side's runs too: count this campaign's own
            wall = float(r.campaign.runs["wall_s"].sum()) / args.jobs
        save(p, r.values[p.id], runs=len(r.campaign.runs), wall_s=wall, backend=args.backend)
        done.add(p.id)
        for oid, oc in r.others.items():
            if oid not in done:
                wall_o = float(oc.runs["wall_s"].sum()) / args.jobs
                save(get(oid), r.values[oid], runs=len(oc.runs), wall_s=wall_o, backend=args.backend)
                done.add(oid)
        print(f"{p.id}: {r.verdict.summary()} ({wall:.0f} s)", file=sys.stderr, flush=True)
    table = readme_table(PRESETS)
    README.write_text(replace_readme_section(README.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
