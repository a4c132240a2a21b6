"""The machine: the emulator binary, network namespaces, sysctls, the run lock,
signals, and removing what an earlier run left behind."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .common import (
    EMULATOR,
    LOCK_FILE,
    PREFIX,
    RUN_DIR,
    STATE_FILE,
    EmuUnavailable,
    Terminated,
)

CLONE_NEWNET = 0x40000000

def emulator_binary() -> Path | None:
    """The ``ccarena-emu`` binary: $CCARENA_EMU, next to the Python executable, on PATH, or in target/release."""
    env = os.environ.get("CCARENA_EMU")
    if env:
        return Path(env) if os.access(env, os.X_OK) else None
    candidates: list[Path] = [Path(sys.executable).parent / EMULATOR]
    found = shutil.which(EMULATOR)
    if found:
        candidates.append(Path(found))
    repo = Path(__file__).resolve().parents[4]  # python/ccarena/backends/emu/ -> the clone
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
            f"the link emulator {EMULATOR} was not found next to {sys.executable}, on PATH or at $CCARENA_EMU: "
            "build it in a ccarena clone with `make emu` (`make emu VENV=<venv>` for another venv; the wheel "
            "does not include it)"
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
