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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..campaign import Campaign

__all__ = ["SCENARIOS", "Check", "Preset", "available", "quick_document"]

SCENARIOS = Path(os.environ.get("CCARENA_SCENARIOS") or Path(__file__).resolve().parents[3] / "scenarios")
"""The campaign files: the checkout's scenarios/ folder (``make install`` installs the package in
place), or the folder the environment variable ``CCARENA_SCENARIOS`` names."""

PACKETS_PER_S = 0.7e6
"""Upper-bound data packets (the bottleneck's rate x duration, campaign.estimate_packets) one worker
gets through per wall second on this machine (2 cores, shared). Measured over the full presets:
from 0.7e6 (A1 and A4, fast links filled by long-lived flows) to 5e6 (E1, links that random loss
keeps half empty); the lowest is used, so ``--list`` gives an upper estimate."""


@dataclass(frozen=True)
class Check:
    """A claim checked against a campaign: whether ccarena agrees, and the numbers that say so.

    ``caveat``: the part of the paper's claim ccarena does not reproduce although it agrees
    with the part the check tests (shown as partial agreement)."""

    agrees: bool
    measured: str
    caveat: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "agrees", bool(self.agrees))


@dataclass(frozen=True)
class Preset:
    """One published experiment."""

    id: str
    title: str
    paper: str
    file: str
    claim: str
    figure: Callable[[Campaign], Any]
    check: Callable[[Campaign], Check] | None = None
    quick: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    expected: bool = True
    """Whether ccarena's model is expected to reproduce the claim (the tests assert it only then)."""

    @property
    def path(self) -> Path:
        return SCENARIOS / self.file

    def missing(self) -> list[str]:
        """The features this preset needs that the engine does not have yet."""
        return [n for n in self.needs if not available(n)]

    def document(self, quick: bool = False) -> dict[str, Any]:
        """The campaign file as a document, in its quick form when asked."""
        from ..spec.document import read_toml
        from ..spec.errors import SpecError

        if not self.path.is_file():
            raise SpecError(
                self.id,
                f"campaign file {self.path} not found: presets read a ccarena checkout's scenarios/ folder "
                "(set CCARENA_SCENARIOS to it when ccarena is installed elsewhere)",
            )
        raw = read_toml(self.path)
        return quick_document(raw, self.quick) if quick else raw

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


def quick_document(raw: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with the overrides applied; ``sweep.KEY`` sets (or with None removes) a key of [sweep]."""
    from ..spec.document import apply_overrides, copy_document

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
