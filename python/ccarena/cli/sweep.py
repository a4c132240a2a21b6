"""``ccarena sweep FILE``: a campaign, a grid of runs with repeats, into a result store."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from .common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, add_set_option, error, parse_sets

__all__ = ["register"]

_DESCRIPTION = """\
Run a campaign: the experiment FILE for every point of its [sweep] grid,
each point `repeat` times, into one folder:

  sweep.toml         the file as given, the overrides, the resolved grid
  runs/RUN-ID/       one result folder per run (as `ccarena run` writes it)
  failed/RUN-ID.json the error of each run that failed
  runs.parquet       the catalogue: one row per run, swept values as typed
                     columns, every number of summary.json
  run_flows.parquet  one row per run per flow
  report.html        the campaign's report (ccarena report)

Every run is validated before anything starts. Interrupted or killed, the
same command again finishes only the missing runs. A file without [sweep]
is a campaign of one run.

  [sweep]
  "topology.bottleneck.buffer" = ["0.1bdp", "0.3bdp", "1bdp"]
  "flows[0].cc" = ["cubic", "htcp"]
  repeat = 10          # runs per point: seeds from the file's seed and the repeat
  baseline = "reno"    # every point also with every flow running reno"""

_EPILOG = """\
examples:
  ccarena sweep grid.toml --dry-run
  ccarena sweep grid.toml --jobs 2 --out results/grid
  ccarena sweep grid.toml --executor dask --scheduler tcp://head:8786
  ccarena results results/grid"""


def register(sub: Any) -> None:
    """Adds ``sweep`` to the subcommands."""
    p = sub.add_parser(
        "sweep",
        help="run a campaign: a grid of runs with repeats, resumable",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file with an optional [sweep] table")
    p.add_argument("--out", metavar="DIR", help="the campaign's folder (default: results/NAME-campaign); "
                   "an existing folder of the same campaign is resumed")
    p.add_argument("--jobs", metavar="N", type=int, help="worker processes (default: one per core)")
    p.add_argument("--seed", metavar="N", type=int, help="replaces the file's seed (repeats derive theirs from it)")
    add_set_option(p, "duration=10s or sweep.repeat=3")
    p.add_argument("--backend", choices=("sim", "emu"), default="sim", help="sim (default) or emu (one run at a time)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local: a pool of worker processes (default); dask: a Dask cluster (pip install 'ccarena[dask]')")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --executor dask: a running scheduler, e.g. tcp://host:8786 (default: a LocalCluster)")
    p.add_argument("--figures", action="store_true", help="draw figure.png for every run (off by default)")
    p.add_argument("--retry-failed", action="store_true", help="run again the runs that failed")
    p.add_argument("--dry-run", action="store_true", help="print the points, runs, swept columns and work, and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar or per-run lines")
    p.set_defaults(handler=sweep_command)


def _dry_run(g: Any, header: dict[str, Any]) -> None:
    from ..campaign.campaign import estimate_packets

    print(f"{header['name']}: {len(g.points)} points x {g.repeat} repeats"
          + (f" x (1 + {len(g.baselines)} baselines)" if g.baselines else "") + f" = {len(g.runs)} runs")
    if header["columns"]:
        print("swept columns: " + ", ".join(header["columns"].values()))
    print(f"work: about {estimate_packets(g):,} simulated data packets at most (the bottleneck's rate x duration)")


def sweep_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena sweep``."""
    from ..campaign.campaign import CampaignInterrupted, plan, sweep
    from ..spec import SpecError

    try:
        overrides = parse_sets(args.overrides)
        if args.jobs is not None and args.jobs < 1:
            raise SpecError("--jobs", f"expected at least 1, got {args.jobs}")
        if args.scheduler and args.executor != "dask":
            raise SpecError("--scheduler", "only with --executor dask")
        if args.dry_run:
            g, header = plan(args.file, set=overrides, seed=args.seed)
            _dry_run(g, header)
            return EXIT_OK
        campaign = sweep(
            args.file, out=args.out, jobs=args.jobs, set=overrides, seed=args.seed, backend=args.backend,
            executor=args.executor, scheduler=args.scheduler, figures=args.figures,
            retry_failed=args.retry_failed, quiet=args.quiet,
        )  # fmt: skip
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
    from ..report import write_report

    runs = campaign.runs
    failed = int((runs["status"] != "ok").sum())
    print(f"{len(runs)} runs, {failed} failed: {campaign.path}")
    print(f"report: {write_report(campaign.path)}")
    if failed:
        print(f"the errors are in {campaign.store.failed_dir}; --retry-failed runs them again")
        return EXIT_FAILED
    return EXIT_OK
