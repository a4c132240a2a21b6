"""Linux's receive window at the receiver (`[tcp] receive_window = "linux"`; crates/sim/src/tcp/rcvwnd.rs)
from the experiment file to the engine, against what Linux's receiver was measured to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ccarena
import pandas as pd
import pyarrow.parquet as pq
import pytest
from ccarena.spec import SpecError


def doc(receive_window: str | None, **flow: Any) -> dict[str, Any]:
    """One CUBIC flow at 50 Mbit/s, 40 ms, 1 BDP, every packet logged for 2 s: the setup of the kernel
    measurement in README.md (the paragraph on the ACKs of in-order data)."""
    tcp = {} if receive_window is None else {"receive_window": receive_window}
    return {
        "name": "rw",
        "duration": "2s",
        "seed": 1,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "50Mbps", "buffer": "1bdp"}},
        "tcp": tcp,
        "flows": [{"cc": "cubic", **flow}],
        "measure": {"interval": "100ms", "packets": ["0s", "2s"]},
    }


def segments_per_ack(out: Path, lo: float, hi: float) -> float:
    """Data segments delivered to the receiver per ACK it sent, from ``lo`` to ``hi`` seconds."""
    t = pq.read_table(out / "packets.parquet").to_pandas()
    within = (t["time_s"] >= lo) & (t["time_s"] < hi)
    data = (within & (t["direction"] == "data") & (t["event"] == "deliver")).sum()
    acks = (within & (t["direction"] == "ack") & (t["event"] == "enqueue")).sum()
    return float(data / acks)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for mode in ("linux", "fixed"):
        out[mode] = tmp_path_factory.mktemp(mode) / "r"
        ccarena.run(doc(mode), out=out[mode], figure=False)
    return out


def test_linux_acknowledges_nearly_every_segment_while_its_window_grows(runs: dict[str, Path]) -> None:
    """Linux 6.18's receiver in this setup, through ccarena's emulator: one ACK per 1.1 segments in the
    first 0.25 s, 1.4-1.9 per 0.25 s until 1.25 s, 2.0 after. The bounds are those figures: at most 1.25
    at first, 1.4-1.9 over 0.25-1.25 s as a whole, 2.0 within 0.05 after."""
    first = segments_per_ack(runs["linux"], 0.0, 0.25)
    middle = segments_per_ack(runs["linux"], 0.25, 1.25)
    after = segments_per_ack(runs["linux"], 1.25, 2.0)
    assert first <= 1.25, first
    assert 1.4 <= middle <= 1.9, middle
    assert after == pytest.approx(2.0, abs=0.05)
    # Without it: 16 quick ACKs, then one per two segments from the first RTT on.
    assert segments_per_ack(runs["fixed"], 0.0, 0.25) >= 1.9


def test_off_unless_asked_and_written_to_spec_toml_when_asked() -> None:
    spec = ccarena.load_spec(doc(None))
    assert "receive_window" not in spec.engine["flows"][0] or spec.engine["flows"][0]["receive_window"] is None
    assert "receive_window" not in spec.resolved["tcp"]
    on = ccarena.load_spec(doc("linux"))
    assert on.resolved["tcp"]["receive_window"] == "linux"
    assert on.resolved["flows"][0]["receive_window"] == "linux"
    assert ccarena.load_spec(on.resolved).engine == on.engine
    # a group's own key wins over [tcp]'s
    mixed = ccarena.load_spec({**doc("linux"), "flows": [{"cc": "cubic", "receive_window": "fixed"}]})
    assert "receive_window" not in mixed.resolved["flows"][0]


def test_a_bad_value_names_the_field() -> None:
    with pytest.raises(SpecError, match=r'tcp\.receive_window: unknown receive window "linx"'):
        ccarena.load_spec(doc("linx"))
    with pytest.raises(SpecError, match=r"flows\[0\]\.receive_window: expected one of fixed, linux"):
        ccarena.load_spec({**doc(None), "flows": [{"cc": "cubic", "receive_window": 1}]})


def test_two_bbr_flows_split_as_on_the_kernel_with_it() -> None:
    """E2's setup (two BBR flows, 250 Mbit/s, 20 ms, 1 BDP, 3 s), seeds 1-10: without Linux's window the
    first flow leads by about 15 % (0.85 over 50 seeds), with it the pair splits as the kernel's did
    (median 0.951 over 15 kernel runs; README, E2's cause). The bound, 0.9 on the mean, is E2's."""
    ratios = {}
    for mode in ("fixed", "linux"):
        got = []
        for seed in range(1, 11):
            d = {
                "name": "e2",
                "duration": "3s",
                "seed": seed,
                "topology": {"rtt": "20ms", "bottleneck": {"rate": "250Mbps", "buffer": "1bdp"}},
                "tcp": {"receive_window": mode},
                "flows": [{"cc": "bbr", "count": 2}],
            }
            g = [f["goodput_bps"] for f in ccarena.run(d, figure=False).summary["flows"]]
            got.append(min(g) / max(g))
        ratios[mode] = pd.Series(got).mean()
    assert ratios["fixed"] < 0.9 <= ratios["linux"], ratios


@pytest.mark.parametrize(
    ("cc", "loss", "buffer"), [("cubic", 0.01, "0.1bdp"), ("bbr", 0.02, "0.05bdp"), ("reno", 0.0, "2bdp")]
)
def test_transfers_finish_and_deliver_every_byte_with_holes_in_the_buffer(cc: str, loss: float, buffer: str) -> None:
    """Losses hold segments above holes, which shrink the free buffer and the window advertised: a
    fixed-size transfer must still complete (no window deadlock) and the receiver get every byte."""
    size = 5_000_000
    d = doc("linux", app="fixed", size="5MB")
    d["flows"][0]["cc"] = cc
    d["topology"]["bottleneck"].update({"loss": loss, "buffer": buffer})
    d["duration"] = "30s"
    d["measure"].pop("packets")
    f = ccarena.run(d, figure=False).summary["flows"][0]
    assert f["completion_s"] is not None, f
    assert f["goodput_bytes"] == size
