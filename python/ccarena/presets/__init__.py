"""Presets: the published experiments of scenarios/, each one command (``ccarena reproduce ID``).

* :mod:`.registry` — :class:`Preset`, quick forms, the features a preset needs;
* :mod:`.measures` — the figures' quantities (Jain, CoV, share, ratio) from a campaign's traces;
* :mod:`.figures` — drawing them with the papers' axes;
* :mod:`.common` — the citations and what the papers' modules share;
* :mod:`.rhee_xu_2005`, :mod:`.leith_2007`, :mod:`.rhee_2007`, :mod:`.lee_chuvpilo_2002`,
  :mod:`.lin_2024` — the experiments, by paper; :mod:`.experiments` collects them;
* :mod:`.disputes` — the disputes between the papers, each side's presets and what settles them;
* :mod:`.stored` — the full presets' stored results and the README's table made from them;
* :mod:`.reproduce` — campaigns, report, figure and the claim judged in one call.
"""

from __future__ import annotations

from .experiments import PRESETS
from .registry import VERDICTS, Dispute, Part, Preset, Verdict
from .reproduce import PresetUnavailable, Reproduction, reproduce

__all__ = [
    "PRESETS",
    "VERDICTS",
    "Dispute",
    "Part",
    "Preset",
    "PresetUnavailable",
    "Reproduction",
    "Verdict",
    "get",
    "reproduce",
]


def get(preset_id: str) -> Preset:
    """The preset of an experiment ID (case-insensitive), or KeyError naming the known ones."""
    for p in PRESETS:
        if p.id.lower() == preset_id.lower():
            return p
    raise KeyError(f"unknown experiment {preset_id!r} (known: {', '.join(p.id for p in PRESETS)})")
