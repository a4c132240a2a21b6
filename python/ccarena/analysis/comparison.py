"""Simulator against kernel: the table of differences and the side-by-side figure.

For each flow the table gives goodput, mean RTT and retransmits, and for
the link its utilisation: simulated, emulated, the difference emu − sim and
the relative difference (emu − sim) / sim. Over several seeds
(:func:`over_seeds`) it gives each backend's mean and range, and the
difference of the means. The figure draws rate at the bottleneck and cwnd
per flow, and the queue, simulated (solid) over emulated (dashed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import RunData, column

__all__ = ["QUANTITIES", "differences", "figure", "format_table", "over_seeds"]

QUANTITIES = (
    ("goodput_mbps", "goodput", "Mbit/s"),
    ("rtt_mean_ms", "mean RTT", "ms"),
    ("retransmits", "retransmits", "pkts"),
)


def _row(quantity: str, unit: str, flow: str, cc: str, sim: float | None, emu: float | None) -> dict[str, Any]:
    diff = None if sim is None or emu is None else emu - sim
    rel = None if diff is None or sim is None or sim == 0 else diff / sim
    return {
        "quantity": quantity,
        "unit": unit,
        "flow": flow,
        "cc": cc,
        "sim": sim,
        "emu": emu,
        "diff": diff,
        "rel": rel,
    }


def differences(sim: Mapping[str, Any], emu: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of the comparison table from two summaries (summary.json contents).

    Per flow: goodput (Mbit/s), mean RTT (ms) and retransmits (packets);
    then the link's utilisation. Each row has ``sim``, ``emu``, ``diff``
    (emu − sim) and ``rel`` ((emu − sim) / sim, None when sim is 0).
    """
    rows = []
    for key, label, unit in QUANTITIES:
        for fs, fe in zip(sim["flows"], emu["flows"], strict=True):

            def value(f: Mapping[str, Any], key: str = key) -> float | None:
                if key == "goodput_mbps":
                    return None if f["goodput_bps"] is None else f["goodput_bps"] / 1e6
                v = f[key]
                return None if v is None else float(v)

            rows.append(_row(label, unit, str(fs["flow"]), str(fs["cc"]), value(fs), value(fe)))
    rows.append(_row("utilisation", "", "all", "", sim["utilization"], emu["utilization"]))
    return rows


def over_seeds(tables: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One table from the tables of :func:`differences` for several seeds of one experiment.

    Each row has the per-seed values (``sim_values``, ``emu_values``, in
    the order given; None where a run had none), their means (``sim``,
    ``emu``, over the seeds that have a value), ranges (``sim_min``,
    ``sim_max``, ``emu_min``, ``emu_max``), and ``diff`` and ``rel`` of
    the means.
    """
    if not tables:
        raise ValueError("no tables to combine")
    rows = []
    for i, first in enumerate(tables[0]):
        values = {tag: [t[i][tag] for t in tables] for tag in ("sim", "emu")}
        known = {tag: [v for v in vs if v is not None] for tag, vs in values.items()}
        mean = {tag: sum(k) / len(k) if k else None for tag, k in known.items()}
        row = _row(first["quantity"], first["unit"], first["flow"], first["cc"], mean["sim"], mean["emu"])
        for tag in ("sim", "emu"):
            row[f"{tag}_min"] = min(known[tag], default=None)
            row[f"{tag}_max"] = max(known[tag], default=None)
            row[f"{tag}_values"] = values[tag]
        rows.append(row)
    return rows


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def format_table(rows: list[dict[str, Any]], sim_summary: Mapping[str, Any] | None = None) -> str:
    """The comparison table as aligned text; with ranges (rows of :func:`over_seeds`),
    each backend's mean and its range over the seeds, and the difference of the means."""
    ranges = bool(rows) and "sim_min" in rows[0]
    if ranges:
        head = ("quantity", "flow", "cc", "sim mean", "sim range", "emu mean", "emu range", "emu-sim", "rel")
    else:
        head = ("quantity", "flow", "cc", "sim", "emu", "emu-sim", "rel")
    lines = [head]
    for r in rows:
        spec = ".3f" if r["quantity"] == "utilisation" else (".0f" if r["quantity"] == "retransmits" else ".2f")
        name = f"{r['quantity']} ({r['unit']})" if r["unit"] else r["quantity"]
        rel = "-" if r["rel"] is None else f"{100 * r['rel']:+.1f}%"
        diff = "-" if r["diff"] is None else format(r["diff"], "+" + spec)
        if ranges:
            span = {
                tag: "-" if r[f"{tag}_min"] is None else f"{r[f'{tag}_min']:{spec}}..{r[f'{tag}_max']:{spec}}"
                for tag in ("sim", "emu")
            }
            cells = (_fmt(r["sim"], spec), span["sim"], _fmt(r["emu"], spec), span["emu"])
        else:
            cells = (_fmt(r["sim"], spec), _fmt(r["emu"], spec))
        lines.append((name, r["flow"], r["cc"], *cells, diff, rel))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for line in lines:
        cells = [line[0].ljust(widths[0]), line[1].rjust(widths[1]), line[2].ljust(widths[2])]
        cells += [c.rjust(w) for c, w in zip(line[3:], widths[3:], strict=True)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def _series(result: RunData, name: str) -> list[tuple[int, str, Any, Any]]:
    table = result.flows_arrow
    if table.num_rows == 0 or name not in table.column_names:
        return []
    t = column(table, "time_s").astype(np.float64)
    ids = column(table, "flow")
    values = column(table, name).astype(np.float64)
    return [(int(f["flow"]), str(f["cc"]), t[ids == f["flow"]], values[ids == f["flow"]]) for f in result.summary["flows"]]


def figure(sim: RunData, emu: RunData) -> Figure:
    """Rate at the bottleneck and cwnd per flow, and the queue backlog: sim solid, emu dashed."""
    fig = Figure(figsize=(10, 8.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax_rate, ax_cwnd, ax_queue = fig.subplots(3, 1, sharex=True)
    interval = float(sim.summary["interval_s"])
    for result, style, tag in ((sim, "-", "sim"), (emu, "--", "emu")):
        for fid, cc, t, v in _series(result, "rate_bps"):
            if len(t):
                edges = np.concatenate([[max(t[0] - interval, 0.0)], t])
                ax_rate.stairs(
                    v / 1e6,
                    edges,
                    baseline=None,
                    color=f"C{fid % 10}",
                    linestyle=style,
                    linewidth=1.0,
                    label=f"flow {fid} ({cc}) {tag}",
                )
        for fid, cc, t, v in _series(result, "cwnd_pkts"):
            ax_cwnd.plot(t, v, color=f"C{fid % 10}", linestyle=style, linewidth=1.0, label=f"flow {fid} {tag}")
        q = result.queue_arrow
        if q.num_rows:
            ax_queue.plot(
                column(q, "time_s"),
                column(q, "backlog_pkts").astype(np.float64),
                color="0.2",
                linestyle=style,
                linewidth=1.0,
                label=f"backlog {tag}",
            )
    cap = sim.summary["bottleneck"]["rate_bps"] / 1e6
    ax_rate.axhline(cap, color="0.5", linestyle=":", linewidth=0.8, label="capacity")
    limit = sim.summary["bottleneck"].get("buffer_pkts")
    if limit is not None:
        ax_queue.axhline(limit, color="0.5", linestyle=":", linewidth=0.8, label="buffer")
    ax_rate.set_ylabel("rate at bottleneck\n(Mbit/s)")
    ax_cwnd.set_ylabel("cwnd\n(packets)")
    ax_queue.set_ylabel("queue\n(packets)")
    for ax in (ax_rate, ax_cwnd, ax_queue):
        ax.set_ylim(bottom=0)
        ax.grid(True, linewidth=0.3, alpha=0.6)
        handles, labels = ax.get_legend_handles_labels()
        if handles and len(handles) <= 26:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    ax_queue.set_xlabel("time (s)")
    ax_queue.set_xlim(0, sim.summary["duration_s"])
    kernel = emu.summary.get("emu", {}).get("kernel", {}).get("release", "?")
    fig.suptitle(
        f"{sim.summary['name']} (seed {sim.summary['seed']}): simulator (solid) vs Linux {kernel} (dashed)",
        fontsize="medium",
    )
    return fig
