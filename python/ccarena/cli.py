"""The ``ccarena`` command line.

``ccarena run FILE`` simulates an experiment and saves its results
(``--backend emu``: runs it on real Linux TCP through ccarena's link
emulator instead); ``ccarena compare FILE`` runs both and compares them;
``ccarena list cc`` lists the congestion-control algorithms and their
parameters. Mistakes in an experiment print one line,
``error: <field>: <what is wrong>``, and exit with status 2 without
writing anything.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import _core
from ._version import __version__
from .results import ResultExistsError
from .runner import BACKENDS, compare, run
from .spec import SpecError, load_spec, parse_override_value

__all__ = ["default_out_dir", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
LATENESS_WARN_US = 200.0
"""Above this 99th percentile of delivery lateness an emulated run is flagged."""

_DESCRIPTION = """\
ccarena runs TCP congestion-control algorithms against each other over a
bottleneck link and measures them there: per-flow rate at the bottleneck,
goodput, windows, RTTs, queueing delay, utilisation and fairness.

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

more: ccarena run --help, ccarena list cc"""

_RUN_DESCRIPTION = """\
Simulate one experiment file and save its results in a new folder:

  spec.toml      the resolved experiment (every default filled in; rerun it
                 to get the same results)
  summary.json   per-flow and aggregate metrics
  flows.parquet  per flow per interval: rate at the bottleneck, cwnd,
                 ssthresh, srtt, in-flight, algorithm internals
  queue.parquet  bottleneck backlog and drops per interval
  transfers.parquet  one row per background transfer: size, start, completion time
  figure.png     rate, cwnd and queue over time

A one-screen summary is printed. Existing folders are never overwritten."""

_RUN_EPILOG = """\
examples:
  ccarena run exp.toml
  ccarena run exp.toml --seed 7 --out results/exp-7
  ccarena run exp.toml --set duration=10s --set flows[0].cc=reno \\
                       --set topology.bottleneck.rate=50Mbps \\
                       --set flows[0].params.beta=0.5

--set VALUE is read as a TOML value when it is one (true, 3, 0.5, "x",
{ beta = 0.5 }) and as a string otherwise (50Mbps, reno)."""


_COMPARE_DESCRIPTION = """\
Run one experiment file twice: in the simulator, and on the kernel's TCP
through ccarena's link emulator (`run --backend emu`; root needed). The new
folder holds both result folders (sim/, emu/), compare.png (rate at the
bottleneck and cwnd per flow, and the queue: simulated solid, emulated
dashed) and the table of differences in goodput, mean RTT, retransmits and
utilisation (compare.txt, compare.json), which is also printed."""

_COMPARE_EPILOG = """\
example (the quick start at a fifth of the rate and half the length):
  ccarena compare scenarios/quickstart.toml --set topology.bottleneck.rate=20Mbps \\
                  --set duration=30s"""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line and exit status 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"error: {message} (see {self.prog} --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ccarena",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ccarena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p_run = sub.add_parser(
        "run",
        help="simulate one experiment file and save its results",
        description=_RUN_DESCRIPTION,
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_run.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    p_run.add_argument(
        "--out",
        metavar="DIR",
        help="folder to create for the results; it must not exist "
        "(default: results/NAME-seedSEED, with -2, -3, ... added if taken)",
    )
    p_run.add_argument("--seed", metavar="N", type=int, help="random seed (replaces the file's seed)")
    p_run.add_argument(
        "--set",
        metavar="PATH=VALUE",
        action="append",
        default=[],
        dest="overrides",
        help="replace one field of the file, e.g. duration=10s or flows[1].cc=reno (repeatable)",
    )
    p_run.add_argument("--no-figure", action="store_true", help="do not draw figure.png")
    p_run.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sim",
        help="sim: the simulator (default); emu: the kernel's TCP through ccarena's link emulator "
        "(root; network namespaces and TUN devices; only the kernel's algorithms)",
    )

    p_cmp = sub.add_parser(
        "compare",
        help="run one experiment in the simulator and on the kernel, and compare",
        description=_COMPARE_DESCRIPTION,
        epilog=_COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_cmp.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    p_cmp.add_argument(
        "--out",
        metavar="DIR",
        help="folder to create; it must not exist (default: results/NAME-compare-seedSEED, with -2, ... if taken)",
    )
    p_cmp.add_argument("--seed", metavar="N", type=int, help="random seed (replaces the file's seed)")
    p_cmp.add_argument(
        "--set",
        metavar="PATH=VALUE",
        action="append",
        default=[],
        dest="overrides",
        help="replace one field of the file, e.g. duration=30s (repeatable)",
    )
    p_cmp.add_argument("--no-figure", action="store_true", help="do not draw the figures")

    p_list = sub.add_parser(
        "list",
        help="list what ccarena offers (ccarena list cc: congestion-control algorithms)",
        description="List the congestion-control algorithms with their sources, default loss "
        "recovery and parameters (name, type and range, default, meaning).",
    )
    p_list.add_argument("what", choices=["cc"], metavar="cc", help="cc: congestion-control algorithms")
    return parser


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


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


def _parse_sets(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        path, sep, value = item.partition("=")
        path = path.strip()
        if not sep or not path:
            raise SpecError("--set", f"expected PATH=VALUE, got {item!r}")
        out[path] = parse_override_value(value.strip())
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    if args.backend == "emu":
        return _cmd_run_emu(args)
    try:
        overrides = _parse_sets(args.overrides)
        spec = load_spec(args.file, seed=args.seed, set=overrides)
    except SpecError as e:
        _error(str(e))
        return EXIT_USAGE
    out = Path(args.out) if args.out else default_out_dir(spec.name, spec.seed)
    try:
        result = run(spec, out=out, figure=not args.no_figure)
    except ResultExistsError as e:
        _error(str(e))
        return EXIT_USAGE
    except RuntimeError as e:
        _error(f"simulation failed: {e}")
        return EXIT_FAILED
    print(result.summary_text())
    print(f"\nresults: {result.path}")
    return EXIT_OK


def _emu_line(summary: dict[str, Any]) -> str:
    emu = summary.get("emu", {})
    e = emu.get("emulator", {})
    fwd = e.get("delivery_lateness_us", {}).get("p99_us")
    rev = e.get("reverse_delivery_lateness_us", {}).get("p99_us")
    rt = "real-time" if e.get("realtime") else f"NOT real-time ({e.get('realtime_error')})"
    late = "-" if fwd is None else f"{fwd:.0f} us"
    rlate = "-" if rev is None else f"{rev:.0f} us"
    line = (
        f"emu: Linux {emu.get('kernel', {}).get('release', '?')}, emulator {rt}, "
        f"delivery lateness p99 {late} (data), {rlate} (ACKs)"
    )
    worst = max((x for x in (fwd, rev) if x is not None), default=0.0)
    if worst > LATENESS_WARN_US:
        line += (
            f"\nwarning: the emulator delivered late (p99 {worst / 1000:.2f} ms > {LATENESS_WARN_US:.0f} us): "
            "the machine was busy; delays and rates may be distorted"
        )
    return line


def _load_emu_spec(args: argparse.Namespace) -> Any:
    """The experiment for an emulated run, or None after printing why it cannot run here."""
    from . import emulate

    try:
        overrides = _parse_sets(args.overrides)
        spec = emulate.load_spec(args.file, seed=args.seed, set=overrides)
        emulate.check_environment()
    except (SpecError, emulate.EmuUnavailable) as e:
        _error(str(e))
        return None
    return spec


def _cmd_run_emu(args: argparse.Namespace) -> int:
    from . import emulate

    spec = _load_emu_spec(args)
    if spec is None:
        return EXIT_USAGE
    out = Path(args.out) if args.out else default_out_dir(f"{spec.name}-emu", spec.seed)
    try:
        result = run(spec, out=out, figure=not args.no_figure, backend="emu")
    except (ResultExistsError, emulate.EmuUnavailable) as e:
        _error(str(e))
        return EXIT_USAGE
    except emulate.Terminated:
        _error("terminated (everything was torn down)")
        return EXIT_TERMINATED
    except (RuntimeError, OSError) as e:
        _error(f"emulation failed: {e}")
        return EXIT_FAILED
    print(result.summary_text())
    print(_emu_line(result.summary))
    print(f"\nresults: {result.path}")
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    from . import emulate

    spec = _load_emu_spec(args)
    if spec is None:
        return EXIT_USAGE
    out = Path(args.out) if args.out else default_out_dir(f"{spec.name}-compare", spec.seed)
    try:
        cmp = compare(spec, out=out, figure=not args.no_figure)
    except (SpecError, ResultExistsError, emulate.EmuUnavailable) as e:
        _error(str(e))
        return EXIT_USAGE
    except emulate.Terminated:
        _error("terminated (everything was torn down)")
        return EXIT_TERMINATED
    except (RuntimeError, OSError) as e:
        _error(f"comparison failed: {e}")
        return EXIT_FAILED
    print(cmp.text())
    print(_emu_line(cmp.emu.summary))
    print(f"\nresults: {cmp.path}")
    return EXIT_OK


def _range(p: dict[str, Any]) -> str:
    kind = p["type"]
    if kind == "bool":
        return "bool"
    if kind == "choice":
        return "one of " + ", ".join(p.get("choices") or [])
    return f"{kind} in [{p.get('min')}, {p.get('max')}]"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def format_algorithms(algos: Sequence[dict[str, Any]], width: int = 100) -> str:
    """The text of ``ccarena list cc``."""
    blocks: list[str] = []
    for a in algos:
        lines = [f"{a['name']}: {a['summary']}"]
        if a.get("unconfirmed"):
            lines.append(
                "  [unconfirmed] a reference this implementation relies on is not confirmed by a second source"
            )
        lines.extend(textwrap.wrap(a["source"], width, initial_indent="  source: ", subsequent_indent="          "))
        lines.append(f"  default recovery: {a['default_recovery']}")
        params = a.get("params") or []
        if not params:
            lines.append("  parameters: none")
        else:
            lines.append("  parameters:")
            rows = [(p["name"], _range(p), _value(p["default"])) for p in params]
            w0 = max(len("name"), *(len(r[0]) for r in rows))
            w1 = max(len("type / range"), *(len(r[1]) for r in rows))
            lines.append(f"    {'name'.ljust(w0)}  {'type / range'.ljust(w1)}  default")
            for p, (name, rng, default) in zip(params, rows, strict=True):
                flag = "  [unconfirmed]" if "UNCONFIRMED" in p.get("doc", "") else ""
                lines.append(f"    {name.ljust(w0)}  {rng.ljust(w1)}  {default}{flag}")
                lines.extend(textwrap.wrap(p.get("doc", ""), width, initial_indent=" " * 8, subsequent_indent=" " * 8))
        blocks.append("\n".join(lines))
    footer = 'Set parameters per flow group, e.g. [[flows]] cc = "cubic"  params = { beta = 0.5 }'
    return "\n\n".join(blocks) + "\n\n" + footer


def _cmd_list(args: argparse.Namespace) -> int:
    print(format_algorithms(_core.cc_algorithms()))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line with ``argv`` (default: ``sys.argv[1:]``) and returns the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "compare":
            return _cmd_compare(args)
        if args.command == "list":
            return _cmd_list(args)
        parser.print_help()
        return EXIT_USAGE
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAILED
