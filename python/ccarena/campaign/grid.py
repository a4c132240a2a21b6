"""The grid of a campaign: points, repeats, seeds and baseline runs, from ``[sweep]``.

A ``[sweep]`` table turns an experiment into a campaign::

    [sweep]
    "topology.bottleneck.buffer" = ["0.02bdp", "0.1bdp", "1bdp"]   # one axis
    "flows[0].cc" = ["cubic", "htcp"]                              # another
    "topology.rtt" = ["16ms", "160ms"]
    "flows[1].rtt" = ["16ms", "160ms"]
    zip = [["topology.rtt", "flows[1].rtt"]]   # these two vary together: one axis
    repeat = 20                                # runs per point
    baseline = "reno"                          # or a list: every point also with every flow on reno

Each key is a field path as ``--set`` takes it, each value a list; the grid
is the Cartesian product of the axes, in the order the keys are written
(the first axis varies slowest). A file without ``[sweep]`` is a campaign of
one point and one run.

Seeds: repeat 0 runs with the file's seed; repeat r > 0 with a seed mixed
from the file's seed and r (SplitMix64), so that every point uses the same
seeds (common random numbers: differences between points are not noise of
different draws) and campaigns with neighbouring seeds do not share runs.

Baselines: with ``baseline = "reno"`` every point (and repeat) is also run
with every flow group's algorithm replaced by reno (its parameters
dropped), marked ``baseline = "reno"`` in the catalogue; friendliness
against a baseline compares a point's run with its baseline run.

Run ids are derived from the point's values, the baseline and the repeat,
not from positions, so they stay the same when a campaign is resumed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..spec import Spec, SpecError, apply_overrides, resolve
from ..spec.document import copy_document, parse_path
from ..spec.engine import EngineConfig
from ..spec.errors import did_you_mean
from ..spec.fields import algorithms, known_algorithm
from ..spec.network import link_tables
from ..spec.resolve import _cc_modules
from ..spec.schema import EXPERIMENT

__all__ = ["SWEEP_KEYS", "Grid", "Run", "derive_seed", "grid", "has_randomness"]

SWEEP_KEYS = ("zip", "repeat", "baseline")
"""Keys of ``[sweep]`` that are not field paths."""
MAX_REPEAT = 100_000
MAX_RUNS = 10_000_000


def derive_seed(seed: int, repeat: int) -> int:
    """The seed of repeat ``repeat``: the file's seed for repeat 0, else SplitMix64 of (seed, repeat).

    ``derive_seed(1, 0)`` = 1; the others are 63-bit integers that depend on both.
    """
    if repeat == 0:
        return seed
    z = (seed + repeat * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF


@dataclass(frozen=True)
class Run:
    """One run of a campaign: which point, repeat and baseline, its seed and its experiment."""

    run_id: str
    point: int
    repeat: int
    seed: int
    baseline: str | None
    values: tuple[tuple[str, Any], ...]
    """The swept paths and this point's values, in axis order."""
    spec: Spec


@dataclass(frozen=True)
class Grid:
    """A resolved campaign: its axes, points and runs, every one validated."""

    paths: tuple[str, ...]
    """The swept field paths, in axis order (zipped paths next to each other)."""
    points: tuple[tuple[tuple[str, Any], ...], ...]
    repeat: int
    baselines: tuple[str, ...]
    runs: tuple[Run, ...]
    fixed: tuple[str, ...]
    """The points (with ", baseline NAME" for a baseline's variant) that draw no random numbers, by
    label: their repeats give identical results."""

    @property
    def variants(self) -> int:
        """Points times (1 + baselines): each baseline's variant of a point counted as a point."""
        return len(self.points) * (1 + len(self.baselines))

    @property
    def randomness(self) -> bool:
        """Whether some point draws random numbers (else every point's repeats are identical)."""
        return len(self.fixed) < self.variants

    def describe(self) -> dict[str, Any]:
        """The resolved grid as plain data (sweep.toml stores it)."""
        return {
            "paths": list(self.paths),
            "points": [dict(p) for p in self.points],
            "repeat": self.repeat,
            "baseline": list(self.baselines),
            "runs": len(self.runs),
        }


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _sweep_table(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``[sweep]``; a key that is neither one of :data:`SWEEP_KEYS` nor a path into the experiment is an error."""
    sweep = raw.get("sweep", {})
    if not isinstance(sweep, dict):
        raise SpecError("sweep", "expected a table ([sweep]) of field paths and lists of values")
    for key, value in sweep.items():
        head = key.split(".")[0].split("[")[0]
        if key in SWEEP_KEYS or head in EXPERIMENT.names or head == "sweep" or not _KEY.fullmatch(head):
            continue  # _axes checks field paths (and refuses "sweep.*"); malformed ones get its message
        hint = did_you_mean(head, (*SWEEP_KEYS, *EXPERIMENT.names)).strip()
        if isinstance(value, list) and value and not hint:
            continue  # an axis of some other path: the experiment's check of its keys names it
        if "." in key or "[" in key:
            raise SpecError(f"sweep.{json.dumps(key)}", f'unknown key "{head}" {hint or "in the experiment"}')
        known = f'(known: {", ".join(SWEEP_KEYS)}, or a field path such as "flows[0].cc")'
        raise SpecError(f"sweep.{key}", f"unknown key {hint or known}")
    return sweep


def _axes(sweep: Mapping[str, Any]) -> list[list[tuple[str, list[Any]]]]:
    """The axes: each a list of (path, values), one path unless zipped."""
    values: dict[str, list[Any]] = {}
    for key, v in sweep.items():
        if key in SWEEP_KEYS:
            continue
        where = f"sweep.{json.dumps(key)}" if "." in key or "[" in key else f"sweep.{key}"
        try:
            parse_path(key)
        except SpecError:
            raise SpecError(
                where, 'not a field path (expected e.g. "topology.bottleneck.rate" or "flows[1].cc")'
            ) from None
        if key.split(".")[0].split("[")[0] == "sweep":
            raise SpecError(where, "cannot sweep the sweep table itself")
        if not isinstance(v, list) or not v:
            raise SpecError(where, 'expected a non-empty list of values (e.g. ["10Mbps", "100Mbps"])')
        values[key] = v
    zips = sweep.get("zip", [])
    if not isinstance(zips, list) or not all(isinstance(z, list) and z for z in zips):
        raise SpecError("sweep.zip", 'expected a list of lists of field paths (e.g. [["topology.rtt", "flows[1].rtt"]])')
    zipped: dict[str, int] = {}
    for zi, group in enumerate(zips):
        for path in group:
            if not isinstance(path, str) or path not in values:
                raise SpecError(f"sweep.zip[{zi}]", f"{json.dumps(path)} is not a swept path of [sweep]")
            if path in zipped:
                raise SpecError(f"sweep.zip[{zi}]", f"{json.dumps(path)} is already in zip[{zipped[path]}]")
            zipped[path] = zi
        lengths = {len(values[p]) for p in group}
        if len(lengths) != 1:
            desc = ", ".join(f"{p} has {len(values[p])}" for p in group)
            raise SpecError(f"sweep.zip[{zi}]", f"zipped paths need lists of the same length ({desc})")
    axes: list[list[tuple[str, list[Any]]]] = []
    done: set[int] = set()
    for path, v in values.items():
        if path not in zipped:
            axes.append([(path, v)])
        elif zipped[path] not in done:
            done.add(zipped[path])
            axes.append([(p, values[p]) for p in zips[zipped[path]]])
    return axes


def _repeat(sweep: Mapping[str, Any]) -> int:
    n = sweep.get("repeat", 1)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_REPEAT:
        raise SpecError("sweep.repeat", f"expected an integer in [1, {MAX_REPEAT}], got {json.dumps(n)}")
    return n


def _baselines(sweep: Mapping[str, Any]) -> tuple[str, ...]:
    b = sweep.get("baseline", [])
    names = [b] if isinstance(b, str) else b
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise SpecError("sweep.baseline", 'expected an algorithm name or a list of them (e.g. "reno")')
    return tuple(names)


def _point_label(values: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{p} = {json.dumps(v)}" for p, v in values) if values else "the single point"


def _run_id(values: Sequence[tuple[str, Any]], baseline: str | None, repeat: int, width: int) -> str:
    key = json.dumps([list(values), baseline], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    base = f"-base-{baseline}" if baseline else ""
    return f"{digest}{base}-r{repeat:0{width}d}"


def _with_baseline(doc: dict[str, Any], algorithm: str) -> dict[str, Any]:
    out = copy_document(doc)
    for g in out.get("flows", []) if isinstance(out.get("flows"), list) else []:
        if isinstance(g, dict):
            g["cc"] = algorithm
            g.pop("params", None)
    return out


def _with_seed(spec: Spec, doc: dict[str, Any], seed: int, default_name: str) -> Spec:
    """The same experiment with another seed: only the seed changes unless start times are drawn from it."""
    if seed == spec.seed:
        return spec
    if any(isinstance(g.get("start"), dict) for g in spec.resolved.get("flows", [])):
        return resolve({**doc, "seed": seed}, default_name=default_name)
    engine = EngineConfig({**spec.engine, "seed": seed})
    return Spec({**spec.resolved, "seed": seed}, engine, spec.flow_groups, spec.metrics, spec.warnings)


_RANDOM_QDISCS = ("red", "pie")
"""Queue disciplines that flip coins from the run's seed (RED's and PIE's drop or mark decisions)."""


def has_randomness(spec: Spec) -> bool:
    """Whether the run draws any random number: loss, background traffic, RTT or start distributions,
    a RED or PIE queue, a link's jitter, or an algorithm that does (the registry's ``randomized``: BBR's
    ProbeBW phase; a Python algorithm's class attribute ``randomized``)."""
    r = spec.resolved
    algos = algorithms()
    from ..pycc import python_algorithms

    python = python_algorithms()
    for g in r.get("flows", []):
        cc = str(g["cc"])
        if algos[cc].get("randomized", False) or bool(getattr(python.get(cc), "randomized", False)):
            return True
    links = link_tables(r)
    if any("jitter" in link or "jitter" in (link.get("reverse") or {}) for link in links):
        return True
    if any(link.get("qdisc") in _RANDOM_QDISCS for link in links):
        return True
    for link in links:
        loss = link.get("loss", 0.0)
        if isinstance(loss, dict) and loss.get("model") != "periodic":
            return True
        if not isinstance(loss, dict) and float(loss) > 0.0:
            return True
    bg = r.get("background", {})
    if bg.get("web") or bg.get("onoff"):
        return True
    if any(u.get("pattern") == "poisson" for u in bg.get("udp", [])):
        return True
    return any(isinstance(g.get("start"), dict) and g["start"]["lo"] != g["start"]["hi"] for g in r.get("flows", []))


def grid(raw: Mapping[str, Any], *, default_name: str = "experiment") -> Grid:
    """Resolves every run of a campaign document (an experiment with an optional ``[sweep]``).

    Every point (and its baselines) is resolved before anything runs; a bad
    value raises :class:`SpecError` whose path names the point's values and
    the field, e.g. ``[topology.bottleneck.rate = "0Mbps"] topology.bottleneck.rate: ...``.
    A mistake of the base file that no swept value changes (a field no axis
    sets, wrong alike in the file as written, at the first and at the last
    point) is reported as the file's, without a point: ``flows[0].cc: ...``.
    """
    sweep = _sweep_table(raw)
    base = {k: v for k, v in raw.items() if k != "sweep"}
    if "cc_module" in base:  # the Python algorithms a sweep names must be registered to be checked
        _cc_modules(dict(base))
    axes = _axes(sweep)
    repeat = _repeat(sweep)
    baselines = _baselines(sweep)
    for b in baselines:
        if not known_algorithm(b, "sweep.baseline"):
            names = algorithms()
            hint = did_you_mean(b, names, n=2).strip() or f"(known: {', '.join(names)})"
            raise SpecError("sweep.baseline", f'unknown algorithm "{b}" {hint}')
    n_points = 1
    for axis in axes:
        n_points *= len(axis[0][1])
    n_runs = n_points * repeat * (1 + len(baselines))
    if n_runs > MAX_RUNS:
        raise SpecError("sweep", f"{n_runs:,} runs: at most {MAX_RUNS:,} in one campaign")
    paths = tuple(p for axis in axes for p, _ in axis)
    width = len(str(repeat - 1))
    seed = raw.get("seed", 1)
    points: list[tuple[tuple[str, Any], ...]] = []
    runs: list[Run] = []
    fixed: list[str] = []
    for index, combo in enumerate(itertools.product(*[range(len(axis[0][1])) for axis in axes])):
        values = tuple((p, vs[i]) for axis, i in zip(axes, combo, strict=True) for p, vs in axis)
        points.append(values)
        doc = apply_overrides(base, dict(values)) if values else copy_document(base)
        variants: list[tuple[str | None, dict[str, Any]]] = [(None, doc)]
        variants += [(b, _with_baseline(doc, b)) for b in baselines]
        for baseline, variant in variants:
            where = _point_label(values) + (f", baseline {baseline}" if baseline else "")
            try:
                spec0 = resolve(variant, default_name=default_name)
            except SpecError as e:
                if index == 0 and baseline is None and _base_error(e, base, axes, paths, default_name):
                    raise SpecError(e.path, e.message) from None
                raise SpecError(f"[{where}] {e.path}", e.message) from None
            if not has_randomness(spec0):
                fixed.append(where)
            for r in range(repeat):
                run_seed = derive_seed(int(seed) if isinstance(seed, int) else 1, r)
                spec = _with_seed(spec0, variant, run_seed, default_name)
                runs.append(Run(_run_id(values, baseline, r, width), index, r, run_seed, baseline, values, spec))
    return Grid(paths, tuple(points), repeat, baselines, tuple(runs), tuple(fixed))


def _base_error(
    e: SpecError,
    base: dict[str, Any],
    axes: Sequence[Sequence[tuple[str, list[Any]]]],
    paths: Sequence[str],
    default_name: str,
) -> bool:
    """Whether the first point's error ``e`` is the base file's own: at a field no axis sets (nor a table
    holding one), and the same in the file as written and at the last point (every axis at its other end)."""
    try:
        where = parse_path(e.path)
    except SpecError:
        where = []  # a path that is not a field (the file's name): not one an axis sets
    for p in paths:
        swept = parse_path(p)
        n = min(len(swept), len(where))
        if n and swept[:n] == where[:n]:
            return False

    def same(doc: Mapping[str, Any]) -> bool:
        try:
            resolve(doc, default_name=default_name)
        except SpecError as other:
            return (other.path, other.message) == (e.path, e.message)
        return False

    last = {p: vs[-1] for axis in axes for p, vs in axis}
    return same(base) and (not last or same(apply_overrides(base, last)))
