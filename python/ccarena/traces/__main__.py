"""Remakes the shipped traces: ``python -m ccarena.traces``."""

from __future__ import annotations

from . import FOLDER, cellular, constant, mean_rate_bps, square, write

SHIPPED = {
    "constant-12mbps": (lambda: constant(12e6, 1), "12 Mbit/s: one opportunity every ms (Pantheon's `12mbps`)."),
    "constant-48mbps": (lambda: constant(48e6, 1), "48 Mbit/s: four opportunities every ms."),
    "square-12-36mbps-1s": (lambda: square(12e6, 36e6, 1000),
                            "12 Mbit/s for 1 s, then 36 Mbit/s for 1 s, repeating (mean 24 Mbit/s)."),
    "outage-24mbps-200ms": (lambda: [t for t in constant(24e6, 2000) if not 1000 < t <= 1200],
                            "24 Mbit/s with a 200 ms outage (no opportunity) from 1.0 to 1.2 s of every 2 s."),
    "cellular-12mbps-seed1": (lambda: cellular(seed=1, period_ms=30_000),
                              ("ccarena's cellular-like random walk: every 20 ms, log(rate) takes a normal step "
                               "(sd 0.1) within [0.5, 50] Mbit/s, from 12 Mbit/s; Poisson opportunities at that "
                               "rate; 30 s; random.Random(1).")),
}


def main() -> None:
    for name, (make, what) in SHIPPED.items():
        times = make()
        write(FOLDER / f"{name}.trace", times)
        rate = mean_rate_bps(times)
        (FOLDER / f"{name}.md").write_text(
            f"# {name}\n\n{what}\n\nMade by `python -m ccarena.traces` ({len(times)} opportunities, period "
            f"{times[-1]} ms, mean rate {rate / 1e6:.3f} Mbit/s).\n"
        )
        print(f"{name}: {len(times)} lines, {rate / 1e6:.3f} Mbit/s")


if __name__ == "__main__":
    main()
