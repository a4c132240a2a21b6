"""``host``: the sending host in front of the network, as the testbeds of the 2000s had it, or as
today's Linux is.

``host = { nic = "1Gbps" }`` (in ``[tcp]`` for every group, or in a ``[[flows]]`` group) gives each
sender an access link at the NIC's rate with its own queue (``txqueuelen``, Linux's default 1000
packets for Ethernet devices) in front of its path, and makes an unpaced sender send as Linux 2.6
does with TCP segmentation offload (``tso = true``, the default with a host): in super-packets of up
to 64 KB (``tso_segs``, by default the segments of the packet size that fit 65 535 bytes less
Linux's 320-byte header allowance: 45 at MSS 1448), handed to the NIC at once and so sent back to
back at its rate, and, when the window has opened by less than a super-packet and less than a third
of the window (``tso_win_divisor``, Linux's ``tcp_tso_win_divisor`` = 3), waiting for more ACKs
for at most ``tso_defer`` (two jiffies; 2 ms at HZ = 1000) instead of sending a small one (Linux's
``tcp_tso_should_defer``). A paced sender (BBR) sends segment by segment.

``era = "linux-today"`` makes the host today's Linux (5.18 and later) instead of 2.6 (``era =
"linux-2.6"``, the default): super-packets of about 1 ms of the socket's pacing rate, plus an
allowance for short RTTs (``tcp_tso_autosize``: pacing rate / 1024 + 65 215 bytes halved for
every 512 us of min RTT, at most 65 215 bytes, at least 2 segments, at most ``tso_segs``, and at
most half the window as ``tcp_cwnd_test`` allows); an unpaced socket's pacing rate is Linux's
``tcp_update_pacing_rate`` value, cwnd/srtt x 200 % in slow start and x 120 % after. Deferral
follows today's ``tcp_tso_should_defer``: only when the last send was less than 1 ms ago, the
next ACK is due within min(srtt/2, 1 ms) and the sender is not in recovery (``tso_defer`` does not
apply). TCP Small Queues (``tcp_small_queue_check``): a sender stops handing data down while the
truesize of its data in the host queue and NIC exceeds the larger of two super-packets and 1 ms of
its pacing rate, for an unpaced socket at most ``tsq_limit`` (``tcp_limit_output_bytes``, 1 MiB);
it resumes when its packets leave the NIC.

The era also sets the receivers' default ``sack_compression``: off with ``linux-2.6`` (SACK
compression came with Linux 4.18), on with ``linux-today`` as without a host table.

Deviation from Linux: a packet the host queue cannot take is dropped and retransmitted like any
loss; Linux instead refuses it locally and reduces the window (``tcp_enter_cwr``) without a loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import fields as F
from .errors import SpecError
from .schema import HOST_ERAS as ERAS
from .units import format_bytes, format_rate, format_time

__all__ = ["Host", "host"]

GSO_MAX_BYTES = 65_535
"""Largest GSO/TSO super-packet (``GSO_LEGACY_MAX_SIZE`` - 1)."""
MAX_TCP_HEADER = 320
"""Linux's header allowance subtracted from it by ``tcp_tso_autosize``."""
TSQ_LIMIT_BYTES = 16 * 65_536
"""Linux's ``tcp_limit_output_bytes`` default (1 MiB)."""


@dataclass(frozen=True)
class Host:
    nic_bps: int
    txqueuelen: int
    tso: bool
    tso_segs: int | None
    tso_win_divisor: int
    tso_defer_ns: int
    era: str = "linux-2.6"
    tsq_limit: int = TSQ_LIMIT_BYTES

    @property
    def today(self) -> bool:
        return self.era == "linux-today"

    def resolved(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nic": format_rate(self.nic_bps), "txqueuelen": self.txqueuelen}
        if self.today:
            out.update({"era": self.era, "tsq_limit": format_bytes(self.tsq_limit)})
        out["tso"] = self.tso
        if self.tso:
            if self.tso_segs is not None:
                out["tso_segs"] = self.tso_segs
            out["tso_win_divisor"] = self.tso_win_divisor
            if not self.today:
                out["tso_defer"] = format_time(self.tso_defer_ns)
        return out

    def engine(self, mss: int, pacing: bool) -> dict[str, Any]:
        """The engine flow's ``access`` and ``tso`` keys."""
        out: dict[str, Any] = {"access": {"rate_bps": self.nic_bps, "queue_pkts": self.txqueuelen}}
        if self.today:
            out["access"]["tsq_bytes"] = self.tsq_limit
        if self.tso and not pacing:
            segs = self.tso_segs if self.tso_segs is not None else max(1, (GSO_MAX_BYTES - MAX_TCP_HEADER) // mss)
            out["tso"] = {"max_segs": segs, "win_divisor": self.tso_win_divisor, "max_defer_ns": self.tso_defer_ns}
            if self.today:
                out["tso"]["era"] = self.era
        return out


HOST_KEYS = ("nic", "txqueuelen", "era", "tso", "tso_segs", "tso_win_divisor", "tso_defer", "tsq_limit")


def host(value: Any, path: str, base: Host | None = None) -> Host:
    """Reads a ``host`` table at ``path``; keys it leaves out come from ``base`` (``[tcp] host``), else the defaults."""
    t: Mapping[str, Any] = F.table(value, path)
    F.check_keys(t, path, HOST_KEYS)
    if "nic" in t:
        nic = F.rate(t["nic"], F.join(path, "nic"))
    elif base is not None:
        nic = base.nic_bps
    else:
        raise SpecError(F.join(path, "nic"), 'required (the NIC\'s rate, e.g. nic = "1Gbps")')
    d = base or Host(nic, 1000, True, None, 3, 2_000_000)
    txq = F.integer(t["txqueuelen"], F.join(path, "txqueuelen"), 1, 1_000_000) if "txqueuelen" in t else d.txqueuelen
    tso = F.boolean(t["tso"], F.join(path, "tso")) if "tso" in t else d.tso
    segs = F.integer(t["tso_segs"], F.join(path, "tso_segs"), 1, 65_535) if "tso_segs" in t else d.tso_segs
    div = F.integer(t["tso_win_divisor"], F.join(path, "tso_win_divisor"), 1, 1000) if "tso_win_divisor" in t else d.tso_win_divisor
    defer = F.time(t["tso_defer"], F.join(path, "tso_defer")) if "tso_defer" in t else d.tso_defer_ns
    era = F.choice(t["era"], F.join(path, "era"), ERAS, "host era") if "era" in t else d.era
    today = era == "linux-today"
    if today and "tso_defer" in t:
        raise SpecError(F.join(path, "tso_defer"), 'only with era = "linux-2.6" (today\'s Linux defers only while an '
                        "ACK is due within 1 ms)")
    if "tsq_limit" in t:
        if not today:
            raise SpecError(F.join(path, "tsq_limit"), 'only with era = "linux-today" (Linux 2.6 has no TCP Small Queues)')
        tsq = F.byte_count(t["tsq_limit"], F.join(path, "tsq_limit"))
    else:
        tsq = d.tsq_limit
    return Host(nic, txq, tso, segs, div, defer, era, tsq)
