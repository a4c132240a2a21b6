"""The report of a campaign: its grid, metrics with confidence intervals, and their figures."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..campaign import Campaign
from ..campaign.campaign import HEADLINE
from .html import esc, figure, provenance, table

__all__ = ["campaign_sections"]

MAX_TIMESERIES_POINTS = 6
"""Ensemble time series are drawn for at most this many points (the first of the grid)."""


def _algorithm_column(c: Campaign, runs: Any) -> str | None:
    """The swept column that names an algorithm (``flows[k].cc``), if any."""
    for path, col in c.header.get("columns", {}).items():
        if path.endswith(".cc") and col in runs.columns:
            return str(col)
    return None


def _metric_table(c: Campaign) -> str:
    agg = c.aggregate()
    keys = [*c.swept, "baseline"]
    metrics = [m for m in HEADLINE if f"{m}_mean" in agg.columns]
    head = [*keys, "n", *(f"{m} (mean ± 95% CI)" for m in metrics)]
    rows = []
    for _, r in agg.iterrows():
        cells: list[Any] = [r[k] for k in keys]
        cells.append(max((int(r[f"{m}_n"]) for m in metrics), default=0))
        for m in metrics:
            mean, ci = float(r[f"{m}_mean"]), float(r[f"{m}_ci"])
            cells.append("-" if math.isnan(mean) else (f"{mean:.6g}" if math.isnan(ci) else f"{mean:.6g} ± {ci:.3g}"))
        rows.append(cells)
    return table(head, rows, keys=len(keys), css="campaign-metrics")


def _against_parameters(c: Campaign) -> str:
    """Each headline metric against each numeric swept column, one line per algorithm, with 95 % bars."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    runs = c.runs
    ok = runs[runs["status"] == "ok"]
    algo = _algorithm_column(c, runs)
    numeric = [col for col in c.swept if col in ok.columns and ok[col].dtype.kind in "if"]
    metrics = [m for m in HEADLINE if m in ok.columns]
    if not numeric or not metrics or ok.empty:
        return "<p>No numeric swept parameter to draw the metrics against.</p>"
    out = []
    for param in numeric:
        fig = Figure(figsize=(5.0 * len(metrics), 3.4))
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.16, top=0.88, wspace=0.3)
        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        by = [param, *([algo] if algo else []), "baseline"]
        agg = c.aggregate(by=by, metrics=metrics)
        lines = agg.groupby([*([algo] if algo else []), "baseline"], dropna=False, sort=True)
        for ax, m in zip(axes, metrics, strict=True):
            for key, sub in lines:
                key_t = key if isinstance(key, tuple) else (key,)
                label = " ".join("baseline " + str(k) if i == len(key_t) - 1 else str(k)
                                 for i, k in enumerate(key_t) if k == k and k is not None) or "runs"
                sub = sub.sort_values(param)
                ci = sub[f"{m}_ci"].fillna(0.0)
                ax.errorbar(sub[param], sub[f"{m}_mean"], yerr=ci, marker="o", capsize=3, linewidth=1.0, label=label)
            ax.set_xlabel(param)
            ax.set_ylabel(m)
            ax.grid(True, linewidth=0.3, alpha=0.6)
        axes[0].legend(fontsize="small", frameon=False)
        others = [col for col in c.swept if col not in (param, algo)]
        note = f" (mean over the other swept values: {', '.join(others)})" if others else ""
        out.append(figure(fig, f"{', '.join(metrics)} against {param}, 95% confidence bars{note}"))
    return "".join(out)


def _timeseries(c: Campaign) -> str:
    """Per point: each flow's rate at the bottleneck across repeats, mean and 95 % band."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..analysis.plots import thin_line

    if not any(c.store.runs_dir.glob("*/flows.parquet")):
        return "<p>No traces.</p>"
    ts = c.timeseries("rate_bps")
    if ts.empty:
        return "<p>No traces.</p>"
    ts = ts[ts["baseline"].isna()]
    points = sorted(set(ts["point"].tolist()))[:MAX_TIMESERIES_POINTS]
    labels = {i: ", ".join(f"{k} = {v}" for k, v in p.items()) or "the single point"
              for i, p in enumerate(c.header["grid"]["points"])}
    fig = Figure(figsize=(10, 2.4 * len(points) + 0.8))
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.4 / (2.4 * len(points) + 0.8), bottom=0.6 / (2.4 * len(points) + 0.8), hspace=0.45)
    axes = fig.subplots(len(points), 1, squeeze=False)[:, 0]
    for ax, point in zip(axes, points, strict=True):
        sub = ts[ts["point"] == point]
        for flow, f in sub.groupby("flow", sort=True):
            t = f["time_s"].to_numpy(float)
            colour = f"C{int(flow) % 10}"
            tt, mean = thin_line(t, f["mean"].to_numpy(float) / 1e6)
            ax.plot(tt, mean, color=colour, linewidth=1.0, label=f"flow {flow}")
            lo, hi = f["lo"].to_numpy(float) / 1e6, f["hi"].to_numpy(float) / 1e6
            ax.fill_between(t, lo, hi, color=colour, alpha=0.25, linewidth=0)
        n = int(sub["n"].max()) if len(sub) else 0
        ax.set_title(f"point {point}: {labels.get(point, '')} (n = {n})", fontsize="small")
        ax.set_ylabel("rate (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, linewidth=0.3, alpha=0.6)
    axes[0].legend(fontsize="small", frameon=False, ncol=4)
    axes[-1].set_xlabel("time (s)")
    return figure(fig, "rate at the bottleneck per flow: mean across repeats, shaded 95% confidence band")


def campaign_sections(folder: Path) -> tuple[str, list[tuple[str, str]]]:
    """(title, sections) of a campaign folder's report."""
    c = Campaign(folder)
    g = c.header["grid"]
    runs = c.runs
    failed = int((runs["status"] != "ok").sum())
    grid_rows = [("runs", len(runs)), ("failed", failed), ("points", len(g["points"])), ("repeat", g["repeat"]),
                 ("baseline", ", ".join(g["baseline"]) or "-"), ("swept", ", ".join(c.swept) or "-")]
    return f"{c.header.get('name')} (campaign)", [
        ("Grid", table(["", ""], grid_rows, keys=1, css="grid") + f"<pre>{esc(c.header.get('source', ''))}</pre>"),
        ("Provenance", provenance(folder)),
        ("Metrics per point", _metric_table(c)),
        ("Metrics against the swept parameters", _against_parameters(c)),
        ("Ensemble time series", _timeseries(c)),
    ]
