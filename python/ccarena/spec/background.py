"""``[background]``: web sessions, on-off sessions and unresponsive UDP load.

One reader per kind (:func:`web`, :func:`onoff`, :func:`udp`), each
returning the resolved table and the engine's source; :func:`background`
reads them all, names them and keeps names unique.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import fields as F
from .distributions import rtt_dist, size_dist, size_mean, start_stop
from .errors import SpecError
from .host import host
from .schema import BACKGROUND, DIRECTIONS, ONOFF, UDP, UDP_PATTERNS, WEB
from .tcp import TcpDefaults, ecn_setting, init_cwnd, mss
from .units import describe, format_bytes, format_rate, format_time

if TYPE_CHECKING:
    from .network import Network

__all__ = ["Background", "Context", "background"]

SURGE_SHORTCUTS = ("size_body", "size_mu", "size_sigma", "size_tail_min", "size_tail_shape")
"""``size_X`` keys of a web source stand for ``X`` of its SURGE size distribution."""


@dataclass(frozen=True)
class Context:
    """What background sources need from the rest of the experiment."""

    duration_ns: int
    topo_rtt_ns: int | None
    bottleneck_bps: int
    reverse_bps: int
    tcp: TcpDefaults
    net: Network | None = None
    """A parking lot's or a list of links' network (sources may then name a ``path``)."""

    def link_rate(self, direction: str) -> int:
        """The rate a load fraction refers to: the reverse link for reverse sources, else the bottleneck."""
        return self.reverse_bps if direction == "reverse" else self.bottleneck_bps


@dataclass(frozen=True)
class SourcePath:
    """A source's own path through a network: its links' names, the engine's route (TCP) or link (UDP),
    and the rate of its slowest link (what a ``load`` refers to)."""

    names: list[str]
    engine: dict[str, Any]
    rate_bps: int


def _source_path(t: Mapping[str, Any], path: str, ctx: Context, direction: str, tcp_: bool) -> SourcePath | None:
    """``path`` (and, for TCP, ``ack_path``) of a source in a network: the links its data (and ACKs)
    cross, instead of the measured link and its twin; none when not given."""
    from .network import link_path, twin_index

    keys = [k for k in ("path", "ack_path") if k in t]
    if not keys:
        return None
    net = ctx.net
    if net is None:
        raise SpecError(F.join(path, keys[0]), 'only with topology.kind = "parking_lot" or "links"')
    if "path" not in t:
        raise SpecError(F.join(path, "path"), "required with ack_path (the links the data cross)")
    if direction != "forward":
        raise SpecError(
            F.join(path, "direction"), f'a source with a path sends along it: leave direction out, got "{direction}"'
        )
    data = link_path(t["path"], F.join(path, "path"), net.links)
    net.background_links.update(data)
    rate = min(net.links[i].rate_bps for i in data)
    names = [net.links[i].name for i in data]
    if not tcp_:
        if len(data) != 1:
            raise SpecError(F.join(path, "path"), f"a UDP source crosses one link, got {len(data)}")
        return SourcePath(names, {"link": net.engine_index(data[0])}, rate)
    if "ack_path" in t:
        ack = link_path(t["ack_path"], F.join(path, "ack_path"), net.links)
    else:
        ack = [twin_index(net.links, i) for i in reversed(data)]
    net.background_links.update(ack)
    route = {
        "data": [net.engine_index(i) for i in data],
        "ack": [net.engine_index(i) for i in ack],
        "measure": net.engine_index(data[0]),
    }
    return SourcePath(names, {"route": route}, rate)


def _source_list(value: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """``[[background.web]]`` (a list) or ``[background.web]`` (one table): (path, table) pairs."""
    if isinstance(value, dict):
        return [(path, value)]
    if not isinstance(value, list):
        raise SpecError(path, f"expected a table or a list of tables ([[{path}]]), got {describe(value)}")
    return [(f"{path}[{i}]", F.table(t, f"{path}[{i}]")) for i, t in enumerate(value)]


def _tcp_source_common(
    t: Mapping[str, Any], path: str, ctx: Context, direction: str, route: SourcePath | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """cc, params, rtt, start/stop, path and TCP settings of a TCP source: (resolved, engine) parts."""
    cc = t.get("cc", WEB.default("cc"))
    params = F.params(t.get("params", {}), F.join(path, "params"))
    cc_params = F.resolve_cc(cc, params, path)
    if "rtt" in t:
        r_rtt, e_rtt = rtt_dist(t["rtt"], F.join(path, "rtt"))
    elif ctx.topo_rtt_ns is not None:
        r_rtt, e_rtt = format_time(ctx.topo_rtt_ns), {"kind": "fixed", "rtt_ns": ctx.topo_rtt_ns}
    else:
        raise SpecError(
            "topology.rtt", f"required unless every flow group and background source sets rtt ({path} does not)"
        )
    start_ns, stop_ns = start_stop(t, path, ctx.duration_ns)
    mss_ = _mss(t, path, ctx)
    icw = init_cwnd(t["init_cwnd"], F.join(path, "init_cwnd")) if "init_cwnd" in t else ctx.tcp.init_cwnd
    pacing = F.boolean(t["pacing"], F.join(path, "pacing")) if "pacing" in t else ctx.tcp.pacing
    ecn = ecn_setting(t, path, ctx.tcp, F.algorithms()[cc])
    resolved: dict[str, Any] = {"cc": cc}
    if cc_params:
        resolved["params"] = cc_params
    resolved["rtt"] = r_rtt
    resolved["direction"] = direction
    if route is not None:
        resolved["path"] = route.names
    resolved["start"] = format_time(start_ns)
    if stop_ns is not None:
        resolved["stop"] = format_time(stop_ns)
    resolved.update({"mss": mss_, "init_cwnd": icw, "pacing": pacing})
    if ecn:
        resolved["ecn"] = True
    h = host(t["host"], F.join(path, "host")) if "host" in t else None
    if h is not None:
        resolved["host"] = h.resolved()
    engine: dict[str, Any] = {
        "rtt": e_rtt,
        "direction": direction,
        "cc": cc,
        "params": cc_params,
        "mss": mss_,
        "header_bytes": ctx.tcp.header,
        "init_cwnd": icw,
        "pacing": pacing,
        "ecn": ecn,
        "start_ns": start_ns,
        "stop_ns": stop_ns,
        **(route.engine if route is not None else {}),
        **(h.engine(mss_, pacing) if h is not None else {}),
    }
    return resolved, engine


def _sessions(value: Any, path: str) -> int:
    """Number of sessions of a web or on-off source."""
    return F.integer(value, path, 1, int(WEB.fields["sessions"].hi or 0))


def _mss(t: Mapping[str, Any], path: str, ctx: Context) -> int:
    return mss(t["mss"], F.join(path, "mss"), ctx.tcp.header) if "mss" in t else ctx.tcp.mss


def _direction(t: Mapping[str, Any], path: str) -> str:
    return F.choice(t.get("direction", "forward"), F.join(path, "direction"), DIRECTIONS, "direction")


def _web_direction(t: Mapping[str, Any], path: str) -> str:
    """``direction``, or ``bidirectional = true`` for "both"."""
    direction = _direction(t, path)
    if "bidirectional" not in t:
        return direction
    bidi = F.boolean(t["bidirectional"], F.join(path, "bidirectional"))
    if bidi and "direction" in t and direction != "both":
        raise SpecError(
            F.join(path, "bidirectional"), f'true means direction = "both", but direction = "{direction}" is set'
        )
    if bidi:
        return "both"
    if "direction" in t and direction == "both":
        raise SpecError(F.join(path, "bidirectional"), 'false contradicts direction = "both"')
    return direction


def _web_sizes(t: Mapping[str, Any], path: str, mss_: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``sizes``: "surge" (with the size_* shortcuts) or a distribution table."""
    sizes_v = t.get("sizes", WEB.default("sizes"))
    shortcuts = [k for k in SURGE_SHORTCUTS if k in t]
    if not isinstance(sizes_v, str):
        if shortcuts:
            raise SpecError(F.join(path, shortcuts[0]), 'only allowed with sizes = "surge"')
        return size_dist(sizes_v, F.join(path, "sizes"), mss_)
    if sizes_v != "surge":
        raise SpecError(
            F.join(path, "sizes"),
            f'expected "surge" or a table such as {{ dist = "pareto", mean = "100pkts", shape = 1.2 }}, got {describe(sizes_v)}',
        )
    surge: dict[str, Any] = {"dist": "surge"}
    for k in shortcuts:
        surge[k.removeprefix("size_")] = t[k]
    try:
        return size_dist(surge, F.join(path, "sizes"), mss_)
    except SpecError as e:
        # Name the shortcut the user wrote, not the table it stands for.
        key = e.path.rsplit(".", 1)[-1]
        if f"size_{key}" in shortcuts:
            raise SpecError(F.join(path, f"size_{key}"), e.message) from None
        raise


def _web_arrivals(
    t: Mapping[str, Any], path: str, link_bps: int, mean_bytes: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Exactly one of sessions (with think), rate and load: (resolved keys, engine arrivals)."""
    given = [k for k in ("sessions", "rate", "load") if k in t]
    if not given:
        raise SpecError(
            path, "one of sessions, rate or load is required (e.g. sessions = 200, rate = 20.0 or load = 0.2)"
        )
    if len(given) > 1:
        raise SpecError(
            F.join(path, given[1]), f"only one of sessions, rate and load may be given ({given[0]} is also set)"
        )
    if "think" in t and given[0] != "sessions":
        raise SpecError(
            F.join(path, "think"), "only allowed with sessions (closed-loop sessions think between transfers)"
        )
    if given[0] == "sessions":
        n = _sessions(t["sessions"], F.join(path, "sessions"))
        think = F.positive_time(t.get("think", WEB.default("think")), F.join(path, "think"))
        return {"sessions": n, "think": format_time(think)}, {"kind": "sessions", "sessions": n, "off_mean_ns": think}
    if given[0] == "rate":
        rate = F.number(t["rate"], F.join(path, "rate"), 0.0, 1e7, lo_open=True)
        return {"rate": rate}, {"kind": "poisson", "rate": rate}
    load = F.number(t["load"], F.join(path, "load"), 0.0, 100.0, lo_open=True)
    return {"load": load}, {"kind": "poisson", "rate": load * link_bps / (8.0 * mean_bytes)}


def web(t: dict[str, Any], path: str, ctx: Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A web source: short TCP transfers, closed-loop sessions or Poisson arrivals."""
    F.check_keys(t, path, WEB)
    direction = _web_direction(t, path)
    route = _source_path(t, path, ctx, direction, tcp_=True)
    r_sizes, e_sizes = _web_sizes(t, path, _mss(t, path, ctx))
    link_bps = route.rate_bps if route is not None else ctx.link_rate(direction)
    r_arrivals, arrivals = _web_arrivals(t, path, link_bps, size_mean(e_sizes))
    resolved: dict[str, Any] = {"name": name, **r_arrivals, "sizes": r_sizes}
    common_r, common_e = _tcp_source_common(t, path, ctx, direction, route)
    resolved.update(common_r)
    return resolved, {"name": name, "arrivals": arrivals, "sizes": e_sizes, **common_e}


def onoff(t: dict[str, Any], path: str, ctx: Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An on-off source: sessions alternating a transfer and an exponential off time."""
    F.check_keys(t, path, ONOFF)
    direction = _direction(t, path)
    if "sessions" not in t:
        raise SpecError(F.join(path, "sessions"), "required (the number of on-off sessions, e.g. sessions = 25)")
    n = _sessions(t["sessions"], F.join(path, "sessions"))
    r_sizes, e_sizes = size_dist(t.get("size", ONOFF.default("size")), F.join(path, "size"), _mss(t, path, ctx))
    off = F.positive_time(t.get("off", ONOFF.default("off")), F.join(path, "off"))
    resolved: dict[str, Any] = {"name": name, "sessions": n, "size": r_sizes, "off": format_time(off)}
    route = _source_path(t, path, ctx, direction, tcp_=True)
    common_r, common_e = _tcp_source_common(t, path, ctx, direction, route)
    resolved.update(common_r)
    arrivals = {"kind": "sessions", "sessions": n, "off_mean_ns": off}
    return resolved, {"name": name, "arrivals": arrivals, "sizes": e_sizes, **common_e}


def udp(t: dict[str, Any], path: str, ctx: Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A UDP source: constant-rate or Poisson datagrams that do not react to loss."""
    F.check_keys(t, path, UDP)
    direction = _direction(t, path)
    link = _source_path(t, path, ctx, direction, tcp_=False)
    given = [k for k in ("rate", "load") if k in t]
    if not given:
        raise SpecError(path, 'one of rate or load is required (e.g. rate = "80Mbps" or load = 0.8)')
    if len(given) > 1:
        raise SpecError(F.join(path, "load"), "only one of rate and load may be given (rate is also set)")
    pattern = F.choice(t.get("pattern", UDP.default("pattern")), F.join(path, "pattern"), UDP_PATTERNS, "UDP pattern")
    packet = F.byte_count(t.get("packet", UDP.default("packet")), F.join(path, "packet"))
    if packet > 65535:
        raise SpecError(F.join(path, "packet"), f"must be at most 65535B, got {describe(t['packet'])}")
    start_ns, stop_ns = start_stop(t, path, ctx.duration_ns)
    resolved: dict[str, Any] = {"name": name}
    if given[0] == "rate":
        rate_bps = F.rate(t["rate"], F.join(path, "rate"))
        resolved["rate"] = format_rate(rate_bps)
    else:
        load = F.number(t["load"], F.join(path, "load"), 0.0, 100.0, lo_open=True)
        resolved["load"] = load
        rate_bps = max(1, round(load * (link.rate_bps if link is not None else ctx.link_rate(direction))))
    resolved.update({"pattern": pattern, "packet": format_bytes(packet), "direction": direction})
    if link is not None:
        resolved["path"] = link.names
    resolved["start"] = format_time(start_ns)
    if stop_ns is not None:
        resolved["stop"] = format_time(stop_ns)
    engine = {
        "name": name,
        "pattern": pattern,
        "rate_bps": rate_bps,
        "packet_bytes": packet,
        "direction": direction,
        "start_ns": start_ns,
        "stop_ns": stop_ns,
        **(link.engine if link is not None else {}),
    }
    return resolved, engine


@dataclass(frozen=True)
class Background:
    """The resolved ``[background]`` and the engine's TCP and UDP sources."""

    resolved: dict[str, Any]
    tcp_sources: list[dict[str, Any]]
    udp_sources: list[dict[str, Any]]

    @property
    def any(self) -> bool:
        """Whether there is any background source."""
        return bool(self.tcp_sources or self.udp_sources)

    @property
    def max_packet(self) -> int:
        """The largest packet of any source, bytes (0 without sources)."""
        sizes = [s["mss"] + s["header_bytes"] for s in self.tcp_sources]
        sizes += [s["packet_bytes"] for s in self.udp_sources]
        return max(sizes, default=0)


def background(value: Any, ctx: Context) -> Background:
    """Reads ``[background]``: every source of every kind, in file order."""
    sources = F.table(value, "background")
    F.check_keys(sources, "background", BACKGROUND)
    builders = {"web": web, "onoff": onoff, "udp": udp}
    resolved: dict[str, Any] = {}
    tcp_sources: list[dict[str, Any]] = []
    udp_sources: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for kind in BACKGROUND.names:
        if kind not in sources:
            continue
        entries = []
        for i, (path, t) in enumerate(_source_list(sources[kind], f"background.{kind}")):
            name = t.get("name", f"{kind}{i}")
            if not isinstance(name, str) or not F.NAME_RE.fullmatch(name):
                raise SpecError(
                    F.join(path, "name"),
                    f"expected letters, digits, '.', '_', '+' or '-' (up to 100), got {describe(name)}",
                )
            if name in names:
                raise SpecError(F.join(path, "name"), f'"{name}" is already the name of {names[name]}')
            names[name] = path
            r, e = builders[kind](t, path, ctx, name)
            entries.append(r)
            (udp_sources if kind == "udp" else tcp_sources).append(e)
        if entries:
            resolved[kind] = entries
    return Background(resolved, tcp_sources, udp_sources)
