"""The packet log: ``packets.parquet``, one row per packet event at a link.

Written when the experiment asks for it (``[measure] packets = ["10s",
"10.5s"]``, in either backend: see *The emulator's log* below), for
events from the first time inclusive to the second exclusive, in time
order (events at the same nanosecond in the order the engine handled
them). Columns:

================  ========  ===================================================
``time_ns``       uint64    when, ns since the start of the run
``time_s``        float64   the same in seconds
``link``          string    ``forward`` (the bottleneck: data of forward flows)
                            or ``reverse`` (ACKs of forward flows, data of
                            reverse flows); in a parking lot or a network
                            of links, the link's name (``hop2``, ``hop2_rev``)
``event``         string    ``enqueue``: the packet arrives at the link (every
                            arrival, those then dropped too); ``dequeue``: it
                            leaves the queue and its transmission starts;
                            ``drop``; ``mark``: the discipline sets CE;
                            ``deliver``: it reaches its endpoint (data the
                            receiver, an ACK the sender, a UDP datagram the
                            end of the link)
``reason``        string    drops only: ``overflow`` (buffer full, FQ-CoDel's
                            overflow batch), ``aqm`` (RED/PIE early drop,
                            CoDel head drop) or ``random`` (the link's loss
                            process); null otherwise
``direction``     string    ``data`` (TCP data or a UDP datagram) or ``ack``
``flow``          uint32    the flow (as in flows.parquet and summary.json);
                            null for background traffic
``transfer``      uint32    a background TCP transfer (its row in
                            transfers.parquet); null otherwise
``udp_source``    uint32    a UDP source (its index among the UDP sources,
                            in file order); null otherwise
``seq_bytes``     uint64    data: offset of its first payload byte in the
                            flow's stream, from 0 (the engine numbers
                            segments; this is segment × MSS); a datagram:
                            its offset in its source's stream; null for ACKs
``ack_bytes``     uint64    ACKs: the cumulative acknowledgement, the next
                            byte expected (a transfer's last short segment
                            counted to its real end); null for data
``size_bytes``    uint32    bytes on the wire (payload and headers)
``payload_bytes`` uint32    payload bytes (0 for an ACK)
``retransmission`` bool     the sender had sent this segment before
``ecn``           uint8     the IP header's ECN field (RFC 3168, RFC 9331):
                            0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE (from its
                            mark row on)
``ece``           bool      TCP ECE (ACKs echoing congestion)
``cwr``           bool      TCP CWR (data: the sender reduced its window)
================  ========  ===================================================

A packet crosses one link: a flow's data the link of its direction, its
ACKs the other. SACK blocks, timestamps and the receive window are not
logged. The schema's metadata carries the run key (``ccarena.run``), as
every table of a result does.

The emulator's log (``--backend emu``; crates/emu/src/engine.rs) has the
same columns, written by this module from the emulator's rows, for the
links the emulator serves (the bottleneck and the reverse link, or every
link of a line). What differs from the simulator's:

* ``time_ns`` is the emulator's real clock: ns since the start of the
  measurement, the origin of its flows.parquet and queue.parquet. Rows
  come in the order the emulator handled the events; a ``deliver`` row
  has the time its write to the receivers' or senders' device ended, which
  can be later than rows after it by that write's lateness
  (``emu.emulator.delivery_lateness_us`` in summary.json).
* The packets are the kernel's: the segments its TCP sent (a TSO
  super-packet handed to the emulator is split into its segments before
  the bottleneck, and logged as those), with their real sizes and ECN
  bits. ``direction`` is the way a packet travels (``data``: from the
  senders' side, SYN, FIN and pure ACKs of the sender included; ``ack``:
  from the receivers').
* ``seq_bytes`` is the TCP sequence number relative to the flow's first
  payload byte (its SYN's + 1), unwrapped past 4 GiB; ``ack_bytes`` the
  cumulative acknowledgement relative to the same origin. Segments need
  not be MSS-aligned.
* ``retransmission`` is inferred from the wire: a data segment whose
  sequence range starts below the highest sequence its flow had sent when
  it reached the emulator (a segment the kernel retransmits after a later
  one was sent).
* Packets that belong to no flow (ICMP, other ports) have ``flow``,
  ``transfer`` and ``udp_source`` null; there are no transfers or UDP
  sources. Drops are ``overflow``, ``aqm`` or ``random`` as in the
  simulator; marks come from the emulator's disciplines (the simulator's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..analysis.metrics import NS_PER_S, decode_columns
from ..analysis.tables import _arrow, _bools, _strings
from ..spec import Spec

__all__ = ["EVENTS", "LINKS", "PACKETS_SCHEMA", "REASONS", "empty_packets", "link_names", "packets_table"]

LINKS = ("forward", "reverse")
EVENTS = ("enqueue", "dequeue", "drop", "mark", "deliver")
"""The engine's event codes 0-4, in order."""
REASONS = ("overflow", "aqm", "random")
"""The engine's drop reasons 1-3, in order (0: not a drop)."""
DIRECTIONS = ("data", "ack")

# The engine's flag bits (crates/sim/src/packet_log.rs).
_RETRANS, _ECE, _CWR, _ACK = 1, 2, 4, 8
# Owners: a flow, a background transfer, a UDP source; 3 (Owner::Other in crates/sim/src/packet_log.rs: the
# emulator's traffic of no flow) matches none of them, so its three columns are null.
_FLOW, _TRANSFER, _UDP = 0, 1, 2

_NAMES = pa.dictionary(pa.int8(), pa.string())

PACKETS_SCHEMA = pa.schema(
    [
        ("time_ns", pa.uint64()),
        ("time_s", pa.float64()),
        ("link", _NAMES),
        ("event", _NAMES),
        ("reason", _NAMES),
        ("direction", _NAMES),
        ("flow", pa.uint32()),
        ("transfer", pa.uint32()),
        ("udp_source", pa.uint32()),
        ("seq_bytes", pa.uint64()),
        ("ack_bytes", pa.uint64()),
        ("size_bytes", pa.uint32()),
        ("payload_bytes", pa.uint32()),
        ("retransmission", pa.bool_()),
        ("ecn", pa.uint8()),
        ("ece", pa.bool_()),
        ("cwr", pa.bool_()),
    ]
)


def _names(codes: np.ndarray, names: tuple[str, ...], mask: np.ndarray | None = None) -> pa.Array:
    """Small integer codes as a dictionary array of ``names`` (null where ``mask``)."""
    indices = _arrow(codes.astype(np.int8), mask=mask)
    return pa.DictionaryArray.from_arrays(indices, _strings(list(names)))


_EMPTY: dict[str, tuple[str, bytes]] = {
    name: (dtype, b"")
    for name, dtype in [
        ("time_ns", "<u8"), ("link", "|u1"), ("event", "|u1"), ("reason", "|u1"), ("owner", "|u1"), ("id", "<u4"),
        ("seq_bytes", "<u8"), ("ack_bytes", "<u8"), ("size_bytes", "<u4"), ("payload_bytes", "<u4"),
        ("flags", "|u1"), ("ecn", "|u1"),
    ]
}
"""The engine's columns with no rows."""


def link_names(spec: Spec) -> Sequence[str]:
    """The names of the engine's links of an experiment: ``forward`` and ``reverse``, or a network's;
    then the senders' access links as the engine adds them: the flows' (``flows.host``),
    ``access<flow>``, then the background sources' (``background.*.host``), ``access_<source>`` for
    forward transfers and ``access_<source>_rev`` for reverse ones."""
    network = spec.engine.network
    base = tuple(network.names) if network is not None else LINKS
    flows = tuple(f"access{i}" for i, f in enumerate(spec.engine.flows) if f.access is not None)
    sources: list[str] = []
    for s in spec.engine.tcp_sources:
        if s.access is None:
            continue
        if s.route is not None or s.direction in ("forward", "both"):
            sources.append(f"access_{s.name}")
        if s.route is None and s.direction in ("reverse", "both"):
            sources.append(f"access_{s.name}_rev")
    return base + flows + tuple(sources)


def packets_table(columns: Mapping[str, tuple[str, bytes]], links: Sequence[str] = LINKS) -> pa.Table:
    """The engine's packet-log columns as the table of packets.parquet (see this module); ``links``
    names the engine's links by index (a network's: ``spec.engine.network.names``)."""
    c = decode_columns(columns or _EMPTY)
    owner, flags = c["owner"], c["flags"]
    ack = (flags & _ACK) != 0
    out = {
        "time_ns": _arrow(c["time_ns"]),
        "time_s": _arrow(c["time_ns"].astype(np.float64) / NS_PER_S),
        "link": _names(c["link"], links),
        "event": _names(c["event"], EVENTS),
        "reason": _names(np.maximum(c["reason"].astype(np.int16) - 1, 0), REASONS, mask=c["reason"] == 0),
        "direction": _names(ack.astype(np.int8), DIRECTIONS),
        "flow": _arrow(c["id"], mask=owner != _FLOW),
        "transfer": _arrow(c["id"], mask=owner != _TRANSFER),
        "udp_source": _arrow(c["id"], mask=owner != _UDP),
        "seq_bytes": _arrow(c["seq_bytes"], mask=ack),
        "ack_bytes": _arrow(c["ack_bytes"], mask=~ack),
        "size_bytes": _arrow(c["size_bytes"]),
        "payload_bytes": _arrow(c["payload_bytes"]),
        "retransmission": _bools((flags & _RETRANS) != 0),
        "ecn": _arrow(c["ecn"]),
        "ece": _bools((flags & _ECE) != 0),
        "cwr": _bools((flags & _CWR) != 0),
    }
    return pa.Table.from_arrays(list(out.values()), schema=PACKETS_SCHEMA)


def empty_packets() -> pa.Table:
    """A packets table with no rows (a run whose window saw no packet)."""
    return packets_table(_EMPTY)
