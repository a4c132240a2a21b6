"""The compiled simulator core (crates/py). Use the ``ccarena`` package instead."""

from collections.abc import Callable, Mapping
from typing import Any

__version__: str
LINUX_RECEIVE_WINDOW: dict[str, int]
__rustc__: str

def cc_algorithms() -> list[dict[str, Any]]:
    """Each algorithm: name, summary, source, default_recovery, unconfirmed,
    params (name, type, default, min, max, choices, doc)."""

def engine_schema() -> str:
    """The JSON Schema (as JSON text) of the engine configuration ``simulate`` takes,
    made from the Rust types."""

def link_capacity_bits(link: Mapping[str, Any], t0_ns: int, t1_ns: int) -> float:
    """Bits an engine link can carry from ``t0_ns`` to ``t1_ns``: its rate schedule's
    integral, its trace's opportunities in ``(t0_ns, t1_ns]`` times one MTU, or its
    constant rate times the span."""

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

class Stepper:
    """One run advanced step by step (crates/py/src/step.rs); use ``ccarena.Simulation``."""

    done: bool
    def __init__(self, config: dict[str, Any], packets: tuple[int, int] | None = None) -> None: ...
    def run_until(self, t_ns: int, slice_events: int = ...) -> bool: ...
    def take(self, sink: Callable[..., None]) -> None: ...
    def now_ns(self) -> int: ...
    def end_ns(self) -> int: ...
    def set_cwnd(self, flow: int, pkts: int) -> None: ...
    def set_pacing_rate(self, flow: int, bps: int) -> None: ...
    def set_cc_params(self, flow: int, params: dict[str, Any]) -> None: ...
    def cwnd_pacing(self, flow: int) -> tuple[int, int]: ...
    def finish(self) -> dict[str, Any]: ...

# Congestion control written in Python (crates/py/src/pycc.rs); use ``ccarena.register_cc``.

PYCC_HOOKS: list[str]
"""The hooks of a Python-written algorithm the engine calls, in order."""

class CcHookError(RuntimeError):
    """A Python algorithm's hook raised: ``args`` = (one line naming the algorithm, the hook and the
    simulated time, the traceback)."""

def register_py_cc(
    name: str,
    make: Callable[[dict[str, Any]], Any],
    params: list[dict[str, Any]],
    hooks: list[str],
    summary: str,
    source: str,
    default_recovery: str = "prr",
    needs_ecn: bool = False,
    needs_pacing: bool = False,
    metric_names: list[str] = ...,
) -> None: ...
def unregister_py_cc(name: str) -> bool: ...

class Sock:
    """The socket a hook reads and writes (the fields of Rust's ``cc::Sock``)."""

    now_us: int
    now_ns: int
    mss: int
    snd_cwnd: int
    snd_ssthresh: int
    snd_cwnd_cnt: int
    snd_cwnd_clamp: int
    prior_cwnd: int
    prior_ssthresh: int
    pacing_rate: int
    paced: bool
    srtt_us: int
    min_rtt_us: int
    packets_out: int
    sacked_out: int
    lost_out: int
    retrans_out: int
    snd_una: int
    snd_nxt: int
    delivered: int
    delivered_ce: int
    lost: int
    max_packets_out: int
    app_limited: int
    wstamp_ns: int
    rng_seed: int
    ca_state: int
    cwnd_limited: bool
    def packets_in_flight(self) -> int: ...
    def in_slow_start(self) -> bool: ...
    def is_cwnd_limited(self) -> bool: ...
