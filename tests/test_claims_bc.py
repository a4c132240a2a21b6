"""The B and C presets' checks (Leith, Shorten and McCullagh 2007; Rhee's rebuttal 2007) on values
made by hand: each claim is reproduced on data that bears it out and not on data that contradicts
it, and the disputes never call two contradicting claims reproduced on the same data."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from ccarena.presets import get
from ccarena.presets.disputes import DISPUTES, dispute_of
from ccarena.presets.leith_2007 import HALF_BACKOFF, convergence_time, longest_unfair_s, variant


def windows(name: Any, late_at: dict[float, float], end: float = 400.0) -> list[dict[str, Any]]:
    """Ensemble windows of 10 s: the early flow at 100 Mbit/s, the late one from 100 s at the
    share of it that ``late_at`` gives from each time on (0 before its first key)."""
    out = []
    t = 10.0
    while t <= end:
        share = 0.0
        for since, s in sorted(late_at.items()):
            if t > since:
                share = s
        out.append({"variant": name, "t_end_s": t, "early_bps": 100e6, "late_bps": share * 100e6 if t > 100 else 0.0})
        t += 10.0
    return out


def test_convergence_time_is_the_first_level_held_for_two_windows() -> None:
    w = windows("x", {100: 0.3, 150: 0.9})
    assert convergence_time(w, 100.0) == 50.0
    w = windows("x", {100: 0.9, 150: 0.5, 200: 0.85})
    assert convergence_time(w, 100.0) == 0.0
    assert convergence_time(windows("x", {100: 0.5}), 100.0) is None
    # one window at the level is not convergence; the first pair is
    w = windows("x", {100: 0.3, 150: 0.9, 160: 0.3, 250: 0.9})
    assert convergence_time(w, 100.0) == 150.0
    # the level reached in the last window only: not held, so not within the run
    assert convergence_time(windows("x", {100: 0.3, 390: 0.9}), 100.0) is None


def test_longest_unfair_stretch_counts_consecutive_windows() -> None:
    rows = []
    for w in range(10):
        ratio = 2.0 if 2 <= w <= 5 else 1.1
        rows += [{"w": w, "flow": 0, "v": ratio}, {"w": w, "flow": 1, "v": 1.0}]
    assert longest_unfair_s(pd.DataFrame(rows), "v") == 40.0


def test_window_growth_counts_only_increases_while_one_window_is_low() -> None:
    import numpy as np
    from ccarena.presets.leith_2007 import paired_growth

    t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    # flow a low (below 0.8 of b) until t = 3, then the two within 0.8 of each other
    a = np.array([50, 54, 51, 53, 95, 99], dtype=np.uint32)  # +4, -3 (wraps if subtracted unsigned), +2, +42, +4
    b = np.array([100, 110, 120, 100, 100, 104], dtype=np.uint32)  # +10, +10, -20, 0, +4
    g = paired_growth(t, list(a), list(b))
    assert g["intervals"] == 4  # (0,1], (1,2], (2,3], (3,4]: a is below 0.8 b at their starts
    assert g["low_pps"] == pytest.approx((4 + 2 + 42) / 3)
    assert g["high_pps"] == pytest.approx(10.0)
    # which flow is low does not depend on the order they are given in
    assert paired_growth(t, list(b), list(a)) == g
    assert paired_growth([0.0, 1.0], [5, 5], [5, 9])["intervals"] == 0


def test_variant_names_the_cubic_of_each_era() -> None:
    assert variant("cubic", {"beta": 0.7998046875, "hystart": False}) == "CUBIC 2.6"
    assert variant("cubic", {"beta": 0.7001953125, "hystart": True}) == "CUBIC (Linux today)"
    assert variant("cubic", {"beta": 0.5, "hystart": False}) == HALF_BACKOFF
    assert variant("cubic", {"beta": 0.8, "hystart": False, "fast_convergence": False}).endswith("convergence off")
    assert variant("htcp") == "H-TCP"


def b2(slow: float, half: float, growth: float = 0.6) -> dict[str, Any]:
    """B2 values: CUBIC 2.6 converging ``slow`` s after the join, backoff 0.5 ``half`` s after, the
    late flow's window growing ``growth`` times as fast as the early flow's."""
    return {
        "late_start_s": 100.0,
        "windows": windows("CUBIC 2.6", {100: 0.3, 100 + slow: 0.95})
        + windows(HALF_BACKOFF, {100: 0.3, 100 + half: 0.95}),
        "growth": [
            {"variant": "CUBIC 2.6", "repeat": i, "high_pps": 10.0, "low_pps": 10.0 * growth, "intervals": 50}
            for i in range(3)
        ],
    }


def c1(t: float, t20: float | None = None) -> dict[str, Any]:
    """C1 values: the second flow converging ``t`` s after its start at 100 % BDP and ``t20`` s (the
    same by default) at 20 % BDP."""
    t20 = t if t20 is None else t20
    return {
        "late_start_s": 100.0,
        "windows": windows(1.0, {100: 0.3, 100 + t: 0.9}) + windows(0.2, {100: 0.3, 100 + t20: 0.9}),
    }


def word(pid: str, values: dict[str, Any]) -> str:
    return get(pid).verdict(values).word


def test_b2_needs_slow_convergence_and_the_backoff_as_its_source() -> None:
    assert word("B2", {"B2": b2(200, 50)}) == "reproduced"
    # fast, no slower than with backoff 0.5, and the late flow growing as fast as the first
    assert word("B2", {"B2": b2(40, 40, 1.0)}) == "not reproduced"
    v = get("B2").verdict({"B2": b2(200, 200)})
    assert v.word == "partly" and [p.holds for p in v.parts] == [True, True, False]
    v = get("B2").verdict({"B2": b2(200, 50, 0.9)})
    assert v.word == "partly" and [p.holds for p in v.parts] == [True, False, True]


def test_c1_needs_good_convergence_much_faster_than_b2() -> None:
    assert word("C1", {"C1": c1(30), "B2": b2(200, 50)}) == "reproduced"
    assert word("C1", {"C1": c1(250), "B2": b2(200, 50)}) == "not reproduced"
    v = get("C1").verdict({"C1": c1(80), "B2": b2(120, 50)})  # within 100 s, but not twice as fast
    assert v.word == "partly"


def test_b2_and_c1_settle_as_a_dispute() -> None:
    d = dispute_of("C1")
    assert d is not None and d.ids == ("B2", "C1")
    said = d.settle({"B2": b2(200, 50), "C1": c1(30)})
    assert "slow by B2's measure (more than 100 s): yes" in said and "200 s" in said
    assert (
        "30 s at 100 % BDP, the buffer of his item 4 test (converges within 100 s, at least twice as fast as in B2)"
        in said
    )
    said = d.settle({"B2": b2(60, 50), "C1": c1(80)})
    assert "(more than 100 s): no" in said and "(converges within 100 s, not twice as fast as in B2)" in said


def util_rows(name: str, utils: dict[float, float]) -> list[dict[str, Any]]:
    return [
        {"variant": name, "rate_bps": 250e6, "buffer_bdp": b, "repeat": r, "util": u}
        for b, u in utils.items()
        for r in range(3)
    ]


def test_b5_and_c3_cannot_both_hold_on_the_same_data() -> None:
    low = util_rows("CUBIC 2.6", {0.02: 0.45, 0.1: 0.5, 0.2: 0.55, 0.5: 0.9})
    high = util_rows("CUBIC 2.6", {0.02: 0.9, 0.1: 0.95, 0.2: 0.97, 0.5: 1.0})
    for rows in (low, high):
        b5 = word("B5", {"B5": {"runs": rows}})
        c3 = word("C3", {"C3": {"runs": rows}})
        assert {b5, c3} == {"reproduced", "not reproduced"}
    assert word("B5", {"B5": {"runs": low}}) == "reproduced"
    assert word("C3", {"C3": {"runs": high}}) == "reproduced"
    d = dispute_of("B5")
    assert d is not None and "Leith et al.'s side" in d.settle({"B5": {"runs": low}, "C3": {"runs": low}})


def rtt_rows(short: str, long: str, first: float, second: float, rate: float = 1e6, **kw: Any) -> list[dict]:
    base = {"rate_bps": rate, "buffer": kw.get("buffer", "13 KB"), "short": short, "long": long, "repeat": 0}
    extra = {"long_rtt": kw["long_rtt"]} if "long_rtt" in kw else {}
    return [
        {**base, **extra, "order": "short first", "ratio": first},
        {**base, **extra, "order": "long first", "ratio": second},
    ]


def test_b6_needs_the_start_order_to_change_the_split_at_both_window_sizes() -> None:
    dep = rtt_rows("CUBIC 2.6", "CUBIC 2.6", 2.0, 6.0, 250e6) + rtt_rows("CUBIC 2.6", "CUBIC 2.6", 3.0, 9.0)
    assert word("B6", {"B6": {"runs": dep}}) == "reproduced"
    same = rtt_rows("CUBIC 2.6", "CUBIC 2.6", 5.0, 5.5, 250e6) + rtt_rows("CUBIC 2.6", "CUBIC 2.6", 3.0, 3.2)
    assert word("B6", {"B6": {"runs": same}}) == "not reproduced"


def c4_rows(cubic_pair: float, htcp_pair: float, cubic_mixed: float, htcp_mixed: float) -> list[dict]:
    rows = []
    for s, r in (("CUBIC 2.6", cubic_pair), ("H-TCP", htcp_pair), ("NewReno", 10.0)):
        rows += rtt_rows(s, s, r, r, long_rtt="160ms")
    for buf in ("13 KB", "26 KB"):
        for s, r in (("CUBIC 2.6", cubic_mixed), ("H-TCP", htcp_mixed), ("NewReno", 10.0)):
            rows += rtt_rows(s, "NewReno", r, r, buffer=buf, long_rtt="162ms")
    return rows


def test_c4_compares_each_pair_with_newreno_against_the_same_long_rtt() -> None:
    """The NewReno pair at 160 ms and NewReno against NewReno at 162 ms are different runs: a CUBIC
    pair as fair as the first is judged against the first only."""
    rows = c4_rows(10, 10, 10, 10)
    for r in rows:
        if r["short"] == "NewReno" and r["long_rtt"] == "162ms":
            r["ratio"] = 100.0
    v = get("C4").verdict({"C4": {"runs": rows}})
    assert [p.holds for p in v.parts] == [True, True, False, False]


def test_c4_needs_cubic_and_htcp_as_rtt_fair_as_newreno() -> None:
    assert word("C4", {"C4": {"runs": c4_rows(11, 9, 12, 8)}}) == "reproduced"
    assert word("C4", {"C4": {"runs": c4_rows(1, 40, 30, 2)}}) == "not reproduced"
    v = get("C4").verdict({"C4": {"runs": c4_rows(11, 40, 12, 40)}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [True, False, True, False]


def stretch_rows(cwnd: list[float], rate: list[float]) -> list[dict[str, Any]]:
    return [
        {"variant": "CUBIC 2.6", "repeat": i, "cwnd_s": c, "rate_s": r}
        for i, (c, r) in enumerate(zip(cwnd, rate, strict=True))
    ]


def test_b3_tests_sustained_unfairness_in_cwnd_and_in_rate() -> None:
    assert word("B3", {"B3": {"runs": stretch_rows([200, 150, 300], [120, 110, 200])}}) == "reproduced"
    v = get("B3").verdict({"B3": {"runs": stretch_rows([200, 150, 300], [20, 10, 30])}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [True, False]
    assert word("B3", {"B3": {"runs": stretch_rows([20, 30, 10], [10, 20, 0])}}) == "not reproduced"


def cov_rows(cubic: float, htcp: float) -> list[dict[str, Any]]:
    return [{"variant": "CUBIC 2.6", "repeat": i, "cov": cubic} for i in range(3)] + [
        {"variant": "H-TCP", "repeat": i, "cov": htcp} for i in range(3)
    ]


@pytest.mark.parametrize(("cubic", "htcp", "expected"), [(0.1, 0.11, "reproduced"), (0.3, 0.1, "not reproduced")])
def test_b4_needs_similar_variation_for_cubic_and_htcp(cubic: float, htcp: float, expected: str) -> None:
    assert word("B4", {"B4": {"runs": cov_rows(cubic, htcp)}}) == expected


def test_c2_needs_rates_to_vary_much_less_than_cwnds() -> None:
    calm = [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.05} for f in range(3)]
    busy = [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.28} for f in range(3)]
    assert word("C2", {"C2": {"flows": calm}}) == "reproduced"
    assert word("C2", {"C2": {"flows": busy}}) == "not reproduced"


def test_every_dispute_names_presets_that_exist_and_each_preset_is_in_one_at_most() -> None:
    seen: list[str] = []
    for d in DISPUTES:
        for i in d.ids:
            get(i)
            seen.append(i)
    assert len(seen) == len(set(seen))
    assert {"B2", "C1", "B5", "C3", "B6", "C4", "B3", "B4", "C2"} <= set(seen)


def test_b1_and_b7_are_figures_only() -> None:
    """The slides state the grid (B1) and show the friendliness figure (B7) without a result."""
    assert get("B1").verdict({}).word == "figure only"
    assert get("B7").verdict({}).word == "figure only"


def test_the_rtt_and_cwnd_disputes_say_which_parts_hold() -> None:
    b6 = rtt_rows("CUBIC 2.6", "CUBIC 2.6", 2.0, 6.0, 250e6) + rtt_rows("CUBIC 2.6", "CUBIC 2.6", 3.0, 3.1)
    said = dispute_of("B6").settle({"B6": {"runs": b6}, "C4": {"runs": c4_rows(11, 9, 12, 8)}})  # type: ignore[union-attr]
    assert "start order at large windows (250 Mbit/s): holds" in said
    assert "start order at small windows (1 Mbit/s, 13 KB): does not hold" in said
    assert "two CUBIC flows have NewReno's RTT fairness (13 KB): holds" in said
    values = {
        "B3": {"runs": stretch_rows([200, 150, 300], [20, 10, 30])},
        "B4": {"runs": cov_rows(0.1, 0.11)},
        "C2": {"flows": [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.05} for f in range(3)]},
    }
    said = dispute_of("C2").settle(values)  # type: ignore[union-attr]
    assert "sustained for 100 s or more in cwnd: holds" in said
    assert "in rate at the bottleneck: does not hold" in said
    assert "are similar (CoV of throughput): holds" in said and "at most half as much as cwnds: holds" in said


def test_b2_counts_a_flow_that_never_converges_as_slow() -> None:
    """A second flow still short of 80 % at the end has not converged: slow, and slower than backoff 0.5."""
    values = b2(200, 50)
    values["windows"] = windows("CUBIC 2.6", {100: 0.5}) + windows(HALF_BACKOFF, {100: 0.3, 150: 0.95})
    v = get("B2").verdict({"B2": values})
    assert [p.holds for p in v.parts] == [True, True, True]
    assert "not within the run" in v.parts[0].measured


def test_b2_convergence_is_not_moved_by_a_late_dip() -> None:
    """Reached and held for a second window is converged; one window below the level later in the
    run does not move the time (it did when the measure asked the level to hold to the end)."""
    w = windows("x", {100: 0.9, 320: 0.79, 330: 0.9})
    assert convergence_time(w, 100.0) == 0.0


def test_c1_compares_with_b2_at_b2s_buffer() -> None:
    """The second part compares the two background mixes at one buffer (B2's 20 %): fast at 100 %
    BDP and slow at 20 % is not "much faster than in Leith et al.'s test"."""
    v = get("C1").verdict({"C1": c1(30, t20=150), "B2": b2(200, 50)})
    assert [p.holds for p in v.parts] == [True, False] and "150 s with SURGE against 200 s" in v.parts[1].measured
    v = get("C1").verdict({"C1": c1(150, t20=60), "B2": b2(200, 50)})
    assert [p.holds for p in v.parts] == [False, True]


def test_c1_against_a_b2_flow_that_never_converges() -> None:
    never = b2(200, 50)
    never["windows"] = windows("CUBIC 2.6", {100: 0.5}) + windows(HALF_BACKOFF, {100: 0.3, 150: 0.95})
    assert word("C1", {"C1": c1(60), "B2": never}) == "reproduced"


def test_b5_needs_every_small_buffer_low() -> None:
    """One buffer below 30 % BDP at full utilisation is enough to contradict "falls to around 50 %"."""
    rows = util_rows("CUBIC 2.6", {0.02: 0.45, 0.1: 0.5, 0.2: 0.9})
    assert word("B5", {"B5": {"runs": rows}}) == "not reproduced"
    assert word("C3", {"C3": {"runs": rows}}) == "not reproduced"


def test_b6_needs_the_orders_apart_not_only_their_means() -> None:
    """Means 1.5 times apart whose repeats overlap do not show a dependence on the start order."""
    rows = []
    for rate in (250e6, 1e6):
        for i, (a, z) in enumerate(((1.0, 1.2), (1.3, 1.4), (1.0, 3.9))):
            rows += [{**r, "repeat": i} for r in rtt_rows("CUBIC 2.6", "CUBIC 2.6", a, z, rate)]
    v = get("B6").verdict({"B6": {"runs": rows}})
    assert v.word == "not reproduced"


def test_b4_is_two_sided() -> None:
    """H-TCP varying half again as much as CUBIC contradicts "similar" as much as the reverse."""
    assert word("B4", {"B4": {"runs": cov_rows(0.1, 0.16)}}) == "not reproduced"
    assert word("B4", {"B4": {"runs": cov_rows(0.1, 0.14)}}) == "reproduced"


def test_c2_reads_the_median_flow() -> None:
    """Rates varying less than cwnds but more than half as much do not hold; at half they do; the
    median flow decides."""
    less = [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.2} for f in range(3)]
    half = [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.15} for f in range(3)]
    assert word("C2", {"C2": {"flows": less}}) == "not reproduced"
    assert word("C2", {"C2": {"flows": half}}) == "reproduced"
    mixed = half[:1] + less[:2]  # one flow's rate varies half as much, the median flow's more
    assert word("C2", {"C2": {"flows": mixed}}) == "not reproduced"
