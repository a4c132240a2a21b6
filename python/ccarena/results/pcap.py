"""A capture file from the packet log: what ``ccarena pcap`` writes.

:func:`write_pcap` turns the rows of ``packets.parquet`` seen at one
observation point into a classic libpcap file (nanosecond timestamps,
magic ``0xa1b23c4d``; link type 101, raw IPv4) that Wireshark, tshark,
tcpdump and scapy read. The engine models no headers, so they are made
up, the same way for every packet of a conversation:

* **observation point** (``at``): ``dequeue`` (default) is the start of
  transmission at each link: the bottleneck's data and the reverse link's
  ACKs (for a reverse flow the other way round), as a tap right after
  each queue would see them; ``enqueue`` is the packets arriving at the
  links (before any drop: every transmission the senders made);
  ``deliver`` is what reached the endpoints (data at the receivers, ACKs
  at the senders);
* **addresses and ports**: flow *i* runs from 10.1.h.l to 10.2.h.l,
  background transfer *k* from 10.3.h.l to 10.4.h.l and UDP source *u*
  from 10.5.h.l to 10.6.h.l, where h.l is the index + 1 written in two
  bytes (index mod 65534); the client port is 32768 (+ index // 65534),
  the server port 5201 (TCP) or 9000 (UDP). One TCP conversation per
  flow or transfer;
* **TCP**: no handshake or FIN (the engine models neither), so every
  segment carries the ACK flag; data sequence numbers are 1 + the
  engine's byte offset (``seq_bytes``; a fixed ISN of 0) modulo 2^32 and
  ACK numbers 1 + ``ack_bytes``; the receiver's own sequence number stays
  at 1. CWR and ECE as logged; window 65535; the header bytes the flow
  was configured with beyond 40 (12 by default) are NOP options; SACK
  blocks and timestamps are not modelled;
* **IP**: total length = the packet's size on the wire (``size_bytes``),
  ECN bits as logged, DF, TTL 64, header checksum correct;
* **payload**: zeros, cut to ``snaplen`` bytes per record (the record
  keeps the original length, so Wireshark shows "packet size limited
  during capture" and still analyses the TCP stream). The TCP checksum is
  correct for the zero payload; UDP datagrams carry checksum 0 (none);
* **time**: the run's clock, shown as seconds after the epoch
  (1970-01-01 00:00:10 is 10 s into the run).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["POINTS", "PcapStats", "write_pcap"]

POINTS = ("dequeue", "enqueue", "deliver")
"""Observation points, the packet log's events a capture can be made of."""

MAGIC_NS = 0xA1B23C4D
LINKTYPE_RAW = 101
TCP_PORT = 5201
UDP_PORT = 9000
CLIENT_PORT = 32768
_ISN = 0
_NETS = (1, 3, 5)  # client /16 of a flow, a transfer, a UDP source; the server's is the next one
_FLOW, _TRANSFER, _UDP = 0, 1, 2

_GLOBAL = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
_IP = struct.Struct("!BBHHHBBH4s4s")
_TCP = struct.Struct("!HHIIBBHHH")
_UDP_HDR = struct.Struct("!HHHH")
_TCP_ACK, _TCP_ECE, _TCP_CWR = 0x10, 0x40, 0x80


@dataclass
class PcapStats:
    """What a capture holds."""

    packets: int
    tcp_conversations: int
    retransmissions: int


def _checksum(data: bytes | bytearray, start: int = 0) -> int:
    """The Internet checksum (RFC 1071) of ``data`` (even length), from a partial sum ``start``."""
    total = start + sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _addresses(kind: int, index: int) -> tuple[bytes, bytes, int]:
    """Client address, server address and client port of a conversation."""
    h = index % 65534 + 1
    net = _NETS[kind]
    return bytes((10, net, h >> 8, h & 0xFF)), bytes((10, net + 1, h >> 8, h & 0xFF)), CLIENT_PORT + index // 65534


def _ids(table: pa.Table, name: str) -> np.ndarray:
    """A nullable id column as int64, -1 where null."""
    return pc.fill_null(pc.cast(table.column(name), pa.int64()), -1).to_numpy()


def _column(table: pa.Table, name: str) -> np.ndarray:
    return pc.fill_null(pc.cast(table.column(name), pa.int64()), 0).to_numpy()


def _bools(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=bool)


def write_pcap(
    packets: pa.Table, out: BinaryIO, *, at: str = "dequeue", snaplen: int = 128, links: Sequence[str] | None = None
) -> PcapStats:
    """Writes the rows of ``packets`` (a packets.parquet table) with event ``at`` to ``out`` as a pcap file.

    ``links``: only the rows at these links (a network's packets cross several, each logged).

    ``snaplen`` bytes of each packet are stored (0: all of it, payload
    zero-filled). Returns how many packets, TCP conversations and
    retransmissions (by the engine's flag) the capture holds.
    """
    if at not in POINTS:
        raise ValueError(f"at: expected one of {', '.join(POINTS)}, got {at!r}")
    if snaplen < 0:
        raise ValueError(f"snaplen: expected 0 (whole packets) or a positive number of bytes, got {snaplen}")
    rows = packets.filter(pc.equal(pc.cast(packets.column("event"), pa.string()), at))
    if links is not None and at != "deliver":
        rows = rows.filter(pc.is_in(pc.cast(rows.column("link"), pa.string()), pa.array(list(links), pa.string())))
    flow, transfer, udp = _ids(rows, "flow"), _ids(rows, "transfer"), _ids(rows, "udp_source")
    kind = np.where(flow >= 0, _FLOW, np.where(transfer >= 0, _TRANSFER, _UDP))
    index = np.where(flow >= 0, flow, np.where(transfer >= 0, transfer, udp))
    ack = pc.equal(pc.cast(rows.column("direction"), pa.string()), "ack").to_numpy(zero_copy_only=False)
    time_ns = rows.column("time_ns").to_numpy()
    seq, acked = _column(rows, "seq_bytes"), _column(rows, "ack_bytes")
    size, payload, ecn = _column(rows, "size_bytes"), _column(rows, "payload_bytes"), _column(rows, "ecn")
    ece, cwr, retrans = _bools(rows, "ece"), _bools(rows, "cwr"), _bools(rows, "retransmission")

    out.write(_GLOBAL.pack(MAGIC_NS, 2, 4, 0, 0, snaplen or 65535, LINKTYPE_RAW))
    buf = bytearray(16 + 65535)
    zeros = memoryview(bytes(65535))
    conversations: set[tuple[int, int]] = set()
    addresses: dict[tuple[int, int], tuple[bytes, bytes, int]] = {}
    for i in range(len(rows)):
        key = (int(kind[i]), int(index[i]))
        hosts = addresses.get(key)
        if hosts is None:
            hosts = addresses[key] = _addresses(*key)
        client, server, cport = hosts
        is_ack = bool(ack[i])
        src, dst = (server, client) if is_ack else (client, server)
        pay = int(payload[i])
        if key[0] == _UDP:
            total = min(max(int(size[i]), 28), 65535)  # 65535: the IPv4 length field
            l4 = _UDP_HDR.pack(cport, UDP_PORT, total - 20, 0)
            proto = 17
        else:
            conversations.add(key)
            opt = int(size[i]) - pay - 40
            opt = opt if 0 < opt <= 40 and opt % 4 == 0 else 0
            total = min(max(int(size[i]), 40 + opt + pay), 65535)
            flags = _TCP_ACK | (_TCP_ECE if ece[i] else 0) | (_TCP_CWR if cwr[i] else 0)
            if is_ack:
                sport, dport, s, a = TCP_PORT, cport, _ISN + 1, (_ISN + 1 + int(acked[i])) & 0xFFFFFFFF
            else:
                sport, dport, s, a = cport, TCP_PORT, (_ISN + 1 + int(seq[i])) & 0xFFFFFFFF, _ISN + 1
            header = bytearray(_TCP.pack(sport, dport, s, a, (20 + opt) // 4 << 4, flags, 65535, 0, 0))
            header += b"\x01" * opt
            # Pseudo-header (RFC 793): addresses, protocol, TCP length; the zero payload adds nothing.
            pseudo = sum(struct.unpack("!4H", src + dst)) + 6 + (total - 20)
            struct.pack_into("!H", header, 16, _checksum(header, pseudo))
            l4 = bytes(header)
            proto = 6
        ip = bytearray(_IP.pack(0x45, int(ecn[i]) & 3, total, i & 0xFFFF, 0x4000, 64, proto, 0, src, dst))
        struct.pack_into("!H", ip, 10, _checksum(ip))
        head = bytes(ip) + l4
        incl = total if snaplen == 0 else min(total, snaplen)
        t = int(time_ns[i])
        _RECORD.pack_into(buf, 0, t // 1_000_000_000, t % 1_000_000_000, incl, total)
        n = min(len(head), incl)
        buf[16 : 16 + n] = head[:n]
        buf[16 + n : 16 + incl] = zeros[: incl - n]
        out.write(memoryview(buf)[: 16 + incl])
    return PcapStats(len(rows), len(conversations), int(np.count_nonzero(retrans & ~ack)))

