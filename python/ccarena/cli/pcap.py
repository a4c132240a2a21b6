"""``ccarena pcap DIR``: a run's packet log as a capture file for Wireshark and tshark."""

from __future__ import annotations

import argparse
from typing import Any

from .common import EXIT_OK, EXIT_USAGE, error

__all__ = ["register"]

_DESCRIPTION = """\
Write the packet log of a run (DIR/packets.parquet, recorded when the
experiment has [measure] packets = ["FROM", "TO"]) as a libpcap file that
Wireshark, tshark, tcpdump and scapy open: nanosecond timestamps (the run's
clock, 10 s into the run is 1970-01-01 00:00:10), raw IPv4.

One observation point (--at): dequeue (default), where each link starts to
transmit: the bottleneck's data and the reverse link's ACKs; enqueue, the
packets arriving at the links, those then dropped too; deliver, what
reached the endpoints. Headers are made up: flow i goes from 10.1.0.(i+1)
port 32768 to 10.2.0.(i+1) port 5201 (background transfers 10.3 to 10.4,
UDP sources 10.5 to 10.6 port 9000); sequence numbers are 1 + the engine's
byte offset, no SYN or FIN (not modelled), ECN bits and CWR/ECE as logged,
payload zeros cut to --snaplen bytes with the original length kept.
Checksums are correct. See ccarena.results.pcap for the details."""

_EPILOG = """\
examples:
  ccarena pcap results/quickstart-seed1
  ccarena pcap results/quickstart-seed1 --at enqueue --out sent.pcap
  ccarena pcap results/quickstart-seed1 --out - | tshark -r - -Y tcp.analysis.retransmission
"""


def register(sub: Any) -> None:
    """Adds ``pcap`` to the subcommands."""
    p = sub.add_parser(
        "pcap",
        help="write a run's packet log as a pcap file (Wireshark, tshark)",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="a run folder with packets.parquet")
    p.add_argument("--out", metavar="FILE", help="where to write (default: DIR/packets.pcap; - for standard output); "
                   "an existing file is never overwritten")
    p.add_argument("--at", choices=("dequeue", "enqueue", "deliver"), default="dequeue",
                   help="the observation point (default: dequeue)")
    p.add_argument("--snaplen", type=int, default=128, metavar="BYTES",
                   help="bytes stored per packet, headers first (default: 128; 0: whole packets, zero payload)")
    p.set_defaults(handler=pcap_command)


def pcap_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena pcap``."""
    import os
    import sys
    from pathlib import Path

    import pyarrow.parquet as pq

    from ..results.pcap import write_pcap
    from ..results.store import exists

    folder = Path(args.dir)
    source = folder / "packets.parquet"
    if not folder.is_dir():
        error(f"{folder}: no such run folder")
        return EXIT_USAGE
    if not source.exists():
        error(f'{folder}: no packets.parquet (the experiment logged no packets; add [measure] packets = ["FROM", "TO"] '
              "and run it again)")
        return EXIT_USAGE
    if args.snaplen < 0:
        error(f"--snaplen: expected 0 (whole packets) or a number of bytes, got {args.snaplen}")
        return EXIT_USAGE
    table = pq.read_table(source)
    links = None
    summary = folder / "summary.json"
    if summary.is_file():
        import json

        doc = json.loads(summary.read_text(encoding="utf-8"))
        if "links" in doc:
            # A network: each packet is logged at every link it crosses; the capture taps the measured
            # link (links[0]) and its twin, as the dumbbell's taps its bottleneck and reverse link.
            links = (doc["links"][0]["name"], doc["links"][1]["name"])
    if args.out == "-":
        stats = write_pcap(table, sys.stdout.buffer, at=args.at, snaplen=args.snaplen, links=links)
        sys.stdout.buffer.flush()
        out_name = "standard output"
    else:
        out = Path(args.out) if args.out else folder / "packets.pcap"
        if exists(out):
            error(f"{out}: already exists (choose another with --out)")
            return EXIT_USAGE
        # Written under a temporary name and renamed: a file with the final name is whole.
        tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                stats = write_pcap(table, f, at=args.at, snaplen=args.snaplen, links=links)
            os.replace(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
        out_name = str(out)
    print(
        f"pcap: {stats.packets} packets at {args.at} ({stats.tcp_conversations} TCP conversations, "
        f"{stats.retransmissions} retransmissions) to {out_name}",
        file=sys.stderr if args.out == "-" else sys.stdout,
    )
    return EXIT_OK
