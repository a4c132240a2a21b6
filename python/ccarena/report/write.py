"""Writing a report: pick the kind of folder, build its sections, write the page whole."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..campaign.store import write_atomic
from .campaign import campaign_sections
from .html import page
from .run import run_sections

__all__ = ["write_report"]


def write_report(folder: str | Path, extra: Sequence[tuple[str, str]] = ()) -> Path:
    """Writes ``folder/report.html`` for a run or a campaign folder and returns its path.

    ``extra``: (heading, HTML) sections placed first, e.g. a preset's figure of the paper."""
    root = Path(folder)
    if (root / "sweep.toml").is_file():
        title, sections = campaign_sections(root)
    elif (root / "summary.json").is_file():
        title, sections = run_sections(root)
    else:
        raise FileNotFoundError(f"{root}: neither a campaign (sweep.toml) nor a run (summary.json)")
    sections = [*extra, *sections]
    out = root / "report.html"
    write_atomic(out, page(title, sections).encode("utf-8"))
    return out
