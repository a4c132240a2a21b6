"""What the summary's metrics need of a run's traces, gathered as the trace goes by.

A run's per-flow trace grows with its duration (one row per flow per
interval); the metrics of :mod:`.metrics` need only sums of it: the bytes
each flow put through the bottleneck over the steady-state window, over
fixed bins (convergence, stability) and around each flow's stop
(responsiveness), and the bytes sent over the utilisation windows.
:class:`TraceSums` takes the trace in chunks of whole intervals, in time
order, keeps those sums and nothing else, so its memory depends on the
number of flows and bins, not on the number of rows. A whole trace is one
chunk. Byte counts are integers summed exactly, so the metrics come out
the same however the trace was cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

NS_PER_S = 1_000_000_000

__all__ = ["TraceSums"]


class _Stop:
    """Responsiveness around one flow's stop (see :func:`.metrics.responsiveness`)."""

    def __init__(self, flow: int, stop: int, n: int) -> None:
        self.flow = flow
        self.stop = stop
        # Bytes of every flow over (stop - average, stop]: the stopping flow's is
        # the freed capacity, the others' their rate before.
        self.span = [0] * n
        self.others: list[int] | None = None
        self.hit: dict[float, int | None] = {0.8: None, 0.95: None}
        self.freed = 0.0
        self.before = 0.0


class TraceSums:
    """Sums over a run's trace for :func:`.metrics.summarize`.

    ``windows`` are the ``(lo, hi]`` spans of queue ``tx_bytes`` and of
    per-flow bytes that the summary needs; ``bins`` the ``(lo, hi,
    bin_ns)`` binnings of per-flow rates; ``stops`` each flow's stop time
    before the end of the run (None for none), with ``average_ns`` the span
    before a stop that sets the capacity it frees.
    """

    def __init__(
        self,
        n_flows: int,
        starts: Sequence[int],
        windows: Sequence[tuple[int, int]],
        bins: Sequence[tuple[int, int, int]],
        stops: Sequence[int | None],
        interval_ns: int,
        average_ns: int,
    ) -> None:
        self.n = n_flows
        self.starts = list(starts)
        self.interval_ns = interval_ns
        self.average_ns = average_ns
        self.flow_rows = 0
        self.queue_rows = 0
        self.tx = {w: 0 for w in windows}
        self.flow_bytes = {w: np.zeros(n_flows, dtype=np.float64) for w in windows}
        self.bins: dict[tuple[int, int, int], npt.NDArray[np.float64]] = {}
        for lo, hi, bin_ns in bins:
            n_bins = (hi - lo) // bin_ns if bin_ns > 0 else 0
            self.bins[(lo, hi, bin_ns)] = np.zeros((n_flows, max(n_bins, 0)))
        self._stops = [_Stop(i, int(s), n_flows) for i, s in enumerate(stops) if s is not None]

    def add(
        self,
        flows: Mapping[str, npt.NDArray[Any]],
        queue: Mapping[str, npt.NDArray[Any]],
        ends: Sequence[int | None],
    ) -> None:
        """One chunk: decoded flow and queue trace columns (whole intervals, later than the last
        chunk's) and each flow's end where known when the chunk was taken (None: not yet ended)."""
        qt = queue.get("t_ns")
        if qt is not None and len(qt):
            self.queue_rows += len(qt)
            tx = queue["tx_bytes"]
            for lo, hi in self.tx:
                sel = (qt > lo) & (qt <= hi)
                self.tx[(lo, hi)] += int(tx[sel].sum())
        t = flows.get("t_ns")
        if t is None or len(t) == 0:
            return
        self.flow_rows += len(t)
        flow = flows["flow"].astype(np.int64)
        nbytes = flows["bottleneck_bytes"]
        weights = nbytes.astype(np.float64)
        for (lo, hi), acc in self.flow_bytes.items():
            sel = (t > lo) & (t <= hi)
            acc += np.bincount(flow[sel], weights=weights[sel], minlength=self.n)
        for (lo, _hi, bin_ns), out in self.bins.items():
            n_bins = out.shape[1]
            if n_bins == 0:
                continue
            sel = (t > lo) & (t <= lo + n_bins * bin_ns)
            b = (t[sel].astype(np.int64) - lo - 1) // bin_ns
            np.add.at(out, (flow[sel], b), weights[sel])
        for st in self._stops:
            self._add_stop(st, t, flow, nbytes, ends)

    def _add_stop(
        self, st: _Stop, t: npt.NDArray[Any], flow: npt.NDArray[np.int64], nbytes: npt.NDArray[Any], ends: Sequence[int | None]
    ) -> None:
        span = (t > st.stop - self.average_ns) & (t <= st.stop)
        if span.any():
            for j in np.unique(flow[span]):
                st.span[int(j)] += int(nbytes[span & (flow == j)].sum())
        after = t > st.stop
        if not after.any():
            return
        if st.others is None:
            # Everything that ended by the stop is known now (this chunk reaches past it).
            st.others = [
                j
                for j in range(self.n)
                if j != st.flow and self.starts[j] < st.stop and (ends[j] is None or int(ends[j]) > st.stop)
            ]
            st.freed = float(st.span[st.flow]) * 8.0 * NS_PER_S / self.average_ns
            st.before = float(sum(st.span[j] for j in st.others)) * 8.0 * NS_PER_S / self.average_ns
        if not st.others or st.freed <= 0 or all(v is not None for v in st.hit.values()):
            return
        mine = np.isin(flow, np.asarray(st.others, dtype=np.int64))
        sel = after & mine
        times = np.unique(t[sel])
        agg = (
            np.bincount(np.searchsorted(times, t[sel]), weights=nbytes[sel].astype(np.float64), minlength=len(times))
            * 8.0
            * NS_PER_S
            / self.interval_ns
        )
        for f in st.hit:
            if st.hit[f] is None:
                hit = np.flatnonzero(agg >= st.before + f * st.freed)
                if len(hit):
                    st.hit[f] = int(times[hit[0]])

    # -- what the metrics read

    def has_flow_trace(self) -> bool:
        return self.flow_rows > 0

    def has_queue_trace(self) -> bool:
        return self.queue_rows > 0

    def tx_bytes(self, window: tuple[int, int]) -> int:
        """Queue ``tx_bytes`` summed over intervals ending in ``(lo, hi]``."""
        return self.tx[window]

    def window_bytes(self, window: tuple[int, int]) -> npt.NDArray[np.float64]:
        """Per flow: bottleneck bytes of the intervals ending in ``(lo, hi]``."""
        return self.flow_bytes[window]

    def binned_rates(self, lo: int, hi: int, bin_ns: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """As :func:`.metrics.binned_rates` over the whole trace."""
        out = self.bins[(lo, hi, bin_ns)]
        n_bins = out.shape[1]
        ends = lo + bin_ns * np.arange(1, n_bins + 1, dtype=np.int64)
        return ends, out * 8.0 * NS_PER_S / bin_ns if n_bins else out

    def responsiveness(self, lifetimes: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
        """As :func:`.metrics.responsiveness` (times in ns; rounded by the caller)."""
        out = []
        for st in self._stops:
            others = [j for j, (s, e) in enumerate(lifetimes) if j != st.flow and s < st.stop and e > st.stop]
            if not others:
                continue
            freed = float(st.span[st.flow]) * 8.0 * NS_PER_S / self.average_ns
            row: dict[str, Any] = {"flow": st.flow, "stop_ns": st.stop, "freed_bps": freed}
            for f, at in st.hit.items():
                row[f"t{round(f * 100)}_ns"] = None if at is None or freed <= 0 else at - st.stop
            out.append(row)
        return out
