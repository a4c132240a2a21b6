"""``[topology]``: the dumbbell's base RTT, the bottleneck and the reverse link."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from . import fields as F
from .distributions import loss
from .errors import SpecError
from .limits import MAX_BUFFER_PKTS
from .linkmodels import LinkModels, link_delay, link_models, link_rate
from .schema import BOTTLENECK, QDISC_CATALOGUE, QDISCS, REVERSE, TOPOLOGY, qdisc_key
from .units import (
    Size,
    UnitError,
    describe,
    format_bytes,
    format_rate,
    format_size,
    format_time,
    parse_bytes,
    parse_time,
)

__all__ = ["Link", "Topology", "buffer_limit", "topology"]

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class Link:
    """A link's rate and buffer as written (a BDP buffer becomes packets once the RTT is known)."""

    rate_bps: int
    buffer: Size


@dataclass(frozen=True)
class Topology:
    """The resolved ``[topology]``; buffers are turned into limits by :func:`buffer_limit`."""

    rtt_ns: int | None
    bottleneck: Link
    qdisc: str
    qdisc_resolved: dict[str, Any]
    """The discipline's parameters as spec.toml writes them (empty for droptail)."""
    qdisc_engine: dict[str, Any]
    """The same in the engine's units (empty for droptail)."""
    delay_ns: int
    loss: float | dict[str, Any]
    loss_p: float
    loss_model: dict[str, Any] | None
    reverse: Link
    reverse_buffer_path: str
    reverse_loss: float | dict[str, Any] | None
    reverse_loss_p: float
    reverse_loss_model: dict[str, Any] | None
    models: LinkModels = field(default_factory=LinkModels)
    """The bottleneck's link models (capacity over time, jitter, batching, policer, shaper)."""
    reverse_models: LinkModels = field(default_factory=LinkModels)

    def resolved(self) -> dict[str, Any]:
        """The ``[topology]`` table of ``spec.toml``."""
        out: dict[str, Any] = {}
        if self.rtt_ns is not None:
            out["rtt"] = format_time(self.rtt_ns)
        out["bottleneck"] = {
            "rate": format_rate(self.bottleneck.rate_bps),
            "buffer": format_size(self.bottleneck.buffer),
            "qdisc": self.qdisc,
            "delay": format_time(self.delay_ns),
            "loss": self.loss,
        }
        if self.qdisc_resolved:
            out["bottleneck"][self.qdisc] = self.qdisc_resolved
        out["bottleneck"].update(self.models.resolved)
        out["reverse"] = {"rate": format_rate(self.reverse.rate_bps), "buffer": format_size(self.reverse.buffer)}
        if self.reverse_loss is not None:
            out["reverse"]["loss"] = self.reverse_loss
        out["reverse"].update(self.reverse_models.resolved)
        return out

    def engine_links(self, limits: tuple[tuple[str, int], tuple[str, int]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The engine's bottleneck and reverse links, given their queue limits."""
        (bn_key, bn_limit), (rev_key, rev_limit) = limits
        bottleneck: dict[str, Any] = {
            "rate_bps": self.bottleneck.rate_bps,
            "delay_ns": self.delay_ns,
            bn_key: bn_limit,
            "loss": self.loss_p,
        }
        reverse: dict[str, Any] = {
            "rate_bps": self.reverse.rate_bps,
            "delay_ns": self.delay_ns,
            rev_key: rev_limit,
            "loss": self.reverse_loss_p,
        }
        if self.loss_model is not None:
            bottleneck["loss_model"] = self.loss_model
        if self.qdisc != "droptail":
            bottleneck["qdisc"] = {"kind": self.qdisc, **self.qdisc_engine}
        if self.reverse_loss_model is not None:
            reverse["loss_model"] = self.reverse_loss_model
        if self.models.engine is not None:
            bottleneck["model"] = self.models.engine
        if self.reverse_models.engine is not None:
            reverse["model"] = self.reverse_models.engine
        return bottleneck, reverse


def _link(table: dict[str, Any], path: str) -> Link:
    rate, _ = link_rate(table, path)
    if "buffer" not in table:
        raise SpecError(F.join(path, "buffer"), 'required (e.g. buffer = "1bdp", "100pkts" or "64KB")')
    return Link(rate, F.size(table["buffer"], F.join(path, "buffer")))


def topology(raw: dict[str, Any]) -> Topology:
    """Reads ``[topology]``: the bottleneck (required), the base RTT and the reverse link."""
    if "topology" not in raw:
        raise SpecError("topology", 'required (at least topology.bottleneck = { rate = "100Mbps", buffer = "1bdp" })')
    topo = F.table(raw["topology"], "topology")
    F.check_keys(topo, "topology", TOPOLOGY)
    rtt_ns = F.positive_time(topo["rtt"], "topology.rtt") if "rtt" in topo else None
    if "bottleneck" not in topo:
        raise SpecError("topology.bottleneck", 'required (e.g. bottleneck = { rate = "100Mbps", buffer = "1bdp" })')
    bn = F.table(topo["bottleneck"], "topology.bottleneck")
    F.check_keys(bn, "topology.bottleneck", BOTTLENECK)
    bottleneck = _link(bn, "topology.bottleneck")
    qdisc = F.choice(bn.get("qdisc", BOTTLENECK.default("qdisc")), "topology.bottleneck.qdisc", QDISCS, "queue discipline")
    q_resolved, q_engine = qdisc_params(bn, qdisc, "topology.bottleneck")
    delay_ns, delay_steps = link_delay(bn, "topology.bottleneck", BOTTLENECK.default("delay"))
    models = link_models(bn, "topology.bottleneck", delay_ns, delay_steps, link_rate(bn, "topology.bottleneck")[1])
    bn_loss, bn_loss_p, bn_loss_model = loss(bn.get("loss", BOTTLENECK.default("loss")), "topology.bottleneck.loss")
    rev_models = LinkModels()
    rev_loss: float | dict[str, Any] | None = None
    rev_loss_p, rev_loss_model = 0.0, None
    rev_buffer_path = "topology.bottleneck.buffer"
    if "reverse" in topo:
        rev = F.table(topo["reverse"], "topology.reverse")
        F.check_keys(rev, "topology.reverse", REVERSE)
        rev_rate, rev_steps = link_rate(rev, "topology.reverse") if "rate" in rev or "trace" in rev else (None, None)
        reverse = Link(
            rev_rate if rev_rate is not None else bottleneck.rate_bps,
            F.size(rev["buffer"], "topology.reverse.buffer") if "buffer" in rev else bottleneck.buffer,
        )
        rev_models = link_models(rev, "topology.reverse", delay_ns, [], rev_steps)
        if "buffer" in rev:
            rev_buffer_path = "topology.reverse.buffer"
        if "loss" in rev:
            rev_loss, rev_loss_p, rev_loss_model = loss(rev["loss"], "topology.reverse.loss")
    else:
        reverse = Link(bottleneck.rate_bps, bottleneck.buffer)
    return Topology(
        rtt_ns, bottleneck, qdisc, q_resolved, q_engine, delay_ns, bn_loss, bn_loss_p, bn_loss_model,
        reverse, rev_buffer_path, rev_loss, rev_loss_p, rev_loss_model, models, rev_models,
    )  # fmt: skip


def qdisc_params(link: dict[str, Any], qdisc: str, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The table named after the discipline (``red = { min_th = 5, ... }``): (resolved, engine) with defaults.

    Types, units, ranges and relations come from the engine's own table
    (``_core.qdisc_catalogue()``, which the engine checks a configuration
    against), so a value passes here exactly when the engine takes it.
    """
    for other in QDISCS:
        if other != qdisc and other in link:
            raise SpecError(F.join(path, other), f'only with qdisc = "{other}" (this link has qdisc = "{qdisc}")')
    info = next(q for q in QDISC_CATALOGUE if q["name"] == qdisc)
    where = F.join(path, qdisc)
    given = F.table(link.get(qdisc, {}), where)
    params = {qdisc_key(p): p for p in info["params"]}
    F.check_keys(given, where, tuple(params))
    resolved: dict[str, Any] = {}
    engine: dict[str, Any] = {}
    for key, p in params.items():
        value = given.get(key)
        v = p["default"] if value is None else _qdisc_value(value, p, F.join(where, key))
        engine[p["name"]] = v
        unit = p.get("unit")
        resolved[key] = format_time(v) if unit == "ns" else format_bytes(v) if unit == "bytes" else v
    for key, p in params.items():
        other = p.get("exceeds")
        if other is None or engine[p["name"]] > engine[other]:
            continue
        other_key = next(k for k, q in params.items() if q["name"] == other)
        if given.get(key) is not None:
            raise SpecError(F.join(where, key), f"must exceed {other_key} ({resolved[other_key]}), got {resolved[key]}")
        raise SpecError(
            F.join(where, other_key), f"must be below {key} ({resolved[key]}, its default), got {resolved[other_key]}"
        )
    return resolved, engine


def _qdisc_value(value: Any, p: dict[str, Any], path: str) -> Any:
    """One parameter as written, checked against the engine's table; in the engine's unit."""
    kind = p["type"]
    if kind == "bool":
        return F.boolean(value, path)
    if kind == "choice":
        return F.choice(value, path, tuple(p.get("choices") or ()), "mode")
    lo, hi = p["min"], p["max"]
    lo_open, hi_open = bool(p.get("min_open")), bool(p.get("max_open"))
    unit = p.get("unit")
    if unit is not None:
        what, show = ("a time", format_time) if unit == "ns" else ("a size", format_bytes)
        want = f"expected {what} in {'(' if lo_open else '['}{show(lo)}, {show(hi)}{']' if not hi_open else ')'}"
        try:
            n = parse_time(value) if unit == "ns" else parse_bytes(value)
        except UnitError as e:
            raise SpecError(path, str(e)) from None
        if n < lo or n > hi or (lo_open and n == lo) or (hi_open and n == hi):
            raise SpecError(path, f"{want}, got {describe(value)}")
        return n
    if kind == "int":
        return F.integer(value, path, lo + 1 if lo_open else lo, hi - 1 if hi_open else hi)
    return F.number(value, path, float(lo), float(hi), lo_open=lo_open, hi_open=hi_open)


def buffer_limit(link: Link, path: str, rtt_ns: int, packet_bytes: int, max_packet: int) -> tuple[str, int]:
    """The engine's queue limit: ("buffer_pkts", n) or ("buffer_bytes", n)."""
    b = link.buffer
    if b.kind == "pkts":
        assert isinstance(b.value, int)
        if b.value > MAX_BUFFER_PKTS:
            raise SpecError(path, f"must be at most {MAX_BUFFER_PKTS} packets, got {format_size(b)}")
        return "buffer_pkts", b.value
    if b.kind == "bytes":
        assert isinstance(b.value, int)
        if b.value > MAX_BUFFER_PKTS * max_packet:
            raise SpecError(path, f"must be at most {format_bytes(MAX_BUFFER_PKTS * max_packet)}, got {format_bytes(b.value)}")
        if b.value < max_packet:
            raise SpecError(path, f"must hold at least one packet ({max_packet} bytes), got {format_bytes(b.value)}")
        return "buffer_bytes", b.value
    pkts = max(1, math.floor(Fraction(b.value) * link.rate_bps * rtt_ns / (8 * NS_PER_S * packet_bytes) + Fraction(1, 2)))
    if pkts > MAX_BUFFER_PKTS:
        raise SpecError(path, f"{format_size(b)} is {pkts} packets here; at most {MAX_BUFFER_PKTS} fit the engine")
    return "buffer_pkts", pkts
