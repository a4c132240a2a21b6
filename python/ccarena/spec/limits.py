"""What the engine can represent, and what is representable but implausible.

The engine counts time in picoseconds in 64 bits (2^64 ps is 213 days) and
rates in bit/s; sums of a few times must not overflow, so every time is at
most :data:`MAX_TIME_NS`. Values beyond these limits are errors naming the
field and the allowed range; values inside them that are unlikely to be
meant (a link below 1 kbit/s, an RTT above 10 s, a buffer above 100 BDP,
more than 10 000 flows) run, with one warning each (:func:`warnings`).
"""

from __future__ import annotations

from typing import Any

from .engine import EngineConfig
from .errors import SpecError
from .units import describe, format_rate, format_time, parse_time

__all__ = [
    "MAX_BUFFER_PKTS",
    "MAX_RATE_BPS",
    "MAX_TIME_NS",
    "check_rate",
    "check_time",
    "warnings",
]

MAX_TIME_NS = 10**15
"""1 000 000 s (11.6 days): any time of an experiment; a few of them summed stay far below 2^64 ps."""
MAX_RATE_BPS = 10**13
"""10 Tbit/s: a 40-byte packet still takes 32 ps, a whole number of the engine's clock ticks."""
MAX_BUFFER_PKTS = 10**9
"""A queue of a billion packets (about 100 GB of packet slots) is the most the engine will hold."""

WARN_RATE_BPS = 1_000
WARN_RTT_NS = 10 * 10**9
WARN_BUFFER_BDP = 100
WARN_FLOWS = 10_000


def check_time(ns: int, value: Any, path: str) -> int:
    """A time the engine can represent."""
    if ns > MAX_TIME_NS:
        raise SpecError(path, f"must be at most {format_time(MAX_TIME_NS)} (11.6 days), got {describe(value)}")
    return ns


def check_rate(bps: int, value: Any, path: str) -> int:
    """A rate the engine can represent."""
    if bps > MAX_RATE_BPS:
        raise SpecError(path, f"must be at most {format_rate(MAX_RATE_BPS)}, got {describe(value)}")
    return bps


def warnings(resolved: dict[str, Any], engine: EngineConfig) -> list[str]:
    """One line per representable but implausible value: ``<field>: <why>``."""
    out = []
    for link, path in ((engine.bottleneck, "topology.bottleneck"), (engine.reverse, "topology.reverse")):
        rate = int(link.rate_bps)
        if rate < WARN_RATE_BPS:
            out.append(f"{path}.rate: {format_rate(rate)} is below 1kbps; a 1500-byte packet takes {12_000 / rate:g} s")
    for i, g in enumerate(resolved.get("flows", [])):
        # Every flow of a group has the group's RTT, written canonically (it parses back exactly).
        if parse_time(g["rtt"]) > WARN_RTT_NS:
            out.append(f"flows[{i}].rtt: {g['rtt']} is above 10s")
    flows = engine.flows
    if flows:
        # The BDP the buffer is measured in: topology.rtt, else the longest flow RTT (as "bdp" buffers are).
        topo_rtt = resolved["topology"].get("rtt")
        rtt_ns = parse_time(topo_rtt) if topo_rtt else max(int(f.rtt_ns) for f in flows)
        packet = int(flows[0].mss) + int(flows[0].header_bytes)
        bdp_pkts = int(engine.bottleneck.rate_bps) * rtt_ns / (8e9 * packet)
        limit = engine.bottleneck.buffer_pkts
        if limit is None:
            limit = int(engine.bottleneck.buffer_bytes) / (int(flows[0].mss) + int(flows[0].header_bytes))
        if bdp_pkts > 0 and limit > WARN_BUFFER_BDP * bdp_pkts:
            out.append(f"topology.bottleneck.buffer: {limit / bdp_pkts:.0f} BDP is above 100 BDP")
    if len(flows) > WARN_FLOWS:
        out.append(f"flows: {len(flows)} flows is more than 10000; see `ccarena run --dry-run` for the memory it needs")
    return out

