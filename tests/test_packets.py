"""The packet log (``[measure] packets``, packets.parquet) and ``ccarena pcap``.

A small run (two CUBIC flows, random loss on the bottleneck, so there are
retransmissions) with the log on for a window: the rows keep to the
window, every packet's events come in a legal order, the queue's change
over the window is what the rows say, and the log changes no other number.
Its capture, read back with scapy, holds the two TCP conversations with
sequence numbers that increase except for retransmissions, as many as the
log says.
"""

from __future__ import annotations

import itertools
import tomllib
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import ccarena
import numpy as np
import pandas as pd
import pytest
from ccarena.cli import main
from ccarena.results.packets import PACKETS_SCHEMA
from ccarena.spec import SpecError

scapy = pytest.importorskip("scapy.all")

FROM_NS, TO_NS = 1_000_000_000, 5_000_000_000
EXPERIMENT: dict[str, Any] = {
    "name": "packets",
    "duration": "6s",
    "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp", "loss": 0.01}},
    "flows": [{"cc": "cubic", "count": 2}],
    "measure": {"packets": ["1s", "5s"]},
}
OFF: dict[str, Any] = {**EXPERIMENT, "measure": {}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("packets")
    ccarena.run(EXPERIMENT, out=base / "on", figure=False)
    ccarena.run(OFF, out=base / "off", figure=False)
    return base / "on", base / "off"


@pytest.fixture(scope="module")
def log(runs: tuple[Path, Path]) -> pd.DataFrame:
    df = ccarena.Result.load(runs[0]).packets
    assert df is not None
    return df


def test_the_file_has_the_documented_columns_and_run_key(runs: tuple[Path, Path]) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(runs[0] / "packets.parquet")
    assert table.schema.remove_metadata() == PACKETS_SCHEMA
    assert table.schema.metadata[b"ccarena.run"].decode() == ccarena.Result.load(runs[0]).run_key
    assert table.num_rows > 1000


def test_off_by_default_and_changing_nothing_else(runs: tuple[Path, Path]) -> None:
    on, off = runs
    assert not (off / "packets.parquet").exists()
    assert ccarena.Result.load(off).packets is None
    assert (on / "summary.json").read_text() == (off / "summary.json").read_text()
    for name in ("flows.parquet", "queue.parquet"):
        assert ccarena.Result.load(on)._read(name, {}).equals(ccarena.Result.load(off)._read(name, {}))
    # spec.toml keeps the window (running it again logs the same packets); without one, no key.
    assert tomllib.loads((on / "spec.toml").read_text())["measure"]["packets"] == ["1s", "5s"]
    assert "packets" not in tomllib.loads((off / "spec.toml").read_text())["measure"]


def test_a_run_kept_in_memory_has_the_same_log(log: pd.DataFrame) -> None:
    mem = ccarena.run(EXPERIMENT).packets
    assert mem is not None
    pd.testing.assert_frame_equal(mem.reset_index(drop=True), log.reset_index(drop=True))


def test_rows_keep_to_the_window_in_time_order(log: pd.DataFrame) -> None:
    t = log.time_ns.to_numpy()
    assert t.min() >= FROM_NS and t.max() < TO_NS
    assert np.all(np.diff(t.astype(np.int64)) >= 0)
    assert np.allclose(log.time_s, t / 1e9)
    assert set(log.event) == {"enqueue", "dequeue", "drop", "deliver"}  # no AQM: no marks
    drops = log[log.event == "drop"]
    assert len(drops) > 0 and set(drops.reason) == {"random"}
    assert log[log.event != "drop"].reason.isna().all()
    # Data forward, ACKs back; data have a sequence number, ACKs an acknowledgement.
    data, acks = log[log.direction == "data"], log[log.direction == "ack"]
    assert set(data.link) == {"forward"} and set(acks.link) == {"reverse"}
    assert data.ack_bytes.isna().all() and data.seq_bytes.notna().all()
    assert acks.seq_bytes.isna().all() and acks.ack_bytes.notna().all()
    assert set(log.flow) == {0, 1} and log.transfer.isna().all() and log.udp_source.isna().all()
    assert (acks.payload_bytes == 0).all() and (data.payload_bytes == 1448).all()
    assert (data.size_bytes == data.payload_bytes + 52).all()


def test_every_packet_moves_through_its_events_in_order(log: pd.DataFrame) -> None:
    """Follow each packet: enqueue, then drop or dequeue, then deliver. A
    packet is named by flow, direction, sequence (or ACK) number and
    retransmission flag; as a link and its delay lines keep each flow's
    order, an event belongs to the oldest packet of its name still waiting
    for it. A packet met after its enqueue entered before the window."""
    after = {"drop": "enqueue", "dequeue": "enqueue", "deliver": "dequeue"}
    waiting: dict[tuple[Any, ...], dict[str, deque[int]]] = defaultdict(lambda: defaultdict(deque))
    counts: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    entered_before: list[int] = []
    for row in log.itertuples(index=False):
        number = row.seq_bytes if row.direction == "data" else row.ack_bytes
        name = (row.flow, row.direction, number, row.retransmission)
        if row.event != "enqueue":
            q = waiting[name][after[row.event]]
            if not q:
                entered_before.append(row.time_ns)
                continue
            assert q.popleft() <= row.time_ns
        counts[(row.flow, row.direction)][row.event] += 1
        if row.event in ("enqueue", "dequeue"):
            waiting[name][row.event].append(row.time_ns)
    # Such packets leave within a queueing delay (1 BDP: 40 ms) and a one-way trip of its start.
    assert entered_before and max(entered_before) < FROM_NS + 100_000_000
    # Of the packets that entered in the window: every one delivered was enqueued and dequeued first.
    assert sorted(counts) == [(0, "ack"), (0, "data"), (1, "ack"), (1, "data")]
    for c in counts.values():
        assert c["drop"] + c["deliver"] <= c["enqueue"]
        assert c["drop"] + c["dequeue"] <= c["enqueue"]
        assert c["deliver"] <= c["dequeue"]


def test_the_queue_changes_as_the_rows_say(runs: tuple[Path, Path], log: pd.DataFrame) -> None:
    """Conservation at the bottleneck: arrivals − drops − departures over the
    window = the backlog at its end − the backlog at its start (queue.parquet
    samples it every 100 ms, the window's ends among them)."""
    fwd = log[log.link == "forward"]
    n = fwd.event.value_counts()
    queue = ccarena.Result.load(runs[0]).queue.set_index("t_ns")
    change = int(queue.backlog_pkts[TO_NS]) - int(queue.backlog_pkts[FROM_NS])
    assert n["enqueue"] - n["drop"] - n["dequeue"] == change


Segment = tuple[float, int, int, int]
"""Time, sequence number, payload length (from the IP length: the payload is cut) and ACK number."""


def _conversations(path: Path) -> dict[tuple[str, int, str, int], list[Segment]]:
    """TCP segments per (src, sport, dst, dport), in capture order."""
    IP, TCP = scapy.IP, scapy.TCP
    convs: dict[tuple[str, int, str, int], list[Segment]] = defaultdict(list)
    for p in scapy.rdpcap(str(path)):
        ip = p[IP]
        tcp = ip[TCP]
        length = ip.len - 4 * ip.ihl - 4 * tcp.dataofs
        convs[(ip.src, tcp.sport, ip.dst, tcp.dport)].append((float(p.time), tcp.seq, length, tcp.ack))
    return convs


def test_the_capture_shows_the_flows_and_their_retransmissions(runs: tuple[Path, Path], log: pd.DataFrame) -> None:
    out = runs[0] / "packets.pcap"
    assert main(["pcap", str(runs[0])]) == 0
    seen = log[log.event == "dequeue"].reset_index(drop=True)
    convs = _conversations(out)
    data = {k: v for k, v in convs.items() if any(length > 0 for _, _, length, _ in v)}
    acks = {k: v for k, v in convs.items() if all(length == 0 for _, _, length, _ in v)}
    # Two TCP conversations, each with its ACKs coming back the other way.
    assert sorted(data) == [("10.1.0.1", 32768, "10.2.0.1", 5201), ("10.1.0.2", 32768, "10.2.0.2", 5201)]
    assert sorted(acks) == [("10.2.0.1", 5201, "10.1.0.1", 32768), ("10.2.0.2", 5201, "10.1.0.2", 32768)]
    assert sum(len(v) for v in convs.values()) == len(seen)
    total_retrans = 0
    for flow, key in enumerate(sorted(data)):
        rows = seen[(seen.flow == flow) & (seen.direction == "data")].reset_index(drop=True)
        segs = data[key]
        assert len(segs) == len(rows)
        # Sequence numbers are the engine's byte offsets + 1; times to the nanosecond.
        assert [s for _, s, _, _ in segs] == [int(x) + 1 for x in rows.seq_bytes]
        assert np.allclose([t for t, _, _, _ in segs], rows.time_s, rtol=0, atol=1e-6)
        # New data increases the highest sequence number; a segment that does not is a retransmission.
        top, retrans = 0, []
        for (_, seq, length, _), flagged in zip(segs, rows.retransmission, strict=True):
            end = seq + length
            if not flagged:
                assert seq >= top, f"flow {flow}: new data at {seq} below {top}"
            retrans.append(end <= top)
            top = max(top, end)
        assert retrans == list(rows.retransmission), f"flow {flow}"
        total_retrans += sum(retrans)
    assert total_retrans == int((seen.retransmission & (seen.direction == "data")).sum()) > 0
    # ACK numbers are the engine's cumulative ACK + 1 and never go back.
    for flow, key in enumerate(sorted(acks)):
        rows = seen[(seen.flow == flow) & (seen.direction == "ack")]
        ack_numbers = [a for _, _, _, a in acks[key]]
        assert ack_numbers == [int(x) + 1 for x in rows.ack_bytes]
        assert all(b >= a for a, b in itertools.pairwise(ack_numbers))


def test_the_capture_headers_are_well_formed(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "full.pcap"
    assert main(["pcap", str(runs[0]), "--at", "enqueue", "--snaplen", "0", "--out", str(out)]) == 0
    IP, TCP, raw = scapy.IP, scapy.TCP, scapy.raw
    packets = scapy.rdpcap(str(out))
    log = ccarena.Result.load(runs[0]).packets
    assert log is not None
    assert len(packets) == int((log.event == "enqueue").sum())
    for p in packets[:200]:
        ip = p[IP]
        assert len(raw(ip)) == ip.len  # whole packets, zero payload
        assert ip.flags == "DF" and ip.ttl == 64 and ip.tos & 3 == 0
        assert "A" in str(ip[TCP].flags)
        again = IP(raw(ip))
        del again.chksum, again[TCP].chksum
        recomputed = IP(raw(again))
        assert (recomputed.chksum, recomputed[TCP].chksum) == (ip.chksum, ip[TCP].chksum)


def test_pcap_refuses_without_a_log_and_never_overwrites(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    on, off = runs
    assert main(["pcap", str(off)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {off}: no packets.parquet")
    (on / "taken.pcap").write_bytes(b"x")
    assert main(["pcap", str(on), "--out", str(on / "taken.pcap")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (on / "taken.pcap").read_bytes() == b"x"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (["5s", "1s"], "measure.packets[1]"),
        (["1s", "7s"], "measure.packets[1]"),
        (["1s"], "measure.packets"),
        ("1s", "measure.packets"),
        (["soon", "2s"], "measure.packets[0]"),
    ],
)
def test_a_bad_window_is_one_line_naming_the_field(
    value: Any, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tomli_w

    with pytest.raises(SpecError) as e:
        ccarena.load_spec({**EXPERIMENT, "measure": {"packets": value}})
    assert e.value.path == field
    file = tmp_path / "bad.toml"
    file.write_text(tomli_w.dumps({**EXPERIMENT, "measure": {"packets": value}}))
    assert main(["run", str(file), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {field}:")
    assert not (tmp_path / "r").exists()



def test_the_emulator_is_given_the_window_only_when_asked() -> None:
    """The emu backend takes ``[measure] packets`` (its log: tests/test_emu.py, root only): the
    emulator's configuration carries the window in ns from the start of the measurement, and
    nothing without it (its output then stays as it was)."""
    import json

    from ccarena.backends.emu import config as emu_config
    from ccarena.runner import _emu_spec

    on = _emu_spec(EXPERIMENT, seed=None, set=None)
    off = _emu_spec(OFF, seed=None, set=None)
    assert json.loads(emu_config._emulator_config(emu_config._plan(on)))["emu"]["packets_ns"] == [FROM_NS, TO_NS]
    assert "packets_ns" not in json.loads(emu_config._emulator_config(emu_config._plan(off)))["emu"]
