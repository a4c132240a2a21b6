"""The one exception every mistake in an experiment raises."""

from __future__ import annotations

__all__ = ["SpecError"]


class SpecError(ValueError):
    """A mistake in an experiment: ``path`` names the field, ``message`` says what is wrong.

    ``str(error)`` is ``"<path>: <message>"``, e.g.
    ``topology.bottleneck.rate: expected a rate such as "100Mbps", got "-5Mbps"``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path = path
        self.message = message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
