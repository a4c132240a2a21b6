"""The D series, as figures only until its claims are restated and checked part by part."""

from __future__ import annotations

from typing import Any

from .common import LEE
from .registry import Preset

__all__ = ["D_SERIES"]


def _figure(c: Any) -> Any:
    from .figures import new_figure

    fig, _ = new_figure(1)
    return fig


D_SERIES = [
    Preset("D1", "Utilisation against bandwidth and RTT", LEE, "lee-chuvpilo-2002/d1-utilisation.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D2", "Jain's index against the number of flows", LEE, "lee-chuvpilo-2002/d2-fairness-vs-flows.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D3", "TCP-friendliness of HighSpeed TCP", LEE, "lee-chuvpilo-2002/d3-friendliness.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D4", "Convergence after a flow joins at 40 s", LEE, "lee-chuvpilo-2002/d4-convergence.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D5", "Taking suddenly freed bandwidth", LEE, "lee-chuvpilo-2002/d5-freed-bandwidth.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D6", "Buffer size against utilisation and fairness, DropTail and RED", LEE, "lee-chuvpilo-2002/d6-buffer-size.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("D7", "Reverse-direction flows", LEE, "lee-chuvpilo-2002/d7-reverse-traffic.toml", claim="(not yet restated)", where="-", figure=_figure),
]
