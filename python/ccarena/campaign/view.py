"""What a campaign shows as HTML: its grid and its metrics per point (and per flow group) over repeats.

Used by the report and by a notebook (``Campaign._repr_html_``). Each cell
is the mean over the runs of one point and, from two repeats on, the half
width of its 95 % Student-t interval; n is the number of runs.
"""

from __future__ import annotations

import math
from typing import Any

from ..analysis.html import esc, table

__all__ = ["grid_table", "metric_table", "summary_html"]


def _cell(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(ci):
        return f"{mean:.6g}"
    # Below a millionth of the mean the half width is rounding in the runs' values: the repeats agree.
    return f"{mean:.6g} ± {0.0 if ci <= 1e-6 * abs(mean) else ci:.3g}"


def metric_table(c: Any, per: str, metrics: tuple[str, ...]) -> str:
    """The metrics per point (``per="run"``) or per point and flow group (``per="group"``) of Campaign ``c``."""
    available = [m for m in metrics if m in c.table(per).columns]
    if not available:
        return "<p>No finished runs.</p>"
    agg = c.aggregate(metrics=available, per=per)
    if agg.empty:
        return "<p>No finished runs.</p>"
    keys = [k for k in agg.columns if k != "points" and not k.endswith(("_mean", "_ci", "_n"))]
    head = [*keys, "n", *(f"{m} (mean ± 95% CI)" for m in available)]
    rows = []
    for _, r in agg.iterrows():
        cells: list[Any] = [r[k] for k in keys]
        cells.append(max((int(r[f"{m}_n"]) for m in available), default=0))
        cells += [_cell(float(r[f"{m}_mean"]), float(r[f"{m}_ci"])) for m in available]
        rows.append(cells)
    return table(head, rows, keys=len(keys), css=f"campaign-metrics per-{per}")


def grid_table(c: Any) -> str:
    """Runs, failures, points, repeats, baselines and swept columns of Campaign ``c``."""
    g = c.header["grid"]
    runs = c.runs
    failed = int((runs["status"] != "ok").sum())
    rows = [("runs", len(runs)), ("failed", failed), ("points", len(g["points"])), ("repeat", g["repeat"]),
            ("baseline", ", ".join(g["baseline"]) or "-"), ("swept", ", ".join(c.swept) or "-")]
    return table(["", ""], rows, keys=1, css="grid")


def summary_html(c: Any, run_metrics: tuple[str, ...], group_metrics: tuple[str, ...]) -> str:
    """The grid and the metrics per point and per flow group: a notebook's view of Campaign ``c``."""
    head = f"<h3>{esc(c.header.get('name'))} (campaign at {esc(c.path)})</h3>"
    return head + grid_table(c) + metric_table(c, "run", run_metrics) + metric_table(c, "group", group_metrics)
