"""Drawing the papers' figures: lines with 95 % bars over repeats, ensembles over time, per-flow traces.

:func:`curves` and :func:`new_figure` are the campaign figures' own (:mod:`ccarena.campaign.figures`):
presets and ``ccarena plot`` draw through the same code and the same rule for intervals."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci
from ..campaign.figures import MIN_REPEATS_FOR_CI, curves, new_figure

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["MIN_REPEATS_FOR_CI", "curves", "ensemble", "new_figure", "traces"]

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
