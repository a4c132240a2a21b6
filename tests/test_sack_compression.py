"""Linux's receiver-side SACK compression (4.18+, net/ipv4/tcp_input.c) from the experiment file to the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest
from ccarena.spec import SpecError


def doc(**tcp: Any) -> dict[str, Any]:
    """One CUBIC flow at 250 Mbit/s, 40 ms, 0.2 BDP of buffer: a burst of losses after slow start."""
    return {
        "name": "sc",
        "duration": "1s",
        "seed": 1,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "250Mbps", "buffer": "0.2bdp"}},
        "tcp": {"host": {"nic": "1Gbps", "era": "linux-today"}, **tcp},
        "flows": [{"cc": "cubic"}],
    }


def _summary(r: Any) -> str:
    s = dict(r.summary)
    s.pop("engine", None)
    s.pop("name", None)
    return json.dumps(s, sort_keys=True, default=str)


def _engine_flows(spec: Any) -> list[dict[str, Any]]:
    return list(spec.engine["flows"])


def test_on_by_default_as_today_s_linux_and_off_behind_linux_2_6_hosts() -> None:
    """On by default (Linux 4.18 and later compress), off for groups whose hosts are Linux 2.6's; a
    given value wins, is written to spec.toml, and the written file resolves the same."""
    on = {"nr": 44, "delay_ns": 1_000_000}
    old = doc()
    old["tcp"]["host"] = {"nic": "1Gbps", "era": "linux-2.6"}
    no_host = doc()
    del no_host["tcp"]["host"]
    for d, want in ((doc(), on), (no_host, on), (old, None)):
        spec = ccarena.load_spec(d)
        assert _engine_flows(spec)[0].get("sack_compression") == want
        assert spec.resolved["flows"][0]["sack_compression"] is (want is not None)
        assert not {"sack_compression", "comp_sack_nr", "comp_sack_delay"} & set(spec.resolved["tcp"])
    # A group's own host decides for that group.
    mixed = doc()
    del mixed["tcp"]["host"]
    mixed["flows"] = [{"cc": "cubic", "host": {"nic": "1Gbps"}}, {"cc": "cubic"}]
    assert [f.get("sack_compression") for f in _engine_flows(ccarena.load_spec(mixed))] == [None, on]
    # Given off: written, and spec.toml resolves to the same engine.
    for d in (doc(sack_compression=False), {**doc(), "flows": [{"cc": "cubic", "sack_compression": False}]}):
        spec = ccarena.load_spec(d)
        assert all("sack_compression" not in f for f in _engine_flows(spec))
        again = ccarena.load_spec({**spec.resolved, "name": "sc"})
        assert _engine_flows(again) == _engine_flows(spec)
    assert ccarena.load_spec(doc(sack_compression=False)).resolved["tcp"]["sack_compression"] is False
    assert _summary(ccarena.run(doc(sack_compression=True), figure=False)) == _summary(ccarena.run(doc(), figure=False))


def test_on_reaches_the_engine() -> None:
    spec = ccarena.load_spec(doc(sack_compression=True, comp_sack_nr=10, comp_sack_delay="500us"))
    assert _engine_flows(spec)[0]["sack_compression"] == {"nr": 10, "delay_ns": 500_000}
    t = spec.resolved["tcp"]
    assert (t["sack_compression"], t["comp_sack_nr"], t["comp_sack_delay"]) == (True, 10, "500us")
    d = doc()
    d["flows"][0]["sack_compression"] = True
    assert _engine_flows(ccarena.load_spec(d))[0]["sack_compression"] == {"nr": 44, "delay_ns": 1_000_000}
    # comp_sack_nr 0 is passed on (the receiver holds nothing; the emu backend writes 0 to the kernel)
    zero = _engine_flows(ccarena.load_spec(doc(sack_compression=True, comp_sack_nr=0)))[0]
    assert zero["sack_compression"] == {"nr": 0, "delay_ns": 1_000_000}
    with pytest.raises(SpecError, match="tcp.sack_compression"):
        ccarena.load_spec(doc(sack_compression=1))


def _acks_in_recovery(folder: Path) -> tuple[int, int]:
    """Data segments delivered and ACKs sent in the 110 ms after the first bottleneck drop."""
    t = pq.read_table(folder / "packets.parquet").to_pandas()
    t0 = t[(t.link == "forward") & (t.event == "drop")].time_ns.min()
    w = (t.time_ns >= t0) & (t.time_ns < t0 + 110_000_000)
    deliv = int(((t.link == "forward") & (t.event == "deliver") & (t.direction == "data") & w).sum())
    acks = int(((t.link == "reverse") & (t.event == "enqueue") & (t.direction == "ack") & w).sum())
    return deliv, acks


def test_fewer_acks_in_recovery(tmp_path: Path) -> None:
    measure = {"interval": "10ms", "packets": ["0s", "1s"]}
    ccarena.run(doc(sack_compression=False), measure=measure, out=tmp_path / "off", figure=False)
    ccarena.run(doc(), measure=measure, out=tmp_path / "on", figure=False)
    d_off, a_off = _acks_in_recovery(tmp_path / "off")
    d_on, a_on = _acks_in_recovery(tmp_path / "on")
    assert d_off / a_off < 1.5, "today: about one ACK per out-of-order segment"
    assert d_on / a_on > 2.0 and a_on < a_off / 2, (d_off, a_off, d_on, a_on)


def test_the_emulator_takes_one_setting_for_every_receiver() -> None:
    """The kernel's receivers share one namespace and one tcp_comp_sack_nr: the emu backend writes
    the file's setting there (0 when off), and refuses flow groups that differ, naming the group."""
    from ccarena.backends.emu import config as emu_config
    from ccarena.runner import _emu_spec

    base = {
        "name": "sack-compression-emu",
        "duration": "2s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}, {"cc": "reno"}],
    }
    on = _emu_spec({**base, "tcp": {"sack_compression": True, "comp_sack_nr": 20}}, seed=None, set=None)
    assert emu_config._plan(on).sack_compression == {"nr": 20, "delay_ns": 1_000_000}
    assert "sack_compression" in json.loads(emu_config._emulator_config(emu_config._plan(on)))["engine"]["flows"][1]
    # By default on with the kernel's own values; off (None) has the receivers' namespace hold none.
    assert emu_config._plan(_emu_spec(base, seed=None, set=None)).sack_compression == {"nr": 44, "delay_ns": 1_000_000}
    off = _emu_spec({**base, "tcp": {"sack_compression": False}}, seed=None, set=None)
    assert emu_config._plan(off).sack_compression is None
    mixed = {**base, "flows": [{"cc": "reno"}, {"cc": "reno", "sack_compression": False}]}
    with pytest.raises(SpecError) as e:
        _emu_spec(mixed, seed=None, set=None)
    assert e.value.path == "flows[1].sack_compression"
