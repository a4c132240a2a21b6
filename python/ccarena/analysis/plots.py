"""Plots: a registry of named recipes.

A recipe is a list of panels stacked over a shared time axis. Each panel is
a function that draws one quantity of a run (a :class:`RunData`, such as
:class:`ccarena.Result`) into a matplotlib ``Axes``. ``figure(result, "overview")`` builds a figure
from a recipe and ``save(result, path)`` writes it; ``PLOTS`` lists the
recipes by name:

* ``overview`` — rate at the bottleneck (with background traffic, if any,
  as a dotted line), cwnd, and queue backlog;
* ``rate``, ``cwnd``, ``queue``, ``rtt`` — one panel each;
* ``rate_cwnd`` — rate and cwnd side by side in time (the rate is what
  flows get; the window is only what the sender allows).

Series longer than :data:`MAX_POINTS` are thinned for drawing only: rates
are merged into means over longer intervals, windows and queues into the
minimum and maximum of each bucket.

Rates are measured at the bottleneck (bytes of each flow leaving the
queue per interval), never derived from the window. Figures are drawn with
matplotlib's Agg renderer and need no display.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "PLOTS",
    "Recipe",
    "RunData",
    "column",
    "cwnd_panel",
    "figure",
    "queue_panel",
    "rate_panel",
    "register",
    "rtt_panel",
    "save",
    "thin_line",
    "thin_steps",
]


class RunData(Protocol):
    """What a plot reads of a run: its summary and its traces as Arrow tables."""

    @property
    def summary(self) -> dict[str, Any]: ...

    @property
    def flows_arrow(self) -> Any: ...

    @property
    def queue_arrow(self) -> Any: ...


FLOW_COLUMNS = ("t_ns", "time_s", "flow", "group", "rate_bps", "cwnd_pkts", "srtt_us")
QUEUE_COLUMNS = ("t_ns", "time_s", "backlog_pkts", "background_bytes", "capacity_bytes")
MAX_TRACE_ROWS = 2_000_000
"""Rows of a trace read for a figure: a longer trace is read every k-th interval."""


@dataclass(frozen=True)
class PlotData:
    """What the figures draw of a saved run, read from its folder with bounded memory:
    the summary and the trace columns the panels use, every k-th interval of a
    trace longer than :data:`MAX_TRACE_ROWS` rows (so a rate drawn over k
    intervals is the rate of one of them)."""

    summary: dict[str, Any]
    flows_arrow: Any
    queue_arrow: Any

    @classmethod
    def read(cls, summary: dict[str, Any], folder: Path) -> PlotData:
        interval_ns = round(float(summary["interval_s"]) * 1e9)
        flows = _read_thinned(folder / "flows.parquet", FLOW_COLUMNS, interval_ns)
        queue = _read_thinned(folder / "queue.parquet", QUEUE_COLUMNS, interval_ns)
        return cls(summary, flows, queue)


def _read_thinned(path: Path, columns: Sequence[str], interval_ns: int, max_rows: int = MAX_TRACE_ROWS) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    cols = [c for c in columns if c in f.schema_arrow.names]
    if f.metadata.num_rows <= max_rows:
        return f.read(columns=cols)
    k = -(-f.metadata.num_rows // max_rows)
    parts = []
    for batch in f.iter_batches(columns=cols, batch_size=1 << 16):
        t = batch.column(cols.index("t_ns")).to_numpy(zero_copy_only=False).astype(np.int64)
        parts.append(batch.filter(pa.array(((t - 1) // max(interval_ns, 1)) % k == 0)))
    return pa.Table.from_batches(parts, schema=f.schema_arrow.select(cols) if not parts else parts[0].schema)


_NUMPY_TYPES = {"double": "<f8", "uint64": "<u8", "uint32": "<u4", "int64": "<i8", "int32": "<i4", "uint8": "u1"}


def column(table: Any, name: str) -> npt.NDArray[Any]:
    """One numeric column of an Arrow table as a numpy array, nulls as NaN.

    Read from the Arrow buffer directly: pyarrow's own ``to_numpy`` imports
    pandas, which would cost more than drawing the figure.
    """
    arr = table.column(name).combine_chunks()
    dtype = np.dtype(_NUMPY_TYPES[str(arr.type)])
    values: npt.NDArray[Any] = np.frombuffer(
        arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize
    )
    if arr.null_count:
        valid = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8), bitorder="little")
        values = np.where(valid[arr.offset : arr.offset + len(arr)].astype(bool), values, np.nan)
    return values


Panel = Callable[[RunData, Axes], None]

MAX_LEGEND_FLOWS = 12
MAX_POINTS = 2000
"""Points per drawn line: longer series are thinned for drawing (the data are never changed)."""


def thin_steps(edges: npt.NDArray[Any], values: npt.NDArray[Any], max_points: int = MAX_POINTS) -> tuple[Any, Any]:
    """Rates over consecutive intervals merged k at a time into the mean rate over the longer interval.

    ``edges`` has one more element than ``values``. Series of at most
    ``max_points`` intervals come back unchanged.
    """
    n = len(values)
    if n <= max_points:
        return edges, values
    k = -(-n // max_points)
    idx = np.arange(0, n, k)
    widths = np.diff(edges)
    merged = np.add.reduceat(values * widths, idx) / np.add.reduceat(widths, idx)
    return np.append(edges[idx], edges[-1]), merged


def thin_line(t: npt.NDArray[Any], values: npt.NDArray[Any], max_points: int = MAX_POINTS) -> tuple[Any, Any]:
    """A sampled line reduced to the minimum and maximum of each bucket, so spikes stay visible."""
    n = len(values)
    if n <= max_points:
        return t, values
    k = -(-n // (max_points // 2))
    idx = np.arange(0, n, k)
    lo, hi = np.minimum.reduceat(values, idx), np.maximum.reduceat(values, idx)
    ends = np.append(idx[1:], n) - 1
    return np.column_stack([t[idx], t[ends]]).ravel(), np.column_stack([lo, hi]).ravel()


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


def _series(result: RunData, name: str, *, only_running: bool = False) -> list[tuple[str, Any, Any, int]]:
    """(label, time_s, values, colour index) per line: one per flow, or per group when there are many flows.

    With ``only_running`` the rows before a flow starts and after it ends
    are left out (its sender state means nothing there).
    """
    table = result.flows_arrow
    if table.num_rows == 0:
        return []
    flows = result.summary["flows"]
    t = column(table, "time_s")
    ids = column(table, "flow").astype(np.int64)
    values = column(table, name).astype(np.float64)
    keep = np.ones(len(t), dtype=bool)
    if only_running:
        start = np.asarray([f["start_s"] for f in flows], dtype=np.float64)
        end = np.asarray([f["end_s"] for f in flows], dtype=np.float64)
        interval = float(result.summary["interval_s"])
        keep = (t > start[ids]) & (t - interval < end[ids])
    out: list[tuple[str, Any, Any, int]] = []
    if len(flows) <= MAX_LEGEND_FLOWS:
        for f in flows:
            sel = keep & (ids == f["flow"])
            out.append((f"flow {f['flow']} ({f['cc']})", t[sel], values[sel], f["flow"]))
        return out
    # Many flows: one line per group, the mean over its flows at each time.
    groups = column(table, "group")
    t_ns = column(table, "t_ns")
    for g in sorted({int(f["group"]) for f in flows}):
        sel = keep & (groups == g)
        times, at = np.unique(t_ns[sel], return_inverse=True)
        mean = np.bincount(at, weights=values[sel]) / np.bincount(at)
        cc = next(f["cc"] for f in flows if f["group"] == g)
        n = sum(1 for f in flows if f["group"] == g)
        out.append((f"group {g} ({cc}, mean of {n})", times.astype(np.float64) / 1e9, mean, g))
    return out


def _bin_edges(result: RunData, t: Any) -> Any:
    """Edges of the intervals that end at the times ``t`` (seconds)."""
    interval = float(result.summary["interval_s"])
    first = np.floor(np.round(t[0] / interval, 9) - 1e-9) * interval if len(t) else 0.0
    return np.concatenate([[max(first, 0.0)], t])


def _colour(i: int) -> str:
    return f"C{i % 10}"


def rate_panel(result: RunData, ax: Axes) -> None:
    """Per-flow rate at the bottleneck, Mbit/s, with background traffic dotted and the link capacity dashed."""
    for label, t, v, c in _series(result, "rate_bps"):
        if len(t):
            edges, rate = thin_steps(_bin_edges(result, t), v)
            ax.stairs(rate / 1e6, edges, baseline=None, label=label, color=_colour(c), linewidth=1.0)
    q = result.queue_arrow
    if "background_bytes" in q.column_names and q.num_rows and column(q, "background_bytes").any():
        # Background traffic (TCP transfers and UDP) leaving the bottleneck, as a rate.
        t = column(q, "time_s").astype(np.float64)
        edges = _bin_edges(result, t)
        edges, bg = thin_steps(edges, column(q, "background_bytes").astype(np.float64) * 8.0 / np.diff(edges))
        ax.stairs(bg / 1e6, edges, baseline=None, label="background", color="0.55", linewidth=0.8, linestyle=":")
    if "capacity_bytes" in q.column_names and q.num_rows:
        # A capacity that changes over time (a rate schedule or a trace): drawn per interval.
        t = column(q, "time_s").astype(np.float64)
        edges = _bin_edges(result, t)
        edges, cap_bps = thin_steps(edges, column(q, "capacity_bytes").astype(np.float64) * 8.0 / np.diff(edges))
        ax.stairs(cap_bps / 1e6, edges, baseline=None, label="capacity", color="0.4", linewidth=0.8, linestyle="--")
    else:
        cap = result.summary["bottleneck"]["rate_bps"] / 1e6
        ax.axhline(cap, color="0.4", linestyle="--", linewidth=0.8, label="capacity")
    ax.set_ylabel("rate at bottleneck\n(Mbit/s)")
    ax.set_ylim(bottom=0)


def cwnd_panel(result: RunData, ax: Axes) -> None:
    """Per-flow congestion window, packets."""
    for label, t, v, c in _series(result, "cwnd_pkts", only_running=True):
        ax.plot(*thin_line(t, v), label=label, color=_colour(c), linewidth=1.0)
    ax.set_ylabel("cwnd\n(packets)")
    ax.set_ylim(bottom=0)


def rtt_panel(result: RunData, ax: Axes) -> None:
    """Per-flow smoothed RTT, milliseconds."""
    for label, t, v, c in _series(result, "srtt_us", only_running=True):
        t, v = thin_line(t, v)
        ax.plot(t, v / 1e3, label=label, color=_colour(c), linewidth=1.0)
    ax.set_ylabel("srtt\n(ms)")
    ax.set_ylim(bottom=0)


def queue_panel(result: RunData, ax: Axes) -> None:
    """Bottleneck backlog, packets, with the buffer limit dashed when it is in packets."""
    q = result.queue_arrow
    if q.num_rows:
        t, backlog = thin_line(column(q, "time_s"), column(q, "backlog_pkts").astype(np.float64))
        ax.plot(t, backlog, color="0.2", linewidth=1.0, label="backlog")
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


def figure(result: RunData, kind: str = "overview") -> Figure:
    """Draws the recipe ``kind`` for one result and returns the figure."""
    if kind not in PLOTS:
        raise KeyError(f'unknown plot "{kind}" (known: {", ".join(sorted(PLOTS))})')
    recipe = PLOTS[kind]
    n = len(recipe.panels)
    height = 1.0 + 2.4 * n
    fig = Figure(figsize=(10, height))
    FigureCanvasAgg(fig)
    # Fixed margins (inches) rather than a layout engine, which would lay the figure out twice.
    fig.subplots_adjust(left=0.09, right=0.78, top=1 - 0.55 / height, bottom=0.6 / height, hspace=0.12)
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


def save(result: RunData, path: str | Path, kind: str = "overview", dpi: int = 120) -> Path:
    """Draws the recipe ``kind`` and writes it to ``path`` (PNG, SVG or PDF by extension).

    PNGs are written with light compression: a little larger, much quicker.
    """
    fig = figure(result, kind)
    png = str(path).lower().endswith(".png")
    fig.savefig(path, dpi=dpi, **({"pil_kwargs": {"compress_level": 1}} if png else {}))
    return Path(path)

