"""The A series, as figures only until its claims are restated and checked part by part."""

from __future__ import annotations

from typing import Any

from .common import RHEE_XU
from .registry import Preset

__all__ = ["A_SERIES"]


def _figure(c: Any) -> Any:
    from .figures import new_figure

    fig, _ = new_figure(1)
    return fig


A_SERIES = [
    Preset("A1", "TCP-friendliness against bandwidth (simulation)", RHEE_XU, "rhee-xu-2005/a1-friendliness-sim.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("A2", "TCP-friendliness on the testbed: the utilisation split", RHEE_XU, "rhee-xu-2005/a2-friendliness-testbed.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("A3", "RTT fairness: 40 ms against 40, 120 and 240 ms", RHEE_XU, "rhee-xu-2005/a3-rtt-fairness.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("A4", "Stability: coefficient of variation of throughput", RHEE_XU, "rhee-xu-2005/a4-stability.toml", claim="(not yet restated)", where="-", figure=_figure),
]
