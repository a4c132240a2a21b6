"""The simulator backend: one run of the compiled engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _core
from ..spec import Spec, SpecError

__all__ = ["CHUNK_ROWS", "simulate"]

CHUNK_ROWS = 1 << 16
"""Flow trace rows the engine holds before it hands them to a sink (about 33 MB in memory)."""


def simulate(
    spec: Spec,
    progress: Callable[[int, int, float], None] | None = None,
    *,
    sink: Callable[..., None] | None = None,
    chunk_rows: int = CHUNK_ROWS,
    packet_sink: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Runs the experiment in the simulator and returns its raw output.

    The GIL is released while the engine runs; between slices of about a
    tenth of a second signals are handled (Ctrl-C raises KeyboardInterrupt
    within that time) and ``progress(simulated_ns, bottleneck_packets,
    wall_seconds)`` is called. A configuration the engine refuses (which
    validation should have caught) is a :class:`SpecError`, never a bare
    ValueError.

    With ``sink``, the traces go to ``sink(flows_trace, queue_trace, flows)``
    in chunks of at least ``chunk_rows`` flow rows as the run goes (see
    :class:`ccarena.results.spool.TraceSpool`) and come back empty.

    With ``[measure] packets`` the packet log goes to ``packet_sink(columns)``
    the same way, or without one comes back as ``packets``
    (:func:`ccarena.results.packets.packets_table` reads either).
    """
    _register_python_algorithms(spec)
    window = spec.metrics.get("packets_ns")
    packets = (int(window[0]), int(window[1])) if window else None
    try:
        raw: dict[str, Any] = _core.simulate(
            spec.engine.to_dict(),
            progress,
            sink,
            chunk_rows,
            packets=packets,
            packet_sink=packet_sink if packets else None,
        )
    except ValueError as e:
        raise SpecError("experiment", f"the engine refused it: {e}") from None
    return raw


def _register_python_algorithms(spec: Spec) -> None:
    """A worker process (``--jobs``, Dask) runs a resolved experiment without validating it:
    it imports the experiment's ``cc_module`` and loads the entry points of the algorithms
    the registry does not know. An entry point that fails is a SpecError naming it."""
    from ..pycc import EntryPointError, ensure_registered, import_cc_modules

    if "cc_module" in spec.resolved:
        import_cc_modules(spec.resolved["cc_module"])
    names = {str(f.cc) for f in spec.engine.flows}
    names |= {str(s.cc) for s in spec.engine.tcp_sources}
    try:
        ensure_registered(names)
    except EntryPointError as e:
        raise SpecError("experiment", str(e)) from None
