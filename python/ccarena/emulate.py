"""The emulation backend: an experiment on real Linux TCP through ccarena's link emulator.

``ccarena run FILE --backend emu`` (or ``ccarena.run(FILE, backend="emu")``)
runs the experiment's flows as kernel TCP connections, each with its
algorithm set by ``TCP_CONGESTION``, through an emulated bottleneck with the
experiment's rate, buffer, queue discipline and delays, and writes the same
result folder as the simulator::

    namespace ccarena-snd               root namespace                    namespace ccarena-rcv
    10.77.0.1 ── TUN ccarena-s ◄─fd─► ccarena-emu (SCHED_FIFO) ◄─fd─► TUN ccarena-r ── 10.77.0.2
    one sender socket per flow         qdisc → link rate → delay            one receiver per flow,
                                       (the simulator's DropTail)           port 5001 + flow id

The emulator (``crates/emu``, binary ``ccarena-emu``) creates both TUN
devices in the root namespace; they are then moved into two network
namespaces made for the run, so all traffic stays between them. Data get
the bottleneck's queue, serialisation at its rate and then the flow's
one-way delay (half its RTT); ACKs cross a reverse port and get the same
delay back. The emulator counts, like the simulator, the bytes of each flow
leaving the bottleneck queue per interval, drops and backlog, and measures
RTT samples from the sequence numbers it forwards.

This process is sender and receiver of every flow: it creates the sockets
inside the namespaces (``setns(2)``), drives bulk, fixed-size and
rate-limited applications from one event loop, and samples ``TCP_INFO``
(cwnd, ssthresh, srtt, in-flight, pacing and delivery rate, retransmits)
at every measurement interval. Everything is torn down at the end, after a
failure, on Ctrl-C and on SIGTERM; a run that was killed outright (SIGKILL)
leaves at most its two namespaces, which the next run removes. Only one
emulated run can be in progress on a machine (a lock in /run/ccarena).

The kernel decides what can be run: its algorithms
(``/proc/sys/net/ipv4/tcp_available_congestion_control``), their module
parameters (shared by every socket, so an experiment may only ask for the
values the kernel has), SACK with PRR and RACK for loss recovery, 52-byte
headers with timestamps (or 40 without). Anything else is refused with one
line before anything starts. The kernel version and the sysctls that matter
are stored in ``summary.json`` under ``emu``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from . import _core
from .spec import Spec, SpecError, apply_overrides, read_toml, resolve
from .units import parse_time

__all__ = [
    "EmuUnavailable",
    "Terminated",
    "check_environment",
    "check_spec",
    "cleanup",
    "emulate",
    "emulator_binary",
    "kernel_algorithms",
    "leftovers",
    "load_spec",
]

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


def _emu_cpu() -> int | None:
    """The CPU for the emulator: the highest this process may use, when it may use two or more."""
    cpus = os.sched_getaffinity(0)
    return max(cpus) if len(cpus) >= 2 else None


EMU_CPU: int | None = _emu_cpu()
"""The CPU the emulator runs on; the senders and receivers run on the others. The
kernel here is not preemptible (PREEMPT_NONE), so a system call of this process
on the emulator's CPU would delay its wake-ups."""
MAX_RATE_BPS = 1_000_000_000
"""Rates above this are refused; on the machine it was built on the emulator
reaches about 300 Mbit/s of 1500-byte packets before the TUN devices limit it."""

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

# Linux socket options not named by the socket module on every version.
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)
TCP_CC_INFO = 26
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)
SO_MAX_PACING_RATE = 47
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SO_TIMESTAMPING = 37
IP_RECVERR = 11
MSG_ERRQUEUE = 0x2000
# SOF_TIMESTAMPING_TX_SOFTWARE | _SOFTWARE | _OPT_ID | _OPT_TSONLY (linux/net_tstamp.h)
_TS_FLAGS = (1 << 1) | (1 << 4) | (1 << 7) | (1 << 11)
PROBE_PORT = 4999
CLONE_NEWNET = 0x40000000

NOTSENT_LOWAT = 256 * 1024
"""Unsent bytes a sender keeps in its socket: enough to fill the window
between two turns of the event loop, small enough that a flow that stops
sends little more (the simulator's application stops at once)."""
CHUNK = 256 * 1024
RECV_BUF = 1 << 20
SETUP_TIMEOUT_S = 10.0
START_MARGIN_NS = 200_000_000
"""Time between the end of the set-up and the start of the measurement."""

# struct tcp_info (include/uapi/linux/tcp.h), up to tcpi_total_rto_time.
_TCP_INFO = struct.Struct("<8B 4I 5I 4I 8I 2I I 4Q 2I 4I Q 3Q 2I 2Q 2I I 2I I 2H I")
_TCP_INFO_NAMES = (
    "state ca_state retransmits probes backoff options wscale flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering "
    "rcv_rtt rcv_space total_retrans pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out delivery_rate "
    "busy_time rwnd_limited sndbuf_limited delivered delivered_ce bytes_sent bytes_retrans "
    "dsack_dups reord_seen rcv_ooopack snd_wnd rcv_wnd rehash total_rto total_rto_recoveries "
    "total_rto_time"
)
_TI = {name: i for i, name in enumerate(_TCP_INFO_NAMES.split())}

BBR_METRICS = ("pacing_gain", "cwnd_gain", "btl_bw_bps", "min_rtt_ms")
"""What the kernel's BBR tells through TCP_CC_INFO (struct tcp_bbr_info)."""


class EmuUnavailable(RuntimeError):
    """The emulation backend cannot run here (not root, no TUN, no emulator binary, busy)."""


class Terminated(Exception):
    """The run was stopped by SIGTERM (everything was torn down)."""


# ---------------------------------------------------------------------------
# What the kernel offers, and the experiment checks


def kernel_algorithms() -> list[str]:
    """The congestion-control algorithms the running kernel offers."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def _sim_algorithms() -> set[str]:
    return {str(a["name"]) for a in _core.cc_algorithms()}


def load_spec(
    source: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Spec:
    """Like :func:`ccarena.load_spec`, for the emulation backend.

    Every algorithm must be one the kernel offers; an algorithm the kernel
    has but the simulator does not (e.g. ``bbr`` before the simulator has
    it) is accepted without parameters. Raises :class:`SpecError`, and
    checks everything :func:`check_spec` checks.
    """
    if isinstance(source, Mapping):
        raw = dict(source)
        default_name = "experiment"
    else:
        raw = read_toml(source)
        default_name = Path(source).stem
    raw = apply_overrides(raw, overrides)
    if set:
        raw = apply_overrides(raw, set)
    if seed is not None:
        raw["seed"] = seed
    kernel = kernel_algorithms()
    known = _sim_algorithms()
    kernel_only: dict[int, str] = {}
    groups = raw.get("flows")
    if isinstance(groups, list):
        for gi, g in enumerate(groups):
            if not isinstance(g, dict) or not isinstance(g.get("cc"), str):
                continue
            cc = g["cc"]
            _check_kernel_has(cc, f"flows[{gi}].cc", kernel)
            if cc not in known:
                if g.get("params"):
                    raise SpecError(
                        f"flows[{gi}].params",
                        f"the kernel's {cc} takes no per-flow parameters here (ccarena's simulator has no \"{cc}\" "
                        "to check them against)",
                    )
                kernel_only[gi] = cc
                groups[gi] = {**g, "cc": "reno"}  # a stand-in for validating the rest of the group
    spec = resolve(raw, default_name=default_name)
    if kernel_only:
        for gi, cc in kernel_only.items():
            rf = spec.resolved["flows"][gi]
            rf["cc"] = cc
            rf.pop("params", None)
            rf["recovery"] = "prr"
        for ef, gi in zip(spec.engine["flows"], spec.flow_groups, strict=True):
            if gi in kernel_only:
                ef["cc"] = kernel_only[gi]
                ef["params"] = {}
                ef["recovery"] = "prr"
    check_spec(spec)
    return spec


def _check_kernel_has(cc: str, path: str, kernel: list[str]) -> None:
    if cc not in kernel:
        offers = ", ".join(kernel) if kernel else "nothing readable"
        raise SpecError(
            path, f'"{cc}" is not in this kernel (it offers: {offers}); the emu backend runs the kernel\'s algorithms'
        )


def _cubic_module_params() -> dict[str, Any]:
    """The kernel's CUBIC module parameters in the simulator's terms."""
    base = Path("/sys/module/tcp_cubic/parameters")

    def read(name: str) -> int | None:
        try:
            return int((base / name).read_text().strip())
        except (OSError, ValueError):
            return None

    out: dict[str, Any] = {}
    beta, scale = read("beta"), read("bic_scale")
    if beta is not None:
        out["beta"] = (beta, lambda v: round(float(v) * 1024) == beta, f"{beta}/1024")
    if scale is not None:
        out["c"] = (scale, lambda v: round(float(v) * 1024) == scale * 10, f"bic_scale={scale} (C = {scale * 10}/1024)")
    for name in ("fast_convergence", "tcp_friendliness", "hystart"):
        v = read(name)
        if v is not None:
            out[name] = (v, lambda x, v=v: bool(x) == bool(v), str(v))
    detect = read("hystart_detect")
    if detect is not None:
        out["hystart_ack_train"] = (detect, lambda x: bool(x) == bool(detect & 1), f"hystart_detect={detect}")
        out["hystart_delay"] = (detect, lambda x: bool(x) == bool(detect & 2), f"hystart_detect={detect}")
    for name in ("hystart_low_window", "hystart_ack_delta_us", "initial_ssthresh"):
        v = read(name)
        if v is not None:
            out[name] = (v, lambda x, v=v: int(x) == v, str(v))
    return out


def _check_params(cc: str, params: Mapping[str, Any], path: str) -> None:
    """Algorithm parameters must be what the kernel runs with (module parameters are global)."""
    if not params:
        return
    defaults: dict[str, Any] = {}
    for a in _core.cc_algorithms():
        if a["name"] == cc:
            defaults = {p["name"]: p["default"] for p in a["params"]}
    kernel = _cubic_module_params() if cc == "cubic" else {}
    for name, value in params.items():
        if name in kernel:
            _, matches, shown = kernel[name]
            if not matches(value):
                raise SpecError(
                    f"{path}.params.{name}",
                    f"the kernel's {cc} runs with {name} = {shown} (module parameter in /sys/module/tcp_{cc}/"
                    f"parameters, shared by every connection); the emu backend cannot use {value!r}",
                )
        elif name in defaults and value != defaults[name]:
            raise SpecError(
                f"{path}.params.{name}",
                f"the kernel's {cc} has no such setting; only the default {defaults[name]!r} runs",
            )


_ENGINE_KEYS = {"seed", "duration_ns", "interval_ns", "trace", "bottleneck", "reverse", "flows"}
_ENGINE_FLOW_KEYS = {
    "cc",
    "params",
    "start_ns",
    "stop_ns",
    "rtt_ns",
    "mss",
    "header_bytes",
    "init_cwnd",
    "rwnd_bytes",
    "pacing",
    "recovery",
    "app",
    "app_bytes",
    "app_rate_bps",
}
_ENGINE_LINK_KEYS = {"rate_bps", "delay_ns", "buffer_pkts", "buffer_bytes", "loss"}


def check_spec(spec: Spec) -> None:
    """Refuses, with the field's path, what the emulation backend cannot run."""
    eng = spec.engine
    kernel = kernel_algorithms()
    for key in sorted(set(eng) - _ENGINE_KEYS):
        if eng[key]:
            where = "background" if "source" in key else key
            raise SpecError(where, "the emu backend does not run this yet (flows and the bottleneck only)")
    qdisc = spec.resolved["topology"]["bottleneck"].get("qdisc", "droptail")
    if qdisc != "droptail":
        raise SpecError("topology.bottleneck.qdisc", f'the emu backend runs "droptail" only, got "{qdisc}"')
    for which, path in (("bottleneck", "topology.bottleneck"), ("reverse", "topology.reverse")):
        link = eng[which]
        if link.get("loss_model"):
            raise SpecError(f"{path}.loss", "the emu backend supports a Bernoulli loss probability only")
        for key in sorted(set(link) - _ENGINE_LINK_KEYS):
            if link[key]:
                raise SpecError(f"{path}.{key.removesuffix('_ns')}", "not supported by the emu backend")
        if int(link["rate_bps"]) > MAX_RATE_BPS:
            raise SpecError(
                f"{path}.rate",
                f"the emu backend forwards at most {MAX_RATE_BPS // 10**6} Mbit/s (about 300 Mbit/s of "
                "1500-byte packets on the machine it was built on)",
            )
    if not isinstance(eng["bottleneck"]["loss"], (int, float)):
        raise SpecError("topology.bottleneck.loss", "the emu backend supports a Bernoulli loss probability only")
    if float(eng["reverse"].get("loss", 0.0)) != 0.0:
        raise SpecError("topology.reverse.loss", "the emu backend has no loss on the reverse link")
    headers = {int(f["header_bytes"]) for f in eng["flows"]}
    for h in headers:
        if h not in _KERNEL_HEADERS:
            raise SpecError(
                "tcp.header",
                f"the kernel's TCP/IPv4 headers are 52 bytes (with timestamps) or 40 (without); got {h}",
            )
    n = len(eng["flows"])
    if PORT_BASE + n > 65535:
        raise SpecError("flows", f"the emu backend runs at most {65535 - PORT_BASE} flows")
    seen: set[int] = set()
    for ef, gi in zip(eng["flows"], spec.flow_groups, strict=True):
        if gi in seen:
            continue
        seen.add(gi)
        path = f"flows[{gi}]"
        for key in sorted(set(ef) - _ENGINE_FLOW_KEYS):
            if ef[key]:
                raise SpecError(f"{path}.{key}", "not supported by the emu backend")
        cc = str(ef["cc"])
        _check_kernel_has(cc, f"{path}.cc", kernel)
        if ef.get("recovery") not in (None, "prr"):
            raise SpecError(
                f"{path}.recovery",
                f'the kernel always recovers with SACK, RACK and PRR; "{ef["recovery"]}" cannot be emulated',
            )
        _check_params(cc, ef.get("params") or {}, path)


# ---------------------------------------------------------------------------
# The machine


def emulator_binary() -> Path | None:
    """The ``ccarena-emu`` binary: $CCARENA_EMU, next to the Python executable, on PATH, or in target/release."""
    env = os.environ.get("CCARENA_EMU")
    if env:
        return Path(env) if os.access(env, os.X_OK) else None
    candidates: list[Path] = [Path(sys.executable).parent / EMULATOR]
    found = shutil.which(EMULATOR)
    if found:
        candidates.append(Path(found))
    repo = Path(__file__).resolve().parents[2]
    candidates.append(repo / "target" / "release" / EMULATOR)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


def check_environment() -> Path:
    """Raises :class:`EmuUnavailable` (one line) unless emulation can run; returns the emulator binary."""
    if os.geteuid() != 0:
        raise EmuUnavailable(
            "the emu backend needs root (it creates network namespaces and TUN devices); run it as root or with sudo"
        )
    if not os.path.exists("/dev/net/tun"):
        raise EmuUnavailable("the emu backend needs /dev/net/tun (TUN devices), which this machine lacks")
    if shutil.which("ip") is None:
        raise EmuUnavailable("the emu backend needs the ip command (iproute2)")
    binary = emulator_binary()
    if binary is None:
        raise EmuUnavailable(
            f"the link emulator {EMULATOR} was not found (build it with `make install` or "
            "`cargo build --release -p ccarena-emu`, or set CCARENA_EMU)"
        )
    return binary


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def leftovers() -> dict[str, list[str]]:
    """What of ccarena's emulation exists on this machine now: namespaces, devices, emulator processes."""
    names = _ip("netns", "list", check=False).stdout.split("\n")
    namespaces = sorted({line.split()[0] for line in names if line.strip().startswith(PREFIX)})
    links = []
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            name = parts[1].strip().split("@")[0]
            if name.startswith(PREFIX):
                links.append(name)
    for ns in namespaces:
        for line in _ip("-n", ns, "-o", "link", "show", check=False).stdout.splitlines():
            parts = line.split(":", 2)
            if len(parts) >= 2:
                name = parts[1].strip().split("@")[0]
                if name.startswith(PREFIX):
                    links.append(f"{ns}/{name}")
    procs = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                comm = (d / "comm").read_text().strip()
            except OSError:
                continue
            if comm == EMULATOR:
                procs.append(d.name)
    return {"namespaces": namespaces, "devices": sorted(links), "processes": sorted(procs)}


def _proc_start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def cleanup() -> None:
    """Removes what an earlier, killed run left: its emulator (if its recorded
    process is still alive), ccarena's namespaces and devices.

    Call it only while holding the run lock (as :func:`emulate` does), or when
    no emulated run is in progress.
    """
    try:
        state = json.loads(STATE_FILE.read_text())
        pid, started = int(state["pid"]), int(state["start_time"])
        if _proc_start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            for _ in range(100):
                if _proc_start_time(pid) != started:
                    break
                time.sleep(0.01)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        pass
    with contextlib.suppress(OSError):
        STATE_FILE.unlink()
    for ns in leftovers()["namespaces"]:
        _ip("netns", "del", ns, check=False)
    for name in leftovers()["devices"]:
        if "/" not in name:
            _ip("link", "del", name, check=False)


@contextlib.contextmanager
def _run_lock() -> Iterator[None]:
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            raise EmuUnavailable(
                f"another emulated run is in progress (pid {holder or '?'}); one at a time per machine"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def _netns(name: str) -> Iterator[None]:
    """Runs the body with the calling thread in network namespace ``name``.

    Sockets created inside stay in that namespace for their whole life.
    """
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns({name}): {os.strerror(e)}")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:  # pragma: no cover - cannot fail for our own namespace
                e = ctypes.get_errno()
                raise OSError(e, f"setns back: {os.strerror(e)}")
    finally:
        os.close(own)
        os.close(target)


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def _read_sysctls(names: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for name in names:
        with contextlib.suppress(OSError):
            out[name] = " ".join(_sysctl_path(name).read_text().split())
    return out


def _write_sysctl(name: str, value: str) -> None:
    _sysctl_path(name).write_text(value)


@contextlib.contextmanager
def _signals_as_exceptions() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (Ctrl-C already raises KeyboardInterrupt), in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        raise Terminated("terminated")

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Holds SIGINT and SIGTERM back (they arrive afterwards) so that a teardown completes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def _off_cpu(cpu: int | None) -> Iterator[None]:
    """Keeps the calling thread off one CPU (the emulator's) for the body."""
    if cpu is None:
        yield
        return
    old = os.sched_getaffinity(0)
    others = old - {cpu}
    if not others:
        yield
        return
    os.sched_setaffinity(0, others)
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)


# ---------------------------------------------------------------------------
# The plan: what to build for an experiment


@dataclass
class _FlowPlan:
    id: int
    cc: str
    app: str
    app_bytes: int | None
    app_rate_bps: int | None
    start_ns: int
    stop_ns: int | None
    rtt_ns: int
    mss: int
    init_cwnd: int
    rwnd_bytes: int | None
    pacing: bool
    rcv_addr: str


@dataclass
class _Plan:
    spec: Spec
    flows: list[_FlowPlan]
    timestamps: bool
    mtu: int
    # init_cwnd → receiver address used by the flows with it (routes carry initcwnd).
    init_cwnd_addrs: dict[int, str]
    max_init_cwnd: int

    @property
    def duration_ns(self) -> int:
        return int(self.spec.engine["duration_ns"])

    @property
    def interval_ns(self) -> int:
        return int(self.spec.engine["interval_ns"])


def _plan(spec: Spec) -> _Plan:
    eng = spec.engine
    header = int(eng["flows"][0]["header_bytes"])
    timestamps = _KERNEL_HEADERS[header]
    addrs: dict[int, str] = {}
    flows = []
    for i, f in enumerate(eng["flows"]):
        icw = int(f["init_cwnd"])
        if icw not in addrs:
            if len(addrs) >= 250:
                raise SpecError("flows", "the emu backend supports at most 250 different init_cwnd values")
            addrs[icw] = f"{NET}.{2 + len(addrs)}"
        flows.append(
            _FlowPlan(
                id=i,
                cc=str(f["cc"]),
                app=str(f["app"]),
                app_bytes=int(f["app_bytes"]) if f.get("app_bytes") is not None else None,
                app_rate_bps=int(f["app_rate_bps"]) if f.get("app_rate_bps") is not None else None,
                start_ns=int(f["start_ns"]),
                stop_ns=int(f["stop_ns"]) if f.get("stop_ns") is not None else None,
                rtt_ns=int(f["rtt_ns"]),
                mss=int(f["mss"]),
                init_cwnd=icw,
                rwnd_bytes=int(f["rwnd_bytes"]) if f.get("rwnd_bytes") is not None else None,
                pacing=bool(f["pacing"]),
                rcv_addr=addrs[icw],
            )
        )
    options = 12 if timestamps else 0
    mtu = max(f.mss for f in flows) + 40 + options
    return _Plan(spec, flows, timestamps, mtu, addrs, max(addrs))


def _other_delay_ns(plan: _Plan) -> int:
    """One-way delay of traffic that belongs to no flow: half the topology's RTT (or the first flow's)."""
    topo_rtt = plan.spec.resolved["topology"].get("rtt")
    return (parse_time(topo_rtt) if topo_rtt is not None else plan.flows[0].rtt_ns) // 2


def _emulator_config(plan: _Plan) -> str:
    eng = plan.spec.engine
    bn, rev = eng["bottleneck"], eng["reverse"]

    def limit(link: Mapping[str, Any], prefix: str) -> str:
        if link.get("buffer_pkts") is not None:
            return f"{prefix}limit_pkts {int(link['buffer_pkts'])}"
        return f"{prefix}limit_bytes {int(link['buffer_bytes'])}"

    other = _other_delay_ns(plan)
    lines = [
        f"tun_snd {DEV_SND}",
        f"tun_rcv {DEV_RCV}",
        f"rate_bps {int(bn['rate_bps'])}",
        limit(bn, ""),
        f"rev_rate_bps {int(rev['rate_bps'])}",
        limit(rev, "rev_"),
        f"loss {float(bn['loss'])!r}",
        f"seed {int(eng['seed'])}",
        f"duration_ns {int(eng['duration_ns'])}",
        f"interval_ns {int(eng['interval_ns'])}",
        f"trace {1 if eng['trace'] else 0}",
        f"port_base {PORT_BASE}",
        "flow_delay_ns " + " ".join(str(f.rtt_ns // 2) for f in plan.flows),
        f"other_delay_ns {other}",
        f"max_packet {plan.mtu + 64}",
        f"rt_priority {RT_PRIORITY}",
        f"spin_ns {SPIN_NS}",
    ]
    if EMU_CPU is not None:
        lines.append(f"cpu {EMU_CPU}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The testbed: namespaces, devices and the emulator process


class Testbed:
    """The two namespaces, their TUN devices and the running emulator.

    A context manager: entering builds everything (after removing what a
    killed run left), leaving tears everything down whatever happened.
    :meth:`socket` makes sockets inside a namespace, :meth:`start` starts the
    emulator's measurement, :meth:`finish` stops it and returns its output.
    """

    def __init__(self, plan: _Plan, binary: Path) -> None:
        self.plan = plan
        self.binary = binary
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp: Path | None = None
        self.realtime = False
        self.sysctls: dict[str, str] = {}
        self._lock: contextlib.ExitStack | None = None

    # -- life cycle

    def __enter__(self) -> Self:
        stack = contextlib.ExitStack()
        stack.enter_context(_run_lock())
        self._lock = stack
        try:
            cleanup()
            self._build()
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._teardown()

    def _build(self) -> None:
        plan = self.plan
        self.tmp = Path(tempfile.mkdtemp(prefix="ccarena-emu-"))
        (self.tmp / "emu.conf").write_text(_emulator_config(plan))
        for ns in (NS_SND, NS_RCV):
            _ip("netns", "add", ns)
            with _netns(ns):
                _write_sysctl("net.ipv6.conf.all.disable_ipv6", "1")
                _write_sysctl("net.ipv6.conf.default.disable_ipv6", "1")
                _write_sysctl("net.ipv4.tcp_timestamps", "1" if plan.timestamps else "0")
                _write_sysctl("net.ipv4.tcp_no_metrics_save", "1")
        stderr = open(self.tmp / "emu.stderr", "wb")  # noqa: SIM115 - closed below
        try:
            self.proc = subprocess.Popen(
                [str(self.binary), "--config", str(self.tmp / "emu.conf"), "--out", str(self.tmp / "out")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
            )
        finally:
            stderr.close()
        STATE_FILE.write_text(
            json.dumps({"pid": self.proc.pid, "start_time": _proc_start_time(self.proc.pid), "owner": os.getpid()})
        )
        line = self._read_line(SETUP_TIMEOUT_S)
        if not line.startswith("ready"):
            raise RuntimeError(f"the link emulator did not start: {self._emulator_error() or line or 'no output'}")
        self.realtime = line.split()[1:2] == ["1"]
        for dev, ns in ((DEV_SND, NS_SND), (DEV_RCV, NS_RCV)):
            _ip("link", "set", "dev", dev, "netns", ns)
            _ip("-n", ns, "link", "set", "dev", "lo", "up")
            _ip("-n", ns, "link", "set", "dev", dev, "mtu", str(plan.mtu), "txqueuelen", "1000", "up")
        _ip("-n", NS_SND, "addr", "add", f"{ADDR_SND}/24", "dev", DEV_SND)
        for icw, addr in plan.init_cwnd_addrs.items():
            _ip("-n", NS_RCV, "addr", "add", f"{addr}/24", "dev", DEV_RCV)
            _ip("-n", NS_SND, "route", "replace", f"{addr}/32", "dev", DEV_SND, "initcwnd", str(icw))
        # The receivers' first window must not hold back a large initial window.
        initrwnd = max(plan.max_init_cwnd, 10)
        _ip("-n", NS_RCV, "route", "replace", f"{ADDR_SND}/32", "dev", DEV_RCV, "initrwnd", str(initrwnd))
        with _netns(NS_SND):
            self.sysctls = _read_sysctls(_SYSCTLS)

    def _read_line(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(timeout):
                return ""
        finally:
            sel.close()
        return self.proc.stdout.readline().decode(errors="replace").strip()

    def _emulator_error(self) -> str:
        if self.tmp is None:
            return ""
        try:
            text = (self.tmp / "emu.stderr").read_text(errors="replace").strip()
        except OSError:
            return ""
        return text.splitlines()[-1] if text else ""

    def _teardown(self) -> None:
        with _signals_deferred():
            try:
                if self.proc is not None:
                    if self.proc.poll() is None:
                        self.proc.kill()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=10)
                    for stream in (self.proc.stdin, self.proc.stdout):
                        if stream is not None:
                            with contextlib.suppress(OSError):
                                stream.close()
                    self.proc = None
                with contextlib.suppress(OSError):
                    STATE_FILE.unlink()
                for ns in (NS_SND, NS_RCV):
                    _ip("netns", "del", ns, check=False)
                if self.tmp is not None:
                    shutil.rmtree(self.tmp, ignore_errors=True)
                    self.tmp = None
            finally:
                if self._lock is not None:
                    self._lock.close()
                    self._lock = None

    # -- use

    def socket(self, ns: str, kind: int = socket.SOCK_STREAM) -> socket.socket:
        """A new IPv4 socket inside namespace ``ns``."""
        with _netns(ns):
            return socket.socket(socket.AF_INET, kind)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self) -> None:
        if not self.alive():
            code = self.proc.returncode if self.proc is not None else None
            raise RuntimeError(
                f"the link emulator stopped (exit status {code}): {self._emulator_error() or 'no message'}"
            )

    def start(self, t0_ns: int) -> None:
        """Starts the measurement at CLOCK_MONOTONIC time ``t0_ns``."""
        self._command(f"start {t0_ns}")

    def _command(self, text: str) -> None:
        self.check_alive()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(text.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.check_alive()
            raise

    def finish(self) -> dict[str, Any]:
        """Stops the emulator and returns its output (emu.json with the columns decoded to bytes)."""
        self._command("stop")
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the link emulator did not stop") from None
        if code != 0:
            raise RuntimeError(f"the link emulator failed (exit status {code}): {self._emulator_error()}")
        assert self.tmp is not None
        out = self.tmp / "out"
        data: dict[str, Any] = json.loads((out / "emu.json").read_text())
        for table in ("flows_trace", "queue_trace"):
            data[table] = {name: (dtype, (out / file).read_bytes()) for name, dtype, file in data["columns"][table]}
        return data


# ---------------------------------------------------------------------------
# Traffic: real sockets, driven from one event loop


@dataclass(eq=False)
class _Flow:
    plan: _FlowPlan
    snd: socket.socket
    lst: socket.socket
    connect_at: int
    start_at: int
    stop_at: int | None
    rcv: socket.socket | None = None
    connecting: bool = False
    connected: bool = False
    started: bool = False
    stopped: bool = False
    written: int = 0
    received: int = 0
    replied: bool = False
    completion_at: int | None = None
    next_rate_at: int = 0
    events: int = 0
    eof: bool = False

    def want_write(self) -> bool:
        if not self.connected or not self.started or self.stopped:
            return False
        p = self.plan
        if p.app == "bulk":
            return True
        if p.app == "fixed":
            return self.written < int(p.app_bytes or 0)
        return False  # rate: written on its own timer


class _Traffic:
    """Runs the flows of a plan on a testbed and samples their TCP state."""

    def __init__(self, plan: _Plan, bed: Testbed, probe_hz: float = 0.0) -> None:
        self.plan = plan
        self.probe_hz = probe_hz
        self.probe_tx: socket.socket | None = None
        self.probe_rx: socket.socket | None = None
        self.probe_next = 0
        self.probe_sent = 0
        self.probe_tx_ns: dict[int, int] = {}
        self.probe_rx_ns: dict[int, tuple[int, int]] = {}
        self.bed = bed
        self.sel = selectors.DefaultSelector()
        self.flows: list[_Flow] = []
        self.chunk = memoryview(bytes(CHUNK))
        self.buf = bytearray(RECV_BUF)
        self.t0 = 0
        self.n = len(plan.flows)
        if plan.spec.engine["trace"]:
            self.grid = _grid(plan.duration_ns, plan.interval_ns)
        else:
            self.grid = [plan.duration_ns]
        k, n = len(self.grid), self.n
        self.cols: dict[str, npt.NDArray[Any]] = {
            "cwnd_pkts": np.zeros((k, n), np.uint32),
            "ssthresh_pkts": np.zeros((k, n), np.uint32),
            "srtt_us": np.zeros((k, n), np.uint64),
            "inflight_pkts": np.zeros((k, n), np.uint32),
            "pacing_rate_bps": np.zeros((k, n), np.uint64),
            "delivered_bytes": np.zeros((k, n), np.uint64),
            "retrans": np.zeros((k, n), np.uint64),
            "delivery_rate_bps": np.zeros((k, n), np.uint64),
            "min_rtt_us": np.zeros((k, n), np.uint64),
            "ca_state": np.zeros((k, n), np.uint32),
        }
        self.cc_cols = np.full((k, n, 8), np.nan)
        self.final: list[dict[str, int]] = [{} for _ in range(n)]

    # -- set-up

    def setup(self) -> None:
        """Creates every socket; flows that start within their connection lead connect now."""
        for p in self.plan.flows:
            lst = self.bed.socket(NS_RCV)
            lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if p.rwnd_bytes is not None:
                lst.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, p.rwnd_bytes)
            lst.bind((p.rcv_addr, PORT_BASE + p.id))
            lst.listen(1)
            lst.setblocking(False)
            snd = self.bed.socket(NS_SND)
            snd.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, p.cc.encode())
            got = snd.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()
            if got != p.cc:
                raise RuntimeError(f"flow {p.id}: the kernel runs {got!r} instead of {p.cc!r}")
            snd.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            snd.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, p.mss + (12 if self.plan.timestamps else 0))
            snd.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)
            if p.pacing:
                # Any finite maximum turns on the kernel's internal pacing (SK_PACING_NEEDED).
                snd.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("<Q", 2**64 - 2))
            snd.setblocking(False)
            lead = 2 * p.rtt_ns + 100_000_000
            self.flows.append(_Flow(plan=p, snd=snd, lst=lst, connect_at=p.start_ns - lead, start_at=0, stop_at=None))
        if self.probe_hz > 0:
            # Delay probes: UDP from the receivers' side to the senders' (the ACK direction,
            # lightly loaded), stamped with CLOCK_REALTIME and received with the kernel's stamp.
            self.probe_tx = self.bed.socket(NS_RCV, socket.SOCK_DGRAM)
            self.probe_tx.bind((self.plan.flows[0].rcv_addr, 0))
            # Kernel transmit timestamps (taken as the TUN device gets the packet), numbered per send.
            self.probe_tx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, _TS_FLAGS)
            self.probe_tx.setblocking(False)
            self.probe_rx = self.bed.socket(NS_SND, socket.SOCK_DGRAM)
            self.probe_rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.probe_rx.bind((ADDR_SND, PROBE_PORT))
            self.probe_rx.setblocking(False)
            self.sel.register(self.probe_rx, selectors.EVENT_READ, ("probe", None))
        early = [f for f in self.flows if f.connect_at <= 0]
        for f in early:
            self._connect(f)
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while any(not f.connected for f in early):
            if time.monotonic() > deadline:
                raise RuntimeError("the connections did not come up through the emulator")
            self.bed.check_alive()
            self._poll(min(0.05, max(0.0, deadline - time.monotonic())), time.monotonic_ns())

    def _connect(self, f: _Flow) -> None:
        err = f.snd.connect_ex((f.plan.rcv_addr, PORT_BASE + f.plan.id))
        if err not in (0, errno.EINPROGRESS):
            raise RuntimeError(f"flow {f.plan.id}: connect: {os.strerror(err)}")
        f.connecting = True
        self.sel.register(f.lst, selectors.EVENT_READ, ("lst", f))
        self.sel.register(f.snd, selectors.EVENT_WRITE, ("snd", f))
        f.events = selectors.EVENT_WRITE

    def _set_events(self, f: _Flow) -> None:
        if not f.connected:
            return
        ev = selectors.EVENT_WRITE if f.want_write() else 0
        if f.plan.app == "fixed" and f.completion_at is None:
            ev |= selectors.EVENT_READ
        if ev == f.events:
            return
        if f.events and ev:
            self.sel.modify(f.snd, ev, ("snd", f))
        elif ev:
            self.sel.register(f.snd, ev, ("snd", f))
        else:
            self.sel.unregister(f.snd)
        f.events = ev

    # -- the loop

    def _poll(self, timeout: float, now: int) -> None:
        for key, mask in self.sel.select(timeout):
            kind, f = key.data
            if kind == "probe":
                self._probe_receive()
            elif kind == "lst":
                try:
                    conn, _ = f.lst.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(False)
                f.rcv = conn
                self.sel.unregister(f.lst)
                f.lst.close()
                self.sel.register(conn, selectors.EVENT_READ, ("rcv", f))
            elif kind == "rcv":
                self._receive(f, time.monotonic_ns())
            elif f.connecting:
                err = f.snd.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    raise RuntimeError(f"flow {f.plan.id}: connect: {os.strerror(err)}")
                f.connecting = False
                f.connected = True
                self._set_events(f)
            else:
                if mask & selectors.EVENT_READ:
                    with contextlib.suppress(BlockingIOError):
                        if f.snd.recv(16) and f.completion_at is None:
                            f.completion_at = time.monotonic_ns()
                if mask & selectors.EVENT_WRITE:
                    self._write(f)
                self._set_events(f)

    def _receive(self, f: _Flow, now: int) -> None:
        if f.rcv is None or f.eof:
            return
        while True:
            try:
                n = f.rcv.recv_into(self.buf)
            except BlockingIOError:
                break
            except ConnectionError:
                n = 0
            if n == 0:
                f.eof = True
                self.sel.unregister(f.rcv)
                break
            f.received += n
        size = f.plan.app_bytes
        if f.plan.app == "fixed" and size is not None and not f.replied and f.received >= size:
            # One byte back: it reaches the sender with the ACK of the last data (completion).
            f.rcv.send(b"\x01")
            f.replied = True

    def _write(self, f: _Flow) -> None:
        p = f.plan
        while f.want_write():
            n = CHUNK
            if p.app == "fixed":
                n = min(n, int(p.app_bytes or 0) - f.written)
            try:
                sent = f.snd.send(self.chunk[:n])
            except BlockingIOError:
                return
            f.written += sent
            if sent < n:
                return

    def _write_rate(self, f: _Flow, now: int) -> None:
        """A rate-limited application: what it has produced by now, in whole segments."""
        p = f.plan
        rate = int(p.app_rate_bps or 0)
        elapsed = now - f.start_at
        due = rate * elapsed // (8 * 10**9) // p.mss * p.mss
        while f.written < due:
            try:
                sent = f.snd.send(self.chunk[: min(CHUNK, due - f.written)])
            except BlockingIOError:
                break
            if sent == 0:
                break
            f.written += sent
        # Wake again when the next segment is ready, at most every millisecond.
        nxt_bytes = (f.written // p.mss + 1) * p.mss
        nxt = f.start_at + -(-nxt_bytes * 8 * 10**9 // rate)
        f.next_rate_at = max(nxt, now + 1_000_000)

    def run(self, on_start: Callable[[int], None]) -> None:
        """Starts the measurement (``on_start(t0)``) and runs to its end."""
        self.t0 = time.monotonic_ns() + START_MARGIN_NS
        on_start(self.t0)
        t0 = self.t0
        for f in self.flows:
            if f.connect_at > 0:
                f.connect_at += t0
            f.start_at = t0 + f.plan.start_ns
            f.stop_at = t0 + f.plan.stop_ns if f.plan.stop_ns is not None else None
        end = t0 + self.plan.duration_ns
        k = 0
        check_every = 0
        while True:
            now = time.monotonic_ns()
            # Samples at the interval boundaries (late ones take the values of now).
            while k < len(self.grid) and now >= t0 + self.grid[k]:
                self.bed.check_alive()
                self._drain()
                self._sample(k)
                k += 1
            if k >= len(self.grid):
                break
            wake = t0 + self.grid[k]
            if self.probe_tx is not None:
                if now >= self.probe_next:
                    self._probe_send(now)
                wake = min(wake, self.probe_next)
            for f in self.flows:
                if not f.connecting and not f.connected and now >= f.connect_at:
                    self._connect(f)
                if f.connected and not f.started and now >= f.start_at:
                    f.started = True
                    if f.plan.app == "rate":
                        self._write_rate(f, now)
                    self._set_events(f)
                if f.started and not f.stopped and f.stop_at is not None and now >= f.stop_at:
                    f.stopped = True
                    self._set_events(f)
                if f.started and not f.stopped and f.plan.app == "rate" and now >= f.next_rate_at:
                    self._write_rate(f, now)
                if not f.connecting and not f.connected:
                    wake = min(wake, f.connect_at)
                elif f.connected and not f.started:
                    wake = min(wake, f.start_at)
                elif f.started and not f.stopped:
                    if f.stop_at is not None:
                        wake = min(wake, f.stop_at)
                    if f.plan.app == "rate":
                        wake = min(wake, f.next_rate_at)
            check_every += 1
            if check_every % 64 == 0:
                self.bed.check_alive()
            self._poll(max(0, wake - now) / 1e9, now)
        self._final(end)

    def _drain(self) -> None:
        now = time.monotonic_ns()
        for f in self.flows:
            self._receive(f, now)

    def _sample(self, k: int) -> None:
        for i, f in enumerate(self.flows):
            info = _tcp_info(f.snd)
            c = self.cols
            c["cwnd_pkts"][k, i] = info.get("snd_cwnd", 0)
            c["ssthresh_pkts"][k, i] = info.get("snd_ssthresh", 0)
            c["srtt_us"][k, i] = info.get("rtt", 0)
            inflight = info.get("unacked", 0) - info.get("sacked", 0) - info.get("lost", 0) + info.get("retrans", 0)
            c["inflight_pkts"][k, i] = max(0, inflight)
            c["pacing_rate_bps"][k, i] = _rate8(info.get("pacing_rate", 0))
            c["delivered_bytes"][k, i] = f.received
            c["retrans"][k, i] = info.get("total_retrans", 0)
            c["delivery_rate_bps"][k, i] = _rate8(info.get("delivery_rate", 0))
            c["min_rtt_us"][k, i] = 0 if info.get("min_rtt", 0) >= 2**32 - 1 else info.get("min_rtt", 0)
            c["ca_state"][k, i] = info.get("ca_state", 0)
            if f.plan.cc == "bbr":
                bbr = _bbr_info(f.snd)
                if bbr is not None:
                    self.cc_cols[k, i, : len(bbr)] = bbr

    def _final(self, end: int) -> None:
        if self.probe_tx is not None:
            self._probe_tx_stamps()
            self._probe_receive()
        for i, f in enumerate(self.flows):
            info = _tcp_info(f.snd)
            self.final[i] = {
                "sent_pkts": info.get("data_segs_out", 0),
                "retrans_pkts": info.get("total_retrans", 0),
                "timeouts": info.get("total_rto", 0),
                "kernel_min_rtt_us": info.get("min_rtt", 0),
                "goodput_bytes": f.received,
                "written_bytes": f.written,
                "has_total_rto": int("total_rto" in info),
            }

    def _probe_send(self, now: int) -> None:
        assert self.probe_tx is not None
        self._probe_tx_stamps()
        with contextlib.suppress(BlockingIOError):
            self.probe_tx.sendto(struct.pack("<QQ", time.time_ns(), self.probe_sent), (ADDR_SND, PROBE_PORT))
            self.probe_sent += 1
        self.probe_next = max(self.probe_next + int(1e9 / self.probe_hz), now)

    def _probe_tx_stamps(self) -> None:
        """Collects the kernel's transmit timestamps of the probes sent so far."""
        assert self.probe_tx is not None
        while True:
            try:
                _, anc, _, _ = self.probe_tx.recvmsg(64, 512, MSG_ERRQUEUE)
            except (BlockingIOError, InterruptedError):
                return
            stamp = ident = None
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(value) >= 16:
                    sec, nsec = struct.unpack_from("<qq", value)
                    stamp = sec * 10**9 + nsec
                elif level == socket.IPPROTO_IP and kind == IP_RECVERR and len(value) >= 16:
                    ident = struct.unpack_from("<I", value, 12)[0]  # sock_extended_err.ee_data
            if stamp and ident is not None:
                self.probe_tx_ns[ident] = stamp

    def _probe_receive(self) -> None:
        assert self.probe_rx is not None
        space = socket.CMSG_SPACE(16)
        while True:
            try:
                data, anc, _, _ = self.probe_rx.recvmsg(64, space)
            except BlockingIOError:
                return
            sent, seq = struct.unpack_from("<QQ", data)
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                    sec, nsec = struct.unpack_from("<qq", value)
                    self.probe_rx_ns[seq] = (sec * 10**9 + nsec, sent)

    def probe_report(self) -> dict[str, Any] | None:
        """One-way delays of the probes, and their excess over the emulated delay and serialisation."""
        if self.probe_tx is None:
            return None
        eng = self.plan.spec.engine
        nominal = _other_delay_ns(self.plan) + 44 * 8 * 10**9 // int(eng["reverse"]["rate_bps"])
        # From the kernel's transmit stamp when there is one, else from the sender's clock.
        delays = [rx - self.probe_tx_ns.get(seq, sent) for seq, (rx, sent) in sorted(self.probe_rx_ns.items())]
        kernel_stamped = sum(1 for seq in self.probe_rx_ns if seq in self.probe_tx_ns)
        d = np.asarray(delays, dtype=np.float64) / 1000.0
        q = (lambda a, p: round(float(np.percentile(a, p)), 3)) if len(d) else (lambda a, p: None)
        excess = d - nominal / 1000.0
        return {
            "sent": self.probe_sent,
            "received": len(d),
            "kernel_tx_stamps": kernel_stamped,
            "nominal_us": nominal / 1000.0,
            "one_way_us": {"min": q(d, 0), "p50": q(d, 50), "p99": q(d, 99), "max": q(d, 100)},
            "excess_us": {"min": q(excess, 0), "p50": q(excess, 50), "p99": q(excess, 99), "max": q(excess, 100)},
        }

    def close(self) -> None:
        """Closes every socket at once (RST, no lingering)."""
        linger = struct.pack("ii", 1, 0)
        for f in self.flows:
            for s in (f.snd, f.rcv, f.lst):
                if s is None:
                    continue
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                with contextlib.suppress(OSError):
                    s.close()
        for p in (self.probe_tx, self.probe_rx):
            if p is not None:
                p.close()
        self.sel.close()


def _rate8(bytes_per_s: int) -> int:
    return 0 if bytes_per_s >= 2**64 // 8 else bytes_per_s * 8


def _grid(duration_ns: int, interval_ns: int) -> list[int]:
    """The simulator's probe times: interval, 2·interval, …, and the end."""
    k = -(-duration_ns // interval_ns)
    return [min((j + 1) * interval_ns, duration_ns) for j in range(k)]


def _tcp_info_fields() -> list[tuple[str, int, int]]:
    """(name, offset, width) of each struct tcp_info field in :data:`_TCP_INFO`."""
    out = []
    pos = 0
    names = iter(_TI)
    for token in _TCP_INFO.format.lstrip("<").split():
        count = int(token[:-1]) if len(token) > 1 else 1
        width = struct.calcsize("<" + token[-1])
        for _ in range(count):
            out.append((next(names), pos, width))
            pos += width
    return out


_TCP_INFO_FIELDS = _tcp_info_fields()


def _tcp_info(s: socket.socket) -> dict[str, int]:
    """The socket's struct tcp_info; fields this kernel does not return are absent."""
    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 512)
    values = _TCP_INFO.unpack(raw[: _TCP_INFO.size].ljust(_TCP_INFO.size, b"\0"))
    return {name: int(values[_TI[name]]) for name, off, width in _TCP_INFO_FIELDS if off + width <= len(raw)}


def _bbr_info(s: socket.socket) -> list[float] | None:
    """BBR's bandwidth, min RTT and gains (struct tcp_bbr_info), in :data:`BBR_METRICS` order."""
    try:
        raw = s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 64)
    except OSError:
        return None
    if len(raw) < 20:
        return None
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("<5I", raw)
    bw = (bw_hi << 32) | bw_lo
    return [pacing_gain / 256.0, cwnd_gain / 256.0, float(bw * 8), min_rtt / 1000.0]


# ---------------------------------------------------------------------------
# The run


def emulate(spec: Spec, *, probe_hz: float = 0.0) -> dict[str, Any]:
    """Runs an experiment on the kernel through the link emulator.

    Returns the raw output in the shape of ``ccarena._core.simulate``'s
    (so that the simulator's metrics and result files apply), plus an
    ``emu`` entry: kernel, sysctls, the emulator's timing and the other
    traffic it saw. Raises :class:`SpecError` for what cannot be emulated,
    :class:`EmuUnavailable` when the machine cannot emulate, RuntimeError
    when the run fails, KeyboardInterrupt or :class:`Terminated` when it is
    interrupted; in every case everything is torn down first.
    """
    check_spec(spec)
    binary = check_environment()
    plan = _plan(spec)
    wall = time.monotonic()
    with _signals_as_exceptions(), _off_cpu(EMU_CPU), Testbed(plan, binary) as bed:
        traffic = _Traffic(plan, bed, probe_hz)
        try:
            traffic.setup()
            traffic.run(bed.start)
        finally:
            traffic.close()
        out = bed.finish()
        if not out.get("finished"):
            raise RuntimeError("the link emulator stopped before the end of the measurement")
        realtime = bed.realtime
        sysctls = bed.sysctls
    return _raw(plan, traffic, out, realtime=realtime, sysctls=sysctls, wall_s=time.monotonic() - wall)


def _raw(
    plan: _Plan, traffic: _Traffic, out: Mapping[str, Any], *, realtime: bool, sysctls: dict[str, str], wall_s: float
) -> dict[str, Any]:
    n = len(plan.flows)
    trace = bool(plan.spec.engine["trace"])
    emu_cols = {name: np.frombuffer(data, dtype=np.dtype(dt)) for name, (dt, data) in out["flows_trace"].items()}
    k = len(emu_cols["t_ns"]) // n if n else 0
    if trace and k != len(traffic.grid):
        raise RuntimeError(f"the emulator measured {k} intervals, the senders {len(traffic.grid)}")
    flows_trace: dict[str, tuple[str, bytes]] = {}
    if trace:
        flows_trace["t_ns"] = ("<u8", emu_cols["t_ns"].astype("<u8").tobytes())
        flows_trace["flow"] = ("<u4", emu_cols["flow"].astype("<u4").tobytes())
        flows_trace["bottleneck_bytes"] = ("<u8", emu_cols["bottleneck_bytes"].astype("<u8").tobytes())
        for name, arr in traffic.cols.items():
            flows_trace[name] = (
                arr.dtype.newbyteorder("<").str,
                arr.reshape(-1).astype(arr.dtype.newbyteorder("<")).tobytes(),
            )
        for j in range(8):
            flows_trace[f"cc_{j}"] = ("<f8", traffic.cc_cols[:, :, j].reshape(-1).astype("<f8").tobytes())
    else:
        for name, dt in (("t_ns", "<u8"), ("flow", "<u4"), ("bottleneck_bytes", "<u8")):
            flows_trace[name] = (dt, b"")
        for name, arr in traffic.cols.items():
            flows_trace[name] = (arr.dtype.newbyteorder("<").str, b"")

    duration = plan.duration_ns
    flows = []
    for i, p in enumerate(plan.flows):
        e = out["flows"][i]
        fin = traffic.final[i]
        f = traffic.flows[i]
        completion = f.completion_at - f.start_at if f.completion_at is not None else None
        stop = min(p.stop_ns if p.stop_ns is not None else duration, duration)
        end = min(p.start_ns + completion, stop) if completion is not None else stop
        flows.append(
            {
                "id": i,
                "cc": p.cc,
                "recovery": "prr",
                "metric_names": list(BBR_METRICS) if p.cc == "bbr" else [],
                "sent_pkts": fin["sent_pkts"],
                "retrans_pkts": fin["retrans_pkts"],
                "timeouts": fin["timeouts"],
                "goodput_bytes": fin["goodput_bytes"],
                "bottleneck_bytes": int(e["bottleneck_bytes"]),
                "drops": int(e["drops"]),
                "start_ns": p.start_ns,
                "end_ns": max(end, p.start_ns),
                "completion_ns": completion,
                "rtt_min_us": e.get("rtt_min_us"),
                "rtt_mean_us": e.get("rtt_mean_us"),
                "rtt_p50_us": e.get("rtt_p50_us"),
                "rtt_p99_us": e.get("rtt_p99_us"),
                # Beyond the simulator's fields:
                "rtt_max_us": e.get("rtt_max_us"),
                "rtt_samples": e.get("rtt_count"),
                "kernel_min_rtt_us": fin["kernel_min_rtt_us"],
                "emu_payload_bytes": int(e["payload_bytes"]),
                "emu_payload_total": int(e["payload_total"]),
                "written_bytes": fin["written_bytes"],
            }
        )
    timing = dict(out["timing"])
    stats = dict(out["stats"])
    stats["engine_seconds"] = 0.0  # wall time of a real-time run says nothing about speed
    uname = os.uname()
    emu = {
        "kernel": {"release": uname.release, "version": uname.version, "machine": uname.machine},
        "algorithms": kernel_algorithms(),
        "sysctls": sysctls,
        "cubic_module": {k: v[0] for k, v in _cubic_module_params().items()},
        "emulator": {
            "realtime": bool(timing.get("realtime")) and realtime,
            "realtime_error": timing.get("realtime_error"),
            "cpu_latency_qos": timing.get("cpu_latency_qos"),
            "cpu": timing.get("cpu"),
            "spin_us": timing.get("spin_us"),
            "delivery_lateness_us": {
                k.removeprefix("lateness_"): v for k, v in timing.items() if k.startswith("lateness_")
            },
            "reverse_delivery_lateness_us": {
                k.removeprefix("reverse_lateness_"): v for k, v in timing.items() if k.startswith("reverse_lateness_")
            },
            "write_us": {
                k.removeprefix("write_"): v for k, v in timing.items() if k.startswith("write_") and k != "write_errors"
            },
            "wake_overshoot_us": {k.removeprefix("wake_"): v for k, v in timing.items() if k.startswith("wake_")},
            "write_errors": timing.get("write_errors"),
            "packets_read": timing.get("read_packets"),
            "not_ipv4": timing.get("not_ipv4"),
        },
        "other_traffic": {k: out["other"][k] for k in ("bottleneck_bytes", "drops")},
        "addresses": {"sender": ADDR_SND, "receivers": sorted(plan.init_cwnd_addrs.values())},
        "wall_seconds": round(wall_s, 3),
        "probes": traffic.probe_report(),
    }
    if not all(fin.get("has_total_rto") for fin in traffic.final):
        emu["notes"] = ["this kernel's tcp_info has no tcpi_total_rto: timeouts are reported as 0"]
    return {
        "flows_trace": flows_trace,
        "queue_trace": dict(out["queue_trace"]),
        "flows": flows,
        "queue": dict(out["queue"]),
        "conservation": dict(out["conservation"]),
        "stats": stats,
        "emu": emu,
    }


def summary_extras(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What an emulated run adds to summary.json: ``backend`` and ``emu``."""
    emu = dict(raw["emu"])
    emu["flows"] = [
        {
            "id": f["id"],
            "rtt_max_ms": None if f.get("rtt_max_us") is None else round(float(f["rtt_max_us"]) / 1000.0, 3),
            "rtt_samples": f.get("rtt_samples"),
            "kernel_min_rtt_ms": round(f["kernel_min_rtt_us"] / 1000.0, 3) if f.get("kernel_min_rtt_us") else None,
            "emu_payload_bytes": f["emu_payload_bytes"],
        }
        for f in raw["flows"]
    ]
    return {"backend": "emu", "emu": emu}
