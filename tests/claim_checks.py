"""What the tests of the presets' judges (tests/test_claims_*.py) share."""

from __future__ import annotations

from typing import Any

from ccarena.presets import get


def fails(preset_id: str, values: dict[str, Any], words: str) -> None:
    """The part whose name contains ``words`` does not hold, and the verdict is not "reproduced"."""
    v = get(preset_id).verdict(values)
    named = [p for p in v.parts if words in p.name]
    assert len(named) == 1, [p.name for p in v.parts]
    assert not named[0].holds, named[0]
    assert v.word != "reproduced"
