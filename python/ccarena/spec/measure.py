"""``[measure]``: what a run records, and how its metrics are taken.

``packets = ["10s", "10.5s"]`` (off by default) also records every packet
event at the links between those two times (from inclusive, to exclusive,
within the duration) into ``packets.parquet``: one row per enqueue,
dequeue (start of transmission), drop (with its reason), ECN mark and
delivery, of data and of ACKs; see :mod:`ccarena.results.packets` for the
columns and ``ccarena pcap`` for a capture file Wireshark reads. Both
backends keep it: with ``--backend emu`` the emulator logs the kernel's
segments at the links it serves, on its real clock (what differs is in
:mod:`ccarena.results.packets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import fields as F
from .errors import SpecError
from .schema import CONVERGENCE, MEASURE
from .units import describe, format_time

__all__ = ["Measure", "measure"]


@dataclass(frozen=True)
class Measure:
    """The resolved ``[measure]`` table. ``window_ns`` None means the second half of the run;
    ``packets_ns`` None: no packet log."""

    interval_ns: int
    trace: bool
    window_ns: tuple[int, int] | None
    average_ns: int
    standard: tuple[str, ...]
    standard_groups: tuple[int, ...] | None
    rtt_fairness: tuple[int, int] | None
    delta: float
    hold_ns: int
    jain: float
    packets_ns: tuple[int, int] | None = None

    def resolved(self) -> dict[str, Any]:
        """The ``[measure]`` table of ``spec.toml``."""
        out: dict[str, Any] = {"interval": format_time(self.interval_ns), "trace": self.trace}
        if self.window_ns is not None:
            out["window"] = [format_time(t) for t in self.window_ns]
        out["average"] = format_time(self.average_ns)
        out["standard"] = list(self.standard)
        if self.standard_groups is not None:
            out["standard_groups"] = list(self.standard_groups)
        if self.rtt_fairness is not None:
            out["rtt_fairness"] = list(self.rtt_fairness)
        out["convergence"] = {"delta": self.delta, "hold": format_time(self.hold_ns), "jain": self.jain}
        if self.packets_ns is not None:
            out["packets"] = [format_time(t) for t in self.packets_ns]
        return out

    def engine(self) -> dict[str, Any]:
        """What the metrics need, in base units (kept beside the engine's configuration)."""
        return {
            "window_ns": list(self.window_ns) if self.window_ns is not None else None,
            "average_ns": self.average_ns,
            "standard": list(self.standard),
            "standard_groups": list(self.standard_groups) if self.standard_groups is not None else None,
            "rtt_fairness": list(self.rtt_fairness) if self.rtt_fairness is not None else None,
            "delta": self.delta,
            "hold_ns": self.hold_ns,
            "jain": self.jain,
            **({"packets_ns": list(self.packets_ns)} if self.packets_ns is not None else {}),
        }


def _window(value: Any, duration_ns: int, key: str = "window", example: str = '["30s", "300s"]') -> tuple[int, int]:
    path = f"measure.{key}"
    if not isinstance(value, list) or len(value) != 2:
        raise SpecError(path, f"expected [from, to] such as {example}, got {describe(value)}")
    lo = F.time(value[0], f"{path}[0]")
    hi = F.time(value[1], f"{path}[1]")
    if hi <= lo:
        raise SpecError(f"{path}[1]", f"must be after {path}[0] ({format_time(lo)}), got {describe(value[1])}")
    if hi > duration_ns:
        raise SpecError(
            f"{path}[1]", f"must be at most the duration ({format_time(duration_ns)}), got {describe(value[1])}"
        )
    return lo, hi


def _groups(value: Any, path: str, n_groups: int, exactly: int | None = None) -> tuple[int, ...]:
    want = f"a list of {exactly} flow group indices" if exactly else "a list of flow group indices"
    if not isinstance(value, list) or (exactly is not None and len(value) != exactly):
        raise SpecError(path, f"expected {want} (e.g. [0, 1]), got {describe(value)}")
    return tuple(F.integer(g, f"{path}[{i}]", 0, max(n_groups - 1, 0)) for i, g in enumerate(value))


def measure(raw: dict[str, Any], duration_ns: int, n_groups: int = 0) -> Measure:
    """Reads ``[measure]``: the trace interval and switch, and how metrics are taken."""
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
    window = _window(m["window"], duration_ns) if "window" in m else None
    average_ns = F.positive_time(m.get("average", MEASURE.default("average")), "measure.average")
    standard = m.get("standard", MEASURE.default("standard"))
    if not isinstance(standard, list) or not all(isinstance(x, str) for x in standard):
        raise SpecError("measure.standard", f'expected a list of algorithm names such as ["reno"], got {describe(standard)}')
    std_groups = _groups(m["standard_groups"], "measure.standard_groups", n_groups) if "standard_groups" in m else None
    rtt_pair = m.get("rtt_fairness")
    rtt_fair = _groups(rtt_pair, "measure.rtt_fairness", n_groups, 2) if rtt_pair is not None else None
    conv = F.table(m.get("convergence", {}), "measure.convergence")
    F.check_keys(conv, "measure.convergence", CONVERGENCE)
    delta = F.number(conv.get("delta", CONVERGENCE.default("delta")), "measure.convergence.delta", 0.0, 1.0, lo_open=True)
    hold_ns = F.time(conv.get("hold", CONVERGENCE.default("hold")), "measure.convergence.hold")
    jain = F.number(conv.get("jain", CONVERGENCE.default("jain")), "measure.convergence.jain", 0.0, 1.0, lo_open=True)
    packets = _window(m["packets"], duration_ns, "packets", '["10s", "10.5s"]') if "packets" in m else None
    return Measure(
        interval_ns, trace, window, average_ns, tuple(standard), std_groups, rtt_fair, delta, hold_ns, jain, packets
    )
