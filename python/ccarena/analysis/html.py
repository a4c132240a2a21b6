"""HTML pieces shared by reports and notebooks: escaped text, tables, inline SVG figures."""

from __future__ import annotations

import html
import io
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["esc", "figure", "fmt", "svg", "table"]


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
