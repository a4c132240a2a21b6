"""What a campaign shows as HTML: its grid and its metrics per point (and per flow group) over repeats.

Used by the report and by a notebook (``Campaign._repr_html_``). Each cell
is the mean over the runs of one point and, from two repeats on, the half
width of its 95 % Student-t interval; n is the number of runs.
"""

from __future__ import annotations

import math
from typing import Any

from ..analysis.html import esc, table

__all__ = ["IDENTICAL_REPEATS", "agreeing", "grid_table", "metric_table", "summary_html"]

IDENTICAL_REPEATS = (
    "is a point whose repeats all gave the same value (repeats of a run that draws no random numbers always do; "
    "`ccarena sweep` names such points)"
)
"""What an interval of 0 over several repeats means, said under a table that shows one."""


def _agree(mean: float, ci: float) -> bool:
    """Below a millionth of the mean the half width is rounding in the runs' values: the repeats agree."""
    return not math.isnan(ci) and ci <= 1e-6 * abs(mean)


def agreeing(agg: Any, metrics: list[str]) -> list[str]:
    """The metrics of an aggregate table (``Campaign.aggregate``) with a point whose repeats agree."""

    def agree(m: str) -> bool:
        rows = zip(agg[f"{m}_mean"], agg[f"{m}_ci"], agg[f"{m}_n"], strict=True)
        return any(n > 1 and _agree(float(mean), float(ci)) for mean, ci, n in rows)

    return [m for m in metrics if agree(m)]


def _cell(mean: float, ci: float) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(ci):
        return f"{mean:.6g}"
    return f"{mean:.6g} ± {0.0 if _agree(mean, ci) else ci:.3g}"


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
    agreed = agreeing(agg, available)
    note = f'<p class="note">An interval of 0 ({esc(", ".join(agreed))}) {esc(IDENTICAL_REPEATS)}.</p>'
    return table(head, rows, keys=len(keys), css=f"campaign-metrics per-{per}") + (note if agreed else "")


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
