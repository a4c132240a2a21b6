"""Experiment files: reading, overriding, validating and resolving.

* :mod:`.units` — quantities with units (``"100Mbps"``, ``"20ms"``, ``"1bdp"``);
* :mod:`.schema` — every key of the file, its type, default and meaning, and
  the JSON Schema made from them;
* :mod:`.document` — reading TOML and ``--set PATH=VALUE`` overrides;
* :mod:`.fields` — typed readers of single values, shared by every section;
* one module per section: :mod:`.topology`, :mod:`.tcp`, :mod:`.flows`,
  :mod:`.background` (with :mod:`.distributions`), :mod:`.measure`;
* :mod:`.resolve` — :func:`resolve` and :func:`load_spec`, which put the
  sections together into a :class:`Spec`.

Every mistake raises :class:`SpecError` naming the field.
"""

from .distributions import size_mean, stationary_loss
from .document import apply_overrides, parse_override_value, read_toml
from .errors import SpecError
from .model import INFINITE_SSTHRESH, NS_PER_S, Spec
from .resolve import load_spec, resolve
from .schema import json_schema

__all__ = [
    "INFINITE_SSTHRESH",
    "NS_PER_S",
    "Spec",
    "SpecError",
    "apply_overrides",
    "json_schema",
    "load_spec",
    "parse_override_value",
    "read_toml",
    "resolve",
    "size_mean",
    "stationary_loss",
]
