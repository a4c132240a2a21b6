"""``[tcp]``: TCP settings every flow group and background source starts from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import _core
from . import fields as F
from .errors import SpecError
from .host import Host, host
from .schema import RECEIVE_WINDOWS, RECOVERIES, TCP
from .units import describe, format_bytes, format_time

__all__ = [
    "LINUX_RECEIVE_WINDOW",
    "AccEcn",
    "TcpDefaults",
    "accecn_setting",
    "ecn_setting",
    "receive_window_setting",
    "sack_compression_setting",
    "tcp",
]

LINUX_RECEIVE_WINDOW: dict[str, int] = dict(_core.LINUX_RECEIVE_WINDOW)
"""The engine's ``receive_window`` for ``"linux"``, as the engine defines it (``RcvBufConfig::LINUX`` in
crates/sim/src/tcp/rcvwnd.rs): Linux 6.18's tcp_rmem[1] and [2] (32 MiB since a 2025 patch, 6 MiB before), and
the buffer bytes one 1448-byte segment takes there (measured)."""


@dataclass(frozen=True)
class TcpDefaults:
    """The resolved ``[tcp]`` table. ``pacing_given`` says whether the file set pacing."""

    mss: int
    header: int
    init_cwnd: int
    rwnd: int | None
    pacing: bool
    pacing_given: bool
    recovery: str | None
    ecn: bool = False
    host: Host | None = None
    accecn: bool = False
    receiver_accecn: bool = True
    accecn_option: bool = True
    sack_compression: bool | None = None
    """None: not given, so on unless a group's hosts are Linux 2.6's (see ``sack_compression_setting``)."""
    comp_sack_nr: int = 44
    comp_sack_delay_ns: int = 1_000_000
    receive_window: str = "fixed"

    def resolved(self) -> dict[str, Any]:
        """The ``[tcp]`` table of ``spec.toml``."""
        out: dict[str, Any] = {"mss": self.mss, "header": self.header, "init_cwnd": self.init_cwnd}
        if self.rwnd is not None:
            out["rwnd"] = format_bytes(self.rwnd)
        out["pacing"] = self.pacing
        if self.recovery is not None:
            out["recovery"] = self.recovery
        if self.ecn:
            out["ecn"] = True
        out.update(AccEcn(self.accecn, self.receiver_accecn, self.accecn_option).resolved())
        # Only what differs from the defaults, so that a file without them resolves as before.
        if self.sack_compression is not None:
            out["sack_compression"] = self.sack_compression
        if self.comp_sack_nr != TCP.default("comp_sack_nr"):
            out["comp_sack_nr"] = self.comp_sack_nr
        if format_time(self.comp_sack_delay_ns) != format_time(F.time(TCP.default("comp_sack_delay"), "")):
            out["comp_sack_delay"] = format_time(self.comp_sack_delay_ns)
        if self.receive_window != TCP.default("receive_window"):
            out["receive_window"] = self.receive_window
        if self.host is not None:
            out["host"] = self.host.resolved()
        return out


def mss(value: Any, path: str, header: int) -> int:
    """Payload bytes per packet: a packet (payload + header) is at most 65535 bytes."""
    return F.integer(value, path, 1, 65535 - header)


def init_cwnd(value: Any, path: str) -> int:
    """Initial window, packets."""
    return F.integer(value, path, 1, 1_000_000)


def ecn_setting(t: Mapping[str, Any], path: str, tcp: TcpDefaults, algo: Mapping[str, Any]) -> bool:
    """Whether flows negotiate ECN: the table's ``ecn``, else ``tcp.ecn``; always for DCTCP-like algorithms."""
    ecn = F.boolean(t["ecn"], F.join(path, "ecn")) if "ecn" in t else tcp.ecn
    if bool(algo.get("needs_ecn", False)):
        if "ecn" in t and not ecn:
            raise SpecError(F.join(path, "ecn"), f"{algo['name']} needs ECN; leave ecn out or set it to true")
        ecn = True
    return ecn


@dataclass(frozen=True)
class AccEcn:
    """A group's AccECN settings (RFC 9768): the sender's offer and what the receiver supports."""

    accecn: bool = False
    receiver_accecn: bool = True
    accecn_option: bool = True

    def resolved(self) -> dict[str, Any]:
        """The keys that differ from the defaults (so a file without AccECN resolves as before)."""
        out: dict[str, Any] = {}
        if self.accecn:
            out["accecn"] = True
        if not self.receiver_accecn:
            out["receiver_accecn"] = False
        if not self.accecn_option:
            out["accecn_option"] = False
        return out

    def engine(self) -> dict[str, Any]:
        """The engine's flow keys, likewise only where they differ from its defaults."""
        return self.resolved()


def accecn_setting(
    t: Mapping[str, Any], path: str, tcp: TcpDefaults, algo: Mapping[str, Any], ecn: bool
) -> tuple[bool, AccEcn]:
    """The table's AccECN settings, else ``[tcp]``'s; always offered by algorithms that need it (prague).

    AccECN is a kind of ECN feedback, so offering it turns ECN on: returns (ecn, settings).
    """
    accecn = F.boolean(t["accecn"], F.join(path, "accecn")) if "accecn" in t else tcp.accecn
    if bool(algo.get("needs_accecn", False)):
        if "accecn" in t and not accecn:
            raise SpecError(F.join(path, "accecn"), f"{algo['name']} needs AccECN; leave accecn out or set it to true")
        accecn = True
    if accecn and not ecn:
        if "ecn" in t:
            raise SpecError(F.join(path, "ecn"), "accecn = true is ECN feedback; leave ecn out or set it to true")
        ecn = True
    receiver = (
        F.boolean(t["receiver_accecn"], F.join(path, "receiver_accecn"))
        if "receiver_accecn" in t
        else tcp.receiver_accecn
    )
    option = F.boolean(t["accecn_option"], F.join(path, "accecn_option")) if "accecn_option" in t else tcp.accecn_option
    return ecn, AccEcn(accecn, receiver, option)


def sack_compression_setting(
    t: Mapping[str, Any], path: str, tcp: TcpDefaults, h: Host | None
) -> dict[str, Any] | None:
    """The group's SACK compression (Linux 4.18+, net/ipv4/tcp_input.c): the engine's
    ``sack_compression`` value, or None when off (the table's key, else ``[tcp]``'s, else on, as
    today's Linux receivers do, unless the group's host ``h`` is Linux 2.6's). ``comp_sack_nr`` 0
    is passed on: the receiver then holds nothing, and the emu backend writes it to the kernel."""
    if "sack_compression" in t:
        on = F.boolean(t["sack_compression"], F.join(path, "sack_compression"))
    elif tcp.sack_compression is not None:
        on = tcp.sack_compression
    else:
        on = h is None or h.today
    if not on:
        return None
    return {"nr": tcp.comp_sack_nr, "delay_ns": tcp.comp_sack_delay_ns}


def receive_window_setting(t: Mapping[str, Any], path: str, tcp: TcpDefaults) -> str:
    """The group's receive window, ``"fixed"`` or ``"linux"``: the table's key, else ``[tcp]``'s."""
    if "receive_window" in t:
        return F.choice(t["receive_window"], F.join(path, "receive_window"), RECEIVE_WINDOWS, "receive window")
    return tcp.receive_window


def tcp(raw: dict[str, Any]) -> TcpDefaults:
    """Reads ``[tcp]`` (every key optional)."""
    t = F.table(raw.get("tcp", {}), "tcp")
    F.check_keys(t, "tcp", TCP)
    header = F.integer(t.get("header", TCP.default("header")), "tcp.header", 0, 1000)
    mss_ = mss(t.get("mss", TCP.default("mss")), "tcp.mss", header)
    icw = init_cwnd(t.get("init_cwnd", TCP.default("init_cwnd")), "tcp.init_cwnd")
    rwnd = F.byte_count(t["rwnd"], "tcp.rwnd") if "rwnd" in t else None
    if rwnd is not None and rwnd < mss_:
        raise SpecError("tcp.rwnd", f"must be at least one MSS ({mss_} bytes), got {describe(t['rwnd'])}")
    pacing = F.boolean(t.get("pacing", TCP.default("pacing")), "tcp.pacing")
    recovery = F.choice(t["recovery"], "tcp.recovery", RECOVERIES, "recovery") if "recovery" in t else None
    ecn = F.boolean(t.get("ecn", TCP.default("ecn")), "tcp.ecn")
    h = host(t["host"], "tcp.host") if "host" in t else None
    accecn = F.boolean(t.get("accecn", TCP.default("accecn")), "tcp.accecn")
    receiver = F.boolean(t.get("receiver_accecn", TCP.default("receiver_accecn")), "tcp.receiver_accecn")
    option = F.boolean(t.get("accecn_option", TCP.default("accecn_option")), "tcp.accecn_option")
    sc = F.boolean(t["sack_compression"], "tcp.sack_compression") if "sack_compression" in t else None
    sc_nr = F.integer(t.get("comp_sack_nr", TCP.default("comp_sack_nr")), "tcp.comp_sack_nr", 0, 255)
    sc_delay = F.time(t.get("comp_sack_delay", TCP.default("comp_sack_delay")), "tcp.comp_sack_delay")
    rw = F.choice(t.get("receive_window", TCP.default("receive_window")), "tcp.receive_window", RECEIVE_WINDOWS,
                  "receive window")
    return TcpDefaults(
        mss_, header, icw, rwnd, pacing, "pacing" in t, recovery, ecn, h, accecn, receiver, option, sc, sc_nr, sc_delay,
        rw,
    )
