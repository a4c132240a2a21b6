"""What the kernel offers, and which experiments it can run.

:func:`load_spec` validates an experiment as the simulator does and then
refuses, with one line naming the field, anything the kernel's TCP or the
emulator cannot do."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import _core
from ...spec import Spec, SpecError, resolve
from ...spec.document import load_document
from ...spec.engine import EngineConfig
from .common import _KERNEL_HEADERS, MAX_RATE_BPS, PORT_BASE, STALLS


def kernel_algorithms() -> list[str]:
    """The congestion-control algorithms the running kernel offers."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def _python_algorithms(raw: Mapping[str, Any]) -> set[str]:
    """The algorithms written in Python (the experiment's ``cc_module`` imported first, and
    the names installed packages declare as entry points, not imported)."""
    from ...pycc import entry_point_names, import_cc_modules, python_algorithms

    try:
        import_cc_modules(raw.get("cc_module"))
    except Exception:  # noqa: BLE001, S110 - the validation reports a module that does not import
        pass
    return set(python_algorithms()) | (entry_point_names() - _sim_algorithms())


def _sim_algorithms() -> set[str]:
    return {str(a["name"]) for a in _core.cc_algorithms()}


def load_spec(
    source: str | Path | Mapping[str, Any],
    *,
    seed: int | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Spec:
    """Like :func:`ccarena.load_spec`, for the emulation backend.

    Every algorithm must be one the kernel offers; an algorithm the kernel
    has but the simulator does not (e.g. ``bbr`` before the simulator has
    it) is accepted without parameters. Raises :class:`SpecError`, and
    checks everything :func:`check_spec` checks.
    """
    if STALLS not in ("catch-up", "pause"):
        raise SpecError("CCARENA_EMU_STALLS", f"expected catch-up or pause, got {STALLS!r}")
    raw, default_name = load_document(source, seed=seed, set=set, **overrides)
    python_algos = _python_algorithms(raw)
    kernel = kernel_algorithms()
    known = _sim_algorithms()
    kernel_only: dict[int, str] = {}
    groups = raw.get("flows")
    if isinstance(groups, list):
        for gi, g in enumerate(groups):
            if not isinstance(g, dict) or not isinstance(g.get("cc"), str):
                continue
            cc = g["cc"]
            if cc in python_algos:
                raise SpecError(
                    f"flows[{gi}].cc",
                    f'"{cc}" is written in Python (ccarena.register_cc); the emu backend runs only the '
                    "kernel's algorithms: run it in the simulator",
                )
            _check_kernel_has(cc, f"flows[{gi}].cc", kernel)
            if cc not in known:
                if g.get("params"):
                    raise SpecError(
                        f"flows[{gi}].params",
                        f"the kernel's {cc} takes no per-flow parameters here (ccarena's simulator has no \"{cc}\" "
                        "to check them against)",
                    )
                kernel_only[gi] = cc
                groups[gi] = {**g, "cc": "reno"}  # a stand-in for validating the rest of the group
    spec = resolve(raw, default_name=default_name)
    if kernel_only:
        for gi, cc in kernel_only.items():
            rf = spec.resolved["flows"][gi]
            rf["cc"] = cc
            rf.pop("params", None)
            rf["recovery"] = "prr"
        flows = [
            {**ef, "cc": kernel_only[gi], "params": {}, "recovery": "prr"} if gi in kernel_only else dict(ef)
            for ef, gi in zip(spec.engine.flows, spec.flow_groups, strict=True)
        ]
        spec = dataclasses.replace(spec, engine=EngineConfig({**spec.engine, "flows": flows}))
    check_spec(spec)
    return spec


def _check_kernel_has(cc: str, path: str, kernel: list[str]) -> None:
    if cc not in kernel:
        offers = ", ".join(kernel) if kernel else "nothing readable"
        raise SpecError(
            path, f'"{cc}" is not in this kernel (it offers: {offers}); the emu backend runs the kernel\'s algorithms'
        )


def _cubic_module_params() -> dict[str, Any]:
    """The kernel's CUBIC module parameters in the simulator's terms."""
    base = Path("/sys/module/tcp_cubic/parameters")

    def read(name: str) -> int | None:
        try:
            return int((base / name).read_text().strip())
        except (OSError, ValueError):
            return None

    out: dict[str, Any] = {}
    beta, scale = read("beta"), read("bic_scale")
    if beta is not None:
        out["beta"] = (beta, lambda v: round(float(v) * 1024) == beta, f"{beta}/1024")
    if scale is not None:
        out["c"] = (scale, lambda v: round(float(v) * 1024) == scale * 10, f"bic_scale={scale} (C = {scale * 10}/1024)")
    for name in ("fast_convergence", "tcp_friendliness", "hystart"):
        v = read(name)
        if v is not None:
            out[name] = (v, lambda x, v=v: bool(x) == bool(v), str(v))
    detect = read("hystart_detect")
    if detect is not None:
        out["hystart_ack_train"] = (detect, lambda x: bool(x) == bool(detect & 1), f"hystart_detect={detect}")
        out["hystart_delay"] = (detect, lambda x: bool(x) == bool(detect & 2), f"hystart_detect={detect}")
    for name in ("hystart_low_window", "hystart_ack_delta_us", "initial_ssthresh"):
        v = read(name)
        if v is not None:
            out[name] = (v, lambda x, v=v: int(x) == v, str(v))
    return out


def _check_params(cc: str, params: Mapping[str, Any], path: str) -> None:
    """Algorithm parameters must be what the kernel runs with (module parameters are global)."""
    if not params:
        return
    defaults: dict[str, Any] = {}
    for a in _core.cc_algorithms():
        if a["name"] == cc:
            defaults = {p["name"]: p["default"] for p in a["params"]}
    kernel = _cubic_module_params() if cc == "cubic" else {}
    for name, value in params.items():
        if name in kernel:
            _, matches, shown = kernel[name]
            if not matches(value):
                raise SpecError(
                    f"{path}.params.{name}",
                    f"the kernel's {cc} runs with {name} = {shown} (module parameter in /sys/module/tcp_{cc}/"
                    f"parameters, shared by every connection); the emu backend cannot use {value!r}",
                )
        elif name in defaults and value != defaults[name]:
            raise SpecError(
                f"{path}.params.{name}",
                f"the kernel's {cc} has no such setting; only the default {defaults[name]!r} runs",
            )


_ENGINE_KEYS = {"seed", "duration_ns", "interval_ns", "trace", "bottleneck", "reverse", "flows", "network"}

_ENGINE_FLOW_KEYS = {
    "cc",
    "params",
    "start_ns",
    "stop_ns",
    "rtt_ns",
    "mss",
    "header_bytes",
    "init_cwnd",
    "ecn",
    "rwnd_bytes",
    "pacing",
    "recovery",
    "app",
    "app_bytes",
    "app_rate_bps",
    # A host (flows.host): the kernel's senders have their own NIC, queue and TSO, which the
    # simulator's host models; the emulator runs them as they are.
    "tso",
    "access",
    # The receivers' SACK compression: the kernel's own, set in the receivers' namespace when the file
    # asks for it (crates/sim/src/config.rs, SackCompression; testbed.py).
    "sack_compression",
    # Linux's receive window: what the kernel's receivers always do.
    "receive_window",
}

_ENGINE_LINK_KEYS = {"rate_bps", "delay_ns", "buffer_pkts", "buffer_bytes", "loss", "qdisc", "model"}

_ENGINE_MODEL_KEYS = {"schedule", "trace", "jitter", "policer", "shaper", "batch"}
"""The link models the emulator runs (python/ccarena/backends/emu/config.py writes them)."""


def _link_paths(spec: Spec) -> list[str]:
    """The experiment file's table of each of the engine's links (the dumbbell's two, or a network's
    in the engine's order): where a message about the link points."""
    net = spec.engine.network
    if net is None:
        return ["topology.bottleneck", "topology.reverse"]
    topo = spec.resolved["topology"]
    out = []
    for name in net.names:
        base = name.removesuffix("_rev")
        if topo["kind"] == "parking_lot":
            hops = topo["hop"]
            k = int(base.removeprefix("hop")) - 1
            path = "topology.link" if all(h == hops[0] for h in hops) else f"topology.hop[{k}]"
        else:
            path = f"topology.links[{[t['name'] for t in topo['links']].index(base)}]"
        out.append(f"{path}.reverse" if name.endswith("_rev") else path)
    return out


def _check_line(spec: Spec) -> None:
    """A network's flows must run along one line of links: every data path a run of consecutive
    links of one chain (all senders are in one namespace and all receivers in another; the emulator
    routes each packet by its flow), ACKs on the reverse twins of the data path, last first."""
    net = spec.engine.network
    names = net.names
    follows: dict[int, tuple[int, str]] = {}  # link -> (the link after it, the path that says so)
    precedes: dict[int, tuple[int, str]] = {}
    seen: set[int] = set()
    for flow, gi in enumerate(spec.flow_groups):
        if gi in seen:
            continue
        seen.add(gi)
        route = net.routes[flow]
        data = [int(link) for link in route.data]
        where = f"flows[{gi}].path"
        for k, link in enumerate(data):
            if names[link].endswith("_rev"):
                raise SpecError(
                    f"{where}[{k}]",
                    f"{names[link]} is a reverse twin: the emu backend sends every flow's data from the senders' "
                    "side to the receivers' along forward links (run it in the simulator)",
                )
        twins = [names.index(names[link] + "_rev") for link in reversed(data)]
        if [int(link) for link in route.ack] != twins:
            raise SpecError(
                f"flows[{gi}].ack_path",
                "the emu backend sends ACKs back over the reverse twins of the data path ("
                + ", ".join(names[i] for i in twins)
                + "); remove ack_path or run it in the simulator",
            )
        for k in range(1, len(data)):
            a, b = data[k - 1], data[k]
            for table, x, y, word in ((follows, a, b, "after"), (precedes, b, a, "before")):
                if x in table and table[x][0] != y:
                    other, there = table[x]
                    raise SpecError(
                        f"{where}[{k}]",
                        f"{names[b]} after {names[a]} here, but {there} has {names[other]} {word} "
                        f"{names[x]}: the emu backend runs paths that are runs of one line of links",
                    )
                table.setdefault(x, (y, where))
    for start in follows:
        link, steps = start, 0
        while link in follows:
            link, steps = follows[link][0], steps + 1
            if link == start:
                raise SpecError(
                    follows[start][1],
                    f"the paths lead from {names[start]} back to it: the emu backend runs paths that are runs "
                    "of one line of links",
                )
            if steps > len(names):
                break


def check_spec(spec: Spec) -> None:
    """Refuses, with the field's path, what the emulation backend cannot run."""
    eng = spec.engine
    kernel = kernel_algorithms()
    for key in sorted(set(eng) - _ENGINE_KEYS):
        if getattr(eng, key):
            where = "background" if "source" in key else key
            raise SpecError(where, "the emu backend does not run this yet (flows and the links only)")
    paths = _link_paths(spec)
    links = [eng.bottleneck, eng.reverse, *(eng.network.links if eng.network is not None else ())]
    for link, path in zip(links, paths, strict=True):
        if link.qdisc is not None and link.qdisc.kind == "xcp":
            raise SpecError(f"{path}.qdisc", "xcp runs in the simulator only (kernel TCP carries no XCP header)")
    if eng.network is not None:
        _check_line(spec)
    for link, path in zip(links, paths, strict=True):
        twin = path == "topology.reverse" or path.endswith(".reverse")
        if link.loss_model:
            raise SpecError(f"{path}.loss", "the emu backend supports a Bernoulli loss probability only")
        # Link models (capacity schedule or trace, jitter and delay steps, policer, shaper, ACK
        # aggregation) run in the emulator as in the simulator (crates/emu/src/engine.rs); a rate
        # schedule must stay within what the emulator forwards.
        model = link.model
        for key in sorted(set(model or ()) - _ENGINE_MODEL_KEYS):
            field = {"schedule": "rate", "batch": "ack_aggregation"}.get(key, key)
            raise SpecError(f"{path}.{field}", "this link model runs in the simulator only")
        peak = max((int(r) for _, r in (model.schedule if model is not None else None) or ()), default=0)
        if peak > MAX_RATE_BPS:
            raise SpecError(
                f"{path}.rate",
                f"the emu backend forwards at most {MAX_RATE_BPS // 10**6} Mbit/s; the schedule reaches "
                f"{peak / 1e6:g} Mbit/s",
            )
        for key in sorted(set(link) - _ENGINE_LINK_KEYS):
            if getattr(link, key):
                raise SpecError(f"{path}.{key.removesuffix('_ns')}", "not supported by the emu backend")
        if int(link.rate_bps) > MAX_RATE_BPS:
            raise SpecError(
                f"{path}.rate",
                f"the emu backend forwards at most {MAX_RATE_BPS // 10**6} Mbit/s (on time up to about "
                "1 Gbit/s on the 2-core machine it was built on; bench/emu_rate.py measures yours)",
            )
        if not isinstance(link.loss, (int, float)):
            raise SpecError(f"{path}.loss", "the emu backend supports a Bernoulli loss probability only")
        if twin and float(link.loss) != 0.0:
            raise SpecError(f"{path}.loss", "the emu backend has no loss on the reverse link")
    headers = {int(f.header_bytes) for f in eng.flows}
    for h in headers:
        if h not in _KERNEL_HEADERS:
            raise SpecError(
                "tcp.header",
                f"the kernel's TCP/IPv4 headers are 52 bytes (with timestamps) or 40 (without); got {h}",
            )
    n = len(eng.flows)
    if PORT_BASE + n > 65535:
        raise SpecError("flows", f"the emu backend runs at most {65535 - PORT_BASE} flows")
    compress = {
        json.dumps(ef.sack_compression, sort_keys=True): gi for ef, gi in zip(eng.flows, spec.flow_groups, strict=True)
    }
    if len(compress) > 1:
        raise SpecError(
            f"flows[{max(compress.values())}].sack_compression",
            "the emu backend's receivers share one network namespace, so one SACK compression setting for every "
            "flow group (tcp.sack_compression; off by default behind Linux 2.6 hosts)",
        )
    seen: set[int] = set()
    for ef, gi in zip(eng.flows, spec.flow_groups, strict=True):
        if gi in seen:
            continue
        seen.add(gi)
        path = f"flows[{gi}]"
        for key in sorted(set(ef) - _ENGINE_FLOW_KEYS):
            if getattr(ef, key):
                raise SpecError(f"{path}.{key}", "not supported by the emu backend")
        cc = str(ef.cc)
        _check_kernel_has(cc, f"{path}.cc", kernel)
        if ef.recovery not in (None, "prr"):
            raise SpecError(
                f"{path}.recovery",
                f'the kernel always recovers with SACK, RACK and PRR; "{ef.recovery}" cannot be emulated',
            )
        _check_params(cc, ef.params or {}, path)
