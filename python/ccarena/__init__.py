"""ccarena: TCP congestion-control algorithms measured at the bottleneck.

An experiment is a TOML file (or a dict of the same shape) that names the
bottleneck, the flows and their algorithms; :func:`run` simulates it and
returns a :class:`Result` with summary metrics and per-interval traces::

    import ccarena

    result = ccarena.run("exp.toml", duration="10s")
    print(result.summary["jain_index"])
    result.flows            # pandas DataFrame: rate, cwnd, ssthresh, srtt ... per flow per interval
    result.save("results/exp")

:func:`algorithms` lists the congestion-control algorithms and their
parameters, :func:`load_spec` validates an experiment without running it,
:func:`compare` runs one experiment in the simulator and on the kernel,
:func:`sweep` runs a campaign (a grid of runs with repeats) and
:func:`open` reopens a campaign or a run folder;
:func:`register_cc` adds a congestion-control algorithm written in Python
(:mod:`ccarena.pycc`).

The package, by concern (each layer imports only the ones below it):

* :mod:`ccarena.cli` — the ``ccarena`` command, one module per command;
* :mod:`ccarena.campaign` — grids, repeats, the result store, executors;
* :mod:`ccarena.runner` — :func:`run` and :func:`compare`;
* :mod:`ccarena.backends` — where a run happens: ``sim`` and ``emu``;
* :mod:`ccarena.results` — :class:`Result` in memory and on disk;
* :mod:`ccarena.analysis` — metrics, tables, plots;
* :mod:`ccarena.spec` — the experiment file: units, schema, validation.

Names are imported when first used, so ``import ccarena`` stays cheap
(numpy, pandas, pyarrow and matplotlib load only when a run needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .campaign import Campaign, open, sweep
    from .pycc import Param, register_cc, unregister_cc
    from .results import FORMAT_VERSION, Result, ResultExistsError
    from .runner import Comparison, compare, run
    from .spec import Spec, SpecError, load_spec
    from .step import Simulation, Step

__all__ = [
    "FORMAT_VERSION",
    "Campaign",
    "Comparison",
    "Param",
    "Result",
    "ResultExistsError",
    "Simulation",
    "Spec",
    "SpecError",
    "Step",
    "__version__",
    "algorithms",
    "compare",
    "load_spec",
    "open",
    "register_cc",
    "run",
    "sweep",
    "unregister_cc",
]

_LAZY = {
    "Campaign": "campaign",
    "open": "campaign",
    "sweep": "campaign",
    "FORMAT_VERSION": "results",
    "Result": "results",
    "ResultExistsError": "results",
    "Comparison": "runner",
    "compare": "runner",
    "run": "runner",
    "Param": "pycc",
    "register_cc": "pycc",
    "unregister_cc": "pycc",
    "Spec": "spec",
    "SpecError": "spec",
    "load_spec": "spec",
    "Simulation": "step",
    "Step": "step",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ccarena' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def algorithms() -> list[dict[str, Any]]:
    """The congestion-control algorithms, each a dict with ``name``,
    ``summary``, ``source``, ``default_recovery``, ``unconfirmed`` and
    ``params`` (each parameter's ``name``, ``type``, ``default``, range or
    ``choices``, and ``doc``)."""
    from . import _core

    return [dict(a) for a in _core.cc_algorithms()]
