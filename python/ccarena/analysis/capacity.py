"""A link's capacity over a span of time, from the engine's description of the link: the integral of its
rate (a constant rate, or a schedule of rates), or a Mahimahi trace's opportunities times one MTU.
Utilisation over a span is the bits the link sent over this.

A schedule's or a trace's capacity is counted by the engine's own code, the code that serves the link
(``_core.link_capacity_bits``, crates/sim/src/linkmodel/capacity.rs), so that the denominator of a
modelled link's utilisation is the capacity the simulator gave it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..spec.engine import EngineConfig

__all__ = ["capacity_bits", "link_utilization"]

NS_PER_S = 1_000_000_000


def capacity_bits(link: EngineConfig, t0_ns: int, t1_ns: int) -> float:
    """Bits the engine's ``link`` could carry from ``t0_ns`` to ``t1_ns`` (a trace: its opportunities in
    ``(t0_ns, t1_ns]``, so that a packet leaving at ``t1_ns`` counts)."""
    from .._core import link_capacity_bits

    return float(link_capacity_bits(link, int(t0_ns), int(t1_ns)))


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
