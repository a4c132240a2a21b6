"""The disputes between the source papers, each settled on both sides' campaigns.

Leith, Shorten and McCullagh (PFLDnet 2007) and Rhee's rebuttal (2007) disagree on CUBIC's
convergence (B2 and C1), its utilisation with small buffers (B5 and C3), its RTT fairness at a
tiny BDP (B6 and C4), and on what cwnd plots say about fairness (B3 and B4 against C2). A
dispute names the presets of both sides; reproducing any of them runs all, and the report says
which side ccarena's model supports under which conditions.
"""

from __future__ import annotations

from .registry import Dispute

__all__ = ["DISPUTES", "Dispute", "dispute_of"]


def _disputes() -> list[Dispute]:
    from .rhee_2007 import DISPUTES as C

    return list(C)


DISPUTES: list[Dispute] = _disputes()


def dispute_of(preset_id: str) -> Dispute | None:
    """The dispute a preset is one side of, or None."""
    for d in DISPUTES:
        if preset_id.upper() in d.ids:
            return d
    return None
