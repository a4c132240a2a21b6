"""Friendliness, RTT fairness, convergence, stability, responsiveness and FCT slowdown.

Unit tests on synthetic traces use worked examples of the metrics (Jain
1984; the tcpeval suite's gain/loss, draft-irtf-iccrg-tcpeval-01; Li, Leith
& Shorten 2007's convergence definition, an attribution not confirmed in a
second source; coefficient of variation); simulated checks compare with
answers known independently.
"""

from __future__ import annotations

import math
from typing import Any

import ccarena
import numpy as np
import pytest
from ccarena.analysis.metrics import (
    alive_in_bins,
    binned_rates,
    convergence,
    cov,
    friendliness,
    friendliness_vs_baseline,
    ideal_fct_ns,
    responsiveness,
)

S = 1_000_000_000


def test_cov_of_the_worked_example() -> None:
    # Samples 8, 10, 12 Mbit/s: mean 10, population sigma 1.633 -> 0.163.
    assert cov([8, 10, 12]) == pytest.approx(0.16330, abs=1e-5)
    assert cov([5]) is None and cov([0, 0]) is None


def test_convergence_of_the_worked_example() -> None:
    # 100 Mbit/s, flow 2 joins at 20 s; 1-s averages at t = 21 ... 28 s.
    new = [5, 12, 21, 33, 38, 41, 44, 45]
    old = [95, 88, 79, 67, 62, 59, 56, 55]
    rates = np.array([old, new], dtype=float) * 1e6
    ends = np.arange(21, 29, dtype=np.int64) * S
    alive = np.ones_like(rates, dtype=bool)
    # Within 20 % of the fair share 50 (40 ... 60) first at 26 s (59, 41), and still at 27 s:
    # 6 s. Jain >= 0.9 first at 25 s: (62, 38) gives 100^2 / (2 (62^2 + 38^2)) = 0.9455, while
    # (67, 33) at 24 s gives 0.8966: 5 s.
    (e,) = convergence(rates, alive, ends, S, [20 * S], delta=0.2, hold_bins=1, jain=0.9)
    assert e == {"start_s": 20.0, "converged": True, "time_s": 6.0, "jain_converged": True, "jain_time_s": 5.0}
    # Holding for 3 more seconds is more than the trace has: not converged, and still a value.
    (e,) = convergence(rates, alive, ends, S, [20 * S], delta=0.2, hold_bins=3, jain=0.9)
    assert e["converged"] is False and e["time_s"] is None


def test_binned_rates_and_whole_bins() -> None:
    # Two flows, 100 ms rows for 2 s; flow 1 starts at 0.5 s.
    t = np.repeat(np.arange(1, 21, dtype=np.uint64) * (S // 10), 2)
    flow = np.tile(np.array([0, 1], dtype=np.uint32), 20)
    nbytes = np.where(flow == 0, 125_000, 62_500).astype(np.uint64)  # 10 and 5 Mbit/s
    ends, r = binned_rates(t, flow, nbytes, 2, 0, 2 * S, S)
    assert list(ends) == [S, 2 * S]
    assert r[0].tolist() == [10e6, 10e6] and r[1].tolist() == [5e6, 5e6]
    alive = alive_in_bins([(0, 2 * S), (S // 2, 2 * S)], ends, S)
    assert alive.tolist() == [[True, True], [False, True]]


def test_responsiveness_of_a_synthetic_take_over() -> None:
    # 100 ms intervals. Until 10 s both flows send 50 Mbit/s; flow 0 stops at 10 s and flow 1
    # then sends 60, 70, 80, 90, 95, 100 Mbit/s. Freed 50: 80 % of it is reached at 90 Mbit/s
    # (the 4th interval, 0.4 s), 95 % at 97.5 Mbit/s (the 6th, 0.6 s).
    ts, fs, bs = [], [], []
    for k in range(1, 101):
        for f in (0, 1):
            ts.append(k * S // 10)
            fs.append(f)
            bs.append(625_000)
    for k, mbps in enumerate([60, 70, 80, 90, 95, 100, 100], start=101):
        ts.append(k * S // 10)
        fs.append(1)
        bs.append(mbps * 1_000_000 // 80)
    t = np.array(ts, dtype=np.uint64)
    f = np.array(fs, dtype=np.uint32)
    b = np.array(bs, dtype=np.uint64)
    (e,) = responsiveness(t, f, b, [(0, 10 * S), (0, 11 * S)], [10 * S, None], S // 10, S)
    assert e == {"flow": 0, "stop_s": 10.0, "freed_bps": 50_000_000, "t80_s": 0.4, "t95_s": 0.6}


def test_friendliness_of_the_worked_example() -> None:
    # 2 CUBIC flows at 32 Mbit/s and 2 Reno at 18 on 100 Mbit/s: F = 32/18 = 1.78; the Reno
    # flows' share of the fair 25 is 0.72. Gain/loss: Reno 40 Mbit/s in the baseline, 36 mixed.
    f = friendliness({0: 32.0, 1: 32.0, 2: 18.0, 3: 18.0}, [False, False, True, True])
    assert f == {"standard_share": 0.72, "ratio": pytest.approx(1.777778)}
    assert friendliness_vs_baseline({0: 27.0, 1: 27.0, 2: 18.0, 3: 18.0}, {2: 20.0, 3: 20.0}, [2, 3]) == 0.9


def test_ideal_fct() -> None:
    # 10 packets with IW 10: one round trip (50 ms) and 10 x 1500 wire bytes at 100 Mbit/s (1.2 ms).
    assert ideal_fct_ns(14480, 1448, 52, 10, 50_000_000, 100e6) == pytest.approx(51_200_000)
    # 30 packets: windows 10 + 20 -> 2 rounds, and 45 000 wire bytes at 1 Tbit/s: 360 ns.
    assert ideal_fct_ns(30 * 1448, 1448, 52, 10, 50_000_000, 1e12) == pytest.approx(100_000_360)


def test_two_identical_reno_flows_are_friendly() -> None:
    doc = {
        "duration": "120s",
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "50Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}, {"cc": "reno"}],
        "measure": {"standard_groups": [1], "window": ["20s", "120s"]},
    }
    s = ccarena.run(doc).summary
    fr = s["friendliness"]
    assert fr["window_s"] == [20.0, 120.0] and fr["standard_groups"] == [1]
    assert 0.9 <= fr["ratio"] <= 1.1 and 0.95 <= fr["standard_share"] <= 1.05
    assert s["jain_window_s"] == [20.0, 120.0]


def test_a_survivor_in_slow_start_takes_the_freed_capacity_in_a_few_round_trips() -> None:
    # Flow 1 starts 50 ms before flow 0 stops, so it is in slow start: its window doubles each
    # RTT from about 2 x IW, and reaches 80 % of the 417-packet BDP after log2(333/20) = 4.1
    # round trips of 50 ms.
    doc = {
        "duration": "8s",
        "topology": {"rtt": "50ms", "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno", "stop": "5s"}, {"cc": "reno", "start": "4.95s"}],
        "measure": {"interval": "10ms"},
    }
    (e,) = ccarena.run(doc).summary["responsiveness"]["events"]
    assert e["flow"] == 0 and e["freed_bps"] > 95e6
    rtts = e["t80_s"] / 0.05
    assert abs(rtts - math.log2(0.8 * 417 / 20)) <= 1.5
    assert e["t95_s"] >= e["t80_s"]


def test_rtt_fairness_defaults_to_the_shortest_and_longest_groups() -> None:
    doc = {
        "duration": "60s",
        "topology": {"bottleneck": {"rate": "50Mbps", "buffer": "1bdp"}, "rtt": "40ms"},
        "flows": [{"cc": "cubic", "rtt": "160ms"}, {"cc": "cubic", "rtt": "40ms"}, {"cc": "cubic", "rtt": "80ms"}],
    }
    s = ccarena.run(doc).summary
    rf = s["rtt_fairness"]
    assert (rf["short_group"], rf["long_group"], rf["rtt_ratio"]) == (1, 0, 4.0)
    by_flow = {f["flow"]: f["window_rate_bps"] for f in s["flows"]}
    assert rf["throughput_ratio"] == pytest.approx(by_flow[1] / by_flow[0], rel=1e-5)
    assert rf["throughput_ratio"] > 1.0
    with pytest.raises(ccarena.SpecError, match=r"measure\.rtt_fairness\[1\]: expected an integer in \[0, 2\]"):
        ccarena.load_spec({**doc, "measure": {"rtt_fairness": [0, 3]}})


def test_stability_and_fct_slowdown_appear_in_every_run() -> None:
    s = ccarena.run(
        ccarena.spec.read_toml(
            __import__("pathlib").Path(__file__).resolve().parent.parent / "scenarios" / "rhee2007_surge.toml"
        ),
        duration="20s",
        set={"flows[1].start": "5s"},
    ).summary
    st = s["stability"]
    assert st["window_s"] == [10.0, 20.0] and len(st["cov_1s"]["flows"]) == 2
    assert st["cov_10s"] is None  # one 10-s bin in a 10-s window says nothing
    tr = s["transfers"]
    assert tr["slowdown_p50"] is not None and tr["slowdown_p50"] >= 1.0
    assert tr["slowdown_p99"] >= tr["slowdown_p95"] >= tr["slowdown_p50"]


def test_friendliness_against_a_baseline_run_is_one_for_standard_tcp_itself(tmp_path: Any) -> None:
    doc = {
        "duration": "20s",
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "cubic"}, {"cc": "reno"}],
        "sweep": {"flows[0].cc": ["reno", "cubic"], "baseline": "reno"},
    }
    runs = ccarena.sweep(doc, out=tmp_path / "c", jobs=1).runs
    own = runs[runs["baseline"].isna()].set_index("flows[0].cc")
    # Reno against Reno is its own baseline run: the same run, exactly 1.
    assert own.loc["reno", "friendliness_vs_reno"] == 1.0
    cubic = own.loc["cubic", "friendliness_vs_reno"]
    assert 0 < cubic and not math.isnan(cubic)
    assert runs[runs["baseline"] == "reno"]["friendliness_vs_reno"].isna().all()


def test_results_of_format_1_are_read_with_todays_names(tmp_path: Any) -> None:
    import json

    import pyarrow.parquet as pq

    r = ccarena.run({"duration": "2s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
                     "flows": [{"cc": "reno"}]}, out=tmp_path / "r", figure=False)  # fmt: skip
    # Turn the folder into what ccarena wrote before format 2.
    old_names = {"delivered_bytes_total": "delivered_bytes", "retrans_pkts_total": "retrans", "drops_pkts": "drops"}
    for name in ("flows", "queue"):
        t = pq.read_table(r.path / f"{name}.parquet")
        t = t.rename_columns([old_names.get(c, c) for c in t.column_names])
        pq.write_table(t.replace_schema_metadata({"ccarena.format_version": "1"}), r.path / f"{name}.parquet")
    summary = json.loads((r.path / "summary.json").read_text())
    summary["format_version"] = 1
    for f in summary["flows"]:
        f["id"] = f.pop("flow")
    (r.path / "summary.json").write_text(json.dumps(summary))
    loaded = ccarena.Result.load(r.path)
    assert {"delivered_bytes_total", "retrans_pkts_total"} <= set(loaded.flows.columns)
    assert "drops_pkts" in loaded.queue.columns and loaded.summary["flows"][0]["flow"] == 0
    newer = {**summary, "format_version": 99}
    (r.path / "summary.json").write_text(json.dumps(newer))
    with pytest.raises(ValueError, match="newer than this ccarena understands"):
        ccarena.Result.load(r.path)
