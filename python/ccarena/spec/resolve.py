"""Validating and resolving an experiment: :func:`resolve` and :func:`load_spec`.

An experiment is a TOML file (or the same structure as a Python dict)::

    name = "two-renos"
    duration = "60s"
    seed = 1

    [topology]
    rtt = "50ms"
    bottleneck = { rate = "100Mbps", buffer = "1bdp" }

    [[flows]]
    cc = "reno"
    count = 2

:func:`load_spec` checks everything in one place and returns a :class:`Spec`
holding the *resolved* experiment (every default filled in, quantities as
canonical unit strings, algorithm parameters complete) and the configuration
the simulator runs. Any mistake raises :class:`SpecError`, whose text names
the field, e.g. ``flows[1].cc: unknown algorithm "cubik" (did you mean
"cubic"?)``. Unknown keys are errors (with the closest known key), so a typo
never falls back to a default silently.

The schema (defaults in parentheses)::

    name = "..."           (the file name without .toml)
    duration = "60s"       (required)
    seed = 1               (1)

    [topology]
    rtt = "50ms"           base RTT of every flow; required unless every flow group sets rtt
    bottleneck = { rate = "100Mbps",   required
                   buffer = "1bdp",    required: "Npkts", a byte size, or a BDP fraction
                   qdisc = "droptail", ("droptail")
                   delay = "0ms",      one-way propagation delay of the bottleneck link ("0s")
                   loss = 0.0 }        random loss of data packets (0): a probability in [0, 1),
                                       or { model = "gilbert", p_gb, p_bg, loss_good = 0.0, loss_bad = 1.0 }
                                       or { model = "periodic", p }: every round(1/p)-th data packet
    reverse = { rate, buffer, loss }   the ACK direction (rate and buffer as the bottleneck; no loss)

    [tcp]                  defaults for every flow
    mss = 1448             (1448) payload bytes per packet
    header = 52            (52) header bytes per packet
    init_cwnd = 10         (10) initial window, packets
    rwnd = "1MB"           (unlimited) receive window
    pacing = false         (false, except for algorithms that need pacing, e.g. bbr)
    recovery = "prr"       (the algorithm's default) "prr" or "newreno"

    [[flows]]              one table per group of identical flows
    cc = "cubic"           required; see `ccarena list cc`
    count = 1              (1)
    params = {}            algorithm parameters ({})
    start = "0s"           ("0s")
    stop = "30s"           (the end of the run)
    rtt = "50ms"           (topology.rtt)
    app = "bulk"           ("bulk") "bulk", "fixed" (send `size` bytes) or "rate" (send at `rate`)
    size = "10MB"          required with app = "fixed"
    rate = "735kbps"       required with app = "rate"
    reverse = false        (false) true: the data cross the reverse link, the ACKs the bottleneck
    every = "10s"          (none) start flow k of the group at start + k·every
    mss, init_cwnd, rwnd, pacing, recovery   override [tcp] for this group

    [[background.web]]     short TCP transfers (a single [background.web] table is accepted too)
    sessions = 200         exactly one of sessions (closed loop, with think = "1s" ("1s")),
    rate = 20.0            Poisson transfers per second,
    load = 0.2             or a fraction of the link rate (Poisson; rate = load·C/(8·E[size]))
    sizes = "surge"        ("surge", with size_body, size_mu, size_sigma, size_tail_min,
                           size_tail_shape) or a distribution table (see SIZE_DISTS)
    cc = "reno"            ("reno") and params ({})
    rtt = "50ms"           (topology.rtt) or { dist = "exponential", mean_one_way, min = "0s" }
                           or { dist = "uniform", lo, hi }
    direction = "forward"  ("forward") "reverse" or "both"; bidirectional = true means "both"
    start, stop, mss, init_cwnd, pacing, name

    [[background.onoff]]   sessions (required), size ({ dist = "pareto", mean = "100pkts",
                           shape = 1.2 }), off ("10s"), and cc ... name as for web

    [[background.udp]]     rate = "80Mbps" or load = 0.8, pattern ("cbr" or "poisson"),
                           packet ("1500B", wire bytes), direction, start, stop, name

    [measure]
    interval = "100ms"     ("100ms") trace interval, 1 ms to the duration
    trace = true           (true) record per-interval traces

``[[flows]]`` may be left out when there is background traffic. A load is
relative to the bottleneck's rate (the reverse link's for direction =
"reverse") and counts payload bytes; E[size] is the mean of the sizes as the
engine draws them (capped at 1 TB). Optional settings that are absent
(``reverse = false``, ``every``, the reverse link's loss, background) are
left out of the resolved document, so experiments that do not use them
resolve as before.

The reverse link has the bottleneck's propagation delay.
A "Xbdp" buffer is ``round(X · rate · rtt / 8 / packet)`` packets (at least 1),
where rtt is ``topology.rtt`` (or the largest flow RTT when it is absent) and
packet is ``tcp.mss + tcp.header`` bytes (1500 by default). The reverse link's
BDP uses its own rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._version import __version__
from . import fields as F
from .background import Context, background
from .document import load_document
from .engine import EngineConfig
from .errors import SpecError
from .flows import Flows, flows
from .limits import warnings
from .measure import measure
from .model import Spec
from .network import Network, network, unused_links
from .schema import EXPERIMENT, NETWORK_KINDS
from .tcp import tcp
from .topology import Link, Topology, buffer_limit, topology
from .units import describe, format_time

__all__ = ["load_spec", "resolve"]


def _sanitize_name(stem: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._+-]+", "-", stem).strip("-.")[:100]
    return cleaned or "experiment"


def _top(raw: dict[str, Any], default_name: str) -> tuple[str, int, int]:
    """The top-level keys: (name, duration in ns, seed)."""
    if "sweep" in raw:
        raise SpecError("sweep", "this file is a campaign: run it with `ccarena sweep` (or ccarena.sweep)")
    F.check_keys(raw, "", EXPERIMENT)
    name = raw.get("name", _sanitize_name(default_name))
    if not isinstance(name, str) or not F.NAME_RE.fullmatch(name):
        raise SpecError(
            "name",
            "expected letters, digits, '.', '_', '+' or '-' (up to 100; it names the output folder), "
            f"got {describe(name)}",
        )
    if "duration" not in raw:
        raise SpecError("duration", 'required (e.g. duration = "60s")')
    duration_ns = F.positive_time(raw["duration"], "duration")
    seed = F.integer(raw.get("seed", EXPERIMENT.default("seed")), "seed", 0, 2**63 - 1)
    _cc_modules(raw)
    if "ccarena_version" in raw and not isinstance(raw["ccarena_version"], str):
        raise SpecError("ccarena_version", f"expected a version string, got {describe(raw['ccarena_version'])}")
    return name, duration_ns, seed


def _cc_modules(raw: dict[str, Any]) -> list[str] | None:
    """Imports ``cc_module`` (the modules registering Python algorithms), .py paths made absolute."""
    mods = raw.get("cc_module")
    if mods is None:
        return None
    items = [mods] if isinstance(mods, str) else mods
    if not isinstance(items, list) or not items or not all(isinstance(m, str) and m for m in items):
        raise SpecError("cc_module", f"expected a module name or a .py file, or a list of them, got {describe(mods)}")
    from ..pycc import import_cc_modules

    out = [str(Path(m).absolute()) if m.endswith(".py") else m for m in items]
    try:
        import_cc_modules(out)
    except Exception as e:  # noqa: BLE001 - any failure of the user's module is reported on the field
        raise SpecError("cc_module", f"importing it failed: {type(e).__name__}: {e}") from None
    return out


def _queue_limits(
    topo: Topology, fl: Flows, packet_bytes: int, max_packet: int, check_delay: bool = True
) -> tuple[tuple[str, int], tuple[str, int]]:
    """The bottleneck's and the reverse link's queue limits; BDP buffers use topology.rtt or the longest flow RTT."""
    if check_delay and fl.group_rtts and 2 * topo.delay_ns > min(fl.group_rtts):
        raise SpecError(
            "topology.bottleneck.delay",
            f"must be at most half the smallest flow RTT ({format_time(min(fl.group_rtts))}), "
            f"got {format_time(topo.delay_ns)}",
        )
    bdp_rtt_ns = topo.rtt_ns if topo.rtt_ns is not None else max(fl.group_rtts, default=0)
    if bdp_rtt_ns == 0 and (topo.bottleneck.buffer.kind == "bdp" or topo.reverse.buffer.kind == "bdp"):
        raise SpecError("topology.rtt", "required for a buffer given in bdp when there are no flow groups")
    bn = buffer_limit(topo.bottleneck, "topology.bottleneck.buffer", bdp_rtt_ns, packet_bytes, max_packet)
    rev = buffer_limit(topo.reverse, topo.reverse_buffer_path, bdp_rtt_ns, packet_bytes, max_packet)
    return bn, rev


def resolve(raw: Mapping[str, Any], *, default_name: str = "experiment") -> Spec:
    """Validates an experiment (a parsed TOML document) and resolves it.

    ``default_name`` is used when the experiment has no ``name`` (the file
    stem when loading a file). Raises :class:`SpecError` on the first mistake.
    """
    raw = F.table(dict(raw), "file")
    name, duration_ns, seed = _top(raw, default_name)
    net = _network(raw)
    if net is not None:
        raw = _default_rtts(raw, net)
    topo = topology(raw) if net is None else _measured_link(raw, net)
    tcp_ = tcp(raw)
    ctx = Context(duration_ns, topo.rtt_ns, topo.bottleneck.rate_bps, topo.reverse.rate_bps, tcp_, net)
    bg = background(raw.get("background", {}), ctx)
    fl = flows(raw, duration_ns, topo.rtt_ns, tcp_, bg.any, seed)
    max_packet = max(tcp_.mss + tcp_.header, bg.max_packet, fl.max_packet)
    if net is not None:
        _check_path_delays(net, fl)
    limits = _queue_limits(topo, fl, tcp_.mss + tcp_.header, max_packet, check_delay=net is None)
    meas = measure(raw, duration_ns, len(fl.resolved))

    resolved: dict[str, Any] = {
        "name": name,
        "duration": format_time(duration_ns),
        "seed": seed,
        "ccarena_version": __version__,
        **({"cc_module": _cc_modules(raw)} if "cc_module" in raw else {}),
        "topology": topo.resolved(),
        "tcp": tcp_.resolved(),
        "measure": meas.resolved(),
    }
    if net is not None:
        resolved["topology"] = net.resolved
        resolved["measure"] = {**resolved["measure"], "link": net.links[net.measure].name}
        for gi, g in enumerate(fl.resolved):
            data, ack = net.paths[gi]
            g["path"] = [net.links[i].name for i in data]
            g["ack_path"] = [net.links[i].name for i in ack]
    if fl.resolved:
        resolved["flows"] = fl.resolved
    if bg.any:
        resolved["background"] = bg.resolved

    bottleneck, reverse = topo.engine_links(limits)
    engine: dict[str, Any] = {
        "seed": seed,
        "duration_ns": duration_ns,
        "interval_ns": meas.interval_ns,
        "trace": meas.trace,
        "bottleneck": bottleneck,
        "reverse": reverse,
        "flows": fl.engine,
    }
    if net is not None:
        bdp_rtt_ns = topo.rtt_ns if topo.rtt_ns is not None else max(fl.group_rtts, default=0)
        packet = tcp_.mss + tcp_.header
        engine["network"] = {
            "links": [
                net.links[i].engine(buffer_limit(net.links[i], net.links[i].buffer_path, bdp_rtt_ns, packet, max_packet))
                for i in net.order[2:]
            ],
            "routes": net.routes(fl.groups),
            "names": [net.links[i].name for i in net.order],
        }
    if bg.tcp_sources:
        engine["tcp_sources"] = bg.tcp_sources
    if bg.udp_sources:
        engine["udp_sources"] = bg.udp_sources
    config = EngineConfig(engine)
    return Spec(
        resolved=resolved,
        engine=config,
        flow_groups=tuple(fl.groups),
        metrics=meas.engine(),
        warnings=(*warnings(resolved, config), *_network_warnings(net)),
    )


def _network(raw: dict[str, Any]) -> Network | None:
    """A parking lot's or a list of links' network; None for the dumbbell (whose keys stay its own)."""
    topo = raw.get("topology")
    kind = F.choice(topo.get("kind", "dumbbell"), "topology.kind", NETWORK_KINDS, "topology kind") if isinstance(
        topo, dict
    ) else "dumbbell"
    meas = raw.get("measure")
    link = meas.get("link") if isinstance(meas, dict) else None
    if kind == "dumbbell":
        for key in ("hops", "link", "hop", "links"):
            if isinstance(topo, dict) and key in topo:
                raise SpecError(f"topology.{key}", 'only with kind = "parking_lot" or "links"')
        for gi, g in enumerate(raw.get("flows", []) if isinstance(raw.get("flows"), list) else []):
            for key in ("path", "ack_path"):
                if isinstance(g, dict) and key in g:
                    raise SpecError(f"flows[{gi}].{key}", 'only with topology.kind = "parking_lot" or "links"')
        if link is not None:
            raise SpecError("measure.link", 'only with topology.kind = "parking_lot" or "links"')
        return None
    if link is not None and not isinstance(link, str):
        raise SpecError("measure.link", f"expected a link's name, got {describe(link)}")
    return network(raw, kind, link)


def _default_rtts(raw: dict[str, Any], net: Network) -> dict[str, Any]:
    """Groups without an RTT get topology.rtt, else twice their path's delay (written out in spec.toml)."""
    if "rtt" in raw["topology"] or not isinstance(raw.get("flows"), list):
        return raw
    groups = []
    for gi, g in enumerate(raw["flows"]):
        if isinstance(g, dict) and "rtt" not in g:
            g = {**g, "rtt": format_time(max(2 * net.path_delay_ns(gi), 1))}
        groups.append(g)
    return {**raw, "flows": groups}


def _measured_link(raw: dict[str, Any], net: Network) -> Topology:
    """The measured link and its twin as the engine's links 0 and 1 (queue, background traffic)."""
    b, r = net.links[net.order[0]], net.links[net.order[1]]
    topo = raw["topology"]
    rtt_ns = F.positive_time(topo["rtt"], "topology.rtt") if "rtt" in topo else None
    return Topology(
        rtt_ns, Link(b.rate_bps, b.buffer), b.qdisc, b.qdisc_resolved, b.qdisc_engine, b.delay_ns, b.loss, b.loss_p,
        b.loss_model, Link(r.rate_bps, r.buffer), r.buffer_path, r.loss, r.loss_p, r.loss_model,
    )  # fmt: skip


def _check_path_delays(net: Network, fl: Flows) -> None:
    for gi, rtt_ns in enumerate(fl.group_rtts):
        need = 2 * net.path_delay_ns(gi)
        if rtt_ns < need:
            raise SpecError(f"flows[{gi}].rtt", f"must be at least twice its path's delay ({format_time(need)}), "
                            f"got {format_time(rtt_ns)}")


def _network_warnings(net: Network | None) -> list[str]:
    if net is None:
        return []
    return [f"topology: link {name} carries no flow's or background source's traffic" for name in unused_links(net)]


def load_spec(
    source: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Spec:
    """Loads, overrides, validates and resolves an experiment.

    ``source`` is the path of a TOML file or a dict with the same structure.
    ``overrides`` replace top-level keys (``duration="10s"``), ``set`` maps
    field paths to values (``{"flows[0].cc": "cubic",
    "topology.bottleneck.rate": "50Mbps"}``) and ``seed`` replaces the seed;
    they apply in that order. Raises :class:`SpecError` naming the field on
    any mistake.
    """
    raw, default_name = load_document(source, seed=seed, set=set, **overrides)
    return resolve(raw, default_name=default_name)
