"""Experiment files: reading, overriding, validating and resolving.

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
the field, e.g. ``flows[1].cc: unknown algorithm "cubik" (known: cubic,
newreno, reno)``. Unknown keys are errors, so a typo never falls back to a
default silently.

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
                   loss = 0.0 }        random loss probability of data packets, in [0, 1) (0)
    reverse = { rate, buffer }         the ACK direction (same as the bottleneck)

    [tcp]                  defaults for every flow
    mss = 1448             (1448) payload bytes per packet
    header = 52            (52) header bytes per packet
    init_cwnd = 10         (10) initial window, packets
    rwnd = "1MB"           (unlimited) receive window
    pacing = false         (false)
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
    mss, init_cwnd, rwnd, pacing, recovery   override [tcp] for this group

    [measure]
    interval = "100ms"     ("100ms") trace interval, 1 ms to the duration
    trace = true           (true) record per-interval traces

The reverse link has the bottleneck's propagation delay and no random loss.
A "Xbdp" buffer is ``round(X · rate · rtt / 8 / packet)`` packets (at least 1),
where rtt is ``topology.rtt`` (or the largest flow RTT when it is absent) and
packet is ``tcp.mss + tcp.header`` bytes (1500 by default). The reverse link's
BDP uses its own rate.
"""

from __future__ import annotations

import copy
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import tomli_w

from . import _core
from ._version import __version__
from .units import (
    Size,
    UnitError,
    describe,
    format_bytes,
    format_rate,
    format_size,
    format_time,
    parse_bytes,
    parse_rate,
    parse_size,
    parse_time,
)

__all__ = [
    "Spec",
    "SpecError",
    "apply_overrides",
    "load_spec",
    "parse_override_value",
    "read_toml",
    "resolve",
]


class SpecError(ValueError):
    """A mistake in an experiment: ``path`` names the field, ``message`` says what is wrong.

    ``str(error)`` is ``"<path>: <message>"``, e.g.
    ``topology.bottleneck.rate: expected a rate such as "100Mbps", got "-5Mbps"``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


NS_PER_S = 1_000_000_000
INFINITE_SSTHRESH = 2147483647

TOP_KEYS = ("name", "duration", "seed", "ccarena_version", "topology", "tcp", "flows", "measure")
TOPOLOGY_KEYS = ("rtt", "bottleneck", "reverse")
BOTTLENECK_KEYS = ("rate", "buffer", "qdisc", "delay", "loss")
REVERSE_KEYS = ("rate", "buffer")
TCP_KEYS = ("mss", "header", "init_cwnd", "rwnd", "pacing", "recovery")
FLOW_TCP_KEYS = ("mss", "init_cwnd", "rwnd", "pacing", "recovery")
FLOW_KEYS = ("cc", "count", "params", "start", "stop", "rtt", "app", "size", "rate", *FLOW_TCP_KEYS)
MEASURE_KEYS = ("interval", "trace")

QDISCS = ("droptail",)
APPS = ("bulk", "fixed", "rate")
RECOVERIES = ("prr", "newreno")

DEFAULTS: dict[str, Any] = {
    "seed": 1,
    "qdisc": "droptail",
    "delay": "0s",
    "loss": 0.0,
    "mss": 1448,
    "header": 52,
    "init_cwnd": 10,
    "pacing": False,
    "count": 1,
    "start": "0s",
    "app": "bulk",
    "interval": "100ms",
    "trace": True,
}

MAX_FLOWS = 100_000
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")


@dataclass(frozen=True)
class Spec:
    """A validated experiment.

    ``resolved`` is the experiment with every default filled in (what a run
    stores as ``spec.toml``; loading it again gives the same run), ``engine``
    the configuration handed to the simulator, ``flow_groups[i]`` the index
    of the ``[[flows]]`` table that flow ``i`` came from.
    """

    resolved: dict[str, Any]
    engine: dict[str, Any]
    flow_groups: tuple[int, ...]

    @property
    def name(self) -> str:
        """The experiment's name."""
        return str(self.resolved["name"])

    @property
    def seed(self) -> int:
        """The random seed."""
        return int(self.resolved["seed"])

    @property
    def duration_ns(self) -> int:
        """Length of the run, nanoseconds."""
        return int(self.engine["duration_ns"])

    def to_toml(self) -> str:
        """The resolved experiment as TOML text."""
        return tomli_w.dumps(self.resolved)


# ---------------------------------------------------------------------------
# Reading and overriding


_TOML_POS = re.compile(r"^(?P<msg>.*?)\s*\((?:at line (?P<line>\d+), column (?P<col>\d+)|at end of document)\)$")


def read_toml(path: str | Path) -> dict[str, Any]:
    """Reads an experiment file; a missing file or bad TOML raises :class:`SpecError`."""
    name = str(path)
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(name, "no such file") from None
    except IsADirectoryError:
        raise SpecError(name, "is a directory, not an experiment file") from None
    except OSError as e:
        raise SpecError(name, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(name, f"not UTF-8 text (byte {e.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = _TOML_POS.match(str(e))
        if m is None:
            raise SpecError(name, f"TOML syntax error: {e}") from None
        where = f"at line {m['line']}, column {m['col']}" if m["line"] else "at the end of the file"
        raise SpecError(name, f"TOML syntax error {where}: {m['msg']}") from None


def parse_override_value(text: str) -> Any:
    """Reads the VALUE of ``--set PATH=VALUE``: a TOML value if it is one, else the text.

    ``true`` → ``True``, ``3`` → ``3``, ``0.5`` → ``0.5``, ``"x"`` → ``"x"``,
    ``[1, 2]`` → a list, ``{ beta = 0.5 }`` → a dict, and ``100Mbps`` (not
    TOML) → ``"100Mbps"``.
    """
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


_PATH_TOKEN = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_-]*)(?P<idx>(?:\[\d+\])*)")


def _parse_path(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in path.split("."):
        m = _PATH_TOKEN.fullmatch(piece)
        if m is None:
            raise SpecError(
                path, 'not a field path (expected e.g. "duration", "topology.bottleneck.rate" or "flows[1].cc")'
            )
        parts.append(m["key"])
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m["idx"]))
    return parts


def _path_str(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + p
    return out


def apply_overrides(raw: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Returns a copy of ``raw`` with each ``PATH → value`` of ``overrides`` set.

    Paths are dotted keys with list indices, e.g. ``duration``,
    ``topology.bottleneck.rate``, ``flows[1].cc``, ``flows[0].params.beta``.
    Missing tables on the way are created; list indices must exist. The
    values are used as given (the command line parses them first with
    :func:`parse_override_value`).
    """
    out: dict[str, Any] = copy.deepcopy(dict(raw))
    for path, value in overrides.items():
        parts = _parse_path(path)
        node: Any = out
        for i, part in enumerate(parts[:-1]):
            nxt = parts[i + 1]
            where = _path_str(parts[: i + 1])
            if isinstance(part, int):
                if not isinstance(node, list):
                    raise SpecError(where, "is not a list")
                if part >= len(node):
                    raise SpecError(where, f"no such entry (the list has {len(node)})")
                node = node[part]
                continue
            if not isinstance(node, dict):
                raise SpecError(_path_str(parts[:i]), "is not a table")
            if part not in node:
                if isinstance(nxt, int):
                    raise SpecError(where, f"no such entry (there is no {part} list)")
                node[part] = {}
            node = node[part]
        last = parts[-1]
        if isinstance(last, int):
            if not isinstance(node, list):
                raise SpecError(_path_str(parts[:-1]), "is not a list")
            if last >= len(node):
                raise SpecError(_path_str(parts), f"no such entry (the list has {len(node)})")
            node[last] = copy.deepcopy(value)
        else:
            if not isinstance(node, dict):
                raise SpecError(_path_str(parts[:-1]), "is not a table")
            node[last] = copy.deepcopy(value)
    return out


# ---------------------------------------------------------------------------
# Field checks


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _table(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SpecError(path, f"expected a table, got {describe(value)}")
    return value


def _check_keys(table: Mapping[str, Any], path: str, known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            raise SpecError(_join(path, key), f"unknown key (known: {', '.join(sorted(known))})")


def _unit(parse: Any, value: Any, path: str) -> Any:
    try:
        return parse(value)
    except UnitError as e:
        raise SpecError(path, str(e)) from None


def _time(value: Any, path: str) -> int:
    ns: int = _unit(parse_time, value, path)
    return ns


def _positive_time(value: Any, path: str) -> int:
    ns = _time(value, path)
    if ns <= 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return ns


def _rate(value: Any, path: str) -> int:
    bps: int = _unit(parse_rate, value, path)
    return bps


def _bytes(value: Any, path: str) -> int:
    n: int = _unit(parse_bytes, value, path)
    if n <= 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return n


def _size(value: Any, path: str) -> Size:
    s: Size = _unit(parse_size, value, path)
    if s.value == 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return s


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(path, f"expected an integer in [{lo}, {hi}], got {describe(value)}")
    if not lo <= value <= hi:
        raise SpecError(path, f"expected an integer in [{lo}, {hi}], got {value}")
    return value


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise SpecError(path, f"expected true or false, got {describe(value)}")
    return value


def _choice(value: Any, path: str, choices: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str):
        raise SpecError(path, f"expected one of {', '.join(choices)}, got {describe(value)}")
    if value not in choices:
        raise SpecError(path, f'unknown {what} "{value}" (known: {", ".join(choices)})')
    return value


def _sanitize_name(stem: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._+-]+", "-", stem).strip("-.")[:100]
    return cleaned or "experiment"


# ---------------------------------------------------------------------------
# Resolution


@dataclass
class _Link:
    rate_bps: int
    buffer: Size


def _link(table: dict[str, Any], path: str) -> _Link:
    if "rate" not in table:
        raise SpecError(_join(path, "rate"), 'required (e.g. rate = "100Mbps")')
    rate = _rate(table["rate"], _join(path, "rate"))
    if "buffer" not in table:
        raise SpecError(_join(path, "buffer"), 'required (e.g. buffer = "1bdp", "100pkts" or "64KB")')
    buffer = _size(table["buffer"], _join(path, "buffer"))
    return _Link(rate, buffer)


def _buffer_limit(link: _Link, path: str, rtt_ns: int, packet_bytes: int, max_packet: int) -> tuple[str, int]:
    """The engine's queue limit: ("buffer_pkts", n) or ("buffer_bytes", n)."""
    b = link.buffer
    if b.kind == "pkts":
        assert isinstance(b.value, int)
        return "buffer_pkts", b.value
    if b.kind == "bytes":
        assert isinstance(b.value, int)
        if b.value < max_packet:
            raise SpecError(path, f"must hold at least one packet ({max_packet} bytes), got {format_bytes(b.value)}")
        return "buffer_bytes", b.value
    pkts = Fraction(b.value) * link.rate_bps * rtt_ns / (8 * NS_PER_S * packet_bytes)
    return "buffer_pkts", max(1, math.floor(pkts + Fraction(1, 2)))


def _params(value: Any, path: str) -> dict[str, Any]:
    table = _table(value, path)
    for k, v in table.items():
        p = _join(path, k)
        if isinstance(v, (bool, float, str)):
            continue
        if isinstance(v, int):
            if not -(2**63) <= v < 2**63:
                raise SpecError(p, f"integer out of range, got {v}")
            continue
        raise SpecError(p, f"expected a boolean, number or string, got {describe(v)}")
    return table


def _resolve_cc(cc: Any, params: dict[str, Any], path: str) -> dict[str, Any]:
    if not isinstance(cc, str):
        raise SpecError(_join(path, "cc"), f'expected an algorithm name such as "cubic", got {describe(cc)}')
    try:
        return dict(_core.cc_resolve(cc, params))
    except ValueError as e:
        param, message = e.args if len(e.args) == 2 else (None, str(e))
        where = _join(path, "cc") if param is None else _join(_join(path, "params"), str(param))
        raise SpecError(where, str(message)) from None


def resolve(raw: Mapping[str, Any], *, default_name: str = "experiment") -> Spec:
    """Validates an experiment (a parsed TOML document) and resolves it.

    ``default_name`` is used when the experiment has no ``name`` (the file
    stem when loading a file). Raises :class:`SpecError` on the first mistake.
    """
    raw = _table(dict(raw), "file")
    _check_keys(raw, "", TOP_KEYS)

    # Top level.
    name = raw.get("name", _sanitize_name(default_name))
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise SpecError(
            "name",
            "expected letters, digits, '.', '_', '+' or '-' (up to 100; it names the output folder), "
            f"got {describe(name)}",
        )
    if "duration" not in raw:
        raise SpecError("duration", 'required (e.g. duration = "60s")')
    duration_ns = _positive_time(raw["duration"], "duration")
    seed = _int(raw.get("seed", DEFAULTS["seed"]), "seed", 0, 2**63 - 1)
    if "ccarena_version" in raw and not isinstance(raw["ccarena_version"], str):
        raise SpecError("ccarena_version", f"expected a version string, got {describe(raw['ccarena_version'])}")

    # Topology.
    if "topology" not in raw:
        raise SpecError("topology", 'required (at least topology.bottleneck = { rate = "100Mbps", buffer = "1bdp" })')
    topo = _table(raw["topology"], "topology")
    _check_keys(topo, "topology", TOPOLOGY_KEYS)
    topo_rtt_ns = _positive_time(topo["rtt"], "topology.rtt") if "rtt" in topo else None
    if "bottleneck" not in topo:
        raise SpecError("topology.bottleneck", 'required (e.g. bottleneck = { rate = "100Mbps", buffer = "1bdp" })')
    bn_table = _table(topo["bottleneck"], "topology.bottleneck")
    _check_keys(bn_table, "topology.bottleneck", BOTTLENECK_KEYS)
    bottleneck = _link(bn_table, "topology.bottleneck")
    qdisc = _choice(bn_table.get("qdisc", DEFAULTS["qdisc"]), "topology.bottleneck.qdisc", QDISCS, "queue discipline")
    bn_delay_ns = _time(bn_table.get("delay", DEFAULTS["delay"]), "topology.bottleneck.delay")
    loss_v = bn_table.get("loss", DEFAULTS["loss"])
    if isinstance(loss_v, bool) or not isinstance(loss_v, (int, float)) or not 0.0 <= loss_v < 1.0:
        raise SpecError("topology.bottleneck.loss", f"expected a probability in [0, 1), got {describe(loss_v)}")
    loss = float(loss_v)
    if "reverse" in topo:
        rev_table = _table(topo["reverse"], "topology.reverse")
        _check_keys(rev_table, "topology.reverse", REVERSE_KEYS)
        reverse = _Link(
            _rate(rev_table["rate"], "topology.reverse.rate") if "rate" in rev_table else bottleneck.rate_bps,
            _size(rev_table["buffer"], "topology.reverse.buffer") if "buffer" in rev_table else bottleneck.buffer,
        )
    else:
        reverse = _Link(bottleneck.rate_bps, bottleneck.buffer)

    # TCP defaults.
    tcp = _table(raw.get("tcp", {}), "tcp")
    _check_keys(tcp, "tcp", TCP_KEYS)
    header = _int(tcp.get("header", DEFAULTS["header"]), "tcp.header", 0, 1000)
    tcp_mss = _int(tcp.get("mss", DEFAULTS["mss"]), "tcp.mss", 1, 65535 - header)
    tcp_icw = _int(tcp.get("init_cwnd", DEFAULTS["init_cwnd"]), "tcp.init_cwnd", 1, 1_000_000)
    tcp_rwnd = _bytes(tcp["rwnd"], "tcp.rwnd") if "rwnd" in tcp else None
    if tcp_rwnd is not None and tcp_rwnd < tcp_mss:
        raise SpecError("tcp.rwnd", f"must be at least one MSS ({tcp_mss} bytes), got {describe(tcp['rwnd'])}")
    tcp_pacing = _bool(tcp.get("pacing", DEFAULTS["pacing"]), "tcp.pacing")
    tcp_recovery = _choice(tcp["recovery"], "tcp.recovery", RECOVERIES, "recovery") if "recovery" in tcp else None

    # Flows.
    if "flows" not in raw:
        raise SpecError("flows", 'at least one flow group is required (e.g. [[flows]] cc = "cubic")')
    groups = raw["flows"]
    if not isinstance(groups, list):
        raise SpecError("flows", f"expected a list of tables ([[flows]]), got {describe(groups)}")
    if not groups:
        raise SpecError("flows", "at least one flow group is required")
    recoveries = {a["name"]: a["default_recovery"] for a in _core.cc_algorithms()}

    resolved_flows: list[dict[str, Any]] = []
    engine_flows: list[dict[str, Any]] = []
    flow_groups: list[int] = []
    group_rtts: list[int] = []
    max_packet = tcp_mss + header
    for gi, g in enumerate(groups):
        path = f"flows[{gi}]"
        g = _table(g, path)
        _check_keys(g, path, FLOW_KEYS)
        if "cc" not in g:
            raise SpecError(_join(path, "cc"), "required (see `ccarena list cc` for the algorithms)")
        params = _params(g.get("params", {}), _join(path, "params"))
        cc_params = _resolve_cc(g["cc"], params, path)
        cc: str = g["cc"]
        count = _int(g.get("count", DEFAULTS["count"]), _join(path, "count"), 1, MAX_FLOWS)
        start_ns = _time(g.get("start", DEFAULTS["start"]), _join(path, "start"))
        if start_ns >= duration_ns:
            raise SpecError(
                _join(path, "start"),
                f"must be before the end of the run (duration = {format_time(duration_ns)}), "
                f"got {describe(g['start'])}",
            )
        stop_ns: int | None = None
        if "stop" in g:
            stop_ns = _time(g["stop"], _join(path, "stop"))
            if stop_ns <= start_ns:
                raise SpecError(
                    _join(path, "stop"), f"must be after start ({format_time(start_ns)}), got {describe(g['stop'])}"
                )
            if stop_ns > duration_ns:
                raise SpecError(
                    _join(path, "stop"),
                    f"must be at most the duration ({format_time(duration_ns)}), got {describe(g['stop'])}",
                )
        if "rtt" in g:
            rtt_ns = _positive_time(g["rtt"], _join(path, "rtt"))
        elif topo_rtt_ns is not None:
            rtt_ns = topo_rtt_ns
        else:
            raise SpecError("topology.rtt", f"required unless every flow group sets rtt ({path} does not)")
        app = _choice(g.get("app", DEFAULTS["app"]), _join(path, "app"), APPS, "app")
        size: int | None = None
        app_rate: int | None = None
        if app == "fixed":
            if "size" not in g:
                raise SpecError(_join(path, "size"), 'required with app = "fixed" (e.g. size = "10MB")')
            size = _bytes(g["size"], _join(path, "size"))
        elif "size" in g:
            raise SpecError(_join(path, "size"), f'only allowed with app = "fixed" (this group has app = "{app}")')
        if app == "rate":
            if "rate" not in g:
                raise SpecError(_join(path, "rate"), 'required with app = "rate" (e.g. rate = "735kbps")')
            app_rate = _rate(g["rate"], _join(path, "rate"))
        elif "rate" in g:
            raise SpecError(_join(path, "rate"), f'only allowed with app = "rate" (this group has app = "{app}")')
        mss = _int(g["mss"], _join(path, "mss"), 1, 65535 - header) if "mss" in g else tcp_mss
        icw = _int(g["init_cwnd"], _join(path, "init_cwnd"), 1, 1_000_000) if "init_cwnd" in g else tcp_icw
        rwnd = _bytes(g["rwnd"], _join(path, "rwnd")) if "rwnd" in g else tcp_rwnd
        if rwnd is not None and rwnd < mss:
            where = _join(path, "rwnd") if "rwnd" in g else "tcp.rwnd"
            raise SpecError(where, f"must be at least one MSS ({mss} bytes), got {format_bytes(rwnd)}")
        pacing = _bool(g["pacing"], _join(path, "pacing")) if "pacing" in g else tcp_pacing
        if "recovery" in g:
            recovery = _choice(g["recovery"], _join(path, "recovery"), RECOVERIES, "recovery")
        else:
            recovery = tcp_recovery if tcp_recovery is not None else recoveries[cc]
        max_packet = max(max_packet, mss + header)
        group_rtts.append(rtt_ns)

        rf: dict[str, Any] = {"cc": cc, "count": count}
        if cc_params:
            rf["params"] = cc_params
        rf["start"] = format_time(start_ns)
        if stop_ns is not None:
            rf["stop"] = format_time(stop_ns)
        rf["rtt"] = format_time(rtt_ns)
        rf["app"] = app
        if size is not None:
            rf["size"] = format_bytes(size)
        if app_rate is not None:
            rf["rate"] = format_rate(app_rate)
        rf["mss"] = mss
        rf["init_cwnd"] = icw
        if rwnd is not None:
            rf["rwnd"] = format_bytes(rwnd)
        rf["pacing"] = pacing
        rf["recovery"] = recovery
        resolved_flows.append(rf)

        ef: dict[str, Any] = {
            "cc": cc,
            "params": cc_params,
            "start_ns": start_ns,
            "stop_ns": stop_ns,
            "rtt_ns": rtt_ns,
            "mss": mss,
            "header_bytes": header,
            "init_cwnd": icw,
            "rwnd_bytes": rwnd,
            "pacing": pacing,
            "recovery": recovery,
            "app": app,
        }
        if size is not None:
            ef["app_bytes"] = size
        if app_rate is not None:
            ef["app_rate_bps"] = app_rate
        if len(engine_flows) + count > MAX_FLOWS:
            raise SpecError(_join(path, "count"), f"too many flows in total (at most {MAX_FLOWS})")
        for _ in range(count):
            engine_flows.append(copy.deepcopy(ef))
            flow_groups.append(gi)

    # Cross-checks that need the flows.
    min_rtt = min(group_rtts)
    if 2 * bn_delay_ns > min_rtt:
        raise SpecError(
            "topology.bottleneck.delay",
            f"must be at most half the smallest flow RTT ({format_time(min_rtt)}), got {format_time(bn_delay_ns)}",
        )
    bdp_rtt_ns = topo_rtt_ns if topo_rtt_ns is not None else max(group_rtts)
    packet_bytes = tcp_mss + header
    rev_path = "topology.reverse.buffer" if "buffer" in topo.get("reverse", {}) else "topology.bottleneck.buffer"
    bn_limit = _buffer_limit(bottleneck, "topology.bottleneck.buffer", bdp_rtt_ns, packet_bytes, max_packet)
    rev_limit = _buffer_limit(reverse, rev_path, bdp_rtt_ns, packet_bytes, max_packet)

    # Measurement.
    measure = _table(raw.get("measure", {}), "measure")
    _check_keys(measure, "measure", MEASURE_KEYS)
    interval_ns = _time(measure.get("interval", DEFAULTS["interval"]), "measure.interval")
    if interval_ns < 1_000_000:
        raise SpecError("measure.interval", f"must be at least 1ms, got {describe(measure.get('interval'))}")
    if interval_ns > duration_ns:
        raise SpecError(
            "measure.interval",
            f"must be at most the duration ({format_time(duration_ns)}), got {describe(measure.get('interval'))}",
        )
    trace = _bool(measure.get("trace", DEFAULTS["trace"]), "measure.trace")

    # The resolved document, in a fixed key order.
    r_topology: dict[str, Any] = {}
    if topo_rtt_ns is not None:
        r_topology["rtt"] = format_time(topo_rtt_ns)
    r_topology["bottleneck"] = {
        "rate": format_rate(bottleneck.rate_bps),
        "buffer": format_size(bottleneck.buffer),
        "qdisc": qdisc,
        "delay": format_time(bn_delay_ns),
        "loss": loss,
    }
    r_topology["reverse"] = {"rate": format_rate(reverse.rate_bps), "buffer": format_size(reverse.buffer)}
    r_tcp: dict[str, Any] = {"mss": tcp_mss, "header": header, "init_cwnd": tcp_icw}
    if tcp_rwnd is not None:
        r_tcp["rwnd"] = format_bytes(tcp_rwnd)
    r_tcp["pacing"] = tcp_pacing
    if tcp_recovery is not None:
        r_tcp["recovery"] = tcp_recovery
    resolved: dict[str, Any] = {
        "name": name,
        "duration": format_time(duration_ns),
        "seed": seed,
        "ccarena_version": __version__,
        "topology": r_topology,
        "tcp": r_tcp,
        "measure": {"interval": format_time(interval_ns), "trace": trace},
        "flows": resolved_flows,
    }

    engine: dict[str, Any] = {
        "seed": seed,
        "duration_ns": duration_ns,
        "interval_ns": interval_ns,
        "trace": trace,
        "bottleneck": {
            "rate_bps": bottleneck.rate_bps,
            "delay_ns": bn_delay_ns,
            bn_limit[0]: bn_limit[1],
            "loss": loss,
        },
        "reverse": {
            "rate_bps": reverse.rate_bps,
            "delay_ns": bn_delay_ns,
            rev_limit[0]: rev_limit[1],
            "loss": 0.0,
        },
        "flows": engine_flows,
    }
    return Spec(resolved=resolved, engine=engine, flow_groups=tuple(flow_groups))


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
    if isinstance(source, Mapping):
        raw = copy.deepcopy(dict(source))
        default_name = "experiment"
    else:
        raw = read_toml(source)
        default_name = Path(source).stem
    raw = apply_overrides(raw, overrides)
    if set:
        raw = apply_overrides(raw, set)
    if seed is not None:
        raw["seed"] = seed
    return resolve(raw, default_name=default_name)
