"""An emulated run from start to end, and what it adds to ``summary.json``."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...spec import Spec
from .checks import _cubic_module_params, check_spec, kernel_algorithms
from .common import ADDR_SND, EMU_CPU
from .config import _Plan, _plan
from .namespaces import _off_cpu, _signals_as_exceptions, check_environment
from .tcpinfo import BBR_METRICS
from .testbed import Testbed
from .traffic import _Traffic


def emulate(spec: Spec, *, probe_hz: float = 0.0) -> dict[str, Any]:
    """Runs an experiment on the kernel through the link emulator.

    Returns the raw output in the shape of ``ccarena._core.simulate``'s
    (so that the simulator's metrics and result files apply), plus an
    ``emu`` entry: kernel, sysctls, the emulator's timing and the other
    traffic it saw. Raises :class:`SpecError` for what cannot be emulated,
    :class:`EmuUnavailable` when the machine cannot emulate, RuntimeError
    when the run fails, KeyboardInterrupt or :class:`Terminated` when it is
    interrupted; in every case everything is torn down first.
    """
    check_spec(spec)
    binary = check_environment()
    plan = _plan(spec)
    wall = time.monotonic()
    with _signals_as_exceptions(), _off_cpu(EMU_CPU), Testbed(plan, binary) as bed:
        traffic = _Traffic(plan, bed, probe_hz)
        try:
            traffic.setup()
            traffic.run(bed.start)
        finally:
            traffic.close()
        out = bed.finish()
        if not out.get("finished"):
            raise RuntimeError("the link emulator stopped before the end of the measurement")
        realtime = bed.realtime
        sysctls = bed.sysctls
        offload = bed.offload
    raw = _raw(plan, traffic, out, realtime=realtime, sysctls=sysctls, wall_s=time.monotonic() - wall)
    raw["emu"]["offload"] = offload
    return raw

def _raw(
    plan: _Plan, traffic: _Traffic, out: Mapping[str, Any], *, realtime: bool, sysctls: dict[str, str], wall_s: float
) -> dict[str, Any]:
    n = len(plan.flows)
    trace = bool(plan.spec.engine.trace)
    emu_cols = {name: np.frombuffer(data, dtype=np.dtype(dt)) for name, (dt, data) in out["flows_trace"].items()}
    k = len(emu_cols["t_ns"]) // n if n else 0
    if trace and k != len(traffic.grid):
        raise RuntimeError(f"the emulator measured {k} intervals, the senders {len(traffic.grid)}")
    flows_trace: dict[str, tuple[str, bytes]] = {}
    if trace:
        flows_trace["t_ns"] = ("<u8", emu_cols["t_ns"].astype("<u8").tobytes())
        flows_trace["flow"] = ("<u4", emu_cols["flow"].astype("<u4").tobytes())
        flows_trace["bottleneck_bytes"] = ("<u8", emu_cols["bottleneck_bytes"].astype("<u8").tobytes())
        for name, arr in traffic.cols.items():
            flows_trace[name] = (
                arr.dtype.newbyteorder("<").str,
                arr.reshape(-1).astype(arr.dtype.newbyteorder("<")).tobytes(),
            )
        for j in range(8):
            flows_trace[f"cc_{j}"] = ("<f8", traffic.cc_cols[:, :, j].reshape(-1).astype("<f8").tobytes())
    else:
        for name, dt in (("t_ns", "<u8"), ("flow", "<u4"), ("bottleneck_bytes", "<u8")):
            flows_trace[name] = (dt, b"")
        for name, arr in traffic.cols.items():
            flows_trace[name] = (arr.dtype.newbyteorder("<").str, b"")

    duration = plan.duration_ns
    flows = []
    for i, p in enumerate(plan.flows):
        e = out["flows"][i]
        fin = traffic.final[i]
        f = traffic.flows[i]
        completion = f.completion_at - f.start_at if f.completion_at is not None else None
        stop = min(p.stop_ns if p.stop_ns is not None else duration, duration)
        end = min(p.start_ns + completion, stop) if completion is not None else stop
        flows.append(
            {
                "id": i,
                "cc": p.cc,
                "recovery": "prr",
                "metric_names": list(BBR_METRICS) if p.cc == "bbr" else [],
                "sent_pkts": fin["sent_pkts"],
                "retrans_pkts": fin["retrans_pkts"],
                "timeouts": fin["timeouts"],
                "goodput_bytes": fin["goodput_bytes"],
                "bottleneck_bytes": int(e["bottleneck_bytes"]),
                "drops": int(e["drops"]),
                "start_ns": p.start_ns,
                "end_ns": max(end, p.start_ns),
                "completion_ns": completion,
                "rtt_min_us": e.get("rtt_min_us"),
                "rtt_mean_us": e.get("rtt_mean_us"),
                "rtt_p50_us": e.get("rtt_p50_us"),
                "rtt_p99_us": e.get("rtt_p99_us"),
                # Beyond the simulator's fields:
                "rtt_max_us": e.get("rtt_max_us"),
                "rtt_samples": e.get("rtt_count"),
                "kernel_min_rtt_us": fin["kernel_min_rtt_us"],
                "emu_payload_bytes": int(e["payload_bytes"]),
                "emu_payload_total": int(e["payload_total"]),
                "written_bytes": fin["written_bytes"],
            }
        )
        if plan.spec.engine.network is not None:
            # Wire bytes of the flow's data that left each link of its path, as the simulator reports them.
            flows[-1]["link_bytes"] = [(int(link), int(b)) for link, b in e["link_bytes"]]
    timing = dict(out["timing"])
    stats = dict(out["stats"])
    stats["engine_seconds"] = 0.0  # wall time of a real-time run says nothing about speed
    uname = os.uname()
    emu = {
        "kernel": {"release": uname.release, "version": uname.version, "machine": uname.machine},
        "algorithms": kernel_algorithms(),
        "sysctls": sysctls,
        "cubic_module": {k: v[0] for k, v in _cubic_module_params().items()},
        "emulator": {
            "realtime": bool(timing.get("realtime")) and realtime,
            "realtime_error": timing.get("realtime_error"),
            "cpu_latency_qos": timing.get("cpu_latency_qos"),
            "cpu": timing.get("cpu"),
            "spin_us": timing.get("spin_us"),
            "delivery_lateness_us": {
                k.removeprefix("lateness_"): v for k, v in timing.items() if k.startswith("lateness_")
            },
            "reverse_delivery_lateness_us": {
                k.removeprefix("reverse_lateness_"): v for k, v in timing.items() if k.startswith("reverse_lateness_")
            },
            "write_us": {
                k.removeprefix("write_"): v for k, v in timing.items() if k.startswith("write_") and k != "write_errors"
            },
            "wake_overshoot_us": {k.removeprefix("wake_"): v for k, v in timing.items() if k.startswith("wake_")},
            # Time taken off the reverse delay of the receivers' packets: the
            # lateness of the write they answer (crates/emu/src/engine.rs, Answer).
            "reverse_credit_us": {k.removeprefix("credit_"): v for k, v in timing.items() if k.startswith("credit_")},
            "write_errors": timing.get("write_errors"),
            "packets_read": timing.get("read_packets"),
            "wire_packets": timing.get("wire_packets"),
            "super_packets": timing.get("super_packets"),
            "coalesced_writes": timing.get("coalesced_writes"),
            "coalesced_packets": timing.get("coalesced_packets"),
            "forced_sleeps": timing.get("forced_sleeps"),
            "cpu_seconds": timing.get("cpu_seconds"),
            "busy_seconds": timing.get("busy_seconds"),
            "bad_frames": timing.get("bad_frames"),
            "not_ipv4": timing.get("not_ipv4"),
            # Times the emulator was more than 1 ms behind its schedule, and
            # what it did then (crates/emu/src/engine.rs, Stalls).
            "stalls": {
                "count": timing.get("stalls"),
                "total_ms": timing.get("stall_total_ms"),
                "longest_ms": timing.get("stall_longest_ms"),
                "mode": timing.get("stall_mode"),
            },
        },
        "other_traffic": {k: out["other"][k] for k in ("bottleneck_bytes", "drops")},
        "addresses": {"sender": ADDR_SND, "receivers": sorted(plan.init_cwnd_addrs.values())},
        "wall_seconds": round(wall_s, 3),
        "probes": traffic.probe_report(),
    }
    conservation = dict(out["conservation"])
    per_link = conservation.pop("links", [])
    if plan.spec.engine.network is not None:
        # Every link's packets since the emulator started: arrived = sent + dropped + held.
        names = plan.spec.engine.network.names
        emu["link_conservation"] = [
            {"link": names[i], **{k: int(v) for k, v in c.items()}} for i, c in enumerate(per_link)
        ]
    if not all(fin.get("has_total_rto") for fin in traffic.final):
        emu["notes"] = ["this kernel's tcp_info has no tcpi_total_rto: timeouts are reported as 0"]
    extra: dict[str, Any] = {}
    if "packets" in out:
        # The packet log's columns as the simulator hands them over (ccarena.results.packets reads both).
        extra["packets"] = dict(out["packets"])
    if plan.spec.engine.network is not None:
        # One row per link per interval, as the simulator's link trace.
        extra["link_trace"] = dict(out["link_trace"]) if trace else {}
    return {
        "flows_trace": flows_trace,
        "queue_trace": dict(out["queue_trace"]),
        **extra,
        "flows": flows,
        "queue": dict(out["queue"]),
        # Every link, with what its models did (summary.json's links in a network or when a link has models).
        "links": [dict(link) for link in out.get("links", ())],
        "conservation": conservation,
        "stats": stats,
        "emu": emu,
    }

def summary_extras(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What an emulated run adds to summary.json: ``backend`` and ``emu``."""
    emu = dict(raw["emu"])
    emu["flows"] = [
        {
            "flow": f["id"],
            "rtt_max_ms": None if f.get("rtt_max_us") is None else round(float(f["rtt_max_us"]) / 1000.0, 3),
            "rtt_samples": f.get("rtt_samples"),
            "kernel_min_rtt_ms": round(f["kernel_min_rtt_us"] / 1000.0, 3) if f.get("kernel_min_rtt_us") else None,
            "emu_payload_bytes": f["emu_payload_bytes"],
        }
        for f in raw["flows"]
    ]
    return {"backend": "emu", "emu": emu}
