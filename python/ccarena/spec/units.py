"""Quantities with units, as written in experiment files.

Every physical quantity in an experiment file is a string that carries its
unit, so that a file reads the same to everyone and a forgotten unit is an
error rather than a silent guess. Spaces between the number and the unit are
allowed (``"100 Mbps"``).

* rates, in **bits** per second → integer bit/s: ``"100Mbps"``,
  ``"1.5Gbps"``, ``"735kbps"``, ``"800bps"`` (prefixes k, M, G, T), or tc's
  spellings ``"100mbit"``, ``"735kbit"``, ``"1gbit"``, ``"800bit"``. Case is
  ignored (``"100MBPS"``, ``"100mbps"`` and ``"100Mbit"`` are all 100 Mbit/s;
  note that tc itself reads ``mbps`` as megabytes), except that a capital
  ``B`` followed by ``p`` (``"100MBps"``, ``"12.5KBps"``) is the usual
  spelling of *bytes* per second and is refused, with the rate in bits it
  stands for;
* times → integer nanoseconds: ``"20ms"``, ``"1.5s"``, ``"100us"``
  (or ``"100µs"``), ``"250ns"``, ``"2min"``, ``"1h"``; case is ignored
  (``"40MS"`` is 40 ms);
* sizes: ``"1500B"``, ``"64KB"`` (1000 bytes per kB), ``"64KiB"`` (1024),
  ``"1MB"``, ``"1MiB"``, ``"100pkts"`` (packets, also ``"1pkt"``) and
  ``"0.2bdp"`` (a fraction of the bandwidth-delay product). The byte ``B`` is
  case-sensitive, as a lowercase ``b`` means bits (``"64Mb"`` is refused, not
  read as ``"64MB"``); the prefixes, the ``i`` of binary prefixes, ``pkts``
  and ``bdp`` are not (``"64kB"``, ``"64KIB"``, ``"100PKTS"``, ``"1BDP"``).

The parsers raise :class:`UnitError` with a message that shows an example of
the expected form, and lists the accepted units when the value has a unit
that is not one of them; :mod:`ccarena.spec` adds the path of the field. The
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

# The units, written with explicit character classes rather than a case-insensitive flag so
# that the same text serves as a JSON Schema pattern (ECMA-262 has no inline flags).
_PREFIX = r"(?P<prefix>[kKmMgGtT]?)"
_RATE_UNIT = r"(?![kKmMgGtT]?Bp)" + _PREFIX + r"(?P<unit>[bB][pP][sS]|[bB][iI][tT])"
"""bps or bit with an SI prefix, any case; "Bp" (a capital B then p: bytes per second) excluded."""
_TIME_UNIT_RE = r"(?P<unit>[nN][sS]|[uUµ][sS]|[mM][sS]|[sS]|[mM][iI][nN]|[hH])"
_BYTES_UNIT = r"(?P<unit>(?:[kKmMgGtT][iI]?)?B)"
_SIZE_UNIT = r"(?P<unit>(?:[kKmMgGtT][iI]?)?B|[pP][kK][tT][sS]?|[bB][dD][pP])"

_RATE_RE = re.compile(_NUMBER + r"\s*" + _RATE_UNIT)
_RATE_BYTES_RE = re.compile(_NUMBER + r"\s*" + _PREFIX + r"Bps")
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_RATE_PREFIX_NAME = {"": "", "k": "k", "m": "M", "g": "G", "t": "T"}

_TIME_RE = re.compile(_NUMBER + r"\s*" + _TIME_UNIT_RE)
_TIME_UNIT = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}

_SIZE_RE = re.compile(_NUMBER + r"\s*" + _SIZE_UNIT)
_BYTE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY_PREFIX = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

# A number followed by something: what the unit lists are shown for when it is not a unit.
_WITH_UNIT_RE = re.compile(r"[+-]?" + _NUMBER + r"\s*(?P<rest>\S.*)")


def _plain(regex: str) -> str:
    """A regular expression without named groups (JSON Schema patterns have none)."""
    return re.sub(r"\(\?P<\w+>", "(?:", regex)


# The same forms as regular expressions without named groups (ECMA-262 flavour
# as JSON Schema's "pattern" takes them); spaces around the value are allowed.
_PLAIN_NUMBER = _plain(_NUMBER)
RATE_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*" + _plain(_RATE_UNIT) + r"\s*$"
TIME_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*" + _plain(_TIME_UNIT_RE) + r"\s*$"
SIZE_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*" + _plain(_SIZE_UNIT) + r"\s*$"
BYTES_PATTERN = r"^\s*" + _PLAIN_NUMBER + r"\s*" + _plain(_BYTES_UNIT) + r"\s*$"
"""Patterns of rates, times, sizes and byte sizes, for the experiment file's JSON Schema."""

RATE_UNITS = "bps, kbps, Mbps, Gbps, Tbps, or bit, kbit, mbit, gbit"
TIME_UNITS = "ns, us, ms, s, min, h"
SIZE_UNITS = "B, KB, MB, GB, KiB, MiB, GiB, pkts, bdp"
BYTES_UNITS = "B, KB, MB, GB, KiB, MiB, GiB"
"""The accepted units, as the error messages list them."""

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


class _Kind:
    """What a parser expects: an example, the units it lists, and a regex of one unit."""

    def __init__(self, example: str, units: str, unit_regex: str) -> None:
        self.example = example
        self.units = units
        self.unit_re = re.compile(unit_regex)


_RATE = _Kind(RATE_EXAMPLE, RATE_UNITS, _RATE_UNIT)
_TIME = _Kind(TIME_EXAMPLE, TIME_UNITS, _TIME_UNIT_RE)
_SIZE = _Kind(SIZE_EXAMPLE, SIZE_UNITS, _SIZE_UNIT)
_BYTES = _Kind(BYTES_EXAMPLE, BYTES_UNITS, _BYTES_UNIT)


def _expected(kind: _Kind, value: object) -> UnitError:
    """``expected <example>, got <value>``; the accepted units too when ``value`` has a unit that is not one."""
    hint = ""
    if isinstance(value, str):
        m = _WITH_UNIT_RE.fullmatch(value.strip())
        if m is not None and kind.unit_re.fullmatch(m["rest"]) is None:
            hint = f" (units: {kind.units})"
    return UnitError(f"expected {kind.example}{hint}, got {describe(value)}")


def _match(regex: re.Pattern[str], kind: _Kind, value: object) -> re.Match[str]:
    if not isinstance(value, str):
        raise _expected(kind, value)
    m = regex.fullmatch(value.strip())
    if m is None:
        raise _expected(kind, value)
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
    if isinstance(value, str) and (b := _RATE_BYTES_RE.fullmatch(value.strip())) is not None:
        bits = _decimal_str(_exact(b["num"]) * 8) + _RATE_PREFIX_NAME[b["prefix"].lower()] + "bps"
        raise UnitError(f"expected a rate in bits per second, got {describe(value)} (bytes per second; write \"{bits}\")")
    m = _match(_RATE_RE, _RATE, value)
    bps = _to_int(_exact(m["num"]) * _RATE_PREFIX[m["prefix"].lower()])
    if bps < 1:
        raise UnitError(f"must be greater than 0, got {describe(value)}")
    return bps


def _parse_time(value: object) -> int:
    """Parses a time such as ``"20ms"`` into nanoseconds (zero is allowed)."""
    m = _match(_TIME_RE, _TIME, value)
    return _to_int(_exact(m["num"]) * _TIME_UNIT[m["unit"].lower()])


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
    m = _match(_SIZE_RE, _SIZE, value)
    num = _exact(m["num"])
    unit = m["unit"]
    if unit.lower() == "bdp":
        if num <= 0:
            raise UnitError(f"must be greater than 0, got {describe(value)}")
        return Size("bdp", num)
    if unit.lower() in ("pkt", "pkts"):
        if num.denominator != 1:
            raise UnitError(f"a packet count must be a whole number, got {describe(value)}")
        return Size("pkts", int(num))
    return Size("bytes", _bytes_from(num, unit, value))


def _bytes_from(num: Fraction, unit: str, value: object) -> int:
    prefix = unit[:-1].lower()  # "", "k", "ki", "m", "mi", ...: the regex admits no lone "i"
    factor = _BINARY_PREFIX[prefix[0]] if prefix.endswith("i") else _BYTE_PREFIX[prefix]
    total = num * factor
    if total.denominator != 1:
        raise UnitError(f"must be a whole number of bytes, got {describe(value)}")
    return int(total)


def parse_bytes(value: object) -> int:
    """Parses a size in bytes (``"10MB"``, ``"64KiB"``, ``"1500B"``)."""
    if not isinstance(value, str):
        raise _expected(_BYTES, value)
    try:
        size = parse_size(value)
    except UnitError as e:
        if str(e).startswith("expected "):
            raise _expected(_BYTES, value) from None
        raise
    if size.kind != "bytes":
        raise _expected(_BYTES, value)
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
