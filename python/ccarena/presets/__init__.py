"""Presets: the published experiments of scenarios/, each one command (``ccarena reproduce ID``).

* :mod:`.registry` — :class:`Preset`, quick forms, the features a preset needs;
* :mod:`.measures` — the figures' quantities (Jain, CoV, share, ratio) from a campaign's traces;
* :mod:`.figures` — drawing them with the papers' axes;
* :mod:`.experiments` — the experiments, by paper;
* :mod:`.reproduce` — campaign, report, figure and claim check in one call.
"""

from __future__ import annotations

from .experiments import PRESETS
from .registry import Check, Preset
from .reproduce import PresetUnavailable, Reproduction, reproduce

__all__ = ["PRESETS", "Check", "Preset", "PresetUnavailable", "Reproduction", "get", "reproduce"]


def get(preset_id: str) -> Preset:
    """The preset of an experiment ID (case-insensitive), or KeyError naming the known ones."""
    for p in PRESETS:
        if p.id.lower() == preset_id.lower():
            return p
    raise KeyError(f"unknown experiment {preset_id!r} (known: {', '.join(p.id for p in PRESETS)})")
