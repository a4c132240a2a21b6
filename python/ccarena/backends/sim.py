"""The simulator backend: one run of the compiled engine."""

from __future__ import annotations

from typing import Any

from .. import _core
from ..spec import Spec

__all__ = ["simulate"]


def simulate(spec: Spec) -> dict[str, Any]:
    """Runs the experiment in the simulator and returns its raw output (the GIL is released meanwhile)."""
    raw: dict[str, Any] = _core.simulate(spec.engine)
    return raw
