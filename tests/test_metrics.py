"""Metric functions against examples worked by hand (Jain's index: Jain, Chiu and Hawe, DEC TR-301, 1984)."""

import math

import numpy as np
import pytest
from ccarena.analysis.metrics import jain_index, jain_window_ns, rate_bps, utilization, window_rates_bps


@pytest.mark.parametrize(
    ("xs", "expected"),
    [
        ((10, 20, 30), 0.857),
        ((5, 5, 5, 5), 1.0),
        ((1, 0, 0, 0), 0.25),
        ((7, 3), 0.862),
    ],
)
def test_jain_examples(xs: tuple[float, ...], expected: float) -> None:
    assert jain_index(xs) == pytest.approx(expected, abs=5e-4)


def test_jain_exact_values() -> None:
    assert jain_index([10, 20, 30]) == pytest.approx(3600 / (3 * 1400))
    assert jain_index([7, 3]) == pytest.approx(100 / (2 * 58))
    # k of n sharing equally, the rest nothing: k/n.
    assert jain_index([4, 4, 4, 0, 0]) == pytest.approx(3 / 5)


def test_jain_edge_cases() -> None:
    assert jain_index([0, 0, 0]) == 1.0
    assert jain_index([42]) == 1.0
    with pytest.raises(ValueError):
        jain_index([])
    with pytest.raises(ValueError):
        jain_index([1, -1])
    with pytest.raises(ValueError):
        jain_index([1, math.nan])


def test_utilisation_example() -> None:
    # 100 Mbit/s for 10 s, 1.1e8 bytes sent -> 88 %.
    assert utilization(1.1e8, 100e6, 10) == pytest.approx(0.88)
    assert math.isnan(utilization(1, 100e6, 0))


def test_rate() -> None:
    assert rate_bps(1_250_000, 1.0) == 10e6
    assert math.isnan(rate_bps(1, 0))


def test_jain_window_is_the_second_half_on_interval_boundaries() -> None:
    assert jain_window_ns(10_000_000_000, 100_000_000) == (5_000_000_000, 10_000_000_000)
    # 5.05 s run with 100 ms intervals: the window starts at the last boundary before half time.
    assert jain_window_ns(5_050_000_000, 100_000_000) == (2_500_000_000, 5_050_000_000)


def test_window_rates_use_each_flows_time_in_the_window() -> None:
    s = 1_000_000_000
    t = np.array([1, 1, 2, 2, 3, 3, 4, 4], dtype=np.uint64) * s
    flow = np.array([0, 1] * 4, dtype=np.uint32)
    nbytes = np.array([100, 0, 100, 0, 100, 50, 100, 50], dtype=np.uint64)
    # Flow 1 starts at 2 s; window (2 s, 4 s].
    rates = window_rates_bps(t, flow, nbytes, [(0, 4 * s), (2 * s, 4 * s)], (2 * s, 4 * s))
    assert rates == {0: 800.0, 1: 400.0}
    # Flow 1 ends before the window: left out.
    rates = window_rates_bps(t, flow, nbytes, [(0, 4 * s), (0, 2 * s)], (2 * s, 4 * s))
    assert set(rates) == {0}
