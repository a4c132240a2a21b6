"""A link's capacity over a span of time, from the engine's description of the link: the integral of its
rate (a constant rate, or a schedule of rates), or a Mahimahi trace's opportunities times one MTU.
Utilisation over a span is the bits the link sent over this."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..spec.engine import EngineConfig

__all__ = ["capacity_bits", "link_utilization"]

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000
MTU_BITS = 1500 * 8


def _trace_count_upto(times_ms: list[int], t_ns: int, once: bool) -> int:
    """Opportunities at times up to ``t_ns``; pass p of a looping trace lies in [p·P, (p+1)·P], P its last
    time, so passes 0..m, m = t // P, lie wholly before and pass m counts its times up to t - m·P."""
    at = [m * NS_PER_MS for m in times_ms]
    if once:
        return bisect.bisect_right(at, t_ns)
    period = at[-1]
    m = t_ns // period
    return m * len(at) + bisect.bisect_right(at, t_ns - m * period)


def capacity_bits(link: EngineConfig, t0_ns: int, t1_ns: int) -> float:
    """Bits the engine's ``link`` could carry from ``t0_ns`` to ``t1_ns`` (a trace: its opportunities in
    ``(t0_ns, t1_ns]``, so that a packet leaving at ``t1_ns`` counts)."""
    model = link.model
    if model is not None and model.schedule is not None:
        steps = [(int(t), int(r)) for t, r in model.schedule]
        bits = 0.0
        for k, (a, r) in enumerate(steps):
            b = steps[k + 1][0] if k + 1 < len(steps) else max(t1_ns, a)
            lo, hi = max(a, t0_ns), min(b, t1_ns)
            if hi > lo:
                bits += r * (hi - lo) / NS_PER_S
        return bits
    if model is not None and model.trace is not None:
        tr = model.trace
        times, once = list(tr.opportunities_ms), bool(tr.once)
        return (_trace_count_upto(times, t1_ns, once) - _trace_count_upto(times, t0_ns, once)) * MTU_BITS
    return float(link.rate_bps) * (t1_ns - t0_ns) / NS_PER_S


def link_utilization(tx_bytes: float, link: EngineConfig, t0_ns: int, t1_ns: int) -> float:
    """``tx_bytes·8`` over the link's capacity from ``t0_ns`` to ``t1_ns``; NaN when that capacity is 0."""
    model = link.model
    if model is None or (model.schedule is None and model.trace is None):
        # A constant rate: tx_bytes·8 / (rate·seconds), as metrics.utilization computes it.
        rate, seconds = float(link.rate_bps), (t1_ns - t0_ns) / NS_PER_S
        if seconds <= 0 or rate <= 0:
            return float("nan")
        return tx_bytes * 8.0 / (rate * seconds)
    cap = capacity_bits(link, t0_ns, t1_ns)
    return tx_bytes * 8.0 / cap if cap > 0 else float("nan")
