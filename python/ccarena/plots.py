"""Plots: a registry of named recipes.

A recipe is a list of panels stacked over a shared time axis. Each panel is
a function that draws one quantity of a :class:`~ccarena.results.Result`
into a matplotlib ``Axes``. ``figure(result, "overview")`` builds a figure
from a recipe and ``save(result, path)`` writes it; ``PLOTS`` lists the
recipes by name:

* ``overview`` — rate at the bottleneck (with background traffic, if any,
  as a dotted line), cwnd, and queue backlog;
* ``rate``, ``cwnd``, ``queue``, ``rtt`` — one panel each;
* ``rate_cwnd`` — rate and cwnd side by side in time (the rate is what
  flows get; the window is only what the sender allows).

Rates are measured at the bottleneck (bytes of each flow leaving the
queue per interval), never derived from the window. Figures are drawn with
matplotlib's Agg renderer and need no display.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from .results import Result

__all__ = ["PLOTS", "Recipe", "cwnd_panel", "figure", "queue_panel", "rate_panel", "register", "rtt_panel", "save"]

Panel = Callable[["Result", Axes], None]

MAX_LEGEND_FLOWS = 12


@dataclass(frozen=True)
class Recipe:
    """A named figure: panels drawn top to bottom over a shared time axis."""

    name: str
    description: str
    panels: tuple[Panel, ...]


PLOTS: dict[str, Recipe] = {}
"""All registered recipes by name."""


def register(name: str, description: str, panels: Sequence[Panel]) -> Recipe:
    """Adds a recipe to :data:`PLOTS` (replacing one of the same name) and returns it."""
    recipe = Recipe(name, description, tuple(panels))
    PLOTS[name] = recipe
    return recipe


def _series(result: Result, column: str, *, only_running: bool = False) -> list[tuple[str, Any, Any, int]]:
    """(label, time_s, values, colour index) per line: one per flow, or per group when there are many flows.

    With ``only_running`` the rows before a flow starts and after it ends
    are left out (its sender state means nothing there).
    """
    df = result.flows
    if df.empty:
        return []
    flows = result.summary["flows"]
    if only_running:
        start = np.asarray([f["start_s"] for f in flows], dtype=np.float64)
        end = np.asarray([f["end_s"] for f in flows], dtype=np.float64)
        t = df["time_s"].to_numpy()
        ids = df["flow"].to_numpy(np.int64)
        interval = float(result.summary["interval_s"])
        df = df[(t > start[ids]) & (t - interval < end[ids])]
    out: list[tuple[str, Any, Any, int]] = []
    if len(flows) <= MAX_LEGEND_FLOWS:
        for f in flows:
            sub = df[df["flow"] == f["id"]]
            out.append((f"flow {f['id']} ({f['cc']})", sub["time_s"].to_numpy(), sub[column].to_numpy(float), f["id"]))
        return out
    # Many flows: one line per group, the mean over its flows.
    for g in sorted({int(f["group"]) for f in flows}):
        sub = df[df["group"] == g]
        mean = sub.groupby("t_ns", sort=True)[column].mean()
        cc = next(f["cc"] for f in flows if f["group"] == g)
        n = sum(1 for f in flows if f["group"] == g)
        t = mean.index.to_numpy(np.float64) / 1e9
        out.append((f"group {g} ({cc}, mean of {n})", t, mean.to_numpy(float), g))
    return out


def _bin_edges(result: Result, t: Any) -> Any:
    """Edges of the intervals that end at the times ``t`` (seconds)."""
    interval = float(result.summary["interval_s"])
    first = np.floor(np.round(t[0] / interval, 9) - 1e-9) * interval if len(t) else 0.0
    return np.concatenate([[max(first, 0.0)], t])


def _colour(i: int) -> str:
    return f"C{i % 10}"


def rate_panel(result: Result, ax: Axes) -> None:
    """Per-flow rate at the bottleneck, Mbit/s, with background traffic dotted and the link capacity dashed."""
    for label, t, v, c in _series(result, "rate_bps"):
        if len(t):
            ax.stairs(v / 1e6, _bin_edges(result, t), baseline=None, label=label, color=_colour(c), linewidth=1.0)
    q = result.queue
    if "background_bytes" in q.columns and len(q) and q["background_bytes"].to_numpy().any():
        # Background traffic (TCP transfers and UDP) leaving the bottleneck, as a rate.
        t = q["time_s"].to_numpy(np.float64)
        edges = _bin_edges(result, t)
        bg = q["background_bytes"].to_numpy(np.float64) * 8.0 / np.diff(edges)
        ax.stairs(bg / 1e6, edges, baseline=None, label="background", color="0.55", linewidth=0.8, linestyle=":")
    cap = result.summary["bottleneck"]["rate_bps"] / 1e6
    ax.axhline(cap, color="0.4", linestyle="--", linewidth=0.8, label="capacity")
    ax.set_ylabel("rate at bottleneck\n(Mbit/s)")
    ax.set_ylim(bottom=0)


def cwnd_panel(result: Result, ax: Axes) -> None:
    """Per-flow congestion window, packets."""
    for label, t, v, c in _series(result, "cwnd_pkts", only_running=True):
        ax.plot(t, v, label=label, color=_colour(c), linewidth=1.0)
    ax.set_ylabel("cwnd\n(packets)")
    ax.set_ylim(bottom=0)


def rtt_panel(result: Result, ax: Axes) -> None:
    """Per-flow smoothed RTT, milliseconds."""
    for label, t, v, c in _series(result, "srtt_us", only_running=True):
        ax.plot(t, v / 1e3, label=label, color=_colour(c), linewidth=1.0)
    ax.set_ylabel("srtt\n(ms)")
    ax.set_ylim(bottom=0)


def queue_panel(result: Result, ax: Axes) -> None:
    """Bottleneck backlog, packets, with the buffer limit dashed when it is in packets."""
    q = result.queue
    if not q.empty:
        ax.plot(q["time_s"].to_numpy(), q["backlog_pkts"].to_numpy(float), color="0.2", linewidth=1.0, label="backlog")
    limit = result.summary["bottleneck"].get("buffer_pkts")
    if limit is not None:
        ax.axhline(limit, color="0.4", linestyle="--", linewidth=0.8, label="buffer")
    ax.set_ylabel("queue\n(packets)")
    ax.set_ylim(bottom=0)


register("overview", "rate at the bottleneck, cwnd and queue backlog over time", [rate_panel, cwnd_panel, queue_panel])
register("rate", "per-flow rate at the bottleneck over time", [rate_panel])
register("cwnd", "per-flow congestion window over time", [cwnd_panel])
register("queue", "bottleneck queue backlog over time", [queue_panel])
register("rtt", "per-flow smoothed RTT over time", [rtt_panel])
register("rate_cwnd", "rate at the bottleneck and cwnd over time", [rate_panel, cwnd_panel])


def figure(result: Result, kind: str = "overview") -> Figure:
    """Draws the recipe ``kind`` for one result and returns the figure."""
    if kind not in PLOTS:
        raise KeyError(f'unknown plot "{kind}" (known: {", ".join(sorted(PLOTS))})')
    recipe = PLOTS[kind]
    n = len(recipe.panels)
    fig = Figure(figsize=(10, 1.0 + 2.4 * n), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for panel, ax in zip(recipe.panels, axes, strict=True):
        panel(result, ax)
        ax.grid(True, linewidth=0.3, alpha=0.6)
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(0, result.summary["duration_s"])
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    s = result.summary
    fig.suptitle(f"{s['name']} (seed {s['seed']})", fontsize="medium")
    return fig


def save(result: Result, path: str | Path, kind: str = "overview", dpi: int = 120) -> Path:
    """Draws the recipe ``kind`` and writes it to ``path`` (PNG, SVG or PDF by extension)."""
    fig = figure(result, kind)
    fig.savefig(path, dpi=dpi)
    return Path(path)
