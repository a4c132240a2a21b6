"""The report of one run."""

from __future__ import annotations

from pathlib import Path

from ..results import Result
from .html import esc, figure, flows_table, metrics_table, provenance

__all__ = ["run_sections"]


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
    ]
