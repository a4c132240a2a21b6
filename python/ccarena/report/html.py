"""The pieces of a report page: tables, inline SVG figures, the page itself."""

from __future__ import annotations

import html
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..campaign.catalogue import flatten

__all__ = ["figure", "flows_table", "metrics_table", "page", "provenance", "svg", "table"]

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


def esc(x: Any) -> str:
    """Text for HTML."""
    return html.escape(str(x), quote=True)


def fmt(v: Any) -> str:
    """A value for a table cell: numbers to 6 significant digits, None as '-'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], keys: int = 1, css: str = "") -> str:
    """An HTML table; the first ``keys`` columns are left-aligned labels."""
    out = [f'<table class="{esc(css)}"><thead><tr>']
    out += [f'<th class="{"key" if i < keys else ""}">{esc(h)}</th>' for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = [f'<td class="{"key" if i < keys else ""}">{esc(fmt(v))}</td>' for i, v in enumerate(row)]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def svg(fig: Any) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (text kept as paths: no fonts needed)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def figure(fig: Any, caption: str) -> str:
    """A figure with its caption."""
    return f"<figure>{svg(fig)}<figcaption>{esc(caption)}</figcaption></figure>"


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
