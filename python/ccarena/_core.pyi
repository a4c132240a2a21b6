"""The compiled simulator core (crates/py). Use the ``ccarena`` package instead."""

from collections.abc import Callable
from typing import Any

__version__: str
__rustc__: str

def cc_algorithms() -> list[dict[str, Any]]:
    """Each algorithm: name, summary, source, default_recovery, unconfirmed,
    params (name, type, default, min, max, choices, doc)."""

def cc_resolve(name: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """All parameters of ``name`` with defaults filled in; raises
    ``ValueError((param_or_None, message))``."""

def simulate(
    config: dict[str, Any], progress: Callable[[int, int, float], None] | None = None
) -> dict[str, Any]:
    """Runs one resolved configuration (in slices, checking for signals between them and calling
    ``progress(simulated_ns, bottleneck_packets, wall_seconds)`` after each); returns flows_trace, queue_trace and
    transfers (column → (dtype, bytes)), flows, sources (per background
    source), queue, conservation and stats."""
