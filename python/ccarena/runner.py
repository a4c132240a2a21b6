"""Running an experiment: ``ccarena.run(spec) -> Result``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _core
from .results import Result, ResultExistsError
from .spec import Spec, load_spec

__all__ = ["run"]


def run(
    spec: str | Path | Mapping[str, Any] | Spec,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    figure: bool = True,
    **overrides: Any,
) -> Result:
    """Runs one experiment in the simulator and returns its :class:`Result`.

    ``spec`` is the path of an experiment file, a dict with the same
    structure, or a :class:`~ccarena.spec.Spec`. Top-level keys can be
    replaced with keyword arguments (``run("exp.toml", duration="10s")``),
    any field with ``set`` (``set={"flows[0].cc": "cubic"}``), and the seed
    with ``seed``.

    With ``out`` the run is saved to that folder (spec.toml, summary.json,
    flows.parquet, queue.parquet and, unless ``figure=False``, figure.png).
    The folder must not exist: results are never overwritten. It appears
    only once complete; a failed run leaves nothing behind.

    Raises :class:`~ccarena.spec.SpecError` for a mistake in the experiment
    (before anything runs or is written) and
    :class:`~ccarena.results.ResultExistsError` if ``out`` exists.
    """
    source = spec.resolved if isinstance(spec, Spec) else spec
    if isinstance(spec, Spec) and seed is None and not set and not overrides:
        resolved = spec
    else:
        resolved = load_spec(source, seed=seed, set=set, **overrides)
    out_path = Path(out) if out is not None else None
    if out_path is not None and (out_path.exists() or out_path.is_symlink()):
        raise ResultExistsError(out_path)
    raw = _core.simulate(resolved.engine)
    result = Result.from_raw(raw, resolved)
    if out_path is not None:
        result.save(out_path, figure=figure)
    return result
