"""A campaign's figures: a metric against a swept column, one line per algorithm, intervals over repeats.

:func:`plot` draws what a paper's figure shows, from any of the catalogue's
three tables (runs, run_groups, run_flows): ``y`` against ``x``, a line per
value of ``hue`` and a panel per value of ``col``. The statistics follow one
rule, shared with the presets' figures (:func:`curves`): a mean carries its
95 % interval (Student t over the runs) only when the runs at that position
are at least :data:`MIN_REPEATS_FOR_CI` repeats of one point; otherwise every
run is drawn as a dot beside the mean. A swept column that is neither
``x``, ``hue`` nor ``col`` but takes several values is made the hue (or the
panels) rather than pooled, since runs at different values of it are not
repeats. Axes are in the units people read: rates in Mbit/s, times below a
second in ms, buffers in BDP or packets, as the column's unit suffix says.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MIN_REPEATS_FOR_CI", "axis_label", "curves", "new_figure", "plot", "point_keys", "save_figure"]

MIN_REPEATS_FOR_CI = 5
"""Fewer repeats of a point than this are drawn run by run, without a confidence interval."""

LABEL_WIDTH = 40
"""Characters per line of a panel title or legend entry that names a non-numeric value."""

FORMATS = ("png", "pdf", "svg")
"""What :func:`save_figure` writes, by the file's suffix."""

_UNITS: tuple[tuple[str, str, float], ...] = (
    ("_bps", "Mbit/s", 1e-6),
    ("_bdp", "BDP", 1.0),
    ("_pkts", "packets", 1.0),
    ("_bytes", "KB", 1e-3),
    ("_ms", "ms", 1.0),
    ("_us", "ms", 1e-3),
)


def _name(column: str) -> str:
    """A catalogue column's last field, with the flow group it belongs to: ``topology.rtt_s`` → ``rtt_s``,
    ``flows[1].cc`` → ``flows[1].cc`` (the other groups may run something else)."""
    head, _, name = column.rpartition(".")
    group = head.rpartition(".")[2]
    return f"{group}.{name}" if group.startswith("flows[") else name


def axis_label(column: str, values: Sequence[float] = ()) -> tuple[str, float]:
    """(label, scale) of a catalogue column: ``topology.rtt_s`` with values below 1 → ("rtt (ms)", 1000),
    ``flows[1].rtt_s`` → ("flows[1].rtt (ms)", 1000)."""
    name = _name(column)
    for suffix, unit, scale in _UNITS:
        if name.endswith(suffix):
            return f"{_words(name[: -len(suffix)])} ({unit})", scale
    if name.endswith("_s"):
        finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
        if finite and max(finite) < 1.0:
            return f"{_words(name[:-2])} (ms)", 1e3
        return f"{_words(name[:-2])} (s)", 1.0
    return _words(name), 1.0


def _value_label(column: str | None, v: Any) -> str:
    """``buffer = 0.5 BDP`` for the value 0.5 of ``topology.bottleneck.buffer_bdp``."""
    if column is None:
        return _label(v)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        # A table of parameters can be long: wrapped, it keeps its panel or legend from pushing the
        # axes off the figure.
        return textwrap.fill(f"{_words(_name(column))} = {v}", LABEL_WIDTH)
    label, scale = axis_label(column, [v])
    if label.endswith(")") and " (" in label:
        name, unit = label[:-1].split(" (", 1)
        return f"{name} = {_label(float(v) * scale)} {unit}"
    return f"{label} = {_label(v)}"


def _words(name: str) -> str:
    return name.replace("_", " ")


def new_figure(panels: int, width: float = 5.0, height: float = 3.6, sharey: bool = True) -> tuple[Any, list[Any]]:
    """A figure of ``panels`` axes side by side (matplotlib's Agg canvas: no display, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * panels, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, panels, sharey=sharey, squeeze=False)
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
    size: tuple[float, float] | None = None,
    level: float = 0.95,
) -> Any:
    """One panel per value of ``panels``, one line per value of ``series``: the mean of ``y`` over
    the runs at each ``x``. Where those runs are repeats of one point (the catalogue's ``point``
    and ``baseline``) and there are at least 5, the mean carries its ``level`` Student-t interval;
    otherwise every run is drawn as a dot (runs at other values of another swept parameter are
    not repeats, and a few repeats give no interval worth drawing). ``df`` has one row per run."""
    n_panels = 1 if panels is None else df[panels].nunique(dropna=False)
    if size is None:
        fig, axes = new_figure(n_panels)
    else:
        fig, axes = new_figure(n_panels, width=size[0] / n_panels, height=size[1])
    groups = [(None, df)] if panels is None else list(df.groupby(panels, sort=True, dropna=False))
    categorical = df[x].dtype.kind not in "iufb"
    categories = sorted({str(v) for v in df[x].tolist()}) if categorical else []

    def position(v: Any) -> float:
        return float(categories.index(str(v))) if categorical else float(v) * scale_x

    for ax, (pv, sub) in zip(axes, groups, strict=True):
        lines = [(None, sub)] if series is None else list(sub.groupby(series, sort=False, dropna=False))
        for i, (sv, ss) in enumerate(lines):
            xs, ms, cis = [], [], []
            for xv, pts in ss.groupby(x, sort=True):
                vals = [float(v) * scale_y for v in pts[y].tolist() if v is not None and math.isfinite(float(v))]
                m, ci, n = mean_ci(vals, level)
                repeats = _one_point(pts)
                xs.append(position(xv))
                ms.append(m)
                cis.append(ci if repeats and n >= MIN_REPEATS_FOR_CI and not math.isnan(ci) else 0.0)
                if not (repeats and n >= MIN_REPEATS_FOR_CI):
                    ax.plot([position(xv)] * len(vals), vals, ".", color=f"C{i % 10}", ms=4, alpha=0.6)
            label = None if sv is None else series_label(sv)
            yerr = cis if any(h > 0 for h in cis) else None
            ax.errorbar(xs, ms, yerr=yerr, marker="o", capsize=3, color=f"C{i % 10}", label=label)
        if pv is not None:
            ax.set_title(panel_title(pv))
        ax.set_xlabel(xlabel)
        if categorical:
            ax.set_xticks(range(len(categories)), categories)
        if logx:
            ax.set_xscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.grid(True, alpha=0.3)
        if series is not None:
            ax.legend(fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def _one_point(rows: pd.DataFrame) -> bool:
    """Whether the runs of ``rows`` are repeats of one point (and one baseline)."""
    if "point" not in rows.columns:
        return True
    return len(point_keys(rows)) == 1


def point_keys(rows: pd.DataFrame) -> set[tuple[int, str]]:
    """The (point, baseline) pairs of ``rows``: runs sharing one are repeats of one experiment."""
    baselines = rows["baseline"].tolist() if "baseline" in rows.columns else [None] * len(rows)
    return {(int(p), b if isinstance(b, str) else "") for p, b in zip(rows["point"].tolist(), baselines, strict=True)}


def per_run(df: pd.DataFrame, keys: Sequence[str], y: str) -> pd.DataFrame:
    """One row per run and ``keys``: the mean of ``y`` over the run's rows (two CUBIC flows of a run are one value)."""
    cols = list(dict.fromkeys([*keys, "run_id", "point", "baseline"]))
    out = df.groupby(cols, dropna=False, sort=False)[y].mean().reset_index()
    return out


def _spread_columns(df: pd.DataFrame, swept: Sequence[str], used: set[str]) -> list[str]:
    """Swept columns (and baseline) not among ``used`` that take more than one value in ``df``."""
    cols = [c for c in [*swept, "baseline"] if c in df.columns and c not in used]
    return [c for c in cols if df[c].astype(str).nunique() > 1]


def plot(
    c: Any,
    y: str,
    x: str | None = None,
    hue: str | None = None,
    col: str | None = None,
    *,
    per: str | None = None,
    level: float = 0.95,
    size: tuple[float, float] | None = None,
    style: str | None = None,
    logx: bool = False,
    title: str | None = None,
    where: Mapping[str, Sequence[Any]] | None = None,
) -> Any:
    """``y`` against ``x``, a line per ``hue``, a panel per ``col`` of :class:`~ccarena.Campaign` ``c``.

    ``per`` picks the table (``run``, ``group``, ``flow``, ``link``; default: the
    coarsest that has every column named). ``x`` defaults to the first
    numeric swept column; ``hue`` to ``cc`` for groups and flows. Raises
    :class:`KeyError` naming an unknown column (with the closest name) and
    :class:`ValueError` when a swept column would be pooled and no hue or
    panel is left for it. ``where`` keeps the rows whose column takes one
    of the values given (``{"name": ["hop1", "hop2"]}``: two links).
    """
    named = [v for v in (y, x, hue, col) if v is not None]
    per = per or c.level_of(named)
    df = c.table(per)
    from ..spec.errors import did_you_mean

    for v in [*named, *(where or {})]:
        if v not in df.columns:
            raise KeyError(f"no column {v!r} in the {per} table{did_you_mean(v, df.columns)}")
    for k, values in (where or {}).items():
        df = df[df[k].isin(list(values))]
    if x is None:
        numeric = [s for s in c.swept if s in df.columns and df[s].dtype.kind in "if" and df[s].nunique() > 1]
        if not numeric:
            raise ValueError("x: the campaign sweeps no numeric column; name the column to draw against")
        x = numeric[0]
    if hue is None and per in ("group", "flow") and x != "cc" and col != "cc" and df["cc"].nunique() > 1:
        hue = "cc"
    if hue is None and per == "link" and col != "name":
        hue = "name"
    used = {v for v in (x, hue, col) if v is not None}
    for extra in _spread_columns(df, c.swept, used):
        if hue is None:
            hue = extra
        elif col is None:
            col = extra
        else:
            raise ValueError(
                f"{extra} takes several values and is neither x, hue nor col: its runs are not repeats; "
                "draw it as hue or col, or select one of its values"
            )
        used.add(extra)
    runs = per_run(df, [v for v in (x, hue, col) if v is not None], y)
    xlabel, sx = axis_label(x, runs[x].tolist())
    ylabel, sy = axis_label(y, runs[y].tolist())
    import matplotlib.style

    with matplotlib.style.context(style or "default"):
        fig = curves(
            runs,
            x,
            y,
            hue,
            panels=col,
            xlabel=xlabel,
            ylabel=ylabel,
            scale_x=sx,
            scale_y=sy,
            logx=logx,
            size=size,
            level=level,
            series_label=lambda v: _value_label(hue, v) if hue not in ("cc", "baseline") else _label(v),
            panel_title=lambda v: _value_label(col, v),
        )
    n = runs.groupby([v for v in (x, hue, col) if v is not None], dropna=False)["run_id"].nunique()
    lo, hi = int(n.min()), int(n.max())
    runs_txt = f"{lo} runs" if lo == hi else f"{lo}-{hi} runs"
    what = (
        f"mean and {level * 100:g} % interval over {runs_txt} per point"
        if lo >= MIN_REPEATS_FOR_CI
        else f"mean and each run (dots) of {runs_txt} per point; intervals need {MIN_REPEATS_FOR_CI} repeats"
    )
    fig.suptitle(title or f"{c.header.get('name')}\n{what}", fontsize=9)
    fig.tight_layout()
    return fig


def save_figure(fig: Any, path: str | Path, *, dpi: int = 150) -> Path:
    """Writes ``fig`` as PNG, PDF or SVG by ``path``'s suffix (atomically: beside it, then renamed)."""
    import os

    p = Path(path)
    fmt = p.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"--out: expected a file ending in {', '.join('.' + f for f in FORMATS)}, got {p.name!r}")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
    try:
        fig.savefig(tmp, format=fmt, dpi=dpi, metadata={"Software": None} if fmt == "png" else None)
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p
