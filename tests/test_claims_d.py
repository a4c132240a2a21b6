"""The D series' judges (Lee and Chuvpilo, 2002): values built by hand that follow the talk's claims
give "reproduced", and values that contradict one part make that part fail (every check can fail).
Pure Python, no simulation: the values have the shape each preset's ``measure`` writes."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from ccarena.presets import get
from ccarena.presets.lee_chuvpilo_2002 import convergence_rtts, fill_time_rtts, window_means

Values = dict[str, Any]

RATES = [(50, 100), (100, 100), (200, 100), (500, 100), (1000, 100), (200, 20), (200, 50), (200, 200), (200, 400)]


def d1_values(util: Callable[[str, int, int], float] = lambda cc, r, t: 0.98) -> Values:
    return {
        "runs": [
            {"cc": cc, "qdisc": q, "rate_mbps": r, "rtt_ms": t, "repeat": k, "util": util(cc, r, t), "util_whole": 0.9}
            for cc, q in (("highspeed", "droptail"), ("reno", "droptail"), ("xcp", "xcp"))
            for r, t in RATES
            for k in range(2)
        ]
    }


def d2_values(jains: dict[str, float] | None = None) -> Values:
    j = jains or {"xcp": 0.999, "highspeed": 0.97, "reno": 0.95}
    return {
        "runs": [
            {"cc": cc, "flows": n, "repeat": k, "jain": v}
            for cc, v in j.items()
            for n in (2, 4, 8, 16, 32, 64)
            for k in range(2)
        ]
    }


def d3_values(hs_tcp_share: float = 0.1, pair_min_share: float = 0.47) -> Values:
    runs = []
    for k in range(5):
        runs.append(
            {
                "pair": "HSTCP + TCP",
                "repeat": k,
                "rate_0_mbps": 45.0,
                "rate_1_mbps": 5.0,
                "tcp_share": hs_tcp_share,
                "min_share": hs_tcp_share,
            }
        )
        runs.append(
            {
                "pair": "TCP + TCP",
                "repeat": k,
                "rate_0_mbps": 26.0,
                "rate_1_mbps": 24.0,
                "tcp_share": 1 - pair_min_share if k % 2 else pair_min_share,
                "min_share": pair_min_share,
            }
        )
    return {"runs": runs}


def d4_values(times: dict[str, float | None]) -> Values:
    return {
        "runs": [
            {"cc": cc, "repeat": k, "converged_rtts": t, "horizon_rtts": 8600.0}
            for cc, t in times.items()
            for k in range(3)
        ],
        "join_s": 40.0,
        "window_s": 10.0,
        "delta": 0.1,
        "hold_windows": 10,
    }


def d5_values(times: dict[str, float | None]) -> Values:
    return {
        "runs": [
            {"cc": cc, "repeat": k, "fill_rtts": t, "horizon_rtts": 5200.0} for cc, t in times.items() for k in range(3)
        ],
        "level": 0.9,
    }


GOOD_D6 = {("highspeed", "droptail"): (0.95, 0.97), ("highspeed", "red"): (0.93, 0.96), ("xcp", "xcp"): (0.99, 0.999)}


def d6_values(small: dict[tuple[str, str], tuple[float, float]] | None = None) -> Values:
    at = small or GOOD_D6
    runs = []
    for (cc, q), (u, j) in at.items():
        for b in (0.1, 0.2, 0.5, 1.0):
            for k in range(2):
                runs.append(
                    {
                        "cc": cc,
                        "qdisc": q,
                        "buffer_bdp": b,
                        "repeat": k,
                        "util": u if b == 0.1 else 1.0,
                        "jain": j if b == 0.1 else 0.99,
                    }
                )
    return {"runs": runs}


def d7_values(minmax: dict[int, float] | None = None, util: dict[int, float] | None = None) -> Values:
    mm = minmax or {0: 0.6, 1: 0.5, 5: 0.4, 10: 0.3}
    ut = util or {0: 0.99, 1: 0.98, 5: 0.95, 10: 0.93}
    return {
        "runs": [{"reverse": n, "repeat": k, "util": ut[n], "minmax": mm[n], "jain": 0.9} for n in mm for k in range(3)]
    }


def judge(pid: str, values: Values) -> tuple[str, list[Any]]:
    v = get(pid).verdict({pid: values})
    return v.word, list(v.parts)


def failing(parts: list[Any]) -> list[str]:
    return [p.name for p in parts if not p.holds]


# ---- the talk's own claims give "reproduced" ---------------------------------------------------


@pytest.mark.parametrize(
    ("pid", "values"),
    [
        ("D1", d1_values()),
        ("D2", d2_values()),
        ("D3", d3_values()),
        ("D4", d4_values({"xcp": 50.0, "highspeed": 1700.0, "reno": 4000.0})),
        ("D5", d5_values({"xcp": 3.0, "highspeed": 2550.0, "reno": 3000.0})),
        ("D6", d6_values()),
        ("D7", d7_values()),
    ],
)
def test_values_following_the_claim_are_reproduced(pid: str, values: Values) -> None:
    word, parts = judge(pid, values)
    assert word == "reproduced", failing(parts)
    assert all(p.measured for p in parts)


def test_every_d_preset_states_where_and_is_judged() -> None:
    for i in range(1, 8):
        p = get(f"D{i}")
        assert p.where.startswith("slide") and p.claim and p.judge is not None and p.measure is not None
        assert p.deviations, p.id
        assert not p.cause or p.cause.strip()


# ---- each part can fail ------------------------------------------------------------------------


@pytest.mark.parametrize("cc", ["highspeed", "xcp"])
def test_d1_each_algorithm_low_at_one_point_fails(cc: str) -> None:
    word, parts = judge("D1", d1_values(lambda a, r, t: 0.85 if (a, r, t) == (cc, 1000, 100) else 0.99))
    assert word == "partly"
    assert failing(parts) == [p.name for p in parts if p.name.startswith("HighSpeed" if cc == "highspeed" else "XCP")]


def test_d1_tcp_is_not_judged_but_shown_beside() -> None:
    word, parts = judge("D1", d1_values(lambda a, r, t: 0.5 if a == "reno" else 0.99))
    assert word == "reproduced"
    assert "not judged, standard TCP's lowest: 0.500" in parts[-1].measured


def test_d1_both_low_is_not_reproduced() -> None:
    word, _ = judge("D1", d1_values(lambda a, r, t: 0.8 if a != "reno" else 1.0))
    assert word == "not reproduced"


@pytest.mark.parametrize(
    ("jains", "fails"),
    [
        ({"xcp": 0.96, "highspeed": 0.97, "reno": 0.95}, "XCP's index above HighSpeed TCP's"),
        ({"xcp": 0.999, "highspeed": 0.95, "reno": 0.97}, "HighSpeed TCP's index above TCP's"),
        ({"xcp": 0.999, "highspeed": 0.89, "reno": 0.85}, "all three close to 1"),
    ],
)
def test_d2_each_part_can_fail(jains: dict[str, float], fails: str) -> None:
    word, parts = judge("D2", d2_values(jains))
    assert word != "reproduced"
    assert [n for n in failing(parts)] == [p.name for p in parts if p.name.startswith(fails)]


def test_d2_one_low_point_breaks_close_to_one() -> None:
    v = d2_values()
    for r in v["runs"]:
        if r["cc"] == "reno" and r["flows"] == 64:
            r["jain"] = 0.8
    word, parts = judge("D2", v)
    assert word == "partly" and len(failing(parts)) == 1 and "close to 1" in failing(parts)[0]


def test_d3_each_part_can_fail() -> None:
    word, parts = judge("D3", d3_values(hs_tcp_share=0.3))
    assert word == "partly" and "starves" in failing(parts)[0]
    word, parts = judge("D3", d3_values(pair_min_share=0.25))
    assert word == "partly" and "fair to each other" in failing(parts)[0]
    word, _ = judge("D3", d3_values(hs_tcp_share=0.45, pair_min_share=0.2))
    assert word == "not reproduced"


def test_d4_either_assignment_of_the_counts_is_accepted() -> None:
    for h, t in ((1700.0, 4000.0), (4000.0, 1700.0), (2500.0, 2500.0)):
        word, parts = judge("D4", d4_values({"xcp": 0.0, "highspeed": h, "reno": t}))
        assert word == "reproduced", (h, t, parts)
    _, parts = judge("D4", d4_values({"xcp": 0.0, "highspeed": 4000.0, "reno": 1700.0}))
    assert "B (HighSpeed TCP 4000" in parts[1].measured and "A (" not in parts[1].measured


@pytest.mark.parametrize(
    ("times", "fails"),
    [
        ({"xcp": 300.0, "highspeed": 1700.0, "reno": 4000.0}, "XCP"),
        ({"xcp": 0.0, "highspeed": 300.0, "reno": 4000.0}, "HighSpeed TCP and TCP"),
        ({"xcp": 0.0, "highspeed": 1700.0, "reno": 500.0}, "HighSpeed TCP and TCP"),
        ({"xcp": 0.0, "highspeed": 1700.0, "reno": None}, "HighSpeed TCP and TCP"),
        ({"xcp": 0.0, "highspeed": 9000.0, "reno": 9000.0}, "HighSpeed TCP and TCP"),
        ({"xcp": None, "highspeed": 1700.0, "reno": 4000.0}, "XCP"),
    ],
)
def test_d4_each_part_can_fail(times: dict[str, float | None], fails: str) -> None:
    word, parts = judge("D4", d4_values(times))
    assert word == "partly"
    assert len(failing(parts)) == 1 and failing(parts)[0].startswith(fails)


def test_d4_median_over_repeats() -> None:
    v = d4_values({"xcp": 0.0, "highspeed": 1700.0, "reno": 4000.0})
    v["runs"][3]["converged_rtts"] = None  # one HighSpeed TCP repeat never converges: the median holds
    assert judge("D4", v)[0] == "reproduced"
    v["runs"][4]["converged_rtts"] = None  # two of three: the median is "not within the run"
    assert judge("D4", v)[0] == "partly"


@pytest.mark.parametrize(
    ("times", "fails"),
    [
        ({"xcp": 20.0, "highspeed": 2550.0, "reno": 3000.0}, "XCP"),
        ({"xcp": None, "highspeed": 2550.0, "reno": 3000.0}, "XCP"),
        ({"xcp": 3.0, "highspeed": 40.0, "reno": 100.0}, "HighSpeed TCP or TCP"),
        ({"xcp": 3.0, "highspeed": 6000.0, "reno": None}, "HighSpeed TCP or TCP"),
    ],
)
def test_d5_each_part_can_fail(times: dict[str, float | None], fails: str) -> None:
    word, parts = judge("D5", d5_values(times))
    assert word == "partly"
    assert len(failing(parts)) == 1 and failing(parts)[0].startswith(fails)


def test_d5_the_count_may_be_either_algorithms() -> None:
    assert judge("D5", d5_values({"xcp": 3.0, "highspeed": 50.0, "reno": 2550.0}))[0] == "reproduced"
    assert judge("D5", d5_values({"xcp": 3.0, "highspeed": 2550.0, "reno": 100.0}))[0] == "reproduced"


@pytest.mark.parametrize(
    ("change", "fails"),
    [
        ({("highspeed", "red"): (0.85, 0.96)}, ["HighSpeed TCP's utilisation"]),
        ({("highspeed", "droptail"): (0.95, 0.85)}, ["HighSpeed TCP's fairness"]),
        ({("xcp", "xcp"): (0.99, 0.88)}, ["XCP's utilisation and fairness", "XCP's fairness above"]),
        ({("xcp", "xcp"): (0.94, 0.999)}, ["XCP's utilisation above"]),
        ({("xcp", "xcp"): (0.99, 0.965)}, ["XCP's fairness above"]),
    ],
)
def test_d6_each_part_can_fail(change: dict[tuple[str, str], tuple[float, float]], fails: list[str]) -> None:
    word, parts = judge("D6", d6_values({**GOOD_D6, **change}))
    assert word == "partly"
    got = failing(parts)
    assert len(got) == len(fails) and all(g.startswith(f) for g, f in zip(got, fails, strict=True)), got


def test_d6_reads_the_smallest_buffer_only() -> None:
    v = d6_values()
    for r in v["runs"]:
        if r["buffer_bdp"] == 1.0 and r["cc"] == "highspeed":
            r["util"] = 0.5
    assert judge("D6", v)[0] == "reproduced"


@pytest.mark.parametrize(
    ("minmax", "util", "fails"),
    [
        ({0: 0.6, 1: 0.6, 5: 0.6, 10: 0.55}, None, "reverse flows degrade min-max"),
        ({0: 0.6, 1: 0.5, 5: 0.3, 10: 0.1}, None, "reverse flows degrade min-max"),
        (None, {0: 0.99, 1: 0.99, 5: 0.99, 10: 0.985}, "reverse flows degrade utilisation"),
        (None, {0: 0.95, 1: 0.96, 5: 0.97, 10: 0.98}, "reverse flows degrade utilisation"),
    ],
)
def test_d7_each_part_can_fail(minmax: dict[int, float] | None, util: dict[int, float] | None, fails: str) -> None:
    word, parts = judge("D7", d7_values(minmax, util))
    assert word == "partly"
    assert len(failing(parts)) == 1 and failing(parts)[0].startswith(fails)


def test_d7_without_a_run_free_of_reverse_flows_nothing_holds() -> None:
    v = d7_values()
    v["runs"] = [r for r in v["runs"] if r["reverse"] != 0]
    assert judge("D7", v)[0] == "not reproduced"


# ---- the measures' definitions -----------------------------------------------------------------


def _rates(series: dict[int, list[float]], t0: float = 0.0, step: float = 1.0) -> pd.DataFrame:
    rows = [
        {"flow": f, "time_s": t0 + (i + 1) * step, "rate_bps": r} for f, xs in series.items() for i, r in enumerate(xs)
    ]
    return pd.DataFrame(rows)


def test_window_means_keep_whole_windows_only() -> None:
    df = _rates({0: [10.0] * 25, 1: [30.0] * 25})
    wins = window_means(df, 0.0, 10.0)
    assert wins == [[10.0, 30.0], [10.0, 30.0]]


def test_convergence_needs_ten_windows_within_ten_percent() -> None:
    fair, off = [25.0, 25.0], [30.0, 20.0]  # 30/20 is 20 % off the fair share: not converged
    t, horizon = convergence_rtts([off] * 3 + [fair] * 10)
    assert t == 300.0 and horizon == 300.0
    t, _ = convergence_rtts([off] * 3 + [fair] * 9 + [off] + [fair] * 10)
    assert t == 1300.0
    assert convergence_rtts([[26.0, 24.0]] * 10)[0] == 0.0
    assert convergence_rtts([off] * 20)[0] is None
    assert convergence_rtts([fair] * 9)[0] is None


def test_fill_time_is_the_first_sample_at_ninety_percent() -> None:
    df = _rates({0: [20.0, 30.0, 44.0, 46.0, 50.0]}, t0=100.0, step=0.1)
    assert fill_time_rtts(df, 100.0, 50.0) == pytest.approx(4.0)
    assert fill_time_rtts(df, 100.0, 60.0) is None


def test_judges_read_only_their_own_values() -> None:
    v = {"D4": d4_values({"xcp": 0.0, "highspeed": 1700.0, "reno": 4000.0}), "D1": d1_values()}
    assert get("D4").verdict(copy.deepcopy(v)).word == "reproduced"
