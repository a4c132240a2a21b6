"""The full presets' stored results, and the README's table made from them.

After a full run, ``make reproduce-all`` stores what each preset measured beside its campaign
file, in ``scenarios/<paper>/results/<id>.json``: the values its judge reads, the ccarena
commit and version that ran it, the date, the number of runs and the wall time. The README's
table of published experiments is written from these files alone, with each verdict judged
afresh from the stored values; the test suite checks that the README says what they give.
"""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .registry import VARIANTS, Preset, Values, Verdict

__all__ = [
    "TABLE_BEGIN",
    "TABLE_END",
    "load",
    "readme_section",
    "readme_table",
    "replace_readme_section",
    "save",
    "stored_path",
    "stored_values",
    "verdict",
]

TABLE_BEGIN = "<!-- the table of published experiments: written by make reproduce-all from scenarios/*/results/ -->"
TABLE_END = "<!-- end of the table of published experiments -->"


def stored_path(p: Preset, backend: str = "sim") -> Path:
    """``scenarios/<paper>/results/<id>.json`` (``<id>-emu.json`` for the kernel's runs through the
    emulator)."""
    return (
        p.path.parent / "results" / (f"{p.id.lower()}.json" if backend == "sim" else f"{p.id.lower()}-{backend}.json")
    )


def _commit() -> str:
    """The checkout's commit (12 hex digits), with "-dirty" when tracked files differ from it;
    the files a full run writes itself (README.md and the stored results) do not count."""
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True, check=True, timeout=10)
        return out.stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        top = Path(git("rev-parse", "--show-toplevel"))
        changed = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)README.md",
                ":(exclude)scenarios/*/results/*",
            ],
            cwd=top,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if changed else "") if head else "unknown"


def save(
    p: Preset, values: Values, *, runs: int, wall_s: float, backend: str = "sim", date: _dt.date | None = None
) -> Path:
    """Stores a full run's values with the commit, version, date, runs, wall time and backend."""
    from .._version import __version__

    doc = {
        "id": p.id,
        "file": p.file,
        "commit": _commit(),
        "ccarena": __version__,
        "date": (date or _dt.datetime.now(_dt.UTC).date()).isoformat(),
        "runs": int(runs),
        "backend": backend,
        "wall_s": round(float(wall_s)),
        "values": values,
    }
    path = stored_path(p, backend)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def load(p: Preset, backend: str = "sim") -> dict[str, Any] | None:
    """The stored result of a preset's full run on ``backend``, or None when there is none."""
    path = stored_path(p, backend)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def stored_values(presets: Sequence[Preset]) -> dict[str, Values]:
    """Every stored preset's values, by ID."""
    out = {}
    for p in presets:
        doc = load(p)
        if doc is not None:
            out[p.id] = doc["values"]
    return out


def verdict(p: Preset, values: Mapping[str, Values]) -> Verdict | None:
    """The preset's verdict on ``values`` (by ID), or None when the values of it or of a preset
    its judge also reads are missing."""
    if p.judge is not None and any(i not in values for i in (p.id, *p.with_)):
        return None
    return p.verdict(values)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def readme_table(presets: Sequence[Preset]) -> str:
    """The README's table of published experiments, from the stored results."""
    from .disputes import DISPUTES

    values = stored_values(presets)
    stored = {variant: {q.id: doc for q in presets if (doc := load(q, variant)) is not None} for variant in VARIANTS}
    # A variant's judge reads the variant's values of the presets it reads, where they exist.
    variant_values = {variant: {**values, **{i: doc["values"] for i, doc in docs.items()}}
                      for variant, docs in stored.items()}  # fmt: skip
    rows = [
        "| experiment | the paper's claim (where) | the paper's numbers | ccarena, full preset | verdict | run |",
        "|---|---|---|---|---|---|",
    ]
    for p in presets:
        doc = load(p)
        claim = f"{p.claim} ({p.where})"
        if doc is None:
            missing = p.missing()
            why = f"needs {', '.join(missing)}" if missing else "no stored full run"
            rows.append(f"| {p.id} {_cell(p.title)} | {_cell(claim)} | {_cell(p.reported or '-')} | - | {why} | - |")
            continue
        v = verdict(p, values)
        if v is None:
            result, word = "-", "the other side of its dispute has no stored full run"
        elif v.word == "figure only":
            result, word = f"figure-{p.id.lower()}.png", "figure only"
        else:
            result, word = v.measured(), v.summary()
        run = f"{doc['date']}, {doc['commit']}, {doc['runs']} runs, {doc['wall_s']} s"
        words = []
        for variant, (name, short) in VARIANTS.items():
            other = stored[variant].get(p.id)
            if other is None or p.judge is None:
                continue
            ev = p.verdict(variant_values[variant])
            result += f"; {name}: {ev.measured()}"
            words.append(f"{short}: {ev.summary()}")
            run += f"; {short}: {other['date']}, {other['commit']}, {other['runs']} runs, {other['wall_s']} s"
        if words:
            word = "; ".join([f"simulator: {word}", *words])
        rows.append(
            f"| {p.id} {_cell(p.title)} | {_cell(claim)} | {_cell(p.reported or '-')} | {_cell(result)} | "
            f"{_cell(word)} | {run} |"
        )
    rows += ["", "| dispute | the two claims | what ccarena's model supports |", "|---|---|---|"]
    by_id = {p.id: p for p in presets}
    for d in DISPUTES:
        if not all(i in by_id for i in d.ids):
            continue
        have = all(i in values for i in d.ids)
        said = d.settle(values, "sim") if have else "not every side has a stored full run"
        for variant, (name, _) in VARIANTS.items():
            if have and all(i in stored[variant] for i in d.ids):
                said += f" {name[0].upper()}{name[1:]}: {d.settle(variant_values[variant], variant)}"
        rows.append(f"| {' / '.join(d.ids)}: {_cell(d.question)} | {_cell(d.sides)} | {_cell(said)} |")
    return "\n".join(rows) + "\n"


def readme_section(text: str) -> str:
    """The part of the README between the table's markers."""
    start = text.index(TABLE_BEGIN) + len(TABLE_BEGIN)
    return text[start : text.index(TABLE_END, start)].strip("\n") + "\n"


def replace_readme_section(text: str, table: str) -> str:
    """The README with the table between the markers replaced."""
    start = text.index(TABLE_BEGIN) + len(TABLE_BEGIN)
    end = text.index(TABLE_END, start)
    return text[:start] + "\n" + table + text[end:]
