"""``ccarena run FILE``: one experiment, in the simulator or on the kernel."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    add_set_option,
    default_out_dir,
    error,
    parse_sets,
)

__all__ = ["emu_line", "is_engine_panic", "load_emu_spec", "register"]

LATENESS_WARN_US = 200.0
"""Above this 99th percentile of delivery lateness an emulated run is flagged."""

BACKENDS = ("sim", "emu")

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


def register(sub: Any) -> None:
    """Adds ``run`` to the subcommands."""
    p = sub.add_parser(
        "run",
        help="simulate one experiment file and save its results",
        description=_RUN_DESCRIPTION,
        epilog=_RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder to create for the results; it must not exist "
        "(default: results/NAME-seedSEED, with -2, -3, ... added if taken)",
    )
    p.add_argument("--seed", metavar="N", type=int, help="random seed (replaces the file's seed)")
    add_set_option(p, "duration=10s or flows[1].cc=reno")
    p.add_argument("--no-figure", action="store_true", help="do not draw figure.png")
    p.add_argument("--dry-run", action="store_true",
                   help="print the estimate (packets, trace rows, memory, wall time) and the warnings, and exit")
    p.add_argument("--force", action="store_true",
                   help="run even when the estimate exceeds half the available memory or an hour")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sim",
        help="sim: the simulator (default); emu: the kernel's TCP through ccarena's link emulator "
        "(root; network namespaces and TUN devices; only the kernel's algorithms)",
    )
    p.set_defaults(handler=run_command)


WALL_LIMIT_S = 3600.0
"""Runs estimated above an hour are refused without --force."""
SHOW_ESTIMATE_S = 5.0
"""Runs estimated above this many seconds print the estimate as they start."""
PROGRESS_AFTER_S = 2.0
"""The progress bar appears once a run has taken this long (on a terminal)."""


def _free_disk_bytes(target: Path) -> int | None:
    """Free space of the file system the result would be written to (its nearest existing folder)."""
    import shutil

    for folder in (target, *target.absolute().parents):
        if folder.is_dir():
            try:
                return shutil.disk_usage(folder).free
            except OSError:
                return None
    return None


def _check_estimate(spec: Any, args: argparse.Namespace) -> int | None:
    """Prints the estimate when asked or worth knowing; refuses (exit 2) a run beyond the limits."""
    from ..backends.estimate import available_memory_bytes, estimate

    est = estimate(spec, figure=not args.no_figure)
    if args.dry_run:
        print(f"estimate: {est.text()}")
        return EXIT_OK
    avail = available_memory_bytes()
    too_big = avail is not None and est.memory_bytes > avail / 2
    too_long = est.wall_s > WALL_LIMIT_S
    free = _free_disk_bytes(Path(args.out) if args.out else Path.cwd())
    too_much_disk = free is not None and est.disk_bytes > free / 2
    if (too_big or too_long or too_much_disk) and not args.force:
        why = (
            "more than half the available memory"
            if too_big
            else "more than half the free disk space"
            if too_much_disk
            else "more than an hour"
        )
        error(f"this run would need {est.text()}: {why}; run with --force to go ahead, or make it smaller")
        return EXIT_USAGE
    if est.wall_s > SHOW_ESTIMATE_S:
        print(f"estimate: {est.text()}", file=sys.stderr)
    return None


class _Progress:
    """Simulated time against duration, packets per second and time left, on a terminal (tqdm)."""

    def __init__(self, duration_ns: int, *, quiet: bool) -> None:
        self.duration_s = duration_ns / 1e9
        self.enabled = not quiet and sys.stderr.isatty()
        self.bar: Any = None
        self.last = 0.0

    def update(self, sim_ns: int, packets: int, wall_s: float) -> None:
        if not self.enabled or (self.bar is None and wall_s < PROGRESS_AFTER_S):
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=round(self.duration_s, 3), unit="s", desc="simulated", file=sys.stderr,
                            bar_format="{desc} {n:.1f}/{total:.1f} s |{bar}| {postfix} [{elapsed}<{remaining}]")
        now = sim_ns / 1e9
        self.bar.set_postfix_str(f"{packets / wall_s / 1e6:.2f} M packets/s", refresh=False)
        self.bar.update(round(now - self.last, 3))
        self.last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def prefetch_plots() -> None:
    """Starts importing the plotting code (matplotlib) in a background thread.

    A command that will draw a figure calls this first: the import, about a
    third of a second, then runs while the engine (which releases the GIL)
    simulates on another core.
    """
    import importlib
    import threading

    threading.Thread(
        target=importlib.import_module, args=("ccarena.analysis.plots",), name="ccarena-prefetch", daemon=True
    ).start()


def run_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena run``."""
    if not args.no_figure:
        prefetch_plots()
    if args.backend == "emu":
        return _run_emu(args)
    from ..results import ResultExistsError
    from ..runner import run
    from ..spec import SpecError, load_spec

    try:
        spec = load_spec(args.file, seed=args.seed, set=parse_sets(args.overrides))
    except SpecError as e:
        error(str(e))
        return EXIT_USAGE
    for line in spec.warnings:
        print(f"warning: {line}", file=sys.stderr)
    from ..spec.linkmodels import trace_notes

    for line in trace_notes(spec.engine):
        print(line, file=sys.stderr)
    refused = _check_estimate(spec, args)
    if refused is not None:
        return refused
    out = Path(args.out) if args.out else default_out_dir(spec.name, spec.seed)
    bar = _Progress(spec.duration_ns, quiet=args.quiet)
    try:
        result = run(spec, out=out, figure=not args.no_figure, progress=bar.update)
    except (ResultExistsError, SpecError) as e:
        # SpecError: a value the engine refused that the validation let through.
        error(str(e))
        return EXIT_USAGE
    except RuntimeError as e:
        if type(e).__name__ == "CcHookError":  # a Python algorithm's hook raised: its one line
            error(str(e.args[0]))
            return EXIT_USAGE
        error(f"simulation failed: {e}")
        return EXIT_FAILED
    except BaseException as e:
        if not is_engine_panic(e):
            raise
        error(f"simulation failed: the engine crashed (a bug in ccarena; please report it): {e}")
        return EXIT_FAILED
    finally:
        bar.close()
    print(result.summary_text())
    print(f"\nresults: {result.path}")
    return EXIT_OK


def is_engine_panic(e: BaseException) -> bool:
    """Whether ``e`` is a panic of the compiled engine (pyo3's PanicException, a BaseException)."""
    return type(e).__name__ == "PanicException"


def emu_line(summary: dict[str, Any]) -> str:
    """One line on the kernel and the emulator's timing, and a warning when it delivered late."""
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
    stalls = e.get("stalls") or {}
    if stalls.get("count"):
        duration = summary.get("duration_s")
        share = f", {stalls['total_ms'] / 10 / duration:.2f}% of the run" if duration else ""
        if stalls.get("mode") == "pause":
            what = (
                "the path was paused for each, so the link carried nothing then and what was sent "
                "meanwhile queued behind"
            )
        else:
            what = (
                "ACKs held up by a stall arrive together, which a rate-based algorithm such as BBR can "
                "take for a faster link (CCARENA_EMU_STALLS=pause pauses the path instead)"
            )
        line += (
            f"\nnote: the emulator stalled {stalls['count']} times for more than 1 ms "
            f"(longest {stalls['longest_ms']:.1f} ms, {stalls['total_ms']:.1f} ms in all{share}; usually the "
            f"host taking its CPU): {what}"
        )
    return line


def load_emu_spec(args: argparse.Namespace) -> Any:
    """The experiment for an emulated run, or None after printing why it cannot run here."""
    from ..backends import emu
    from ..spec import SpecError

    try:
        spec = emu.load_spec(args.file, seed=args.seed, set=parse_sets(args.overrides))
        emu.check_environment()
    except (SpecError, emu.EmuUnavailable) as e:
        error(str(e))
        return None
    return spec


def _run_emu(args: argparse.Namespace) -> int:
    from ..backends import emu
    from ..results import ResultExistsError
    from ..runner import run

    spec = load_emu_spec(args)
    if spec is None:
        return EXIT_USAGE
    out = Path(args.out) if args.out else default_out_dir(f"{spec.name}-emu", spec.seed)
    try:
        result = run(spec, out=out, figure=not args.no_figure, backend="emu")
    except (ResultExistsError, emu.EmuUnavailable) as e:
        error(str(e))
        return EXIT_USAGE
    except emu.Terminated:
        error("terminated (everything was torn down)")
        return EXIT_TERMINATED
    except (RuntimeError, OSError) as e:
        error(f"emulation failed: {e}")
        return EXIT_FAILED
    print(result.summary_text())
    print(emu_line(result.summary))
    print(f"\nresults: {result.path}")
    return EXIT_OK
