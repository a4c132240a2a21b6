"""The simulator's output as Arrow tables: the content of the Parquet files.

:func:`flows_table` (flows.parquet), :func:`queue_table` (queue.parquet) and
:func:`transfers_table` (transfers.parquet) turn the engine's little-endian
columns into typed tables with units in the column names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..spec import INFINITE_SSTHRESH, Spec
from .metrics import NO_SESSION, NS_PER_S, UNFINISHED, decode_columns

__all__ = [
    "FLOW_RENAMES",
    "QUEUE_RENAMES",
    "TRANSFERS_SCHEMA",
    "empty_transfers",
    "flows_table",
    "links_table",
    "queue_table",
    "transfers_table",
]


_ARROW_TYPES: dict[str, pa.DataType] = {
    "<u8": pa.uint64(),
    "<u4": pa.uint32(),
    "<f8": pa.float64(),
    "<i8": pa.int64(),
    "<i4": pa.int32(),
}

_CC_SLOTS = tuple(f"cc_{k}" for k in range(8))

FLOW_RENAMES = {"delivered_bytes": "delivered_bytes_total", "retrans": "retrans_pkts_total"}
"""Engine trace columns that are running totals, named so in flows.parquet."""
QUEUE_RENAMES = {"drops": "drops_pkts"}
"""Engine queue columns renamed for their unit in queue.parquet."""


def _arrow(values: npt.NDArray[Any], mask: npt.NDArray[np.bool_] | None = None) -> pa.Array:
    """A numpy array as an Arrow array of the same type, null where ``mask`` is true.

    Built from the array's buffer (no copy): ``pa.array`` would import
    pandas on its first call, which costs more than a short run.
    """
    values = np.ascontiguousarray(values)
    kind = _ARROW_TYPES.get(values.dtype.str) or pa.from_numpy_dtype(values.dtype)
    validity, nulls = None, 0
    if mask is not None and mask.any():
        validity, nulls = pa.py_buffer(np.packbits(~mask, bitorder="little")), int(mask.sum())
    return pa.Array.from_buffers(kind, len(values), [validity, pa.py_buffer(values)], null_count=nulls)


def _bools(values: npt.NDArray[np.bool_]) -> pa.Array:
    """A numpy boolean array as an Arrow boolean array (bit-packed)."""
    bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def _strings(values: list[str]) -> pa.Array:
    """A list of str as an Arrow string array."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), data])


def _interval_lengths_ns(t_ns: npt.NDArray[Any], interval_ns: int) -> npt.NDArray[np.float64]:
    """Length of the interval that ends at each t (the last one may be short)."""
    t = t_ns.astype(np.int64)
    start = ((t - 1) // interval_ns) * interval_ns
    return (t - start).astype(np.float64)


def flows_table(raw: Mapping[str, Any], spec: Spec) -> pa.Table:
    """The per-flow trace as an Arrow table (the content of flows.parquet).

    Columns: ``t_ns`` (end of the interval), ``time_s``, ``flow``, ``group``,
    ``cc``, ``bottleneck_bytes`` (wire bytes of the flow that left the
    bottleneck queue in the interval), ``rate_bps`` (the same as a rate),
    then the sender's state at ``t_ns`` (``cwnd_pkts``, ``ssthresh_pkts`` —
    null while infinite —, ``srtt_us``, ``inflight_pkts``,
    ``pacing_rate_bps``, and the running totals ``delivered_bytes_total``
    and ``retrans_pkts_total``) and one column per algorithm internal under
    the algorithm's own name (e.g. CUBIC's ``w_max_pkts``), NaN for flows
    whose algorithm lacks it. A flow has rows only for the intervals it ran
    in (none before it starts or after it ends).
    """
    cols = decode_columns(raw["flows_trace"])
    interval_ns = int(spec.engine.interval_ns)
    flows = list(raw["flows"])
    if len(cols.get("t_ns", ())):
        # Only the intervals each flow ran in: none before it starts or after it ends.
        rows_flow = cols["flow"].astype(np.int64)
        t = cols["t_ns"].astype(np.int64)
        start = np.asarray([int(f["start_ns"]) for f in flows], dtype=np.int64)[rows_flow]
        end = np.asarray([int(f["end_ns"]) for f in flows], dtype=np.int64)[rows_flow]
        keep = (t > start) & (t - interval_ns < end)
        cols = {name: values[keep] for name, values in cols.items()}
    t_ns = cols.get("t_ns", np.zeros(0, dtype="<u8"))
    flow = cols.get("flow", np.zeros(0, dtype="<u4"))
    n = len(t_ns)
    groups = np.asarray(spec.flow_groups, dtype=np.uint32)
    ccs = np.asarray([str(f["cc"]) for f in flows], dtype=object)
    idx = flow.astype(np.int64)

    out: dict[str, pa.Array] = {
        "t_ns": _arrow(t_ns),
        "time_s": _arrow(t_ns.astype(np.float64) / NS_PER_S),
        "flow": _arrow(flow),
        "group": _arrow(groups[idx] if n else np.zeros(0, np.uint32)),
        "cc": _strings(ccs[idx].tolist() if n else []),
    }
    for name, values in cols.items():
        if name in ("t_ns", "flow") or name in _CC_SLOTS:
            continue
        if name == "ssthresh_pkts":
            out[name] = _arrow(values, mask=values == INFINITE_SSTHRESH)
        else:
            out[name] = _arrow(values)
        if name == "bottleneck_bytes":
            rate = values.astype(np.float64) * 8.0 * NS_PER_S / _interval_lengths_ns(t_ns, interval_ns)
            out["rate_bps"] = _arrow(rate.astype(np.float64))

    # Algorithm internals: cc_k holds metric_names[k] of the row's flow.
    by_names: dict[tuple[str, ...], list[int]] = {}
    for f in flows:
        by_names.setdefault(tuple(str(m) for m in f.get("metric_names", ())), []).append(int(f["id"]))
    metric_cols: dict[str, npt.NDArray[np.float64]] = {}
    for names, ids in by_names.items():
        rows = np.isin(idx, np.asarray(ids, dtype=np.int64))
        for k, metric in enumerate(names[: len(_CC_SLOTS)]):
            slot = _CC_SLOTS[k]
            if not metric or slot not in cols:
                continue
            column = metric if metric not in out else f"cc_{metric}"
            target = metric_cols.setdefault(column, np.full(n, np.nan))
            target[rows] = cols[slot][rows]
    for column, values in metric_cols.items():
        out[column] = _arrow(values.astype(np.float64))
    return pa.table({FLOW_RENAMES.get(k, k): v for k, v in out.items()})


def queue_table(raw: Mapping[str, Any]) -> pa.Table:
    """The bottleneck queue trace as an Arrow table (the content of queue.parquet).

    Columns: ``t_ns`` (end of the interval), ``time_s``, ``backlog_bytes`` and
    ``backlog_pkts`` (at ``t_ns``), ``drops_pkts`` and ``tx_bytes`` (in the
    interval), and the engine's other per-interval columns as they come.
    """
    cols = decode_columns(raw["queue_trace"])
    t_ns = cols.get("t_ns", np.zeros(0, dtype="<u8"))
    out: dict[str, pa.Array] = {
        "t_ns": _arrow(t_ns),
        "time_s": _arrow(t_ns.astype(np.float64) / NS_PER_S),
    }
    for name, values in cols.items():
        if name != "t_ns":
            out[QUEUE_RENAMES.get(name, name)] = _arrow(values)
    return pa.table(out)


def links_table(raw: Mapping[str, Any], names: Sequence[str]) -> pa.Table:
    """Every link's trace (links.parquet; a network other than the dumbbell): one row per link per
    interval. Columns: ``t_ns`` (end of the interval), ``time_s``, ``link`` (its name), ``backlog_bytes``
    and ``backlog_pkts`` (at ``t_ns``), and in the interval ``drops_pkts``, ``marks_pkts`` and ``tx_bytes``."""
    cols = decode_columns(raw["link_trace"])
    t_ns = cols.get("t_ns", np.zeros(0, dtype="<u8"))
    link = cols.get("link", np.zeros(0, dtype="<u8"))
    return pa.table({
        "t_ns": _arrow(t_ns),
        "time_s": _arrow(t_ns.astype(np.float64) / NS_PER_S),
        "link": pa.array([names[int(i)] for i in link], type=pa.string()),
        "backlog_bytes": _arrow(cols.get("backlog_bytes", np.zeros(0, dtype="<u8"))),
        "backlog_pkts": _arrow(cols.get("backlog_pkts", np.zeros(0, dtype="<u8"))),
        "drops_pkts": _arrow(cols.get("drops", np.zeros(0, dtype="<u8"))),
        "marks_pkts": _arrow(cols.get("marks", np.zeros(0, dtype="<u8"))),
        "tx_bytes": _arrow(cols.get("tx_bytes", np.zeros(0, dtype="<u8"))),
    })  # fmt: skip


TRANSFERS_SCHEMA = pa.schema(
    [
        ("source", pa.uint32()),
        ("name", pa.string()),
        ("session", pa.uint32()),
        ("size_bytes", pa.uint64()),
        ("start_ns", pa.uint64()),
        ("start_s", pa.float64()),
        ("fct_ns", pa.uint64()),
        ("fct_s", pa.float64()),
        ("rtt_ns", pa.uint64()),
        ("reverse", pa.bool_()),
        ("delivered_bytes", pa.uint64()),
    ]
)


def empty_transfers() -> pa.Table:
    """A transfers table with no rows (``schema.empty_table()`` would import pandas)."""
    arrays = []
    for f in TRANSFERS_SCHEMA:
        offsets = [pa.py_buffer(np.zeros(1, dtype=np.int32))] if f.type == pa.string() else []
        arrays.append(pa.Array.from_buffers(f.type, 0, [None, *offsets, pa.py_buffer(b"")]))
    return pa.Table.from_arrays(arrays, schema=TRANSFERS_SCHEMA)


def transfers_table(raw: Mapping[str, Any]) -> pa.Table:
    """The background TCP transfers as an Arrow table (the content of transfers.parquet).

    One row per transfer, in the order they started. Columns: ``source``
    (index of the TCP source: web sources first, then on-off, in file
    order), ``name`` (the source's name), ``session`` (null for Poisson
    arrivals), ``size_bytes``, ``start_ns`` / ``start_s``, ``fct_ns`` /
    ``fct_s`` (completion time: first byte sent to last byte acknowledged;
    null if it had not finished), ``rtt_ns`` (its propagation RTT),
    ``reverse`` (its data crossed the reverse link) and ``delivered_bytes``.
    """
    cols = decode_columns(raw["transfers"]) if "transfers" in raw else {}
    if not cols or len(cols.get("size_bytes", ())) == 0:
        return empty_transfers()
    source = cols["source"]
    tcp_names = [str(s["name"]) for s in raw.get("sources", ()) if s.get("kind") == "tcp"]
    names = np.asarray(tcp_names, dtype=object)
    session = cols["session"]
    fct = cols["fct_ns"]
    unfinished = fct == np.uint64(UNFINISHED)
    out = {
        "source": _arrow(source),
        "name": _strings(names[source.astype(np.int64)].tolist()),
        "session": _arrow(session, mask=session == np.uint32(NO_SESSION)),
        "size_bytes": _arrow(cols["size_bytes"]),
        "start_ns": _arrow(cols["start_ns"]),
        "start_s": _arrow(cols["start_ns"].astype(np.float64) / NS_PER_S),
        "fct_ns": _arrow(fct, mask=unfinished),
        "fct_s": _arrow(fct.astype(np.float64) / NS_PER_S, mask=unfinished),
        "rtt_ns": _arrow(cols["rtt_ns"]),
        "reverse": _bools(cols["reverse"] != 0),
        "delivered_bytes": _arrow(cols["delivered_bytes"]),
    }
    return pa.table(out, schema=TRANSFERS_SCHEMA)
