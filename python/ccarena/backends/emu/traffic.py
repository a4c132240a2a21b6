"""Traffic: real sockets of the kernel's TCP, driven from one event loop.

One sender and one receiver per flow, inside the two namespaces; bulk,
fixed-size and rate-limited applications; ``TCP_INFO`` sampled at every
measurement interval."""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .common import ADDR_SND, NS_RCV, NS_SND, PORT_BASE
from .config import SETUP_TIMEOUT_S, START_MARGIN_NS, _FlowPlan, _other_delay_ns, _Plan
from .tcpinfo import _bbr_info, _tcp_info
from .testbed import Testbed

# Linux socket options not named by the socket module on every version.
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)

TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)

TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)

SO_MAX_PACING_RATE = 47

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)

SO_TIMESTAMPING = 37

IP_RECVERR = 11

MSG_ERRQUEUE = 0x2000

# SOF_TIMESTAMPING_TX_SOFTWARE | _SOFTWARE | _OPT_ID | _OPT_TSONLY (linux/net_tstamp.h)
_TS_FLAGS = (1 << 1) | (1 << 4) | (1 << 7) | (1 << 11)

PROBE_PORT = 4999

NOTSENT_LOWAT = 256 * 1024
"""Unsent bytes a sender keeps in its socket: enough to fill the window
between two turns of the event loop, small enough that a flow that stops
sends little more (the simulator's application stops at once)."""

CHUNK = 256 * 1024

RECV_BUF = 1 << 20

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
        if plan.spec.engine.trace:
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
        nominal = _other_delay_ns(self.plan) + 44 * 8 * 10**9 // int(self.plan.spec.engine.reverse.rate_bps)
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
