"""Networks beyond the dumbbell: the parking lot, links and paths, per-link measurement."""

from __future__ import annotations

import copy
import functools
import math
import re
import statistics
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest
from ccarena.spec import SpecError


def lot(hops: int, *, rtt: str | None = None, cc: str = "reno", secs: int = 120, seed: int = 1,
        qdisc: str = "droptail", rate: str = "10Mbps") -> dict[str, Any]:
    """A parking lot: one long flow across every hop, one cross flow per hop, starts spread over 1 s."""
    start = {"dist": "uniform", "lo": "0s", "hi": "1s"}
    flows = [{"cc": cc, "start": start}]
    flows += [{"cc": cc, "path": [f"hop{h + 1}"], "start": start} for h in range(hops)]
    topo: dict[str, Any] = {"kind": "parking_lot", "hops": hops,
                            "link": {"rate": rate, "delay": "10ms", "buffer": "1bdp", "qdisc": qdisc}}
    if rtt is not None:
        topo["rtt"] = rtt
    return {"name": "lot", "duration": f"{secs}s", "seed": seed, "topology": topo, "flows": flows}


def test_a_parking_lot_resolves_to_named_links_routes_and_rtts() -> None:
    spec = ccarena.load_spec(lot(3))
    net = spec.engine["network"]
    assert net["names"] == ["hop1", "hop1_rev", "hop2", "hop2_rev", "hop3", "hop3_rev"]
    # The long flow crosses every hop; its ACKs the twins, last first; cross flows one hop each.
    assert net["routes"][0] == {"data": [0, 2, 4], "ack": [5, 3, 1], "measure": 0}
    assert [r["data"] for r in net["routes"][1:]] == [[0], [2], [4]]
    flows = spec.resolved["flows"]
    assert flows[0]["path"] == ["hop1", "hop2", "hop3"] and flows[0]["ack_path"] == ["hop3_rev", "hop2_rev", "hop1_rev"]
    # Without topology.rtt each group's RTT is twice its own path's delay.
    assert [f["rtt"] for f in flows] == ["60ms", "20ms", "20ms", "20ms"]
    assert spec.resolved["measure"]["link"] == "hop1"
    # spec.toml is a file that resolves to the same experiment.
    again = ccarena.load_spec(copy.deepcopy(spec.resolved))
    assert again.engine == spec.engine


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["flows"][1].update(path=["hop9"]), "flows[1].path[0]: no link 'hop9' (did you mean"),
        (lambda d: d["topology"].pop("hops"), "topology.hops: required for a parking lot"),
        (lambda d: d.update(measure={"link": "hop7"}), "measure.link: no link 'hop7'"),
        (lambda d: d["flows"][0].update(rtt="30ms"), "flows[0].rtt: must be at least twice its path's delay (60ms)"),
        (lambda d: d["topology"].update(bottleneck={"rate": "1Mbps", "buffer": "1bdp"}),
         'topology.bottleneck: only for kind = "dumbbell"'),
    ],
)
def test_mistakes_in_a_network_name_the_field(change: Any, message: str) -> None:
    doc = lot(3)
    change(doc)
    with pytest.raises(SpecError) as e:
        ccarena.load_spec(doc)
    assert str(e.value).startswith(message), str(e.value)


def test_a_path_that_is_not_connected_and_paths_in_a_dumbbell_are_refused() -> None:
    doc = {"name": "x", "duration": "5s", "topology": {"kind": "links", "links": [
        {"name": "a", "from": "s", "to": "r1", "rate": "10Mbps", "buffer": "50pkts"},
        {"name": "b", "from": "r2", "to": "d", "rate": "10Mbps", "buffer": "50pkts"}]},
        "flows": [{"cc": "reno", "path": ["a", "b"]}]}  # fmt: skip
    with pytest.raises(SpecError, match=r"flows\[0\]\.path\[1\]: b leaves r2, but a before it ends at r1"):
        ccarena.load_spec(doc)
    dumbbell = {"name": "x", "duration": "5s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
                "flows": [{"cc": "reno", "path": ["a"]}]}  # fmt: skip
    with pytest.raises(SpecError, match=r'flows\[0\]\.path: only with topology.kind = "parking_lot" or "links"'):
        ccarena.load_spec(dumbbell)


def test_a_one_link_network_gives_the_dumbbells_numbers() -> None:
    """The same link written as the dumbbell and as kind = "links": every flow's numbers are the same."""
    link = {"rate": "20Mbps", "buffer": "1bdp", "delay": "5ms"}
    flows = [{"cc": "cubic", "rtt": "40ms"}, {"cc": "reno", "rtt": "80ms", "start": "2s"}]
    dumbbell = ccarena.run({"name": "d", "duration": "20s", "topology": {"rtt": "40ms", "bottleneck": link},
                            "flows": copy.deepcopy(flows)})  # fmt: skip
    net = ccarena.run({"name": "d", "duration": "20s", "seed": 1,
                       "topology": {"kind": "links", "rtt": "40ms", "links": [{"name": "core", **link}]},
                       "flows": [{**f, "path": ["core"]} for f in flows]})  # fmt: skip
    keep = ("goodput_bytes", "bottleneck_bytes", "sent_pkts", "retransmits", "drops", "rtt_p50_ms", "window_rate_bps")
    for a, b in zip(dumbbell.summary["flows"], net.summary["flows"], strict=True):
        assert {k: a[k] for k in keep} == {k: b[k] for k in keep}
    assert dumbbell.summary["queue"]["drops"] == net.summary["links"][0]["drops"]
    assert "links" not in dumbbell.summary


def test_a_flow_limited_at_its_second_link_leaves_its_first_queue_empty_and_bytes_add_up(tmp_path: Path) -> None:
    doc = {"name": "two", "duration": "30s", "topology": {"kind": "links", "links": [
        {"name": "access", "from": "s", "to": "r", "rate": "100Mbps", "delay": "5ms", "buffer": "1bdp"},
        {"name": "core", "from": "r", "to": "d", "rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
        {"name": "spare", "from": "r", "to": "x", "rate": "10Mbps", "buffer": "1bdp"}]},
        "flows": [{"cc": "cubic", "path": ["access", "core"], "count": 2}]}  # fmt: skip
    assert "topology: link spare carries no flow's or background source's traffic" in ccarena.load_spec(doc).warnings
    r = ccarena.run(doc)
    links = {link["name"]: link for link in r.summary["links"]}
    assert links["core"]["utilization_window"] > 0.95
    assert links["access"]["drops"] == 0
    assert links["core"]["drops"] > 0
    for f in r.summary["flows"]:
        assert f["bottleneck_link"] == "core"
        # Bytes leaving a later link are never more than those leaving an earlier one.
        assert f["link_bytes"]["core"] <= f["link_bytes"]["access"]
        assert f["bottleneck_bytes"] == f["link_bytes"]["core"]
    # Data links carry data only: what left them is what the flows' data left them with.
    for name in ("access", "core"):
        assert links[name]["tx_bytes"] == sum(f["link_bytes"][name] for f in r.summary["flows"])
    # ACKs cross the twins, and nothing crosses the link no path names.
    assert links["core_rev"]["tx_packets"] > 0 and links["spare"]["tx_packets"] == 0
    assert links["spare_rev"]["tx_packets"] == 0
    # The per-link trace: one row per link per interval, summing to the counters.
    saved = r.save(tmp_path / "run")
    trace = pq.read_table(saved / "links.parquet").to_pandas()
    assert set(trace["link"]) == set(links) and len(trace) == len(links) * 300
    for name, rows in trace.groupby("link"):
        assert rows["tx_bytes"].sum() == links[name]["tx_bytes"]
        assert rows["drops_pkts"].sum() == links[name]["drops"]
    # Past the start-up bursts the first link's queue stays near empty (ACK-clocked senders: an ACK releases
    # two or three segments, which the 100 Mbit/s link sends ten times faster than the core drains them),
    # while the core's holds the standing queue.
    from ccarena.report import write_report

    page = write_report(saved).read_text()
    assert "queue backlog of every link that carried packets" in page and "core_rev" in page
    late = trace[trace["time_s"] > 15]
    assert late.loc[late["link"] == "access", "backlog_pkts"].max() <= 3
    assert late.loc[late["link"] == "core", "backlog_pkts"].mean() > 10


def test_the_emulator_takes_a_parking_lot_and_refuses_a_branching_path_in_one_line() -> None:
    from ccarena.backends.emu.checks import check_spec

    check_spec(ccarena.load_spec(lot(2)))
    branching = lot(2)
    branching["topology"] = {"kind": "links", "links": [
        {"name": n, "rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"} for n in ("a", "b", "c")]}
    branching["flows"] = [{"cc": "reno", "path": ["a", "b"]}, {"cc": "reno", "path": ["a", "c"]}]
    with pytest.raises(SpecError, match=r"flows\[1\]\.path\[1\]: c after a here, but flows\[0\]\.path has b after a"):
        check_spec(ccarena.load_spec(branching))


def test_a_network_with_hosts_names_their_access_links_in_each_flows_bytes() -> None:
    exp = lot(2, secs=2)
    exp["tcp"] = {"host": {"nic": "1Gbps"}}
    flows = ccarena.run(exp).summary["flows"]
    assert list(flows[0]["link_bytes"]) == ["access0", "hop1", "hop2"]
    assert list(flows[2]["link_bytes"]) == ["access2", "hop2"]


def _floyd_band(n: int, rtt_ratio: float) -> tuple[float, float]:
    """The long flow's share of a hop by Floyd's analysis of a connection through n congested gateways
    (Floyd 1991), in the square-root form of a Reno flow's rate (Mathis et al. 1997: rate proportional
    to 1 / (RTT sqrt(p))): x0 / xi = (ri / r0)^2 / n when the gateways' losses are synchronised (low
    end), (ri / r0) / sqrt(n) when they are independent (high end), and x0 + xi fills the hop.
    rtt_ratio = ri / r0, a cross flow's RTT over the long flow's."""
    k_sync, k_ind = rtt_ratio**2 / n, rtt_ratio / math.sqrt(n)
    return k_sync / (1 + k_sync), k_ind / (1 + k_ind)


@functools.cache
def _lot_means(hops: int, rtt: str | None, qdisc: str) -> tuple[float, float]:
    """Means over seeds 1-3: the long flow's share of a hop's 10 Mbit/s over the second half, and the
    cross flows' mean RTT over the long flow's (each over the run, queueing included)."""
    shares, ratios = [], []
    for s in (1, 2, 3):
        flows = ccarena.run(lot(hops, rtt=rtt, seed=s, qdisc=qdisc)).summary["flows"]
        shares.append(flows[0]["window_rate_bps"] / 10e6)
        ratios.append(statistics.mean(f["rtt_mean_ms"] for f in flows[1:]) / flows[0]["rtt_mean_ms"])
    return statistics.mean(shares), statistics.mean(ratios)


def _long_share(hops: int, rtt: str | None, qdisc: str = "droptail") -> float:
    """Mean over seeds 1-3 of the long flow's share of a hop's 10 Mbit/s over the second half."""
    return _lot_means(hops, rtt, qdisc)[0]


# The band fixed before the runs: r_i/r_0 = 1/n when every hop's RTT is its own (hop-proportional), 1 when
# every flow has the same RTT (the parking lot of the TCP evaluation suite). DropTail, starts spread over 1 s.
FLOYD_CASES = [
    pytest.param(5, None, id="5 hops, hop-proportional RTT"),
    pytest.param(3, None, id="3 hops, hop-proportional RTT", marks=pytest.mark.xfail(strict=True, reason=(
        "measured 0.198 (seeds 1-3: 0.284, 0.060, 0.250) above the band 0.036-0.161: drop-tail phase effects "
        "(Floyd and Jacobson 1992), which the analysis leaves out; with 1 ms of uniform per-packet jitter on every "
        "hop (order kept; a diagnostic, not this test's set-up) the same lots give 0.117 (0.138, 0.117, 0.096), "
        "inside the band"))),
    pytest.param(3, "60ms", id="3 hops, equal RTT", marks=pytest.mark.xfail(strict=True, reason=(
        "measured 0.140 (seeds 1-3: 0.108, 0.131, 0.182) below the band 0.250-0.366: the long flow queues at 3 "
        "hops, so its RTT is longer than the propagation RTT the band assumes (measured r_i/r_0 0.576; with it "
        "the band is 0.100-0.249: test_with_measured_rtts_the_long_reno_flow_gets_floyds_share)"))),
    pytest.param(5, "100ms", id="5 hops, equal RTT", marks=pytest.mark.xfail(strict=True, reason=(
        "measured 0.082 (seeds 1-3: 0.075, 0.068, 0.101) below the band 0.167-0.309, for the same reason "
        "(measured r_i/r_0 0.411; band 0.033-0.155)"))),
]


@pytest.mark.parametrize(("hops", "rtt"), FLOYD_CASES)
def test_the_long_reno_flow_of_a_parking_lot_gets_floyds_share(hops: int, rtt: str | None) -> None:
    ratio = 1.0 if rtt is not None else 1.0 / hops
    lo, hi = _floyd_band(hops, ratio)
    share = _long_share(hops, rtt)
    assert lo <= share <= hi, f"long flow's share {share:.3f} outside [{lo:.3f}, {hi:.3f}]"


# The same band and cases under the analysis's own premise (Floyd 1991 analyses Random Drop gateways; the
# square-root form assumes every congested gateway drops independently with a small probability), with RED
# at its defaults (min_th 5, max_th 15 packets, max_p 0.1, gentle): drop-tail's phase effects and standing
# queues are outside the derivation, random early drops are inside it.
RANDOM_DROP_CASES = [
    pytest.param(5, None, id="5 hops, hop-proportional RTT"),
    pytest.param(3, None, id="3 hops, hop-proportional RTT"),
    pytest.param(3, "60ms", id="3 hops, equal RTT", marks=pytest.mark.xfail(strict=True, reason=(
        "measured 0.241 (seeds 1-3: 0.237, 0.239, 0.248) just below the band 0.250-0.366: RED's standing queue "
        "(about 10 packets, 12 ms a hop) lengthens the long flow's RTT more than the cross flows' (measured "
        "r_i/r_0 0.861; band 0.198-0.332)"))),
    pytest.param(5, "100ms", id="5 hops, equal RTT"),
]


@pytest.mark.parametrize(("hops", "rtt"), RANDOM_DROP_CASES)
def test_under_random_drops_the_long_reno_flow_gets_floyds_share(hops: int, rtt: str | None) -> None:
    ratio = 1.0 if rtt is not None else 1.0 / hops
    lo, hi = _floyd_band(hops, ratio)
    share = _long_share(hops, rtt, qdisc="red")
    assert lo <= share <= hi, f"long flow's share {share:.3f} outside [{lo:.3f}, {hi:.3f}]"


PHASE_EFFECTS = pytest.mark.xfail(
    strict=True, reason="measured 0.198 above the band 0.036-0.161 (r_i/r_0 0.333): phase effects, as above")
MEASURED_RTT_CASES = [
    pytest.param(hops, rtt, qdisc, id=f"{qdisc}, {name}",
                 marks=[PHASE_EFFECTS] if (hops, rtt, qdisc) == (3, None, "droptail") else [])
    for qdisc in ("droptail", "red")
    for hops, rtt, name in [(5, None, "5 hops, hop-proportional RTT"), (3, None, "3 hops, hop-proportional RTT"),
                            (3, "60ms", "3 hops, equal RTT"), (5, "100ms", "5 hops, equal RTT")]
]  # fmt: skip


@pytest.mark.parametrize(("hops", "rtt", "qdisc"), MEASURED_RTT_CASES)
def test_with_measured_rtts_the_long_reno_flow_gets_floyds_share(hops: int, rtt: str | None, qdisc: str) -> None:
    """The band of the two tests above with each flow's measured mean RTT (queueing included) in place of
    its propagation RTT: the square-root form's RTT is the one the flow sees. Added after the propagation
    band missed the equal-RTT lots, to test the reason given for those misses: it fails if queueing delay
    does not account for them. The 3-hop drop-tail lot with hop-proportional RTTs stays outside (its miss
    is above the band, not below)."""
    share, ratio = _lot_means(hops, rtt, qdisc)
    lo, hi = _floyd_band(hops, ratio)
    assert lo <= share <= hi, f"long flow's share {share:.3f} outside [{lo:.3f}, {hi:.3f}] (r_i/r_0 {ratio:.3f})"


def water_filling(capacity: dict[str, float], paths: list[list[str]]) -> list[float]:
    """Max-min fair rates of backlogged flows by water-filling (Bertsekas and Gallager, Data Networks,
    chapter 6): raise every unfrozen flow equally until a link saturates, freeze the flows crossing it,
    repeat."""
    rate = [0.0] * len(paths)
    residual = dict(capacity)
    frozen = [False] * len(paths)
    while not all(frozen):
        shares = {
            link: residual[link] / sum(1 for f, p in enumerate(paths) if link in p and not frozen[f])
            for link in capacity
            if any(link in p and not frozen[f] for f, p in enumerate(paths))
        }
        s = min(shares.values())
        for f, p in enumerate(paths):
            if not frozen[f]:
                rate[f] += s
                for link in p:
                    residual[link] -= s
        for f, p in enumerate(paths):
            if any(residual[link] <= 1e-9 * capacity[link] for link in p):
                frozen[f] = True
    return rate


def test_water_filling_gives_the_hand_worked_example() -> None:
    # Worked by hand: L2 saturates first at 30 each, then L1 and L3 give their cross flows the rest:
    # long 30, c1 70, c2 30, c3 70 Mbit/s.
    paths = [["L1", "L2", "L3"], ["L1"], ["L2"], ["L3"]]
    assert water_filling({"L1": 100, "L2": 60, "L3": 100}, paths) == pytest.approx([30, 70, 30, 70])


@pytest.mark.xfail(strict=True, reason=(
    "measured (Mbit/s, second half of 30 s): long 3.20, cross 6.23 / 2.80 / 6.53 against max-min 3 / 7 / 3 / 7. "
    "XCP's equilibrium in a network is not max-min (Low, Andrew, Wydrowski, INFOCOM 2005): hop1, upstream of "
    "the long flow's bottleneck, sees only the sender's request and keeps offering the long flow half of its "
    "shuffled increase, which hop2 refuses, so its cross flow settles at 6.38 by the fluid model (63.8 of 70 "
    "at 100/60/100 Mbit/s, measured 63.74: crates/sim/tests/xcp.rs) and the link at 94 %; hop3, downstream, "
    "reclaims the refused increase (ns-2 xcpq.cc accounting; 6.26 before) but stays 7 % short at these "
    "5-17-packet windows (67.7 of 70 at 100 Mbit/s, where hop2 splits 30.02 / 29.96 instead of 3.20 / 2.80)"))
def test_xcp_on_every_hop_gives_every_flow_its_max_min_share() -> None:
    rates = {"hop1": 10e6, "hop2": 6e6, "hop3": 10e6}
    topo = {"kind": "parking_lot", "hops": 3, "link": {"rate": "10Mbps", "delay": "10ms", "buffer": "1bdp", "qdisc": "xcp"},
            "hop": [{"rate": "10Mbps"}, {"rate": "6Mbps"}, {"rate": "10Mbps"}]}  # fmt: skip
    flows = [{"cc": "xcp"}] + [{"cc": "xcp", "path": [f"hop{h + 1}"]} for h in range(3)]
    s = ccarena.run({"name": "x", "duration": "30s", "topology": topo, "flows": flows}).summary
    want = water_filling(rates, [list(rates), ["hop1"], ["hop2"], ["hop3"]])
    got = [f["window_rate_bps"] for f in s["flows"]]
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=0.05)


XCP_EQUAL_LOT = (
    "measured (Mbit/s, second half of 30 s): 3 hops long 4.62, cross 5.21-5.31 (-7.6 % to +6.1 % of the max-min 5); "
    "5 hops long 4.64, cross 5.19-5.29 (-7.2 % to +5.7 %). The same lots at 100 Mbit/s give the long flow 49.48 "
    "and 49.50 of 50 (-1.0 %), the cross flows 50.26-50.40. The long flow's deficit comes with several congested "
    "XCP routers on its path, whose feedback it takes the minimum of (the XCP design), and shrinks as windows grow: "
    "3 hops, 30 s, -7.6 %, -4.5 %, -2.5 % and -1.0 % at 10, 20, 40 and 100 Mbit/s; with every flow at 60 ms RTT "
    "-6.2 % at 10 Mbit/s, so not the RTTs; one hop shared by a 60 ms and a 20 ms flow 1.000 and 0.996 of the fair "
    "share; the 3-hop long flow against a cross flow on hop2 alone 0.994. Traced packet by packet (each router's "
    "offer logged on the long flow's packets, second half, 3 hops, 10 Mbit/s): every hop offers it more window, "
    "+32, +38 and +41 B per packet on average (sd 45-61 B, the control decisions' spread from one interval to the "
    "next), the hops' offers are nearly uncorrelated (|r| <= 0.08), and the header's minimum, which the sender "
    "gets, averages +0.09 B: the flow stops growing where the expected minimum of independent offers is zero, "
    "below its share at every hop. Spent positive budgets (Appendix A's residues) decide under 2 % of the "
    "minima. At 100 Mbit/s the offers are +4.0/+3.9/+4.0 B, the minimum +0.01 B, and the deficit 1 %"
)


@pytest.mark.parametrize("hops", [
    pytest.param(3, marks=pytest.mark.xfail(strict=True, reason=XCP_EQUAL_LOT)),
    pytest.param(5, marks=pytest.mark.xfail(strict=True, reason=XCP_EQUAL_LOT)),
])  # fmt: skip
def test_xcp_on_the_equal_lot_gives_every_flow_its_max_min_share(hops: int) -> None:
    # The Reno lots' parking lot (10 Mbit/s hops, starts spread over 1 s) with XCP on every hop; the
    # issue's tolerance: every flow within 5 % of its max-min share, found by water-filling.
    s = ccarena.run(lot(hops, cc="xcp", qdisc="xcp", secs=30)).summary
    names = [f"hop{h + 1}" for h in range(hops)]
    want = water_filling(dict.fromkeys(names, 10e6), [names, *([n] for n in names)])
    got = [f["window_rate_bps"] for f in s["flows"]]
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=0.05)


def test_a_campaign_over_a_parking_lot_has_a_row_per_run_per_link(tmp_path: Path) -> None:
    doc = lot(2, secs=5)
    doc["sweep"] = {"topology.link.rate": ["5Mbps", "10Mbps"], "repeat": 2}
    c = ccarena.sweep(doc, out=tmp_path / "c", jobs=1)
    links = c.query("SELECT * FROM run_links")
    assert len(links) == 4 * 4 and set(links["name"]) == {"hop1", "hop1_rev", "hop2", "hop2_rev"}
    assert "topology.link.rate_bps" in links.columns
    # Per run, the link rows are the summary's links.
    one = links[links["run_id"] == c.runs["run_id"][0]].set_index("name")
    summary = c.result(c.runs["run_id"][0]).summary
    for link in summary["links"]:
        assert one.loc[link["name"], "drops"] == link["drops"]
    assert not any(col.startswith("links[") for col in c.runs.columns)


def test_a_campaigns_links_are_a_level_of_its_tables_figures_and_report(tmp_path: Path, capsys: Any) -> None:
    """``per="link"``: one row per run per link in ``table``, each link's mean over repeats in
    ``aggregate``, the links the data load drawn in the report (ACK links left out), and
    ``ccarena results --per link``."""
    from ccarena.cli import main
    from ccarena.report.campaign import LOADED_UTILISATION, loaded_links

    doc = lot(2, secs=5)
    doc["sweep"] = {"topology.link.buffer": ["0.5bdp", "1bdp"], "repeat": 2}
    c = ccarena.sweep(doc, out=tmp_path / "c", jobs=1)
    links = c.table("link")
    assert len(links) == 4 * 4
    # A data link sends only data: its bytes are the sum of what the flows' data left it with.
    for run_id, rows in links.groupby("run_id"):
        sent: dict[str, int] = {}
        for f in c.result(run_id).summary["flows"]:
            for name, b in f["link_bytes"].items():
                sent[name] = sent.get(name, 0) + b
        for _, r in rows[rows["name"].isin(["hop1", "hop2"])].iterrows():
            assert r["tx_bytes"] == sent[r["name"]]
    agg = c.aggregate(per="link")
    assert list(agg.columns[:3]) == ["topology.link.buffer_bdp", "baseline", "name"]
    assert len(agg) == 2 * 4 and (agg["utilization_window_n"] == 2).all()
    mean = links.groupby(["topology.link.buffer_bdp", "name"])["delay_p99_ms"].mean()
    for _, r in agg.iterrows():
        assert r["delay_p99_ms_mean"] == pytest.approx(mean[(r["topology.link.buffer_bdp"], r["name"])])
    # The ACK links carry a few per cent: only the data links are "loaded".
    assert loaded_links(c) == ["hop1", "hop2"]
    assert links.loc[links["name"].str.endswith("_rev"), "utilization_window"].max() < LOADED_UTILISATION
    fig = c.plot("delay_p99_ms", per="link", where={"name": ["hop2"]})
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["name = hop2"]
    assert main(["report", str(tmp_path / "c")]) == 0
    html = (tmp_path / "c" / "report.html").read_text()
    assert "Links per point" in html and "delay_p99_ms per link against topology.link.buffer_bdp" in html
    capsys.readouterr()
    assert main(["results", str(tmp_path / "c"), "--per", "link"]) == 0
    out = capsys.readouterr().out
    assert "hop2_rev" in out and "drop_rate" in out and "delay_p99_ms" in out


def bg_lot() -> dict[str, Any]:
    """A 3-hop lot, 20 Mbit/s per hop: the long flow and a cross flow on hop1; web sessions on hop2 only
    and 5 Mbit/s of UDP on hop3 only."""
    return {"name": "lotbg", "duration": "20s", "seed": 1,
            "topology": {"kind": "parking_lot", "hops": 3, "link": {"rate": "20Mbps", "delay": "10ms", "buffer": "1bdp"}},
            "flows": [{"cc": "reno"}, {"cc": "reno", "path": ["hop1"]}],
            "background": {"web": [{"sessions": 20, "path": ["hop2"], "rtt": "40ms"}],
                           "udp": [{"rate": "5Mbps", "path": ["hop3"]}]}}  # fmt: skip


def test_background_sources_cross_the_links_they_name() -> None:
    """A link carries the flows' bytes plus the background crossing it and nothing else: hop1 exactly
    the flows' link_bytes, hop3 those plus every UDP byte delivered, hop2 those plus at least the web
    transfers' delivered payload (on the wire with headers and retransmissions)."""
    spec = ccarena.load_spec(bg_lot())
    names = spec.engine["network"]["names"]
    assert spec.engine["tcp_sources"][0]["route"]["data"] == [names.index("hop2")]
    assert spec.engine["tcp_sources"][0]["route"]["ack"] == [names.index("hop2_rev")]
    assert spec.engine["udp_sources"][0]["link"] == names.index("hop3")
    assert spec.resolved["background"]["web"][0]["path"] == ["hop2"]
    r = ccarena.run(bg_lot())
    links = {link["name"]: link for link in r.summary["links"]}
    flows: dict[str, int] = {}
    for f in r.summary["flows"]:
        for name, b in f["link_bytes"].items():
            flows[name] = flows.get(name, 0) + b
    sources = {s["name"]: s for s in r.summary["sources"]}
    assert sources["web0"]["completed"] > 100 and sources["udp0"]["delivered_bytes"] > 0
    assert links["hop1"]["tx_bytes"] == flows["hop1"]
    assert links["hop3"]["tx_bytes"] == flows["hop3"] + sources["udp0"]["delivered_bytes"]
    assert links["hop2"]["tx_bytes"] - flows["hop2"] >= sources["web0"]["delivered_bytes"]
    c = r.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["background"]["web"][0].update(path=["hop9"]), "background.web[0].path[0]: no link 'hop9'"),
        (lambda d: d["background"]["udp"][0].update(path=["hop1", "hop2"]),
         "background.udp[0].path: a UDP source crosses one link, got 2"),
        (lambda d: d["background"]["web"][0].update(direction="reverse"),
         'background.web[0].direction: a source with a path sends along it'),
        (lambda d: d["background"]["web"][0].pop("path"), None),
    ],
)
def test_background_paths_are_checked(change: Any, message: str | None) -> None:
    doc = bg_lot()
    change(doc)
    if message is None:
        ccarena.load_spec(doc)  # without a path: the measured link and its twin, as before
        return
    with pytest.raises(SpecError, match=re.escape(message)):
        ccarena.load_spec(doc)


def test_a_background_path_needs_a_network() -> None:
    doc = {"name": "d", "duration": "5s", "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
           "background": {"udp": [{"rate": "1Mbps", "path": ["forward"]}]}}  # fmt: skip
    with pytest.raises(SpecError, match=re.escape('background.udp[0].path: only with topology.kind = "parking_lot"')):
        ccarena.load_spec(doc)


def test_background_sources_with_paths_of_different_lengths_keep_their_own_slots() -> None:
    """A finished transfer's slot is reused only by a transfer whose route has as many links each way:
    web sessions across one hop and across all three of a lot run side by side (a reused slot of the
    one-hop source once took a three-hop route and overran its delay lines)."""
    doc = bg_lot()
    doc["background"] = {"web": [{"sessions": 20, "path": ["hop2"], "rtt": "40ms"},
                                 {"sessions": 20, "path": ["hop1", "hop2", "hop3"], "rtt": "80ms"}]}  # fmt: skip
    r = ccarena.run(doc)
    sources = {s["name"]: s for s in r.summary["sources"]}
    assert sources["web0"]["completed"] > 100 and sources["web1"]["completed"] > 100
    links = {link["name"]: link for link in r.summary["links"]}
    flows = {name: sum(f["link_bytes"].get(name, 0) for f in r.summary["flows"]) for name in links}
    # hop1 and hop3 carry web1's data beside the flows' (web0 crosses hop2 only).
    for name in ("hop1", "hop3"):
        assert links[name]["tx_bytes"] > flows[name], name
    c = r.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]
