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
parameters, :func:`load_spec` validates an experiment without running it.
"""

from __future__ import annotations

from typing import Any

from . import _core
from ._version import __version__
from .results import FORMAT_VERSION, Result, ResultExistsError
from .runner import run
from .spec import Spec, SpecError, load_spec

__all__ = [
    "FORMAT_VERSION",
    "Result",
    "ResultExistsError",
    "Spec",
    "SpecError",
    "__version__",
    "algorithms",
    "load_spec",
    "run",
]


def algorithms() -> list[dict[str, Any]]:
    """The congestion-control algorithms, each a dict with ``name``,
    ``summary``, ``source``, ``default_recovery``, ``unconfirmed`` and
    ``params`` (each parameter's ``name``, ``type``, ``default``, range or
    ``choices``, and ``doc``)."""
    return [dict(a) for a in _core.cc_algorithms()]
