"""How fast the link emulator forwards on this machine (root only).

Runs CUBIC flows through the emulator (``ccarena run --backend emu``) at
1 Gbit/s, 20 ms RTT, one BDP of DropTail buffer, and prints per case: the
goodput against what the link can carry (rate × payload bytes / wire bytes),
delivery lateness (data and ACKs), and the emulator's cost: the seconds it
spent working (reading, writing — which includes the receivers' and senders'
TCP processing in the kernel — and running the bottleneck, not waiting or
busy-polling) per second of measurement and per Gbit/s carried.

    python bench/emu_rate.py                   # 1 flow with and without offload, 10 flows at 1 Gbit/s
    python bench/emu_rate.py --ten 1Gbps,1.5Gbps,2Gbps --duration 20s

Without offload (``CCARENA_EMU_OFFLOAD=0``) every 1500-byte packet is one
read or write and nothing is coalesced (``CCARENA_EMU_BATCH_NS=0``).
Compare figures taken in one run: this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CCARENA = Path(sys.executable).with_name("ccarena")

EXPERIMENT = """name = "{name}"
duration = "{duration}"
seed = 1
[topology]
rtt = "20ms"
bottleneck = {{ rate = "{rate}", buffer = "1bdp" }}
[[flows]]
cc = "cubic"
count = {count}
"""


def case(out: Path, name: str, rate: str, count: int, duration: str, offload: bool) -> dict[str, object]:
    exp = out / f"{name}.toml"
    exp.write_text(EXPERIMENT.format(name=name, rate=rate, count=count, duration=duration))
    env = dict(os.environ)
    if not offload:
        env.update(CCARENA_EMU_OFFLOAD="0", CCARENA_EMU_BATCH_NS="0")
    folder = out / name
    proc = subprocess.run(
        [str(CCARENA), "run", str(exp), "--backend", "emu", "--out", str(folder), "--no-figure", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{name}: {proc.stderr.strip()}")
    s = json.loads((folder / "summary.json").read_text())
    e = s["emu"]["emulator"]
    secs = float(s["duration_s"])
    goodput = sum(f["goodput_bps"] for f in s["flows"])
    busy = e.get("busy_seconds")
    return {
        "case": name,
        "goodput_mbps": goodput / 1e6,
        "late_p50_us": e["delivery_lateness_us"]["p50_us"],
        "late_p99_us": e["delivery_lateness_us"]["p99_us"],
        "ack_late_p99_us": e["reverse_delivery_lateness_us"]["p99_us"],
        "busy_share": None if busy is None else busy / secs,
        "busy_s_per_gbit": None if busy is None or goodput == 0 else busy / (goodput * secs / 1e9),
        "segments_per_read": e["wire_packets"] / max(1, e["packets_read"]),
        "coalesced_share": (e.get("coalesced_packets") or 0) / max(1, e["wire_packets"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", default="20s")
    ap.add_argument("--ten", default="1Gbps", help="rates for the 10-flow cases, comma-separated")
    ap.add_argument("--no-baseline", action="store_true", help="skip the case without offload")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the emulator needs root")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ccarena-emu-bench-") as tmp:
        out = Path(tmp)
        if not args.no_baseline:
            rows.append(case(out, "1flow-1Gbps-no-offload", "1Gbps", 1, args.duration, offload=False))
        rows.append(case(out, "1flow-1Gbps", "1Gbps", 1, args.duration, offload=True))
        for rate in args.ten.split(","):
            rows.append(case(out, f"10flows-{rate}", rate, 10, args.duration, offload=True))
    # What the link can carry: payload over wire bytes of a full segment (1448 of 1500 with timestamps).
    head = (
        f"{'case':<26} {'goodput':>9} {'of link':>8} {'late p50':>9} {'p99':>8} {'ACK p99':>8} "
        f"{'busy':>6} {'busy s':>7} {'segs':>5} {'coal.':>6}"
    )
    print(head)
    print(f"{'':<26} {'Mbit/s':>9} {'':>8} {'us':>9} {'us':>8} {'us':>8} {'':>6} {'/Gbit':>7} {'/read':>5} {'':>6}")
    for r in rows:
        cap = None
        for tok in r["case"].split("-"):
            if tok.endswith("bps"):
                cap = _rate(tok) * 1448 / 1500
        share = "" if cap is None else f"{r['goodput_mbps'] * 1e6 / cap:8.3f}"
        print(
            f"{r['case']:<26} {r['goodput_mbps']:9.1f} {share:>8} {r['late_p50_us']:9.1f} {r['late_p99_us']:8.1f} "
            f"{r['ack_late_p99_us']:8.1f} {_f(r['busy_share'], 6, 3)} {_f(r['busy_s_per_gbit'], 7, 4)} "
            f"{r['segments_per_read']:5.1f} {r['coalesced_share']:6.2f}"
        )


def _rate(text: str) -> float:
    units = {"Gbps": 1e9, "Mbps": 1e6, "kbps": 1e3}
    for u, k in units.items():
        if text.endswith(u):
            return float(text[: -len(u)]) * k
    raise ValueError(text)


def _f(x: float | None, width: int, digits: int) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"


if __name__ == "__main__":
    main()
