"""Link models: how a link really behaves, on any link table (the dumbbell's bottleneck and reverse
link, a parking lot's hops, ``[[topology.links]]``).

- ``rate`` as a schedule, ``[["0s", "100Mbps"], ["30s", "20Mbps"]]`` (rate 0 is an outage during
  which packets wait in the buffer), served as a fluid: a change acts on the bits not yet sent.
- ``trace = "file"``: capacity from a Mahimahi trace (one line per delivery opportunity of one MTU,
  a time in ms; the file loops on its last time); ``trace_mode`` ``"mahimahi"`` (mm-link's byte
  accounting: 1504 bytes per opportunity, 4 more per packet, millisecond clock; the default) or
  ``"ideal"`` (1500 IP bytes, exact times); ``trace_once = true`` stops after one pass. A bare name
  is one of the traces shipped with ccarena (``ccarena list traces``).
- ``delay`` as a schedule, ``[["0s", "10ms"], ["20s", "40ms"]]``; packets keep their order.
- ``jitter = { dist = "uniform", max = "5ms" }`` (or ``"exponential"`` with ``mean``, ``"normal"``
  with ``mean`` and ``sd``): extra delay per packet after the link, order-preserving unless
  ``reorder = true``.
- ``ack_aggregation = { every = "20ms" }`` (optionally ``phase``) or ``{ count = 16, timeout = "10ms" }``:
  arrivals held and released into the queue in batches.
- ``policer = { rate = "10Mbps", burst = "15KB" }``: what exceeds the token bucket is dropped;
  ``shaper`` (same keys): the queue's head waits for its tokens.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..traces import mean_rate_bps
from . import fields as F
from .engine import EngineConfig
from .errors import SpecError
from .units import UnitError, describe, format_bytes, format_rate, format_time, parse_rate

__all__ = [
    "MODEL_KEYS",
    "TRACE_DIR",
    "LinkModels",
    "link_delay",
    "link_models",
    "link_rate",
    "read_trace",
    "shipped_traces",
    "trace_notes",
]

MODEL_KEYS = ("trace", "trace_mode", "trace_once", "jitter", "ack_aggregation", "policer", "shaper")
"""Keys of a link table that describe its models (``rate`` and ``delay`` may be schedules too)."""

TRACE_DIR = Path(__file__).resolve().parents[1] / "traces"
"""Traces shipped with ccarena, each ``<name>.trace`` with a ``<name>.md`` saying how it was made."""

TRACE_MODES = ("mahimahi", "ideal")
JITTER_DISTS = {"uniform": ("max",), "exponential": ("mean",), "normal": ("mean", "sd")}


@dataclass
class LinkModels:
    """A link's models: the engine's ``model`` table (None for an ideal link) and what spec.toml writes."""

    engine: dict[str, Any] | None = None
    resolved: dict[str, Any] = field(default_factory=dict)


def shipped_traces() -> dict[str, Path]:
    """The traces shipped with ccarena, by name."""
    return {p.stem: p for p in sorted(TRACE_DIR.glob("*.trace"))}


def read_trace(path: Path, where: str) -> list[int]:
    """A Mahimahi trace's opportunity times (ms), checked as mm-link checks them."""
    return list(_trace(path, where)[0])


def _trace(path: Path, where: str) -> tuple[tuple[int, ...], str]:
    """A trace's times and the SHA-256 of its file, read once per version of the file (a link's
    rate, its models and every point of a campaign ask for the same trace)."""
    try:
        st = path.stat()
    except OSError as e:
        raise SpecError(where, f"cannot read trace {str(path)!r}: {e.strerror or e}") from None
    return _parse_trace(str(path.resolve()), st.st_mtime_ns, st.st_size, where)


@functools.lru_cache(maxsize=16)
def _parse_trace(path_str: str, _mtime_ns: int, _size: int, where: str) -> tuple[tuple[int, ...], str]:
    path = Path(path_str)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SpecError(where, f"cannot read trace {str(path)!r}: {e.strerror or e}") from None
    text = data.decode(errors="replace")
    times: list[int] = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s.isdigit():
            raise SpecError(where, f"{path.name} line {n}: expected a time in whole ms, got {s!r}")
        t = int(s)
        if times and t < times[-1]:
            raise SpecError(where, f"{path.name} line {n}: times must not decrease ({t} after {times[-1]})")
        times.append(t)
    if not times:
        raise SpecError(where, f"{path.name}: expected at least one line")
    if times[-1] == 0:
        raise SpecError(where, f"{path.name}: the last time is the period and must be above 0 ms")
    return tuple(times), hashlib.sha256(data).hexdigest()


def _trace_path(value: Any, where: str) -> Path:
    if not isinstance(value, str) or not value:
        raise SpecError(where, f"expected a trace file or the name of a shipped trace, got {describe(value)}")
    shipped = shipped_traces()
    p = Path(value)
    if p.exists():
        return p
    if value in shipped:
        return shipped[value]
    known = ", ".join(shipped) or "none"
    raise SpecError(where, f"no trace file {value!r} (shipped traces: {known})")


def link_rate(table: Mapping[str, Any], path: str) -> tuple[int, list[tuple[int, int]] | None]:
    """The link's nominal rate (bit/s) and its schedule, if ``rate`` is one; with a trace and no rate,
    the trace's mean rate."""
    where = F.join(path, "rate")
    value = table.get("rate")
    if value is None:
        if "trace" in table:
            times = _trace(_trace_path(table["trace"], F.join(path, "trace")), F.join(path, "trace"))[0]
            return max(1, round(mean_rate_bps(times))), None
        raise SpecError(where, 'required (e.g. rate = "100Mbps")')
    if not isinstance(value, list):
        return F.rate(value, where), None
    steps = _schedule(value, where, F.rate, "rate")
    if all(r == 0 for _, r in steps):
        raise SpecError(where, "expected a rate above 0 somewhere in the schedule")
    nominal = next(r for _, r in steps if r > 0)
    return nominal, steps


def link_delay(table: Mapping[str, Any], path: str, default: Any) -> tuple[int, list[tuple[int, int]]]:
    """The link's propagation delay (ns) and the changes after it, if ``delay`` is a schedule."""
    where = F.join(path, "delay")
    value = table.get("delay", default)
    if not isinstance(value, list):
        return F.time(value, where), []
    steps = _schedule(value, where, F.time, "delay")
    return steps[0][1], steps[1:]


def _schedule(value: list[Any], where: str, parse: Any, what: str) -> list[tuple[int, int]]:
    example = '[["0s", "100Mbps"], ["30s", "20Mbps"]]' if what == "rate" else '[["0s", "10ms"], ["20s", "40ms"]]'
    if not value:
        raise SpecError(where, f"expected a {what} or a schedule such as {example}, got an empty list")
    steps: list[tuple[int, int]] = []
    for k, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 2):
            raise SpecError(f"{where}[{k}]", f"expected [time, {what}] such as {example}, got {describe(item)}")
        t = F.time(item[0], f"{where}[{k}][0]")
        if k == 0 and t != 0:
            raise SpecError(f"{where}[0][0]", f"the schedule starts at 0s, got {describe(item[0])}")
        if steps and t <= steps[-1][0]:
            raise SpecError(f"{where}[{k}][0]", f"times must increase ({format_time(t)} after {format_time(steps[-1][0])})")
        v = _rate_or_zero(item[1], f"{where}[{k}][1]") if what == "rate" else parse(item[1], f"{where}[{k}][1]")
        steps.append((t, v))
    return steps


def _rate_or_zero(value: Any, where: str) -> int:
    """A rate, or 0 (an outage: ``0``, ``"0bps"``, ``"0Mbps"``)."""
    if value == 0 or (isinstance(value, str) and re.fullmatch(r"\s*0+(\.0*)?\s*[A-Za-z/]*\s*", value)):
        return 0
    try:
        n = parse_rate(value)
    except UnitError as e:
        raise SpecError(where, str(e)) from None
    return 0 if n == 0 else F.rate(value, where)


def link_models(table: Mapping[str, Any], path: str, delay_ns: int, delay_steps: list[tuple[int, int]],
                rate_steps: list[tuple[int, int]] | None) -> LinkModels:  # fmt: skip
    """A link table's models (its ``rate`` and ``delay`` already read)."""
    engine: dict[str, Any] = {}
    resolved: dict[str, Any] = {}
    if rate_steps is not None:
        engine["schedule"] = rate_steps
        resolved["rate"] = [[format_time(t), format_rate(r) if r else "0bps"] for t, r in rate_steps]
    if delay_steps:
        resolved["delay"] = [[format_time(0), format_time(delay_ns)]] + [[format_time(t), format_time(d)] for t, d in delay_steps]
    for key in ("trace_mode", "trace_once"):
        if key in table and "trace" not in table:
            raise SpecError(F.join(path, key), "only with trace")
    if "trace" in table:
        if rate_steps is not None:
            raise SpecError(F.join(path, "trace"), "a link has a rate schedule or a trace, not both")
        where = F.join(path, "trace")
        p = _trace_path(table["trace"], where)
        times, digest = _trace(p, where)
        mode = F.choice(table.get("trace_mode", "mahimahi"), F.join(path, "trace_mode"), TRACE_MODES, "trace mode")
        once = F.boolean(table.get("trace_once", False), F.join(path, "trace_once"))
        engine["trace"] = {"opportunities_ms": list(times), "mode": mode, "once": once}
        shipped = shipped_traces()
        name = p.stem if shipped.get(p.stem) == p else str(p.resolve())
        resolved.update({"trace": name, "trace_sha256": digest, "trace_mode": mode})
        if once:
            resolved["trace_once"] = True
    jitter: dict[str, Any] = {}
    if "jitter" in table:
        where = F.join(path, "jitter")
        j = F.table(table["jitter"], where)
        dist = F.choice(j.get("dist", "uniform"), F.join(where, "dist"), tuple(JITTER_DISTS), "jitter distribution")
        F.check_keys(j, where, ("dist", "reorder", *JITTER_DISTS[dist]))
        w: dict[str, Any] = {"dist": dist}
        jitter["dist"] = dist
        for key in JITTER_DISTS[dist]:
            if key not in j:
                raise SpecError(F.join(where, key), f'required with dist = "{dist}" (e.g. {key} = "2ms")')
            ns = F.time(j[key], F.join(where, key))
            if key != "sd" and ns <= 0:
                raise SpecError(F.join(where, key), f"must be greater than 0, got {describe(j[key])}")
            jitter[f"{key}_ns"] = ns
            w[key] = format_time(ns)
        if F.boolean(j.get("reorder", False), F.join(where, "reorder")):
            jitter["reorder"] = True
            w["reorder"] = True
        resolved["jitter"] = w
    if delay_steps:
        jitter["delay_steps"] = delay_steps
    if jitter:
        engine["jitter"] = jitter
    if "ack_aggregation" in table:
        where = F.join(path, "ack_aggregation")
        a = F.table(table["ack_aggregation"], where)
        if "every" in a:
            F.check_keys(a, where, ("every", "phase"))
            every = F.positive_time(a["every"], F.join(where, "every"))
            phase = F.time(a.get("phase", "0s"), F.join(where, "phase"))
            if phase >= every:
                raise SpecError(F.join(where, "phase"), f"must be below every ({format_time(every)}), got {describe(a['phase'])}")
            engine["batch"] = {"kind": "periodic", "every_ns": every, "phase_ns": phase}
            resolved["ack_aggregation"] = {"every": format_time(every), "phase": format_time(phase)}
        elif "count" in a:
            F.check_keys(a, where, ("count", "timeout"))
            n = F.integer(a["count"], F.join(where, "count"), 1, 1_000_000)
            if "timeout" not in a:
                raise SpecError(F.join(where, "timeout"), 'required with count (e.g. timeout = "10ms")')
            timeout = F.positive_time(a["timeout"], F.join(where, "timeout"))
            engine["batch"] = {"kind": "count", "n": n, "timeout_ns": timeout}
            resolved["ack_aggregation"] = {"count": n, "timeout": format_time(timeout)}
        else:
            raise SpecError(where, 'expected every (e.g. { every = "20ms" }) or count and timeout '
                            '(e.g. { count = 16, timeout = "10ms" })')
    for key in ("policer", "shaper"):
        if key not in table:
            continue
        where = F.join(path, key)
        b = F.table(table[key], where)
        F.check_keys(b, where, ("rate", "burst"))
        for k in ("rate", "burst"):
            if k not in b:
                raise SpecError(F.join(where, k), 'required (e.g. { rate = "10Mbps", burst = "15KB" })')
        rate = F.rate(b["rate"], F.join(where, "rate"))
        burst = F.byte_count(b["burst"], F.join(where, "burst"))
        engine[key] = {"rate_bps": rate, "burst_bytes": burst}
        resolved[key] = {"rate": format_rate(rate), "burst": format_bytes(burst)}
    return LinkModels(engine or None, resolved)


def trace_notes(engine: EngineConfig) -> list[str]:
    """One line per link driven by a trace: its name, length and own rate (printed before a run)."""
    net = engine.network
    links = [engine.bottleneck, engine.reverse, *(net.links if net is not None else ())]
    names = list((net.names if net is not None else None) or ["bottleneck", "reverse"])
    out = []
    for name, link in zip(names, links, strict=False):
        tr = link.model.trace if link.model is not None else None
        if tr is None:
            continue
        times = tr.opportunities_ms
        rate = mean_rate_bps(times)
        once = ", once" if tr.once else f", looping every {format_time(times[-1] * 1_000_000)}"
        out.append(f"{name}: trace of {len(times)} opportunities{once}: {rate / 1e6:.3f} Mbit/s ({tr.mode} accounting)")
    return out

