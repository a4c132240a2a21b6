"""Networks beyond the dumbbell: a parking lot, or links and paths.

``[topology] kind = "parking_lot"`` builds ``hops`` links in a line, named
``hop1`` … ``hopN`` in the data direction, each from router ``r{i-1}`` to
``r{i}``; ``link`` gives every hop's rate, buffer, delay, discipline and
loss, and ``[[topology.hop]]`` (one table per hop, in order) overrides them
hop by hop. A flow group crosses every hop unless its ``path`` names some
(``path = ["hop2"]`` is a cross group)::

    [topology]
    kind = "parking_lot"
    hops = 3
    link = { rate = "100Mbps", delay = "10ms", buffer = "1bdp" }

    [[flows]]              # the long flow, across hop1, hop2, hop3
    cc = "reno"
    [[flows]]              # a cross flow on hop2 only
    cc = "reno"
    path = ["hop2"]

``kind = "links"`` takes the links one by one, ``[[topology.links]]`` with a
``name`` (and optionally the nodes ``from`` and ``to``, against which paths
are checked to be connected), and every flow group names its ``path``.

Every link has a reverse twin, ``<name>_rev``, with the same rate and buffer
(``reverse = { rate, buffer, loss }`` changes them) and no loss, which
carries the other direction: a group's ACKs cross the twins of its path, last
first, unless ``ack_path`` names other links. A flow's RTT is its group's
``rtt``, else ``topology.rtt``, else twice the delay of its own path (the
longer of the data and ACK paths); the difference between the RTT and the
path's delay is split between the ends, as in the dumbbell.

The engine's link 0, whose queue summary.json's ``queue`` describes, is
``[measure] link``, by default the slowest link any flow's data cross (the
first of equals); link 1 is its twin. A flow's rate at the bottleneck is
counted at ``[measure] link`` when its data cross it, else at the slowest
link of its own path (the last of equals: the bytes that made it through
every one of them). Background traffic crosses link 0 and its twin, unless a
source names its own ``path`` (a TCP source also its ``ack_path``; a UDP
source one link).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import fields as F
from .distributions import loss
from .errors import SpecError, did_you_mean
from .linkmodels import LinkModels, link_delay, link_models, link_rate
from .schema import BOTTLENECK, HOP, LINK, QDISCS, REVERSE
from .units import Size, describe, format_rate, format_size, format_time

__all__ = [
    "NetLink",
    "Network",
    "bottleneck_table",
    "link_path",
    "link_tables",
    "network",
    "twin_index",
    "unused_links",
]

REV = "_rev"


@dataclass(frozen=True)
class NetLink:
    """One link as resolved (a reverse twin too)."""

    name: str
    rate_bps: int
    buffer: Size
    buffer_path: str
    delay_ns: int
    qdisc: str
    qdisc_resolved: dict[str, Any]
    qdisc_engine: dict[str, Any]
    loss: float | dict[str, Any]
    loss_p: float
    loss_model: dict[str, Any] | None
    src: str | None
    dst: str | None
    models: LinkModels = field(default_factory=LinkModels)
    """Capacity over time, jitter, batching, policer, shaper."""

    def engine(self, limit: tuple[str, int]) -> dict[str, Any]:
        """The engine's link, given its queue limit."""
        key, value = limit
        out: dict[str, Any] = {"rate_bps": self.rate_bps, "delay_ns": self.delay_ns, key: value, "loss": self.loss_p}
        if self.loss_model is not None:
            out["loss_model"] = self.loss_model
        if self.qdisc != "droptail":
            out["qdisc"] = {"kind": self.qdisc, **self.qdisc_engine}
        if self.models.engine is not None:
            out["model"] = self.models.engine
        return out

    def written(self) -> dict[str, Any]:
        """The link as spec.toml writes it."""
        out: dict[str, Any] = {
            "rate": format_rate(self.rate_bps),
            "buffer": format_size(self.buffer),
            "qdisc": self.qdisc,
            "delay": format_time(self.delay_ns),
            "loss": self.loss,
        }
        if self.qdisc_resolved:
            out[self.qdisc] = self.qdisc_resolved
        out.update(self.models.resolved)
        return out


@dataclass
class Network:
    """The resolved network: its links (twins included) and each flow group's paths."""

    kind: str
    links: list[NetLink]
    resolved: dict[str, Any]
    """The ``[topology]`` table of spec.toml."""
    paths: list[tuple[list[int], list[int]]] = field(default_factory=list)
    """Per flow group: (data path, ACK path) as indices into ``links``."""
    order: list[int] = field(default_factory=list)
    """The engine's link table: indices into ``links``, the measured link and its twin first."""
    measure: int = 0
    """Index into ``links`` of the network's measured link."""
    background_links: set[int] = field(default_factory=set)
    """Indices into ``links`` that background sources cross (``[background]`` ``path``)."""

    def engine_index(self, i: int) -> int:
        """The engine's index of ``links[i]``."""
        return self.order.index(i)

    def index(self, name: str) -> int:
        return next(i for i, link in enumerate(self.links) if link.name == name)

    def group_measure(self, gi: int) -> int:
        """Index into ``links`` of the link where group ``gi``'s rate at the bottleneck is counted."""
        data = self.paths[gi][0]
        if self.measure in data:
            return self.measure
        slowest = min(self.links[i].rate_bps for i in data)
        return [i for i in data if self.links[i].rate_bps == slowest][-1]

    def routes(self, groups: Sequence[int]) -> list[dict[str, Any]]:
        """The engine's route of every flow (``groups[k]``: flow k's group), in engine link indices."""
        engine_index = {li: k for k, li in enumerate(self.order)}
        out = []
        for g in groups:
            data, ack = self.paths[g]
            out.append({
                "data": [engine_index[i] for i in data],
                "ack": [engine_index[i] for i in ack],
                "measure": engine_index[self.group_measure(g)],
            })  # fmt: skip
        return out

    def path_delay_ns(self, gi: int) -> int:
        """The longer of group ``gi``'s data and ACK paths' propagation delays."""
        data, ack = self.paths[gi]
        return max(sum(self.links[i].delay_ns for i in data), sum(self.links[i].delay_ns for i in ack))


def _link(table: Mapping[str, Any], path: str, name: str, src: str | None, dst: str | None) -> NetLink:
    from .topology import _link as rate_buffer
    from .topology import qdisc_params

    rb = rate_buffer(dict(table), path)
    qdisc = F.choice(table.get("qdisc", BOTTLENECK.default("qdisc")), F.join(path, "qdisc"), QDISCS, "queue discipline")
    q_resolved, q_engine = qdisc_params(dict(table), qdisc, path)
    delay_ns, delay_steps = link_delay(table, path, BOTTLENECK.default("delay"))
    models = link_models(table, path, delay_ns, delay_steps, link_rate(table, path)[1])
    value, p, model = loss(table.get("loss", BOTTLENECK.default("loss")), F.join(path, "loss"))
    return NetLink(name, rb.rate_bps, rb.buffer, F.join(path, "buffer"), delay_ns, qdisc, q_resolved, q_engine,
                   value, p, model, src, dst, models)  # fmt: skip


def _twin(link: NetLink, table: Mapping[str, Any] | None, path: str) -> NetLink:
    """The reverse twin: the link's rate, buffer and delay, DropTail, no loss, unless ``table`` says otherwise."""
    rate, buffer, buffer_path = link.rate_bps, link.buffer, link.buffer_path
    value: float | dict[str, Any] = 0.0
    p, model = 0.0, None
    models = LinkModels()
    if table is not None:
        t = F.table(table, path)
        F.check_keys(t, path, REVERSE)
        steps = None
        if "rate" in t or "trace" in t:
            rate, steps = link_rate(t, path)
        if "buffer" in t:
            buffer, buffer_path = F.size(t["buffer"], F.join(path, "buffer")), F.join(path, "buffer")
        if "loss" in t:
            value, p, model = loss(t["loss"], F.join(path, "loss"))
        models = link_models(t, path, link.delay_ns, [], steps)
    return NetLink(link.name + REV, rate, buffer, buffer_path, link.delay_ns, "droptail", {}, {}, value, p, model,
                   link.dst, link.src, models)  # fmt: skip


def _parking_lot(topo: Mapping[str, Any]) -> tuple[list[NetLink], dict[str, Any]]:
    if "hops" not in topo:
        raise SpecError("topology.hops", "required for a parking lot (the number of links in the line, e.g. 3)")
    hops = F.integer(topo["hops"], "topology.hops", 1, 64)
    if "link" not in topo and "hop" not in topo:
        raise SpecError("topology.link", 'required for a parking lot (e.g. link = { rate = "100Mbps", buffer = "1bdp" })')
    base = F.table(topo.get("link", {}), "topology.link")
    F.check_keys(base, "topology.link", BOTTLENECK)
    overrides: list[Any] = topo.get("hop", [])
    if not isinstance(overrides, list) or len(overrides) not in (0, hops):
        raise SpecError("topology.hop", f"expected one table per hop ({hops}), got {describe(overrides)}")
    links: list[NetLink] = []
    written = []
    for h in range(hops):
        over = F.table(overrides[h], f"topology.hop[{h}]") if overrides else {}
        F.check_keys(over, f"topology.hop[{h}]", HOP)
        where = f"topology.hop[{h}]" if over else "topology.link"
        fwd = _link({**base, **over}, where, f"hop{h + 1}", f"r{h}", f"r{h + 1}")
        links += [fwd, _twin(fwd, None, where + ".reverse")]
        written.append(fwd.written())
    resolved = {"kind": "parking_lot", "hops": hops, "hop": written}
    return links, resolved


def _links(topo: Mapping[str, Any]) -> tuple[list[NetLink], dict[str, Any]]:
    tables = topo.get("links")
    if not isinstance(tables, list) or not tables:
        raise SpecError("topology.links", 'required for kind = "links": one [[topology.links]] table per link')
    links: list[NetLink] = []
    written = []
    seen: set[str] = set()
    for k, t in enumerate(tables):
        path = f"topology.links[{k}]"
        t = F.table(t, path)
        F.check_keys(t, path, LINK)
        if "name" not in t:
            raise SpecError(F.join(path, "name"), 'required (e.g. name = "core"; flow paths name links)')
        name = t["name"]
        if not isinstance(name, str) or not F.NAME_RE.fullmatch(name) or name.endswith(REV):
            raise SpecError(F.join(path, "name"), f"expected letters, digits, '.', '_', '+' or '-', not ending in "
                            f"{REV} (the reverse twin's suffix), got {describe(name)}")
        if name in seen:
            raise SpecError(F.join(path, "name"), f"{name!r} names another link too")
        seen.add(name)
        src = t.get("from")
        dst = t.get("to")
        for key, node in (("from", src), ("to", dst)):
            if node is not None and not (isinstance(node, str) and F.NAME_RE.fullmatch(node)):
                raise SpecError(F.join(path, key), f"expected a node name, got {describe(node)}")
        body = {key: v for key, v in t.items() if key not in ("name", "from", "to", "reverse")}
        fwd = _link(body, path, name, src, dst)
        links += [fwd, _twin(fwd, t.get("reverse"), F.join(path, "reverse"))]
        w = {"name": name, **fwd.written()}
        if src is not None:
            w["from"] = src
        if dst is not None:
            w["to"] = dst
        if "reverse" in t:
            w["reverse"] = {"rate": format_rate(links[-1].rate_bps), "buffer": format_size(links[-1].buffer),
                            **links[-1].models.resolved}
        written.append(w)
    return links, {"kind": "links", "links": written}


def link_path(value: Any, path: str, links: list[NetLink]) -> list[int]:
    """A path's link names as indices into ``links``, checked: known links, connected, none twice in a row."""
    names = [link.name for link in links]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise SpecError(path, f'expected a list of link names such as ["{names[0]}"], got {describe(value)}')
    out = []
    for k, v in enumerate(value):
        if v not in names:
            raise SpecError(f"{path}[{k}]", f"no link {v!r}{did_you_mean(v, names) or ' (links: ' + ', '.join(names) + ')'}")
        out.append(names.index(v))
    for k in range(1, len(out)):
        a, b = links[out[k - 1]], links[out[k]]
        if a.dst is not None and b.src is not None and a.dst != b.src:
            raise SpecError(f"{path}[{k}]", f"{b.name} leaves {b.src}, but {a.name} before it ends at {a.dst}: "
                            "the path is not connected")
        if out[k] == out[k - 1]:
            raise SpecError(f"{path}[{k}]", f"{b.name} twice in a row")
    return out


def network(raw: Mapping[str, Any], kind: str, measure_link: str | None) -> Network:
    """Reads a parking lot's or a list of links' ``[topology]`` and every flow group's paths."""
    topo = raw["topology"]
    for key in ("bottleneck", "reverse"):
        if key in topo:
            raise SpecError(f"topology.{key}", f'only for kind = "dumbbell" (this is kind = "{kind}")')
    links, resolved = _parking_lot(topo) if kind == "parking_lot" else _links(topo)
    if "rtt" in topo:
        resolved = {"rtt": format_time(F.positive_time(topo["rtt"], "topology.rtt")), **resolved}
    net = Network(kind, links, resolved)
    groups = raw.get("flows", [])
    for gi, g in enumerate(groups if isinstance(groups, list) else []):
        g = g if isinstance(g, Mapping) else {}
        where = f"flows[{gi}]"
        if "path" in g:
            data = link_path(g["path"], F.join(where, "path"), links)
        elif kind == "parking_lot":
            data = [i for i, link in enumerate(links) if not link.name.endswith(REV)]
        else:
            raise SpecError(F.join(where, "path"), f'required with kind = "links" (e.g. path = ["{links[0].name}"])')
        if "ack_path" in g:
            ack = link_path(g["ack_path"], F.join(where, "ack_path"), links)
        else:
            ack = [twin_index(links, i) for i in reversed(data)]
        if g.get("reverse"):
            raise SpecError(F.join(where, "reverse"), "only in a dumbbell; give the path (and ack_path) instead")
        net.paths.append((data, ack))
    used = {i for data, _ in net.paths for i in data}
    if measure_link is not None:
        names = [link.name for link in links]
        if measure_link not in names:
            raise SpecError("measure.link", f"no link {measure_link!r}{did_you_mean(measure_link, names)}")
        net.measure = names.index(measure_link)
    elif used:
        slowest = min(links[i].rate_bps for i in used)
        net.measure = min(i for i in used if links[i].rate_bps == slowest)
    else:
        net.measure = 0
    twin = twin_index(links, net.measure)
    net.order = [net.measure, twin, *(i for i in range(len(links)) if i not in (net.measure, twin))]
    return net


def twin_index(links: list[NetLink], i: int) -> int:
    """The other direction of link ``i``."""
    name = links[i].name
    other = name[: -len(REV)] if name.endswith(REV) else name + REV
    return next(k for k, link in enumerate(links) if link.name == other)


def unused_links(net: Network) -> list[str]:
    """Names of forward links no flow's data or ACKs and no background source cross (each a warning)."""
    crossed = {i for data, ack in net.paths for i in (*data, *ack)} | net.background_links
    return [link.name for i, link in enumerate(net.links) if i not in crossed and not link.name.endswith(REV)]



def link_tables(resolved: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every forward link's table of a resolved experiment (spec.toml), named; the dumbbell's bottleneck and
    reverse link as ``forward`` and ``reverse``."""
    topo = resolved["topology"]
    kind = topo.get("kind", "dumbbell")
    if kind == "dumbbell":
        return [{"name": "forward", **topo["bottleneck"]}, {"name": "reverse", **topo.get("reverse", {})}]
    if kind == "parking_lot":
        return [{"name": f"hop{h + 1}", **t} for h, t in enumerate(topo["hop"])]
    return [dict(t) for t in topo["links"]]


def bottleneck_table(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved table of the engine's link 0: the dumbbell's bottleneck, or ``[measure] link``
    (its twin's table when the measured link is a reverse twin)."""
    topo = resolved["topology"]
    if topo.get("kind", "dumbbell") == "dumbbell":
        return dict(topo["bottleneck"])
    name = resolved["measure"]["link"]
    base = name.removesuffix(REV)
    table = next(t for t in link_tables(resolved) if t["name"] == base)
    if name.endswith(REV):
        return {"rate": table.get("reverse", table)["rate"], "qdisc": "droptail", "loss": 0.0,
                "delay": table["delay"], "buffer": table.get("reverse", table)["buffer"]}
    return table
