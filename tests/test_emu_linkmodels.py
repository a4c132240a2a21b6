"""Link models on the real kernel: trace-driven capacity, jitter, a policer and ACK aggregation run in
the emulator (crates/emu/src/engine.rs) with the simulator's own model code, and the kernel's CUBIC and
BBR over them agree with the simulator's.

The agreement asked of ``ccarena compare`` over a trace-driven link and over a jittery link is the
issue's ("Links as they really behave"): within 5 % in goodput and 10 % in mean RTT. Each emulated run
is short (15 s) and one at a time; the timing checks take up to two attempts on a quiet host, as in
tests/test_emu.py. They need root and /dev/net/tun and are skipped without them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import ccarena
import pytest
from ccarena.backends import emu as emulate
from ccarena.spec import SpecError
from test_emu import assert_clean, attempts, cli, wait_for_quiet_host, write

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the emu backend needs root (namespaces, TUN devices)"),
    pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="the emu backend needs /dev/net/tun"),
]

GOODPUT_TOLERANCE = 0.05
"""The issue's agreement in goodput between the kernel through the emulator and the simulator."""

RTT_TOLERANCE = 0.10
"""The issue's agreement in mean RTT."""

MSS_RATE = 1448 / 1500
"""Payload share of a full-size packet (52 header bytes)."""


def experiment(cc: str, bottleneck: dict[str, Any], reverse: dict[str, Any] | None = None) -> dict[str, Any]:
    """One flow, 40 ms, one BDP of buffer, 15 s."""
    topology: dict[str, Any] = {"rtt": "40ms", "bottleneck": {"buffer": "1bdp", **bottleneck}}
    if reverse is not None:
        topology["reverse"] = reverse
    return {"name": "emu-linkmodels", "duration": "15s", "topology": topology, "flows": [{"cc": cc}]}


def agreement(exp: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``ccarena compare``'s two summaries, and their goodput and mean RTT as a message."""
    c = ccarena.compare(exp, figure=False)
    sim, emu = c.sim.summary, c.emu.summary
    g = [s["flows"][0]["goodput_bps"] / 1e6 for s in (sim, emu)]
    r = [s["flows"][0]["rtt_mean_ms"] for s in (sim, emu)]
    stalls = emu["emu"]["emulator"]["stalls"]
    msg = (
        f"goodput {g[0]:.3f} (sim) / {g[1]:.3f} Mbit/s (kernel), {g[1] / g[0] - 1:+.1%}; "
        f"mean RTT {r[0]:.2f} / {r[1]:.2f} ms, {r[1] / r[0] - 1:+.1%}; stalls {stalls['count']}"
    )
    return sim, emu, msg


def assert_agree(sim: dict[str, Any], emu: dict[str, Any], msg: str) -> None:
    g = [s["flows"][0]["goodput_bps"] for s in (sim, emu)]
    r = [s["flows"][0]["rtt_mean_ms"] for s in (sim, emu)]
    assert abs(g[1] / g[0] - 1) < GOODPUT_TOLERANCE, msg
    assert abs(r[1] / r[0] - 1) < RTT_TOLERANCE, msg
    cons = emu["conservation"]
    assert cons["created"] == cons["delivered"] + cons["dropped"] + cons["queued"] + cons["in_flight"], msg


def forward(summary: dict[str, Any]) -> dict[str, Any]:
    return next(link for link in summary["links"] if link["name"] == "forward")


def reverse(summary: dict[str, Any]) -> dict[str, Any]:
    return next(link for link in summary["links"] if link["name"] == "reverse")


SQUARE = "square-12-36mbps-1s"

BBR_SQUARE_WAVE = (
    "Measured when written (15 s, three runs): goodput 21.25 Mbit/s (sim) against 19.01, 16.91 and "
    "16.98 (kernel), -10.5 to -20.4 %; mean RTT 68.6 against 51.4, 49.4 and 51.6 ms, -25 to -28 %. With one BDP "
    "of the trace's mean rate, BBR v1's bandwidth estimate (the largest of ten rounds) stays at 36 "
    "Mbit/s through each 12 Mbit/s half second and both backends lose heavily there, the kernel more "
    "(880 drops in a low second against 630); the kernel then takes the losses for a policer: its "
    "long-term bandwidth mode (tcp_bbr.c, bbr_lt_bw_sampling) holds its estimate at 12 Mbit/s for 48 "
    "rounds (2-3 s) at a time, through high phases with its queue empty, a mode the simulator's BBR "
    "never entered (lt_use_bw 0 throughout). Over the constant trace BBR agrees (bbr-constant), so "
    "the link is served alike; with 4 BDP nothing is lost and goodput agrees (+0.6 %) but mean RTT "
    "is +19 %. What differs is BBR's handling of loss, not the link."
)


@pytest.mark.parametrize(
    ("cc", "trace"),
    [
        pytest.param("cubic", SQUARE, id="cubic-square"),
        pytest.param("bbr", SQUARE, id="bbr-square", marks=pytest.mark.xfail(strict=True, reason=BBR_SQUARE_WAVE)),
        pytest.param("bbr", "constant-48mbps", id="bbr-constant"),
    ],
)
def test_compare_over_a_trace_driven_link_agrees_with_the_simulator(cc: str, trace: str) -> None:
    """A shipped Mahimahi trace on the forward link (Mahimahi's byte accounting), the same trace
    served by the same code in both backends, from the start of the measurement.

    Measured when written (two runs): CUBIC over the square wave (12 and 36 Mbit/s, half a second
    each) 20.69 (sim) / 20.42 and 20.74 Mbit/s (kernel), mean RTT 62.05 / 66.52 and 65.28 ms, 59
    retransmissions against 59 and 58; BBR over the constant 48 Mbit/s trace 45.05 / 45.09 and
    45.79 Mbit/s, mean RTT 44.36 / 47.25 and 43.80 ms.
    """
    exp = experiment(cc, {"trace": trace})

    def check() -> None:
        sim, emu, msg = agreement(exp)
        # The trace drives the emulator's link: its capacity per interval is the trace's.
        assert forward(emu)["utilization"] > 0.7, msg
        assert_agree(sim, emu, msg)

    if cc == "bbr" and trace == SQUARE:
        # The expected miss (10-28 %) is far beyond what a few ms of stolen time moves, so it is
        # measured once: retrying a failure on a noisy host would only spend time.
        wait_for_quiet_host()
        check()
    else:
        attempts(2, check)
    assert_clean()


@pytest.mark.parametrize("cc", ["cubic", "bbr"])
def test_compare_over_a_jittery_link_agrees_with_the_simulator(cc: str) -> None:
    """20 Mbit/s with uniform jitter of up to 4 ms after the link, order-preserving (the default):
    the kernel sees its data arrive late and clumped, as the simulator's flow does, and no packet
    arrives after one sent later.

    Measured when written (two runs): CUBIC 19.17 / 19.17 and 19.17 Mbit/s, mean RTT 71.44 / 71.91
    and 72.16 ms; BBR 18.82 / 18.84 and 18.84 Mbit/s, mean RTT 73.58 / 71.29 and 70.55 ms.
    """
    exp = experiment(cc, {"rate": "20Mbps", "jitter": {"dist": "uniform", "max": "4ms"}})

    def check() -> None:
        sim, emu, msg = agreement(exp)
        link = forward(emu)
        assert link["jitter_delivered"] > 10_000 and link["reordered"] == 0, (link, msg)
        assert_agree(sim, emu, msg)

    attempts(2, check)
    assert_clean()


def test_a_policer_holds_the_kernels_goodput_to_its_bucket(tmp_path: Path) -> None:
    """A 10 Mbit/s policer with a 100 KB bucket on a 40 Mbit/s link: CUBIC on the kernel, run with
    ``ccarena run --backend emu``, gets at most the bucket's rate plus its burst over the measurement
    window (a token bucket passes at most rate·T + burst in any T), and the policer drops what exceeds
    it (Flach et al., SIGCOMM 2016: policed flows lose far more than queued ones)."""
    rate, burst = 10_000_000, 100_000
    exp = experiment("cubic", {"rate": "40Mbps", "policer": {"rate": "10Mbps", "burst": "100KB"}})
    out = tmp_path / "run"
    p = cli("run", str(write(tmp_path, exp)), "--backend", "emu", "--out", str(out))
    _, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    s = json.loads((out / "summary.json").read_text())
    window = s["window_s"][1] - s["window_s"][0]
    goodput = s["flows"][0]["goodput_bps"]
    link = forward(s)
    msg = f"goodput {goodput / 1e6:.3f} Mbit/s over {window} s, forward link {link}"
    assert goodput <= rate + burst * 8 / window, msg
    # Well used all the same: the flow is not starved by it.
    assert goodput > 0.5 * rate * MSS_RATE, msg
    assert link["policed"] > 50 and link["drops"] >= link["policed"], msg
    assert s["flows"][0]["loss_rate"] > 0.005, msg
    assert_clean()


def test_ack_aggregation_batches_the_kernels_acks_and_delivers_all_the_same() -> None:
    """ACKs held on the reverse link and released every 5 ms (phase 0), as a Wi-Fi or cellular MAC
    or GRO does: the emulator releases them in batches (the counter), every ACK goes out (none held
    at the end beyond the last batch), and CUBIC keeps the 20 Mbit/s link full as in the simulator."""
    exp = experiment("cubic", {"rate": "20Mbps"}, reverse={"ack_aggregation": {"every": "5ms"}})

    def check() -> None:
        sim, emu, msg = agreement(exp)
        rev, sim_rev = reverse(emu), reverse(sim)
        msg = f"{msg}; reverse link {rev}; simulator's {sim_rev}"
        # One batch per 5 ms in which ACKs came: about 3000 in 15 s. The receiver acknowledges every
        # second segment (delayed ACKs, in both backends): 20 Mbit/s is 1667 segments a second, so
        # about 4 ACKs a batch, as many in the kernel's run as in the simulator's.
        assert 2_000 < rev["batches"] <= 3_001, msg
        assert rev["batched"] > 3 * rev["batches"] and rev["drops"] == 0, msg
        assert abs(rev["batched"] / sim_rev["batched"] - 1) < 0.1, msg
        # Every ACK that arrived was released (but those of a batch held at the end).
        assert rev["arrivals"] - rev["batched"] < 20, msg
        assert emu["utilization_window"] > 0.9, msg
        assert_agree(sim, emu, msg)

    attempts(2, check)
    assert_clean()


def test_the_emulators_link_models_and_what_it_still_refuses() -> None:
    """Every link model loads for the emu backend, on both links; a rate schedule above what the
    emulator forwards is refused in one line naming the field."""
    exp = experiment(
        "cubic",
        {
            "rate": [["0s", "20Mbps"], ["5s", "0bps"], ["5.2s", "30Mbps"]],
            "delay": [["0s", "5ms"], ["10s", "8ms"]],
            "jitter": {"dist": "exponential", "mean": "1ms", "reorder": True},
            "shaper": {"rate": "15Mbps", "burst": "15KB"},
        },
        reverse={
            "trace": SQUARE,
            "ack_aggregation": {"count": 8, "timeout": "2ms"},
            "policer": {"rate": "5Mbps", "burst": "50KB"},
        },
    )
    spec = emulate.load_spec(exp)
    assert set(spec.engine["bottleneck"]["model"]) == {"schedule", "jitter", "shaper"}
    assert set(spec.engine["reverse"]["model"]) == {"trace", "batch", "policer"}
    with pytest.raises(SpecError) as e:
        emulate.load_spec(exp, set={"topology.bottleneck.rate": [["0s", "20Mbps"], ["5s", "20Gbps"]]})
    assert str(e.value).startswith("topology.bottleneck.rate: the emu backend forwards at most 10000 Mbit/s"), e.value
