"""The result of one run, in memory and on disk.

A saved run is a folder::

    spec.toml        the resolved experiment (rerun it to get the same numbers)
    summary.json     per-flow and aggregate metrics (see ccarena.metrics)
    flows.parquet    one row per flow per interval: bytes through the bottleneck,
                     rate, cwnd, ssthresh, srtt, in-flight, pacing rate,
                     delivered bytes, retransmits, algorithm internals
    queue.parquet    one row per interval: bottleneck backlog, drops, bytes sent,
                     background bytes, reverse backlog, flow slots in use
    transfers.parquet  one row per background TCP transfer: source, session, size,
                     start, completion time (null if unfinished), RTT, direction
    figure.png       the overview plot (rate, cwnd and queue over time)

``summary.json`` and the Parquet files depend only on the experiment and the
seed: running the saved ``spec.toml`` again gives identical bytes.
A folder is written under a temporary name and renamed when complete, so a
folder with the final name is always whole; existing folders are never
overwritten.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import tomli_w

from .metrics import FORMAT_VERSION, NO_SESSION, NS_PER_S, UNFINISHED, decode_columns, summarize
from .spec import INFINITE_SSTHRESH, Spec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FORMAT_VERSION",
    "Result",
    "ResultExistsError",
    "flows_table",
    "queue_table",
    "transfers_table",
    "upgrade_summary",
]

PARQUET_COMPRESSION = "zstd"
PARQUET_COMPRESSION_LEVEL = 3


class ResultExistsError(FileExistsError):
    """The output folder already exists; ccarena never overwrites results."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: already exists (ccarena never overwrites results; choose another folder)"


_ARROW_TYPES: dict[str, pa.DataType] = {
    "<u8": pa.uint64(),
    "<u4": pa.uint32(),
    "<f8": pa.float64(),
    "<i8": pa.int64(),
    "<i4": pa.int32(),
}

_CC_SLOTS = tuple(f"cc_{k}" for k in range(8))


def _arrow(values: npt.NDArray[Any], mask: npt.NDArray[np.bool_] | None = None) -> pa.Array:
    return pa.array(values, type=_ARROW_TYPES.get(values.dtype.str, pa.from_numpy_dtype(values.dtype)), mask=mask)


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
    ``pacing_rate_bps``, ``delivered_bytes``, ``retrans``) and one column
    per algorithm internal under the algorithm's own name (e.g. CUBIC's
    ``w_max_pkts``), NaN for flows whose algorithm lacks it.
    """
    cols = decode_columns(raw["flows_trace"])
    t_ns = cols.get("t_ns", np.zeros(0, dtype="<u8"))
    flow = cols.get("flow", np.zeros(0, dtype="<u4"))
    n = len(t_ns)
    interval_ns = int(spec.engine["interval_ns"])
    flows = list(raw["flows"])
    groups = np.asarray(spec.flow_groups, dtype=np.uint32)
    ccs = np.asarray([str(f["cc"]) for f in flows], dtype=object)
    idx = flow.astype(np.int64)

    out: dict[str, pa.Array] = {
        "t_ns": _arrow(t_ns),
        "time_s": pa.array(t_ns.astype(np.float64) / NS_PER_S, type=pa.float64()),
        "flow": _arrow(flow),
        "group": pa.array(groups[idx] if n else np.zeros(0, np.uint32), type=pa.uint32()),
        "cc": pa.array(ccs[idx].tolist() if n else [], type=pa.string()),
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
            out["rate_bps"] = pa.array(rate, type=pa.float64())

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
        out[column] = pa.array(values, type=pa.float64())
    return pa.table(out)


def queue_table(raw: Mapping[str, Any]) -> pa.Table:
    """The bottleneck queue trace as an Arrow table (the content of queue.parquet).

    Columns: ``t_ns`` (end of the interval), ``time_s``, ``backlog_bytes`` and
    ``backlog_pkts`` (at ``t_ns``), ``drops`` and ``tx_bytes`` (in the interval).
    """
    cols = decode_columns(raw["queue_trace"])
    t_ns = cols.get("t_ns", np.zeros(0, dtype="<u8"))
    out: dict[str, pa.Array] = {
        "t_ns": _arrow(t_ns),
        "time_s": pa.array(t_ns.astype(np.float64) / NS_PER_S, type=pa.float64()),
    }
    for name, values in cols.items():
        if name != "t_ns":
            out[name] = _arrow(values)
    return pa.table(out)


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
        return TRANSFERS_SCHEMA.empty_table()
    source = cols["source"]
    tcp_names = [str(s["name"]) for s in raw.get("sources", ()) if s.get("kind") == "tcp"]
    names = np.asarray(tcp_names, dtype=object)
    session = cols["session"]
    fct = cols["fct_ns"]
    unfinished = fct == np.uint64(UNFINISHED)
    out = {
        "source": _arrow(source),
        "name": pa.array(names[source.astype(np.int64)].tolist(), type=pa.string()),
        "session": _arrow(session, mask=session == np.uint32(NO_SESSION)),
        "size_bytes": _arrow(cols["size_bytes"]),
        "start_ns": _arrow(cols["start_ns"]),
        "start_s": pa.array(cols["start_ns"].astype(np.float64) / NS_PER_S, type=pa.float64()),
        "fct_ns": _arrow(fct, mask=unfinished),
        "fct_s": pa.array(fct.astype(np.float64) / NS_PER_S, type=pa.float64(), mask=unfinished),
        "rtt_ns": _arrow(cols["rtt_ns"]),
        "reverse": pa.array(cols["reverse"] != 0, type=pa.bool_()),
        "delivered_bytes": _arrow(cols["delivered_bytes"]),
    }
    return pa.table(out, schema=TRANSFERS_SCHEMA)


def upgrade_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """Brings a loaded summary to the current :data:`FORMAT_VERSION`."""
    version = summary.get("format_version")
    if not isinstance(version, int):
        raise ValueError("summary.json has no format_version; not a ccarena result")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"result format {version} is newer than this ccarena understands ({FORMAT_VERSION}); upgrade ccarena"
        )
    return summary


def _write_parquet(table: pa.Table, path: Path) -> None:
    table = table.replace_schema_metadata({"ccarena.format_version": str(FORMAT_VERSION)})
    pq.write_table(
        table,
        path,
        compression=PARQUET_COMPRESSION,
        compression_level=PARQUET_COMPRESSION_LEVEL,
        write_statistics=True,
        store_schema=True,
    )


def _summary_json(summary: Mapping[str, Any]) -> str:
    return json.dumps(summary, indent=2, sort_keys=True, allow_nan=False) + "\n"


class Result:
    """One run: its resolved experiment, summary metrics and traces.

    * ``summary`` — the metrics of ``summary.json`` (a dict);
    * ``flows`` — per flow per interval (a pandas DataFrame, see
      :func:`flows_table` for the columns);
    * ``queue`` — the bottleneck queue per interval (a DataFrame);
    * ``transfers`` — one row per background TCP transfer (a DataFrame, see
      :func:`transfers_table`; empty without background traffic);
    * ``spec`` — the resolved experiment (a dict, as in ``spec.toml``);
    * ``raw`` — what the simulator returned (None for a loaded result);
    * ``path`` — the folder it was saved to or loaded from, if any.

    ``Result.load(folder)`` reads a saved run; ``result.save(folder)`` writes one.
    """

    def __init__(
        self,
        spec: Mapping[str, Any],
        summary: Mapping[str, Any],
        flows: pa.Table,
        queue: pa.Table,
        *,
        transfers: pa.Table | None = None,
        raw: Mapping[str, Any] | None = None,
        path: Path | None = None,
    ) -> None:
        self.spec: dict[str, Any] = dict(spec)
        self.summary: dict[str, Any] = dict(summary)
        self.flows_arrow = flows
        self.queue_arrow = queue
        self.transfers_arrow = transfers if transfers is not None else TRANSFERS_SCHEMA.empty_table()
        self.raw = raw
        self.path = path
        self._flows_df: pd.DataFrame | None = None
        self._queue_df: pd.DataFrame | None = None
        self._transfers_df: pd.DataFrame | None = None

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], spec: Spec) -> Result:
        """Builds a result from the simulator's output and the experiment that produced it."""
        return cls(
            spec.resolved,
            summarize(raw, spec),
            flows_table(raw, spec),
            queue_table(raw),
            transfers=transfers_table(raw),
            raw=raw,
        )

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Reads a run saved with :meth:`save`."""
        folder = Path(path)
        with open(folder / "spec.toml", "rb") as f:
            spec = tomllib.load(f)
        with open(folder / "summary.json", encoding="utf-8") as f:
            summary = upgrade_summary(json.load(f))
        flows = pq.read_table(folder / "flows.parquet")
        queue = pq.read_table(folder / "queue.parquet")
        # Results saved before background traffic existed have no transfers.parquet.
        tpath = folder / "transfers.parquet"
        transfers = pq.read_table(tpath) if tpath.exists() else None
        return cls(spec, summary, flows, queue, transfers=transfers, path=folder)

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow trace, one row per flow per interval."""
        if self._flows_df is None:
            self._flows_df = self.flows_arrow.to_pandas()
        return self._flows_df

    @property
    def queue(self) -> pd.DataFrame:
        """Bottleneck queue trace, one row per interval."""
        if self._queue_df is None:
            self._queue_df = self.queue_arrow.to_pandas()
        return self._queue_df

    @property
    def transfers(self) -> pd.DataFrame:
        """Background TCP transfers, one row each (empty without background traffic)."""
        if self._transfers_df is None:
            self._transfers_df = self.transfers_arrow.to_pandas()
        return self._transfers_df

    @property
    def engine_seconds(self) -> float | None:
        """Wall-clock seconds the simulator ran (not stored on disk)."""
        if self.raw is None:
            return None
        return float(self.raw["stats"]["engine_seconds"])

    def plot(self, kind: str = "overview") -> Figure:
        """A figure from the plot registry (see :mod:`ccarena.plots`)."""
        from . import plots

        return plots.figure(self, kind)

    def save(self, path: str | Path, *, figure: bool = True) -> Path:
        """Writes the run to a new folder and returns its path.

        The folder must not exist. Files are written into a temporary sibling
        folder that is renamed to ``path`` once everything is in place; on
        any error the temporary folder is removed.
        """
        out = Path(path)
        if out.exists() or out.is_symlink():
            raise ResultExistsError(out)
        parent = out.parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = _make_temp_dir(parent, out.name)
        try:
            (tmp / "spec.toml").write_text(tomli_w.dumps(self.spec), encoding="utf-8")
            (tmp / "summary.json").write_text(_summary_json(self.summary), encoding="utf-8")
            _write_parquet(self.flows_arrow, tmp / "flows.parquet")
            _write_parquet(self.queue_arrow, tmp / "queue.parquet")
            _write_parquet(self.transfers_arrow, tmp / "transfers.parquet")
            if figure and (self.flows_arrow.num_rows > 0 or self.queue_arrow.num_rows > 0):
                from . import plots

                plots.save(self, tmp / "figure.png", kind="overview")
            if out.exists() or out.is_symlink():
                raise ResultExistsError(out)
            os.rename(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.path = out
        return out

    def summary_text(self) -> str:
        """A one-screen text summary: per-flow table, utilisation, fairness, queue, engine speed."""
        return format_summary(self)

    def __repr__(self) -> str:
        s = self.summary
        where = f" at {self.path}" if self.path else ""
        return f"<Result {s.get('name')!r} seed={s.get('seed')} flows={len(s.get('flows', []))}{where}>"


def _make_temp_dir(parent: Path, name: str) -> Path:
    for _ in range(100):
        tmp = parent / f".{name}.tmp-{secrets.token_hex(4)}"
        try:
            tmp.mkdir()
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"{parent}: cannot create a temporary folder for {name}")


def _fmt(x: Any, spec: str, none: str = "-") -> str:
    if x is None:
        return none
    return format(x, spec)


def _mbps(bps: Any) -> str:
    return "-" if bps is None else f"{bps / 1e6:.2f}"


def format_summary(result: Result) -> str:
    """The text summary printed by ``ccarena run``."""
    s = result.summary
    spec = result.spec
    bn = spec["topology"]["bottleneck"]
    rtt = spec["topology"].get("rtt")
    head = (
        f"{s['name']}  seed {s['seed']}  {s['duration_s']:g} s  {len(s['flows'])} flows  "
        f"bottleneck {bn['rate']}, buffer {bn['buffer']}"
    )
    buf = s["bottleneck"].get("buffer_pkts")
    if buf is not None:
        head += f" ({buf} pkts)"
    if rtt:
        head += f", rtt {rtt}"
    lines = [head, ""]
    header = ("flow", "cc", "goodput", "at bottleneck", "retrans", "timeouts", "rtt p50", "rtt p99", "done at")
    units = ("", "", "Mbit/s", "Mbit/s", "pkts", "", "ms", "ms", "s")
    rows = [header, units]
    for f in s["flows"]:
        rows.append(
            (
                str(f["id"]),
                f["cc"],
                _mbps(f["goodput_bps"]),
                _mbps(f["bottleneck_rate_bps"]),
                str(f["retransmits"]),
                str(f["timeouts"]),
                _fmt(f["rtt_p50_ms"], ".1f"),
                _fmt(f["rtt_p99_ms"], ".1f"),
                _fmt(f["completion_s"], ".3f"),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        numbers = [c.rjust(w) for c, w in zip(r[2:], widths[2:], strict=True)]
        cells = [r[0].rjust(widths[0]), r[1].ljust(widths[1]), *numbers]
        lines.append("  ".join(cells).rstrip())
    lines.append("")
    util = _fmt(s["utilization"], ".3f")
    util2 = _fmt(s["utilization_second_half"], ".3f")
    lo, hi = s["jain_window_s"]
    lines.append(
        f"utilisation {util} (second half {util2})   "
        f"Jain index {_fmt(s['jain_index'], '.3f')} (rates at the bottleneck, {lo:g}-{hi:g} s)"
    )
    q = s["queue"]
    lines.append(
        f"queue: {q['drops']} drops ({q['random_drops']} random), delay mean {_fmt(q['delay_mean_ms'], '.2f')} ms, "
        f"p50 {_fmt(q['delay_p50_ms'], '.2f')} ms, p99 {_fmt(q['delay_p99_ms'], '.2f')} ms, "
        f"max backlog {q['max_backlog_pkts']} pkts"
    )
    for src in s.get("sources", ()):
        line = (
            f"background {src['name']} ({src['kind']}): offered {_mbps(src['offered_bps'])} Mbit/s, "
            f"achieved {_mbps(src['achieved_bps'])} Mbit/s"
        )
        if src["kind"] == "tcp":
            line += f", {src['started']} transfers started, {src['completed']} completed"
        lines.append(line)
    tr = s.get("transfers")
    if tr and tr["count"]:
        parts = [
            f"{c['size_class']} {c['completed']}/{c['count']} p50 {_fmt(c['fct_p50_s'], '.3f')}"
            for c in tr["size_classes"]
            if c["count"]
        ]
        lines.append(
            f"transfers: {tr['completed']}/{tr['count']} completed, FCT mean {_fmt(tr['fct_mean_s'], '.3f')} s, "
            f"p50 {_fmt(tr['fct_p50_s'], '.3f')} s, p95 {_fmt(tr['fct_p95_s'], '.3f')} s, "
            f"p99 {_fmt(tr['fct_p99_s'], '.3f')} s"
        )
        lines.append("  by size: " + ", ".join(parts) + " (completed/started, FCT p50 s)")
    secs = result.engine_seconds
    eng = s["engine"]
    if secs is not None and secs > 0:
        lines.append(
            f"engine: {eng['events']:,} events in {secs:.3f} s ({eng['events'] / secs / 1e6:.2f} M events/s, "
            f"{eng['bottleneck_data_packets'] / secs / 1e6:.2f} M bottleneck packets/s)"
        )
    else:
        lines.append(f"engine: {eng['events']:,} events, {eng['bottleneck_data_packets']:,} bottleneck packets")
    return "\n".join(lines)
