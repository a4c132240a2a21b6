"""Metrics: small pure functions, and the summary of one run.

Conventions:

* **Rate at the bottleneck** of a flow is the wire bytes (headers and
  retransmissions included) of that flow leaving the bottleneck queue,
  ×8 per second. It is the ground truth for sharing and fairness.
* **Goodput** is in-order application bytes delivered to the receiver, ×8
  per second of the flow's lifetime (headers and retransmissions excluded).
* **Utilisation** is bytes sent by the bottleneck link ×8 / (capacity ×
  time), counted from the start of the first flow to the end of the run.
* **Jain's index** ``(Σx)² / (n·Σx²)`` is taken over the per-flow rates at
  the bottleneck in the second half of the run (the window is reported as
  ``jain_window_s``); each flow's rate is its bytes in the window divided by
  the part of the window it was running, and flows that did not run in the
  window are left out.

Utilisation over the second half and Jain's index come from the traces, so
they are None when ``measure.trace = false``.

Background traffic (``[[background.*]]``) adds two entries:

* ``sources`` — per source: offered and achieved rate over the source's
  active time (payload bytes of the transfers it started / that were
  delivered; for UDP, bytes sent / bytes that crossed their link), and the
  numbers of transfers started and completed;
* ``transfers`` — the finite background TCP transfers: how many started and
  completed, and completion-time (FCT, first byte sent to last byte
  acknowledged) mean / p50 / p95 / p99 over the completed ones, overall and
  per size class (< 10 KB, 10–100 KB, 100 KB–1 MB, ≥ 1 MB). Transfers
  unfinished at the end are counted but have no FCT.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..spec.engine import EngineConfig
from ..spec.network import bottleneck_table
from .capacity import link_utilization
from .tracesums import TraceSums

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = [
    "FORMAT_VERSION",
    "SIZE_CLASSES",
    "alive_in_bins",
    "binned_rates",
    "convergence",
    "cov",
    "decode_columns",
    "fct_stats",
    "friendliness",
    "friendliness_vs_baseline",
    "goodput_bps",
    "ideal_fct_ns",
    "jain_index",
    "jain_window_ns",
    "rate_bps",
    "rates_from_sums",
    "responsiveness",
    "slowdown_stats",
    "source_stats",
    "stability",
    "summarize",
    "trace_sums",
    "transfer_stats",
    "utilization",
    "window_rates_bps",
]

FORMAT_VERSION = 2
"""Version of the result layout (summary.json, the Parquet columns). 2: flows are named ``flow``
everywhere (summary.json had ``id``); cumulative columns end in ``_total``; queue drops are
``drops_pkts``; no rows for a flow before it starts or after it ends."""

NS_PER_S = 1_000_000_000
NO_SESSION = 2**32 - 1
"""``session`` of a transfer of a Poisson (open-loop) source in the transfers table."""
UNFINISHED = 2**64 - 1
"""``fct_ns`` of a transfer that had not finished when the run ended."""

SIZE_CLASSES: tuple[tuple[str, int, int | None], ...] = (
    ("<10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">=1MB", 1_000_000, None),
)
"""Transfer size classes: (label, lowest size in bytes, first size above the class or None)."""


def decode_columns(columns: Mapping[str, tuple[str, bytes]]) -> dict[str, npt.NDArray[Any]]:
    """Turns the simulator's ``{name: (dtype, bytes)}`` columns into numpy arrays."""
    return {name: np.frombuffer(data, dtype=np.dtype(dtype)) for name, (dtype, data) in columns.items()}


def jain_index(xs: Iterable[float]) -> float:
    """Jain's fairness index ``(Σx)² / (n·Σx²)`` of non-negative allocations.

    It is 1 when everyone gets the same and k/n when k of n share equally and
    the rest get nothing: ``jain_index([10, 20, 30])`` ≈ 0.857,
    ``jain_index([1, 0, 0, 0])`` = 0.25. If every allocation is zero the
    shares are equal and the index is 1.0. An empty sequence or a negative
    or non-finite value raises ``ValueError``.
    """
    values = [float(x) for x in xs]
    if not values:
        raise ValueError("Jain's index needs at least one allocation")
    if any(not math.isfinite(x) or x < 0 for x in values):
        raise ValueError(f"Jain's index needs finite non-negative allocations, got {values}")
    total = math.fsum(values)
    squares = math.fsum(x * x for x in values)
    if squares == 0.0:
        return 1.0
    return total * total / (len(values) * squares)


def utilization(tx_bytes: float, rate_bps: float, seconds: float) -> float:
    """Link utilisation: ``tx_bytes·8 / (rate_bps·seconds)``.

    ``utilization(1.1e8, 100e6, 10)`` = 0.88. Zero time gives NaN.
    """
    if seconds <= 0 or rate_bps <= 0:
        return math.nan
    return tx_bytes * 8.0 / (rate_bps * seconds)


def rate_bps(nbytes: float, seconds: float) -> float:
    """Average rate in bit/s of ``nbytes`` over ``seconds`` (NaN for no time)."""
    if seconds <= 0:
        return math.nan
    return nbytes * 8.0 / seconds


def goodput_bps(goodput_bytes: float, start_ns: int, end_ns: int) -> float:
    """A flow's goodput over its lifetime, bit/s (NaN if it never ran)."""
    return rate_bps(goodput_bytes, (end_ns - start_ns) / NS_PER_S)


def jain_window_ns(duration_ns: int, interval_ns: int) -> tuple[int, int]:
    """The second-half window ``(lo, hi]``: lo is the last interval boundary at or before half time."""
    lo = (duration_ns // 2 // interval_ns) * interval_ns
    return lo, duration_ns


def window_rates_bps(
    t_ns: npt.NDArray[Any],
    flow: npt.NDArray[Any],
    nbytes: npt.NDArray[Any],
    lifetimes: Sequence[tuple[int, int]],
    window: tuple[int, int],
) -> dict[int, float]:
    """Per-flow rates over a window from interval byte counts.

    Rows with ``window[0] < t ≤ window[1]`` are summed per flow, and each
    flow's bytes are divided by the part of the window it was alive
    (``lifetimes[i] = (start_ns, end_ns)``). Flows alive for none of the
    window are left out.
    """
    n = len(lifetimes)
    sums = TraceSums(n, [start for start, _ in lifetimes], [window], [], [], 1, 1)
    sums.add({"t_ns": t_ns, "flow": flow, "bottleneck_bytes": nbytes}, {}, [None] * n)
    return rates_from_sums(sums.window_bytes(window), lifetimes, window)


def rates_from_sums(sums: npt.NDArray[Any], lifetimes: Sequence[tuple[int, int]], window: tuple[int, int]) -> dict[int, float]:
    """Per-flow rates from each flow's bytes over ``window``, over the part of it the flow was alive."""
    lo, hi = window
    out: dict[int, float] = {}
    for i, (start, end) in enumerate(lifetimes):
        alive = min(end, hi) - max(start, lo)
        if alive > 0:
            out[i] = float(sums[i]) * 8.0 * NS_PER_S / alive
    return out


def _average_ns(spec: Spec) -> int:
    """The averaging span of convergence and responsiveness: a whole number of intervals."""
    interval_ns = int(spec.engine.interval_ns)
    average_ns = max(int(spec.metrics.get("average_ns", NS_PER_S)), interval_ns)
    return average_ns - average_ns % interval_ns


def _windows(spec: Spec) -> tuple[tuple[int, int], tuple[int, int]]:
    """(the steady-state window, the second half) of the experiment."""
    eng = spec.engine
    duration_ns, interval_ns = int(eng.duration_ns), int(eng.interval_ns)
    m = spec.metrics
    half = jain_window_ns(duration_ns, interval_ns)
    window = (int(m["window_ns"][0]), int(m["window_ns"][1])) if m.get("window_ns") else half
    return window, half


def _stops(spec: Spec) -> list[int | None]:
    duration_ns = int(spec.engine.duration_ns)
    return [
        int(f.stop_ns) if f.stop_ns is not None and int(f.stop_ns) < duration_ns else None for f in spec.engine.flows
    ]


def trace_sums(spec: Spec) -> TraceSums:
    """An empty :class:`TraceSums` holding what :func:`summarize` needs of this experiment's traces."""
    eng = spec.engine
    duration_ns, interval_ns = int(eng.duration_ns), int(eng.interval_ns)
    window, half = _windows(spec)
    average_ns = _average_ns(spec)
    bins = [(0, duration_ns, average_ns), *((window[0], window[1], k * NS_PER_S) for k in (1, 10))]
    starts = [int(f.start_ns) for f in eng.flows]
    return TraceSums(len(starts), starts, [half, window], bins, _stops(spec), interval_ns, average_ns)


def _num(x: Any, ndigits: int) -> float | None:
    """A float rounded for summary.json; None for missing or non-finite values."""
    if x is None:
        return None
    v = float(x)
    if not math.isfinite(v):
        return None
    return round(v, ndigits)


def _bps(x: Any) -> int | None:
    if x is None:
        return None
    v = float(x)
    if not math.isfinite(v):
        return None
    return round(v)


def _ms(us: Any) -> float | None:
    return None if us is None else _num(float(us) / 1000.0, 3)


def fct_stats(fct_ns: npt.NDArray[Any]) -> dict[str, float | None]:
    """Mean and 50th/95th/99th percentiles (linear interpolation) of completion times, seconds.

    ``fct_stats(np.array([1e9, 2e9, 3e9]))`` gives mean 2.0, p50 2.0, p95 2.9,
    p99 2.98. No values give None for each.
    """
    if len(fct_ns) == 0:
        return {"fct_mean_s": None, "fct_p50_s": None, "fct_p95_s": None, "fct_p99_s": None}
    x = np.sort(fct_ns.astype(np.float64)) / NS_PER_S
    p50, p95, p99 = np.percentile(x, [50.0, 95.0, 99.0])
    return {
        "fct_mean_s": _num(math.fsum(x.tolist()) / len(x), 9),
        "fct_p50_s": _num(p50, 9),
        "fct_p95_s": _num(p95, 9),
        "fct_p99_s": _num(p99, 9),
    }


def transfer_stats(size_bytes: npt.NDArray[Any], fct_ns: npt.NDArray[Any]) -> dict[str, Any]:
    """Counts and FCT statistics of finite transfers, overall and per size class.

    ``fct_ns`` holds :data:`UNFINISHED` for transfers still running at the end;
    they count in ``count`` but not in ``completed`` or the FCT statistics.
    """
    size = np.asarray(size_bytes, dtype=np.uint64)
    fct = np.asarray(fct_ns, dtype=np.uint64)
    done = fct != np.uint64(UNFINISHED)
    out: dict[str, Any] = {"count": len(size), "completed": int(done.sum()), **fct_stats(fct[done])}
    classes = []
    for label, lo, hi in SIZE_CLASSES:
        sel = size >= np.uint64(lo)
        if hi is not None:
            sel &= size < np.uint64(hi)
        classes.append(
            {
                "size_class": label,
                "min_bytes": lo,
                "max_bytes": hi,
                "count": int(sel.sum()),
                "completed": int((sel & done).sum()),
                **fct_stats(fct[sel & done]),
            }
        )
    out["size_classes"] = classes
    return out


def source_stats(sources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per background source: offered and achieved rate over its active time, transfers started and completed."""
    out = []
    for src in sources:
        seconds = (int(src["active_to_ns"]) - int(src["active_from_ns"])) / NS_PER_S
        out.append(
            {
                "name": str(src["name"]),
                "kind": str(src["kind"]),
                "offered_bytes": int(src["offered_bytes"]),
                "delivered_bytes": int(src["delivered_bytes"]),
                "offered_bps": _bps(rate_bps(float(src["offered_bytes"]), seconds)),
                "achieved_bps": _bps(rate_bps(float(src["delivered_bytes"]), seconds)),
                "started": int(src["started"]),
                "completed": int(src["completed"]),
            }
        )
    return out


def cov(values: Sequence[float]) -> float | None:
    """Coefficient of variation σ/μ with the population standard deviation; None for < 2 values or μ = 0.

    ``cov([8, 10, 12])`` = 1.633/10 = 0.163 (metrics section 6's example).
    """
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return None
    mu = float(x.mean())
    if mu == 0.0:
        return None
    return float(x.std()) / mu


def binned_rates(
    t_ns: npt.NDArray[Any], flow: npt.NDArray[Any], nbytes: npt.NDArray[Any], n_flows: int, lo: int, hi: int, bin_ns: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """(bin end times, rates in bit/s of shape [n_flows, bins]) over whole bins of ``bin_ns`` from ``lo`` to ``hi``.

    Each interval row counts in the bin its end time falls in (exact when the
    bins are multiples of the trace interval, as they are here).
    """
    sums = TraceSums(n_flows, [0] * n_flows, [], [(lo, hi, bin_ns)], [], 1, 1)
    sums.add({"t_ns": t_ns, "flow": flow, "bottleneck_bytes": nbytes}, {}, [None] * n_flows)
    return sums.binned_rates(lo, hi, bin_ns)


def alive_in_bins(lifetimes: Sequence[tuple[int, int]], ends: npt.NDArray[np.int64], bin_ns: int) -> npt.NDArray[np.bool_]:
    """[flows, bins]: whether each flow ran for the whole of each bin."""
    start = np.asarray([s for s, _ in lifetimes], dtype=np.int64)[:, None]
    end = np.asarray([e for _, e in lifetimes], dtype=np.int64)[:, None]
    return (start <= (ends - bin_ns)[None, :]) & (end >= ends[None, :])


def stability(rates: npt.NDArray[np.float64], alive: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """CoV of each flow's binned rate over the bins it ran whole, and of the flows' aggregate rate."""
    flows = [_num(cov(rates[i, alive[i]]), 6) for i in range(rates.shape[0])]
    return {"aggregate": _num(cov(rates.sum(axis=0)), 6) if rates.shape[1] else None, "flows": flows}


def first_hold(ok: npt.NDArray[np.bool_], hold_bins: int) -> int | None:
    """The first index k with ok[k], …, ok[k + hold_bins] all true (None if there is none)."""
    run = 0
    for k, v in enumerate(ok):
        run = run + 1 if v else 0
        if run > hold_bins:
            return k - hold_bins
    return None


def convergence(
    rates: npt.NDArray[np.float64],
    alive: npt.NDArray[np.bool_],
    ends: npt.NDArray[np.int64],
    bin_ns: int,
    starts: Sequence[int],
    *,
    delta: float,
    hold_bins: int,
    jain: float,
) -> list[dict[str, Any]]:
    """Per start time of the flows: how long until every running flow stays within ``delta`` of its fair share.

    The fair share is the flows' aggregate rate over the bin divided by the
    number of flows that ran the whole bin; "stays" means for this bin and
    the next ``hold_bins``. The second definition is the time until Jain's
    index of those rates stays at or above ``jain``. A start that never
    converges before the next start (or the end) has ``converged`` false and
    a null time.
    """
    out = []
    events = sorted(set(starts))
    for j, t0 in enumerate(events):
        until = events[j + 1] if j + 1 < len(events) else int(ends[-1]) if len(ends) else t0
        in_span = np.flatnonzero((ends - bin_ns >= t0) & (ends <= until))
        ok_share, ok_jain = [], []
        for k in in_span:
            x = rates[alive[:, k], k]
            if len(x) == 0 or x.sum() <= 0:
                ok_share.append(False)
                ok_jain.append(False)
                continue
            fair = x.sum() / len(x)
            ok_share.append(bool(np.all(np.abs(x / fair - 1.0) <= delta)))
            ok_jain.append(jain_index(x.tolist()) >= jain)
        row: dict[str, Any] = {"start_s": _num(t0 / NS_PER_S, 9)}
        for key, ok in (("", ok_share), ("jain_", ok_jain)):
            k = first_hold(np.asarray(ok, dtype=bool), hold_bins)
            row[f"{key}converged"] = k is not None
            row[f"{key}time_s"] = None if k is None else _num((int(ends[in_span[k]]) - t0) / NS_PER_S, 9)
        out.append(row)
    return out


def responsiveness(
    t_ns: npt.NDArray[Any],
    flow: npt.NDArray[Any],
    nbytes: npt.NDArray[Any],
    lifetimes: Sequence[tuple[int, int]],
    stops: Sequence[int | None],
    interval_ns: int,
    average_ns: int,
) -> list[dict[str, Any]]:
    """After each flow stops: time until the others take 80 % and 95 % of the capacity it freed.

    Freed capacity is the stopping flow's rate over ``average_ns`` before it
    stopped; the others' rate before is their aggregate over the same span;
    after the stop the others' aggregate rate is taken per trace interval,
    and the times are from the stop to the end of the first interval at
    ``before + f·freed`` (null when never reached).
    """
    n = len(lifetimes)
    sums = TraceSums(n, [start for start, _ in lifetimes], [], [], stops, interval_ns, average_ns)
    sums.add({"t_ns": t_ns, "flow": flow, "bottleneck_bytes": nbytes}, {}, [end for _, end in lifetimes])
    return _responsiveness_rows(sums, lifetimes)


def _responsiveness_rows(sums: TraceSums, lifetimes: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    """:meth:`TraceSums.responsiveness` in summary.json's units."""
    rows = []
    for e in sums.responsiveness(lifetimes):
        row: dict[str, Any] = {"flow": e["flow"], "stop_s": _num(e["stop_ns"] / NS_PER_S, 9), "freed_bps": _bps(e["freed_bps"])}
        for key in ("t80", "t95"):
            row[f"{key}_s"] = None if e[f"{key}_ns"] is None else _num(e[f"{key}_ns"] / NS_PER_S, 9)
        rows.append(row)
    return rows


def friendliness(rates: Mapping[int, float], standard: Sequence[bool]) -> dict[str, Any]:
    """In-run TCP-friendliness from per-flow rates over the window.

    ``standard_share``: the standard flows' mean rate over the fair share
    (all flows' mean rate; 1 is friendly, below 1 the others take more);
    ``ratio``: the other flows' mean rate over the standard flows' (the
    friendliness ratio F; 1 is friendly). None
    where a camp is missing.
    """
    std = [r for i, r in rates.items() if standard[i]]
    new = [r for i, r in rates.items() if not standard[i]]
    fair = math.fsum(rates.values()) / len(rates) if rates else 0.0
    mean_std = math.fsum(std) / len(std) if std else None
    mean_new = math.fsum(new) / len(new) if new else None
    return {
        "standard_share": _num(mean_std / fair, 6) if mean_std is not None and fair > 0 else None,
        "ratio": _num(mean_new / mean_std, 6) if mean_new is not None and mean_std else None,
    }


def friendliness_vs_baseline(run_rates: Mapping[int, float], baseline_rates: Mapping[int, float], standard: Sequence[int]) -> float | None:
    """The standard flows' throughput when competing with the others over their throughput in the baseline run.

    (Gain/loss of the tcpeval suite: L = T(A)_mix / T(A)_baseline.) Below
    1: the new algorithm takes from standard TCP.
    """
    mix = math.fsum(run_rates.get(i, 0.0) for i in standard)
    base = math.fsum(baseline_rates.get(i, 0.0) for i in standard)
    return mix / base if base > 0 else None


def ideal_fct_ns(size_bytes: float, mss: int, header: int, init_cwnd: int, rtt_ns: int, rate_bps: float) -> float:
    """Completion time on an empty path: slow-start rounds from the initial window, plus serialisation.

    ``rounds = ⌈log2(packets/IW + 1)⌉`` round trips (the window doubles each
    RTT) plus the transfer's wire bytes at the link rate.
    """
    packets = max(1, math.ceil(size_bytes / mss))
    rounds = math.ceil(math.log2(packets / init_cwnd + 1))
    return rounds * rtt_ns + (size_bytes + packets * header) * 8.0 * NS_PER_S / rate_bps


def slowdown_stats(slowdown: npt.NDArray[np.float64]) -> dict[str, float | None]:
    """Median, 95th and 99th percentile of FCT slowdowns."""
    if len(slowdown) == 0:
        return {"slowdown_p50": None, "slowdown_p95": None, "slowdown_p99": None}
    p50, p95, p99 = np.percentile(slowdown, [50.0, 95.0, 99.0])
    return {"slowdown_p50": _num(p50, 6), "slowdown_p95": _num(p95, 6), "slowdown_p99": _num(p99, 6)}


def summarize(raw: Mapping[str, Any], spec: Spec, sums: TraceSums | None = None) -> dict[str, Any]:
    """The content of ``summary.json`` for one run.

    ``raw`` is what the simulator returned, ``spec`` the validated experiment.
    The result depends only on the two (no wall-clock times), so the same
    experiment and seed give the same summary byte for byte. When the traces
    went to disk as the run went, ``sums`` (:func:`trace_sums`, fed every
    chunk) stands for them; otherwise they are taken from ``raw``.
    """
    if sums is None:
        sums = trace_sums(spec)
        sums.add(
            decode_columns(raw["flows_trace"]),
            decode_columns(raw["queue_trace"]),
            [int(f["end_ns"]) for f in raw["flows"]],
        )
    eng = spec.engine
    duration_ns = int(eng.duration_ns)
    interval_ns = int(eng.interval_ns)
    rate = int(eng.bottleneck.rate_bps)
    starts = [int(f.start_ns) for f in eng.flows]
    starts += [int(s.start_ns) for s in (*eng.tcp_sources, *eng.udp_sources)]
    first_start = min(starts)
    window, half = _windows(spec)

    queue = dict(raw["queue"])
    bn_link = eng.bottleneck
    util = link_utilization(float(queue["tx_bytes"]), bn_link, first_start, duration_ns)

    lifetimes = [(int(f["start_ns"]), int(f["end_ns"])) for f in raw["flows"]]

    util_half: float | None = None
    util_window: float | None = None
    jain: float | None = None
    rates: dict[int, float] = {}
    if sums.has_queue_trace():
        for lo_hi, put in ((half, "half"), (window, "window")):
            u = link_utilization(float(sums.tx_bytes(lo_hi)), bn_link, max(lo_hi[0], first_start), lo_hi[1])
            if put == "half":
                util_half = u
            else:
                util_window = u
    if sums.has_flow_trace():
        rates = rates_from_sums(sums.window_bytes(window), lifetimes, window)
        if rates:
            jain = jain_index(rates.values())

    flows: list[dict[str, Any]] = []
    for f in raw["flows"]:
        i = int(f["id"])
        start, end = int(f["start_ns"]), int(f["end_ns"])
        seconds = (end - start) / NS_PER_S
        completion = f.get("completion_ns")
        sent = int(f["sent_pkts"])
        flows.append(
            {
                "flow": i,
                "group": spec.flow_groups[i],
                "cc": f["cc"],
                "recovery": f["recovery"],
                "start_s": _num(start / NS_PER_S, 9),
                "end_s": _num(end / NS_PER_S, 9),
                "goodput_bytes": int(f["goodput_bytes"]),
                "goodput_bps": _bps(rate_bps(float(f["goodput_bytes"]), seconds)),
                "bottleneck_bytes": int(f["bottleneck_bytes"]),
                "bottleneck_rate_bps": _bps(rate_bps(float(f["bottleneck_bytes"]), seconds)),
                "sent_pkts": sent,
                "retransmits": int(f["retrans_pkts"]),
                "retransmit_ratio": _num(int(f["retrans_pkts"]) / sent, 6) if sent else None,
                "timeouts": int(f["timeouts"]),
                "fast_recoveries": int(f["fast_recoveries"]) if "fast_recoveries" in f else None,
                "drops": int(f["drops"]),
                "loss_rate": _num(int(f["drops"]) / sent, 6) if sent else None,
                "window_rate_bps": _bps(rates[i]) if i in rates else None,
                "rtt_min_ms": _ms(f.get("rtt_min_us")),
                "rtt_mean_ms": _ms(f.get("rtt_mean_us")),
                "rtt_p50_ms": _ms(f.get("rtt_p50_us")),
                "rtt_p99_ms": _ms(f.get("rtt_p99_us")),
                "completion_s": None if completion is None else _num(int(completion) / NS_PER_S, 9),
            }
        )
        if eng.network is not None:
            # The network's links, then senders' access links (flows.host), which the engine names.
            names = list(eng.network.names)
            names += [str(link["name"]) for link in raw["links"][len(names) :]]
            route = eng.network.routes[i]
            flows[-1]["bottleneck_link"] = names[int(route.measure)]
            flows[-1]["link_bytes"] = {names[int(link)]: int(b) for link, b in f["link_bytes"]}
        if eng.flows[i].ecn and "ecn_reductions" in f:
            # Window cuts answering an ECN echo (RFC 3168 CWR); only for flows that negotiate ECN.
            flows[-1]["ecn_reductions"] = int(f["ecn_reductions"])

    arrivals = int(queue["arrivals"])
    bn = eng.bottleneck
    bn_table = bottleneck_table(spec.resolved)
    bn_loss = bn_table["loss"]
    bottleneck: dict[str, Any] = {"rate_bps": rate, "delay_ms": _num(int(bn.delay_ns) / 1e6, 6), "loss": bn.loss}
    if isinstance(bn_loss, Mapping):
        # Gilbert-Elliott: "loss" is the long-run loss rate, the model is beside it.
        from ..spec import stationary_loss

        bottleneck["loss"] = _num(stationary_loss(bn_loss), 9)
        bottleneck["loss_model"] = dict(bn_loss)
    if bn.buffer_pkts is not None:
        bottleneck["buffer_pkts"] = int(bn.buffer_pkts)
    else:
        bottleneck["buffer_bytes"] = int(bn.buffer_bytes)

    if bn_table.get("qdisc", "droptail") != "droptail":
        # Active queues mark ECN-capable packets instead of dropping them (drops stay drops).
        queue_extra = {"marks": int(queue.get("marks", 0)), "qdisc": bn_table["qdisc"]}
    else:
        queue_extra = {}
    stats = raw["stats"]
    tr = decode_columns(raw["transfers"]) if "transfers" in raw else {}
    transfers = transfer_stats(tr.get("size_bytes", np.zeros(0, np.uint64)), tr.get("fct_ns", np.zeros(0, np.uint64)))
    _add_slowdowns(transfers, tr, spec)
    return {
        "format_version": FORMAT_VERSION,
        "ccarena_version": spec.resolved["ccarena_version"],
        "name": spec.name,
        "seed": spec.seed,
        "duration_s": _num(duration_ns / NS_PER_S, 9),
        "interval_s": _num(interval_ns / NS_PER_S, 9),
        "bottleneck": bottleneck,
        "utilization": _num(util, 6),
        "utilization_second_half": _num(util_half, 6),
        "jain_index": _num(jain, 6),
        "jain_window_s": [_num(window[0] / NS_PER_S, 9), _num(window[1] / NS_PER_S, 9)],
        "window_s": [_num(window[0] / NS_PER_S, 9), _num(window[1] / NS_PER_S, 9)],
        "utilization_window": _num(util_window, 6),
        **_dynamics(raw, spec, sums, rates, window),
        "flows": flows,
        "queue": {
            "arrivals": arrivals,
            "drops": int(queue["drops"]),
            "random_drops": int(queue["random_drops"]),
            "drop_rate": _num(int(queue["drops"]) / arrivals, 6) if arrivals else None,
            "tx_packets": int(queue["tx_packets"]),
            "tx_bytes": int(queue["tx_bytes"]),
            "delay_mean_ms": _ms(queue.get("delay_mean_us")),
            "delay_p50_ms": _ms(queue.get("delay_p50_us")),
            "delay_p99_ms": _ms(queue.get("delay_p99_us")),
            "max_backlog_pkts": int(queue["max_backlog_pkts"]),
            "reverse_drops": int(queue.get("reverse_drops", 0)),
            "reverse_delay_p50_ms": _ms(queue.get("reverse_delay_p50_us")),
            "reverse_delay_p99_ms": _ms(queue.get("reverse_delay_p99_us")),
            **queue_extra,
        },
        **({"links": link_stats(raw, eng, duration_ns, window)} if _has_network(eng) else {}),
        "sources": source_stats(raw.get("sources", ())),
        "transfers": transfers,
        "conservation": {k: int(v) for k, v in raw["conservation"].items()},
        "engine": {
            "events": int(stats["events"]),
            "bottleneck_data_packets": int(stats["bottleneck_data_packets"]),
            "peak_flow_slots": int(stats.get("peak_flow_slots", len(flows))),
        },
    }


def _has_network(eng: EngineConfig) -> bool:
    """Whether the run reports every link: a network, senders' access links, or links with models."""
    links = [eng.bottleneck, eng.reverse, *(eng.network.links if eng.network is not None else ())]
    return (
        eng.network is not None
        or any(f.access is not None for f in eng.flows)
        or any(s.access is not None for s in eng.tcp_sources)
        or any(link.model for link in links)
    )


def link_stats(
    raw: Mapping[str, Any], eng: EngineConfig, duration_ns: int, window: tuple[int, int]
) -> list[dict[str, Any]]:
    """Per link of a network (the engine's order: the measured link, its twin, then the rest): its
    utilisation over the run and over the measurement window (from the link trace), drops, marks and
    queueing delay."""
    trace = decode_columns(raw["link_trace"]) if raw.get("link_trace") else {}
    net = eng.network
    engine_links = [eng.bottleneck, eng.reverse, *(net.links if net is not None else ())]
    names = list((net.names if net is not None else None) or ["forward", "reverse"])
    out = []
    for i, link in enumerate(raw["links"]):
        if i >= len(engine_links):  # a sender's access link (flows.host, background.*.host), made by the engine
            engine_links.append(EngineConfig.of("LinkConfig", {"rate_bps": link["rate_bps"]}, f"access{i}"))
            names.append(str(link["name"]))
        rate = int(link["rate_bps"])
        arrivals = int(link["arrivals"])
        util_window = None
        if trace and len(trace.get("t_ns", ())):
            t, which, tx = trace["t_ns"], trace["link"], trace["tx_bytes"]
            sel = (which == i) & (t > window[0]) & (t <= window[1])
            util_window = _num(link_utilization(float(tx[sel].sum()), engine_links[i], window[0], window[1]), 6)
        out.append({
            "name": names[i],
            "rate_bps": rate,
            "qdisc": link["qdisc"],
            "utilization": _num(link_utilization(float(link["tx_bytes"]), engine_links[i], 0, duration_ns), 6),
            "utilization_window": util_window,
            "arrivals": arrivals,
            "drops": int(link["drops"]),
            "random_drops": int(link["random_drops"]),
            "aqm_drops": int(link["aqm_drops"]),
            "marks": int(link["marks"]),
            "drop_rate": _num(int(link["drops"]) / arrivals, 6) if arrivals else None,
            "tx_packets": int(link["tx_packets"]),
            "tx_bytes": int(link["tx_bytes"]),
            "max_backlog_pkts": int(link["max_backlog_pkts"]),
            "delay_mean_ms": _ms(link.get("delay_mean_us")),
            "delay_p50_ms": _ms(link.get("delay_p50_us")),
            "delay_p99_ms": _ms(link.get("delay_p99_us")),
            **{k: int(link[k]) for k in MODEL_COUNTERS if k in link},
        })  # fmt: skip
    return out


MODEL_COUNTERS = ("policed", "batches", "batched", "jitter_delivered", "reordered")
"""A link's model counters, reported when it has those models: packets the policer dropped, batches
released and the packets in them, and on its propagation packets delivered and of them reordered
(RFC 4737: arriving after a packet sent later)."""


def _dynamics(
    raw: Mapping[str, Any], spec: Spec, sums: TraceSums, rates: Mapping[int, float], window: tuple[int, int]
) -> dict[str, Any]:
    """Friendliness, RTT fairness, convergence, stability and responsiveness (None without traces)."""
    m = spec.metrics
    eng = spec.engine
    flows = list(raw["flows"])
    n = len(flows)
    groups = spec.flow_groups
    resolved_groups = spec.resolved.get("flows", [])
    if m.get("standard_groups") is not None:
        std_groups = set(m["standard_groups"])
        standard = [groups[i] in std_groups for i in range(n)]
        std_desc: dict[str, Any] = {"standard_groups": sorted(std_groups)}
    else:
        names = set(m.get("standard", ("reno", "newreno")))
        standard = [str(f["cc"]) in names for f in flows]
        std_desc = {"standard": sorted(names)}
    win = {"window_s": [_num(window[0] / NS_PER_S, 9), _num(window[1] / NS_PER_S, 9)]}
    out: dict[str, Any] = {"friendliness": {**std_desc, **win, **friendliness(rates, standard)} if rates else None}

    # RTT fairness: the groups with the smallest and the largest RTT unless [measure] names two.
    group_rtt = {g: int(eng.flows[groups.index(g)].rtt_ns) for g in sorted(set(groups))}
    pair = m.get("rtt_fairness")
    if pair is None and len(set(group_rtt.values())) > 1:
        pair = [min(group_rtt, key=lambda g: (group_rtt[g], g)), max(group_rtt, key=lambda g: (group_rtt[g], -g))]
    out["rtt_fairness"] = None
    if pair is not None and rates:
        short = [rates[i] for i in range(n) if groups[i] == pair[0] and i in rates]
        long = [rates[i] for i in range(n) if groups[i] == pair[1] and i in rates]
        ratio = (math.fsum(short) / len(short)) / (math.fsum(long) / len(long)) if short and long and math.fsum(long) > 0 else None
        out["rtt_fairness"] = {
            "short_group": int(pair[0]), "long_group": int(pair[1]),
            "rtt_ratio": _num(group_rtt[pair[1]] / group_rtt[pair[0]], 6),
            "throughput_ratio": _num(ratio, 6), **win,
        }  # fmt: skip
    del resolved_groups

    if not sums.has_flow_trace() or n == 0:
        return {**out, "convergence": None, "stability": None, "responsiveness": None}
    lifetimes = [(int(f["start_ns"]), int(f["end_ns"])) for f in flows]
    duration_ns = int(eng.duration_ns)
    average_ns = _average_ns(spec)
    ends, binned = sums.binned_rates(0, duration_ns, average_ns)
    hold_bins = math.ceil(int(m.get("hold_ns", NS_PER_S)) / average_ns)
    events = convergence(
        binned, alive_in_bins(lifetimes, ends, average_ns), ends, average_ns, [s for s, _ in lifetimes],
        delta=float(m.get("delta", 0.2)), hold_bins=hold_bins, jain=float(m.get("jain", 0.95)),
    )  # fmt: skip
    out["convergence"] = {
        "delta": float(m.get("delta", 0.2)),
        "hold_s": _num(hold_bins * average_ns / NS_PER_S, 9),
        "average_s": _num(average_ns / NS_PER_S, 9),
        "jain_threshold": float(m.get("jain", 0.95)),
        "events": events,
    }
    stab: dict[str, Any] = dict(win)
    for seconds in (1, 10):
        bin_ns = seconds * NS_PER_S
        ends_s, r = sums.binned_rates(window[0], window[1], bin_ns)
        stab[f"cov_{seconds}s"] = stability(r, alive_in_bins(lifetimes, ends_s, bin_ns)) if len(ends_s) >= 2 else None
    out["stability"] = stab
    out["responsiveness"] = {"average_s": _num(average_ns / NS_PER_S, 9), "events": _responsiveness_rows(sums, lifetimes)}
    return out


def _add_slowdowns(transfers: dict[str, Any], tr: Mapping[str, npt.NDArray[Any]], spec: Spec) -> None:
    """FCT slowdown (completion time over :func:`ideal_fct_ns`) percentiles, overall and per size class."""
    sources = spec.engine.tcp_sources
    size = tr.get("size_bytes", np.zeros(0, np.uint64))
    fct = tr.get("fct_ns", np.zeros(0, np.uint64))
    done = fct != np.uint64(UNFINISHED)
    slow = np.full(len(size), np.nan)
    rates = (float(spec.engine.bottleneck.rate_bps), float(spec.engine.reverse.rate_bps))
    for k in np.flatnonzero(done):
        src = sources[int(tr["source"][k])]
        rate = rates[1] if int(tr["reverse"][k]) else rates[0]
        ideal = ideal_fct_ns(float(size[k]), int(src.mss), int(src.header_bytes), int(src.init_cwnd),
                             int(tr["rtt_ns"][k]), rate)
        slow[k] = float(fct[k]) / ideal
    transfers.update(slowdown_stats(slow[done]))
    for c, (_, lo, hi) in zip(transfers["size_classes"], SIZE_CLASSES, strict=True):
        sel = done & (size >= np.uint64(lo))
        if hi is not None:
            sel &= size < np.uint64(hi)
        c.update(slowdown_stats(slow[sel]))
