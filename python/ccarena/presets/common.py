"""What the papers' presets share: the citations, table helpers and the values' JSON form."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .figures import MIN_REPEATS_FOR_CI, new_figure
from .measures import column

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = [
    "LEE",
    "LEITH",
    "LIN",
    "MBPS",
    "RHEE",
    "RHEE_XU",
    "bars",
    "buffer_label",
    "cc_col",
    "mean_where",
    "ok_runs",
    "percent_bdp",
    "records",
    "rounded",
    "second_half_s",
    "share_curves",
]

RHEE_XU = 'I. Rhee and L. Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk)'
LEITH = 'D. J. Leith, R. N. Shorten and G. McCullagh, "Experimental evaluation of Cubic TCP", PFLDnet 2007 (slides)'
RHEE = "I. Rhee, \"Rebuttal to 'Experimental Evaluation of Cubic-TCP' by Leith, Shorten and McCullagh\", 2007"
LEE = 'J. W. Lee and G. Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", MIT 6.829, 2002 (talk)'
LIN = 'Z. Lin, "Cubic vs BBR in the cloud", CSE 222A project report, 2024'

MBPS = 1e-6


def rounded(x: Any, digits: int = 6) -> Any:
    """A value for the stored JSON: floats to ``digits`` significant digits (NaN and infinities as
    None), the rest unchanged; lists and dicts element by element."""
    if isinstance(x, Mapping):
        return {str(k): rounded(v, digits) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [rounded(v, digits) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def records(df: pd.DataFrame, columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """Rows of ``df`` as JSON records: ``columns`` maps each record key to the frame's column (a
    catalogue prefix such as ``flows[0].cc`` finds ``flows[0].cc``, ``topology.rtt`` finds
    ``topology.rtt_s``)."""
    cols = {k: column(df, v) for k, v in columns.items()}
    return [rounded({k: row[c] for k, c in cols.items()}) for _, row in df.iterrows()]


def mean_where(rows: Iterable[Mapping[str, Any]], key: str, **where: Any) -> float:
    """The mean of ``key`` over the records matching ``where`` (NaN when none match or every value
    is missing)."""
    xs = [
        float(r[key])
        for r in rows
        if all(r.get(k) == v for k, v in where.items()) and r.get(key) is not None and math.isfinite(float(r[key]))
    ]
    return math.fsum(xs) / len(xs) if xs else float("nan")


def cc_col(df: pd.DataFrame, i: int = 0) -> str:
    """The catalogue column of flow group ``i``'s algorithm."""
    return column(df, f"flows[{i}].cc")


def ok_runs(c: Campaign) -> pd.DataFrame:
    """The catalogue's successful runs."""
    return c.runs[c.runs["status"] == "ok"].copy()


def second_half_s(c: Campaign) -> float:
    """The start of the runs' second half, s (the presets' runs share one duration, so the quick
    forms' shorter runs are measured over their second half too); 0 without a successful run."""
    runs = ok_runs(c)
    return float(runs["duration_s"].iloc[0]) / 2 if len(runs) else 0.0


def percent_bdp(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with a ``buffer_pct`` column: the swept buffer in % of the BDP."""
    df = df.copy()
    df["buffer_pct"] = df[column(df, "topology.bottleneck.buffer")] * 100
    return df


def buffer_label(col: str, v: float) -> str:
    """A buffer value for a label: KB (MB from 1 MB) for a byte column, the fraction of the BDP otherwise."""
    if not col.endswith("_bytes"):
        return f"{v:g} BDP"
    return f"{v / 1e6:g} MB" if v >= 1e6 else f"{v / 1000:g} KB"


BAR_LABEL_WIDTH = 14
"""Characters per line of a bar's label: each label wraps to its bar's width."""

BAR_WIDTH_IN = 1.3
"""Inches of figure per bar (at least 4.5 in all), so that wrapped labels never run into each other."""


def bars(df: pd.DataFrame, key: str, col: str, ylabel: str, scale: float = 1.0) -> Any:
    """One bar per value of ``key``: with MIN_REPEATS_FOR_CI (5) or more runs the mean of ``col``
    and its 95 % interval over the runs; with fewer, each run as a dot over the mean (a few runs
    give no interval). Labels wrap at BAR_LABEL_WIDTH characters and the figure widens with the
    number of bars."""
    import textwrap

    from ..analysis.stats import mean_ci

    groups = list(df.groupby(key, sort=False))
    fig, axes = new_figure(1, width=max(4.5, BAR_WIDTH_IN * len(groups)))
    ax = axes[0]
    for i, (_, sub) in enumerate(groups):
        vals = [v * scale for v in sub[col].tolist()]
        m, ci, n = mean_ci(vals)
        ax.bar(i, m, yerr=ci if n >= MIN_REPEATS_FOR_CI and not math.isnan(ci) else None, capsize=4, color=f"C{i}")
        if n < MIN_REPEATS_FOR_CI:
            ax.plot([i] * len(vals), vals, "k.", ms=5)
    ax.set_xticks(range(len(groups)), [textwrap.fill(str(k), BAR_LABEL_WIDTH) for k, _ in groups])
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def share_curves(df: pd.DataFrame, ylabel: str) -> Any:
    """Standard TCP's share (column ``tcp_share``) against the bottleneck's rate, one line per
    ``algorithm``, one panel per RTT: the TCP-friendliness figure of Rhee and Xu (2005) and of
    Leith et al. (2007)."""
    from .figures import curves

    return curves(
        df,
        column(df, "topology.bottleneck.rate"),
        "tcp_share",
        "algorithm",
        panels=column(df, "topology.rtt"),
        xlabel="bottleneck (Mbit/s)",
        ylabel=ylabel,
        scale_x=MBPS,
        logx=True,
        ylim=(0, 1.0),
        panel_title=lambda v: f"RTT {v * 1e3:g} ms",
    )


def sorted_unique(xs: Sequence[Any]) -> list[Any]:
    return sorted(set(xs))
