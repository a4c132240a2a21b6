"""Validation speed: milliseconds per ``[[flows]]`` group of ``ccarena.load_spec``.

Writes an experiment with N flow groups (algorithms, parameters, starts and
RTTs varied from group to group, as a generated many-flow file would be),
then times ``ccarena.spec.load_spec`` on it (reading the TOML included) and
``resolve`` on the parsed document, best of ``--repeat`` tries each. Prints
one line per size: groups, seconds, ms per group.

Usage: python bench/validate.py [--groups 1000 5000 10000] [--repeat 3] [--profile]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

HEAD = """\
name = "many-groups"
duration = "60s"
seed = 1

[topology]
rtt = "50ms"
bottleneck = { rate = "10Gbps", buffer = "1bdp" }

"""

_ALGOS = ('cc = "cubic"', 'cc = "reno"', 'cc = "bbr"', 'cc = "cubic"\nparams = { beta = 0.7 }', 'cc = "htcp"')


def experiment(groups: int) -> str:
    """The text of an experiment with ``groups`` flow groups of one flow each."""
    parts = [HEAD]
    for i in range(groups):
        parts.append(
            f"[[flows]]\n{_ALGOS[i % len(_ALGOS)]}\n"
            f'start = "{(i % 300) / 10:g}s"\nrtt = "{20 + i % 80}ms"\n\n'
        )
    return "".join(parts)


def best(fn: object, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        out = min(out, time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, nargs="+", default=[1000, 5000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="profile load_spec on the largest size instead")
    args = ap.parse_args()

    from ccarena.spec import load_spec, read_toml, resolve

    load_spec({"duration": "1s", "topology": {"rtt": "1ms", "bottleneck": {"rate": "1Mbps", "buffer": "1bdp"}},
               "flows": [{"cc": "reno"}]})  # import and the engine's tables, once
    with tempfile.TemporaryDirectory() as tmp:
        if args.profile:
            import cProfile
            import pstats

            path = Path(tmp) / "many.toml"
            path.write_text(experiment(max(args.groups)))
            cProfile.runctx("load_spec(path)", globals(), {"load_spec": load_spec, "path": path}, str(Path(tmp) / "p"))
            pstats.Stats(str(Path(tmp) / "p")).sort_stats("cumulative").print_stats(25)
            return
        print(f"{'groups':>7} {'load_spec s':>12} {'ms/group':>9} {'resolve s':>10} {'ms/group':>9}")
        for n in args.groups:
            path = Path(tmp) / f"many-{n}.toml"
            path.write_text(experiment(n))
            doc = read_toml(path)
            t_load = best(lambda: load_spec(path), args.repeat)  # noqa: B023
            t_res = best(lambda: resolve(doc), args.repeat)  # noqa: B023
            print(f"{n:>7} {t_load:>12.3f} {1000 * t_load / n:>9.4f} {t_res:>10.3f} {1000 * t_res / n:>9.4f}")


if __name__ == "__main__":
    main()
