"""``[[flows]]``: groups of identical long-lived flows.

:func:`flow_group` reads one table: its algorithm and parameters, count,
start/stop/every, RTT, application and TCP overrides; :func:`flows` reads
them all and expands each group into its flows, in file order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import fields as F
from .distributions import start_dist, start_stop
from .errors import SpecError
from .host import Host, host
from .schema import APPS, FLOW, MAX_FLOWS, RECOVERIES
from .tcp import (
    LINUX_RECEIVE_WINDOW,
    AccEcn,
    TcpDefaults,
    accecn_setting,
    ecn_setting,
    init_cwnd,
    mss,
    receive_window_setting,
    sack_compression_setting,
)
from .units import describe, format_bytes, format_rate, format_time

__all__ = ["FlowGroup", "Flows", "flow_group", "flows"]


@dataclass(frozen=True)
class FlowGroup:
    """One resolved ``[[flows]]`` table and the engine's flow it stands for."""

    resolved: dict[str, Any]
    engine: dict[str, Any]
    count: int
    every_ns: int | None
    rtt_ns: int
    packet_bytes: int
    start_hi_ns: int
    """The latest start: the same as ``engine["start_ns"]`` unless starts are drawn."""

    def starts(self, seed: int, group: int) -> list[int]:
        """The start of each flow, ns: drawn per flow when ``start`` is a distribution, then + k·every."""
        lo = int(self.engine["start_ns"])
        if self.start_hi_ns == lo:
            firsts = [lo] * self.count
        else:
            # One stream per group, from the run's seed: the same draws for the same seed.
            rng = random.Random(f"ccarena.start:{seed}:{group}")
            firsts = [rng.randrange(lo, self.start_hi_ns + 1) for _ in range(self.count)]
        every = self.every_ns or 0
        return [first + k * every for k, first in enumerate(firsts)]


@dataclass
class Flows:
    """Every flow group, and every flow in order with the index of its group."""

    resolved: list[dict[str, Any]] = field(default_factory=list)
    engine: list[dict[str, Any]] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    group_rtts: list[int] = field(default_factory=list)
    max_packet: int = 0


def _start(g: Mapping[str, Any], path: str, duration_ns: int) -> tuple[Any, int, int, int | None]:
    """(resolved start, earliest and latest start in ns, stop in ns or None)."""
    if not isinstance(g.get("start"), dict):
        start_ns, stop_ns = start_stop(g, path, duration_ns)
        return format_time(start_ns), start_ns, start_ns, stop_ns
    resolved, lo, hi = start_dist(g["start"], F.join(path, "start"), duration_ns)
    stop_ns = None
    if "stop" in g:
        stop_ns = F.time(g["stop"], F.join(path, "stop"))
        if stop_ns <= hi:
            raise SpecError(
                F.join(path, "stop"), f"must be after the latest start ({format_time(hi)}), got {describe(g['stop'])}"
            )
        if stop_ns > duration_ns:
            raise SpecError(
                F.join(path, "stop"),
                f"must be at most the duration ({format_time(duration_ns)}), got {describe(g['stop'])}",
            )
    return resolved, lo, hi, stop_ns


def _every(g: Mapping[str, Any], path: str, count: int, start_ns: int, stop_ns: int | None, duration_ns: int) -> int | None:
    """``every``: the last of the group's flows must start before the group stops."""
    if "every" not in g:
        return None
    every_ns = F.positive_time(g["every"], F.join(path, "every"))
    last_ns = start_ns + (count - 1) * every_ns
    end_ns = stop_ns if stop_ns is not None else duration_ns
    if last_ns >= end_ns:
        what = f"stop ({format_time(end_ns)})" if stop_ns is not None else f"the end of the run ({format_time(end_ns)})"
        raise SpecError(
            F.join(path, "every"),
            f"the last of the {count} flows would start at {format_time(last_ns)}, not before {what}",
        )
    return every_ns


def _rtt(g: Mapping[str, Any], path: str, topo_rtt_ns: int | None) -> int:
    if "rtt" in g:
        return F.positive_time(g["rtt"], F.join(path, "rtt"))
    if topo_rtt_ns is not None:
        return topo_rtt_ns
    raise SpecError("topology.rtt", f"required unless every flow group sets rtt ({path} does not)")


def _app(g: Mapping[str, Any], path: str) -> tuple[str, int | None, int | None]:
    """(app, bytes to send with "fixed", rate with "rate")."""
    app = F.choice(g.get("app", FLOW.default("app")), F.join(path, "app"), APPS, "app")
    size: int | None = None
    app_rate: int | None = None
    if app == "fixed":
        if "size" not in g:
            raise SpecError(F.join(path, "size"), 'required with app = "fixed" (e.g. size = "10MB")')
        size = F.byte_count(g["size"], F.join(path, "size"))
    elif "size" in g:
        raise SpecError(F.join(path, "size"), f'only allowed with app = "fixed" (this group has app = "{app}")')
    if app == "rate":
        if "rate" not in g:
            raise SpecError(F.join(path, "rate"), 'required with app = "rate" (e.g. rate = "735kbps")')
        app_rate = F.rate(g["rate"], F.join(path, "rate"))
    elif "rate" in g:
        raise SpecError(F.join(path, "rate"), f'only allowed with app = "rate" (this group has app = "{app}")')
    return app, size, app_rate


@dataclass(frozen=True)
class _TcpSettings:
    mss: int
    init_cwnd: int
    rwnd: int | None
    pacing: bool
    recovery: str
    ecn: bool
    accecn: AccEcn
    sack_compression: dict[str, Any] | None = None
    receive_window: str = "fixed"


def _tcp_settings(
    g: Mapping[str, Any], path: str, cc: str, tcp: TcpDefaults, algo: Mapping[str, Any], h: Host | None
) -> _TcpSettings:
    """The group's TCP settings: its own keys, else ``[tcp]``, else the algorithm's needs or the
    group's host ``h``."""
    mss_ = mss(g["mss"], F.join(path, "mss"), tcp.header) if "mss" in g else tcp.mss
    icw = init_cwnd(g["init_cwnd"], F.join(path, "init_cwnd")) if "init_cwnd" in g else tcp.init_cwnd
    rwnd = F.byte_count(g["rwnd"], F.join(path, "rwnd")) if "rwnd" in g else tcp.rwnd
    if rwnd is not None and rwnd < mss_:
        where = F.join(path, "rwnd") if "rwnd" in g else "tcp.rwnd"
        raise SpecError(where, f"must be at least one MSS ({mss_} bytes), got {format_bytes(rwnd)}")
    if "pacing" in g:
        pacing = F.boolean(g["pacing"], F.join(path, "pacing"))
    elif tcp.pacing_given:
        pacing = tcp.pacing
    else:
        # Rate-based algorithms (BBR) are paced unless the file says otherwise.
        pacing = bool(algo.get("needs_pacing", False))
    if "recovery" in g:
        recovery = F.choice(g["recovery"], F.join(path, "recovery"), RECOVERIES, "recovery")
    else:
        recovery = tcp.recovery if tcp.recovery is not None else str(algo["default_recovery"])
    ecn, acc = accecn_setting(g, path, tcp, algo, ecn_setting(g, path, tcp, algo))
    return _TcpSettings(
        mss_,
        icw,
        rwnd,
        pacing,
        recovery,
        ecn,
        acc,
        sack_compression_setting(g, path, tcp, h),
        receive_window_setting(g, path, tcp),
    )


def flow_group(
    g: Any, path: str, duration_ns: int, topo_rtt_ns: int | None, tcp: TcpDefaults, algos: Mapping[str, Any]
) -> FlowGroup:
    """Reads one ``[[flows]]`` table at ``path``."""
    g = F.table(g, path)
    F.check_keys(g, path, FLOW)
    if "cc" not in g:
        raise SpecError(F.join(path, "cc"), "required (see `ccarena list cc` for the algorithms)")
    given = F.params(g.get("params", {}), F.join(path, "params"))
    cc_params = F.resolve_cc(g["cc"], given, path)
    cc: str = g["cc"]
    count = F.integer(g.get("count", FLOW.default("count")), F.join(path, "count"), 1, MAX_FLOWS)
    r_start, start_ns, start_hi_ns, stop_ns = _start(g, path, duration_ns)
    every_ns = _every(g, path, count, start_hi_ns, stop_ns, duration_ns)
    flow_reverse = F.boolean(g["reverse"], F.join(path, "reverse")) if "reverse" in g else False
    rtt_ns = _rtt(g, path, topo_rtt_ns)
    app, size, app_rate = _app(g, path)
    h = host(g["host"], F.join(path, "host"), tcp.host) if "host" in g else tcp.host
    # An algorithm of an entry point is registered by resolve_cc, after ``algos`` was read.
    s = _tcp_settings(g, path, cc, tcp, algos[cc] if cc in algos else F.algorithms()[cc], h)

    r: dict[str, Any] = {"cc": cc, "count": count}
    if cc_params:
        r["params"] = cc_params
    r["start"] = r_start
    if every_ns is not None:
        r["every"] = format_time(every_ns)
    if stop_ns is not None:
        r["stop"] = format_time(stop_ns)
    r["rtt"] = format_time(rtt_ns)
    if flow_reverse:
        r["reverse"] = True
    r["app"] = app
    if size is not None:
        r["size"] = format_bytes(size)
    if app_rate is not None:
        r["rate"] = format_rate(app_rate)
    r.update({"mss": s.mss, "init_cwnd": s.init_cwnd})
    if s.rwnd is not None:
        r["rwnd"] = format_bytes(s.rwnd)
    r.update({"pacing": s.pacing, "recovery": s.recovery})
    if s.ecn:
        r["ecn"] = True
    r.update(s.accecn.resolved())
    r["sack_compression"] = s.sack_compression is not None
    if s.receive_window != "fixed":
        r["receive_window"] = s.receive_window
    if h is not None:
        r["host"] = h.resolved()

    e: dict[str, Any] = {
        "cc": cc,
        "params": cc_params,
        "start_ns": start_ns,
        "stop_ns": stop_ns,
        "rtt_ns": rtt_ns,
        "mss": s.mss,
        "header_bytes": tcp.header,
        "init_cwnd": s.init_cwnd,
        "rwnd_bytes": s.rwnd,
        "pacing": s.pacing,
        "recovery": s.recovery,
        "app": app,
        "ecn": s.ecn,
        **s.accecn.engine(),
    }
    if size is not None:
        e["app_bytes"] = size
    if app_rate is not None:
        e["app_rate_bps"] = app_rate
    if flow_reverse:
        e["reverse"] = True
    if s.sack_compression is not None:
        e["sack_compression"] = s.sack_compression
    if s.receive_window == "linux":
        e["receive_window"] = dict(LINUX_RECEIVE_WINDOW)
    if h is not None:
        e.update(h.engine(s.mss, s.pacing))
    return FlowGroup(r, e, count, every_ns, rtt_ns, s.mss + tcp.header, start_hi_ns)


def flows(
    raw: Mapping[str, Any], duration_ns: int, topo_rtt_ns: int | None, tcp: TcpDefaults, background: bool, seed: int
) -> Flows:
    """Reads every ``[[flows]]`` table (they may be left out when there is background traffic).

    ``seed`` draws the start times of groups whose ``start`` is a distribution.
    """
    if "flows" not in raw and not background:
        raise SpecError("flows", 'at least one flow group is required (e.g. [[flows]] cc = "cubic")')
    groups = raw.get("flows", [])
    if not isinstance(groups, list):
        raise SpecError("flows", f"expected a list of tables ([[flows]]), got {describe(groups)}")
    if not groups and not background:
        raise SpecError("flows", "at least one flow group is required (or a background source)")
    algos = F.algorithms()
    out = Flows()
    for gi, g in enumerate(groups):
        path = f"flows[{gi}]"
        group = flow_group(g, path, duration_ns, topo_rtt_ns, tcp, algos)
        out.resolved.append(group.resolved)
        out.group_rtts.append(group.rtt_ns)
        out.max_packet = max(out.max_packet, group.packet_bytes)
        if len(out.engine) + group.count > MAX_FLOWS:
            raise SpecError(F.join(path, "count"), f"too many flows in total (at most {MAX_FLOWS})")
        for start_ns in group.starts(seed, gi):
            e = {**group.engine, "params": dict(group.engine["params"]), "start_ns": start_ns}
            out.engine.append(e)
            out.groups.append(gi)
    return out
