"""Delivery traces in Mahimahi's format (one line per delivery opportunity of one MTU, a time in ms;
the file loops on its last time), and the recipes ccarena makes its own with.

Every recipe places opportunities by cumulative rounding of the intended rate, so a trace's integral
is exact: after ``t`` ms it holds ``floor(∫_0^t rate / 12 kbit)`` opportunities. The shipped traces
(``ccarena list traces``) were made with :func:`write` by ``python -m ccarena.traces``; each has a
``.md`` beside it with its recipe and parameters. Public traces (Mahimahi's cellular traces,
Pantheon's calibrated links) are used by giving their path as a link's ``trace``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["FOLDER", "cellular", "constant", "from_rate", "poisson", "square", "write"]

FOLDER = Path(__file__).resolve().parent
BITS_PER_OPPORTUNITY = 1500 * 8


def from_rate(rate_bps: Callable[[int], float], period_ms: int) -> list[int]:
    """Opportunity times for ``rate_bps(ms)`` (the rate during millisecond ms, 1-based) over one
    period, by cumulative rounding. The last line must be the period (a pass ends on its last time),
    so the last millisecond must carry an opportunity."""
    out: list[int] = []
    bits = 0.0
    count = 0
    for ms in range(1, period_ms + 1):
        bits += rate_bps(ms) / 1000.0
        target = math.floor(bits / BITS_PER_OPPORTUNITY + 1e-9)
        out += [ms] * (target - count)
        count = target
    if not out or out[-1] != period_ms:
        raise ValueError(f"the trace's last millisecond ({period_ms}) carries no opportunity; "
                         "the period would be wrong (put an active millisecond last)")
    return out


def constant(rate_bps: float, period_ms: int = 1000) -> list[int]:
    """A constant rate (12 Mbit/s per opportunity per ms)."""
    return from_rate(lambda _ms: rate_bps, period_ms)


def square(low_bps: float, high_bps: float, half_ms: int) -> list[int]:
    """``low`` for ``half_ms``, then ``high`` for ``half_ms`` (high last, so the period ends on an opportunity)."""
    return from_rate(lambda ms: low_bps if ms <= half_ms else high_bps, 2 * half_ms)


def poisson(rate_bps: float, period_ms: int, seed: int) -> list[int]:
    """Opportunities at Poisson times of mean rate ``rate_bps`` (Pantheon's ``*-poisson`` traces), rounded
    down to the ms; the last line is set to the period."""
    rng = random.Random(seed)
    mean_gap_ms = BITS_PER_OPPORTUNITY / rate_bps * 1000.0
    t = 0.0
    out: list[int] = []
    while True:
        t += rng.expovariate(1.0 / mean_gap_ms)
        if t >= period_ms:
            break
        out.append(max(1, int(t)))
    out.append(period_ms)
    return out


def cellular(seed: int, period_ms: int = 60_000, start_bps: float = 12e6, sigma: float = 0.1,
             low_bps: float = 0.5e6, high_bps: float = 50e6, step_ms: int = 20) -> list[int]:  # fmt: skip
    """A "cellular-like" link (a ccarena recipe, not a measurement): every ``step_ms`` the log of the
    rate takes a normal step of standard deviation ``sigma``, kept within [low, high]; within a step,
    opportunities at Poisson times of that rate."""
    rng = random.Random(seed)
    log_r = math.log(start_bps)
    out: list[int] = []
    t = 0.0
    for k in range(period_ms // step_ms):
        end = (k + 1) * step_ms
        rate = math.exp(log_r)
        gap = BITS_PER_OPPORTUNITY / rate * 1000.0
        t = max(t, k * step_ms)
        while True:
            t += rng.expovariate(1.0 / gap)
            if t >= end:
                t = end
                break
            out.append(max(1, int(t)))
        log_r = min(math.log(high_bps), max(math.log(low_bps), log_r + sigma * rng.gauss(0.0, 1.0)))
    out.append(period_ms)
    return out


def write(path: Path, times: Sequence[int]) -> None:
    """Writes a trace file (one time per line)."""
    path.write_text("".join(f"{t}\n" for t in times))


def mean_rate_bps(times: Sequence[int]) -> float:
    """A trace's own rate over one pass: lines · 1500 B · 8 / last time."""
    return len(times) * BITS_PER_OPPORTUNITY * 1000.0 / times[-1]
