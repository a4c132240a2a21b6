"""``ccarena schema``: the JSON Schema of the experiment file, for editors."""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_OK

__all__ = ["register"]

_DESCRIPTION = """\
Print the JSON Schema (draft 7) of the experiment file: every key, its type,
default and meaning, the algorithm and queue-discipline names and each
algorithm's parameters (from this build's engine). It is made from the
same definitions the validator uses. Editors use it to complete and check
keys, e.g. with taplo / Even Better TOML, a first line in the file:

  #:schema ./experiment.schema.json

after `ccarena schema > experiment.schema.json`."""


def register(sub: Any) -> None:
    """Adds ``schema`` to the subcommands."""
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of the experiment file (for editors)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(handler=schema_command)


def schema_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena schema``."""
    import json

    from .. import _core
    from ..spec import json_schema

    print(json.dumps(json_schema(_core.cc_algorithms()), indent=2, ensure_ascii=False))
    return EXIT_OK
