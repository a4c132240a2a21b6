"""The E series, as figures only until its claims are restated and checked part by part."""

from __future__ import annotations

from typing import Any

from .common import LIN
from .registry import Preset

__all__ = ["E_SERIES"]


def _figure(c: Any) -> Any:
    from .figures import new_figure

    fig, _ = new_figure(1)
    return fig


E_SERIES = [
    Preset("E1", "CUBIC and BBR under random loss", LIN, "lin-2024/e1-random-loss.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("E2", "Two flows of the same algorithm", LIN, "lin-2024/e2-two-flows.toml", claim="(not yet restated)", where="-", figure=_figure),
    Preset("E3", "An application-limited 735 kbit/s stream", LIN, "lin-2024/e3-video-stream.toml", claim="(not yet restated)", where="-", figure=_figure),
]
