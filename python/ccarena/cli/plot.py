"""``ccarena plot DIR``: a campaign's metric against a swept column, a line per algorithm, or a run's
figure, as PNG, PDF or SVG."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_OK, EXIT_USAGE, error

__all__ = ["register"]

_DESCRIPTION = """\
Draw a campaign's figure: --y against --x, one line per value of --hue,
one panel per value of --col. Columns come from runs.parquet, run_groups
(per flow group: share_of_flows, share_of_link, rate_per_flow_bps,
rate_ratio_vs_others, cc, ...), run_flows (per flow) or run_links (per link
of a network), the coarsest table that has them all unless --per says
which. --x defaults to the first numeric swept column, --hue to cc for
groups and flows and to the link's name for links.

Each point is the mean over its runs. A 95% interval (Student t) is drawn
only over at least 5 repeats of one point; with fewer, each run is drawn
as a dot. A swept column that is not --x, --hue or --col becomes the hue or
the panels: runs at its different values are not repeats. Axes are in
Mbit/s, ms, BDP or packets, as the column's unit suffix says.

DIR may also be one run's folder (ccarena run, or a campaign's runs/ID):
then --kind names its figure (overview: rate at the bottleneck, cwnd and
queue over time; rate, cwnd, queue, rtt: one panel each; rate_cwnd: rate
beside cwnd), written where --out says (default: DIR/figure-KIND.png)."""

_EPILOG = """\
examples:
  ccarena plot results/grid --y share_of_flows --x topology.bottleneck.buffer_bdp --hue cc --out share.pdf
  ccarena plot results/grid --y utilization_window
  ccarena plot results/grid --y jain_index --col topology.rtt_s --size 9x3.5 --style ggplot
  ccarena plot results/quickstart-seed1 --kind rate_cwnd --out run.pdf
"""


def register(sub: Any) -> None:
    """Adds ``plot`` to the subcommands."""
    p = sub.add_parser(
        "plot",
        help="a campaign's metric against a swept column, a line per algorithm, 95%% intervals over repeats; "
        "or a run's figure",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="a campaign folder (ccarena sweep --out) or a run's folder")
    p.add_argument("--y", metavar="COLUMN", help="the metric drawn (a campaign: required)")
    p.add_argument("--kind", default="overview", help="a run's figure: overview, rate, cwnd, queue, rtt or "
                   "rate_cwnd (default: overview)")
    p.add_argument("--x", metavar="COLUMN", help="the column drawn against (default: the first numeric swept one)")
    p.add_argument("--hue", metavar="COLUMN", help="one line per value (default: cc for groups and flows)")
    p.add_argument("--col", metavar="COLUMN", help="one panel per value")
    p.add_argument("--per", choices=("run", "group", "flow", "link"), help="the table (default: the coarsest with every column)")
    p.add_argument("--out", metavar="FILE", help="a .png, .pdf or .svg file (default: DIR/figures/Y-vs-X.png); "
                   "an existing file is replaced only with --force")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--size", metavar="WxH", help="figure size in inches, e.g. 6x4")
    p.add_argument("--dpi", type=int, default=150, help="resolution of PNG output (default: 150)")
    p.add_argument("--style", metavar="NAME", help="a matplotlib style, e.g. ggplot or seaborn-v0_8-paper")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.set_defaults(handler=plot_command)


def _size(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        w, h = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size: expected WIDTHxHEIGHT in inches such as 6x4, got {text!r}") from None
    if not (0 < w <= 100 and 0 < h <= 100):
        raise ValueError(f"--size: expected sizes in (0, 100] inches, got {text!r}")
    return w, h


def plot_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena plot``."""
    import matplotlib.style

    from ..campaign.campaign import Campaign
    from ..campaign.figures import FORMATS, save_figure

    if (Path(args.dir) / "summary.json").is_file():
        return _run_figure(args)
    try:
        campaign = Campaign(args.dir)
    except FileNotFoundError as e:
        error(f"{e} (or not a run: no summary.json)")
        return EXIT_USAGE
    if args.y is None:
        error("--y: required for a campaign (a column of runs, run_groups or run_flows, e.g. share_of_flows)")
        return EXIT_USAGE
    if args.style is not None and args.style not in matplotlib.style.available and args.style != "default":
        from ..spec.errors import did_you_mean

        error(f"--style: unknown matplotlib style {args.style!r}{did_you_mean(args.style, matplotlib.style.available)}")
        return EXIT_USAGE
    if args.out is not None and Path(args.out).exists() and not args.force:
        error(f"--out: {args.out} exists (pass --force to replace it)")
        return EXIT_USAGE
    try:
        size = _size(args.size)
        if args.out is not None and Path(args.out).suffix.lstrip(".").lower() not in FORMATS:
            raise ValueError(f"--out: expected a file ending in .png, .pdf or .svg, got {args.out!r}")
        fig = campaign.plot(args.y, args.x, args.hue, args.col, per=args.per, size=size, style=args.style,
                            logx=args.logx)
    except KeyError as e:
        error(f"--x/--y/--hue/--col: {e.args[0]}")
        return EXIT_USAGE
    except ValueError as e:
        msg = str(e)
        error(f"--{msg}" if msg.startswith(("x:", "y:", "hue:", "col:")) else msg)
        return EXIT_USAGE
    x = fig.axes[0].get_xlabel()
    out = Path(args.out) if args.out else campaign.path / "figures" / f"{args.y}-vs-{_stem(x)}.png"
    save_figure(fig, out, dpi=args.dpi)
    print(f"figure: {out}")
    return EXIT_OK


def _run_figure(args: argparse.Namespace) -> int:
    """``ccarena plot RUN_DIR --kind K``: one run's figure."""
    from ..analysis.plots import PLOTS
    from ..campaign.figures import FORMATS, save_figure
    from ..results import Result
    from ..spec.errors import did_you_mean

    if args.kind not in PLOTS:
        error(f"--kind: unknown figure {args.kind!r} (known: {', '.join(PLOTS)}){did_you_mean(args.kind, PLOTS)}")
        return EXIT_USAGE
    out = Path(args.out) if args.out else Path(args.dir) / f"figure-{args.kind}.png"
    if out.suffix.lstrip(".").lower() not in FORMATS:
        error(f"--out: expected a file ending in .png, .pdf or .svg, got {str(out)!r}")
        return EXIT_USAGE
    if args.out is not None and out.exists() and not args.force:
        error(f"--out: {out} exists (pass --force to replace it)")
        return EXIT_USAGE
    try:
        size = _size(args.size)
    except ValueError as e:
        error(str(e))
        return EXIT_USAGE
    fig = Result.load(args.dir).plot(args.kind)
    if size is not None:
        fig.set_size_inches(*size)
    save_figure(fig, out, dpi=args.dpi)
    print(f"figure: {out}")
    return EXIT_OK


def _stem(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label.split(" (")[0]).strip("-") or "x"
