"""The report of a campaign: its grid and provenance, metrics per point over repeats, and their figures.

The statistics follow one rule everywhere: a confidence interval comes from
repeats of one point (same swept values, same baseline) and nothing else.
The tables give the mean, n and, from two repeats on, the 95 % Student-t
half width. The figures draw an interval only over at least
:data:`~ccarena.campaign.figures.MIN_REPEATS_FOR_CI` repeats and otherwise
every run; a second swept column becomes lines or panels, never repeats; a
band never leaves what the quantity can take (a rate between 0 and the
link's rate). Flows are named by their group and algorithm.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..campaign import Campaign
from ..campaign.campaign import GROUP_HEADLINE, HEADLINE, LINK_HEADLINE
from ..campaign.figures import MIN_REPEATS_FOR_CI
from ..campaign.view import grid_table, metric_table
from .html import esc, figure, provenance

__all__ = ["campaign_sections", "ensemble_figure", "flow_names", "metric_figures"]

MAX_TIMESERIES_POINTS = 6
"""Ensemble time series are drawn for at most this many points (the first of the grid)."""
MAX_FIGURE_AXES = 2
"""A metric is drawn against a swept column when the others (and baselines) fit as lines and panels."""
LOADED_UTILISATION = 0.5
"""A link of a network is drawn when its mean utilisation over the measurement window reaches this
at some point of the grid: the links the flows' data load, not the ACK links beside them."""


def _varying(c: Campaign) -> list[str]:
    """Swept columns that take more than one value, and baseline when there are baseline runs."""
    ok = c.table("run")
    cols = [s for s in c.swept if s in ok.columns and ok[s].astype(str).nunique() > 1]
    return cols + (["baseline"] if ok["baseline"].notna().any() else [])


def metric_figures(c: Campaign) -> list[tuple[Any, str]]:
    """(figure, caption) of each headline metric (and each group's share) against each numeric swept column."""
    ok = c.table("run")
    varying = _varying(c)
    numeric = [s for s in varying if s != "baseline" and ok[s].dtype.kind in "if"]
    out = []
    groups = c.table("group")
    several_groups = not groups.empty and groups.groupby("run_id")["group"].nunique().max() > 1
    for x in numeric:
        others = [v for v in varying if v != x]
        if len(others) > MAX_FIGURE_AXES:
            continue
        hue, col = (others + [None, None])[:2]
        for y in (*HEADLINE, *(GROUP_HEADLINE[:1] if several_groups else ())):
            per = "run" if y in HEADLINE else "group"
            if y not in c.table(per).columns:
                continue
            if per == "group" and hue is None:
                hue = "cc" if col != "cc" else None
            h, cl = hue, col
            if per == "group" and h not in (None, "cc") and cl is None:
                h, cl = "cc", h
            fig = c.plot(y, x=x, hue=h, col=cl, per=per)
            out.append((fig, f"{y} against {x}" + (f", a line per {h}" if h else "") + (f", a panel per {cl}" if cl else "")))
    return out


def _against_parameters(c: Campaign) -> str:
    ok = c.table("run")
    if ok.empty:
        return "<p>No finished runs.</p>"
    figs = metric_figures(c)
    if not figs:
        return "<p>No numeric swept column to draw the metrics against (or too many swept columns to draw as lines and panels: see the table above).</p>"
    rule = (f"Each mark is the mean over the runs of one point; a 95% interval (Student t) is drawn over "
            f"{MIN_REPEATS_FOR_CI} or more repeats, otherwise each run is a dot.")
    return f"<p>{esc(rule)}</p>" + "".join(figure(f, cap) for f, cap in figs)


def loaded_links(c: Campaign) -> list[str]:
    """The links of a network whose mean utilisation over the window reaches :data:`LOADED_UTILISATION`
    at some point (in the order of the first run), or none for the dumbbell."""
    links = c.table("link")
    if links.empty:
        return []
    mean = links.groupby(["point", "name"], sort=False)["utilization_window"].mean()
    loaded = {name for (_, name), u in mean.items() if u >= LOADED_UTILISATION}
    return [n for n in dict.fromkeys(links["name"]) if n in loaded]


def _links(c: Campaign) -> str:
    """Per link and point: the link metrics over repeats, and each against the swept columns, one line per
    loaded link."""
    names = loaded_links(c)
    if not names:
        return ""
    ok = c.table("run")
    varying = [v for v in _varying(c) if v != "baseline"]
    numeric = [s for s in varying if ok[s].dtype.kind in "if"]
    rule = (f"Links whose mean utilisation over the window reaches {LOADED_UTILISATION:g} at some point: "
            f"{', '.join(names)}. Each mark is the mean over the runs of one point; a 95% interval over "
            f"{MIN_REPEATS_FOR_CI} or more repeats, otherwise each run is a dot.")
    figs = []
    for x in numeric:
        others = [v for v in varying if v != x]
        if len(others) > MAX_FIGURE_AXES - 1:
            continue
        col = others[0] if others else None
        for y in LINK_HEADLINE:
            if y in c.table("link").columns:
                fig = c.plot(y, x=x, hue="name", col=col, per="link", where={"name": names})
                figs.append(figure(fig, f"{y} per link against {x}" + (f", a panel per {col}" if col else "")))
    return f"<p>{esc(rule)}</p>" + metric_table(c, "link", LINK_HEADLINE) + "".join(figs)


def flow_names(c: Campaign) -> dict[int, str]:
    """Each flow's name in figures: ``group 1: cubic (flow 2)``, from the first finished run."""
    flows = c.table("flow")
    if flows.empty:
        return {}
    first = flows[flows["run_id"] == flows["run_id"].iloc[0]]
    return {int(r["flow"]): f"group {int(r['group'])}: {r['cc']} (flow {int(r['flow'])})" for _, r in first.iterrows()}


def ensemble_figure(c: Campaign, points: list[int]) -> Any:
    """Per point, each flow's rate at the bottleneck over time across repeats.

    With :data:`MIN_REPEATS_FOR_CI` or more repeats, the mean and its 95 %
    band (kept within 0 and the link's rate); with fewer, every run as a thin
    line under the mean.
    """
    from ..analysis.plots import thin_line

    ts = c.timeseries("rate_bps")
    runs = c.query('SELECT run_id, point, flow, time_s, rate_bps FROM flows JOIN runs USING (run_id) '
                   "WHERE runs.status = 'ok' AND runs.baseline IS NULL ORDER BY run_id, flow, time_s")
    names = flow_names(c)
    link = c.table("run").groupby("point")["bottleneck.rate_bps"].max()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 2.6 * len(points) + 0.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(points), 1, squeeze=False)[:, 0]
    labels = {i: ", ".join(f"{k} = {v}" for k, v in p.items()) or "the single point"
              for i, p in enumerate(c.header["grid"]["points"])}
    for ax, point in zip(axes, points, strict=True):
        sub = ts[(ts["point"] == point) & ts["baseline"].isna()]
        n = int(sub["n"].max()) if len(sub) else 0
        for flow, f in sub.groupby("flow", sort=True):
            colour = f"C{int(flow) % 10}"
            if n < MIN_REPEATS_FOR_CI:
                one = runs[(runs["point"] == point) & (runs["flow"] == flow)]
                for _, r in one.groupby("run_id", sort=True):
                    ax.plot(r["time_s"], r["rate_bps"] / 1e6, color=colour, linewidth=0.4, alpha=0.45)
            t = f["time_s"].to_numpy(float)
            tt, mean = thin_line(t, f["mean"].to_numpy(float) / 1e6)
            ax.plot(tt, mean, color=colour, linewidth=1.1, label=names.get(int(flow), f"flow {flow}"))
            if n >= MIN_REPEATS_FOR_CI:
                ax.fill_between(t, f["lo"].to_numpy(float) / 1e6, f["hi"].to_numpy(float) / 1e6,
                                color=colour, alpha=0.25, linewidth=0)
        what = f"mean of {n} runs, 95% band" if n >= MIN_REPEATS_FOR_CI else f"{n} runs (thin) and their mean"
        ax.set_title(f"point {point}: {labels.get(point, '')} ({what})", fontsize="small")
        ax.set_ylabel("rate (Mbit/s)")
        cap = float(link.get(point, float("nan")))
        ax.set_ylim(0, cap / 1e6 * 1.02 if math.isfinite(cap) else None)
        ax.grid(True, linewidth=0.3, alpha=0.6)
        ax.legend(fontsize="small", frameon=False, ncol=3)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return fig


def _timeseries(c: Campaign) -> str:
    if not any((c.store.run_dir(r) / "flows.parquet").is_file() for r in c.store.finished()):
        return "<p>No traces.</p>"
    ok = c.table("run")
    points = sorted(set(ok.loc[ok["baseline"].isna(), "point"].tolist()))[:MAX_TIMESERIES_POINTS]
    if not points:
        return "<p>No traces.</p>"
    fig = ensemble_figure(c, points)
    more = len(c.header["grid"]["points"]) - len(points)
    note = f" (the first {len(points)} points; {more} more in the tables)" if more > 0 else ""
    return figure(fig, f"rate at the bottleneck per flow across repeats{note}")


def campaign_sections(folder: Path) -> tuple[str, list[tuple[str, str]]]:
    """(title, sections) of a campaign folder's report."""
    c = Campaign(folder)
    window = "over the measurement window (measure.window; by default the second half of the run)"
    return f"{c.header.get('name')} (campaign)", [
        ("Grid", grid_table(c) + f"<pre>{esc(c.header.get('source', ''))}</pre>"),
        ("Provenance", provenance(c.path)),
        ("Metrics per point", f"<p>Utilisation and Jain's index {esc(window)}; n runs per point.</p>"
         + metric_table(c, "run", HEADLINE)),
        ("Flow groups per point", f"<p>Each group's share of what all flows got and its per-flow rate over the other "
         f"groups' {esc(window)}.</p>" + metric_table(c, "group", GROUP_HEADLINE)),
        ("Metrics against the swept parameters", _against_parameters(c)),
        *([("Links per point", links)] if (links := _links(c)) else []),
        ("Ensemble time series", _timeseries(c)),
    ]

