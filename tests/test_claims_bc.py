"""The B and C presets' checks (Leith, Shorten and McCullagh 2007; Rhee's rebuttal 2007) on values
made by hand: each claim is reproduced on data that bears it out and not on data that contradicts
it, and the disputes never call two contradicting claims reproduced on the same data."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from ccarena.presets import get
from ccarena.presets.disputes import DISPUTES, dispute_of
from ccarena.presets.leith_2007 import (
    HALF_BACKOFF,
    TOGETHER,
    convergence_time,
    longest_unfair_s,
    start_setting,
    variant,
)


def windows(
    name: Any, late_at: dict[float, float], end: float = 400.0, buffer: float | None = None
) -> list[dict[str, Any]]:
    """Ensemble windows of 10 s: the early flow at 100 Mbit/s, the late one from 100 s at the
    share of it that ``late_at`` gives from each time on (0 before its first key); with ``buffer``,
    each record carries it as ``buffer_bdp`` (B2's measure)."""
    out = []
    t = 10.0
    while t <= end:
        share = 0.0
        for since, s in sorted(late_at.items()):
            if t > since:
                share = s
        rec = {"variant": name, "t_end_s": t, "early_bps": 100e6, "late_bps": share * 100e6 if t > 100 else 0.0}
        out.append(rec if buffer is None else {**rec, "buffer_bdp": buffer})
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
    # which flow is low does not depend on the order they are given in; the late flow's share does
    keys = ("low_pps", "high_pps", "intervals")
    assert {k: paired_growth(t, list(b), list(a))[k] for k in keys} == {k: g[k] for k in keys}
    # the joining intervals are those in which the late flow (the third argument) is the low one,
    # ending by the time it joined
    assert g["joining_intervals"] == 0 and paired_growth(t, list(b), list(a))["joining_intervals"] == 4
    assert paired_growth(t, list(b), list(a))["joining_low_pps"] == pytest.approx((4 + 2 + 42) / 3)
    early = paired_growth(t, list(b), list(a), joined_at=2.0)
    assert early["joining_intervals"] == 2 and early["intervals"] == 4
    assert early["joining_low_pps"] == pytest.approx(4.0) and early["joining_high_pps"] == pytest.approx(10.0)
    assert paired_growth([0.0, 1.0], [5, 5], [5, 9])["intervals"] == 0


def test_variant_names_the_cubic_of_each_era() -> None:
    assert variant("cubic", {"beta": 0.7998046875, "hystart": False}) == "CUBIC 2.6"
    assert variant("cubic", {"beta": 0.7001953125, "hystart": True}) == "CUBIC (Linux today)"
    assert variant("cubic", {"beta": 0.5, "hystart": False}) == HALF_BACKOFF
    assert variant("cubic", {"beta": 0.8, "hystart": False, "fast_convergence": False}).endswith("convergence off")
    assert variant("htcp") == "H-TCP"


def b2_at(
    buffer: float, slow: float | None, half: float | None, growth: float = 0.6, every: float = 0.6
) -> dict[str, list]:
    """B2 windows and growth records at one buffer: CUBIC 2.6 converging ``slow`` s after the join
    (None: never), backoff 0.5 ``half`` s after, the joining flow's window growing ``growth`` times as
    fast as the first's (``every`` times over every interval with one window low, either flow)."""

    def w(name: str, t: float | None) -> list[dict[str, Any]]:
        return windows(name, {100: 0.3} if t is None else {100: 0.3, 100 + t: 0.95}, buffer=buffer)

    return {
        "windows": w("CUBIC 2.6", slow) + w(HALF_BACKOFF, half),
        "growth": [
            {
                "variant": "CUBIC 2.6",
                "buffer_bdp": buffer,
                "repeat": i,
                "joined_s": slow,
                "high_pps": 10.0,
                "low_pps": 10.0 * every,
                "intervals": 50,
                "joining_high_pps": 10.0,
                "joining_low_pps": 10.0 * growth,
                "joining_intervals": 40,
            }
            for i in range(3)
        ],
    }


def b2(
    slow: float | None,
    half: float | None,
    growth: float = 0.6,
    slow100: float | None = -1.0,
    half100: float | None = -1.0,
    growth100: float | None = None,
) -> dict[str, Any]:
    """B2 values as its measure gives them, at 20 % and 100 % BDP: CUBIC 2.6 converging ``slow`` s
    after the join, backoff 0.5 ``half`` s after, the low-cwnd flow's window growing ``growth`` times
    as fast as the large one's; the 100 % BDP values the same unless given."""
    s100 = slow if slow100 == -1.0 else slow100
    h100 = half if half100 == -1.0 else half100
    g100 = growth if growth100 is None else growth100
    lo, hi = b2_at(0.2, slow, half, growth), b2_at(1.0, s100, h100, g100)
    return {"late_start_s": 100.0, "windows": lo["windows"] + hi["windows"], "growth": lo["growth"] + hi["growth"]}


def c1(t: float | None, t20: float | None = -1.0) -> dict[str, Any]:
    """C1 values: the second flow converging ``t`` s after its start at 100 % BDP and ``t20`` s (the
    same by default) at 20 % BDP (None: never)."""
    t20 = t if t20 == -1.0 else t20

    def w(b: float, x: float | None) -> list[dict[str, Any]]:
        return windows(b, {100: 0.3} if x is None else {100: 0.3, 100 + x: 0.9})

    return {"late_start_s": 100.0, "windows": w(1.0, t) + w(0.2, t20)}


def word(pid: str, values: dict[str, Any]) -> str:
    return get(pid).verdict(values).word


def holds(pid: str, values: dict[str, Any]) -> list[bool]:
    return [p.holds for p in get(pid).verdict(values).parts]


def test_b2_judges_each_part_at_both_buffers() -> None:
    assert holds("B2", {"B2": b2(200, 50)}) == [True] * 6
    assert word("B2", {"B2": b2(200, 50)}) == "reproduced"
    # fast, no slower than with backoff 0.5, and the late flow growing as fast as the first
    assert word("B2", {"B2": b2(40, 40, 1.0)}) == "not reproduced"
    # order of parts: slow, growth, backoff at 20 %, then the same at 100 %
    assert holds("B2", {"B2": b2(200, 200)}) == [True, True, False, True, True, False]
    assert holds("B2", {"B2": b2(200, 50, 0.9)}) == [True, False, True, True, False, True]
    # slow at 100 % BDP only (the full runs' pattern: 90 s at 20 %, 110 s at 100 %)
    v = get("B2").verdict({"B2": b2(90, 40, 0.96, slow100=110, growth100=1.01)})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, False, True, True, False, True]
    assert "20 % BDP" in v.parts[0].name and "100 % BDP" in v.parts[3].name
    # a time within one 10 s window of the 100 s bound is marked, not moved
    assert "unsettled" in v.parts[0].measured and "unsettled" in v.parts[3].measured


def test_b2_judges_the_joining_flows_growth_and_reports_every_interval_beside_it() -> None:
    v = get("B2").verdict({"B2": b2(200, 50, growth=0.6)})
    assert v.parts[1].holds and "3 of 3 runs, 120 one-second intervals" in v.parts[1].measured
    assert "(not judged; 150 intervals, either flow low): ratio 0.60" in v.parts[1].measured
    vals = b2(200, 50, growth=0.9)
    for r in vals["growth"]:
        r["low_pps"] = 5.0  # every low interval shows half the growth: reported, the judged part still fails
    v = get("B2").verdict({"B2": vals})
    assert not v.parts[1].holds and "(ratio 0.90)" in v.parts[1].measured and "ratio 0.50" in v.parts[1].measured
    # no joining interval in any run (the runs converged by 110 s): nothing measured, the part cannot hold
    for r in vals["growth"]:
        r["joining_intervals"], r["joining_low_pps"], r["joining_high_pps"] = 0, 0.0, 0.0
    assert not get("B2").verdict({"B2": vals}).parts[1].holds


def test_b2_reads_stored_values_without_a_buffer_as_its_old_20_percent() -> None:
    old = b2_at(0.2, 200, 50)
    for r in old["windows"] + old["growth"]:
        r.pop("buffer_bdp")
    v = get("B2").verdict({"B2": {"late_start_s": 100.0, **old}})
    assert v.word == "reproduced" and len(v.parts) == 3 and all("20 % BDP" in p.name for p in v.parts)


@pytest.mark.parametrize("t", [40.0, 90.0, 110.0, 200.0, None])
def test_b2_slow_and_c1_good_cannot_both_hold_on_the_same_convergence(t: float | None) -> None:
    """The same second-flow convergence time (None: never) given to both sides: Leith et al.'s "slow"
    (more than 100 s) and Rhee's "good" (within 100 s) are complements at each buffer."""
    b2_parts, c1_parts = holds("B2", {"B2": b2(t, 50)}), holds("C1", {"C1": c1(t), "B2": b2(t, 50)})
    # B2: slow, growth, backoff at 20 %, then at 100 %; C1: good, much faster at 100 %, then at 20 %
    assert b2_parts[0] != c1_parts[2] and b2_parts[3] != c1_parts[0]
    assert b2_parts[0] == (t is None or t > 100)


def test_c1_judges_good_and_much_faster_at_each_buffer() -> None:
    assert word("C1", {"C1": c1(30), "B2": b2(200, 50)}) == "reproduced"
    assert word("C1", {"C1": c1(250), "B2": b2(200, 50)}) == "not reproduced"
    # order of parts: good, much faster at 100 %, then at 20 %
    assert holds("C1", {"C1": c1(80), "B2": b2(120, 50)}) == [True, False, True, False]
    # the full runs' pattern: 140 s at 100 %, 80 s at 20 %, against B2's 110 s and 90 s
    v = get("C1").verdict({"C1": c1(140, t20=80), "B2": b2(90, 40, slow100=110)})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, False, True, False]
    assert "140 s with SURGE (200 sessions) against 110 s" in v.parts[1].measured
    assert "80 s with SURGE (200 sessions) against 90 s" in v.parts[3].measured


def c1_loads(times: dict[tuple[float, int], float | None]) -> dict[str, Any]:
    """C1 values as its measure gives them: per (buffer, SURGE sessions) the second flow converging
    that many seconds after its start (None: never), and the background's share of the link."""
    out: list[dict[str, Any]] = []
    for (b, n), t in times.items():
        w = windows(n, {100: 0.3} if t is None else {100: 0.3, 100 + t: 0.9}, buffer=b)
        out += w
    loads = [{"buffer_bdp": b, "sessions": n, "share": n / 2000, "runs": 10} for (b, n) in times]
    return {"late_start_s": 100.0, "windows": out, "loads": loads}


def test_c1_judges_the_base_load_and_reports_heavier_loads_unjudged() -> None:
    """The measured runs' pattern: 200 sessions 140 s / 80 s, 720 sessions 50 s / 10 s."""
    vals = c1_loads({(1.0, 200): 140, (0.2, 200): 80, (1.0, 720): 50, (0.2, 720): 10})
    v = get("C1").verdict({"C1": vals, "B2": b2(90, 40, slow100=110)})
    assert [p.holds for p in v.parts] == [False, False, True, False]
    assert "heavier SURGE loads, not judged: 720 sessions (36 % of the link) 50 s, at most half" in v.parts[1].measured
    assert "720 sessions (36 % of the link) 10 s, at most half the web mix's time" in v.parts[3].measured
    # a heavier load that converges slowly does not help the judged parts either way
    vals = c1_loads({(1.0, 200): 30, (0.2, 200): 30, (1.0, 720): 300, (0.2, 720): None})
    v = get("C1").verdict({"C1": vals, "B2": b2(200, 50)})
    assert v.word == "reproduced" and "720 sessions (36 % of the link) not within the run, more than half" in (
        v.parts[3].measured
    )
    said = dispute_of("C1").settle(
        {"C1": c1_loads({(1.0, 200): 140, (0.2, 200): 80, (1.0, 720): 50}), "B2": b2(90, 40, slow100=110)}
    )  # type: ignore[union-attr]
    assert "at neither buffer (20 % and 100 % BDP) with 200 SURGE sessions" in said
    assert "Heavier SURGE loads (not judged" in said and "at 100 % BDP 720 sessions (36 % of the link) 50 s" in said


def test_b2_and_c1_settle_as_a_dispute_per_buffer() -> None:
    d = dispute_of("C1")
    assert d is not None and d.ids == ("B2", "C1")
    said = d.settle({"B2": b2(200, 50), "C1": c1(30)})
    assert "at 20 % BDP, Leith et al.'s web mix 200 s, SURGE 30 s" in said
    assert "Leith et al.'s slow convergence (more than 100 s with their web mix) at 20 % and 100 % BDP" in said
    assert "Rhee's good convergence with SURGE (within 100 s) at 20 % and 100 % BDP" in said
    said = d.settle({"B2": b2(80, 40, slow100=130), "C1": c1(140, t20=80)})
    assert "(more than 100 s with their web mix) at 100 % BDP, not at 20 %" in said
    assert "(within 100 s) at 20 % BDP, not at 100 %" in said
    assert "(SURGE at most half the web mix's time) at neither buffer" in said
    # a web-mix time within one 10 s window of the bound (90 s, 110 s) supports neither side there
    said = d.settle({"B2": b2(90, 40, slow100=110), "C1": c1(140, t20=80)})
    assert (
        "(more than 100 s with their web mix) at neither buffer (unsettled at 20 % and 100 % BDP: the time lies "
        "within one 10 s window of the 100 s bound)" in said
    )
    assert "(within 100 s) at 20 % BDP, not at 100 %" in said
    # one buffer unsettled and the claim failing at the other: named as that buffer, not "neither"
    said = d.settle({"B2": b2(120, 70, slow100=200), "C1": c1(190, t20=90)})
    assert "Rhee's good convergence with SURGE (within 100 s) not at 100 % BDP (unsettled at 20 % BDP" in said


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
    assert d is not None and "Leith et al.'s side" in d.settle({"B5": {"runs": low}, "C3": {"runs": low}}, "sim")
    # a collapse at the smallest buffer only supports neither side, and the row says where each holds and
    # on which backend
    mixed = util_rows("CUBIC 2.6", {0.02: 0.3, 0.1: 0.95, 0.2: 0.97})
    said = d.settle({"B5": {"runs": mixed}, "C3": {"runs": mixed}}, "emu")
    assert "Linux's TCP through ccarena's emulator" in said and "simulator" not in said
    assert "supports neither side: at most 60 % at 2 % only, above it at 10 %, 20 %" in said
    assert "6 runs per buffer" in said


def rtt_rows(short: str, long: str, first: float, second: float, rate: float = 1e6, **kw: Any) -> list[dict]:
    """Two runs as rtt_records gives them: the 16 ms / long-RTT ratio ``first`` with the short flow
    first and ``second`` with the long flow first, the later flow ``offset_s`` (30 by default) after."""
    base = {"rate_bps": rate, "buffer": kw.get("buffer", "13 KB"), "short": short, "long": long, "repeat": 0}
    base["offset_s"] = kw.get("offset_s", 30.0)
    extra = {"long_rtt": kw["long_rtt"]} if "long_rtt" in kw else {}
    return [
        {**base, **extra, "order": "short first", "ratio": first},
        {**base, **extra, "order": "long first", "ratio": second},
    ]


def b6_rows(rate: float, ratios: dict[float, tuple[float, float]], pair: str = "CUBIC 2.6", **kw: Any) -> list[dict]:
    """rtt_rows per start offset: ``ratios`` maps the offset to (short first, long first)."""
    return [r for off, (a, z) in ratios.items() for r in rtt_rows(pair, pair, a, z, rate, offset_s=off, **kw)]


# splits of the shape B6's file gave without jitter, one run per start time: at 1 Mbit/s the split moves
# with the start times, at 250 Mbit/s it stays within 1.12-1.35
SMALL = {10: (0.60, 0.53), 20: (0.53, 0.60), 30: (0.53, 0.92), 45: (1.24, 0.53)}
LARGE = {10: (1.12, 1.19), 20: (1.15, 1.16), 30: (1.12, 1.35), 45: (1.19, 1.12)}


def test_b6_judges_the_spread_of_the_split_over_start_times_per_window_size() -> None:
    both = b6_rows(250e6, {10: (1.0, 2.0), 20: (1.2, 1.1), 30: (1.1, 1.0), 45: (1.3, 1.2)}) + b6_rows(1e6, SMALL)
    assert word("B6", {"B6": {"runs": both}}) == "reproduced"
    v = get("B6").verdict({"B6": {"runs": b6_rows(250e6, LARGE) + b6_rows(1e6, SMALL)}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, True]
    assert "1.12-1.35" in v.parts[0].measured and "spread 2.34" in v.parts[1].measured
    flat = b6_rows(250e6, LARGE) + b6_rows(1e6, {k: (3.0, 3.2) for k in SMALL})
    assert word("B6", {"B6": {"runs": flat}}) == "not reproduced"
    # one offset whose orders differ, the others alike, is a spread of the split all the same
    one = b6_rows(1e6, {10: (1.0, 1.0), 20: (1.0, 1.0), 30: (1.0, 1.6), 45: (1.0, 1.0)})
    assert holds("B6", {"B6": {"runs": b6_rows(250e6, LARGE) + one}}) == [False, True]
    # just short of the factor
    near = b6_rows(1e6, {10: (1.0, 1.0), 20: (1.0, 1.49)})
    assert holds("B6", {"B6": {"runs": b6_rows(250e6, LARGE) + near}}) == [False, False]


def test_b6_reads_stored_values_without_an_offset() -> None:
    old = rtt_rows("CUBIC 2.6", "CUBIC 2.6", 1.12, 1.35, 250e6) + rtt_rows("CUBIC 2.6", "CUBIC 2.6", 0.53, 0.92)
    for r in old:
        r.pop("offset_s")
    assert holds("B6", {"B6": {"runs": old}}) == [False, True]


def repeated(
    ratios: dict[float, tuple[list[float | None], list[float | None]]], pair: str = "CUBIC 2.6", **kw: Any
) -> list[dict]:
    """b6_rows with repeats: ``ratios`` maps the offset to each repeat's (short first, long first) split;
    None is a run whose long flow got nothing, as the stored JSON holds it."""
    rows = []
    for off, (first, second) in ratios.items():
        for i, (a, z) in enumerate(zip(first, second, strict=True)):
            rows += [{**r, "repeat": i} for r in rtt_rows(pair, pair, a, z, 1e6, offset_s=off, **kw)]  # type: ignore[arg-type]
    return rows


TIGHT = [0.95, 1.0, 1.05, 0.97, 1.03]
"""Five repeats agreeing within 5 % around 1 (their median)."""
NOISY = ([0.5, 0.8, 1.0, 3.0, 4.0], [0.6, 0.9, 2.0, 2.5, 3.5])
"""Two start times' five repeats, medians 1.0 and 2.0, each spanning most of the other's range."""


def test_b6_with_repeats_needs_the_start_times_to_explain_the_spread() -> None:
    """With repeats, each start time's split is the median of its runs, and a spread of the medians
    that the repeats' own variation explains as well is not a dependence on the start times."""
    twice = [2 * x for x in TIGHT]
    both = {10: (TIGHT, twice), 30: (TIGHT, twice)}
    v = get("B6").verdict({"B6": {"runs": b6_rows(250e6, LARGE) + repeated(both)}})
    assert [p.holds for p in v.parts] == [False, True]
    assert "spread 2.00; medians of 5 runs per start time, Kruskal-Wallis p = 0.0024" in v.parts[1].measured
    noisy = {10: NOISY, 30: NOISY}
    v = get("B6").verdict({"B6": {"runs": b6_rows(250e6, LARGE) + repeated(noisy)}})
    assert [p.holds for p in v.parts] == [False, False] and "spread 2.00" in v.parts[1].measured
    # a run whose long flow got nothing counts as the largest split, and does not set the median
    locked = {10: ([1.0, 1.0, None], [2.0, 2.0, 2.0]), 30: ([1.0, 1.0, 1.0], [2.0, None, 2.0])}
    v = get("B6").verdict({"B6": {"runs": b6_rows(250e6, LARGE) + repeated(locked)}})
    assert "1.00-2.00 over the start times (spread 2.00" in v.parts[1].measured


def test_c4_with_repeats_compares_the_dependences_that_the_start_times_explain() -> None:
    """With repeats, two pairs whose medians spread differently only through their repeats' noise
    depend on the start times alike (neither does); a pair that does, beside one that does not, fails."""
    flat = {10: (TIGHT, TIGHT), 30: (TIGHT, TIGHT)}
    noisy = {10: NOISY, 30: NOISY}
    moving = {10: (TIGHT, [2 * x for x in TIGHT]), 30: (TIGHT, [2 * x for x in TIGHT])}

    def runs(cubic: dict, newreno: dict) -> list[dict]:
        mixed = [r for r in c4_rows(1, 1, 10, 10) if r["long_rtt"] == "162ms"]
        return mixed + [
            r
            for name, x in (("CUBIC 2.6", cubic), ("H-TCP", newreno), ("NewReno", newreno))
            for r in repeated(x, pair=name, long_rtt="160ms")
        ]

    part = get("C4").verdict({"C4": {"runs": runs(noisy, flat)}}).parts[2]
    assert part.holds and "CUBIC 2.00, NewReno 1.00 (Kruskal-Wallis p = 1 and 1 over 5 runs" in part.measured
    assert not get("C4").verdict({"C4": {"runs": runs(moving, flat)}}).parts[2].holds
    assert get("C4").verdict({"C4": {"runs": runs(moving, moving)}}).parts[2].holds


def c4_rows(
    cubic_pair: float, htcp_pair: float, cubic_mixed: float, htcp_mixed: float, cubic_long_first: float | None = None
) -> list[dict]:
    """C4's runs at one offset, each pair's split the same in both orders unless ``cubic_long_first``
    gives the CUBIC pair's split with the long-RTT flow first."""
    rows = []
    for s, r in (("CUBIC 2.6", cubic_pair), ("H-TCP", htcp_pair), ("NewReno", 10.0)):
        other = cubic_long_first if s == "CUBIC 2.6" and cubic_long_first is not None else r
        rows += rtt_rows(s, s, r, other, long_rtt="160ms")
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
    assert [p.holds for p in v.parts] == [True, True, True, False, False]


def test_c4_needs_cubic_and_htcp_as_rtt_fair_as_newreno() -> None:
    assert word("C4", {"C4": {"runs": c4_rows(11, 9, 12, 8)}}) == "reproduced"
    assert word("C4", {"C4": {"runs": c4_rows(1, 40, 30, 2, cubic_long_first=3)}}) == "not reproduced"
    v = get("C4").verdict({"C4": {"runs": c4_rows(11, 40, 12, 40)}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [True, False, True, True, False]


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


@pytest.mark.parametrize(
    ("cubic", "htcp", "expected"),
    [(0.1, 0.11, "reproduced"), (0.3, 0.1, "not reproduced"), (0.1, 0.3, "not reproduced")],
)
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


def c4_pairs(cubic: dict, htcp: dict, newreno: dict) -> list[dict]:
    """C4's 160 ms pairs per start offset (as b6_rows), with the 162 ms runs of c4_rows beside them."""
    rows = [r for r in c4_rows(1, 1, 10, 10) if r["long_rtt"] == "162ms"]
    for name, ratios in (("CUBIC 2.6", cubic), ("H-TCP", htcp), ("NewReno", newreno)):
        rows += b6_rows(1e6, ratios, pair=name, long_rtt="160ms")
    return rows


def test_c4_judges_every_start_time() -> None:
    """CUBIC as RTT-fair as NewReno at one start time and not at another is not "the same RTT fairness"."""
    nr = {10: (2.2, 2.3), 30: (2.3, 2.2)}
    assert holds("C4", {"C4": {"runs": c4_pairs(nr, nr, nr)}})[:2] == [True, True]
    cu = {10: (0.6, 0.5), 30: (2.3, 2.2)}
    v = get("C4").verdict({"C4": {"runs": c4_pairs(cu, nr, nr)}})
    assert [p.holds for p in v.parts][:2] == [False, True] and "short first +10 s: 0.6 vs NewReno 2.2" in v.parts[
        0
    ].measured


def test_c4_needs_cubics_split_to_depend_on_the_start_times_as_newrenos_does() -> None:
    """Split by split within SAME of NewReno's, yet moving with the start times where NewReno's stays
    put, is not "the same RTT fairness" (the audit's case: CUBIC 1.5 and 3.0 against NewReno 2.2)."""
    nr = {10: (2.2, 2.2), 30: (2.2, 2.2)}
    cu = {10: (1.5, 3.0), 30: (1.5, 3.0)}
    parts = get("C4").verdict({"C4": {"runs": c4_pairs(cu, nr, nr)}}).parts
    assert [p.holds for p in parts][:3] == [True, True, False]
    assert "CUBIC 2.00, NewReno 1.00" in parts[2].measured
    # the same spread as NewReno's (both move) holds
    moving = {10: (1.5, 3.0), 30: (1.6, 2.9)}
    assert holds("C4", {"C4": {"runs": c4_pairs(moving, moving, moving)}})[2]
    said = dispute_of("B6").settle(  # type: ignore[union-attr]
        {"B6": {"runs": b6_rows(250e6, LARGE) + b6_rows(1e6, SMALL)}, "C4": {"runs": c4_pairs(cu, nr, nr)}}
    )
    assert "(item 10) does not hold: split by split within 1.5 of NewReno's" in said and "2.00 against" in said


def test_the_rtt_dispute_says_which_side_under_which_condition() -> None:
    d = dispute_of("B6")
    assert d is not None
    nr = {k: (2.24, 2.27) for k in SMALL}
    said = d.settle(
        {"B6": {"runs": b6_rows(250e6, LARGE) + b6_rows(1e6, SMALL)}, "C4": {"runs": c4_pairs(SMALL, SMALL, nr)}}
    )
    assert (
        "at 1 Mbit/s with 13 KB the split depends on the start times; at 250 Mbit/s with 13 KB the split does not "
        "depend on them" in said
    )
    assert "NewReno's split does not move with the start times, CUBIC's does" in said
    assert "two NewReno flows 2.24-2.27 (spread 1.01)" in said
    assert "(item 10) does not hold" in said
    assert "item 9 at large windows is borne out" in said
    wide = {10: (1.0, 2.0), 20: (1.2, 1.1)}
    said = d.settle({"B6": {"runs": b6_rows(250e6, wide) + b6_rows(1e6, SMALL)}, "C4": {"runs": c4_pairs(nr, nr, nr)}})
    assert "at 250 Mbit/s with 13 KB the split depends on the start times" in said
    assert "item 9 at large windows is not borne out" in said and "(item 10) holds at every start time" in said
    # two buffers at large windows: each is judged and settled on its own
    runs = b6_rows(250e6, LARGE, buffer="1 MB") + b6_rows(250e6, wide, buffer="5 MB") + b6_rows(1e6, SMALL)
    v = get("B6").verdict({"B6": {"runs": runs}})
    assert [p.name.rsplit("times ", 1)[1] for p in v.parts] == [
        "at large windows (250 Mbit/s, 1 MB)",
        "at large windows (250 Mbit/s, 5 MB)",
        "at small windows (1 Mbit/s, 13 KB)",
    ]
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, True, True]
    said = d.settle({"B6": {"runs": runs}, "C4": {"runs": c4_pairs(nr, nr, nr)}})
    assert (
        "at 250 Mbit/s with 1 MB the split does not depend on them; at 250 Mbit/s with 5 MB the split depends" in said
    )
    assert "item 9 at large windows is borne out at 250 Mbit/s with 1 MB and not at 250 Mbit/s with 5 MB" in said


def test_the_cwnd_dispute_says_which_parts_hold_and_reports_the_premise() -> None:
    values = {
        "B3": {"runs": stretch_rows([200, 150, 300], [20, 10, 30])},
        "B4": {"runs": cov_rows(0.1, 0.11)},
        "C2": {
            "flows": [
                {"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.05, "cwnd_p05": 100.0, "cwnd_p95": 200.0}
                for f in range(3)
            ]
        },
    }
    said = dispute_of("C2").settle(values)  # type: ignore[union-attr]
    assert "sustained for 100 s or more in cwnd, 100 % BDP, flows starting together: holds" in said
    assert "in rate at the bottleneck, 100 % BDP, flows starting together: does not hold" in said
    assert (
        "are similar (CoV of throughput), 100 % BDP: holds" in said and "at most half as much as cwnds: holds" in said
    )
    assert "Supports: on sustained unfairness at 100 % BDP Rhee's point (unfair in cwnd, not in rate)" in said
    assert "95th over 5th percentile is 2.00" in said and "Rhee's point is borne out" in said
    # with both buffers run, each is reported and settled on its own
    values["B3"] = {
        "runs": [{**r, "buffer_bdp": 1.0} for r in stretch_rows([200, 150, 300], [20, 10, 30])]
        + [{**r, "buffer_bdp": 0.2} for r in stretch_rows([200, 150, 300], [120, 110, 200])]
    }
    said = dispute_of("C2").settle(values)  # type: ignore[union-attr]
    assert "at 20 % BDP Leith et al.'s sustained unfairness, in rate as well as in cwnd" in said
    assert "at 100 % BDP Rhee's point" in said and "at 20 % BDP 200 s (median of runs; 3 of 3 runs reach 100 s)" in said


def test_b3_and_b4_judge_each_buffer_run() -> None:
    runs = [{**r, "buffer_bdp": 1.0} for r in stretch_rows([20, 30, 10], [10, 20, 0])] + [
        {**r, "buffer_bdp": 0.2} for r in stretch_rows([200, 150, 30], [120, 110, 20])
    ]
    v = get("B3").verdict({"B3": {"runs": runs}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, False, True, True]
    assert "20 % BDP" in v.parts[2].name and "2 of 3 runs, 67 %, reach 100 s" in v.parts[2].measured
    # one run in three reaching 100 s is reported, not enough for "half the runs"
    one = [{**r, "buffer_bdp": 0.2} for r in stretch_rows([110, 0, 0], [110, 0, 0])]
    v = get("B3").verdict({"B3": {"runs": one}})
    assert v.word == "not reproduced" and "1 of 3 runs, 33 %" in v.parts[0].measured
    rows = [{**r, "buffer_bdp": 1.0, "cov_cwnd": 0.2} for r in cov_rows(0.3, 0.1)] + [
        {**r, "buffer_bdp": 0.2, "cov_cwnd": 0.2} for r in cov_rows(0.1, 0.11)
    ]
    v = get("B4").verdict({"B4": {"runs": rows}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, True]
    assert "cwnd CoV, not judged: CUBIC 2.6 0.200, H-TCP 0.200 (ratio 1.00)" in v.parts[0].measured


def test_b3_judges_each_start_setting_run() -> None:
    spread = '{"dist": "uniform", "hi": "40s", "lo": "0s"}'
    assert start_setting("0s") == TOGETHER and start_setting(None) == TOGETHER
    assert start_setting(spread) == "starts spread over 0-40 s"
    runs = [{**r, "buffer_bdp": 1.0, "starts": TOGETHER} for r in stretch_rows([20, 30, 10], [10, 20, 0])] + [
        {**r, "buffer_bdp": 1.0, "starts": start_setting(spread)} for r in stretch_rows([200, 150, 30], [120, 110, 20])
    ]
    v = get("B3").verdict({"B3": {"runs": runs}})
    assert v.word == "partly" and [p.holds for p in v.parts] == [False, False, True, True]
    assert v.parts[0].name.endswith("100 % BDP, flows starting together")
    assert v.parts[2].name.endswith("100 % BDP, starts spread over 0-40 s")
    # stored records without a start setting are the flows starting together, judged as before
    v = get("B3").verdict({"B3": {"runs": stretch_rows([200, 150, 300], [120, 110, 200])}})
    assert v.word == "reproduced" and all(p.name.endswith("flows starting together") for p in v.parts)
    # the dispute names the start setting once more than one was run
    values = {
        "B3": {"runs": runs},
        "B4": {"runs": cov_rows(0.1, 0.11)},
        "C2": {"flows": [{"repeat": 0, "flow": f, "cov_cwnd": 0.3, "cov_rate": 0.05, "cwnd_p05": 100.0,
                          "cwnd_p95": 200.0} for f in range(3)]},
    }  # fmt: skip
    said = dispute_of("C2").settle(values)  # type: ignore[union-attr]
    assert "at 100 % BDP, flows starting together neither" in said
    assert "at 100 % BDP, starts spread over 0-40 s Leith et al.'s sustained unfairness" in said


def test_c2_reports_the_premise_beside_the_judged_part() -> None:
    small = [
        {"repeat": 0, "flow": f, "cov_cwnd": 0.06, "cov_rate": 0.08, "cwnd_p05": 900.0, "cwnd_p95": 1100.0}
        for f in range(3)
    ]
    v = get("C2").verdict({"C2": {"flows": small}})
    assert v.word == "not reproduced"
    assert (
        "premise, not judged: cwnd CoV median 0.06 (0.06-0.06), cwnd 95th / 5th percentile median 1.22"
        in v.parts[0].measured
    )


def test_b2_convergence_is_not_moved_by_a_late_dip() -> None:
    """Reached and held for a second window is converged; one window below the level later in the
    run does not move the time (it did when the measure asked the level to hold to the end)."""
    w = windows("x", {100: 0.9, 320: 0.79, 330: 0.9})
    assert convergence_time(w, 100.0) == 0.0


def test_b5_needs_every_small_buffer_low() -> None:
    """One buffer below 30 % BDP at full utilisation is enough to contradict "falls to around 50 %"."""
    rows = util_rows("CUBIC 2.6", {0.02: 0.45, 0.1: 0.5, 0.2: 0.9})
    assert word("B5", {"B5": {"runs": rows}}) == "not reproduced"
    assert word("C3", {"C3": {"runs": rows}}) == "not reproduced"


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
