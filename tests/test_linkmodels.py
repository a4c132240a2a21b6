"""Links as they really behave: capacity schedules and Mahimahi traces, jitter and reordering, ACK
aggregation, policer and shaper, and the sender's host (access link, TSO bursts), end to end.

Each check compares with something independent of the engine: a trace's own integral, Mahimahi's
format as its documentation states it, the probability that one-sided uniform jitter reorders a
stream, BBR's ACK-aggregation estimate (bw·T), the token bucket's bound, or the same run without the
model. Thresholds are stated with their reason beside them.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import ccarena
import numpy as np
import pytest
from ccarena.spec import SpecError
from ccarena.traces import constant, square

MTU = 1500


def run(doc: dict[str, Any], tmp_path: Path, name: str = "r") -> ccarena.Result:
    return ccarena.run(doc, out=tmp_path / name, figure=False)


def udp_through(link: dict[str, Any], secs: int = 2, rate: str = "60Mbps") -> dict[str, Any]:
    """A UDP source above the link's capacity keeps it backlogged for ``secs``."""
    return {
        "name": "udp", "duration": f"{secs}s",
        "topology": {"rtt": "20ms", "bottleneck": {"buffer": "1000pkts", **link}},
        "background": {"udp": {"rate": rate, "packet": f"{MTU}B"}},
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["ideal", "mahimahi"])
def test_a_constant_trace_carries_k_mtu_per_ms(tmp_path: Path, mode: str) -> None:
    # Three lines "1": three opportunities every ms, 36 Mbit/s; 2 s backlogged with MTU packets
    # deliver exactly 3 · 2000 packets (a 1500-byte packet uses one opportunity in both modes).
    trace = tmp_path / "three.trace"
    trace.write_text("1\n1\n1\n")
    r = run(udp_through({"trace": str(trace), "trace_mode": mode}), tmp_path)
    udp = r.summary["sources"][0]
    assert udp["delivered_bytes"] == 3 * 2000 * MTU
    assert r.summary["utilization"] == pytest.approx(1.0)
    assert r.spec["topology"]["bottleneck"]["rate"] == "36Mbps"


def test_a_square_wave_delivers_its_integral(tmp_path: Path) -> None:
    times = square(12e6, 36e6, 500)  # 12 Mbit/s for 0.5 s, then 36 Mbit/s: 24 Mbit/s on average
    trace = tmp_path / "square.trace"
    trace.write_text("".join(f"{t}\n" for t in times))
    r = run(udp_through({"trace": str(trace), "trace_mode": "ideal"}, secs=3), tmp_path)
    # Its integral over 3 s: three passes of one period (1 s) each.
    assert r.summary["sources"][0]["delivered_bytes"] == 3 * len(times) * MTU == 9_000_000


def test_a_links_capacity_is_its_schedules_integral_and_its_traces_opportunities(tmp_path: Path) -> None:
    # Utilisation's denominator, counted by the engine's own capacity code, against sums done here.
    from ccarena.analysis.capacity import capacity_bits

    sched = ccarena.load_spec(udp_through({"rate": [["0s", "10Mbps"], ["1s", "0Mbps"], ["1.5s", "30Mbps"]]}))
    link = sched.engine.bottleneck
    s = 1_000_000_000
    assert capacity_bits(link, 0, 2 * s) == pytest.approx(10e6 * 1 + 0 * 0.5 + 30e6 * 0.5)
    assert capacity_bits(link, s // 2, 1_750_000_000) == pytest.approx(10e6 * 0.5 + 30e6 * 0.25)
    # A trace of opportunities at 1, 1, 4 ms, looping with period 4 ms: (t0, t1] counts.
    trace = tmp_path / "t.trace"
    trace.write_text("1\n1\n4\n")
    tr = ccarena.load_spec(udp_through({"trace": str(trace), "trace_mode": "ideal"})).engine.bottleneck
    ms = 1_000_000
    assert capacity_bits(tr, 0, 4 * ms) == 3 * MTU * 8
    assert capacity_bits(tr, 0, 5 * ms) == 5 * MTU * 8  # the second pass's two opportunities at 5 ms
    assert capacity_bits(tr, 1 * ms, 8 * ms) == 4 * MTU * 8  # 4, 5, 5, 8 ms
    assert capacity_bits(tr, 2 * ms, 2 * ms) == 0


def test_the_trace_format_as_mahimahi_documents_it(tmp_path: Path) -> None:
    # mm-link's documentation: one integer per line, a time in ms, one MTU-sized delivery
    # opportunity per line; the same time repeated means several opportunities in that ms; the
    # file loops. Written here by hand, not by ccarena's generator.
    trace = tmp_path / "doc.trace"
    trace.write_text("0\n0\n5\n")
    spec = ccarena.load_spec(udp_through({"trace": str(trace), "trace_mode": "ideal"}))
    assert spec.engine["bottleneck"]["model"]["trace"]["opportunities_ms"] == [0, 0, 5]
    # 3 lines per 5 ms: 7.2 Mbit/s.
    assert spec.engine["bottleneck"]["rate_bps"] == 7_200_000
    assert spec.resolved["topology"]["bottleneck"]["trace_sha256"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("5\n3\n", "topology.bottleneck.trace: bad.trace line 2: times must not decrease (3 after 5)"),
        ("", "topology.bottleneck.trace: bad.trace: expected at least one line"),
        ("0\n0\n", "topology.bottleneck.trace: bad.trace: the last time is the period and must be above 0 ms"),
        ("1\n2.5\n", "topology.bottleneck.trace: bad.trace line 2: expected a time in whole ms, got '2.5'"),
    ],
)
def test_a_bad_trace_is_one_line_and_exit_2(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "bad.trace").write_text(content)
    f = tmp_path / "x.toml"
    f.write_text('duration = "1s"\n[topology]\nrtt = "20ms"\nbottleneck = { trace = "bad.trace", buffer = "10pkts" }\n'
                 '[[flows]]\ncc = "reno"\n')
    p = subprocess.run([sys.executable, "-m", "ccarena", "run", str(f), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [f"error: {message}"]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rate": [["1s", "10Mbps"]]}, "topology.bottleneck.rate[0][0]: the schedule starts at 0s"),
        ({"rate": [["0s", "10Mbps"], ["0s", "5Mbps"]]}, "topology.bottleneck.rate[1][0]: times must increase"),
        ({"jitter": {"dist": "uniform"}}, 'topology.bottleneck.jitter.max: required with dist = "uniform"'),
        ({"jitter": {"dist": "pareto", "max": "1ms"}}, 'topology.bottleneck.jitter.dist: unknown jitter distribution'),
        ({"policer": {"rate": "1Mbps"}}, "topology.bottleneck.policer.burst: required"),
        ({"ack_aggregation": {"every": "10ms", "phase": "10ms"}}, "topology.bottleneck.ack_aggregation.phase: must be below every"),
        ({"ack_aggregation": {"count": 4}}, "topology.bottleneck.ack_aggregation.timeout: required with count"),
        ({"trace_mode": "ideal"}, "topology.bottleneck.trace_mode: only with trace"),
        ({"trace": "no-such-trace"}, "topology.bottleneck.trace: no trace file 'no-such-trace' (shipped traces:"),
    ],
)
def test_link_model_mistakes_name_the_field(change: dict[str, Any], message: str) -> None:
    doc = {"duration": "1s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp", **change}},
           "flows": [{"cc": "reno"}]}  # fmt: skip
    with pytest.raises(SpecError) as e:
        ccarena.load_spec(doc)
    assert str(e.value).startswith(message), str(e.value)


def test_shipped_traces_are_what_their_recipes_make() -> None:
    from ccarena.spec.linkmodels import read_trace, shipped_traces
    from ccarena.traces.__main__ import SHIPPED

    shipped = shipped_traces()
    assert set(shipped) == set(SHIPPED)
    for name, (make, _what) in SHIPPED.items():
        assert read_trace(shipped[name], name) == make(), name
    assert constant(12e6, 1) == [1]


def step_doc(cc: str, rates: tuple[str, str], secs: int = 30) -> dict[str, Any]:
    return {
        "name": "step", "duration": f"{secs}s", "seed": 2,
        "topology": {"rtt": "40ms",
                     "bottleneck": {"rate": [["0s", rates[0]], ["10s", rates[1]]], "buffer": "100pkts"}},
        "flows": [{"cc": cc}],
        "measure": {"interval": "10ms"},
    }  # fmt: skip


@pytest.fixture(scope="module")
def step_down(tmp_path_factory: pytest.TempPathFactory) -> ccarena.Result:
    return ccarena.run(step_doc("bbr", ("50Mbps", "10Mbps")), out=tmp_path_factory.mktemp("down") / "r", figure=False)


def test_after_a_rate_step_down_the_queue_and_the_rtt_grow(step_down: ccarena.Result) -> None:
    r = step_down
    f = r.flows
    t = f["time_s"].to_numpy()
    q = r.queue
    before = q[(q["time_s"] > 8) & (q["time_s"] <= 10)]["backlog_pkts"].mean()
    after = q[(q["time_s"] > 10) & (q["time_s"] <= 11)]["backlog_pkts"].mean()
    assert after > before + 10, (before, after)
    srtt = f["srtt_us"].to_numpy()
    assert srtt[(t > 10) & (t <= 11)].max() > 1.5 * np.median(srtt[(t > 8) & (t <= 10)])


def rounds_to_follow(r: ccarena.Result) -> int:
    """Packet-timed rounds from the step at 10 s until BBR's estimate is within 10 % of 10 Mbit/s."""
    f = r.flows
    t, bw, rounds = f["time_s"].to_numpy(), f["btl_bw_bps"].to_numpy(), f["round"].to_numpy()
    followed = (t >= 10) & (bw <= 1.1 * 10e6)
    assert followed.any()
    return int(rounds[followed][0] - rounds[t >= 10][0])


@pytest.mark.xfail(strict=True, reason="the estimate falls 12 rounds after the step, not within the 11 "
                   "written before the run: the windowed max drops a sample once the round count exceeds "
                   "its round by more than 10 (11 later), and the last sample carrying the old rate can be "
                   "taken one round after the step (a packet sent before it, ACKed after it)")
def test_after_a_rate_step_down_bbr_follows_within_its_window(step_down: ccarena.Result) -> None:
    # BBR's bandwidth is a max filter over 10 packet-timed rounds (Linux bbr_bw_rtts = 10): the old
    # rate leaves it at most 10 rounds, plus the round in progress, after the step.
    assert rounds_to_follow(step_down) <= 11


@pytest.mark.parametrize(("cc", "predicted_s"), [
    # BBR: ProbeBW raises its estimate by at most 1.25 per 8-round gain cycle: from 10 to 45 Mbit/s
    # (90 % of 50) takes ceil(log(4.5)/log(1.25)) = 7 cycles of 8 rounds of 40 ms = 2.24 s.
    ("bbr", 7 * 8 * 0.040),
    # CUBIC (Linux, beta 0.7, C = 0.4) at its plateau grows as C·t³ segments: filling the new BDP
    # (167 - 33 = 134 segments more at 40 ms) takes cbrt(134 / 0.4) = 6.9 s.
    ("cubic", (134 / 0.4) ** (1 / 3)),
])  # fmt: skip
def test_after_a_rate_step_up_cubic_and_bbr_reach_the_new_rate(tmp_path: Path, cc: str, predicted_s: float) -> None:
    r = run(step_doc(cc, ("10Mbps", "50Mbps"), secs=40), tmp_path)
    f = r.flows
    t = f["time_s"].to_numpy()
    rate = f["rate_bps"].rolling(20, min_periods=20).mean().to_numpy()  # 200 ms of rate at the bottleneck
    reached = (t > 10) & (rate >= 0.9 * 50e6)
    assert reached.any(), f"{cc} never reached 45 Mbit/s"
    took = t[reached][0] - 10
    print(f"{cc}: reached 90 % of 50 Mbit/s {took:.2f} s after the step (predicted {predicted_s:.2f} s)")
    # The predictions leave out where in its cycle the step finds the algorithm; a factor of 3 tells
    # "reaches it as its own dynamics say" from "does not use the new capacity".
    assert took <= 3 * predicted_s


def jitter_doc(jitter: dict[str, Any], *, seed: int = 1, secs: int = 20) -> dict[str, Any]:
    return {
        "name": "jitter", "duration": f"{secs}s", "seed": seed,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "1000pkts", "jitter": jitter}},
        "flows": [{"cc": "reno", "app": "rate", "rate": "2Mbps"}],
        "measure": {"packets": ["0s", f"{secs}s"]},
    }  # fmt: skip


def test_order_preserving_jitter_never_reorders(tmp_path: Path) -> None:
    r = run(jitter_doc({"dist": "uniform", "max": "20ms"}), tmp_path)
    log = r.packets
    assert log is not None
    got = log[(log["event"] == "deliver") & (log["direction"] == "data")]
    assert len(got) > 3000
    assert np.all(np.diff(got["seq_bytes"].to_numpy().astype(np.int64)) > 0)
    assert r.summary["links"][0]["reordered"] == 0
    # The jitter is there: RTTs spread over the 20 ms.
    assert r.summary["flows"][0]["rtt_p99_ms"] - r.summary["flows"][0]["rtt_min_ms"] > 10


def expected_reordered(departures_ns: np.ndarray, j_ns: float, grid: int = 200) -> tuple[float, float]:
    """The expected number of RFC 4737-reordered packets, and its standard deviation as a sum of
    Bernoullis, of packets leaving a link at ``departures_ns`` (in send order) when each then draws
    an extra delay uniform on [0, J], independently: packet i is reordered when a later packet k,
    leaving g = d_k - d_i after it, draws less than j_i - g, so
    P_i = 1 - (1/J) ∫_0^J Π_{k > i, g < j} (1 - (j - g)/J) dj (midpoint rule over ``grid`` points)."""
    js = (np.arange(grid) + 0.5) * j_ns / grid
    ps = np.empty(len(departures_ns))
    for i, d in enumerate(departures_ns):
        hi = np.searchsorted(departures_ns, d + j_ns, side="left")
        gaps = departures_ns[i + 1 : hi] - d
        keep = np.ones(grid)
        for g in gaps:
            keep *= 1.0 - np.clip((js - g) / j_ns, 0.0, 1.0)
        ps[i] = 1.0 - keep.mean()
    return float(ps.sum()), float(np.sqrt((ps * (1 - ps)).sum()))


def test_reordering_jitter_reorders_as_often_as_independent_draws_predict(tmp_path: Path) -> None:
    r = run(jitter_doc({"dist": "uniform", "max": "20ms", "reorder": True}, secs=30), tmp_path)
    log = r.packets
    assert log is not None
    sent = log[(log["event"] == "dequeue") & (log["link"] == "forward") & (log["direction"] == "data")]
    # A packet enters the jittered propagation as its last bit leaves: 1500 bytes at 20 Mbit/s after
    # its transmission starts.
    departures = sent["time_ns"].to_numpy().astype(np.float64) + sent["size_bytes"].to_numpy() * 8 / 20e6 * 1e9
    want, sd = expected_reordered(departures, 20e6)
    bn = r.summary["links"][0]
    # Packets still on the line at the end are not counted: at most those of its last 40 ms
    # (20 ms of propagation and 20 ms of jitter), 7 at one per 5.8 ms.
    on_line = len(sent) - bn["jitter_delivered"]
    assert 0 <= on_line <= 10
    # Five standard deviations of the Bernoulli sum: neighbours are not independent (one long draw
    # can be overtaken by several packets), which widens the spread beyond the independent sum's;
    # and the packets left on the line.
    assert abs(bn["reordered"] - want) <= 5 * sd + on_line, (bn["reordered"], want, sd)
    # TCP sees it: out-of-order arrivals make dupACKs and SACK blocks, and RACK and the dupACK
    # threshold turn some into (spurious) fast recoveries, which an in-order path never has.
    assert r.summary["flows"][0]["fast_recoveries"] > 0


def expected_reordered_regular(gap_ms: float, j_ms: float, steps: int = 20_000) -> float:
    """RFC 4737's reordered ratio of a stream spaced exactly ``gap_ms`` apart with one-sided uniform
    jitter on [0, J]: P = 1 - (1/J) ∫_0^J Π_k (1 - max(0, (j - k·gap)/J)) dj (midpoint rule)."""
    total = 0.0
    for s in range(steps):
        j = (s + 0.5) * j_ms / steps
        keep, k = 1.0, 1
        while k * gap_ms < j:
            keep *= 1.0 - (j - k * gap_ms) / j_ms
            k += 1
        total += keep
    return 1.0 - total / steps


@pytest.mark.xfail(strict=True, reason="0.370 reordered against 0.292 for a regular stream: the reordering makes "
                   "spurious fast recoveries (210), the window then limits the flow and it sends in bursts, not "
                   "one segment every 5.8 ms; the test against the actual departures above checks the jitter")
def test_reordering_jitter_matches_the_ratio_of_a_regular_stream(tmp_path: Path) -> None:
    doc = jitter_doc({"dist": "uniform", "max": "20ms", "reorder": True}, secs=60)
    doc["measure"] = {}
    bn = run(doc, tmp_path).summary["links"][0]
    n, got = bn["jitter_delivered"], bn["reordered"] / bn["jitter_delivered"]
    want = expected_reordered_regular(1448 * 8 / 2e6 * 1e3, 20.0)  # one segment every 5.792 ms
    # 4 binomial standard errors, and 0.03 for the retransmitted copies.
    assert abs(got - want) <= 4 * math.sqrt(want * (1 - want) / n) + 0.03, (got, want, n)


def bbr_aggregation_cwnd(tmp_path: Path, every: str | None) -> float:
    reverse: dict[str, Any] = {"rate": "10Mbps", "buffer": "1000pkts"}
    if every is not None:
        reverse["ack_aggregation"] = {"every": every}
    doc = {
        "name": "agg", "duration": "40s", "seed": 1,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "10Mbps", "buffer": "200pkts"}, "reverse": reverse},
        "flows": [{"cc": "bbr"}],
    }  # fmt: skip
    r = run(doc, tmp_path, f"agg-{every}")
    f = r.flows
    steady = f[(f["time_s"] > 10) & (f["state"] == 2)]  # ProbeBW
    return float(steady["cwnd_pkts"].median())


def test_ack_aggregation_raises_bbrs_cwnd_by_bw_times_the_period(tmp_path: Path) -> None:
    # Linux tcp_bbr.c's extra_acked (bbr_update_ack_aggregation), worked by hand: ACKs released
    # every 20 ms at 10 Mbit/s of 1500-byte packets (833 packets/s) make extra_acked about
    # bw·T = 16.7 packets, added to BBR's cwnd target. The tolerance (10 to 21 packets) allows
    # for the delayed-ACK excess BBR already sees without aggregation (about 2 packets) and the
    # max filter's phase against the releases.
    plain = bbr_aggregation_cwnd(tmp_path, None)
    batched = bbr_aggregation_cwnd(tmp_path, "20ms")
    assert 10 <= batched - plain <= 21, (plain, batched)


def policer_doc(kind: str) -> dict[str, Any]:
    if kind == "droptail":
        bottleneck: dict[str, Any] = {"rate": "10Mbps", "buffer": "1bdp"}
    else:
        bottleneck = {"rate": "100Mbps", "buffer": "1bdp", kind: {"rate": "10Mbps", "burst": "100KB"}}
    return {"name": kind, "duration": "30s", "seed": 1,
            "topology": {"rtt": "100ms", "bottleneck": bottleneck}, "flows": [{"cc": "cubic"}]}  # fmt: skip


@pytest.fixture(scope="module")
def buckets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("buckets")
    return {k: ccarena.run(policer_doc(k), out=base / k, figure=False).summary for k in ("policer", "shaper", "droptail")}


def test_a_policer_and_a_shaper_hold_a_flow_to_the_bucket_rate(buckets: dict[str, dict[str, Any]]) -> None:
    bound = 10e6 + 100_000 * 8 / 30  # the bucket's rate, and its depth once over the 30 s run
    for k in ("policer", "shaper"):
        assert buckets[k]["flows"][0]["goodput_bps"] <= bound, k
    assert buckets["policer"]["links"][0]["policed"] > 0
    # A shaper is a queue in front of the bucket: it keeps the flow at the rate (90 % of it).
    assert buckets["shaper"]["flows"][0]["goodput_bps"] >= 0.9 * 10e6


@pytest.mark.xfail(strict=True, reason="the shaper loses more than the policer here (0.0084 vs 0.0065): its queue "
                   "is the 100 Mbit/s link's BDP, ten times the shaped rate's, and slow start overflows it")
def test_a_shaper_loses_less_than_a_policer(buckets: dict[str, dict[str, Any]]) -> None:
    # A shaper is a queue in front of the bucket: it absorbs what a policer drops.
    assert buckets["shaper"]["flows"][0]["loss_rate"] < buckets["policer"]["flows"][0]["loss_rate"]


@pytest.mark.xfail(strict=True, reason="one long-lived CUBIC flow loses about as much behind a 10 Mbit/s policer "
                   "(100 KB bucket) as through a one-BDP DropTail queue at 10 Mbit/s over 30 s (0.0065 vs 0.0101): "
                   "slow start's overshoot dominates both; Flach et al.'s 4-6x is over real, mostly short, transfers")
def test_a_policer_drops_far_more_than_a_queue(buckets: dict[str, dict[str, Any]]) -> None:
    loss = {k: s["flows"][0]["loss_rate"] for k, s in buckets.items()}
    # Flach et al. (SIGCOMM 2016) found policed transfers losing about 4-6 times as much as others;
    # the mechanism (no queue absorbs a burst) must at least double the loss of a one-BDP queue.
    assert loss["policer"] >= 2 * loss["droptail"], loss


def host_doc(host: bool, era: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "host", "duration": "30s", "seed": 1,
        "topology": {"rtt": "100ms", "bottleneck": {"rate": "250Mbps", "buffer": "0.05bdp"}},
        "flows": [{"cc": "cubic", "count": 2, "params": {"beta": 0.8, "hystart": False}}],
        "measure": {"packets": ["5s", "30s"]},
    }  # fmt: skip
    if host:
        doc["tcp"] = {"host": {"nic": "1Gbps"} | ({"era": era} if era else {})}
    return doc


def drop_runs(log: Any) -> np.ndarray:
    """Lengths of the runs of bottleneck drops: drops less than two packet times (at 250 Mbit/s) apart."""
    drops = log[(log["event"] == "drop") & (log["link"] == "forward")]["time_ns"].to_numpy().astype(np.int64)
    if len(drops) == 0:
        return np.array([0])
    breaks = np.flatnonzero(np.diff(drops) > 2 * 48_000) + 1
    return np.diff(np.concatenate(([0], breaks, [len(drops)])))


def test_tso_bursts_through_a_1gbps_nic_make_loss_come_in_bursts(tmp_path: Path) -> None:
    smooth = run(host_doc(False), tmp_path, "smooth")
    bursty = run(host_doc(True), tmp_path, "bursty")
    assert smooth.packets is not None and bursty.packets is not None
    a, b = drop_runs(smooth.packets), drop_runs(bursty.packets)
    print(f"drop runs: smooth mean {a.mean():.2f} (max {a.max()}), TSO mean {b.mean():.2f} (max {b.max()})")
    assert b.mean() > a.mean()
    # A super-packet (45 segments of 1448 bytes, 64 KB) lands in the host queue at once: 44 wait
    # while the first is on the wire. Without TSQ (Linux 2.6) the queue may hold more than one.
    access = [link for link in bursty.summary["links"] if link["name"].startswith("access")]
    assert len(access) == 2
    assert max(link["max_backlog_pkts"] for link in access) >= 44
    assert all(link["drops"] == 0 for link in access)


@pytest.mark.xfail(strict=True, reason="a host queue reached 89 packets: without TSQ (Linux 2.6) a second "
                   "super-packet joins the first before it has left the NIC")
def test_the_host_queue_holds_one_super_packet_at_a_time(tmp_path: Path) -> None:
    bursty = run(host_doc(True), tmp_path, "bursty")
    access = [link for link in bursty.summary["links"] if link["name"].startswith("access")]
    assert all(1 < link["max_backlog_pkts"] <= 45 for link in access)


def test_with_tsq_the_host_queue_holds_one_super_packet_at_a_time(tmp_path: Path) -> None:
    # Today's Linux (TCP Small Queues): a sender hands nothing down while more than
    # max(two super-packets, 1 ms of its pacing rate) is in its host queue and NIC. The ACK
    # clock releases data at most at twice the bottleneck's rate (slow start), 500 Mbit/s,
    # which the 1 Gbit/s NIC drains as it comes: the queue holds at most the super-packet
    # being sent, 45 packets (64 KB), what Linux 2.6 exceeds (the xfail above).
    today = run(host_doc(True, "linux-today"), tmp_path, "today")
    access = [link for link in today.summary["links"] if link["name"].startswith("access")]
    print("host queues:", [link["max_backlog_pkts"] for link in access])
    assert len(access) == 2
    assert all(1 < link["max_backlog_pkts"] <= 45 and link["drops"] == 0 for link in access)
    c = today.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]


def tso_autosize(cwnd: float, inflight: float, ssthresh: float, srtt_us: float, mss: int = 1448) -> int:
    """Linux's ``tcp_tso_autosize`` (5.18+) for an unpaced socket with min RTT above 16.4 ms (no RTT
    allowance), with ``tcp_update_pacing_rate``'s rate and ``tcp_cwnd_test``'s half-window cap."""
    ratio = 2.0 if math.isnan(ssthresh) or cwnd < ssthresh / 2 else 1.2  # NaN: no ssthresh yet
    rate = mss * max(cwnd, inflight) * ratio / (srtt_us / 1e6) if srtt_us > 0 else math.inf
    segs = min(max(int(min(rate, 2**62)) // 1024 // mss, 2), (65_536 - 321) // mss)
    return min(segs, max(int(cwnd) // 2, 1))


def autosize_bursts(tmp_path: Path) -> tuple[list[tuple[int, int, int]], dict[int, tuple[int, int]], int]:
    """One CUBIC flow in slow start (no HyStart) at 40 ms into 250 Mbit/s through a 1 Gbit/s NIC,
    era today. The packets a send hands the host queue at one instant are one super-packet: in
    slow start an ACK opens four segments, the sender sends once the room reaches the goal (or
    1 ms after its last send), and the rest (under four) waits for the next ACK. Each burst is
    compared with the goal at the trace samples (every 10 ms) before and after it; bursts of small
    goals (under 8 segments, where the rest can make a second super-packet) and from the first
    retransmission on are left out. Returns the bursts above the larger goal (at, size, goal),
    the largest burst and the goal of each bracket whose two goals agree, and the bursts compared."""
    doc = {
        "name": "autosize", "duration": "2s", "seed": 1,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "250Mbps", "buffer": "1bdp"}},
        "tcp": {"host": {"nic": "1Gbps", "era": "linux-today"}},
        "flows": [{"cc": "cubic", "params": {"hystart": False}}],
        "measure": {"interval": "10ms", "packets": ["0s", "2s"]},
    }  # fmt: skip
    r = run(doc, tmp_path)
    assert r.packets is not None
    f = r.flows.sort_values("t_ns")
    rtx = f[f["retrans_pkts_total"] > 0]
    end_ns = int(rtx["t_ns"].iloc[0]) - 10_000_000 if len(rtx) else 2_000_000_000
    log = r.packets
    enq = log[(log["link"] == "access0") & (log["event"] == "enqueue") & (log["time_ns"] < end_ns)]
    bursts = enq.groupby("time_ns").size()
    t = f["t_ns"].to_numpy()
    goal = [tso_autosize(row.cwnd_pkts, row.inflight_pkts, row.ssthresh_pkts, row.srtt_us)
            for row in f.itertuples()]  # fmt: skip
    over: list[tuple[int, int, int]] = []
    steady: dict[int, tuple[int, int]] = {}
    compared = 0
    for at, n in bursts.items():
        k = int(np.searchsorted(t, at, side="right"))
        if k == 0 or k >= len(t):
            continue
        lo, hi = min(goal[k - 1], goal[k]), max(goal[k - 1], goal[k])
        if lo < 8:
            continue
        compared += 1
        if n > hi:
            over.append((int(at), int(n), hi))
        if lo == hi:
            steady[k] = (max(steady.get(k, (0, lo))[0], int(n)), lo)
    return over, steady, compared


def test_today_super_packets_never_exceed_tcp_tso_autosize(tmp_path: Path) -> None:
    over, _, compared = autosize_bursts(tmp_path)
    print(f"{compared} bursts compared; above the goal: {over[:5]}")
    assert compared >= 100 and not over


@pytest.mark.xfail(strict=True, reason="the largest burst equalled the goal in 1 of 11 brackets with a steady goal: "
                   "all of them at the 45-segment cap, where the 1 ms rule of tcp_tso_should_defer sends first, at "
                   "41-44 segments (slow start's ACK clock opens 2 x 21.6 segments per ms at 250 Mbit/s)")
def test_today_super_packets_reach_the_autosize_goal(tmp_path: Path) -> None:
    # Where the goal held still for a whole bracket, its largest burst is the goal in at least
    # three brackets of four (the goal binds: sends wait for it).
    _, steady, _ = autosize_bursts(tmp_path)
    reached = sum(1 for n, g in steady.values() if n == g)
    assert len(steady) >= 4 and reached >= 0.75 * len(steady)


def test_host_era_today_conserves_packets_and_repeats_exactly(tmp_path: Path) -> None:
    doc = host_doc(True, "linux-today") | {"duration": "10s", "measure": {}}
    doc["flows"] = [{"cc": "cubic"}, {"cc": "bbr"}, {"cc": "reno", "host": {"tso": False}}]
    a = run(doc, tmp_path, "a")
    run(doc, tmp_path, "b")
    c = a.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()
    assert a.spec["tcp"]["host"] == {"nic": "1Gbps", "txqueuelen": 1000, "era": "linux-today", "tsq_limit": "1MiB",
                                     "tso": True, "tso_win_divisor": 3}  # fmt: skip


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ({"era": "linux-3.2"}, 'tcp.host.era: unknown host era "linux-3.2"'),
        ({"era": "linux-today", "tso_defer": "2ms"}, 'tcp.host.tso_defer: only with era = "linux-2.6"'),
        ({"tsq_limit": "256KB"}, 'tcp.host.tsq_limit: only with era = "linux-today"'),
        ({"era": "linux-today", "tsq_limit": "0B"}, "tcp.host.tsq_limit: must be greater than 0"),
    ],
)
def test_host_era_mistakes_name_the_field(host: dict[str, Any], message: str) -> None:
    doc = {"duration": "1s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
           "tcp": {"host": {"nic": "1Gbps", **host}}, "flows": [{"cc": "reno"}]}  # fmt: skip
    with pytest.raises(SpecError) as e:
        ccarena.load_spec(doc)
    assert str(e.value).startswith(message), str(e.value)


def test_every_model_at_once_conserves_packets_and_repeats_exactly(tmp_path: Path) -> None:
    doc = {
        "name": "all", "duration": "10s", "seed": 3,
        "topology": {"rtt": "60ms",
                     "bottleneck": {"rate": [["0s", "30Mbps"], ["3s", "0bps"], ["3.2s", "20Mbps"]], "buffer": "1bdp",
                                    "delay": [["0s", "5ms"], ["6s", "15ms"]],
                                    "jitter": {"dist": "exponential", "mean": "1ms", "reorder": True},
                                    "policer": {"rate": "25Mbps", "burst": "60KB"}},
                     "reverse": {"ack_aggregation": {"count": 8, "timeout": "5ms"}, "shaper": {"rate": "5Mbps", "burst": "3KB"}}},
        "tcp": {"host": {"nic": "1Gbps"}},
        "flows": [{"cc": "cubic", "count": 2}, {"cc": "bbr"}],
        "background": {"web": {"sessions": 5}},
    }  # fmt: skip
    a = run(doc, tmp_path, "a")
    run(doc, tmp_path, "b")
    c = a.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()
    names = [link["name"] for link in a.summary["links"]]
    assert names[:2] == ["forward", "reverse"] and names[2:] == ["access0", "access1", "access2"]


def test_list_traces_names_each_shipped_trace_with_its_own_rate(capsys: pytest.CaptureFixture[str]) -> None:
    from ccarena import cli
    from ccarena.spec.linkmodels import shipped_traces

    assert cli.main(["list", "traces"]) == 0
    out = capsys.readouterr().out
    for name in shipped_traces():
        assert f"\n{name}  " in f"\n{out}"
    assert "square-12-36mbps-1s  24.000 Mbit/s, 4000 opportunities, period 2000 ms" in out
    # A shipped trace is named by a link as it is listed.
    spec = ccarena.load_spec(udp_through({"trace": "constant-48mbps"}))
    assert spec.engine["bottleneck"]["rate_bps"] == 48_000_000


def test_jitter_counts_as_randomness_for_repeats() -> None:
    from ccarena.campaign.grid import has_randomness

    plain = {"duration": "1s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
             "flows": [{"cc": "reno"}]}  # fmt: skip
    jittery = {**plain, "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp",
                                                                   "jitter": {"max": "1ms"}}}}  # fmt: skip
    assert not has_randomness(ccarena.load_spec(plain))
    assert has_randomness(ccarena.load_spec(jittery))


def _tiny_bdp_split(cc: str, jitter: str | None) -> float:
    """C4's campaign file at one point (1 Mbit/s, 13 KB, the 160 ms flow 10 s after the 16 ms one, seed
    1), with ``jitter`` in place of the file's own (none for None): the 16 ms flow's throughput at the
    router over the 160 ms flow's, over the second half."""
    from ccarena.presets import get

    doc = get("C4").document()
    del doc["sweep"]
    params = doc["flows"][0]["params"] if cc == "cubic" else None
    doc["flows"] = [
        {"cc": cc, "rtt": "16ms", "start": "0s"} | ({"params": params} if params else {}),
        {"cc": cc, "rtt": "160ms", "start": "10s"} | ({"params": params} if params else {}),
    ]
    doc["measure"]["interval"] = "100ms"
    doc["topology"]["bottleneck"].pop("jitter")
    if jitter is not None:
        doc["topology"]["bottleneck"]["jitter"] = {"dist": "uniform", "max": jitter}
    flows = ccarena.run(doc).flows
    late = flows[flows["time_s"] > 300]
    short, long = (late[late["flow"] == f]["rate_bps"].mean() for f in (0, 1))
    return float(short / long)


def test_a_tenth_of_a_millisecond_of_jitter_breaks_a_drop_tail_phase_lock() -> None:
    """The README's phase-effects figures (Floyd and Jacobson 1992): without jitter the deterministic
    runs lock into one pattern at the full 13 KB queue (CUBIC 2.6's 16 ms flow at 0.60 times the 160 ms
    flow's throughput, NewReno's at 2.25); 0.1 ms of order-kept jitter on the bottleneck, a 120th of a
    packet's 12 ms on the wire, gives 1.86 and 8.4. Exact figures: one seed, and the engine is
    deterministic."""
    assert round(_tiny_bdp_split("cubic", None), 2) == 0.60
    assert round(_tiny_bdp_split("newreno", None), 2) == 2.25
    assert round(_tiny_bdp_split("cubic", "0.1ms"), 2) == 1.86
    assert round(_tiny_bdp_split("newreno", "0.1ms"), 1) == 8.4


def test_list_links_shows_every_model_key_with_the_default_a_file_gets(capsys: pytest.CaptureFixture[str]) -> None:
    """``ccarena list links`` names every link-model and host key; each default it prints is the value
    the experiment file resolves to when the key is left out."""
    import re

    from ccarena import cli

    assert cli.main(["list", "links"]) == 0
    out = capsys.readouterr().out
    shown = dict(re.findall(r"^\s+(\w+)\s+.*?default (\S+)", out, flags=re.MULTILINE))
    for key in ("rate", "delay", "trace", "trace_mode", "trace_once", "jitter", "ack_aggregation", "policer",
                "shaper", "dist", "reorder", "every", "phase", "count", "timeout", "burst", "nic", "txqueuelen",
                "tso", "tso_segs", "tso_win_divisor", "tso_defer", "era", "tsq_limit"):
        assert re.search(rf"^\s+{key}\s", out, flags=re.MULTILINE), key
    spec = ccarena.load_spec({
        "name": "x", "duration": "1s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp", "jitter": {"max": "1ms"},
                                                   "ack_aggregation": {"every": "5ms"}}},
        "tcp": {"host": {"nic": "1Gbps"}}, "flows": [{"cc": "reno"}],
    })  # fmt: skip
    resolved = {**spec.resolved["tcp"]["host"], **spec.resolved["topology"]["bottleneck"]["jitter"],
                **spec.resolved["topology"]["bottleneck"]["ack_aggregation"],
                "delay": spec.resolved["topology"]["bottleneck"]["delay"]}
    today = ccarena.load_spec({
        "name": "x", "duration": "1s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
        "tcp": {"host": {"nic": "1Gbps", "era": "linux-today"}}, "flows": [{"cc": "reno"}],
    })  # fmt: skip
    # The default era is left out of a resolved file (files written before it resolve as they did).
    assert "era" not in resolved and shown["era"] == '"linux-2.6"'
    resolved["tsq_limit"] = today.resolved["tcp"]["host"]["tsq_limit"]
    for key in ("txqueuelen", "tso", "tso_win_divisor", "tso_defer", "tsq_limit", "dist", "phase", "delay"):
        value = resolved[key]
        printed = "true" if value is True else "false" if value is False else f'"{value}"' if isinstance(value, str) else str(value)
        assert shown[key] == printed, (key, shown[key], printed)
