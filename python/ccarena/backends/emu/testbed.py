"""The testbed: two network namespaces, their TUN devices and the emulator process."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Self

from .common import (
    _RECEIVER_SYSCTLS,
    _SYSCTLS,
    ADDR_SND,
    BATCH_NS,
    DEV_RCV,
    DEV_SND,
    NS_RCV,
    NS_SND,
    OFFLOAD,
    STATE_FILE,
)
from .config import SETUP_TIMEOUT_S, _emulator_config, _Plan, socket_buffer_max
from .namespaces import (
    _ip,
    _netns,
    _proc_start_time,
    _read_sysctls,
    _run_lock,
    _signals_deferred,
    _write_sysctl,
    cleanup,
)


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
        self.offload: dict[str, Any] = {}
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
        (self.tmp / "emu.json").write_text(_emulator_config(plan))
        need = socket_buffer_max(plan)
        for ns in (NS_SND, NS_RCV):
            _ip("netns", "add", ns)
            with _netns(ns):
                _write_sysctl("net.ipv6.conf.all.disable_ipv6", "1")
                _write_sysctl("net.ipv6.conf.default.disable_ipv6", "1")
                _write_sysctl("net.ipv4.tcp_timestamps", "1" if plan.timestamps else "0")
                _write_sysctl("net.ipv4.tcp_no_metrics_save", "1")
                if ns == NS_RCV:
                    # The receivers compress SACKs as the file's do (checks.py: one setting for all).
                    sc = plan.sack_compression
                    _write_sysctl("net.ipv4.tcp_comp_sack_nr", str(sc["nr"]) if sc is not None else "0")
                    if sc is not None:
                        _write_sysctl("net.ipv4.tcp_comp_sack_delay_ns", str(sc["delay_ns"]))
                for name in ("net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem"):
                    lo, default, high = _read_sysctls((name,))[name].split()
                    if int(high) < need:
                        _write_sysctl(name, f"{lo} {default} {need}")
        stderr = open(self.tmp / "emu.stderr", "wb")  # noqa: SIM115 - closed below
        try:
            self.proc = subprocess.Popen(
                [str(self.binary), "--config", str(self.tmp / "emu.json"), "--out", str(self.tmp / "out")],
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
        for (icw, ecn), addr in plan.init_cwnd_addrs.items():
            _ip("-n", NS_RCV, "addr", "add", f"{addr}/24", "dev", DEV_RCV)
            features = ("features", "ecn") if ecn else ()
            _ip("-n", NS_SND, "route", "replace", f"{addr}/32", "dev", DEV_SND, "initcwnd", str(icw), *features)
        # The receivers' first window must not hold back a large initial window.
        initrwnd = max(plan.max_init_cwnd, 10)
        _ip("-n", NS_RCV, "route", "replace", f"{ADDR_SND}/32", "dev", DEV_RCV, "initrwnd", str(initrwnd))
        with _netns(NS_SND):
            self.sysctls = _read_sysctls(_SYSCTLS)
        with _netns(NS_RCV):
            self.sysctls.update(_read_sysctls(_RECEIVER_SYSCTLS))
        self.offload = _offload_settings()

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
        for table in ("flows_trace", "queue_trace", "link_trace"):
            cols = data["columns"].get(table, ())
            data[table] = {name: (dtype, (out / file).read_bytes()) for name, dtype, file in cols}
        if "packets" in data["columns"]:
            # The packet log ([measure] packets): the simulator's columns (crates/emu/src/report.rs).
            data["packets"] = {
                name: (dtype, (out / file).read_bytes()) for name, dtype, file in data["columns"]["packets"]
            }
        return data


def _offload_settings() -> dict[str, Any]:
    """How the senders' device shapes what their TCP hands over: whether it
    takes TSO and checksum offload, and the largest super-packet (bytes and
    segments) the kernel builds for it (``ip -d link``)."""
    out: dict[str, Any] = {"tso": OFFLOAD, "checksum": OFFLOAD, "coalesce_wait_us": BATCH_NS / 1000}
    proc = _ip("-n", NS_SND, "-d", "-j", "link", "show", "dev", DEV_SND, check=False)
    with contextlib.suppress(ValueError, IndexError, TypeError):
        dev = json.loads(proc.stdout)[0]
        for key in ("gso_max_size", "gso_max_segs", "tso_max_size", "tso_max_segs"):
            if key in dev:
                out[key] = int(dev[key])
    return out
