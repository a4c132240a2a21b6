"""The result of one run, in memory and on disk.

A saved run is a folder::

    spec.toml        the resolved experiment (rerun it to get the same numbers)
    summary.json     per-flow and aggregate metrics (see ccarena.analysis.metrics)
    provenance.json  version, commit, command line, host, CPU, wall time (see provenance.py)
    flows.parquet    one row per flow per interval: bytes through the bottleneck,
                     rate, cwnd, ssthresh, srtt, in-flight, pacing rate,
                     delivered bytes, retransmits, algorithm internals
    queue.parquet    one row per interval: bottleneck backlog, drops, bytes sent,
                     background bytes, reverse backlog, flow slots in use
    transfers.parquet  one row per background TCP transfer: source, session, size,
                     start, completion time (null if unfinished), RTT, direction
    packets.parquet  only with ``[measure] packets = [from, to]``: one row per
                     packet event at a link in that window (enqueue, dequeue,
                     drop, mark, deliver; see :mod:`ccarena.results.packets`)
    figure.png       the overview plot (rate, cwnd and queue over time)

``summary.json`` and the Parquet files depend only on the experiment and the
seed: running the saved ``spec.toml`` again gives identical bytes.
A folder is written under a temporary name and renamed when complete, so a
folder with the final name is always whole; existing folders are never
overwritten.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import tomli_w

from ..analysis.metrics import FORMAT_VERSION, summarize
from ..analysis.tables import (
    FLOW_RENAMES,
    QUEUE_RENAMES,
    empty_transfers,
    flows_table,
    links_table,
    queue_table,
    transfers_table,
)
from ..spec import Spec
from .packets import link_names, packets_table
from .spool import PARQUET_OPTIONS, TraceSpool, table_metadata
from .store import ResultExistsError, atomic_folder
from .text import format_summary

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["FORMAT_VERSION", "Result", "ResultExistsError", "run_key", "upgrade_summary", "upgrade_table"]

def upgrade_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """Brings a loaded summary to the current :data:`FORMAT_VERSION`."""
    version = summary.get("format_version")
    if not isinstance(version, int):
        raise ValueError("summary.json has no format_version; not a ccarena result")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"result format {version} is newer than this ccarena understands ({FORMAT_VERSION}); upgrade ccarena"
        )
    if version < 2:
        # Format 1 named flows "id" in summary.json.
        for f in summary.get("flows", []):
            if "id" in f and "flow" not in f:
                f["flow"] = f.pop("id")
    return summary


def upgrade_table(table: pa.Table, renames: Mapping[str, str]) -> pa.Table:
    """Renames the columns of a table written in format 1 (its metadata says so) to today's names."""
    meta = table.schema.metadata or {}
    if int(meta.get(b"ccarena.format_version", b"1")) >= 2:
        return table
    return table.rename_columns([renames.get(c, c) for c in table.column_names])


def run_key(spec: Mapping[str, Any]) -> str:
    """The key of a run in every table: 16 hex digits of the SHA-256 of its resolved experiment.

    The same file and seed give the same key; tables of many runs
    concatenate with it as their ``run`` column.
    """
    import hashlib

    return hashlib.sha256(tomli_w.dumps(dict(spec)).encode("utf-8")).hexdigest()[:16]


def _write_parquet(table: pa.Table, path: Path, run: str) -> None:
    pq.write_table(table_metadata(table, run), path, **PARQUET_OPTIONS)


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
    * ``packets`` — the packet log (a DataFrame, see
      :mod:`ccarena.results.packets`; None unless ``[measure] packets`` asked for one);
    * ``spec`` — the resolved experiment (a dict, as in ``spec.toml``);
    * ``raw`` — what the simulator returned (None for a loaded result);
    * ``path`` — the folder it was saved to or loaded from, if any.

    ``Result.load(folder)`` reads a saved run; ``result.save(folder)`` writes one.
    """

    def __init__(
        self,
        spec: Mapping[str, Any],
        summary: Mapping[str, Any],
        flows: pa.Table | None,
        queue: pa.Table | None,
        *,
        transfers: pa.Table | None = None,
        raw: Mapping[str, Any] | None = None,
        path: Path | None = None,
        packets: pa.Table | None = None,
    ) -> None:
        self.spec: dict[str, Any] = dict(spec)
        self.summary: dict[str, Any] = dict(summary)
        # None: in flows.parquet / queue.parquet under ``path``, read when first asked for.
        self._flows_arrow = flows
        self._queue_arrow = queue
        self.transfers_arrow = transfers if transfers is not None else empty_transfers()
        # None: in packets.parquet under ``path`` if the run logged packets.
        self._packets_arrow = packets
        self.raw = raw
        self.path = path
        self.provenance: dict[str, Any] | None = None
        """Where, when and with what the run was made (provenance.json); None for a loaded result."""
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
            packets=packets_table(raw["packets"], link_names(spec)) if "packets" in raw else None,
        )

    @classmethod
    def from_spool(cls, raw: Mapping[str, Any], spec: Spec, spool: TraceSpool) -> Result:
        """A result whose traces went to disk as the run went (``spool.folder``);
        they are read from there when first asked for."""
        return cls(
            spec.resolved,
            summarize(raw, spec, spool.sums),
            None,
            None,
            transfers=transfers_table(raw),
            raw=raw,
            path=spool.folder,
        )

    @property
    def flows_arrow(self) -> pa.Table:
        """The per-flow trace as an Arrow table (the content of flows.parquet)."""
        if self._flows_arrow is None:
            self._flows_arrow = self._read("flows.parquet", FLOW_RENAMES)
        return self._flows_arrow

    @property
    def queue_arrow(self) -> pa.Table:
        """The queue trace as an Arrow table (the content of queue.parquet)."""
        if self._queue_arrow is None:
            self._queue_arrow = self._read("queue.parquet", QUEUE_RENAMES)
        return self._queue_arrow

    @property
    def packets_arrow(self) -> pa.Table | None:
        """The packet log as an Arrow table (the content of packets.parquet); None
        when the experiment asked for none (``[measure] packets``)."""
        if self._packets_arrow is None and self.path is not None and (self.path / "packets.parquet").exists():
            self._packets_arrow = pq.read_table(self.path / "packets.parquet")
        return self._packets_arrow

    @property
    def packets(self) -> pd.DataFrame | None:
        """The packet log, one row per packet event at a link (see
        :mod:`ccarena.results.packets`); None without one."""
        table = self.packets_arrow
        return None if table is None else self._frame(table)

    def _read(self, name: str, renames: Mapping[str, str]) -> pa.Table:
        if self.path is None:
            raise ValueError(f"this result has no {name}")
        return upgrade_table(pq.read_table(self.path / name), renames)

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Reads a run saved with :meth:`save`."""
        folder = Path(path)
        with open(folder / "spec.toml", "rb") as f:
            spec = tomllib.load(f)
        with open(folder / "summary.json", encoding="utf-8") as f:
            summary = upgrade_summary(json.load(f))
        # Results saved before background traffic existed have no transfers.parquet.
        tpath = folder / "transfers.parquet"
        transfers = pq.read_table(tpath) if tpath.exists() else None
        return cls(spec, summary, None, None, transfers=transfers, path=folder)

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow trace, one row per flow per interval."""
        if self._flows_df is None:
            self._flows_df = self._frame(self.flows_arrow)
        return self._flows_df

    @property
    def queue(self) -> pd.DataFrame:
        """Bottleneck queue trace, one row per interval."""
        if self._queue_df is None:
            self._queue_df = self._frame(self.queue_arrow)
        return self._queue_df

    @property
    def transfers(self) -> pd.DataFrame:
        """Background TCP transfers, one row each (empty without background traffic)."""
        if self._transfers_df is None:
            self._transfers_df = self._frame(self.transfers_arrow)
        return self._transfers_df

    @property
    def run_key(self) -> str:
        """This run's key (see :func:`run_key`), the ``run`` column of its DataFrames."""
        return run_key(self.spec)

    def _frame(self, table: pa.Table) -> pd.DataFrame:
        df = table.to_pandas()
        df.insert(0, "run", self.run_key)
        return df

    @property
    def engine_seconds(self) -> float | None:
        """Wall-clock seconds the simulator ran (not stored on disk)."""
        if self.raw is None:
            return None
        return float(self.raw["stats"]["engine_seconds"])

    def plot(self, kind: str = "overview") -> Figure:
        """A figure of the run (a matplotlib Figure; ``fig.savefig("run.pdf")`` writes it).

        ``kind`` names a recipe of :data:`ccarena.analysis.plots.PLOTS`:
        ``overview`` (rate at the bottleneck, cwnd and queue over time),
        ``rate``, ``cwnd``, ``queue``, ``rtt`` (one panel each) and
        ``rate_cwnd`` (rate beside cwnd: what flows get against what the
        sender allows). Rates are counted at the bottleneck, never derived
        from the window.
        """
        from ..analysis import plots

        return plots.figure(self, kind)

    def _repr_html_(self) -> str:
        """A notebook's view: the headline metrics, each flow's values and the overview figure."""
        from ..analysis.html import figure, table

        s = self.summary
        head = [(k, s.get(k)) for k in ("duration_s", "utilization", "utilization_window", "jain_index") if k in s]
        out = f"<h3>{s.get('name')} (seed {s.get('seed')})</h3>" + table(["metric", "value"], head, keys=1)
        flows = [f for f in s.get("flows", []) if isinstance(f, Mapping)]
        cols = list(dict.fromkeys(k for f in flows for k, v in f.items() if not isinstance(v, (Mapping, list))))
        out += table(cols, ([f.get(k) for k in cols] for f in flows), keys=3)
        if self.path is not None or self.raw is not None:
            out += figure(self.plot("overview"), "rate at the bottleneck, cwnd and queue over time")
        return out

    def save(self, path: str | Path, *, figure: bool = True) -> Path:
        """Writes the run to a new folder and returns its path.

        The folder must not exist. Files are written into a temporary sibling
        folder that is renamed to ``path`` once everything is in place; on
        any error the temporary folder is removed.
        """
        out = Path(path)
        flows, queue, packets = self.flows_arrow, self.queue_arrow, self.packets_arrow
        with atomic_folder(out) as tmp:
            key = self.run_key
            _write_parquet(flows, tmp / "flows.parquet", key)
            _write_parquet(queue, tmp / "queue.parquet", key)
            if packets is not None:
                _write_parquet(packets, tmp / "packets.parquet", key)
            self.write_rest(tmp, figure=figure)
        self.path = out
        return out

    def write_rest(self, folder: Path, *, figure: bool = True) -> None:
        """Writes everything but the traces into ``folder`` (where flows.parquet
        and queue.parquet already are): spec, summary, provenance, transfers, figure."""
        (folder / "spec.toml").write_text(tomli_w.dumps(self.spec), encoding="utf-8")
        (folder / "summary.json").write_text(_summary_json(self.summary), encoding="utf-8")
        if self.provenance is not None:
            (folder / "provenance.json").write_text(_summary_json(self.provenance), encoding="utf-8")
        _write_parquet(self.transfers_arrow, folder / "transfers.parquet", self.run_key)
        if self.raw is not None and self.raw.get("link_trace") and "links" in self.summary:
            names = [link["name"] for link in self.summary["links"]]
            _write_parquet(links_table(self.raw, names), folder / "links.parquet", self.run_key)
        if figure:
            from ..analysis import plots

            view = plots.PlotData.read(self.summary, folder)
            if view.flows_arrow.num_rows > 0 or view.queue_arrow.num_rows > 0:
                plots.save(view, folder / "figure.png", kind="overview")

    def summary_text(self) -> str:
        """A one-screen text summary: per-flow table, utilisation, fairness, queue, engine speed."""
        return format_summary(self.summary, self.spec, self.engine_seconds)

    def __repr__(self) -> str:
        s = self.summary
        where = f" at {self.path}" if self.path else ""
        return f"<Result {s.get('name')!r} seed={s.get('seed')} flows={len(s.get('flows', []))}{where}>"


