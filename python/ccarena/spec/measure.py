"""``[measure]``: what a run records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import fields as F
from .errors import SpecError
from .schema import MEASURE
from .units import describe, format_time

__all__ = ["Measure", "measure"]


@dataclass(frozen=True)
class Measure:
    """The resolved ``[measure]`` table."""

    interval_ns: int
    trace: bool

    def resolved(self) -> dict[str, Any]:
        """The ``[measure]`` table of ``spec.toml``."""
        return {"interval": format_time(self.interval_ns), "trace": self.trace}


def measure(raw: dict[str, Any], duration_ns: int) -> Measure:
    """Reads ``[measure]``: the trace interval (1 ms to the duration) and whether to trace."""
    m = F.table(raw.get("measure", {}), "measure")
    F.check_keys(m, "measure", MEASURE)
    interval_ns = F.time(m.get("interval", MEASURE.default("interval")), "measure.interval")
    if interval_ns < 1_000_000:
        raise SpecError("measure.interval", f"must be at least 1ms, got {describe(m.get('interval'))}")
    if interval_ns > duration_ns:
        raise SpecError(
            "measure.interval",
            f"must be at most the duration ({format_time(duration_ns)}), got {describe(m.get('interval'))}",
        )
    trace = F.boolean(m.get("trace", MEASURE.default("trace")), "measure.trace")
    return Measure(interval_ns, trace)
