"""Networks on the real kernel: a flow's path of several links in a line runs in the emulator through
the simulator's port code (crates/emu/src/engine.rs), link by link, with each link's delay between
them.

The runs are checked against the simulator on the same file, with the agreement ``ccarena compare``
is asked for elsewhere (tests/test_emu.py, tests/test_emu_linkmodels.py): within 5 % in each flow's
goodput and in each forward link's utilisation (the links the data cross); against the path itself
(the flow's bottleneck is where its queue is); and against packet conservation on every link. Each
emulated run is one at a time, at 20 to 50 Mbit/s per link and 15 to 20 s; those tests need root and
/dev/net/tun and are skipped without them. What the emulator cannot build is refused before anything
runs, which needs neither.

Not checked on the kernel: that the first link of a flow limited at its second stays near empty.
The kernel hands its TSO super-packets to the emulator whole, so they reach the first link together
(its queueing delay p99 measured 1.7 and 2.9 ms in two runs, 33-45 packets at most, where the
simulator's ACK-clocked sender gives 0.5 ms); the simulator's tests check that claim
(tests/test_network.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import ccarena
import pytest
import tomli_w
from ccarena.backends import emu as emulate
from ccarena.spec import SpecError

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
    reason="the emu backend needs root (namespaces, TUN devices) and /dev/net/tun",
)

GOODPUT_TOLERANCE = 0.05
"""Agreement in each flow's goodput between the kernel through the emulator and the simulator (the
agreement asked of ``ccarena compare`` in tests/test_emu_linkmodels.py)."""

UTILISATION_TOLERANCE = 0.05
"""Agreement in each link's utilisation (the one asked of the bottleneck in tests/test_emu.py)."""

MSS_RATE = 1448 / 1500
"""Payload share of a full-size packet (52 header bytes)."""


def parking_lot() -> dict[str, Any]:
    """Two hops of 30 Mbit/s and 10 ms, one BDP of buffer each; Reno: a long flow across both hops
    and a cross flow on each; 20 s."""
    return {
        "name": "emu-parking-lot",
        "duration": "20s",
        "topology": {"kind": "parking_lot", "hops": 2, "link": {"rate": "30Mbps", "delay": "10ms", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}, {"cc": "reno", "path": ["hop1"]}, {"cc": "reno", "path": ["hop2"]}],
        "measure": {"interval": "100ms"},
    }


def second_link_bottleneck() -> dict[str, Any]:
    """One Reno flow across hop1 at 50 Mbit/s, then hop2 at 20 Mbit/s; 10 ms each, one BDP of buffer
    each (40 ms RTT); 15 s."""
    return {
        "name": "emu-second-hop",
        "duration": "15s",
        "topology": {
            "kind": "parking_lot",
            "hops": 2,
            "link": {"delay": "10ms", "buffer": "1bdp"},
            "hop": [{"rate": "50Mbps"}, {"rate": "20Mbps"}],
        },
        "flows": [{"cc": "reno"}],
        "measure": {"interval": "100ms"},
    }


@pytest.fixture(scope="module")
def lot() -> ccarena.Comparison:
    return ccarena.compare(parking_lot(), figure=False)


@pytest.fixture(scope="module")
def second_hop() -> ccarena.Comparison:
    return ccarena.compare(second_link_bottleneck(), figure=False)


def links(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {link["name"]: link for link in summary["links"]}


def stalls(summary: dict[str, Any]) -> str:
    s = summary["emu"]["emulator"]["stalls"]
    return f"emulator stalls {s['count']} ({s['total_ms']} ms)"


def utilisation_agrees(c: ccarena.Comparison, names: list[str]) -> None:
    sim, emu = links(c.sim.summary), links(c.emu.summary)
    got = {n: (sim[n]["utilization"], emu[n]["utilization"]) for n in names}
    msg = f"utilisation sim/emu {got}; {stalls(c.emu.summary)}"
    for s, e in got.values():
        assert abs(e / s - 1) < UTILISATION_TOLERANCE, msg


def goodput_agrees(c: ccarena.Comparison) -> None:
    got = [
        (f["goodput_bps"] / 1e6, g["goodput_bps"] / 1e6) for f, g in zip(c.sim.summary["flows"], c.emu.summary["flows"])
    ]
    msg = "goodput sim/emu (Mbit/s) " + ", ".join(f"{s:.2f}/{e:.2f} ({e / s - 1:+.1%})" for s, e in got)
    msg += f"; {stalls(c.emu.summary)}"
    for s, e in got:
        assert abs(e / s - 1) < GOODPUT_TOLERANCE, msg


def conserved(result: ccarena.Result) -> None:
    """Every link's packets accounted for (arrived = sent + dropped + held), the whole path's too, and
    the per-link trace adding up to each link's bytes sent."""
    s = result.summary
    c = s["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"], c
    per_link = s["emu"]["link_conservation"]
    assert [x["link"] for x in per_link] == [link["name"] for link in s["links"]]
    for x in per_link:
        assert x["arrived"] == x["sent"] + x["dropped"] + x["held"], x
        assert x["arrived"] > 0, x
    raw = result.raw
    assert raw is not None
    from ccarena.analysis.tables import links_table

    trace = links_table(raw, [link["name"] for link in s["links"]]).to_pandas()
    intervals = round(s["duration_s"] / s["interval_s"])
    for link in s["links"]:
        rows = trace[trace["link"] == link["name"]]
        assert len(rows) == intervals, (link["name"], len(rows))
        assert int(rows["tx_bytes"].sum()) == link["tx_bytes"], link["name"]
    # The summary's queue is the measured link's.
    assert s["queue"]["tx_bytes"] == s["links"][0]["tx_bytes"]


# ---------------------------------------------------------------------------


@needs_root
def test_a_parking_lot_fills_each_link_as_the_simulator_does(lot: ccarena.Comparison) -> None:
    utilisation_agrees(lot, ["hop1", "hop2"])
    # Each flow's data left every link of its path.
    for f in lot.emu.summary["flows"]:
        assert set(f["link_bytes"]) == {"hop1", "hop2"} if f["flow"] == 0 else len(f["link_bytes"]) == 1, f


@needs_root
@pytest.mark.xfail(
    strict=True,
    reason="measured goodput sim/emu (Mbit/s) in three kernel runs: long flow 8.26 against 3.84, 3.91 and 3.43, "
    "cross flows 20.62 and 20.65 against 24.96 to 25.46 (before the simulator's receivers compressed SACKs it gave "
    "6.85, 22.05 and 22.06). The simulator's long flow loses no packet at hop2 (all 280 drops there are the cross "
    "flow's; 44 at hop1); the kernel's loses 32 there. A drop-tail phase effect of the simulator's deterministic "
    "timing: with an order-preserving jitter of up to 1 ms on every hop the simulator's long flow gets 3.40-4.74 "
    "Mbit/s over seeds 1-6 (median 4.06), about the kernel's range.",
)
def test_a_parking_lot_shares_each_link_among_its_flows_as_the_simulator_does(lot: ccarena.Comparison) -> None:
    goodput_agrees(lot)


@needs_root
def test_every_link_of_a_parking_lot_conserves_packets(lot: ccarena.Comparison) -> None:
    conserved(lot.emu)


@needs_root
def test_a_flow_is_limited_at_its_second_link(second_hop: ccarena.Comparison) -> None:
    """The second hop (20 Mbit/s) is the flow's bottleneck: the flow fills it and its queue holds the
    sawtooth's backlog (Reno fills its buffer of 40 ms), while the first hop (50 Mbit/s) drops nothing.
    Goodput and both links' utilisation agree with the simulator."""
    s = second_hop.emu.summary
    hop = links(s)
    msg = f"hop1 {hop['hop1']}; hop2 {hop['hop2']}; {stalls(s)}"
    assert hop["hop1"]["drops"] == 0, msg
    assert hop["hop2"]["delay_p99_ms"] >= 10.0, msg
    assert hop["hop2"]["utilization"] >= 0.9, msg
    assert s["flows"][0]["goodput_bps"] >= 0.9 * 20e6 * MSS_RATE, msg
    assert s["flows"][0]["bottleneck_link"] == "hop2"
    goodput_agrees(second_hop)
    utilisation_agrees(second_hop, ["hop1", "hop2"])
    conserved(second_hop.emu)


RTT_TOLERANCE = 0.10
"""Agreement in each flow's mean RTT (the one asked of ``ccarena compare`` in tests/test_emu_linkmodels.py)."""


def models_on_a_lot() -> dict[str, Any]:
    """One CUBIC flow across hop1 (50 Mbit/s, uniform jitter of up to 4 ms after it, order-preserving)
    and hop2 (the shipped square-wave trace, 12 and 36 Mbit/s half a second each); 10 ms per hop, one
    BDP of buffer each; 15 s."""
    return {
        "name": "emu-models-on-a-lot",
        "duration": "15s",
        "topology": {
            "kind": "parking_lot",
            "hops": 2,
            "link": {"delay": "10ms", "buffer": "1bdp"},
            "hop": [
                {"rate": "50Mbps", "jitter": {"dist": "uniform", "max": "4ms"}},
                {"trace": "square-12-36mbps-1s"},
            ],
        },
        "flows": [{"cc": "cubic"}],
        "measure": {"interval": "100ms"},
    }


@needs_root
def test_link_models_on_a_networks_links_run_on_the_kernel() -> None:
    """Jitter on the first link and a trace-driven second link, on the kernel's TCP: the emulator
    serves each with the simulator's link-model code (crates/sim/src/linkmodel/), link by link. The
    jitter delays what leaves hop1 without reordering it, the trace limits hop2, and goodput, mean
    RTT and hop2's utilisation agree with the simulator's within the tolerances above.

    Measured when written (two runs): goodput 22.93 (sim) / 22.98 Mbit/s (kernel, each run), mean
    RTT 65.72 / 70.49 and 70.82 ms (+7.3 and +7.8 %), hop2's utilisation 0.990 / 0.993, 29 811 /
    29 837-29 846 packets through hop1's jitter, none reordered, none dropped at hop1. Not checked:
    retransmissions, 51 in the simulator against 13 and 15 on the kernel."""
    c = ccarena.compare(models_on_a_lot(), figure=False)
    sim, emu = c.sim.summary, c.emu.summary
    hop = links(emu)
    g = [s["flows"][0]["goodput_bps"] / 1e6 for s in (sim, emu)]
    r = [s["flows"][0]["rtt_mean_ms"] for s in (sim, emu)]
    msg = (
        f"goodput {g[0]:.3f} (sim) / {g[1]:.3f} Mbit/s (kernel), {g[1] / g[0] - 1:+.1%}; mean RTT {r[0]:.2f} / "
        f"{r[1]:.2f} ms, {r[1] / r[0] - 1:+.1%}; hop1 {hop['hop1']}; hop2 {hop['hop2']}; {stalls(emu)}"
    )
    assert hop["hop1"]["jitter_delivered"] > 10_000 and hop["hop1"]["reordered"] == 0, msg
    assert emu["flows"][0]["bottleneck_link"] == "hop2", msg
    assert abs(g[1] / g[0] - 1) < GOODPUT_TOLERANCE, msg
    assert abs(r[1] / r[0] - 1) < RTT_TOLERANCE, msg
    utilisation_agrees(c, ["hop2"])
    conserved(c.emu)


# --------------------------------------------------------------------------- refused, without root


def links_in_a_row(*paths: list[str], **extra: Any) -> dict[str, Any]:
    """Links a, b and c of 20 Mbit/s; one Reno flow group per path."""
    topo = {
        "kind": "links",
        "links": [{"name": n, "rate": "20Mbps", "delay": "5ms", "buffer": "50pkts"} for n in "abc"],
    }
    return {
        "name": "emu-refused",
        "duration": "5s",
        "topology": topo,
        "flows": [{"cc": "reno", "path": p} for p in paths],
        **extra,
    }


REFUSED = [
    (links_in_a_row(["a", "b"], ["a", "c"]), {}, "flows[1].path[1]", "runs of one line"),
    (links_in_a_row(["a", "c"], ["b", "c"]), {}, "flows[1].path[1]", "runs of one line"),
    (links_in_a_row(["a", "b"], ["b", "a"]), {}, "flows[0].path", "back to it"),
    (parking_lot(), {"flows[1].path": ["hop1_rev"]}, "flows[1].path[0]", "reverse twin"),
    (parking_lot(), {"flows[0].ack_path": ["hop2_rev"]}, "flows[0].ack_path", "reverse twins of the data path"),
    (parking_lot(), {"background.udp": [{"rate": "1Mbps", "path": ["hop2"]}]}, "background", "does not run"),
    (parking_lot(), {"topology.hop": [{}, {"qdisc": "xcp"}]}, "topology.hop[1].qdisc", "xcp"),
    (
        parking_lot(),
        {"topology.link.loss": {"model": "gilbert", "p_gb": 0.01, "p_bg": 0.3}},
        "topology.link.loss",
        "Bernoulli",
    ),
    (
        links_in_a_row(["a", "b"]),
        {"topology.links[1].reverse": {"loss": 0.01}},
        "topology.links[1].reverse.loss",
        "no loss on the reverse link",
    ),
]


@pytest.mark.parametrize(("exp", "sets", "field", "words"), REFUSED)
def test_what_the_emulator_cannot_build_is_refused_naming_the_field(
    exp: dict[str, Any], sets: dict[str, Any], field: str, words: str
) -> None:
    ccarena.load_spec(exp, set=sets)  # the simulator runs it
    with pytest.raises(SpecError) as e:
        emulate.load_spec(exp, set=sets)
    assert e.value.path == field, str(e.value)
    assert words in str(e.value)


def test_the_command_line_refuses_in_one_line_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(tomli_w.dumps(links_in_a_row(["a", "b"], ["a", "c"])))
    p = subprocess.run(
        [sys.executable, "-m", "ccarena", "run", str(path), "--backend", "emu"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: flows[1].path[1]: "), p.stderr
    assert not list(tmp_path.glob("*/summary.json"))
