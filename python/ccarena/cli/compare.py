"""``ccarena compare FILE``: one experiment in the simulator and on the kernel, compared."""

from __future__ import annotations

import argparse
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
)
from .run import emu_line, load_emu_spec

__all__ = ["register"]

_COMPARE_DESCRIPTION = """\
Run one experiment file twice: in the simulator, and on the kernel's TCP
through ccarena's link emulator (`run --backend emu`; root needed). The new
folder holds both result folders (sim/, emu/), compare.png (rate at the
bottleneck and cwnd per flow, and the queue: simulated solid, emulated
dashed) and the table of differences in goodput, mean RTT, retransmits and
utilisation (compare.txt, compare.json), which is also printed. With
--repeat N both backends run with N seeds (the file's and the N - 1 after
it), each seed's comparison goes in seed-S/, and the table gives each
backend's mean and range over the seeds and the difference of the means."""

_COMPARE_EPILOG = """\
example (the quick start at a fifth of the rate and half the length):
  ccarena compare scenarios/quickstart.toml --set topology.bottleneck.rate=20Mbps \\
                  --set duration=30s"""


def register(sub: Any) -> None:
    """Adds ``compare`` to the subcommands."""
    p = sub.add_parser(
        "compare",
        help="run one experiment in the simulator and on the kernel, and compare",
        description=_COMPARE_DESCRIPTION,
        epilog=_COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", metavar="FILE", help="experiment file (TOML)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder to create; it must not exist (default: results/NAME-compare-seedSEED, with -2, ... if taken)",
    )
    p.add_argument("--seed", metavar="N", type=int, help="random seed (replaces the file's seed)")
    p.add_argument(
        "--repeat",
        metavar="N",
        type=_seeds,
        default=1,
        help="run both backends with N seeds and compare means and ranges (default 1)",
    )
    add_set_option(p, "duration=30s")
    p.add_argument("--no-figure", action="store_true", help="do not draw the figures")
    p.set_defaults(handler=compare_command)


def _seeds(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of seeds, at least 1, got {text!r}")
    return n


def compare_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena compare``."""
    from ..backends import emu
    from ..results import ResultExistsError
    from ..runner import compare
    from ..spec import SpecError

    spec = load_emu_spec(args)
    if spec is None:
        return EXIT_USAGE
    out = Path(args.out) if args.out else default_out_dir(f"{spec.name}-compare", spec.seed)

    def done(one: Any) -> None:
        """Over several seeds, each seed's emulator line as its comparison finishes."""
        if args.repeat > 1:
            seed = one.sim.summary["seed"]
            print(f"seed {seed}: " + emu_line(one.emu.summary).replace("\n", f"\nseed {seed}: "), flush=True)

    try:
        cmp = compare(spec, out=out, figure=not args.no_figure, repeat=args.repeat, done=done)
    except (SpecError, ResultExistsError, emu.EmuUnavailable) as e:
        error(str(e))
        return EXIT_USAGE
    except emu.Terminated:
        error("terminated (everything was torn down)")
        return EXIT_TERMINATED
    except (RuntimeError, OSError) as e:
        error(f"comparison failed: {e}")
        return EXIT_FAILED
    if cmp.seeds is not None:
        print(f"\n{len(cmp.seeds)} seeds, from {cmp.seeds[0].sim.summary['seed']}: means and ranges over them")
    print(cmp.text())
    if cmp.seeds is None:
        print(emu_line(cmp.emu.summary))
    print(f"\nresults: {cmp.path}")
    return EXIT_OK
