"""``ccarena reproduce ID``: a published experiment in one command (scenarios/<paper>/)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, error

__all__ = ["register"]

_DESCRIPTION = """\
Rerun an experiment of the literature from its preset: the campaign file in
scenarios/<paper>/ runs (as `ccarena sweep` would), then the report and the
paper's figure (figure-ID.png and .svg, also embedded in report.html) are
written into the campaign's folder, and the paper's claim is judged on the
result, part by part: reproduced, partly (naming the part that does not
hold), not reproduced (with the cause), or figure only (the paper states no
result). Where the experiment is one side of a dispute between two papers
(B2/C1, B5/C3, B6/C4, B3/B4/C2), the other side's campaigns run too, beside
it, and the report says which side ccarena's model supports.

  --list     every experiment: ID, title, runs, estimated wall time here and
             the verdict of its stored full run (scenarios/<paper>/results/)
  --quick    the reduced form (fewer points, repeats and seconds): under a
             minute on 2 cores"""

_EPILOG = """\
examples:
  ccarena reproduce --list
  ccarena reproduce E1 --quick
  ccarena reproduce B5 --jobs 2 --out results/b5
  sudo .venv/bin/ccarena reproduce E1 --backend emu"""


def register(sub: Any) -> None:
    """Adds ``reproduce`` to the subcommands."""
    p = sub.add_parser(
        "reproduce",
        help="rerun a published experiment: campaign, report and the paper's figure",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("id", metavar="ID", nargs="?", help="experiment ID, e.g. B5 (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--quick", action="store_true", help="the reduced form: fewer points, repeats and seconds")
    p.add_argument("--jobs", metavar="N", type=int, help="worker processes (default: one per core)")
    p.add_argument("--out", metavar="DIR", help="the campaign's folder (default: results/reproduce/ID[-quick])")
    p.add_argument("--backend", choices=("sim", "emu", "host"), default="sim",
                   help="sim (default), emu (the kernel's TCP), or host (the simulator with the testbed's sending hosts: "
                   "1 Gbit/s NICs and 64 KB TSO bursts; presets whose paper ran on a testbed)")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-run lines")
    p.set_defaults(handler=reproduce_command)


def _duration(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _list(jobs: int) -> None:
    from ..presets import PRESETS
    from ..presets.stored import stored_values, verdict

    values = stored_values(PRESETS)
    print(
        f"{'ID':<4} {'title':<52} {'runs':>5} {'est.':>7} {'quick':>5} {'est.':>6}  {'stored full run':<15}"
        f"  (estimates with {jobs} jobs)"
    )
    for p in PRESETS:
        missing = p.missing()
        est = None if missing else p.estimate_s(jobs=jobs)
        qest = None if missing else p.estimate_s(quick=True, jobs=jobs)
        note = f"  needs: {', '.join(missing)}" if missing else ""
        runs = f"{p.count():>5} {_duration(est):>7} {p.count(quick=True):>5} {_duration(qest):>6}"
        v = verdict(p, values) if p.id in values else None
        print(f"{p.id:<4} {p.title[:52]:<52} {runs}  {v.word if v else '-':<15}{note}".rstrip())


def reproduce_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena reproduce``."""
    import os

    from ..campaign import CampaignInterrupted
    from ..spec import SpecError

    if args.jobs is not None and args.jobs < 1:
        error(f"--jobs: expected at least 1, got {args.jobs}")
        return EXIT_USAGE
    if args.list:
        try:
            _list(args.jobs or os.cpu_count() or 1)
        except SpecError as e:
            error(str(e))
            return EXIT_USAGE
        return EXIT_OK
    if not args.id:
        error("an experiment ID is needed (ccarena reproduce --list shows them)")
        return EXIT_USAGE
    from ..presets import PresetUnavailable, get, reproduce

    try:
        preset = get(args.id)
    except KeyError as e:
        error(str(e.args[0]))
        return EXIT_USAGE
    try:
        r = reproduce(preset, quick=args.quick, jobs=args.jobs, out=args.out, backend=args.backend, quiet=args.quiet)
    except PresetUnavailable as e:
        error(str(e))
        return EXIT_USAGE
    except SpecError as e:
        error(str(e))
        return EXIT_USAGE
    except CampaignInterrupted as e:
        again = " ".join(shlex.quote(a) for a in ["ccarena", *sys.argv[1:]]) if sys.argv[1:] else "the same command"
        error(f"{e}; nothing is lost: run {again} to finish the rest")
        return EXIT_INTERRUPTED
    except RuntimeError as e:
        error(str(e))
        return EXIT_FAILED
    runs = r.campaign.runs
    failed = int((runs["status"] != "ok").sum())
    print(f"{preset.id}: {len(runs)} runs, {failed} failed: {r.campaign.path}")
    print(f"figure: {r.figures[0]}")
    print(f"report: {r.report}")
    print(f"claim ({preset.where}): {preset.claim}")
    if preset.reported:
        print(f"the paper reports: {preset.reported}")
    for d in preset.deviations:
        print(f"deviation: {d}")
    print(f"verdict: {r.verdict.summary()}")
    for part in r.verdict.parts:
        print(f"  {'holds' if part.holds else 'does not hold'}: {part.name}: {part.measured}")
    if r.dispute:
        from ..presets import get as preset_of

        for other in r.others:
            print(f"the other side, {other}: {preset_of(other).verdict(r.values).summary()} ({r.others[other].path})")
        print(f"dispute: {r.dispute}")
    return EXIT_FAILED if failed else EXIT_OK
