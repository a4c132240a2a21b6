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

if TYPE_CHECKING:
    from ..spec import Spec

__all__ = [
    "FORMAT_VERSION",
    "SIZE_CLASSES",
    "decode_columns",
    "fct_stats",
    "goodput_bps",
    "jain_index",
    "jain_window_ns",
    "rate_bps",
    "source_stats",
    "summarize",
    "transfer_stats",
    "utilization",
    "window_rates_bps",
]

FORMAT_VERSION = 1
"""Version of the result layout (summary.json, the Parquet columns)."""

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
    lo, hi = window
    sel = (t_ns > lo) & (t_ns <= hi)
    sums = np.bincount(flow[sel].astype(np.int64), weights=nbytes[sel].astype(np.float64), minlength=len(lifetimes))
    out: dict[int, float] = {}
    for i, (start, end) in enumerate(lifetimes):
        alive = min(end, hi) - max(start, lo)
        if alive > 0:
            out[i] = float(sums[i]) * 8.0 * NS_PER_S / alive
    return out


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


def summarize(raw: Mapping[str, Any], spec: Spec) -> dict[str, Any]:
    """The content of ``summary.json`` for one run.

    ``raw`` is what the simulator returned, ``spec`` the validated experiment.
    The result depends only on the two (no wall-clock times), so the same
    experiment and seed give the same summary byte for byte.
    """
    eng = spec.engine
    duration_ns = int(eng["duration_ns"])
    interval_ns = int(eng["interval_ns"])
    rate = int(eng["bottleneck"]["rate_bps"])
    starts = [int(f["start_ns"]) for f in eng["flows"]]
    starts += [int(s["start_ns"]) for s in (*eng.get("tcp_sources", ()), *eng.get("udp_sources", ()))]
    first_start = min(starts)
    window = jain_window_ns(duration_ns, interval_ns)

    queue = dict(raw["queue"])
    util = utilization(float(queue["tx_bytes"]), rate, (duration_ns - first_start) / NS_PER_S)

    ft = decode_columns(raw["flows_trace"])
    qt = decode_columns(raw["queue_trace"])
    lifetimes = [(int(f["start_ns"]), int(f["end_ns"])) for f in raw["flows"]]

    util_half: float | None = None
    jain: float | None = None
    if len(qt.get("t_ns", ())) > 0:
        sel = (qt["t_ns"] > window[0]) & (qt["t_ns"] <= window[1])
        half_bytes = float(qt["tx_bytes"][sel].sum())
        util_half = utilization(half_bytes, rate, (window[1] - max(window[0], first_start)) / NS_PER_S)
    if len(ft.get("t_ns", ())) > 0:
        rates = window_rates_bps(ft["t_ns"], ft["flow"], ft["bottleneck_bytes"], lifetimes, window)
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
                "id": i,
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
                "rtt_min_ms": _ms(f.get("rtt_min_us")),
                "rtt_mean_ms": _ms(f.get("rtt_mean_us")),
                "rtt_p50_ms": _ms(f.get("rtt_p50_us")),
                "rtt_p99_ms": _ms(f.get("rtt_p99_us")),
                "completion_s": None if completion is None else _num(int(completion) / NS_PER_S, 9),
            }
        )

    arrivals = int(queue["arrivals"])
    bn = eng["bottleneck"]
    bn_loss = spec.resolved["topology"]["bottleneck"]["loss"]
    bottleneck: dict[str, Any] = {"rate_bps": rate, "delay_ms": _num(int(bn["delay_ns"]) / 1e6, 6), "loss": bn["loss"]}
    if isinstance(bn_loss, Mapping):
        # Gilbert-Elliott: "loss" is the long-run loss rate, the model is beside it.
        from ..spec import stationary_loss

        bottleneck["loss"] = _num(stationary_loss(bn_loss), 9)
        bottleneck["loss_model"] = dict(bn_loss)
    if "buffer_pkts" in bn:
        bottleneck["buffer_pkts"] = int(bn["buffer_pkts"])
    else:
        bottleneck["buffer_bytes"] = int(bn["buffer_bytes"])

    stats = raw["stats"]
    tr = decode_columns(raw["transfers"]) if "transfers" in raw else {}
    transfers = transfer_stats(tr.get("size_bytes", np.zeros(0, np.uint64)), tr.get("fct_ns", np.zeros(0, np.uint64)))
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
        },
        "sources": source_stats(raw.get("sources", ())),
        "transfers": transfers,
        "conservation": {k: int(v) for k, v in raw["conservation"].items()},
        "engine": {
            "events": int(stats["events"]),
            "bottleneck_data_packets": int(stats["bottleneck_data_packets"]),
            "peak_flow_slots": int(stats.get("peak_flow_slots", len(flows))),
        },
    }
