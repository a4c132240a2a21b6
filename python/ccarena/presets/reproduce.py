"""Running a preset: its campaign (and those of the other side of its dispute), the report and
the paper's figure, and the claim judged."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..campaign import Campaign, sweep
from ..report import write_report
from ..report.html import esc, figure
from .registry import Preset, Values, Verdict

__all__ = ["PresetUnavailable", "Reproduction", "reproduce"]


class PresetUnavailable(Exception):
    """The preset needs a feature the engine does not have yet."""


@dataclass(frozen=True)
class Reproduction:
    """What ``reproduce`` made: the campaign, the figure files, the report, the values measured
    (this preset's and its dispute's, by ID), the verdict, and the dispute's campaigns and
    statement where the preset is one side of one."""

    preset: Preset
    campaign: Campaign
    figures: tuple[Path, ...]
    report: Path
    values: Mapping[str, Values]
    verdict: Verdict
    others: Mapping[str, Campaign] = field(default_factory=dict)
    dispute: str = ""


def default_out(preset: Preset, quick: bool, backend: str) -> Path:
    """``results/reproduce/ID[-quick][-emu]``."""
    return (
        Path("results")
        / "reproduce"
        / (preset.id.lower() + ("-quick" if quick else "") + ("" if backend == "sim" else f"-{backend}"))
    )


def _other_out(out: Path | None, preset: Preset, other: Preset, quick: bool, backend: str) -> Path:
    """The folder of the other side's campaign: its default folder; beside an explicit ``out``
    named after the preset (``.../b5``, ``.../b5-quick``), the folder named after the other
    (``.../c3``, ``.../c3-quick``), so that reproducing either side reuses the other's campaign;
    beside any other ``out``, ``<out>-<id>``."""
    if out is None:
        return default_out(other, quick, backend)
    own, theirs = preset.id.lower(), other.id.lower()
    if out.name.lower() == own or out.name.lower().startswith(own + "-"):
        return out.parent / (theirs + out.name[len(own) :])
    return out.parent / f"{out.name}-{theirs}"


def measure_into(preset: Preset, c: Campaign) -> Values:
    """The preset's values measured on its campaign, also written to ``claim-ID.json`` there."""
    values = preset.measure(c) if preset.measure is not None else {}
    (c.path / f"claim-{preset.id.lower()}.json").write_text(
        json.dumps({"id": preset.id, "values": values}, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return values


def _section(preset: Preset, quick: bool, fig: object, verdict: Verdict, dispute: str) -> str:
    parts = [
        f"<p><b>{esc(preset.paper)}</b>, {esc(preset.where)}</p>",
        f"<p>The paper's claim: {esc(preset.claim)}</p>",
    ]
    if preset.reported:
        parts.append(f"<p>What the paper reports: {esc(preset.reported)}</p>")
    devs = preset.deviations
    if devs:
        parts.append(
            "<p>Deviations from the paper's setup:</p><ul>" + "".join(f"<li>{esc(d)}</li>" for d in devs) + "</ul>"
        )
    parts.append(figure(fig, f"{preset.id}: {preset.title}" + (" (quick form)" if quick else "")))
    parts.append(f"<p>Verdict: <b>{esc(verdict.summary())}</b></p>")
    if verdict.parts:
        parts.append(
            "<ul>"
            + "".join(
                f"<li>{esc(p.name)}: {'holds' if p.holds else 'does not hold'}; {esc(p.measured)}</li>"
                for p in verdict.parts
            )
            + "</ul>"
        )
    if dispute:
        parts.append(f"<p>The dispute: {esc(dispute)}</p>")
    return "".join(parts)


def _save(fig: object, stem: Path) -> None:
    fig.savefig(stem.with_suffix(".png"), dpi=110)  # type: ignore[attr-defined]
    fig.savefig(stem.with_suffix(".svg"), metadata={"Date": None})  # type: ignore[attr-defined]


def reproduce(
    preset: Preset,
    *,
    quick: bool = False,
    jobs: int | None = None,
    out: str | Path | None = None,
    backend: str = "sim",
    quiet: bool = True,
) -> Reproduction:
    """Runs the preset's campaign (resuming one already in ``out``) and, when the preset is one side
    of a dispute, the other sides' campaigns beside it (in the simulator, with the testbed's hosts
    too for ``backend = "host"``, :data:`TESTBED_HOST`; on the kernel the preset's own claim is
    judged, on its kernel form); draws the paper's figure next to the report
    (``figure-ID.png`` and ``.svg``; the other sides' in their folders), judges the claim and writes
    the report with the figure, the verdict and the dispute in it."""
    from .disputes import dispute_of
    from .experiments import PRESETS

    by_id = {p.id: p for p in PRESETS}
    if backend == "host" and not preset.testbed:
        raise PresetUnavailable(f"{preset.id} did not run on a testbed of hosts: it has no host variant")
    d = dispute_of(preset.id) if backend in ("sim", "host") else None
    involved = [preset] + [
        by_id[i] for i in (d.ids if d else preset.with_) if i != preset.id and backend in ("sim", "host")
    ]
    for p in involved:
        missing = p.missing()
        if missing:
            raise PresetUnavailable(f"{p.id} needs {', '.join(missing)}, which this ccarena does not have yet")
    folder = Path(out) if out is not None else default_out(preset, quick, backend)
    engine = "sim" if backend == "host" else backend
    c = sweep(preset.document(quick, backend), out=folder, jobs=jobs, backend=engine, quiet=quiet)
    values: dict[str, Values] = {preset.id: measure_into(preset, c)}
    others: dict[str, Campaign] = {}
    for p in involved[1:]:
        oc = sweep(
            p.document(quick, backend if p.testbed else "sim"),
            out=_other_out(Path(out) if out is not None else None, preset, p, quick, backend),
            jobs=jobs,
            backend=engine,
            quiet=quiet,
        )
        others[p.id] = oc
        values[p.id] = measure_into(p, oc)
    import matplotlib.pyplot as plt

    for p in involved[1:]:
        other = p.figure(others[p.id])
        _save(other, others[p.id].path / f"figure-{p.id.lower()}")
        plt.close(other)
    fig = preset.figure(c)
    stem = folder / f"figure-{preset.id.lower()}"
    _save(fig, stem)
    verdict = preset.verdict(values)
    said = d.settle(values, backend) if d is not None else ""
    section = _section(preset, quick, fig, verdict, said)
    plt.close(fig)
    report = write_report(folder, extra=[(f"{preset.id}: {preset.title}", section)])
    return Reproduction(
        preset, c, (stem.with_suffix(".png"), stem.with_suffix(".svg")), report, values, verdict, others, said
    )
