"""Quantities with units, as written in experiment files.

Every physical quantity in an experiment file is a string that carries its
unit, so that a file reads the same to everyone and a forgotten unit is an
error rather than a silent guess:

* rates: ``"100Mbps"``, ``"1.5Gbps"``, ``"735kbps"``, ``"800bps"`` (SI
  prefixes k, M, G, T in either case; bits per second) → integer bit/s;
* times: ``"20ms"``, ``"1.5s"``, ``"100us"``, ``"250ns"``, ``"2min"``,
  ``"1h"`` → integer nanoseconds;
* sizes: ``"1500B"``, ``"64KB"`` (1000 bytes per kB), ``"64KiB"`` (1024),
  ``"1MB"``, ``"1MiB"``, ``"100pkts"`` (packets) and ``"0.2bdp"`` (a
  fraction of the bandwidth-delay product).

The parsers raise :class:`UnitError` with a message that shows an example of
the expected form; :mod:`ccarena.spec` adds the path of the field. The
``format_*`` functions give the canonical string of a value, which parses back
to exactly the same value.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

__all__ = [
    "Size",
    "UnitError",
    "describe",
    "format_bytes",
    "format_rate",
    "format_size",
    "format_time",
    "parse_bytes",
    "parse_rate",
    "parse_size",
    "parse_time",
]


class UnitError(ValueError):
    """A quantity string that does not parse, or is out of range."""


_NUMBER = r"(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"

_RATE_RE = re.compile(_NUMBER + r"\s*(?P<prefix>[kKmMgGtT]?)bps")
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}

_TIME_RE = re.compile(_NUMBER + r"\s*(?P<unit>ns|us|µs|ms|s|min|h)")
_TIME_UNIT = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}

_SIZE_RE = re.compile(_NUMBER + r"\s*(?P<unit>[kKmMgGtT]?(?:i)?B|pkts?|bdp)")
_BYTE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_PREFIX = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

# The same forms as regular expressions without named groups (ECMA-262 flavour
# as JSON Schema's "pattern" takes them); spaces around the value are allowed.
_PLAIN_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
RATE_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*[kKmMgGtT]?bps\s*$"
TIME_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*(?:ns|us|µs|ms|s|min|h)\s*$"
SIZE_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*(?:[kKmMgGtT]?i?B|pkts?|bdp)\s*$"
BYTES_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*[kKmMgGtT]?i?B\s*$"
"""Patterns of rates, times, sizes and byte sizes, for the experiment file's JSON Schema."""

RATE_EXAMPLE = 'a rate such as "100Mbps"'
TIME_EXAMPLE = 'a time such as "20ms"'
SIZE_EXAMPLE = 'a size such as "64KB", "100pkts" or "1bdp"'
BYTES_EXAMPLE = 'a size in bytes such as "10MB" or "64KiB"'


def describe(value: object) -> str:
    """Shows a value the way it would be written in a TOML file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _expected(what: str, value: object) -> UnitError:
    return UnitError(f"expected {what}, got {describe(value)}")


def _match(regex: re.Pattern[str], what: str, value: object) -> re.Match[str]:
    if not isinstance(value, str):
        raise _expected(what, value)
    m = regex.fullmatch(value.strip())
    if m is None:
        raise _expected(what, value)
    return m


def _exact(num: str) -> Fraction:
    try:
        return Fraction(Decimal(num))
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        raise UnitError(f"not a number: {num}") from None


def _to_int(x: Fraction) -> int:
    """Rounds half away from zero (values here are never negative)."""
    return math.floor(x + Fraction(1, 2))


def _parse_rate(value: object) -> int:
    """Parses a rate such as ``"100Mbps"`` into bit/s; it must be at least 1 bit/s."""
    m = _match(_RATE_RE, RATE_EXAMPLE, value)
    bps = _to_int(_exact(m["num"]) * _RATE_PREFIX[m["prefix"].lower()])
    if bps < 1:
        raise UnitError(f"must be greater than 0, got {describe(value)}")
    return bps


def _parse_time(value: object) -> int:
    """Parses a time such as ``"20ms"`` into nanoseconds (zero is allowed)."""
    m = _match(_TIME_RE, TIME_EXAMPLE, value)
    return _to_int(_exact(m["num"]) * _TIME_UNIT[m["unit"]])


@dataclass(frozen=True)
class Size:
    """A buffer or window size: a byte count, a packet count, or a BDP fraction.

    ``kind`` is ``"bytes"`` or ``"pkts"`` (``value`` is an ``int``) or
    ``"bdp"`` (``value`` is a :class:`fractions.Fraction`, exact as written).
    """

    kind: Literal["bytes", "pkts", "bdp"]
    value: int | Fraction


def _parse_size(value: object) -> Size:
    """Parses ``"64KB"``, ``"64KiB"``, ``"1500B"``, ``"100pkts"`` or ``"0.2bdp"``."""
    m = _match(_SIZE_RE, SIZE_EXAMPLE, value)
    num = _exact(m["num"])
    unit = m["unit"]
    if unit == "bdp":
        if num <= 0:
            raise UnitError(f"must be greater than 0, got {describe(value)}")
        return Size("bdp", num)
    if unit in ("pkt", "pkts"):
        if num.denominator != 1:
            raise UnitError(f"a packet count must be a whole number, got {describe(value)}")
        return Size("pkts", int(num))
    return Size("bytes", _bytes_from(num, unit, value))


def _bytes_from(num: Fraction, unit: str, value: object) -> int:
    prefix = unit[:-1]
    if prefix.endswith("i"):
        if prefix[:-1] == "":
            raise _expected(SIZE_EXAMPLE, value)
        factor = _BINARY_PREFIX[prefix[:-1].lower()]
    else:
        factor = _BYTE_PREFIX[prefix.lower()]
    total = num * factor
    if total.denominator != 1:
        raise UnitError(f"must be a whole number of bytes, got {describe(value)}")
    return int(total)


def parse_bytes(value: object) -> int:
    """Parses a size in bytes (``"10MB"``, ``"64KiB"``, ``"1500B"``)."""
    if not isinstance(value, str):
        raise _expected(BYTES_EXAMPLE, value)
    try:
        size = parse_size(value)
    except UnitError as e:
        if str(e).startswith("expected "):
            raise _expected(BYTES_EXAMPLE, value) from None
        raise
    if size.kind != "bytes":
        raise _expected(BYTES_EXAMPLE, value)
    assert isinstance(size.value, int)
    return size.value


def _decimal_str(x: Fraction) -> str:
    """Exact decimal representation of a fraction whose denominator is 2^a·5^b."""
    d = Decimal(x.numerator) / Decimal(x.denominator)
    s = format(d.normalize(), "f")
    return s


def _scaled(value: int, units: list[tuple[str, int]]) -> str:
    """The value in the largest unit it reaches, written exactly."""
    for suffix, factor in units:
        if value >= factor:
            return _decimal_str(Fraction(value, factor)) + suffix
    suffix, factor = units[-1]
    return _decimal_str(Fraction(value, factor)) + suffix


@functools.lru_cache(maxsize=65536)
def format_rate(bps: int) -> str:
    """Canonical rate string: ``1_500_000_000`` → ``"1.5Gbps"``."""
    return _scaled(bps, [("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3), ("bps", 1)])


@functools.lru_cache(maxsize=65536)
def format_time(ns: int) -> str:
    """Canonical time string: ``20_000_000`` → ``"20ms"``; zero is ``"0s"``."""
    if ns == 0:
        return "0s"
    return _scaled(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)])


@functools.lru_cache(maxsize=65536)
def format_bytes(n: int) -> str:
    """Canonical byte size: the shortest of ``"1500B"``, ``"64KB"``, ``"64KiB"``, …"""
    candidates = [f"{n}B"]
    for suffix, factor in (("KB", 10**3), ("MB", 10**6), ("GB", 10**9), ("TB", 10**12)):
        if n >= factor and n % factor == 0:
            candidates.append(f"{n // factor}{suffix}")
    for suffix, factor in (("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40)):
        if n >= factor and n % factor == 0:
            candidates.append(f"{n // factor}{suffix}")
    return min(candidates, key=len)


def format_size(size: Size) -> str:
    """Canonical string of a :class:`Size`."""
    if size.kind == "bytes":
        assert isinstance(size.value, int)
        return format_bytes(size.value)
    if size.kind == "pkts":
        return f"{size.value}pkts"
    return _decimal_str(Fraction(size.value)) + "bdp"


# Experiments repeat the same few quantity strings (a campaign resolves thousands of
# points): the parsers remember what they have read. A Size is frozen, so sharing is safe.
_parse_rate_cached = functools.lru_cache(maxsize=65536)(_parse_rate)
_parse_time_cached = functools.lru_cache(maxsize=65536)(_parse_time)
_parse_size_cached = functools.lru_cache(maxsize=65536)(_parse_size)


def parse_rate(value: object) -> int:
    """Parses a rate such as ``"100Mbps"`` into bit/s; it must be at least 1 bit/s."""
    return _parse_rate_cached(value) if isinstance(value, str) else _parse_rate(value)


def parse_time(value: object) -> int:
    """Parses a time such as ``"20ms"`` into nanoseconds (zero is allowed)."""
    return _parse_time_cached(value) if isinstance(value, str) else _parse_time(value)


def parse_size(value: object) -> Size:
    """Parses a buffer or window size: bytes, packets or a BDP fraction (see :class:`Size`)."""
    return _parse_size_cached(value) if isinstance(value, str) else _parse_size(value)
