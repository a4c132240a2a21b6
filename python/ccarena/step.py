"""A run a program steers step by step: :class:`Simulation`.

::

    sim = ccarena.Simulation("exp.toml")
    while not sim.done:
        s = sim.step("100ms")          # every event up to now + 100 ms
        s.flows, s.queue               # the rows of those intervals (pandas)
        sim.set_cwnd(0, 40)            # then the flow continues from 40 packets
    result = sim.finish(out="runs/x")  # a ccarena.Result, saved as ccarena.run saves

A step runs the engine up to a time and hands back the trace rows recorded
since the last step: the columns of flows.parquet and queue.parquet, as
pandas DataFrames (``Step.flows``, ``Step.queue``) or Arrow tables
(``Step.flows_arrow``, ``Step.queue_arrow``). Rows come once per
``[measure] interval``, so a step shorter than the interval may bring none.

Stopping at a time changes nothing: events at exactly that time are handled
before the step returns, as in one run, and nothing is added to the event
queue. With nothing set between steps, a stepped run is the same run as
``ccarena.run`` makes, bit for bit, whatever the steps.

Between steps a flow's congestion window (packets) and pacing rate can be
set (:meth:`Simulation.set_cwnd`, :meth:`Simulation.set_pacing_rate`); the
sender continues from the new value and its algorithm keeps running (it may
change the value again on the next ACK). :meth:`Simulation.set_params`
restarts a flow's algorithm with other parameters.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .backends.sim import CHUNK_ROWS
from .results import Result, ResultExistsError
from .results.result import run_key
from .results.spool import TraceSpool
from .results.store import atomic_folder, exists
from .runner import Source, _file_field, _missing_parents, _remove_empty, _stamp
from .spec import Spec, SpecError, load_spec
from .spec.units import parse_time

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Simulation", "Step"]

_NOT_ENDED = 2**63 - 1

Columns = dict[str, tuple[str, bytes]]
"""The engine's trace columns: name → (numpy dtype, little-endian bytes)."""


def _ns(t: float | str) -> int:
    """A time as nanoseconds: seconds as a number, or a time string ("250ms")."""
    if isinstance(t, str):
        return parse_time(t)
    if isinstance(t, bool) or not isinstance(t, int | float) or not np.isfinite(t) or t < 0:
        raise ValueError(f"expected a time in seconds (a non-negative number) or a string such as '250ms', got {t!r}")
    return round(t * 1_000_000_000)


@dataclass
class Step:
    """What one step brought: the trace rows recorded since the step before.

    ``t_ns`` is the simulated time reached, ``done`` whether the experiment
    has reached its end. ``flows_arrow`` and ``queue_arrow`` have the
    columns of flows.parquet and queue.parquet (see
    :func:`ccarena.analysis.tables.flows_table`); ``flows`` and ``queue`` are
    the same as pandas DataFrames. A flow has rows only from its start to its
    end; an interval belongs to the step in which its end is reached.
    """

    t_ns: int
    done: bool
    flows_arrow: pa.Table
    queue_arrow: pa.Table
    _flows_df: pd.DataFrame | None = field(default=None, repr=False)
    _queue_df: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def time_s(self) -> float:
        return self.t_ns / 1e9

    @property
    def flows(self) -> pd.DataFrame:
        if self._flows_df is None:
            self._flows_df = self.flows_arrow.to_pandas()
        return self._flows_df

    @property
    def queue(self) -> pd.DataFrame:
        if self._queue_df is None:
            self._queue_df = self.queue_arrow.to_pandas()
        return self._queue_df


class Simulation:
    """One simulated run, advanced by the caller; see the module documentation.

    ``spec``, ``seed``, ``set`` and keyword overrides are those of
    :func:`ccarena.run`. Raises :class:`~ccarena.spec.SpecError` for a
    mistake in the experiment, as ``run`` does.
    """

    def __init__(
        self,
        spec: Source,
        *,
        seed: int | None = None,
        set: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(spec, Spec) and seed is None and not set and not overrides:
            resolved = spec
        else:
            source = spec.resolved if isinstance(spec, Spec) else spec
            resolved = load_spec(source, seed=seed, set=set, **overrides)
        self.spec: Spec = resolved
        window = resolved.metrics.get("packets_ns")
        packets = (int(window[0]), int(window[1])) if window else None
        try:
            self._engine = _core.Stepper(resolved.engine.to_dict(), packets)
        except ValueError as e:
            raise _file_field(SpecError("experiment", f"the engine refused it: {e}"), resolved) from None
        self._started, self._t0 = time.time(), time.perf_counter()
        # Every chunk taken so far: (flows_trace, queue_trace, flows), as the engine handed them.
        self._chunks: list[tuple[Columns, Columns, list[dict[str, Any]]]] = []
        self._n_flows = len(resolved.engine.flows)
        self._params: list[dict[str, Any]] = [dict(f.params or {}) for f in resolved.engine.flows]
        self._end_ns: int = self._engine.end_ns()
        self._finished = False

    @property
    def now_ns(self) -> int:
        """Simulated time reached, ns."""
        self._check_open()
        return int(self._engine.now_ns())

    @property
    def time_s(self) -> float:
        """Simulated time reached, s."""
        return self.now_ns / 1e9

    @property
    def end_ns(self) -> int:
        """The end of the experiment (its duration), ns."""
        return self._end_ns

    @property
    def done(self) -> bool:
        """Whether the experiment has reached its end (only :meth:`finish` is left)."""
        return self._finished or bool(self._engine.done)

    @property
    def n_flows(self) -> int:
        """Foreground flows (indices 0 … n − 1, as in the trace's ``flow`` column)."""
        return self._n_flows

    def run_until(self, t: float | str) -> Step:
        """Runs every event up to time ``t`` (seconds, or a time string such as
        ``"2.5s"``; the end of the experiment at most; not before now) and
        returns the rows recorded since the last step."""
        return self.run_until_ns(_ns(t))

    def step(self, dt: float | str) -> Step:
        """Runs for ``dt`` (seconds or a time string) from now; see :meth:`run_until`."""
        self._check_open()
        return self.run_until_ns(self.now_ns + _ns(dt))

    def run_until_ns(self, t_ns: int) -> Step:
        """:meth:`run_until` with the time in integer nanoseconds."""
        self._check_open()
        now = self.now_ns
        if t_ns < now:
            raise ValueError(f"time {t_ns} ns is before the simulated time reached ({now} ns)")
        self._engine.run_until(min(int(t_ns), self._end_ns))
        return self._take()

    def set_cwnd(self, flow: int, pkts: int) -> None:
        """Sets flow ``flow``'s congestion window to ``pkts`` packets (at least 1).
        The sender sends at once what the new window allows and its algorithm
        continues from there."""
        self._check_open()
        self._engine.set_cwnd(int(flow), int(pkts))

    def set_ssthresh(self, flow: int, pkts: int) -> None:
        """Sets flow ``flow``'s slow-start threshold to ``pkts`` packets (at least 2): a window at or
        above it grows by congestion avoidance, not slow start."""
        self._check_open()
        self._engine.set_ssthresh(int(flow), int(pkts))

    def set_pacing_rate(self, flow: int, rate: float | str) -> None:
        """Sets flow ``flow``'s pacing rate (bit/s of payload, or a rate string
        such as ``"40Mbps"``). It paces only a flow with ``pacing = true``; an
        algorithm with its own rate (BBR) replaces it when it next sets it,
        and for the others the sender recomputes it on every ACK (as Linux
        does), so it lasts until then."""
        from .spec.units import parse_rate

        self._check_open()
        bps = parse_rate(rate) if isinstance(rate, str) else int(rate)
        if bps < 0:
            raise ValueError(f"a pacing rate cannot be negative, got {rate!r}")
        self._engine.set_pacing_rate(int(flow), bps)

    def set_params(self, flow: int, **params: Any) -> None:
        """Changes parameters of flow ``flow``'s algorithm (``beta=0.5``); the
        others keep their current values. The algorithm restarts with them,
        as Linux restarts a live socket's algorithm when it is set
        (``tcp_reinit_congestion_control``): its own state starts afresh
        (BBR goes back to Startup) while the window, the RTT estimates and
        the rest of the sender's state stay. So even unchanged values change
        the run. The run's spec.toml and summary still give the parameters
        it started with. Raises ValueError for an unknown parameter or value."""
        self._check_open()
        flow = int(flow)
        if not 0 <= flow < self._n_flows:
            raise ValueError(f"no flow {flow} (there are {self._n_flows})")
        merged = {**self._params[flow], **params}
        self._engine.set_cc_params(flow, merged)
        self._params[flow] = merged

    def params(self, flow: int) -> dict[str, Any]:
        """Flow ``flow``'s algorithm parameters now."""
        return dict(self._params[int(flow)])

    def cwnd(self, flow: int) -> int:
        """Flow ``flow``'s congestion window now, packets."""
        self._check_open()
        return int(self._engine.cwnd_pacing(int(flow))[0])

    def pacing_rate(self, flow: int) -> int:
        """Flow ``flow``'s pacing rate now, bit/s (0: not set)."""
        self._check_open()
        return int(self._engine.cwnd_pacing(int(flow))[1])

    def finish(self, out: str | Path | None = None, *, figure: bool = True) -> Result:
        """Runs to the end and returns the run's :class:`~ccarena.Result`.

        With ``out`` the result folder is written as :func:`ccarena.run`
        writes it (the same code: the traces go through the same spool in
        the same chunks), so a stepped run with nothing changed gives the
        same files. ``out`` must not exist. The simulation cannot be used
        afterwards.
        """
        self._check_open()
        out_path = Path(out) if out is not None else None
        if out_path is not None and exists(out_path):
            raise ResultExistsError(out_path)
        self._engine.run_until(self._end_ns)
        self._take()
        raw: dict[str, Any] = dict(self._engine.finish())
        self._finished = True
        spec = self.spec
        if out_path is None:
            raw["flows_trace"], raw["queue_trace"] = (
                _concat([c[0] for c in self._chunks]),
                _concat([c[1] for c in self._chunks]),
            )
            result = Result.from_raw(raw, spec)
            _stamp(result, "sim", self._started, self._t0)
            return result
        packets = raw.pop("packets", None)
        made = _missing_parents(out_path)
        try:
            with atomic_folder(out_path) as tmp:
                spool = TraceSpool(spec, tmp, run_key(spec.resolved))
                try:
                    for chunk in self._engine_chunks():
                        spool(*chunk)
                    if packets is not None and _rows(packets):
                        spool.packets(packets)
                finally:
                    spool.close()
                result = Result.from_spool(raw, spec, spool)
                _stamp(result, "sim", self._started, self._t0)
                result.write_rest(tmp, figure=figure)
        except BaseException:
            _remove_empty(made)
            raise
        result.path = out_path
        return result

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("the simulation is finished")

    def _take(self) -> Step:
        """Takes the rows since the last step from the engine and makes them a :class:`Step`."""
        from .analysis.tables import flows_table, queue_table

        got: list[tuple[Columns, Columns, list[dict[str, Any]]]] = []
        self._engine.take(lambda f, q, flows: got.append((dict(f), dict(q), [dict(x) for x in flows])))
        chunk = got[0]
        self._chunks.append(chunk)
        flows_trace, queue_trace, flows = chunk
        known = [{**f, "end_ns": _NOT_ENDED if f["end_ns"] is None else f["end_ns"]} for f in flows]
        return Step(
            t_ns=int(self._engine.now_ns()),
            done=bool(self._engine.done),
            flows_arrow=flows_table({"flows_trace": flows_trace, "flows": known}, self.spec),
            queue_arrow=queue_table({"queue_trace": queue_trace}),
        )

    def _engine_chunks(self) -> list[tuple[Columns, Columns, list[dict[str, Any]]]]:
        """The trace cut into the chunks ``ccarena.run`` hands its spool.

        There the engine ends a chunk at the first probe that brings the
        rows waiting to at least :data:`CHUNK_ROWS` (each probe adds one row
        per flow and one queue row), the rest at the end; each chunk carries
        the flows' ends known at its last probe: a flow's final end if it is
        not after that probe, else None.
        """
        flows_trace = _concat([c[0] for c in self._chunks])
        queue_trace = _concat([c[1] for c in self._chunks])
        final = self._chunks[-1][2]
        n = self._n_flows
        probes = _rows(queue_trace)
        per = -(-CHUNK_ROWS // n) if n else probes + 1
        if _rows(flows_trace) == 0:
            per = probes + 1  # no flow rows (no flows, or no trace): one chunk at the end
        q_t = np.frombuffer(queue_trace["t_ns"][1], dtype=np.dtype(queue_trace["t_ns"][0])) if probes else None
        chunks = []
        for first in range(0, max(probes, 1), per):
            last = min(first + per, probes)
            if last == probes:
                flows = final
            else:
                assert q_t is not None
                t = int(q_t[last - 1])
                flows = [
                    {**f, "end_ns": f["end_ns"] if f["end_ns"] is not None and f["end_ns"] <= t else None}
                    for f in final
                ]
            chunks.append((_slice(flows_trace, first * n, last * n), _slice(queue_trace, first, last), flows))
        return chunks


def _rows(cols: Columns) -> int:
    """Rows of a set of engine columns."""
    for dtype, data in cols.values():
        return len(data) // np.dtype(dtype).itemsize
    return 0


def _concat(parts: list[Columns]) -> Columns:
    """Engine columns of several chunks, one after the other."""
    if not parts:
        return {}
    return {name: (dtype, b"".join(p[name][1] for p in parts)) for name, (dtype, _) in parts[0].items()}


def _slice(cols: Columns, start: int, stop: int) -> Columns:
    """Rows [start, stop) of engine columns."""
    out = {}
    for name, (dtype, data) in cols.items():
        size = np.dtype(dtype).itemsize
        out[name] = (dtype, data[start * size : stop * size])
    return out
