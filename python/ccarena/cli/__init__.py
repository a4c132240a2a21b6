"""The ``ccarena`` command line.

``ccarena run FILE`` simulates an experiment and saves its results
(``--backend emu``: runs it on real Linux TCP through ccarena's link
emulator instead); ``ccarena compare FILE`` runs both and compares them;
``ccarena sweep FILE`` runs a campaign (a grid of runs with repeats) and
``ccarena results DIR`` summarises it and ``ccarena plot DIR`` draws it; ``ccarena reproduce ID`` reruns a
published experiment from its preset; ``ccarena list cc`` lists the
congestion-control algorithms and their parameters; ``ccarena schema``
prints the experiment file's JSON Schema.
Mistakes in an experiment print one line, ``error: <field>: <what is
wrong>``, and exit with status 2 without writing anything.

One module per command (``run``, ``sweep``, ``reproduce``, ``results``, ``plot``, ``report``,
``compare``, ``listing``, ``schema``), each
with ``register(subparsers)``; a command imports what it needs when it
runs, so ``ccarena --help`` starts at once. A new command is a module here
and a line in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import threading
from collections.abc import Sequence

from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Parser,
    default_out_dir,
    error,
)

__all__ = ["COMMANDS", "default_out_dir", "main"]

COMMANDS = ("run", "sweep", "reproduce", "results", "plot", "report", "pcap", "compare", "listing", "schema")
"""The command modules, in the order ``--help`` lists them."""


class _Version(argparse.Action):
    """``--version``, reading the version only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from .._version import __version__

        print(f"ccarena {__version__}")
        parser.exit(0)


_DESCRIPTION = """\
ccarena runs TCP congestion-control algorithms against each other over a
bottleneck link (or a parking lot, or any network of links) and measures
them there: per-flow rate at the bottleneck, goodput, windows, RTTs,
queueing delay, utilisation and fairness.

An experiment is a TOML file; `ccarena run FILE` simulates it and saves the
resolved file, the metrics and the traces in a folder. The same file and seed
give the same numbers, bit for bit."""

_EPILOG = """\
a small experiment file:

  duration = "30s"

  [topology]
  rtt = "50ms"
  bottleneck = { rate = "100Mbps", buffer = "1bdp" }

  [[flows]]
  cc = "cubic"
  count = 2

  [[flows]]
  cc = "reno"
  start = "10s"

more: ccarena run --help, ccarena list cc, ccarena schema"""


def _build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="ccarena",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f".{name}", __name__).register(sub)
    return parser


class Terminated(Exception):
    """SIGTERM arrived; raised in place of dying so that nothing half-written is left."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def _on_sigint(signum: int, frame: object) -> None:
    # The first Ctrl-C stops the command cleanly; a second one ends it at once.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with ``argv`` (default: ``sys.argv[1:]``) and returns the exit status."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
        signal.signal(signal.SIGINT, _on_sigint)
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    try:
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        code: int = args.handler(args)
        return code
    except KeyboardInterrupt:
        error("interrupted (nothing half-written is left)")
        return EXIT_INTERRUPTED
    except Terminated:
        error("terminated (nothing half-written is left)")
        return EXIT_TERMINATED
    except BrokenPipeError:
        return EXIT_FAILED
