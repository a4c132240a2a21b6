"""``ccarena results DIR``: a campaign's numbers per point, with confidence intervals, or SQL."""

from __future__ import annotations

import argparse
import math
from typing import Any

from .common import EXIT_OK, EXIT_USAGE, error

__all__ = ["register"]

_DESCRIPTION = """\
Print a campaign's results: per point (its swept values and baseline), the
mean of each metric over the repeats with the half width of its 95%
confidence interval (Student t, n - 1 degrees of freedom) and n. Metrics
are columns of runs.parquet (every number of summary.json, e.g.
utilization, jain_index, queue.drops, transfers.fct_p50_s).

--sql runs DuckDB SQL over the views runs (the catalogue), run_flows, and
flows, queue, transfers (every run's Parquet tables, each row with its
run_id)."""

_EPILOG = """\
examples:
  ccarena results results/grid
  ccarena results results/grid --metric utilization --metric queue.drops --by topology.bottleneck.buffer_bdp
  ccarena results results/grid --csv > grid.csv
  ccarena results results/grid --sql "SELECT run_id, max(cwnd_pkts) FROM flows GROUP BY run_id"
"""


def register(sub: Any) -> None:
    """Adds ``results`` to the subcommands."""
    p = sub.add_parser(
        "results",
        help="a campaign's metrics per point with confidence intervals, or SQL over its tables",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="a campaign folder (ccarena sweep --out)")
    p.add_argument("--metric", action="append", metavar="NAME", help="a catalogue column (repeatable; "
                   "default: utilization and jain_index)")
    p.add_argument("--by", action="append", metavar="COLUMN", help="group by these catalogue columns "
                   "(repeatable; default: the swept columns and baseline)")
    p.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    p.add_argument("--sql", metavar="QUERY", help="run DuckDB SQL over runs, run_flows, flows, queue, transfers")
    p.set_defaults(handler=results_command)


def _cell(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "-"
    digits = 4 if abs(mean) < 10 else 1
    return f"{mean:.{digits}f}" if math.isnan(ci) else f"{mean:.{digits}f} ± {ci:.{digits}f}"


def _table(df: Any, keys: list[str], metrics: list[str]) -> str:
    head = [*keys, "n", *metrics]
    rows = [head]
    for _, r in df.iterrows():
        n = max((int(r[f"{m}_n"]) for m in metrics), default=0)
        keys_txt = ["-" if (v is None or v != v) else str(v) for v in (r[k] for k in keys)]
        rows.append([*keys_txt, str(n), *(_cell(float(r[f"{m}_mean"]), float(r[f"{m}_ci"])) for m in metrics)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def results_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena results``."""
    from ..campaign.campaign import HEADLINE, Campaign

    try:
        campaign = Campaign(args.dir)
    except FileNotFoundError as e:
        error(str(e))
        return EXIT_USAGE
    if args.sql:
        import duckdb

        try:
            df = campaign.query(args.sql)
        except duckdb.Error as e:
            error(f"--sql: {str(e).splitlines()[0]}")
            return EXIT_USAGE
        print(df.to_csv(index=False) if args.csv else df.to_string(index=False), end="" if args.csv else "\n")
        return EXIT_OK
    metrics = args.metric or list(HEADLINE)
    keys = args.by or [*campaign.swept, "baseline"]
    try:
        agg = campaign.aggregate(by=keys, metrics=metrics)
    except KeyError as e:
        error(f"--metric/--by: {e.args[0]} (see the columns with --sql 'DESCRIBE runs')")
        return EXIT_USAGE
    if args.csv:
        print(agg.to_csv(index=False), end="")
    else:
        print(_table(agg, keys, metrics))
    return EXIT_OK
