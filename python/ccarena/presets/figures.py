"""Drawing the papers' figures: lines with 95 % bars over repeats, ensembles over time, per-flow traces."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["MIN_REPEATS_FOR_CI", "curves", "ensemble", "new_figure", "traces"]

MIN_REPEATS_FOR_CI = 5
"""Fewer repeats of a point than this are drawn run by run, without a confidence interval."""


def new_figure(panels: int, width: float = 5.0, height: float = 3.6, sharey: bool = True) -> tuple[Any, list[Any]]:
    """A figure of ``panels`` axes side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, panels, figsize=(width * panels, height), sharey=sharey, squeeze=False)
    return fig, list(axes[0])


def _label(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def curves(
    df: pd.DataFrame,
    x: str,
    y: str,
    series: str | None,
    *,
    panels: str | None = None,
    xlabel: str,
    ylabel: str,
    scale_x: float = 1.0,
    scale_y: float = 1.0,
    logx: bool = False,
    panel_title: Callable[[Any], str] = _label,
    series_label: Callable[[Any], str] = _label,
    ylim: tuple[float, float] | None = None,
) -> Any:
    """One panel per value of ``panels``, one line per value of ``series``: the mean of ``y`` over
    the runs at each ``x``. Where those runs are repeats of one point (the catalogue's ``point``)
    and there are at least 5, the mean carries its 95 % Student-t interval; otherwise every run
    is drawn as a dot (runs at other values of another swept parameter are not repeats, and a
    few repeats give no interval worth drawing)."""
    fig, axes = new_figure(1 if panels is None else df[panels].nunique())
    groups = [(None, df)] if panels is None else list(df.groupby(panels, sort=True))
    for ax, (pv, sub) in zip(axes, groups, strict=True):
        lines = [(None, sub)] if series is None else list(sub.groupby(series, sort=False))
        for i, (sv, ss) in enumerate(lines):
            xs, ms, cis = [], [], []
            for xv, pts in ss.groupby(x, sort=True):
                vals = [float(v) * scale_y for v in pts[y].tolist()]
                m, ci, n = mean_ci(vals)
                repeats = "point" not in pts.columns or pts["point"].nunique() == 1
                xs.append(float(xv) * scale_x)
                ms.append(m)
                cis.append(ci if repeats and n >= MIN_REPEATS_FOR_CI and not math.isnan(ci) else 0.0)
                if not (repeats and n >= MIN_REPEATS_FOR_CI):
                    ax.plot([float(xv) * scale_x] * len(vals), vals, ".", color=f"C{i}", ms=4, alpha=0.6)
            ax.errorbar(
                xs, ms, yerr=cis, marker="o", capsize=3, color=f"C{i}", label=None if sv is None else series_label(sv)
            )
        if pv is not None:
            ax.set_title(panel_title(pv))
        ax.set_xlabel(xlabel)
        if logx:
            ax.set_xscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.grid(True, alpha=0.3)
        if series is not None:
            ax.legend(fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def ensemble(
    c: Campaign,
    key: str,
    label: Callable[[Any], str],
    *,
    ylabel: str,
    column: str = "rate_bps",
    flow_label: Callable[[Any], str] = lambda f: f"flow {f}",
) -> Any:
    """The ensemble figure of Leith, Shorten and McCullagh (PFLDnet 2007): one panel per value of
    the swept ``key``, each flow's ``column`` against time averaged over the repeats. With at least
    5 repeats the mean carries its 95 % band, clipped to what the link can carry (0 to the
    bottleneck's rate); with fewer, every run is drawn as a thin line under the mean."""
    from .measures import column as catalogue_column

    runs = c.runs[c.runs["status"] == "ok"]
    col = catalogue_column(runs, key)
    ts = c.query(f'SELECT run_id, flow, time_s, "{column}" AS v FROM flows ORDER BY run_id, flow, time_s')
    ts = ts.merge(runs[list(dict.fromkeys(["run_id", "point", col, "bottleneck.rate_bps"]))], on="run_id")
    points = list(ts.groupby("point", sort=True))
    fig, axes = new_figure(len(points), width=5.5)
    for ax, (_, sub) in zip(axes, points, strict=True):
        cap = float(sub["bottleneck.rate_bps"].max())
        n = sub["run_id"].nunique()
        for f, fl in sub.groupby("flow", sort=True):
            color = f"C{int(f) % 10}"
            if n < MIN_REPEATS_FOR_CI:
                for _, one in fl.groupby("run_id"):
                    ax.plot(one["time_s"], one["v"] * 1e-6, lw=0.4, alpha=0.5, color=color)
            steps = [(t, mean_ci(g.tolist())) for t, g in fl.groupby("time_s", sort=True)["v"]]
            times = [t for t, _ in steps]
            ax.plot(times, [m * 1e-6 for _, (m, _, _) in steps], lw=1.0, color=color, label=flow_label(f))
            if n >= MIN_REPEATS_FOR_CI:
                half = [0.0 if math.isnan(h) else h for _, (_, h, _) in steps]
                lo = [max(0.0, m - h) * 1e-6 for (_, (m, _, _)), h in zip(steps, half, strict=True)]
                hi = [min(cap, m + h) * 1e-6 for (_, (m, _, _)), h in zip(steps, half, strict=True)]
                ax.fill_between(times, lo, hi, alpha=0.25, color=color)
        what = f"mean of {n} runs, 95 % band" if n >= MIN_REPEATS_FOR_CI else f"{n} runs and their mean"
        ax.set_title(f"{label(sub[col].iloc[0])} ({what})", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylim(0, cap * 1e-6 * 1.02)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def traces(
    panels: Sequence[tuple[str, pd.DataFrame]],
    *,
    ylabel: str,
    scale_y: float = 1e-6,
    band: bool = False,
    line_label: Callable[[Any], str] = lambda f: f"flow {f}",
) -> Any:
    """One panel per (title, data): a line per flow of ``mean`` against ``time_s`` (with the
    ``lo``–``hi`` band when ``band``)."""
    fig, axes = new_figure(len(panels), width=5.5)
    for ax, (title, df) in zip(axes, panels, strict=True):
        for f, sub in df.groupby("flow", sort=True):
            sub = sub.sort_values("time_s")
            ax.plot(sub["time_s"], sub["mean"] * scale_y, lw=0.9, label=line_label(f))
            if band:
                ax.fill_between(sub["time_s"], sub["lo"] * scale_y, sub["hi"] * scale_y, alpha=0.25)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig
