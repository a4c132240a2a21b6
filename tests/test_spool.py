"""Traces written to disk as the run goes.

A saved run hands its trace to Parquet in chunks (row groups) and keeps
only the sums the summary needs. Against the same run kept whole in
memory: the same summary.json, the same table rows, however small the
chunks; and a run's peak memory does not grow with its duration.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import ccarena
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ccarena import _core
from ccarena.backends.sim import simulate
from ccarena.results import Result
from ccarena.results.spool import TraceSpool
from ccarena.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent

# Flows that start late, stop early (responsiveness), finish a fixed size
# (rows end before the run does), an AQM's extra queue columns, background
# web traffic, a custom steady-state window and averaging span.
EXPERIMENTS: dict[str, dict[str, Any]] = {
    "stops-and-completions": {
        "name": "spool",
        "duration": "12s",
        "seed": 4,
        "topology": {"rtt": "30ms", "bottleneck": {"rate": "40Mbps", "buffer": "1bdp", "qdisc": "codel"}},
        "flows": [
            {"cc": "cubic", "count": 2},
            {"cc": "reno", "start": "2s", "stop": "7s"},
            {"cc": "bbr", "start": "1s", "app": "fixed", "size": "6MB"},
        ],
        "measure": {"interval": "50ms", "window": ["3s", "11s"], "average": "500ms"},
    },
    "background": {
        "name": "spool-bg",
        "duration": "8s",
        "seed": 2,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "2bdp"}},
        "flows": [{"cc": "cubic"}, {"cc": "reno", "rtt": "80ms", "stop": "6s"}],
        "background": {"web": [{"rate": 20.0, "sizes": "surge"}]},
        "measure": {"interval": "10ms"},
    },
}


def same_table(a: pa.Table, b: pa.Table) -> bool:
    """Equal columns and rows, NaN equal to NaN (algorithm internals a flow lacks are NaN)."""
    if a.column_names != b.column_names or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        x, y = a[name].combine_chunks(), b[name].combine_chunks()
        if pa.types.is_floating(x.type):
            if not (x.is_null().equals(y.is_null()) and np.array_equal(x.to_numpy(False), y.to_numpy(False), equal_nan=True)):
                return False
        elif not x.equals(y):
            return False
    return True


def _streamed(spec: Any, folder: Path, chunk_rows: int) -> tuple[Result, TraceSpool]:
    spool = TraceSpool(spec, folder, "run")
    try:
        raw = simulate(spec, sink=spool, chunk_rows=chunk_rows)
    finally:
        spool.close()
    return Result.from_spool(raw, spec, spool), spool


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_chunked_traces_give_the_same_summary_and_rows(name: str, tmp_path: Path) -> None:
    spec = load_spec(EXPERIMENTS[name])
    whole = Result.from_raw(simulate(spec), spec)
    # Many small chunks: slices of 2000 events, a hand-over whenever a row is waiting.
    spool = TraceSpool(spec, tmp_path, "run")
    try:
        raw = _core.simulate(spec.engine, None, spool, 1, 2_000)
    finally:
        spool.close()
    chunked = Result.from_spool(raw, spec, spool)
    assert spool.chunks > 20, spool.chunks
    assert json.dumps(chunked.summary, sort_keys=True) == json.dumps(whole.summary, sort_keys=True)
    assert chunked.summary["responsiveness"]["events"], "the experiment must exercise responsiveness"
    flows = pq.read_table(tmp_path / "flows.parquet")
    assert pq.ParquetFile(tmp_path / "flows.parquet").metadata.num_row_groups == spool.chunks
    assert same_table(flows, whole.flows_arrow)
    queue = pq.read_table(tmp_path / "queue.parquet")
    assert same_table(queue, whole.queue_arrow)
    # One chunk at the end: the same again.
    (tmp_path / "one").mkdir()
    one, spool1 = _streamed(spec, tmp_path / "one", 1 << 30)
    assert spool1.chunks == 1
    assert one.summary == whole.summary


def test_a_saved_run_is_the_same_as_one_saved_from_memory(tmp_path: Path) -> None:
    spec = load_spec(EXPERIMENTS["stops-and-completions"])
    streamed = ccarena.run(spec, out=tmp_path / "streamed")
    whole = Result.from_raw(simulate(spec), spec)
    whole.save(tmp_path / "whole")
    for name in ("summary.json", "spec.toml"):
        assert (tmp_path / "streamed" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    for name in ("flows.parquet", "queue.parquet", "transfers.parquet"):
        assert same_table(pq.read_table(tmp_path / "streamed" / name), pq.read_table(tmp_path / "whole" / name)), name
    assert (tmp_path / "streamed" / "figure.png").stat().st_size > 0
    # The result reads its traces from the folder when asked.
    assert len(streamed.flows) == whole.flows_arrow.num_rows
    assert streamed.path == tmp_path / "streamed"


PEAK = """
import resource, sys, ccarena
ccarena.run({{"name": "long", "duration": "{duration}", "seed": 1,
  "topology": {{"rtt": "20ms", "bottleneck": {{"rate": "1Mbps", "buffer": "1bdp"}}}},
  "flows": [{{"cc": "reno", "count": 200}}], "measure": {{"interval": "10ms"}}}},
  out=sys.argv[1], figure=False)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(duration: str, out: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", PEAK.format(duration=duration), str(out)], capture_output=True, text=True, check=True
    )
    return int(proc.stdout.split()[-1])


def test_peak_memory_does_not_grow_with_duration(tmp_path: Path) -> None:
    """200 flows on a slow link, 10 ms intervals: 20 000 trace rows per simulated second.

    Kept whole, the trace costs about 500 bytes per row in memory, so 240 s
    (4.8 M rows) would take over 2 GB more than 20 s (0.4 M rows); written as
    it goes, the two peaks are within 100 MB.
    """
    short = _peak_kib("20s", tmp_path / "short")
    long = _peak_kib("240s", tmp_path / "long")
    rows = pq.ParquetFile(tmp_path / "long" / "flows.parquet").metadata.num_rows
    assert rows == 200 * 24_000
    assert long - short < 100 * 1024, f"peak {short} KiB for 20 s, {long} KiB for 240 s"
