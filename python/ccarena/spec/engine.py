"""The engine configuration as Python reads it: :class:`EngineConfig`, a read-only view of the
dict the simulator takes, whose fields are those of the engine's own JSON Schema.

The schema is made from the Rust types (``ccarena._core.engine_schema()``, crates/sim/src/config.rs
and config_form.rs), so a field Python reads is one the engine defines: ``spec.engine.bottleneck.rate_bps``,
``spec.engine.flows[0].cc``; a name the schema does not define is an AttributeError naming it. The
view is the dict itself (a read-only ``dict``), which is what is handed to the engine and written to
the emulator's file.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn

__all__ = ["EngineConfig", "engine_fields", "engine_schema"]


@functools.cache
def engine_schema() -> dict[str, Any]:
    """The engine configuration's JSON Schema, as the Rust types define it."""
    from .. import _core

    schema: dict[str, Any] = json.loads(_core.engine_schema())
    return schema


def _resolve(node: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed (the keys beside the reference, such as a default, kept)."""
    out = dict(node)
    defs = engine_schema().get("$defs", {})
    while "$ref" in out:
        ref = out.pop("$ref")
        out = {**defs[ref.rsplit("/", 1)[1]], **out}
    return out


def _branches(node: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The schemas a value of ``node`` may match: itself and each of its alternatives (an optional
    value's, each variant of a tagged enum)."""
    node = _resolve(node)
    out = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, ()):
            out += _branches(sub)
    return out


_FIELDS: dict[int, tuple[Mapping[str, Any], dict[str, Mapping[str, Any]]]] = {}
"""``engine_fields`` by the identity of the schema node (kept, so that the identity stays its own)."""


def engine_fields(node: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Field name → schema of an object of schema ``node`` (every variant's fields, for a tagged enum)."""
    hit = _FIELDS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    out: dict[str, Mapping[str, Any]] = {}
    for branch in _branches(node):
        for name, sub in branch.get("properties", {}).items():
            out.setdefault(name, sub)
    _FIELDS[id(node)] = (node, out)
    return out


def _default(node: Mapping[str, Any]) -> Any:
    """What an absent field reads as: the schema's default when it is a plain value or a list, else None
    (an absent table is None)."""
    for branch in [node, *_branches(node)]:
        if "default" in branch:
            d = branch["default"]
            return list(d) if isinstance(d, list) else None if isinstance(d, dict) else d
    return None


def _items(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The item schema of an array schema (None: not an array of one kind)."""
    for branch in _branches(node):
        items = branch.get("items")
        if isinstance(items, Mapping):
            return items
    return None


class EngineConfig(dict[str, Any]):
    """A read-only view of (a table of) the engine configuration.

    Fields read as attributes: a table gives a view, a list of tables a list of views, a map (an
    algorithm's parameters) a read-only mapping, anything else the value; an absent field reads as
    the schema's default (None for a table or a value without one). A name that is not a field of
    the schema is an AttributeError naming its path. As a dict it is the configuration itself.
    """

    __slots__ = ("_cache", "_path", "_schema")

    def __init__(self, data: Mapping[str, Any], schema: Mapping[str, Any] | None = None, path: str = "engine") -> None:
        super().__init__(data)
        object.__setattr__(self, "_schema", schema if schema is not None else engine_schema())
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_cache", {})

    @classmethod
    def of(cls, kind: str, data: Mapping[str, Any], path: str) -> EngineConfig:
        """A view of ``data`` as the schema's type ``kind`` (``"LinkConfig"``, ``"FlowConfig"``, …)."""
        return cls(data, engine_schema()["$defs"][kind], path)

    def __getattr__(self, name: str) -> Any:
        cache: dict[str, Any] = object.__getattribute__(self, "_cache")
        if name in cache:
            return cache[name]
        schema: Mapping[str, Any] = object.__getattribute__(self, "_schema")
        path: str = object.__getattribute__(self, "_path")
        sub = engine_fields(schema).get(name)
        if sub is None:
            raise AttributeError(f"{path}.{name}: not a field of the engine configuration")
        value = _wrap(dict.__getitem__(self, name), sub, f"{path}.{name}") if name in self else _default(sub)
        # Read once: a list of tables is the same list of views on every read (not to be changed).
        cache[name] = value
        return value

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{self._path}.{name}: the engine configuration is read-only")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{self._path}.{name}: the engine configuration is read-only")

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"{self._path}: the engine configuration is read-only")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = __ior__ = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        schema = object.__getattribute__(self, "_schema")
        # The root schema is this build's: a worker process takes it from its own core.
        return (type(self), (dict(self), None if schema is engine_schema() else schema, self._path))

    def __repr__(self) -> str:
        return f"EngineConfig({dict.__repr__(self)})"

    def to_dict(self) -> dict[str, Any]:
        """The configuration as a plain dict (what the engine takes)."""
        return dict(self)


def _wrap(value: Any, node: Mapping[str, Any], path: str) -> Any:
    """A field's value as Python reads it (see :class:`EngineConfig`)."""
    if isinstance(value, Mapping):
        if engine_fields(node):
            return EngineConfig(value, node, path)
        return MappingProxyType(dict(value))
    if isinstance(value, list | tuple):
        items = _items(node)
        if items is not None and engine_fields(items):
            return [EngineConfig(v, items, f"{path}[{i}]") for i, v in enumerate(value)]
    return value
