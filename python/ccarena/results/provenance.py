"""provenance.json: where, when and with what a run was made.

Kept apart from summary.json, which depends only on the experiment and the
seed (and so stays identical, bit for bit, when the run is repeated):
the ccarena version and, when ccarena runs from a git checkout, its commit;
the command line; the host name, CPU model and count; the Python and Rust
compiler versions; the backend; the start time and the wall-clock seconds
of the run and of its engine.
"""

from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .. import _core
from .._version import __version__

__all__ = ["provenance"]


@functools.cache
def _machine() -> dict[str, Any]:
    """What does not change while the process runs (read once per process)."""
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "ccarena_version": __version__,
        "git_commit": _git_commit(),
        "host": socket.gethostname(),
        "cpu_model": cpu or platform.processor() or None,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "rustc": str(getattr(_core, "__rustc__", "unknown")),
    }


def _git_commit() -> str | None:
    """The commit of the checkout ccarena runs from, if it runs from one."""
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def provenance(backend: str, started: float, wall_s: float, engine_s: float | None) -> dict[str, Any]:
    """The content of provenance.json for a run that started at ``started`` (seconds since the epoch)."""
    return {
        **_machine(),
        "command_line": list(sys.argv),
        "backend": backend,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wall_s": round(wall_s, 6),
        "engine_s": None if engine_s is None else round(engine_s, 6),
    }
