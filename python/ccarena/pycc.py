"""Congestion control written in Python.

A class with the hooks of Linux's ``tcp_congestion_ops`` (the Rust trait
``CongestionControl``), registered by name, runs in the simulator like a
built-in algorithm::

    import ccarena

    class MyReno:
        name = "my_reno"
        summary = "Reno, in Python"
        params = [ccarena.Param("beta", float, 0.5, min=0.1, max=0.9, doc="window kept on loss")]

        def ssthresh(self, tp):
            return max(int(tp.snd_cwnd * self.beta), 2)

    ccarena.register_cc(MyReno)
    ccarena.run({"duration": "5s", "topology": ..., "flows": [{"cc": "my_reno"}]})

Hooks (each optional; one left out costs nothing and Linux's default
runs; ``tp`` is the socket, a reusable :class:`ccarena._core.Sock` whose
fields are Rust's ``cc::Sock``: ``snd_cwnd``, ``snd_ssthresh``,
``snd_cwnd_cnt``, ``pacing_rate``, ``srtt_us``, ``min_rtt_us`` …; the
samples are read-only views, valid during the call only):

* ``init(tp)``; ``ssthresh(tp) -> int`` (default: Reno's half);
  ``cong_avoid(tp, acked)`` (default: Reno's slow start and +1 per RTT);
* ``cong_control(tp, rs) -> bool`` (``rs``: Linux's rate sample; return
  True when the hook set cwnd itself); ``pkts_acked(tp, ack)`` (``ack``:
  ``acked``, ``rtt_us``, ``in_flight``, ``ece``, ``feedback``);
* ``set_state(tp, new_state)`` (:data:`CA_OPEN` …); ``cwnd_event(tp,
  event, idle_us)`` (:data:`CA_EVENT_TX_START` …); ``undo_cwnd(tp) -> int``
  (default: max(cwnd, prior_cwnd)); ``skb_marked_lost(tp, rs)``;
  ``on_send(tp, hdr)``; ``metrics() -> list[float]`` (with the class
  attribute ``metric_names``, up to 8 internals traced per interval).

Class attributes: ``name`` (required), ``summary``, ``params`` (a list of
:class:`Param`), ``needs_ecn``, ``needs_pacing``, ``default_recovery``
("prr" or "newreno"), ``metric_names``, ``randomized`` (true when the
algorithm draws random numbers, seeded from ``tp.rng_seed``, so that a
campaign's repeats differ: without it repeats of an otherwise
deterministic scenario are flagged as identical). The parameters are checked by the
same code as the built-ins'. The class is called with the resolved
parameters as keyword arguments if it defines ``__init__``; otherwise
they are set as attributes of a new instance.

An exception inside a hook ends the run: :class:`CcHookError` (a
RuntimeError) whose ``args`` are (one line naming the algorithm, the hook
and the simulated time, the traceback).

Worker processes (``ccarena sweep --jobs N``) import the module named by
the experiment's top-level ``cc_module`` (a module name, or a .py file
relative to the experiment file);
a module that calls :func:`register_cc` when imported is all they need.

A package may instead declare its algorithms as entry points of the group
``ccarena.cc`` (:data:`ENTRY_POINT_GROUP`), each ``name = "module:Class"``;
once the package is installed, ``name`` is usable everywhere a built-in
is, with no ``cc_module`` and no :func:`register_cc`. An entry point is
imported and registered (under its own name) only when an experiment
names an algorithm that is not a built-in, or by ``ccarena list cc``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._core import PYCC_HOOKS, CcHookError, cc_algorithms, register_py_cc, unregister_py_cc

__all__ = [
    "CA_CWR",
    "CA_DISORDER",
    "CA_EVENT_COMPLETE_CWR",
    "CA_EVENT_CWND_RESTART",
    "CA_EVENT_ECN_IS_CE",
    "CA_EVENT_ECN_NO_CE",
    "CA_EVENT_LOSS",
    "CA_EVENT_TX_START",
    "CA_LOSS",
    "CA_OPEN",
    "CA_RECOVERY",
    "ENTRY_POINT_GROUP",
    "HOOKS",
    "INFINITE_SSTHRESH",
    "CcHookError",
    "ConstructionError",
    "EntryPointError",
    "Param",
    "check_constructs",
    "ensure_registered",
    "entry_point_names",
    "import_cc_modules",
    "load_entry_point",
    "load_entry_points",
    "python_algorithms",
    "register_cc",
    "unregister_cc",
]

CA_OPEN, CA_DISORDER, CA_CWR, CA_RECOVERY, CA_LOSS = range(5)
"""Congestion states (Linux ``enum tcp_ca_state``), ``tp.ca_state`` and ``set_state``'s argument."""

(
    CA_EVENT_TX_START,
    CA_EVENT_CWND_RESTART,
    CA_EVENT_COMPLETE_CWR,
    CA_EVENT_LOSS,
    CA_EVENT_ECN_IS_CE,
    CA_EVENT_ECN_NO_CE,
) = range(6)
"""``cwnd_event``'s events (Linux ``enum tcp_ca_event``); ``idle_us`` is set for TX_START only."""

INFINITE_SSTHRESH = 0x7FFF_FFFF
"""Linux ``TCP_INFINITE_SSTHRESH``: ssthresh before the first loss."""

HOOKS: tuple[str, ...] = tuple(PYCC_HOOKS)
"""The hooks a class may define, as the engine's adapter calls them (crates/py/src/pycc.rs)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a Python algorithm: ``type`` is bool, int, float or
    str (then ``choices`` is required); ``min`` and ``max`` bound numbers."""

    name: str
    type: type
    default: Any
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    doc: str = ""

    def entry(self) -> dict[str, Any]:
        """The parameter as ``cc_algorithms()`` lists it."""
        if self.type is bool:
            return {"name": self.name, "type": "bool", "default": bool(self.default), "doc": self.doc}
        if self.type is int:
            lo = -(2**63) if self.min is None else int(self.min)
            hi = 2**63 - 1 if self.max is None else int(self.max)
            return {"name": self.name, "type": "int", "default": int(self.default), "min": lo, "max": hi, "doc": self.doc}
        if self.type is float:
            lo = -1.7976931348623157e308 if self.min is None else float(self.min)
            hi = 1.7976931348623157e308 if self.max is None else float(self.max)
            return {
                "name": self.name, "type": "float", "default": float(self.default), "min": lo, "max": hi, "doc": self.doc
            }
        if self.type is str:
            if not self.choices:
                raise ValueError(f"parameter {self.name}: a str parameter needs choices")
            return {
                "name": self.name, "type": "choice", "default": str(self.default),
                "choices": list(self.choices), "doc": self.doc,
            }
        raise ValueError(f"parameter {self.name}: type must be bool, int, float or str, got {self.type!r}")


_REGISTERED: dict[str, type] = {}


def _maker(cls: type) -> Any:
    own_init = cls.__init__ is not object.__init__

    def make(params: dict[str, Any]) -> Any:
        if own_init:
            return cls(**params)
        obj = cls()
        for k, v in params.items():
            setattr(obj, k, v)
        return obj

    return make


def _source(cls: type, origin: str = "") -> str:
    try:
        path = inspect.getsourcefile(cls)
    except TypeError:
        path = None
    if path is None:  # a module not in sys.modules (loaded from a file by hand): its methods know the file
        files = [f.__code__.co_filename for f in vars(cls).values() if hasattr(f, "__code__")]
        path = files[0] if files else "?"
    return f"Python: {path} ({cls.__module__}.{cls.__qualname__}{origin})"


def _one_line(e: BaseException) -> str:
    """``Type: message`` on one line."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _declared_params(cls: type, name: str) -> list[Param]:
    """The class's ``params``, each a :class:`Param` that :meth:`Param.entry` accepts;
    anything wrong (or raising) is a ValueError naming the algorithm."""
    try:
        params = [p if isinstance(p, Param) else Param(**p) for p in getattr(cls, "params", ())]
        for p in params:
            p.entry()
    except Exception as e:  # noqa: BLE001 - whatever the declaration raised, named after the algorithm
        raise ValueError(f"{name}: its parameter declaration (params) raised {_one_line(e)}") from None
    return params


def register_cc(cls: type, *, name: str | None = None, _origin: str = "") -> type:
    """Registers a Python congestion-control class under ``name`` (default:
    the class's ``name`` attribute); usable as ``cc = "<name>"`` in
    experiment files and sweeps. Registering a name again replaces it; a
    built-in's name is refused (ValueError), as is a parameter declaration
    that does not hold (ValueError naming the algorithm). Returns the class
    (usable as a decorator)."""
    if not isinstance(cls, type):
        raise TypeError(f"register_cc expects a class, got {cls!r}")
    name = name or getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__qualname__}: set a class attribute name = \"...\" (the algorithm's name)")
    params = _declared_params(cls, name)
    hooks = [h for h in HOOKS if callable(getattr(cls, h, None))]
    doc = (inspect.getdoc(cls) or "").strip().splitlines()
    summary = getattr(cls, "summary", None) or (doc[0] if doc else f"{cls.__qualname__} (Python)")
    register_py_cc(
        name,
        _maker(cls),
        [p.entry() for p in params],
        hooks,
        str(summary),
        _source(cls, _origin),
        default_recovery=str(getattr(cls, "default_recovery", "prr")),
        needs_ecn=bool(getattr(cls, "needs_ecn", False)),
        needs_pacing=bool(getattr(cls, "needs_pacing", False)),
        metric_names=[str(m) for m in getattr(cls, "metric_names", ())],
    )
    _REGISTERED[name] = cls
    _forget_caches()
    return cls


def unregister_cc(name: str) -> bool:
    """Forgets a Python algorithm; True if it was registered."""
    _REGISTERED.pop(name, None)
    gone = bool(unregister_py_cc(name))
    _forget_caches()
    return gone


def python_algorithms() -> dict[str, type]:
    """The registered Python algorithms by name."""
    return dict(_REGISTERED)


class ConstructionError(ValueError):
    """A Python algorithm's constructor raised; ``args[0]`` is one line naming the algorithm."""


def check_constructs(name: str, params: dict[str, Any]) -> None:
    """Builds the Python algorithm ``name`` once with ``params`` (resolved, as a
    run would) so that a constructor that raises is found before anything runs:
    :class:`ConstructionError`, one line naming the algorithm. Does nothing for a built-in."""
    cls = _REGISTERED.get(name)
    if cls is None:
        return
    try:
        _maker(cls)(dict(params))
    except Exception as e:  # noqa: BLE001 - whatever the user's constructor raised
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise ConstructionError(
            f"{name}: constructing the algorithm ({cls.__qualname__}({shown})) raised {_one_line(e)}"
        ) from None


ENTRY_POINT_GROUP = "ccarena.cc"
"""The entry-point group a package declares its algorithms under: ``name = "module:Class"``."""


class EntryPointError(ValueError):
    """An entry point of :data:`ENTRY_POINT_GROUP` that does not import or register;
    ``args[0]`` is one line naming the entry point and the error."""


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed entry points of the group by name (the first one on sys.path wins)."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep)
    return found


def entry_point_names() -> set[str]:
    """The names the installed packages declare under :data:`ENTRY_POINT_GROUP` (nothing imported)."""
    return set(_entry_points())


def _describe(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = f" of package {dist.name} {dist.version}" if dist is not None else ""
    return f'entry point {ENTRY_POINT_GROUP} "{ep.name}" = "{ep.value}"{package}'


def _load(ep: importlib.metadata.EntryPoint) -> None:
    try:
        cls = ep.load()
    except (Exception, SystemExit) as e:  # noqa: BLE001 - whatever the user's module raised
        raise EntryPointError(f"{_describe(ep)}: importing it failed: {_one_line(e)}") from None
    try:
        register_cc(cls, name=ep.name, _origin=f"; {_describe(ep)}")
    except Exception as e:  # noqa: BLE001 - a class register_cc refuses
        raise EntryPointError(f"{_describe(ep)}: {e}") from None


def load_entry_point(name: str) -> bool:
    """Registers the algorithm ``name`` from its entry point if a package declares
    one and it is not registered yet; True if ``name`` is now a Python algorithm.
    Raises :class:`EntryPointError` when the entry point does not import or its
    class is refused."""
    if name in _REGISTERED:
        return True
    ep = _entry_points().get(name)
    if ep is None:
        return False
    _load(ep)
    return True


def load_entry_points() -> list[str]:
    """Registers every algorithm the installed packages declare (``ccarena list cc``);
    returns their names. Raises :class:`EntryPointError` on the first that fails."""
    eps = _entry_points()
    for name, ep in eps.items():
        if name not in _REGISTERED:
            _load(ep)
    return list(eps)


def ensure_registered(names: Iterable[str]) -> None:
    """Registers from entry points those of ``names`` the registry does not know
    (a worker process, which runs resolved experiments without validating them)."""
    known = {str(a["name"]) for a in cc_algorithms()}
    for n in names:
        if n not in known:
            load_entry_point(n)


_ON_CHANGE: list[Callable[[], None]] = []
"""Called when the registry changes (the validation's caches of it, which register here)."""


def on_change(forget: Callable[[], None]) -> None:
    """Calls ``forget()`` whenever a Python algorithm is registered or unregistered."""
    _ON_CHANGE.append(forget)


def _forget_caches() -> None:
    for forget in _ON_CHANGE:
        forget()


@functools.cache
def _import_one(module: str) -> None:
    if module.endswith(".py"):
        path = Path(module)
        mod_name = "ccarena_cc_" + "_".join(path.with_suffix("").parts[-2:]).replace("-", "_").replace(".", "_")
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = mod
        spec.loader.exec_module(mod)
    else:
        importlib.import_module(module)


def import_cc_modules(modules: str | Iterable[str] | None) -> None:
    """Imports the modules (names, or paths of .py files) that register the
    experiment's Python algorithms, once per process."""
    if modules is None:
        return
    for m in [modules] if isinstance(modules, str) else modules:
        _import_one(str(m))
