"""The preset registry: experiment ID → campaign file, title, paper, quick form, figure and claim.

A preset is one campaign file under ``scenarios/<paper>/``. Its quick form
is a set of overrides: plain field paths as ``--set`` takes them
(``duration``, ``topology.bottleneck.rate``) and ``sweep.<key>`` for the
``[sweep]`` table (``sweep.repeat``, ``sweep.flows[0].cc``: a swept list
replaced, or dropped with ``None``). A preset that needs a feature the
engine does not have yet names it in ``needs`` ("red", "xcp") and refuses
to run until it exists.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..campaign import Campaign

__all__ = ["SCENARIOS", "TESTBED_HOST", "VARIANTS", "VERDICTS", "Dispute", "Part", "Preset", "Values", "Verdict", "available", "quick_document"]

SCENARIOS = Path(os.environ.get("CCARENA_SCENARIOS") or Path(__file__).resolve().parents[3] / "scenarios")
"""The campaign files: the checkout's scenarios/ folder (``make install`` installs the package in
place), or the folder the environment variable ``CCARENA_SCENARIOS`` names."""

PACKETS_PER_S = 0.7e6
"""Upper-bound data packets (the bottleneck's rate x duration, campaign.estimate_packets) one worker
gets through per wall second on this machine (2 cores, shared). Measured over the full presets:
from 0.7e6 (A1 and A4, fast links filled by long-lived flows) to 5e6 (E1, links that random loss
keeps half empty); the lowest is used, so ``--list`` gives an upper estimate."""


TESTBED_HOST = {"nic": "1Gbps"}
"""The sending hosts of the 2005-2007 testbeds (Rhee and Xu's, Leith et al.'s, Rhee's rerun): Linux
2.6 with 1 Gbit/s NICs and TCP segmentation offload, so that an unpaced sender's data reach the
bottleneck in bursts of up to 64 KB at line rate, behind a 1000-packet host queue (``flows.host``'s
defaults). Applied to every flow group; background transfers keep the simulator's smooth senders."""

VARIANTS = {
    "emu": ("kernel (emu backend)", "kernel"),
    "host": ("with the testbed's hosts (1 Gbit/s NIC, TSO bursts)", "testbed hosts"),
}
"""Runs of a preset beside the simulator's, each stored as ``<id>-<variant>.json``: on the kernel's
TCP through the emulator, and in the simulator with the testbed's sending hosts; by variant, the
README table's heading of its numbers and the short name of its verdict."""

VERDICTS = ("reproduced", "partly", "not reproduced", "figure only")
"""The verdict words, each with one meaning: every part of the paper's claim holds in ccarena's
result; some parts hold (the verdict names which do not); none holds (the verdict names the cause
where it is established, a limit of ccarena's model or a setup ccarena cannot build, and otherwise
says what was ruled out and that the cause is not established); the paper states no result to
check, so the preset draws the figure only."""


@dataclass(frozen=True)
class Part:
    """One part of a paper's claim, tested on ccarena's result: its name (what the paper says),
    whether it holds, and the numbers that say so."""

    name: str
    holds: bool
    measured: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "holds", bool(self.holds))


@dataclass(frozen=True)
class Verdict:
    """A claim judged: the verdict word (one of :data:`VERDICTS`), the parts tested, and the cause
    stated for the parts that do not hold."""

    word: str
    parts: tuple[Part, ...] = ()
    cause: str = ""

    def __post_init__(self) -> None:
        if self.word not in VERDICTS:
            raise ValueError(f"verdict {self.word!r} is not one of {', '.join(VERDICTS)}")

    @staticmethod
    def of(parts: Sequence[Part], cause: str = "") -> Verdict:
        """The verdict of the tested parts: reproduced when all hold, partly when some do, not
        reproduced when none does; ``cause`` is kept only when some part does not hold."""
        if not parts:
            raise ValueError("a claim is judged on at least one part")
        held = [p.holds for p in parts]
        word = "reproduced" if all(held) else "partly" if any(held) else "not reproduced"
        return Verdict(word, tuple(parts), "" if word == "reproduced" else cause)

    @property
    def failing(self) -> list[Part]:
        return [p for p in self.parts if not p.holds]

    def measured(self) -> str:
        """Every part's numbers, as one line."""
        return "; ".join(f"{p.name}: {p.measured}" for p in self.parts)

    def summary(self) -> str:
        """The verdict word, with the parts that do not hold and the cause where it is not
        "reproduced"."""
        if self.word in ("reproduced", "figure only"):
            return self.word
        missing = "; ".join(p.name for p in self.failing)
        stated = "cause, as the preset states it from its full runs and the diagnostic runs it names"
        cause = f" ({stated}: {self.cause})" if self.cause else " (cause not established)"
        if self.word == "partly":
            return f"partly: does not hold: {missing}{cause}"
        return f"not reproduced: {missing}{cause}"


Values = Mapping[str, Any]
"""What a preset measured on its campaign, as JSON: the quantities its judge reads."""


@dataclass(frozen=True)
class Preset:
    """One published experiment: where its claim is made, what it says, the campaign that reruns
    it, the figure, and the check.

    ``measure`` reads the campaign into :data:`Values` (JSON, stored beside the preset after a full
    run); ``judge`` tests the claim's parts on the values of this preset and of the presets in
    ``with_`` (the other side of a dispute), keyed by ID. A preset without ``judge`` is "figure
    only": its paper states no result to check. ``cause`` says why the parts that do not hold do
    not (a model limit or a setup ccarena cannot build); it is shown only then."""

    id: str
    title: str
    paper: str
    file: str
    claim: str
    where: str
    figure: Callable[[Campaign], Any]
    measure: Callable[[Campaign], Values] | None = None
    judge: Callable[[Mapping[str, Values]], Sequence[Part]] | None = None
    reported: str = ""
    """What the paper reports in numbers ("" when it gives none)."""
    cause: str = ""
    with_: tuple[str, ...] = ()
    quick: Mapping[str, Any] = field(default_factory=dict)
    kernel: Mapping[str, Any] = field(default_factory=dict)
    """Overrides of the full form for the kernel's run through the emulator (real time: the
    campaign file's header states what they leave out and why); empty when the full form runs."""
    needs: tuple[str, ...] = ()
    testbed: bool = False
    """The paper's numbers came from a testbed of Linux hosts: the ``host`` variant reruns the
    campaign in the simulator with those hosts (:data:`TESTBED_HOST`)."""

    @property
    def path(self) -> Path:
        return SCENARIOS / self.file

    def missing(self) -> list[str]:
        """The features this preset needs that the engine does not have yet."""
        return [n for n in self.needs if not available(n)]

    def verdict(self, values: Mapping[str, Values]) -> Verdict:
        """The claim judged on ``values`` (this preset's and its dispute's, by ID)."""
        if self.judge is None:
            return Verdict("figure only")
        return Verdict.of(self.judge(values), self.cause)

    @property
    def deviations(self) -> list[str]:
        """The deviations from the paper's setup, as the campaign file's header states them (the
        items under "# Deviations from the paper")."""
        lines = self.path.read_text(encoding="utf-8").split("\nname")[0].splitlines()
        out: list[str] = []
        inside = False
        for line in lines:
            text = line[1:].strip() if line.startswith("#") else ""
            if text.lower().startswith("deviations from the paper"):
                inside = True
                continue
            if inside:
                if text.startswith("- "):
                    out.append(text[2:])
                elif text and out and line.startswith("#   "):
                    out[-1] += " " + text
                else:
                    inside = False
        return out

    def document(self, quick: bool = False, backend: str = "sim") -> dict[str, Any]:
        """The campaign file as a document: its quick form when asked, else its kernel form for
        ``backend = "emu"``."""
        from ..spec.document import read_toml
        from ..spec.errors import SpecError

        if not self.path.is_file():
            raise SpecError(
                self.id,
                f"campaign file {self.path} not found: presets read a ccarena checkout's scenarios/ folder "
                "(set CCARENA_SCENARIOS to it when ccarena is installed elsewhere)",
            )
        raw = read_toml(self.path)
        if backend == "host":
            tcp = dict(raw.get("tcp", {}))
            tcp["host"] = dict(TESTBED_HOST)
            raw = {**raw, "tcp": tcp}
        if quick:
            return quick_document(raw, self.quick)
        return quick_document(raw, self.kernel) if backend == "emu" and self.kernel else raw

    def count(self, quick: bool = False) -> int:
        """Runs of the campaign (points × repeats × (1 + baselines)), read from [sweep] without validating."""
        from ..campaign.grid import _axes, _baselines, _repeat

        sweep = dict(self.document(quick).get("sweep", {}))
        points = math.prod(len(group[0][1]) for group in _axes(sweep)) if _axes(sweep) else 1
        return points * _repeat(sweep) * (1 + len(_baselines(sweep)))

    def estimate_s(self, quick: bool = False, jobs: int = 2) -> float | None:
        """Wall time estimate on this machine: simulated packets / PACKETS_PER_S, spread over ``jobs``
        (None when the preset cannot run yet)."""
        if self.missing():
            return None
        from ..campaign.campaign import estimate_packets, plan

        g, _ = plan(self.document(quick))
        return estimate_packets(g) / PACKETS_PER_S / max(1, min(jobs, len(g.runs))) + 0.3 * len(g.runs) / max(1, jobs)


@dataclass(frozen=True)
class Dispute:
    """Two papers' claims about one question: the presets of each side (``ids``), the question,
    the two claims and setups side by side (``sides``), and ``settle``: from every side's values
    (by ID) and the backend they come from (``sim``, or a key of :data:`VARIANTS`), what that
    model supports and under which conditions."""

    ids: tuple[str, ...]
    question: str
    sides: str
    settle: Callable[[Mapping[str, Values], str], str]


def quick_document(raw: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with the overrides applied; ``sweep.KEY`` sets (or with None removes) a key of [sweep],
    and any other dotted path set to None is removed (``topology.bottleneck.jitter``: the file's
    jitter dropped)."""
    from ..spec.document import apply_overrides, copy_document, parse_path

    doc = copy_document(dict(raw))
    plain = {}
    for key, value in overrides.items():
        if key.startswith("sweep."):
            table = doc.setdefault("sweep", {})
            name = key[len("sweep.") :]
            if value is None:
                table.pop(name, None)
                table["zip"] = [z for z in table.get("zip", []) if name not in z]
                if not table["zip"]:
                    table.pop("zip")
            else:
                table[name] = value
        elif value is None:
            *parents, last = parse_path(key)
            node: Any = doc
            for part in parents:
                node = node[part]
            del node[last]
        else:
            plain[key] = value
    return apply_overrides(doc, plain) if plain else doc


@functools.cache
def available(feature: str) -> bool:
    """Whether the engine has ``feature``: "xcp" (the algorithm) or "red" (the queue discipline)."""
    from .. import _core

    if feature == "xcp":
        return "xcp" in {a["name"] for a in _core.cc_algorithms()}
    if feature == "red":
        from ..spec import SpecError, load_spec

        try:
            load_spec(
                {
                    "duration": "1s",
                    "topology": {"rtt": "10ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp", "qdisc": "red"}},
                    "flows": [{"cc": "reno"}],
                }
            )
        except SpecError:
            return False
        return True
    raise ValueError(f"unknown feature {feature!r}")
