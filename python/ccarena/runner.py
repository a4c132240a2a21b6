"""Running an experiment: ``ccarena.run(spec) -> Result``, in the simulator
(``backend="sim"``, the default) or on the kernel's TCP through the link
emulator (``backend="emu"``, see :mod:`ccarena.emulate`); and
``ccarena.compare(spec)``, which runs both (see :mod:`ccarena.compare`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _core
from .results import Result, ResultExistsError
from .spec import Spec, load_spec

__all__ = ["BACKENDS", "compare", "run"]

BACKENDS = ("sim", "emu")
"""Where an experiment can run: the simulator, or real TCP through the link emulator."""


def run(
    spec: str | Path | Mapping[str, Any] | Spec,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    figure: bool = True,
    backend: str = "sim",
    **overrides: Any,
) -> Result:
    """Runs one experiment and returns its :class:`Result`.

    ``spec`` is the path of an experiment file, a dict with the same
    structure, or a :class:`~ccarena.spec.Spec`. Top-level keys can be
    replaced with keyword arguments (``run("exp.toml", duration="10s")``),
    any field with ``set`` (``set={"flows[0].cc": "cubic"}``), and the seed
    with ``seed``.

    With ``out`` the run is saved to that folder (spec.toml, summary.json,
    flows.parquet, queue.parquet, transfers.parquet and, unless
    ``figure=False``, figure.png).
    The folder must not exist: results are never overwritten. It appears
    only once complete; a failed run leaves nothing behind.

    ``backend="emu"`` runs the flows as real Linux TCP connections through
    ccarena's link emulator (root only; see :mod:`ccarena.emulate`); the
    result has the same form, and its summary adds ``backend`` and ``emu``
    (kernel, sysctls, the emulator's timing).

    Raises :class:`~ccarena.spec.SpecError` for a mistake in the experiment
    (before anything runs or is written) and
    :class:`~ccarena.results.ResultExistsError` if ``out`` exists; with the
    emulator also :class:`~ccarena.emulate.EmuUnavailable` when this machine
    cannot emulate.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if backend == "emu":
        return _run_emu(spec, seed=seed, set=set, out=out, figure=figure, **overrides)
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


def _run_emu(
    spec: str | Path | Mapping[str, Any] | Spec,
    *,
    seed: int | None,
    set: Mapping[str, Any] | None,
    out: str | Path | None,
    figure: bool,
    **overrides: Any,
) -> Result:
    from . import emulate

    if isinstance(spec, Spec) and seed is None and not set and not overrides:
        resolved = spec
        emulate.check_spec(resolved)
    else:
        source = spec.resolved if isinstance(spec, Spec) else spec
        resolved = emulate.load_spec(source, seed=seed, set=set, **overrides)
    out_path = Path(out) if out is not None else None
    if out_path is not None and (out_path.exists() or out_path.is_symlink()):
        raise ResultExistsError(out_path)
    raw = emulate.emulate(resolved)
    result = Result.from_raw(raw, resolved)
    result.summary.update(emulate.summary_extras(raw))
    if out_path is not None:
        result.save(out_path, figure=figure)
    return result


def compare(
    spec: str | Path | Mapping[str, Any] | Spec,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    figure: bool = True,
    **overrides: Any,
) -> Any:
    """Runs an experiment in both backends; returns a :class:`ccarena.compare.Comparison`."""
    from .compare import compare as _compare

    return _compare(spec, seed=seed, set=set, out=out, figure=figure, **overrides)
