"""``ccarena report DIR``: one self-contained HTML page for a run or a campaign."""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_OK, EXIT_USAGE, error

__all__ = ["register"]


def register(sub: Any) -> None:
    """Adds ``report`` to the subcommands."""
    p = sub.add_parser(
        "report",
        help="write DIR/report.html for a run or a campaign",
        description="Write DIR/report.html: the scenario, the provenance, the metrics (with 95% confidence "
        "intervals for a campaign) and the figures, inline as SVG; one file, nothing fetched from the network.",
    )
    p.add_argument("dir", metavar="DIR", help="a run folder (ccarena run) or a campaign folder (ccarena sweep)")
    p.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena report``."""
    from ..report import write_report

    try:
        path = write_report(args.dir)
    except FileNotFoundError as e:
        error(str(e))
        return EXIT_USAGE
    print(f"report: {path}")
    return EXIT_OK
