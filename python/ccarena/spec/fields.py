"""Typed readers of single values, shared by every section of the experiment.

Each takes the value as written and the field's path, and returns the value
in base units (integers of ns, bit/s, bytes) or raises :class:`SpecError`
naming the path, saying what was expected and showing an example.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .. import _core
from .. import pycc as _pycc
from .errors import SpecError, did_you_mean
from .limits import check_rate, check_time
from .schema import Table
from .units import (
    Size,
    UnitError,
    describe,
    parse_bytes,
    parse_rate,
    parse_size,
    parse_time,
)

__all__ = [
    "NAME_RE",
    "boolean",
    "byte_count",
    "check_keys",
    "choice",
    "integer",
    "join",
    "number",
    "params",
    "positive_time",
    "rate",
    "resolve_cc",
    "size",
    "table",
    "time",
]

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
"""Names of experiments and background sources (they name folders and columns)."""

T = TypeVar("T")


def join(path: str, key: str) -> str:
    """``join("flows[0]", "cc")`` → ``"flows[0].cc"``."""
    return f"{path}.{key}" if path else key


def table(value: Any, path: str) -> dict[str, Any]:
    """A TOML table."""
    if not isinstance(value, dict):
        raise SpecError(path, f"expected a table, got {describe(value)}")
    return value


def check_keys(value: Mapping[str, Any], path: str, known: Table | tuple[str, ...]) -> None:
    """Every key of ``value`` is one of ``known`` (a schema table or a tuple of names)."""
    names = known.names if isinstance(known, Table) else known
    for key in value:
        if key not in names:
            raise SpecError(join(path, key), f"unknown key {_hint(key, sorted(names))}")


def _hint(word: str, names: list[str] | tuple[str, ...], n: int = 1) -> str:
    """``(did you mean "x"?)`` when a name is close to ``word``, else ``(known: a, b, c)``."""
    return did_you_mean(word, names, n=n).strip() or f"(known: {', '.join(names)})"


def _unit(parse: Callable[[Any], T], value: Any, path: str) -> T:
    try:
        return parse(value)
    except UnitError as e:
        raise SpecError(path, str(e)) from None


def time(value: Any, path: str) -> int:
    """A time such as ``"20ms"``, in ns (zero allowed), at most :data:`~.limits.MAX_TIME_NS`."""
    return check_time(_unit(parse_time, value, path), value, path)


def positive_time(value: Any, path: str) -> int:
    """A time greater than zero, in ns."""
    ns = time(value, path)
    if ns <= 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return ns


def rate(value: Any, path: str) -> int:
    """A rate such as ``"100Mbps"``, in bit/s, at most :data:`~.limits.MAX_RATE_BPS`."""
    return check_rate(_unit(parse_rate, value, path), value, path)


def byte_count(value: Any, path: str) -> int:
    """A size in bytes such as ``"10MB"``, greater than zero."""
    n = _unit(parse_bytes, value, path)
    if n <= 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return n


def size(value: Any, path: str) -> Size:
    """A size in bytes, packets or BDP fractions, greater than zero."""
    s = _unit(parse_size, value, path)
    if s.value == 0:
        raise SpecError(path, f"must be greater than 0, got {describe(value)}")
    return s


def integer(value: Any, path: str, lo: int, hi: int) -> int:
    """An integer in ``[lo, hi]`` (booleans are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(path, f"expected an integer in [{lo}, {hi}], got {describe(value)}")
    if not lo <= value <= hi:
        raise SpecError(path, f"expected an integer in [{lo}, {hi}], got {value}")
    return value


def boolean(value: Any, path: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise SpecError(path, f"expected true or false, got {describe(value)}")
    return value


def choice(value: Any, path: str, choices: tuple[str, ...], what: str) -> str:
    """One of ``choices``; ``what`` names the kind of thing in the message."""
    if not isinstance(value, str):
        raise SpecError(path, f"expected one of {', '.join(choices)}, got {describe(value)}")
    if value not in choices:
        raise SpecError(path, f'unknown {what} "{value}" {_hint(value, choices)}')
    return value


def number(value: Any, path: str, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False) -> float:
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


def params(value: Any, path: str) -> dict[str, Any]:
    """An algorithm's parameter table: booleans, numbers and strings."""
    t = table(value, path)
    for k, v in t.items():
        p = join(path, k)
        if isinstance(v, (bool, float, str)):
            continue
        if isinstance(v, int):
            if not -(2**63) <= v < 2**63:
                raise SpecError(p, f"integer out of range, got {v}")
            continue
        raise SpecError(p, f"expected a boolean, number or string, got {describe(v)}")
    return t


def resolve_cc(cc: Any, given: dict[str, Any], path: str) -> dict[str, Any]:
    """The parameters of algorithm ``cc`` with every default filled in (the registry checks them)."""
    if not isinstance(cc, str):
        raise SpecError(join(path, "cc"), f'expected an algorithm name such as "cubic", got {describe(cc)}')
    if not known_algorithm(cc, join(path, "cc")):
        # Two suggestions: "bbr2" is as likely meant for bbr3 as for bbr.
        names = (*algorithms(), *sorted(_pycc.entry_point_names() - set(algorithms())))
        raise SpecError(join(path, "cc"), f'unknown algorithm "{cc}" {_hint(cc, names, n=2)}')
    known = _param_names(cc)
    for key in given:
        if key not in known:
            hint = _hint(key, known) if known else "(it has none)"
            raise SpecError(join(join(path, "params"), key), f'unknown parameter "{key}" for {cc} {hint}')
    try:
        return dict(_resolve_cc(cc, tuple(given.items())))
    except _pycc.ConstructionError as e:
        raise SpecError(join(path, "cc"), str(e)) from None
    except ValueError as e:
        param, message = e.args if len(e.args) == 2 else (None, str(e))
        where = join(path, "cc") if param is None else join(join(path, "params"), str(param))
        raise SpecError(where, str(message)) from None


def known_algorithm(cc: str, path: str) -> bool:
    """Whether ``cc`` is an algorithm of the registry, or of an installed package's
    entry point (registered now); an entry point that fails is a SpecError at ``path``."""
    if cc in algorithms():
        return True
    try:
        return _pycc.load_entry_point(cc)
    except _pycc.EntryPointError as e:
        raise SpecError(path, str(e)) from None


@functools.cache
def algorithms() -> dict[str, Any]:
    """The registry by name (it changes only when a Python algorithm is registered: see `_forget_registry`)."""
    return {str(a["name"]): dict(a) for a in _core.cc_algorithms()}


@functools.cache
def _param_names(cc: str) -> tuple[str, ...]:
    return tuple(str(p["name"]) for p in algorithms()[cc]["params"])


@functools.lru_cache(maxsize=4096)
def _resolve_cc(cc: str, given: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """The registry's answer, remembered: a campaign resolves the same algorithms many times.
    A Python algorithm is built once with the parameters, so that a constructor that raises
    is found here, before anything runs."""
    resolved = _core.cc_resolve(cc, dict(given))
    _pycc.check_constructs(cc, resolved)
    return tuple(resolved.items())


def _forget_registry() -> None:
    """A Python algorithm was registered or unregistered: the registry changed after all."""
    for f in (algorithms, _param_names, _resolve_cc):
        f.cache_clear()


_pycc.on_change(_forget_registry)
