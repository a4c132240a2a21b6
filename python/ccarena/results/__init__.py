"""Results of runs: :class:`Result` in memory and on disk, and how folders are written.

* :mod:`.result` — :class:`Result`: summary, traces, ``save`` and ``load``;
* :mod:`.store` — folders written whole or not at all; :class:`ResultExistsError`;
* :mod:`.text` — the text summary ``ccarena run`` prints.
"""

from .result import FORMAT_VERSION, Result, upgrade_summary
from .store import ResultExistsError

__all__ = ["FORMAT_VERSION", "Result", "ResultExistsError", "upgrade_summary"]
