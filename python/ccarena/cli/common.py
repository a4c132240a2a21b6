"""What every command shares: exit codes, the one-line error, ``--set`` and output folders."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Parser",
    "add_set_option",
    "default_out_dir",
    "error",
    "parse_sets",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line and exit status 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


def error(message: str) -> None:
    """Prints ``error: MESSAGE`` on standard error."""
    print(f"error: {message}", file=sys.stderr)


def add_set_option(parser: argparse.ArgumentParser, example: str) -> None:
    """``--set PATH=VALUE`` (repeatable)."""
    parser.add_argument(
        "--set",
        metavar="PATH=VALUE",
        action="append",
        default=[],
        dest="overrides",
        help=f"replace one field of the file, e.g. {example} (repeatable)",
    )


def default_out_dir(name: str, seed: int, base: Path = Path("results")) -> Path:
    """``results/NAME-seedSEED``, or with ``-2``, ``-3``, … when that exists."""
    first = base / f"{name}-seed{seed}"
    if not (first.exists() or first.is_symlink()):
        return first
    n = 2
    while True:
        cand = base / f"{name}-seed{seed}-{n}"
        if not (cand.exists() or cand.is_symlink()):
            return cand
        n += 1


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}``; a malformed item is a SpecError naming ``--set``."""
    from ..spec import SpecError, parse_override_value

    out: dict[str, Any] = {}
    for item in items:
        path, sep, value = item.partition("=")
        path = path.strip()
        if not sep or not path:
            raise SpecError("--set", f"expected PATH=VALUE, got {item!r}")
        out[path] = parse_override_value(value.strip())
    return out
