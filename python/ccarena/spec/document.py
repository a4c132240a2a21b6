"""Reading experiment files and overriding their fields.

:func:`read_toml` reads a file (a missing file or bad TOML is a
:class:`SpecError` naming the file); :func:`apply_overrides` sets fields by
path (``topology.bottleneck.rate``, ``flows[1].cc``), as ``--set`` and
sweeps do; :func:`parse_override_value` reads the text of ``--set
PATH=VALUE``.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import SpecError

__all__ = [
    "apply_overrides",
    "copy_document",
    "load_document", "parse_override_value", "parse_path", "path_str", "read_toml"]


def copy_document(value: Any) -> Any:
    """A deep copy of a TOML document (tables, lists and scalars), several times quicker than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: copy_document(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_document(v) for v in value]
    return value if isinstance(value, (str, int, float, bool)) or value is None else copy.deepcopy(value)


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
_QUOTED = re.compile(r'"(?P<key>[^"]+)"')


def parse_path(path: str) -> list[str | int]:
    """``"flows[1].params.beta"`` → ``["flows", 1, "params", "beta"]``; a malformed path is a :class:`SpecError`.

    A key in double quotes is one key, dots and all, as in TOML:
    ``sweep."topology.bottleneck.buffer"`` → ``["sweep", "topology.bottleneck.buffer"]``
    (a sweep axis, so that ``--set`` can change it).
    """
    parts: list[str | int] = []
    pieces = re.findall(r'"[^"]*"|[^.]+', path) if '"' in path else path.split(".")
    if '"' in path and ".".join(pieces) != path:
        pieces = [path]
    for piece in pieces:
        q = _QUOTED.fullmatch(piece)
        if q is not None:
            parts.append(q["key"])
            continue
        m = _PATH_TOKEN.fullmatch(piece)
        if m is None:
            raise SpecError(
                path, 'not a field path (expected e.g. "duration", "topology.bottleneck.rate" or "flows[1].cc")'
            )
        parts.append(m["key"])
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m["idx"]))
    return parts


def path_str(parts: list[str | int]) -> str:
    """The inverse of :func:`parse_path`."""
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
    out: dict[str, Any] = copy_document(dict(raw))
    for path, value in overrides.items():
        parts = parse_path(path)
        node: Any = out
        for i, part in enumerate(parts[:-1]):
            nxt = parts[i + 1]
            where = path_str(parts[: i + 1])
            if isinstance(part, int):
                if not isinstance(node, list):
                    raise SpecError(where, "is not a list")
                if part >= len(node):
                    raise SpecError(where, f"no such entry (the list has {len(node)})")
                node = node[part]
                continue
            if not isinstance(node, dict):
                raise SpecError(path_str(parts[:i]), "is not a table")
            if part not in node:
                if isinstance(nxt, int):
                    raise SpecError(where, f"no such entry (there is no {part} list)")
                node[part] = {}
            node = node[part]
        last = parts[-1]
        if isinstance(last, int):
            if not isinstance(node, list):
                raise SpecError(path_str(parts[:-1]), "is not a list")
            if last >= len(node):
                raise SpecError(path_str(parts), f"no such entry (the list has {len(node)})")
            node[last] = copy_document(value)
        else:
            if not isinstance(node, dict):
                raise SpecError(path_str(parts[:-1]), "is not a table")
            node[last] = copy_document(value)
    return out


def _anchor_cc_modules(raw: dict[str, Any], folder: Path) -> None:
    """A relative ``cc_module`` .py path is relative to the experiment file's folder."""
    mods = raw.get("cc_module")
    if isinstance(mods, str):
        if mods.endswith(".py") and not Path(mods).is_absolute():
            raw["cc_module"] = str((folder / mods).absolute())
    elif isinstance(mods, list):
        raw["cc_module"] = [
            str((folder / m).absolute()) if isinstance(m, str) and m.endswith(".py") and not Path(m).is_absolute() else m
            for m in mods
        ]


def _anchor_traces(raw: dict[str, Any], folder: Path) -> None:
    """A relative link ``trace`` path is relative to the experiment file's folder."""
    topo = raw.get("topology")
    if not isinstance(topo, dict):
        return
    tables: list[Any] = [topo.get("bottleneck"), topo.get("reverse"), topo.get("link")]
    for key in ("hop", "links"):
        if isinstance(topo.get(key), list):
            tables += topo[key]
    tables += [t.get("reverse") for t in list(tables) if isinstance(t, dict)]
    for t in tables:
        if isinstance(t, dict) and isinstance(t.get("trace"), str):
            p = Path(t["trace"])
            if not p.is_absolute() and (folder / p).exists():
                t["trace"] = str((folder / p).absolute())


def load_document(
    source: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> tuple[dict[str, Any], str]:
    """An experiment document with its overrides applied, and its default name.

    ``source`` is a file (its stem is the default name) or a dict
    ("experiment"); ``overrides`` replace top-level keys, ``set`` maps field
    paths to values and ``seed`` replaces the seed, in that order.
    """
    if isinstance(source, Mapping):
        raw, default_name = copy_document(dict(source)), "experiment"
    else:
        raw, default_name = read_toml(source), Path(source).stem
        _anchor_cc_modules(raw, Path(source).parent)
        _anchor_traces(raw, Path(source).parent)
    if overrides:  # raw is already this call's own copy: no need to copy it again for nothing
        raw = apply_overrides(raw, overrides)
    if set:
        raw = apply_overrides(raw, set)
    if seed is not None:
        raw["seed"] = seed
    return raw, default_name
