"""Drawing the papers' figures: lines with 95 % bars over repeats, ensembles over time, per-flow traces."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["curves", "new_figure", "traces"]


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
    the runs at each ``x`` with its 95 % Student-t interval as error bars."""
    fig, axes = new_figure(1 if panels is None else df[panels].nunique())
    groups = [(None, df)] if panels is None else list(df.groupby(panels, sort=True))
    for ax, (pv, sub) in zip(axes, groups, strict=True):
        lines = [(None, sub)] if series is None else list(sub.groupby(series, sort=False))
        for sv, ss in lines:
            xs, ms, cis = [], [], []
            for xv, pts in ss.groupby(x, sort=True):
                m, ci, _ = mean_ci([float(v) * scale_y for v in pts[y].tolist()])
                xs.append(float(xv) * scale_x)
                ms.append(m)
                cis.append(0.0 if math.isnan(ci) else ci)
            ax.errorbar(xs, ms, yerr=cis, marker="o", capsize=3, label=None if sv is None else series_label(sv))
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
