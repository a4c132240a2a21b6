"""Names, limits and errors shared by every part of the emulation backend."""

from __future__ import annotations

import os
from pathlib import Path

PREFIX = "ccarena"

NS_SND = "ccarena-snd"

NS_RCV = "ccarena-rcv"

DEV_SND = "ccarena-s"

DEV_RCV = "ccarena-r"

NET = "10.77.0"

ADDR_SND = f"{NET}.1"

PORT_BASE = 5001

RUN_DIR = Path("/run/ccarena")

LOCK_FILE = RUN_DIR / "emu.lock"

STATE_FILE = RUN_DIR / "emu.state"

EMULATOR = "ccarena-emu"

RT_PRIORITY = 50
"""SCHED_FIFO priority of the emulator (needed to deliver within ~0.1 ms)."""

SPIN_NS = 60_000
"""The emulator busy-waits the last part of every wait, for microsecond timing."""

OFFLOAD: bool = os.environ.get("CCARENA_EMU_OFFLOAD", "1") != "0"
"""Whether the emulator's devices take TCP segmentation and checksum offload
(TSO): the kernel's TCP then hands over super-packets of up to 64 KB, which
the emulator splits into wire-size segments before the bottleneck.
``CCARENA_EMU_OFFLOAD=0`` turns it off (one read per 1500-byte packet)."""

BATCH_NS: int = int(os.environ.get("CCARENA_EMU_BATCH_NS", "25000"))
"""The emulator wakes this long after a delivery to a receiver falls due, so
that the segments of a flow due by then reach the receiver in one coalesced
write (as a NIC's interrupt moderation and GRO hand them over) instead of one
system call and one pass through the receiver's TCP each. Deliveries to the
senders are never held. It bounds the added delivery lateness, which the
emulator takes off the receivers' answers on their way back;
``CCARENA_EMU_BATCH_NS`` sets it."""

STALLS: str = os.environ.get("CCARENA_EMU_STALLS", "catch-up")
"""What the emulator does when it finds itself more than 1 ms behind its
schedule (the host taking its CPU, usually): ``catch-up`` (the default)
delivers what fell due at once and keeps the schedule; ``pause`` stops the
links, queues and delay lines for as long, so that nothing leaves faster
than the link, at the cost of the link's time and of delay added to
everything in flight (crates/emu/src/engine.rs, ``Stalls``).
``CCARENA_EMU_STALLS`` sets it."""

def _emu_cpu() -> int | None:
    """The CPU for the emulator: the highest this process may use, when it may use two or more."""
    cpus = os.sched_getaffinity(0)
    return max(cpus) if len(cpus) >= 2 else None

EMU_CPU: int | None = _emu_cpu()
"""The CPU the emulator runs on; the senders and receivers run on the others. The
kernel here is not preemptible (PREEMPT_NONE), so a system call of this process
on the emulator's CPU would delay its wake-ups."""

MAX_RATE_BPS = 10_000_000_000
"""Rates above this are refused. With offload (:data:`OFFLOAD`) the emulator
on a 2-core virtual machine carries one flow at 1 Gbit/s and ten flows at
1 Gbit/s with deliveries on time; see the README for how to measure yours
(the run is flagged when deliveries are late)."""

_KERNEL_HEADERS = {52: True, 40: False}
"""TCP/IPv4 header bytes of a full segment → whether TCP timestamps are on."""

_SYSCTLS = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_limit_output_bytes",
    "net.ipv4.tcp_min_tso_segs",
    "net.ipv4.tcp_tso_win_divisor",
    "net.ipv4.tcp_tso_rtt_log",
    "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio",
    "net.ipv4.tcp_min_rtt_wlen",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_rto_min_us",
    "net.core.default_qdisc",
)
"""Recorded from the senders' namespace (what the kernel's TCP ran with)."""

_RECEIVER_SYSCTLS = ("net.ipv4.tcp_comp_sack_nr", "net.ipv4.tcp_comp_sack_delay_ns")
"""Recorded from the receivers' namespace: they act on the receivers (set there by testbed.py)."""

class EmuUnavailable(RuntimeError):
    """The emulation backend cannot run here (not root, no TUN, no emulator binary, busy)."""

class Terminated(Exception):
    """The run was stopped by SIGTERM (everything was torn down)."""
