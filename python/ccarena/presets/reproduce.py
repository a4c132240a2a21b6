"""Running a preset: its campaign, its report and the paper's figure, and the claim checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..campaign import Campaign, sweep
from ..report import write_report
from ..report.html import esc, figure
from .registry import Check, Preset

__all__ = ["PresetUnavailable", "Reproduction", "reproduce"]


class PresetUnavailable(Exception):
    """The preset needs a feature the engine does not have yet."""


@dataclass(frozen=True)
class Reproduction:
    """What ``reproduce`` made: the campaign, the figure files, the report and the claim's check."""

    preset: Preset
    campaign: Campaign
    figures: tuple[Path, ...]
    report: Path
    check: Check | None


def default_out(preset: Preset, quick: bool, backend: str) -> Path:
    """``results/reproduce/ID[-quick][-emu]``."""
    return (
        Path("results")
        / "reproduce"
        / (preset.id.lower() + ("-quick" if quick else "") + ("-emu" if backend == "emu" else ""))
    )


def reproduce(
    preset: Preset,
    *,
    quick: bool = False,
    jobs: int | None = None,
    out: str | Path | None = None,
    backend: str = "sim",
    quiet: bool = True,
) -> Reproduction:
    """Runs the preset's campaign (resuming one already in ``out``), draws the paper's figure next
    to the report (``figure-ID.png`` and ``.svg``), checks the claim and writes the report with
    the figure and the check in it."""
    missing = preset.missing()
    if missing:
        raise PresetUnavailable(f"{preset.id} needs {', '.join(missing)}, which this ccarena does not have yet")
    folder = Path(out) if out is not None else default_out(preset, quick, backend)
    c = sweep(preset.document(quick), out=folder, jobs=jobs, backend=backend, quiet=quiet)
    import matplotlib.pyplot as plt

    fig = preset.figure(c)
    stem = folder / f"figure-{preset.id.lower()}"
    fig.savefig(stem.with_suffix(".png"), dpi=110)
    fig.savefig(stem.with_suffix(".svg"), metadata={"Date": None})
    check = preset.check(c) if preset.check is not None else None
    section = [
        f"<p><b>{esc(preset.paper)}</b></p><p>The paper's claim: {esc(preset.claim)}</p>",
        figure(fig, f"{preset.id}: {preset.title}" + (" (quick form)" if quick else "")),
    ]
    if check is not None:
        verdict = "agrees" if check.agrees else "DISAGREES"
        section.append(f"<p>ccarena {verdict}: {esc(check.measured)}</p>")
        if check.caveat:
            section.append(f"<p>Only in part: {esc(check.caveat)}</p>")
    plt.close(fig)
    report = write_report(folder, extra=[(f"{preset.id}: {preset.title}", "".join(section))])
    return Reproduction(preset, c, (stem.with_suffix(".png"), stem.with_suffix(".svg")), report, check)
