"""The pieces of a report page: tables, inline SVG figures, the page itself."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..analysis.html import esc, figure, fmt, svg, table
from ..campaign.catalogue import flatten

__all__ = ["esc", "figure", "flows_table", "fmt", "metrics_table", "page", "provenance", "svg", "table"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
th { background: #f4f4f4; } td.key, th.key { text-align: left; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 12px; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: #555; }
"""


def page(title: str, sections: Sequence[tuple[str, str]]) -> str:
    """The whole page."""
    body = "".join(f"<h2>{esc(h)}</h2>{content}" for h, content in sections)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{esc(title)}</h1><p>ccarena {esc(__version__)}</p>{body}</body></html>\n"
    )


def provenance(folder: Path) -> str:
    """The provenance.json of a folder as a table, or a line saying there is none."""
    p = folder / "provenance.json"
    if not p.is_file():
        return "<p>No provenance.json in this folder.</p>"
    doc = json.loads(p.read_text(encoding="utf-8"))
    return table(["field", "value"], sorted(flatten(doc, skip=()).items()), keys=1, css="provenance")


def metrics_table(summary: Mapping[str, Any]) -> str:
    """Every scalar of summary.json but the per-flow ones, as a two-column table."""
    return table(["metric", "value"], flatten(summary).items(), keys=1, css="metrics")


def flows_table(summary: Mapping[str, Any]) -> str:
    """The per-flow values of summary.json, one row per flow."""
    flows = [flatten(f, skip=()) for f in summary.get("flows", [])]
    if not flows:
        return "<p>No flows.</p>"
    head = list(dict.fromkeys(["flow", "group", "cc", *(k for f in flows for k in f)]))
    return table(head, ([f.get(k) for k in head] for f in flows), keys=3, css="flows")
