"""Running experiments: ``ccarena.run(spec) -> Result`` in either backend, and
``ccarena.compare(spec)``, which runs both and compares them.

``compare`` writes one folder::

    sim/           the simulated run (a normal result folder)
    emu/           the emulated run (the same, plus the kernel facts in summary.json)
    compare.json   the table of differences, per flow and overall
    compare.txt    the same table as text (what the command prints)
    compare.png    rate at the bottleneck and cwnd per flow, and the queue,
                   simulated (solid) over emulated (dashed)

and over several seeds (``repeat``) one such folder per seed, ``seed-N/``,
beside a compare.json and compare.txt of each backend's mean and range over
the seeds and the difference of the means.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core
from .backends import BACKENDS
from .backends.sim import simulate
from .results import Result, ResultExistsError
from .results.result import run_key
from .results.spool import TraceSpool
from .results.store import atomic_folder, exists
from .spec import Spec, SpecError, load_spec

__all__ = ["BACKENDS", "Comparison", "compare", "run"]

Source = str | Path | Mapping[str, Any] | Spec
"""An experiment: a file's path, a dict of the same shape, or a validated :class:`Spec`."""


def run(
    spec: Source,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    figure: bool = True,
    backend: str = "sim",
    progress: Callable[[int, int, float], None] | None = None,
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

    ``progress(simulated_ns, bottleneck_packets, wall_seconds)`` is called
    about ten times a second while the simulator runs.

    ``backend="emu"`` runs the flows as real Linux TCP connections through
    ccarena's link emulator (root only; see :mod:`ccarena.backends.emu`); the
    result has the same form, and its summary adds ``backend`` and ``emu``
    (kernel, sysctls, the emulator's timing).

    Raises :class:`~ccarena.spec.SpecError` for a mistake in the experiment
    (before anything runs or is written) and
    :class:`~ccarena.results.ResultExistsError` if ``out`` exists; with the
    emulator also :class:`~ccarena.backends.emu.EmuUnavailable` when this
    machine cannot emulate.
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
    if out_path is not None and exists(out_path):
        raise ResultExistsError(out_path)
    started, t0 = time.time(), time.perf_counter()
    if out_path is None:
        result = Result.from_raw(_simulate(resolved, progress), resolved)
        _stamp(result, "sim", started, t0)
        return result
    # Saved runs write their traces as they go: memory does not grow with the duration.
    # A run that fails leaves nothing: not its folder, nor the folders made to hold it.
    made = _missing_parents(out_path)
    try:
        with atomic_folder(out_path) as tmp:
            spool = TraceSpool(resolved, tmp, run_key(resolved.resolved))
            try:
                raw = _simulate(resolved, progress, sink=spool, packet_sink=spool.packets)
            finally:
                spool.close()
            result = Result.from_spool(raw, resolved, spool)
            _stamp(result, "sim", started, t0)
            result.write_rest(tmp, figure=figure)
    except BaseException as e:
        if type(e).__name__ == "CcHookError":
            _hook_log(out_path, e)
        else:
            _remove_empty(made)
        raise
    result.path = out_path
    return result


def _hook_log(out: Path, e: BaseException) -> Path:
    """Writes the traceback of a Python algorithm's failed hook next to where the run would have
    gone (``<out>.error.log``) and adds the log's path to the exception's first line."""
    line, tb = (list(e.args) + ["", ""])[:2]
    log = out.absolute().with_name(out.name + ".error.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"{line}\n\n{tb}".rstrip("\n") + "\n", encoding="utf-8")
    e.args = (f"{line} (traceback: {log})", tb)
    return log


def _missing_parents(out: Path) -> list[Path]:
    """The folders above ``out`` that do not exist yet, deepest first."""
    return [p for p in out.absolute().parents if not p.exists()]


def _remove_empty(folders: list[Path]) -> None:
    """Removes each folder (deepest first) if it is empty; one that is not is left alone."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


_ENGINE_REFUSED = "the engine refused it: "
"""How :func:`ccarena.backends.sim.simulate` words a configuration the engine refused."""


def _simulate(spec: Spec, progress: Callable[[int, int, float], None] | None, **kwargs: Any) -> dict[str, Any]:
    """:func:`~ccarena.backends.sim.simulate`, with an engine refusal naming the experiment's field."""
    try:
        return simulate(spec, progress, **kwargs)
    except SpecError as e:
        raise _file_field(e, spec) from None


def _file_field(e: SpecError, spec: Spec) -> SpecError:
    """The engine's refusal ``<engine field>: <what>`` as the experiment file's field.

    The validation applies the engine's own tables, so this is a backstop:
    a refusal it did not foresee still names the field the user wrote
    (``bottleneck.qdisc.interval_ns`` is ``topology.bottleneck.fq_codel.interval``,
    ``flows[3]`` the ``[[flows]]`` group the fourth flow came from). A field it
    cannot place stays as the engine named it, under ``experiment``.
    """
    import re

    from .spec.schema import qdisc_key

    if e.path != "experiment" or not e.message.startswith(_ENGINE_REFUSED):
        return e
    field, sep, what = e.message[len(_ENGINE_REFUSED) :].partition(": ")
    path: str | None = None
    if re.fullmatch(r"(bottleneck|reverse)\.qdisc", field) and (p := re.match(r"(\w+): ", what)):
        # A discipline's parameter: "bottleneck.qdisc: interval_ns: <what>".
        field, what = f"{field}.{p[1]}", what[p.end() :]
    if m := re.fullmatch(r"(bottleneck|reverse)\.qdisc\.(\w+)", field):
        link = spec.engine.bottleneck if m[1] == "bottleneck" else spec.engine.reverse
        kind = link.qdisc.kind if link.qdisc is not None else None
        path = f"topology.{m[1]}.{kind}.{qdisc_key({'name': m[2]})}" if kind else None
    elif m := re.fullmatch(r"(bottleneck|reverse)(\..+)", field):
        path = f"topology.{m[1]}{m[2]}"
    elif (m := re.fullmatch(r"flows\[(\d+)\](\..+)?", field)) and int(m[1]) < len(spec.flow_groups):
        path = f"flows[{spec.flow_groups[int(m[1])]}]{m[2] or ''}"
    elif field in ("duration", "interval"):
        path = "duration" if field == "duration" else "measure.interval"
    if not sep or path is None:
        return e
    return SpecError(path, f"{what} (refused by the engine)")


def _stamp(result: Result, backend: str, started: float, t0: float) -> None:
    from .results.provenance import provenance

    engine = result.engine_seconds
    result.provenance = provenance(backend, started, time.perf_counter() - t0, engine)


def _run_emu(
    spec: Source,
    *,
    seed: int | None,
    set: Mapping[str, Any] | None,
    out: str | Path | None,
    figure: bool,
    **overrides: Any,
) -> Result:
    from .backends import emu

    resolved = _emu_spec(spec, seed=seed, set=set, **overrides)
    out_path = Path(out) if out is not None else None
    if out_path is not None and exists(out_path):
        raise ResultExistsError(out_path)
    started, t0 = time.time(), time.perf_counter()
    raw = emu.emulate(resolved)
    result = Result.from_raw(raw, resolved)
    result.summary.update(emu.summary_extras(raw))
    _stamp(result, "emu", started, t0)
    if out_path is not None:
        result.save(out_path, figure=figure)
    return result


def _emu_spec(spec: Source, *, seed: int | None, set: Mapping[str, Any] | None, **overrides: Any) -> Spec:
    """The experiment, checked for what the kernel and the emulator can run."""
    from .backends import emu

    if isinstance(spec, Spec) and seed is None and not set and not overrides:
        emu.check_spec(spec)
        resolved = spec
    else:
        source = spec.resolved if isinstance(spec, Spec) else spec
        resolved = emu.load_spec(source, seed=seed, set=set, **overrides)
    return resolved


@dataclass
class Comparison:
    """Both runs of one experiment and the table of their differences.

    Over several seeds, ``seeds`` holds each seed's comparison, ``table``
    the means and ranges over them (:func:`ccarena.analysis.comparison.over_seeds`),
    and ``sim`` and ``emu`` are the first seed's runs.
    """

    sim: Result
    emu: Result
    table: list[dict[str, Any]]
    path: Path | None = None
    seeds: list[Comparison] | None = None

    def text(self) -> str:
        """The table as text."""
        from .analysis.comparison import format_table

        return format_table(self.table, self.sim.summary)


def compare(
    spec: Source,
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    figure: bool = True,
    repeat: int = 1,
    done: Callable[[Comparison], None] | None = None,
    **overrides: Any,
) -> Comparison:
    """Runs the experiment in the simulator and in the emulator and compares them.

    Every algorithm must exist in both (the kernel's and ccarena's). With
    ``repeat`` = N > 1 both run with N seeds, the experiment's seed and the
    N − 1 after it, and the table gives each backend's mean and range over
    them: one run of an experiment with random elements (or of the kernel)
    is one sample, and a difference smaller than the seeds' spread says
    little. ``done`` is called with each seed's comparison as it finishes.
    With ``out`` the folder described in this module is written (it must
    not exist; it appears only when complete).
    """
    from .analysis.comparison import differences, over_seeds
    from .backends import emu

    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise SpecError("repeat", f"expected a whole number of seeds, at least 1, got {repeat!r}")
    resolved = _emu_spec(spec, seed=seed, set=set, **overrides)
    known = {str(a["name"]) for a in _core.cc_algorithms()}
    for gi, g in enumerate(resolved.resolved["flows"]):
        if g["cc"] not in known:
            raise SpecError(
                f"flows[{gi}].cc",
                f'"{g["cc"]}" is not in the simulator (it has: {", ".join(sorted(known))}); compare needs both backends',
            )
    out_path = Path(out) if out is not None else None
    if out_path is not None and exists(out_path):
        raise ResultExistsError(out_path)
    emu.check_environment()
    pairs = []
    for k in range(repeat):
        one = resolved if k == 0 else _emu_spec(resolved, seed=resolved.seed + k, set=None)
        sim = run(one)
        emulated = run(one, backend="emu")
        pairs.append(Comparison(sim, emulated, differences(sim.summary, emulated.summary)))
        if done is not None:
            done(pairs[-1])
    if repeat == 1:
        cmp = pairs[0]
    else:
        cmp = Comparison(pairs[0].sim, pairs[0].emu, over_seeds([p.table for p in pairs]), seeds=pairs)
    if out_path is not None:
        with atomic_folder(out_path) as tmp:
            if repeat == 1:
                _write(cmp, tmp, figure)
            else:
                for p in pairs:
                    _write(p, tmp / f"seed-{p.sim.summary['seed']}", figure)
                seeds = [p.sim.summary["seed"] for p in pairs]
                _write_table(cmp, tmp, {"name": cmp.sim.summary["name"], "seeds": seeds})
        _located(cmp, out_path)
    return cmp


def _write(cmp: Comparison, folder: Path, with_figure: bool) -> None:
    """One seed's comparison: both result folders, the table and the figure."""
    from .analysis.comparison import figure

    folder.mkdir(exist_ok=True)
    cmp.sim.save(folder / "sim", figure=with_figure)
    cmp.emu.save(folder / "emu", figure=with_figure)
    _write_table(cmp, folder, {"name": cmp.sim.summary["name"], "seed": cmp.sim.summary["seed"]})
    if with_figure:
        figure(cmp.sim, cmp.emu).savefig(folder / "compare.png", dpi=120)


def _write_table(cmp: Comparison, folder: Path, head: dict[str, Any]) -> None:
    doc = {**head, "rows": cmp.table}
    (folder / "compare.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    (folder / "compare.txt").write_text(cmp.text() + "\n", encoding="utf-8")


def _located(cmp: Comparison, out: Path) -> None:
    """Points the comparison and its results at where they were saved."""
    cmp.path = out
    if cmp.seeds is None:
        cmp.sim.path = out / "sim"
        cmp.emu.path = out / "emu"
        return
    for p in cmp.seeds:
        _located(p, out / f"seed-{p.sim.summary['seed']}")
