"""``host``: the sending host in front of the network, as the testbeds of the 2000s had it.

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

Deviation from Linux: a packet the host queue cannot take is dropped and retransmitted like any
loss; Linux instead refuses it locally and reduces the window (``tcp_enter_cwr``) without a loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import fields as F
from .errors import SpecError
from .units import format_rate, format_time

__all__ = ["Host", "host"]

GSO_MAX_BYTES = 65_535
"""Largest GSO/TSO super-packet (``GSO_LEGACY_MAX_SIZE`` - 1)."""
MAX_TCP_HEADER = 320
"""Linux's header allowance subtracted from it by ``tcp_tso_autosize``."""


@dataclass(frozen=True)
class Host:
    nic_bps: int
    txqueuelen: int
    tso: bool
    tso_segs: int | None
    tso_win_divisor: int
    tso_defer_ns: int

    def resolved(self) -> dict[str, Any]:
        out: dict[str, Any] = {"nic": format_rate(self.nic_bps), "txqueuelen": self.txqueuelen, "tso": self.tso}
        if self.tso:
            if self.tso_segs is not None:
                out["tso_segs"] = self.tso_segs
            out["tso_win_divisor"] = self.tso_win_divisor
            out["tso_defer"] = format_time(self.tso_defer_ns)
        return out

    def engine(self, mss: int, pacing: bool) -> dict[str, Any]:
        """The engine flow's ``access`` and ``tso`` keys."""
        out: dict[str, Any] = {"access": {"rate_bps": self.nic_bps, "queue_pkts": self.txqueuelen}}
        if self.tso and not pacing:
            segs = self.tso_segs if self.tso_segs is not None else max(1, (GSO_MAX_BYTES - MAX_TCP_HEADER) // mss)
            out["tso"] = {"max_segs": segs, "win_divisor": self.tso_win_divisor, "max_defer_ns": self.tso_defer_ns}
        return out


HOST_KEYS = ("nic", "txqueuelen", "tso", "tso_segs", "tso_win_divisor", "tso_defer")


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
    return Host(nic, txq, tso, segs, div, defer)
