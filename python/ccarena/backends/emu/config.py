"""The plan of an emulated run (addresses, ports, delays per flow) and the
emulator's configuration file made from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
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
        return int(self.spec.engine["duration_ns"])

    @property
    def interval_ns(self) -> int:
        return int(self.spec.engine["interval_ns"])

def _plan(spec: Spec) -> _Plan:
    eng = spec.engine
    header = int(eng["flows"][0]["header_bytes"])
    timestamps = _KERNEL_HEADERS[header]
    addrs: dict[tuple[int, bool], str] = {}
    flows = []
    for i, f in enumerate(eng["flows"]):
        icw = int(f["init_cwnd"])
        key = (icw, bool(f.get("ecn", False)))
        if key not in addrs:
            if len(addrs) >= 250:
                raise SpecError("flows", "the emu backend supports at most 250 different (init_cwnd, ecn) pairs")
            addrs[key] = f"{NET}.{2 + len(addrs)}"
        flows.append(
            _FlowPlan(
                id=i,
                cc=str(f["cc"]),
                app=str(f["app"]),
                app_bytes=int(f["app_bytes"]) if f.get("app_bytes") is not None else None,
                app_rate_bps=int(f["app_rate_bps"]) if f.get("app_rate_bps") is not None else None,
                start_ns=int(f["start_ns"]),
                stop_ns=int(f["stop_ns"]) if f.get("stop_ns") is not None else None,
                rtt_ns=int(f["rtt_ns"]),
                mss=int(f["mss"]),
                init_cwnd=icw,
                rwnd_bytes=int(f["rwnd_bytes"]) if f.get("rwnd_bytes") is not None else None,
                pacing=bool(f["pacing"]),
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
    links = [eng["bottleneck"]]
    if "network" in eng:
        every = [eng["bottleneck"], eng["reverse"], *eng["network"]["links"]]
        links = [every[i] for i in sorted({int(i) for r in eng["network"]["routes"] for i in r["data"]})]
    rate = max(int(link["rate_bps"]) for link in links)
    buffer = sum(
        int(link["buffer_pkts"]) * plan.mtu
        if link.get("buffer_pkts") is not None
        else int(link.get("buffer_bytes") or 0)
        for link in links
    )
    path = max(rate * f.rtt_ns // (8 * 10**9) for f in plan.flows) + buffer
    return min(4 * path, 1 << 30)

def _other_delay_ns(plan: _Plan) -> int:
    """One-way delay of traffic that belongs to no flow: half the topology's RTT (or the first flow's)."""
    topo_rtt = plan.spec.resolved["topology"].get("rtt")
    return (parse_time(topo_rtt) if topo_rtt is not None else plan.flows[0].rtt_ns) // 2

def _model_lines(link: Mapping[str, Any], prefix: str, folder: Path, *, delay: bool = True) -> list[str]:
    """The emulator's lines for a link's models (the engine's ``model`` table, crates/emu/src/config.rs);
    a trace's opportunities go to a file in ``folder``, which its line names. With ``delay``, the link's
    own delay when delay steps replace it (a network gives every link's delay on its own line)."""
    model = link.get("model") or {}
    lines: list[str] = []
    if "schedule" in model:
        lines.append(f"{prefix}model_schedule " + " ".join(f"{int(t)}:{int(r)}" for t, r in model["schedule"]))
    if "trace" in model:
        tr = model["trace"]
        name = f"{prefix or 'fwd_'}trace.txt"
        (folder / name).write_text("".join(f"{int(t)}\n" for t in tr["opportunities_ms"]))
        once = "true" if tr.get("once") else "false"
        lines.append(f"{prefix}model_trace_file {name} mode={tr['mode']} once={once}")
    jitter = model.get("jitter") or {}
    if jitter.get("dist"):
        params = " ".join(f"{k}={int(jitter[k])}" for k in ("max_ns", "mean_ns", "sd_ns") if k in jitter)
        reorder = "true" if jitter.get("reorder") else "false"
        lines.append(f"{prefix}model_jitter dist={jitter['dist']} {params} reorder={reorder}")
    if jitter.get("delay_steps"):
        lines.append(f"{prefix}model_delay_steps " + " ".join(f"{int(t)}:{int(d)}" for t, d in jitter["delay_steps"]))
        if delay:
            lines.append(f"{prefix}delay_ns {int(link['delay_ns'])}")
    for key in ("policer", "shaper"):
        if key in model:
            b = model[key]
            lines.append(f"{prefix}model_{key} rate_bps={int(b['rate_bps'])} burst_bytes={int(b['burst_bytes'])}")
    if "batch" in model:
        b = model["batch"]
        if b["kind"] == "periodic":
            lines.append(f"{prefix}model_batch every_ns={int(b['every_ns'])} phase_ns={int(b.get('phase_ns', 0))}")
        else:
            lines.append(f"{prefix}model_batch count={int(b['n'])} timeout_ns={int(b['timeout_ns'])}")
    return lines


def _emulator_config(plan: _Plan, folder: Path) -> str:
    """The emulator's configuration file's text; files it refers to (traces) are written to ``folder``,
    where the configuration goes."""
    eng = plan.spec.engine
    bn, rev = eng["bottleneck"], eng["reverse"]

    def limit(link: Mapping[str, Any], prefix: str) -> str:
        if link.get("buffer_pkts") is not None:
            return f"{prefix}limit_pkts {int(link['buffer_pkts'])}"
        return f"{prefix}limit_bytes {int(link['buffer_bytes'])}"

    other = _other_delay_ns(plan)
    lines = [
        f"tun_snd {DEV_SND}",
        f"tun_rcv {DEV_RCV}",
        f"rate_bps {int(bn['rate_bps'])}",
        limit(bn, ""),
        f"rev_rate_bps {int(rev['rate_bps'])}",
        limit(rev, "rev_"),
        f"loss {float(bn['loss'])!r}",
        f"seed {int(eng['seed'])}",
        f"duration_ns {int(eng['duration_ns'])}",
        f"interval_ns {int(eng['interval_ns'])}",
        f"trace {1 if eng['trace'] else 0}",
        f"port_base {PORT_BASE}",
        "flow_delay_ns " + " ".join(str(f.rtt_ns // 2) for f in plan.flows),
        f"other_delay_ns {other}",
        f"max_packet {plan.mtu + 64}",
        f"rt_priority {RT_PRIORITY}",
        f"spin_ns {SPIN_NS}",
        f"offload {1 if OFFLOAD else 0}",
        f"batch_ns {BATCH_NS}",
        f"stalls {STALLS}",
    ]
    net = eng.get("network")
    if net is None:
        lines += _qdisc_line(bn, "")
        lines += _model_lines(bn, "", folder)
        lines += _model_lines(rev, "rev_", folder)
    else:
        # Links 0 and 1 (the measured link and its twin), then links 2, 3, … with their prefix.
        lines.append(f"links {2 + len(net['links'])}")
        for k, link in enumerate([bn, rev, *net["links"]]):
            prefix = ("", "rev_")[k] if k < 2 else f"link{k}_"
            if k >= 2:
                lines.append(f"{prefix}rate_bps {int(link['rate_bps'])}")
                lines.append(limit(link, prefix))
                lines.append(f"{prefix}loss {float(link['loss'])!r}")
            lines.append(f"{prefix}delay_ns {int(link['delay_ns'])}")
            lines += _qdisc_line(link, prefix)
            lines += _model_lines(link, prefix, folder, delay=False)
        lines.append("routes " + " ".join(_route_word(r) for r in net["routes"]))
    if EMU_CPU is not None:
        lines.append(f"cpu {EMU_CPU}")
    return "\n".join(lines) + "\n"


def _qdisc_line(link: Mapping[str, Any], prefix: str) -> list[str]:
    """The ``qdisc`` line of a link with a discipline other than DropTail."""
    if "qdisc" not in link:
        return []
    q = dict(link["qdisc"])
    kind = q.pop("kind")
    values = " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in q.items())
    return [f"{prefix}qdisc {kind} {values}".rstrip()]


def _route_word(route: Mapping[str, Any]) -> str:
    """A flow's route on the ``routes`` line: data links, ACK links, measured link."""
    data, ack = (",".join(str(int(i)) for i in route[key]) for key in ("data", "ack"))
    return f"{data}/{ack}/{int(route['measure'])}"
