"""The report of one run."""

from __future__ import annotations

from pathlib import Path

from ..results import Result
from .html import esc, figure, flows_table, metrics_table, provenance, table

__all__ = ["links_section", "run_sections"]


def links_section(folder: Path, summary: dict) -> str:  # type: ignore[type-arg]
    """A network's links: a table of each link's numbers and each loaded link's queue over time."""
    import pyarrow.parquet as pq
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    links = summary["links"]
    head = ["link", "rate_bps", "utilization_window", "drops", "marks", "delay_p50_ms", "delay_p99_ms", "max_backlog_pkts"]
    out = table(head, ([link.get(k) for k in head] for link in links), keys=1, css="links")
    trace = pq.read_table(folder / "links.parquet", columns=["time_s", "link", "backlog_pkts"]).to_pandas()
    loaded = [link["name"] for link in links if link["tx_packets"] > 0]
    fig = Figure(figsize=(10, 1.6 * len(loaded) + 0.8))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(loaded), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, loaded, strict=True):
        rows = trace[trace["link"] == name]
        ax.plot(rows["time_s"], rows["backlog_pkts"], linewidth=0.8)
        ax.set_ylabel(f"{name}\n(pkts)", fontsize="small")
        ax.set_ylim(bottom=0)
        ax.grid(True, linewidth=0.3, alpha=0.6)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    return out + figure(fig, "queue backlog of every link that carried packets, per interval")


def run_sections(folder: Path) -> tuple[str, list[tuple[str, str]]]:
    """(title, sections) of a run folder's report."""
    from ..analysis import plots

    result = Result.load(folder)
    s = result.summary
    spec_text = (folder / "spec.toml").read_text(encoding="utf-8")
    fig = plots.figure(result, "overview")
    return f"{s['name']} (seed {s['seed']})", [
        ("Scenario", f"<pre>{esc(spec_text)}</pre>"),
        ("Provenance", provenance(folder)),
        ("Metrics", metrics_table(s)),
        ("Flows", flows_table(s)),
        ("Rate at the bottleneck, cwnd and queue", figure(fig, "rate counted at the bottleneck per interval; "
                                                          "cwnd from the sender; queue backlog")),
        *([("Links", links_section(folder, s))] if "links" in s and (folder / "links.parquet").is_file() else []),
    ]
