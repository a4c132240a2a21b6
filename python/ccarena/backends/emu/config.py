"""The plan of an emulated run (addresses, ports, delays per flow) and the
emulator's configuration file made from it (JSON: the engine configuration and the emulator's own settings)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...spec import Spec, SpecError
from ...spec.units import parse_time
from .common import (
    _KERNEL_HEADERS,
    BATCH_NS,
    DEV_RCV,
    DEV_SND,
    EMU_CPU,
    NET,
    OFFLOAD,
    PORT_BASE,
    RT_PRIORITY,
    SPIN_NS,
    STALLS,
)

SETUP_TIMEOUT_S = 10.0

START_MARGIN_NS = 200_000_000
"""Time between the end of the set-up and the start of the measurement."""


@dataclass
class _FlowPlan:
    id: int
    cc: str
    app: str
    app_bytes: int | None
    app_rate_bps: int | None
    start_ns: int
    stop_ns: int | None
    rtt_ns: int
    mss: int
    init_cwnd: int
    rwnd_bytes: int | None
    pacing: bool
    ecn: bool
    rcv_addr: str


@dataclass
class _Plan:
    spec: Spec
    flows: list[_FlowPlan]
    timestamps: bool
    mtu: int
    # (init_cwnd, ecn) → receiver address used by the flows with them: the
    # sender's route to it carries initcwnd, and "features ecn", which makes
    # the kernel request ECN on connections through it (Linux tcp_ecn_send_syn).
    init_cwnd_addrs: dict[tuple[int, bool], str]
    max_init_cwnd: int

    @property
    def duration_ns(self) -> int:
        return int(self.spec.engine.duration_ns)

    @property
    def interval_ns(self) -> int:
        return int(self.spec.engine.interval_ns)

    @property
    def sack_compression(self) -> dict[str, int] | None:
        """The receivers' SACK compression ({nr, delay_ns}, one for every flow: see checks.py), or None
        when the file's receivers do not compress (the kernel's are then set to hold none)."""
        sc = self.spec.engine.flows[0].sack_compression if self.spec.engine.flows else None
        return None if sc is None else {"nr": int(sc["nr"]), "delay_ns": int(sc["delay_ns"])}


def _plan(spec: Spec) -> _Plan:
    eng = spec.engine
    header = int(eng.flows[0].header_bytes)
    timestamps = _KERNEL_HEADERS[header]
    addrs: dict[tuple[int, bool], str] = {}
    flows = []
    for i, f in enumerate(eng.flows):
        icw = int(f.init_cwnd)
        key = (icw, bool(f.ecn))
        if key not in addrs:
            if len(addrs) >= 250:
                raise SpecError("flows", "the emu backend supports at most 250 different (init_cwnd, ecn) pairs")
            addrs[key] = f"{NET}.{2 + len(addrs)}"
        flows.append(
            _FlowPlan(
                id=i,
                cc=str(f.cc),
                app=str(f.app),
                app_bytes=int(f.app_bytes) if f.app_bytes is not None else None,
                app_rate_bps=int(f.app_rate_bps) if f.app_rate_bps is not None else None,
                start_ns=int(f.start_ns),
                stop_ns=int(f.stop_ns) if f.stop_ns is not None else None,
                rtt_ns=int(f.rtt_ns),
                mss=int(f.mss),
                init_cwnd=icw,
                rwnd_bytes=int(f.rwnd_bytes) if f.rwnd_bytes is not None else None,
                pacing=bool(f.pacing),
                ecn=key[1],
                rcv_addr=addrs[key],
            )
        )
    options = 12 if timestamps else 0
    mtu = max(f.mss for f in flows) + 40 + options
    return _Plan(spec, flows, timestamps, mtu, addrs, max(icw for icw, _ in addrs))


def socket_buffer_max(plan: _Plan) -> int:
    """The largest socket buffer (bytes) a flow may need: four times its
    bandwidth-delay product plus the whole bottleneck buffer (a buffer's
    skbs take about twice their payload, and a window can be twice what the
    path holds), so that neither the senders' send buffers nor the
    receivers' windows, which Linux autotunes up to ``tcp_wmem`` and
    ``tcp_rmem``'s maximum, limit a flow before its congestion window does —
    the simulator's flows have no such limit. In a network, the fastest link
    any flow's data cross and the buffers of all of them. At most 1 GiB."""
    eng = plan.spec.engine
    links = [eng.bottleneck]
    if eng.network is not None:
        every = [eng.bottleneck, eng.reverse, *eng.network.links]
        links = [every[i] for i in sorted({int(i) for r in eng.network.routes for i in r.data})]
    rate = max(int(link.rate_bps) for link in links)
    buffer = sum(
        int(link.buffer_pkts) * plan.mtu if link.buffer_pkts is not None else int(link.buffer_bytes or 0)
        for link in links
    )
    path = max(rate * f.rtt_ns // (8 * 10**9) for f in plan.flows) + buffer
    return min(4 * path, 1 << 30)


def _other_delay_ns(plan: _Plan) -> int:
    """One-way delay of traffic that belongs to no flow: half the topology's RTT (or the first flow's)."""
    topo_rtt = plan.spec.resolved["topology"].get("rtt")
    return (parse_time(topo_rtt) if topo_rtt is not None else plan.flows[0].rtt_ns) // 2


def _emulator_config(plan: _Plan) -> str:
    """The emulator's configuration file (JSON, crates/emu/src/config.rs): the experiment's engine
    configuration as the simulator takes it, and the settings only the emulator has."""
    emu: dict[str, Any] = {
        "tun_snd": DEV_SND,
        "tun_rcv": DEV_RCV,
        "port_base": PORT_BASE,
        "other_delay_ns": _other_delay_ns(plan),
        "max_packet": plan.mtu + 64,
        "rt_priority": RT_PRIORITY,
        "spin_ns": SPIN_NS,
        "offload": OFFLOAD,
        "batch_ns": BATCH_NS,
        "stalls": STALLS,
    }
    if EMU_CPU is not None:
        emu["cpu"] = EMU_CPU
    packets = plan.spec.metrics.get("packets_ns")
    if packets:
        # The packet log's window, ns since the start of the measurement (packets.parquet).
        emu["packets_ns"] = [int(t) for t in packets]
    return json.dumps({"engine": plan.spec.engine.to_dict(), "emu": emu}, indent=1) + "\n"
