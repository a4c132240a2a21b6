"""A run's traces written to disk as the run goes.

The simulator hands its trace over in chunks of whole intervals
(``_core.simulate(..., sink=...)``); :class:`TraceSpool` appends each chunk
to ``flows.parquet`` and ``queue.parquet`` as one more row group and keeps
only the sums the summary needs (:class:`~ccarena.analysis.tracesums.TraceSums`),
so a run's memory depends on its flows, not on its duration. The files
have the same columns and rows as those of a run kept in memory
(:meth:`Result.save`). The packet log, when the experiment asks for one,
arrives the same way (``packet_sink``) and goes to ``packets.parquet``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..analysis.metrics import FORMAT_VERSION, decode_columns, trace_sums
from ..analysis.tables import flows_table, queue_table
from ..spec import Spec
from .packets import empty_packets, link_names, packets_table

__all__ = ["PARQUET_OPTIONS", "TraceSpool", "table_metadata"]

PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "write_statistics": True,
    "store_schema": True,
}
"""How every Parquet file of a result is written."""

_NOT_ENDED = 2**63 - 1


def table_metadata(table: pa.Table, run: str) -> pa.Table:
    """The table with ccarena's schema metadata: result format and run key."""
    return table.replace_schema_metadata({"ccarena.format_version": str(FORMAT_VERSION), "ccarena.run": run})


class TraceSpool:
    """Receives the simulator's trace chunks and writes them into ``folder``.

    Call it as the simulator's sink; :meth:`close` when the run is over.
    ``sums`` then holds what :func:`~ccarena.analysis.metrics.summarize`
    needs of the traces.
    """

    def __init__(self, spec: Spec, folder: Path, run: str) -> None:
        self.spec = spec
        self.folder = folder
        self.run = run
        self.sums = trace_sums(spec)
        self.chunks = 0
        self._writers: dict[str, pq.ParquetWriter] = {}

    def __call__(
        self,
        flows_trace: Mapping[str, tuple[str, bytes]],
        queue_trace: Mapping[str, tuple[str, bytes]],
        flows: Sequence[Mapping[str, Any]],
    ) -> None:
        ends = [None if f["end_ns"] is None else int(f["end_ns"]) for f in flows]
        self.sums.add(decode_columns(flows_trace), decode_columns(queue_trace), ends)
        # A flow not ended yet ends after every row of this chunk.
        known = [{**f, "end_ns": _NOT_ENDED if f["end_ns"] is None else f["end_ns"]} for f in flows]
        self._append("flows.parquet", flows_table({"flows_trace": flows_trace, "flows": known}, self.spec))
        self._append("queue.parquet", queue_table({"queue_trace": queue_trace}))
        self.chunks += 1

    def packets(self, columns: Mapping[str, tuple[str, bytes]]) -> None:
        """Receives a chunk of the packet log (the simulator's ``packet_sink``)."""
        self._append("packets.parquet", packets_table(columns, link_names(self.spec)))

    def _append(self, name: str, table: pa.Table) -> None:
        table = table_metadata(table, self.run)
        writer = self._writers.get(name)
        if writer is None:
            writer = pq.ParquetWriter(self.folder / name, table.schema, **PARQUET_OPTIONS)
            self._writers[name] = writer
        writer.write_table(table)

    def close(self) -> None:
        """Finishes the files (their footers); a packet log that saw no packet is an empty table."""
        if self.spec.metrics.get("packets_ns") and "packets.parquet" not in self._writers:
            self._append("packets.parquet", empty_packets())
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()
