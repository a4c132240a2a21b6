"""What a simulated run will cost, from its resolved experiment, before it runs.

* packets through the bottleneck: at most the link's rate over the time
  flows run, in packets of the flows' size (and the same for the reverse
  link when data cross it);
* wall time: those packets at the engine's speed on this kind of machine,
  which falls as flows are added (their state no longer fits in the caches;
  :func:`seconds_per_packet`), plus the start-up;
* trace rows: one per flow and per interval, and one per interval for the
  queue; each costs time to record and write, and disk space;
* peak memory: the interpreter and its libraries, the trace rows held at
  once (a saved run writes its trace to disk in chunks as it goes, so one
  chunk; a run kept in memory all of them), the sums the metrics keep, the
  rows the figure reads, the flows' state and the packets the buffers and
  the paths hold.

The memory constants were fitted to the peak resident memory
(``/usr/bin/time -v``) of five runs, from 1 to 1000 flows and from 10 to
300 s, on the 2-core machine ccarena is developed on, and the speed to the
engine's packets per second on five runs of 1, 2, 10, 100 and 1000 flows
on the same machine (0.23, 0.28, 0.49, 0.82 and 1.22 µs per bottleneck
packet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..spec import Spec
from .sim import CHUNK_ROWS

__all__ = ["Estimate", "available_memory_bytes", "estimate"]

SECONDS_PER_PACKET = (0.23e-6, 0.225e-6, 0.035e-6)
"""Engine time per bottleneck packet: a + b·L + c·L², L = log10(flows) (fitted; see the module)."""
STARTUP_S = 0.45
"""Start-up of the command and writing the results, seconds."""
SECONDS_PER_FLOW = 1e-4
"""Each flow's summary, table rows and clean-up, seconds."""
BASE_BYTES = 90e6
"""The interpreter with numpy, pyarrow and the engine loaded."""
BYTES_PER_TRACE_ROW = 500.0
"""A flows-trace row in the engine, in numpy and in Arrow (about 130 bytes each, and copies)."""
FIGURE_ROWS = 2_000_000
"""Most trace rows the figure reads (ccarena.analysis.plots.MAX_TRACE_ROWS)."""
BYTES_PER_FIGURE_ROW = 150.0
"""A row the figure reads and draws (fitted: 4.8 M rows of 200 flows, 280 MB)."""
BYTES_PER_FLOW = 15e3
"""A flow's sender, receiver and algorithm state, and its summary."""
BYTES_PER_PACKET = 160.0
"""A packet slot of the engine's arena."""
SECONDS_PER_TRACE_ROW = 1.5e-6
"""Recording a flow row, converting it and writing it to Parquet (fitted: 4.8 M rows of 200 flows, 7.2 s)."""
DISK_BYTES_PER_TRACE_ROW = 40.0
"""A flow row in flows.parquet, compressed (25 bytes for busy flows in the quick start, less for idle ones)."""


@dataclass(frozen=True)
class Estimate:
    """What a run will cost (upper estimates: every link busy all the time)."""

    packets: int
    trace_rows: int
    memory_bytes: int
    wall_s: float
    disk_bytes: int = 0

    def text(self) -> str:
        """One line: ``about N bottleneck packets, R trace rows, M MB of memory, D MB on disk, W s``."""
        return (
            f"about {self.packets:,} bottleneck packets, {self.trace_rows:,} trace rows, "
            f"{_size(self.memory_bytes)} of memory, {_size(self.disk_bytes)} on disk, "
            f"{_duration(self.wall_s)} on this machine"
        )


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _duration(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.1f} min"
    return f"{s:.1f} s"


def seconds_per_packet(flows: int) -> float:
    """Engine wall time per bottleneck packet with ``flows`` flows sharing the link."""
    a, b, c = SECONDS_PER_PACKET
    lg = math.log10(max(flows, 1))
    return a + b * lg + c * lg * lg


def estimate(spec: Spec, *, saved: bool = True, figure: bool = True) -> Estimate:
    """The cost of running ``spec`` in the simulator: saved to a folder as it
    goes (as ``ccarena run`` does), with or without the figure, or kept in memory."""
    eng = spec.engine
    duration_ns = int(eng.duration_ns)
    flows = eng.flows
    tcp = eng.tcp_sources
    starts = [int(f.start_ns) for f in flows] + [int(s.start_ns) for s in (*tcp, *eng.udp_sources)]
    active_s = (duration_ns - min(starts, default=0)) / 1e9
    sizes = [int(f.mss) + int(f.header_bytes) for f in (*flows, *tcp)] or [1500]
    packet_bits = 8 * min(sizes)
    packets = int(eng.bottleneck.rate_bps) * active_s / packet_bits
    if any(f.reverse for f in flows) or any(s.direction != "forward" for s in tcp):
        packets += int(eng.reverse.rate_bps) * active_s / packet_bits
    intervals = math.ceil(duration_ns / int(eng.interval_ns)) if eng.trace else 0
    rows = (len(flows) + 1) * intervals
    buffered = sum(
        int(link.buffer_pkts if link.buffer_pkts is not None else int(link.buffer_bytes or 0) // 40)
        for link in (eng.bottleneck, eng.reverse)
    )
    in_flight = max((int(eng.bottleneck.rate_bps) * int(f.rtt_ns) / (8e9 * 1500) for f in flows), default=0.0)
    if saved:
        held = min(rows, CHUNK_ROWS + len(flows) + 1)
        bins = 3 * duration_ns / 1e9  # per flow: the metrics' 1 s, 1 s and 10 s bins, at most
        trace_bytes = BYTES_PER_TRACE_ROW * held + 8.0 * len(flows) * bins
        if figure:
            trace_bytes += BYTES_PER_FIGURE_ROW * min(rows, FIGURE_ROWS)
    else:
        trace_bytes = BYTES_PER_TRACE_ROW * rows
    memory = (
        BASE_BYTES
        + trace_bytes
        + BYTES_PER_FLOW * (len(flows) + sum(int(s["arrivals"].get("sessions", 0)) for s in tcp))
        + BYTES_PER_PACKET * min(buffered + 2 * in_flight, 4 * packets + 1000)
    )
    # A Poisson source counts as one flow for the engine's speed.
    n_flows = len(flows) + sum(int(s["arrivals"].get("sessions", 1)) for s in tcp)
    wall_s = STARTUP_S + SECONDS_PER_FLOW * n_flows + packets * seconds_per_packet(n_flows) + SECONDS_PER_TRACE_ROW * rows
    return Estimate(int(packets), rows, int(memory), wall_s, int(DISK_BYTES_PER_TRACE_ROW * rows))


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (None where there is none)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None
