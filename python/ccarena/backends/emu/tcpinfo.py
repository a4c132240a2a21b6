"""Reading the kernel's view of a socket: ``TCP_INFO`` (include/uapi/linux/tcp.h) and BBR's ``TCP_CC_INFO``."""

from __future__ import annotations

import socket
import struct

TCP_INFO = getattr(socket, "TCP_INFO", 11)

TCP_CC_INFO = 26

# struct tcp_info (include/uapi/linux/tcp.h), up to tcpi_total_rto_time.
_TCP_INFO = struct.Struct("<8B 4I 5I 4I 8I 2I I 4Q 2I 4I Q 3Q 2I 2Q 2I I 2I I 2H I")

_TCP_INFO_NAMES = (
    "state ca_state retransmits probes backoff options wscale flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering "
    "rcv_rtt rcv_space total_retrans pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out delivery_rate "
    "busy_time rwnd_limited sndbuf_limited delivered delivered_ce bytes_sent bytes_retrans "
    "dsack_dups reord_seen rcv_ooopack snd_wnd rcv_wnd rehash total_rto total_rto_recoveries "
    "total_rto_time"
)

_TI = {name: i for i, name in enumerate(_TCP_INFO_NAMES.split())}

BBR_METRICS = ("pacing_gain", "cwnd_gain", "btl_bw_bps", "min_rtt_ms")
"""What the kernel's BBR tells through TCP_CC_INFO (struct tcp_bbr_info)."""

def _tcp_info_fields() -> list[tuple[str, int, int]]:
    """(name, offset, width) of each struct tcp_info field in :data:`_TCP_INFO`."""
    out = []
    pos = 0
    names = iter(_TI)
    for token in _TCP_INFO.format.lstrip("<").split():
        count = int(token[:-1]) if len(token) > 1 else 1
        width = struct.calcsize("<" + token[-1])
        for _ in range(count):
            out.append((next(names), pos, width))
            pos += width
    return out

_TCP_INFO_FIELDS = _tcp_info_fields()

def _tcp_info(s: socket.socket) -> dict[str, int]:
    """The socket's struct tcp_info; fields this kernel does not return are absent."""
    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 512)
    values = _TCP_INFO.unpack(raw[: _TCP_INFO.size].ljust(_TCP_INFO.size, b"\0"))
    return {name: int(values[_TI[name]]) for name, off, width in _TCP_INFO_FIELDS if off + width <= len(raw)}

def _bbr_info(s: socket.socket) -> list[float] | None:
    """BBR's bandwidth, min RTT and gains (struct tcp_bbr_info), in :data:`BBR_METRICS` order."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 64)
    except OSError:
        return None
    if len(raw) < 20:
        return None
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("<5I", raw)
    bw = (bw_hi << 32) | bw_lo
    return [pacing_gain / 256.0, cwnd_gain / 256.0, float(bw * 8), min_rtt / 1000.0]
