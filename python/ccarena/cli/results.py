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
confidence interval (Student t, n - 1 degrees of freedom) and n, the
number of runs. Metrics and --by columns come from one of three tables:
runs.parquet (every number of summary.json, e.g. utilization_window,
jain_index, queue.drops, transfers.fct_p50_s), run_groups.parquet (per
flow group: cc, group, share_of_flows, share_of_link, rate_per_flow_bps,
rate_ratio_vs_others), run_flows.parquet (per flow: flow, goodput_bps,
window_rate_bps, retransmits, rtt_s, ...) or, for a parking lot or a
network of links, run_links.parquet (per link, named by name:
utilization_window, drop_rate, drops, marks, delay_p99_ms, ...); the
coarsest that has them all is used unless --per says which.

A run counts once: its flows in one row of the output are averaged first.
An interval is given only over repeats of one point; a row that pools
several points (--by leaves out a swept column) shows the mean and n, no
interval, and the points column says how many it pools. An interval of 0
means the point's repeats all gave one value (as repeats of a run that
draws no random numbers do); a note under the table names such metrics.

--sql runs DuckDB SQL over the views runs (the catalogue), run_flows,
run_groups, run_links (networks), and flows, queue, transfers (every run's Parquet tables, each
row with its run_id)."""

_EPILOG = """\
examples:
  ccarena results results/grid
  ccarena results results/grid --metric utilization --metric queue.drops --by topology.bottleneck.buffer_bdp
  ccarena results results/grid --metric share_of_flows --by topology.bottleneck.buffer_bdp --by cc
  ccarena results results/lot --per link            (a parking lot: each link's utilisation, loss, delay)
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
    p.add_argument("--metric", action="append", metavar="NAME", help="a column of runs, run_groups or run_flows "
                   "(repeatable; default: utilization_window and jain_index, or per group: share_of_flows and "
                   "rate_ratio_vs_others)")
    p.add_argument("--by", action="append", metavar="COLUMN", help="group by these columns (repeatable; default: "
                   "the swept columns and baseline, and group and cc per group)")
    p.add_argument("--per", choices=("run", "group", "flow", "link"), help="the table: runs, run_groups, run_flows or run_links "
                   "(default: the coarsest that has every --metric and --by column)")
    p.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    p.add_argument("--sql", metavar="QUERY", help="run DuckDB SQL over runs, run_flows, flows, queue, transfers")
    p.set_defaults(handler=results_command)


def _cell(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "-"
    digits = 4 if abs(mean) < 10 else 1
    return f"{mean:.{digits}f}" if math.isnan(ci) else f"{mean:.{digits}f} ± {ci:.{digits}f}"


def _table(df: Any, keys: list[str], metrics: list[str]) -> str:
    pooled = "points" in df.columns and bool((df["points"] > 1).any())
    head = [*keys, *(["points"] if pooled else []), "n", *metrics]
    rows = [head]
    for _, r in df.iterrows():
        n = max((int(r[f"{m}_n"]) for m in metrics), default=0)
        keys_txt = ["-" if (v is None or v != v) else str(v) for v in (r[k] for k in keys)]
        pts = [str(int(r["points"]))] if pooled else []
        rows.append([*keys_txt, *pts, str(n), *(_cell(float(r[f"{m}_mean"]), float(r[f"{m}_ci"])) for m in metrics)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def results_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena results``."""
    from ..campaign.campaign import GROUP_HEADLINE, HEADLINE, LINK_HEADLINE, Campaign
    from ..campaign.view import IDENTICAL_REPEATS, agreeing

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
    try:
        per = args.per or campaign.level_of([*(args.by or []), *(args.metric or [])])
        metrics = args.metric or list({"run": HEADLINE, "link": LINK_HEADLINE}.get(per, GROUP_HEADLINE))
        agg = campaign.aggregate(by=args.by, metrics=metrics, per=per)
    except KeyError as e:
        error(f"--metric/--by: {e.args[0]} (see the columns with --sql 'DESCRIBE run_groups')")
        return EXIT_USAGE
    keys = [c for c in agg.columns if c != "points" and not c.endswith(("_mean", "_ci", "_n"))]
    if args.csv:
        print(agg.to_csv(index=False), end="")
    else:
        print(_table(agg, keys, metrics))
        if "points" in agg.columns and (agg["points"] > 1).any():
            left_out = [c for c in campaign.swept if c not in keys]
            print(f"note: rows pool several points ({', '.join(left_out) or 'baselines'} left out of --by): "
                  "means over all their runs, no confidence interval")
        fixed = agreeing(agg, metrics)
        if fixed:
            print(f"note: an interval of 0 ({', '.join(fixed)}) {IDENTICAL_REPEATS}")
    return EXIT_OK
