"""The validated experiment: :class:`Spec`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .engine import EngineConfig

__all__ = ["INFINITE_SSTHRESH", "NS_PER_S", "Spec"]

NS_PER_S = 1_000_000_000
INFINITE_SSTHRESH = 2147483647
"""The engine's ssthresh before the first loss (Linux's TCP_INFINITE_SSTHRESH)."""


@dataclass(frozen=True)
class Spec:
    """A validated experiment.

    ``resolved`` is the experiment with every default filled in (what a run
    stores as ``spec.toml``; loading it again gives the same run), ``engine``
    the configuration handed to the simulator (given as a dict, kept as an
    :class:`~ccarena.spec.engine.EngineConfig`, read by field:
    ``spec.engine.bottleneck.rate_bps``), ``flow_groups[i]`` the index
    of the ``[[flows]]`` table that flow ``i`` came from, ``metrics`` how the
    metrics are taken (``[measure]`` in base units).
    """

    resolved: dict[str, Any]
    engine: EngineConfig
    flow_groups: tuple[int, ...]
    metrics: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """Representable but implausible values, one line each (``<field>: <why>``); the run goes ahead."""

    def __post_init__(self) -> None:
        if not isinstance(self.engine, EngineConfig):
            engine: Mapping[str, Any] = self.engine
            object.__setattr__(self, "engine", EngineConfig(engine))

    @property
    def name(self) -> str:
        """The experiment's name."""
        return str(self.resolved["name"])

    @property
    def seed(self) -> int:
        """The random seed."""
        return int(self.resolved["seed"])

    @property
    def duration_ns(self) -> int:
        """Length of the run, nanoseconds."""
        return int(self.engine.duration_ns)

    def to_toml(self) -> str:
        """The resolved experiment as TOML text."""
        import tomli_w

        return tomli_w.dumps(self.resolved)
