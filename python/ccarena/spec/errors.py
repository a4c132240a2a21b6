"""The one exception every mistake in an experiment raises."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SpecError", "did_you_mean"]


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


def did_you_mean(word: str, choices: Iterable[str], *, n: int = 1) -> str:
    """`` (did you mean "x"?)`` for the closest of ``choices`` to ``word``, or ``""`` when none is close.

    Case is ignored in the comparison (``BBR`` finds ``bbr``), a choice
    that differs only in case or in ``-``/``_`` is always offered, and a word
    of three or more letters that begins choices offers the first two.
    """
    import difflib

    names = list(dict.fromkeys(str(c) for c in choices))

    def fold(s: str) -> str:
        return s.lower().replace("-", "_")

    folded = {fold(c): c for c in names}
    prefixed = sorted(c for f, c in folded.items() if len(word) >= 3 and f.startswith(fold(word)) and c != word)
    if fold(word) in folded and folded[fold(word)] != word:
        found = [folded[fold(word)]]
    elif prefixed:
        found = prefixed[:2]
    else:
        close = difflib.get_close_matches(fold(word), list(folded), n=n, cutoff=0.6)
        found = [folded[c] for c in close if folded[c] != word]
    if not found:
        return ""
    return " (did you mean " + " or ".join(f'"{c}"' for c in found) + "?)"
