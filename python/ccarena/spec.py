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

TOP_KEYS = ("name", "duration", "seed", "ccarena_version", "topology", "tcp", "flows", "background", "measure")
TOPOLOGY_KEYS = ("rtt", "bottleneck", "reverse")
BOTTLENECK_KEYS = ("rate", "buffer", "qdisc", "delay", "loss")
REVERSE_KEYS = ("rate", "buffer", "loss")
TCP_KEYS = ("mss", "header", "init_cwnd", "rwnd", "pacing", "recovery")
FLOW_TCP_KEYS = ("mss", "init_cwnd", "rwnd", "pacing", "recovery")
FLOW_KEYS = ("cc", "count", "params", "start", "stop", "rtt", "app", "size", "rate", "reverse", "every", *FLOW_TCP_KEYS)
MEASURE_KEYS = ("interval", "trace")

BACKGROUND_KINDS = ("web", "onoff", "udp")
_SOURCE_TCP_KEYS = ("name", "cc", "params", "rtt", "direction", "start", "stop", "mss", "init_cwnd", "pacing")
SURGE_SHORTCUTS = ("size_body", "size_mu", "size_sigma", "size_tail_min", "size_tail_shape")
WEB_KEYS = ("sessions", "think", "rate", "load", "sizes", *SURGE_SHORTCUTS, "bidirectional", *_SOURCE_TCP_KEYS)
ONOFF_KEYS = ("sessions", "size", "off", *_SOURCE_TCP_KEYS)
UDP_KEYS = ("name", "rate", "load", "pattern", "packet", "direction", "start", "stop")
SIZE_DISTS: dict[str, tuple[str, ...]] = {
    "surge": ("dist", "body", "mu", "sigma", "tail_min", "tail_shape"),
    "pareto": ("dist", "mean", "min", "shape"),
    "lognormal": ("dist", "mu", "sigma"),
    "fixed": ("dist", "size"),
    "exponential": ("dist", "mean"),
}
RTT_DISTS: dict[str, tuple[str, ...]] = {
    "fixed": ("dist", "rtt"),
    "exponential": ("dist", "mean_one_way", "min"),
    "uniform": ("dist", "lo", "hi"),
}
LOSS_MODELS: dict[str, tuple[str, ...]] = {
    "bernoulli": ("model", "p"),
    "gilbert": ("model", "p_gb", "p_bg", "loss_good", "loss_bad"),
    "periodic": ("model", "p"),
}
DIRECTIONS = ("forward", "reverse", "both")
UDP_PATTERNS = ("cbr", "poisson")

SURGE_DEFAULTS: dict[str, Any] = {"body": 0.93, "mu": 9.357, "sigma": 1.328, "tail_min": "133KB", "tail_shape": 1.1}
"""SURGE file sizes as in Rhee's 2007 rebuttal (reference/traffic.md §2): a
lognormal body of ln bytes with probability ``body``, else a Pareto tail."""
ONOFF_SIZE_DEFAULT: dict[str, Any] = {"dist": "pareto", "mean": "100pkts", "shape": 1.2}
WEB_THINK_DEFAULT = "1s"
ONOFF_OFF_DEFAULT = "10s"
BACKGROUND_CC_DEFAULT = "reno"
UDP_PACKET_DEFAULT = "1500B"
MAX_TRANSFER_BYTES = 10**12
"""The engine caps every drawn transfer size at 1 TB (crates/sim traffic.rs)."""

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


# ---------------------------------------------------------------------------
# Background traffic, loss models and distributions


def _number(value: Any, path: str, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite number in [lo, hi] (open ends as asked); integers are accepted and returned as floats."""
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    want = f"a number in {left}{lo:g}, {hi:g}{right}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(path, f"expected {want}, got {describe(value)}")
    x = float(value)
    if not math.isfinite(x) or x < lo or x > hi or (lo_open and x == lo) or (hi_open and x == hi):
        raise SpecError(path, f"expected {want}, got {describe(value)}")
    return x


def _loss(value: Any, path: str) -> tuple[float | dict[str, Any], float, dict[str, Any] | None]:
    """A link's loss: a Bernoulli probability, ``{ model = "gilbert", ... }`` or ``{ model = "periodic", p }``.

    Returns (resolved value, engine ``loss``, engine ``loss_model`` or None).
    """
    if not isinstance(value, dict):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
            raise SpecError(
                path,
                f"expected a probability in [0, 1), got {describe(value)} "
                '(or a table: { model = "gilbert", p_gb = ..., p_bg = ... } for bursty loss, '
                '{ model = "periodic", p = ... } for deterministic loss)',
            )
        return float(value), float(value), None
    if "model" not in value:
        raise SpecError(_join(path, "model"), f"required ({', '.join(LOSS_MODELS)})")
    model = _choice(value["model"], _join(path, "model"), tuple(LOSS_MODELS), "loss model")
    _check_keys(value, path, LOSS_MODELS[model])
    if model == "bernoulli":
        if "p" not in value:
            raise SpecError(_join(path, "p"), "required (the loss probability, e.g. p = 0.001)")
        p = _number(value["p"], _join(path, "p"), 0.0, 1.0, hi_open=True)
        return p, p, None
    if model == "periodic":
        if "p" not in value:
            raise SpecError(_join(path, "p"), "required (the loss rate: one data packet in every round(1/p) is lost)")
        p = _number(value["p"], _join(path, "p"), 0.0, 1.0, lo_open=True, hi_open=True)
        period = max(1, round(1.0 / p))
        return {"model": "periodic", "p": p}, 0.0, {"kind": "periodic", "period": period}
    for key in ("p_gb", "p_bg"):
        if key not in value:
            raise SpecError(_join(path, key), "required (per-packet probability of leaving the good/bad state)")
    p_gb = _number(value["p_gb"], _join(path, "p_gb"), 0.0, 1.0)
    p_bg = _number(value["p_bg"], _join(path, "p_bg"), 0.0, 1.0, lo_open=True)
    loss_good = _number(value.get("loss_good", 0.0), _join(path, "loss_good"), 0.0, 1.0, hi_open=True)
    loss_bad = _number(value.get("loss_bad", 1.0), _join(path, "loss_bad"), 0.0, 1.0)
    resolved = {"model": "gilbert", "p_gb": p_gb, "p_bg": p_bg, "loss_good": loss_good, "loss_bad": loss_bad}
    engine = {"kind": "gilbert", "p_gb": p_gb, "p_bg": p_bg, "loss_good": loss_good, "loss_bad": loss_bad}
    return resolved, 0.0, engine


def stationary_loss(loss: float | Mapping[str, Any]) -> float:
    """Long-run fraction of packets a resolved loss setting drops.

    A number is a Bernoulli probability; a Gilbert–Elliott table gives
    ``π_bad·loss_bad + (1 − π_bad)·loss_good`` with ``π_bad = p_gb/(p_gb + p_bg)``;
    periodic loss drops one packet in every ``round(1/p)``.
    """
    if not isinstance(loss, Mapping):
        return float(loss)
    if loss.get("model") == "periodic":
        return 1.0 / max(1, round(1.0 / float(loss["p"])))
    pi_bad = float(loss["p_gb"]) / (float(loss["p_gb"]) + float(loss["p_bg"]))
    return pi_bad * float(loss["loss_bad"]) + (1.0 - pi_bad) * float(loss["loss_good"])


def _dist_size(value: Any, path: str, mss: int) -> tuple[str, int]:
    """A size given as bytes or packets (pkts = MSS payload bytes): (canonical string, bytes)."""
    s = _size(value, path)
    if s.kind == "bdp":
        raise SpecError(
            path, f'expected a size in bytes or packets such as "150KB" or "100pkts", got {describe(value)}'
        )
    assert isinstance(s.value, int)
    return format_size(s), s.value * mss if s.kind == "pkts" else s.value


def _sizes(value: Any, path: str, mss: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A transfer-size distribution table: (resolved table, engine dict)."""
    table = _table(value, path)
    if "dist" not in table:
        raise SpecError(_join(path, "dist"), f"required ({', '.join(SIZE_DISTS)})")
    dist = _choice(table["dist"], _join(path, "dist"), tuple(SIZE_DISTS), "size distribution")
    _check_keys(table, path, SIZE_DISTS[dist])

    def need(key: str, example: str) -> Any:
        if key not in table:
            raise SpecError(_join(path, key), f'required with dist = "{dist}" (e.g. {key} = {example})')
        return table[key]

    if dist == "surge":
        body = _number(table.get("body", SURGE_DEFAULTS["body"]), _join(path, "body"), 0.0, 1.0)
        mu = _number(table.get("mu", SURGE_DEFAULTS["mu"]), _join(path, "mu"), -1e3, 1e3)
        sigma = _number(table.get("sigma", SURGE_DEFAULTS["sigma"]), _join(path, "sigma"), 0.0, 100.0)
        tail_str, tail_min = _dist_size(table.get("tail_min", SURGE_DEFAULTS["tail_min"]), _join(path, "tail_min"), mss)
        shape = _number(
            table.get("tail_shape", SURGE_DEFAULTS["tail_shape"]), _join(path, "tail_shape"), 0.0, 100.0, lo_open=True
        )
        resolved = {"dist": "surge", "body": body, "mu": mu, "sigma": sigma, "tail_min": tail_str, "tail_shape": shape}
        engine = {
            "kind": "surge",
            "body": body,
            "mu": mu,
            "sigma": sigma,
            "tail_min": float(tail_min),
            "tail_shape": shape,
        }
        return resolved, engine
    if dist == "pareto":
        shape = _number(need("shape", "1.2"), _join(path, "shape"), 0.0, 100.0, lo_open=True)
        if ("mean" in table) == ("min" in table):
            where = _join(path, "min") if "min" in table else path
            raise SpecError(where, 'give exactly one of mean and min (e.g. mean = "100pkts")')
        if "mean" in table:
            if shape <= 1.0:
                raise SpecError(
                    _join(path, "shape"),
                    f"must be greater than 1 when the mean is given (the mean is infinite), got {shape:g}",
                )
            mean_str, mean = _dist_size(table["mean"], _join(path, "mean"), mss)
            resolved = {"dist": "pareto", "mean": mean_str, "shape": shape}
            k = mean * (shape - 1.0) / shape
        else:
            min_str, k_bytes = _dist_size(table["min"], _join(path, "min"), mss)
            resolved = {"dist": "pareto", "min": min_str, "shape": shape}
            k = float(k_bytes)
        return resolved, {"kind": "pareto", "min": k, "shape": shape}
    if dist == "lognormal":
        mu = _number(need("mu", "9.357"), _join(path, "mu"), -1e3, 1e3)
        sigma = _number(need("sigma", "1.328"), _join(path, "sigma"), 0.0, 100.0)
        return {"dist": "lognormal", "mu": mu, "sigma": sigma}, {"kind": "lognormal", "mu": mu, "sigma": sigma}
    if dist == "fixed":
        size_str, size = _dist_size(need("size", '"10KB"'), _join(path, "size"), mss)
        if size > MAX_TRANSFER_BYTES:
            raise SpecError(_join(path, "size"), f"must be at most 1TB, got {describe(table['size'])}")
        return {"dist": "fixed", "size": size_str}, {"kind": "fixed", "bytes": size}
    mean_str, mean = _dist_size(need("mean", '"50KB"'), _join(path, "mean"), mss)
    return {"dist": "exponential", "mean": mean_str}, {"kind": "exponential", "mean": float(mean)}


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _capped_pareto_mean(k: float, alpha: float, cap: float) -> float:
    """E[min(X, cap)] for X ~ Pareto(k, α)."""
    if k >= cap:
        return cap
    if alpha == 1.0:
        return k + k * math.log(cap / k)
    return k + k * (math.pow(cap / k, 1.0 - alpha) - 1.0) / (1.0 - alpha)


def _capped_lognormal_mean(mu: float, sigma: float, cap: float) -> float:
    """E[min(X, cap)] for ln X ~ Normal(μ, σ)."""
    if sigma == 0.0:
        return min(math.exp(mu), cap)
    z = (math.log(cap) - mu) / sigma
    return math.exp(mu + sigma * sigma / 2.0) * _phi(z - sigma) + cap * (1.0 - _phi(z))


def size_mean(engine_sizes: Mapping[str, Any]) -> float:
    """Mean transfer size in bytes of an engine size distribution, as the engine draws it.

    The engine caps each draw at 1 TB, so the mean is finite even for a
    Pareto shape ≤ 1 (and a little below the analytic mean for shapes just
    above 1: SURGE's 128.5 KB becomes about 109 KB).
    """
    cap = float(MAX_TRANSFER_BYTES)
    kind = engine_sizes["kind"]
    if kind == "fixed":
        return float(engine_sizes["bytes"])
    if kind == "exponential":
        return float(engine_sizes["mean"])
    if kind == "pareto":
        return _capped_pareto_mean(float(engine_sizes["min"]), float(engine_sizes["shape"]), cap)
    if kind == "lognormal":
        return _capped_lognormal_mean(float(engine_sizes["mu"]), float(engine_sizes["sigma"]), cap)
    body = float(engine_sizes["body"])
    return body * _capped_lognormal_mean(float(engine_sizes["mu"]), float(engine_sizes["sigma"]), cap) + (
        1.0 - body
    ) * _capped_pareto_mean(float(engine_sizes["tail_min"]), float(engine_sizes["tail_shape"]), cap)


def _rtt_dist(value: Any, path: str) -> tuple[str | dict[str, Any], dict[str, Any]]:
    """A source's RTT: a time, or a distribution table. Returns (resolved, engine dict)."""
    if not isinstance(value, dict):
        rtt = _positive_time(value, path)
        return format_time(rtt), {"kind": "fixed", "rtt_ns": rtt}
    if "dist" not in value:
        raise SpecError(_join(path, "dist"), f"required ({', '.join(RTT_DISTS)})")
    dist = _choice(value["dist"], _join(path, "dist"), tuple(RTT_DISTS), "RTT distribution")
    _check_keys(value, path, RTT_DISTS[dist])

    def need(key: str, example: str) -> Any:
        if key not in value:
            raise SpecError(_join(path, key), f'required with dist = "{dist}" (e.g. {key} = "{example}")')
        return value[key]

    if dist == "fixed":
        rtt = _positive_time(need("rtt", "50ms"), _join(path, "rtt"))
        return format_time(rtt), {"kind": "fixed", "rtt_ns": rtt}
    if dist == "exponential":
        mean = _positive_time(need("mean_one_way", "66ms"), _join(path, "mean_one_way"))
        lo = _time(value.get("min", "0s"), _join(path, "min"))
        resolved = {"dist": "exponential", "mean_one_way": format_time(mean), "min": format_time(lo)}
        return resolved, {"kind": "exponential", "mean_one_way_ns": mean, "min_rtt_ns": lo}
    lo = _positive_time(need("lo", "20ms"), _join(path, "lo"))
    hi = _time(need("hi", "200ms"), _join(path, "hi"))
    if hi < lo:
        raise SpecError(_join(path, "hi"), f"must be at least lo ({format_time(lo)}), got {describe(value['hi'])}")
    return {"dist": "uniform", "lo": format_time(lo), "hi": format_time(hi)}, {
        "kind": "uniform",
        "lo_ns": lo,
        "hi_ns": hi,
    }


def _start_stop(table: Mapping[str, Any], path: str, duration_ns: int) -> tuple[int, int | None]:
    start_ns = _time(table.get("start", DEFAULTS["start"]), _join(path, "start"))
    if start_ns >= duration_ns:
        raise SpecError(
            _join(path, "start"),
            f"must be before the end of the run (duration = {format_time(duration_ns)}), got {describe(table['start'])}",
        )
    stop_ns: int | None = None
    if "stop" in table:
        stop_ns = _time(table["stop"], _join(path, "stop"))
        if stop_ns <= start_ns:
            raise SpecError(
                _join(path, "stop"), f"must be after start ({format_time(start_ns)}), got {describe(table['stop'])}"
            )
        if stop_ns > duration_ns:
            raise SpecError(
                _join(path, "stop"),
                f"must be at most the duration ({format_time(duration_ns)}), got {describe(table['stop'])}",
            )
    return start_ns, stop_ns


@dataclass
class _Context:
    """What background sources need from the rest of the experiment."""

    duration_ns: int
    topo_rtt_ns: int | None
    bottleneck_bps: int
    reverse_bps: int
    mss: int
    header: int
    init_cwnd: int
    pacing: bool


def _link_rate(ctx: _Context, direction: str) -> int:
    """The rate a load fraction refers to: the reverse link for reverse sources, else the bottleneck."""
    return ctx.reverse_bps if direction == "reverse" else ctx.bottleneck_bps


def _source_list(value: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """``[[background.web]]`` (a list) or ``[background.web]`` (one table): (path, table) pairs."""
    if isinstance(value, dict):
        return [(path, value)]
    if not isinstance(value, list):
        raise SpecError(path, f"expected a table or a list of tables ([[{path}]]), got {describe(value)}")
    return [(f"{path}[{i}]", _table(t, f"{path}[{i}]")) for i, t in enumerate(value)]


def _tcp_source_common(
    t: Mapping[str, Any], path: str, ctx: _Context, direction: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """cc, params, rtt, start/stop and TCP settings of a TCP source: (resolved, engine) parts."""
    cc = t.get("cc", BACKGROUND_CC_DEFAULT)
    params = _params(t.get("params", {}), _join(path, "params"))
    cc_params = _resolve_cc(cc, params, path)
    if "rtt" in t:
        r_rtt, e_rtt = _rtt_dist(t["rtt"], _join(path, "rtt"))
    elif ctx.topo_rtt_ns is not None:
        r_rtt, e_rtt = format_time(ctx.topo_rtt_ns), {"kind": "fixed", "rtt_ns": ctx.topo_rtt_ns}
    else:
        raise SpecError(
            "topology.rtt", f"required unless every flow group and background source sets rtt ({path} does not)"
        )
    start_ns, stop_ns = _start_stop(t, path, ctx.duration_ns)
    mss = _int(t["mss"], _join(path, "mss"), 1, 65535 - ctx.header) if "mss" in t else ctx.mss
    icw = _int(t["init_cwnd"], _join(path, "init_cwnd"), 1, 1_000_000) if "init_cwnd" in t else ctx.init_cwnd
    pacing = _bool(t["pacing"], _join(path, "pacing")) if "pacing" in t else ctx.pacing
    resolved: dict[str, Any] = {"cc": cc}
    if cc_params:
        resolved["params"] = cc_params
    resolved["rtt"] = r_rtt
    resolved["direction"] = direction
    resolved["start"] = format_time(start_ns)
    if stop_ns is not None:
        resolved["stop"] = format_time(stop_ns)
    resolved.update({"mss": mss, "init_cwnd": icw, "pacing": pacing})
    engine: dict[str, Any] = {
        "rtt": e_rtt,
        "direction": direction,
        "cc": cc,
        "params": cc_params,
        "mss": mss,
        "header_bytes": ctx.header,
        "init_cwnd": icw,
        "pacing": pacing,
        "start_ns": start_ns,
        "stop_ns": stop_ns,
    }
    return resolved, engine


def _sessions(value: Any, path: str) -> int:
    return _int(value, path, 1, MAX_FLOWS)


def _web(t: dict[str, Any], path: str, ctx: _Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    _check_keys(t, path, WEB_KEYS)
    # Direction: `direction`, or bidirectional = true for "both".
    direction = _choice(t.get("direction", "forward"), _join(path, "direction"), DIRECTIONS, "direction")
    if "bidirectional" in t:
        bidi = _bool(t["bidirectional"], _join(path, "bidirectional"))
        if bidi and "direction" in t and direction != "both":
            raise SpecError(
                _join(path, "bidirectional"), f'true means direction = "both", but direction = "{direction}" is set'
            )
        if bidi:
            direction = "both"
        elif "direction" in t and direction == "both":
            raise SpecError(_join(path, "bidirectional"), 'false contradicts direction = "both"')
    mss = _int(t["mss"], _join(path, "mss"), 1, 65535 - ctx.header) if "mss" in t else ctx.mss
    # Sizes: "surge" (with size_* overrides) or a distribution table.
    sizes_v = t.get("sizes", "surge")
    shortcuts = [k for k in SURGE_SHORTCUTS if k in t]
    if isinstance(sizes_v, str):
        if sizes_v != "surge":
            raise SpecError(
                _join(path, "sizes"),
                f'expected "surge" or a table such as {{ dist = "pareto", mean = "100pkts", shape = 1.2 }}, got {describe(sizes_v)}',
            )
        table: dict[str, Any] = {"dist": "surge"}
        for k in shortcuts:
            table[k.removeprefix("size_")] = t[k]
        try:
            r_sizes, e_sizes = _sizes(table, _join(path, "sizes"), mss)
        except SpecError as e:
            # Name the shortcut the user wrote, not the table it stands for.
            key = e.path.rsplit(".", 1)[-1]
            if f"size_{key}" in shortcuts:
                raise SpecError(_join(path, f"size_{key}"), e.message) from None
            raise
    else:
        if shortcuts:
            raise SpecError(_join(path, shortcuts[0]), 'only allowed with sizes = "surge"')
        r_sizes, e_sizes = _sizes(sizes_v, _join(path, "sizes"), mss)
    # Arrivals: exactly one of sessions, rate, load.
    given = [k for k in ("sessions", "rate", "load") if k in t]
    if not given:
        raise SpecError(
            path, "one of sessions, rate or load is required (e.g. sessions = 200, rate = 20.0 or load = 0.2)"
        )
    if len(given) > 1:
        raise SpecError(
            _join(path, given[1]), f"only one of sessions, rate and load may be given ({given[0]} is also set)"
        )
    if "think" in t and given[0] != "sessions":
        raise SpecError(
            _join(path, "think"), "only allowed with sessions (closed-loop sessions think between transfers)"
        )
    resolved: dict[str, Any] = {"name": name}
    arrivals: dict[str, Any]
    if given[0] == "sessions":
        n = _sessions(t["sessions"], _join(path, "sessions"))
        think = _positive_time(t.get("think", WEB_THINK_DEFAULT), _join(path, "think"))
        resolved.update({"sessions": n, "think": format_time(think)})
        arrivals = {"kind": "sessions", "sessions": n, "off_mean_ns": think}
    elif given[0] == "rate":
        rate = _number(t["rate"], _join(path, "rate"), 0.0, 1e7, lo_open=True)
        resolved["rate"] = rate
        arrivals = {"kind": "poisson", "rate": rate}
    else:
        load = _number(t["load"], _join(path, "load"), 0.0, 100.0, lo_open=True)
        resolved["load"] = load
        rate = load * _link_rate(ctx, direction) / (8.0 * size_mean(e_sizes))
        arrivals = {"kind": "poisson", "rate": rate}
    resolved["sizes"] = r_sizes
    common_r, common_e = _tcp_source_common(t, path, ctx, direction)
    resolved.update(common_r)
    engine = {"name": name, "arrivals": arrivals, "sizes": e_sizes, **common_e}
    return resolved, engine


def _onoff(t: dict[str, Any], path: str, ctx: _Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    _check_keys(t, path, ONOFF_KEYS)
    direction = _choice(t.get("direction", "forward"), _join(path, "direction"), DIRECTIONS, "direction")
    if "sessions" not in t:
        raise SpecError(_join(path, "sessions"), "required (the number of on-off sessions, e.g. sessions = 25)")
    n = _sessions(t["sessions"], _join(path, "sessions"))
    mss = _int(t["mss"], _join(path, "mss"), 1, 65535 - ctx.header) if "mss" in t else ctx.mss
    r_sizes, e_sizes = _sizes(t.get("size", ONOFF_SIZE_DEFAULT), _join(path, "size"), mss)
    off = _positive_time(t.get("off", ONOFF_OFF_DEFAULT), _join(path, "off"))
    resolved: dict[str, Any] = {"name": name, "sessions": n, "size": r_sizes, "off": format_time(off)}
    common_r, common_e = _tcp_source_common(t, path, ctx, direction)
    resolved.update(common_r)
    arrivals = {"kind": "sessions", "sessions": n, "off_mean_ns": off}
    return resolved, {"name": name, "arrivals": arrivals, "sizes": e_sizes, **common_e}


def _udp(t: dict[str, Any], path: str, ctx: _Context, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    _check_keys(t, path, UDP_KEYS)
    direction = _choice(t.get("direction", "forward"), _join(path, "direction"), DIRECTIONS, "direction")
    given = [k for k in ("rate", "load") if k in t]
    if not given:
        raise SpecError(path, 'one of rate or load is required (e.g. rate = "80Mbps" or load = 0.8)')
    if len(given) > 1:
        raise SpecError(_join(path, "load"), "only one of rate and load may be given (rate is also set)")
    pattern = _choice(t.get("pattern", "cbr"), _join(path, "pattern"), UDP_PATTERNS, "UDP pattern")
    packet = _bytes(t.get("packet", UDP_PACKET_DEFAULT), _join(path, "packet"))
    if packet > 65535:
        raise SpecError(_join(path, "packet"), f"must be at most 65535B, got {describe(t['packet'])}")
    start_ns, stop_ns = _start_stop(t, path, ctx.duration_ns)
    resolved: dict[str, Any] = {"name": name}
    if given[0] == "rate":
        rate_bps = _rate(t["rate"], _join(path, "rate"))
        resolved["rate"] = format_rate(rate_bps)
    else:
        load = _number(t["load"], _join(path, "load"), 0.0, 100.0, lo_open=True)
        resolved["load"] = load
        rate_bps = max(1, round(load * _link_rate(ctx, direction)))
    resolved.update({"pattern": pattern, "packet": format_bytes(packet), "direction": direction})
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
    }
    return resolved, engine


@dataclass
class _Background:
    resolved: dict[str, Any]
    tcp_sources: list[dict[str, Any]]
    udp_sources: list[dict[str, Any]]

    @property
    def any(self) -> bool:
        return bool(self.tcp_sources or self.udp_sources)

    @property
    def max_packet(self) -> int:
        sizes = [s["mss"] + s["header_bytes"] for s in self.tcp_sources]
        sizes += [s["packet_bytes"] for s in self.udp_sources]
        return max(sizes, default=0)


def _background(value: Any, ctx: _Context) -> _Background:
    table = _table(value, "background")
    _check_keys(table, "background", BACKGROUND_KINDS)
    builders = {"web": _web, "onoff": _onoff, "udp": _udp}
    resolved: dict[str, Any] = {}
    tcp_sources: list[dict[str, Any]] = []
    udp_sources: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for kind in BACKGROUND_KINDS:
        if kind not in table:
            continue
        entries = []
        for i, (path, t) in enumerate(_source_list(table[kind], f"background.{kind}")):
            name = t.get("name", f"{kind}{i}")
            if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
                raise SpecError(
                    _join(path, "name"),
                    f"expected letters, digits, '.', '_', '+' or '-' (up to 100), got {describe(name)}",
                )
            if name in names:
                raise SpecError(_join(path, "name"), f'"{name}" is already the name of {names[name]}')
            names[name] = path
            r, e = builders[kind](t, path, ctx, name)
            entries.append(r)
            (udp_sources if kind == "udp" else tcp_sources).append(e)
        if entries:
            resolved[kind] = entries
    return _Background(resolved, tcp_sources, udp_sources)


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
    loss, bn_loss_p, bn_loss_model = _loss(bn_table.get("loss", DEFAULTS["loss"]), "topology.bottleneck.loss")
    rev_loss: float | dict[str, Any] | None = None
    rev_loss_p, rev_loss_model = 0.0, None
    if "reverse" in topo:
        rev_table = _table(topo["reverse"], "topology.reverse")
        _check_keys(rev_table, "topology.reverse", REVERSE_KEYS)
        reverse = _Link(
            _rate(rev_table["rate"], "topology.reverse.rate") if "rate" in rev_table else bottleneck.rate_bps,
            _size(rev_table["buffer"], "topology.reverse.buffer") if "buffer" in rev_table else bottleneck.buffer,
        )
        if "loss" in rev_table:
            rev_loss, rev_loss_p, rev_loss_model = _loss(rev_table["loss"], "topology.reverse.loss")
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

    # Background traffic.
    ctx = _Context(
        duration_ns, topo_rtt_ns, bottleneck.rate_bps, reverse.rate_bps, tcp_mss, header, tcp_icw, tcp_pacing
    )
    background = _background(raw.get("background", {}), ctx)

    # Flows (optional when there is background traffic).
    if "flows" not in raw and not background.any:
        raise SpecError("flows", 'at least one flow group is required (e.g. [[flows]] cc = "cubic")')
    groups = raw.get("flows", [])
    if not isinstance(groups, list):
        raise SpecError("flows", f"expected a list of tables ([[flows]]), got {describe(groups)}")
    if not groups and not background.any:
        raise SpecError("flows", "at least one flow group is required (or a background source)")
    recoveries = {a["name"]: a["default_recovery"] for a in _core.cc_algorithms()}
    # Rate-based algorithms (BBR) are paced unless the file says otherwise.
    needs_pacing = {a["name"]: bool(a.get("needs_pacing", False)) for a in _core.cc_algorithms()}

    resolved_flows: list[dict[str, Any]] = []
    engine_flows: list[dict[str, Any]] = []
    flow_groups: list[int] = []
    group_rtts: list[int] = []
    max_packet = max(tcp_mss + header, background.max_packet)
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
        start_ns, stop_ns = _start_stop(g, path, duration_ns)
        every_ns: int | None = None
        if "every" in g:
            every_ns = _positive_time(g["every"], _join(path, "every"))
            last_ns = start_ns + (count - 1) * every_ns
            end_ns = stop_ns if stop_ns is not None else duration_ns
            if last_ns >= end_ns:
                what = (
                    f"stop ({format_time(end_ns)})"
                    if stop_ns is not None
                    else f"the end of the run ({format_time(end_ns)})"
                )
                raise SpecError(
                    _join(path, "every"),
                    f"the last of the {count} flows would start at {format_time(last_ns)}, not before {what}",
                )
        flow_reverse = _bool(g["reverse"], _join(path, "reverse")) if "reverse" in g else False
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
        if "pacing" in g:
            pacing = _bool(g["pacing"], _join(path, "pacing"))
        elif "pacing" in tcp:
            pacing = tcp_pacing
        else:
            pacing = needs_pacing[cc]
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
        if every_ns is not None:
            rf["every"] = format_time(every_ns)
        if stop_ns is not None:
            rf["stop"] = format_time(stop_ns)
        rf["rtt"] = format_time(rtt_ns)
        if flow_reverse:
            rf["reverse"] = True
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
        if flow_reverse:
            ef["reverse"] = True
        if len(engine_flows) + count > MAX_FLOWS:
            raise SpecError(_join(path, "count"), f"too many flows in total (at most {MAX_FLOWS})")
        for k in range(count):
            e = copy.deepcopy(ef)
            if every_ns is not None:
                e["start_ns"] = start_ns + k * every_ns
            engine_flows.append(e)
            flow_groups.append(gi)

    # Cross-checks that need the flows.
    if group_rtts and 2 * bn_delay_ns > min(group_rtts):
        raise SpecError(
            "topology.bottleneck.delay",
            f"must be at most half the smallest flow RTT ({format_time(min(group_rtts))}), got {format_time(bn_delay_ns)}",
        )
    bdp_rtt_ns = topo_rtt_ns if topo_rtt_ns is not None else max(group_rtts, default=0)
    if bdp_rtt_ns == 0 and (bottleneck.buffer.kind == "bdp" or reverse.buffer.kind == "bdp"):
        raise SpecError("topology.rtt", "required for a buffer given in bdp when there are no flow groups")
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
    if rev_loss is not None:
        r_topology["reverse"]["loss"] = rev_loss
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
    }
    if resolved_flows:
        resolved["flows"] = resolved_flows
    if background.any:
        resolved["background"] = background.resolved

    engine: dict[str, Any] = {
        "seed": seed,
        "duration_ns": duration_ns,
        "interval_ns": interval_ns,
        "trace": trace,
        "bottleneck": {
            "rate_bps": bottleneck.rate_bps,
            "delay_ns": bn_delay_ns,
            bn_limit[0]: bn_limit[1],
            "loss": bn_loss_p,
        },
        "reverse": {
            "rate_bps": reverse.rate_bps,
            "delay_ns": bn_delay_ns,
            rev_limit[0]: rev_limit[1],
            "loss": rev_loss_p,
        },
        "flows": engine_flows,
    }
    if bn_loss_model is not None:
        engine["bottleneck"]["loss_model"] = bn_loss_model
    if rev_loss_model is not None:
        engine["reverse"]["loss_model"] = rev_loss_model
    if background.tcp_sources:
        engine["tcp_sources"] = background.tcp_sources
    if background.udp_sources:
        engine["udp_sources"] = background.udp_sources
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
