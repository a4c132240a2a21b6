"""Loss models, transfer-size and RTT distributions, and start/stop times.

Each reader returns the resolved form (what ``spec.toml`` stores) and the
engine's form of the same thing. :func:`size_mean` and
:func:`stationary_loss` give the long-run mean a distribution or a loss
model implies, as the engine draws it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from . import fields as F
from .errors import SpecError
from .schema import LOSS_MODELS, RTT_DISTS, SIZE_DISTS, START_DISTS
from .units import describe, format_size, format_time

__all__ = [
    "MAX_TRANSFER_BYTES",
    "loss",
    "rtt_dist",
    "size_dist",
    "size_mean",
    "start_dist",
    "start_stop",
    "stationary_loss",
]

MAX_TRANSFER_BYTES = 10**12
"""The engine caps every drawn transfer size at 1 TB (crates/sim traffic.rs)."""

_SURGE = SIZE_DISTS["surge"]


def loss(value: Any, path: str) -> tuple[float | dict[str, Any], float, dict[str, Any] | None]:
    """A link's loss: a Bernoulli probability, ``{ model = "gilbert", ... }`` or ``{ model = "periodic", p }``.

    Returns (resolved value, engine ``loss``, engine ``loss_model`` or None).
    """
    if not isinstance(value, dict):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
            raise SpecError(
                path,
                f"expected a probability in [0, 1), got {describe(value)} "
                '(or a table: { model = "gilbert", p_gb = ..., p_bg = ... } for bursty loss, '
                '{ model = "periodic", p = ... } for deterministic loss)',
            )
        return float(value), float(value), None
    if "model" not in value:
        raise SpecError(F.join(path, "model"), f"required ({', '.join(LOSS_MODELS)})")
    model = F.choice(value["model"], F.join(path, "model"), tuple(LOSS_MODELS), "loss model")
    F.check_keys(value, path, LOSS_MODELS[model])
    if model == "bernoulli":
        if "p" not in value:
            raise SpecError(F.join(path, "p"), "required (the loss probability, e.g. p = 0.001)")
        p = F.number(value["p"], F.join(path, "p"), 0.0, 1.0, hi_open=True)
        return p, p, None
    if model == "periodic":
        if "p" not in value:
            raise SpecError(F.join(path, "p"), "required (the loss rate: one data packet in every round(1/p) is lost)")
        p = F.number(value["p"], F.join(path, "p"), 0.0, 1.0, lo_open=True, hi_open=True)
        period = max(1, round(1.0 / p))
        return {"model": "periodic", "p": p}, 0.0, {"kind": "periodic", "period": period}
    for key in ("p_gb", "p_bg"):
        if key not in value:
            raise SpecError(F.join(path, key), "required (per-packet probability of leaving the good/bad state)")
    p_gb = F.number(value["p_gb"], F.join(path, "p_gb"), 0.0, 1.0)
    p_bg = F.number(value["p_bg"], F.join(path, "p_bg"), 0.0, 1.0, lo_open=True)
    loss_good = F.number(value.get("loss_good", 0.0), F.join(path, "loss_good"), 0.0, 1.0, hi_open=True)
    loss_bad = F.number(value.get("loss_bad", 1.0), F.join(path, "loss_bad"), 0.0, 1.0)
    resolved = {"model": "gilbert", "p_gb": p_gb, "p_bg": p_bg, "loss_good": loss_good, "loss_bad": loss_bad}
    engine = {"kind": "gilbert", "p_gb": p_gb, "p_bg": p_bg, "loss_good": loss_good, "loss_bad": loss_bad}
    return resolved, 0.0, engine


def stationary_loss(loss: float | Mapping[str, Any]) -> float:
    """Long-run fraction of packets a resolved loss setting drops.

    A number is a Bernoulli probability; a Gilbert–Elliott table gives
    ``π_bad·loss_bad + (1 − π_bad)·loss_good`` with ``π_bad = p_gb/(p_gb + p_bg)``;
    periodic loss drops one packet in every ``round(1/p)``.
    """
    if not isinstance(loss, Mapping):
        return float(loss)
    if loss.get("model") == "periodic":
        return 1.0 / max(1, round(1.0 / float(loss["p"])))
    pi_bad = float(loss["p_gb"]) / (float(loss["p_gb"]) + float(loss["p_bg"]))
    return pi_bad * float(loss["loss_bad"]) + (1.0 - pi_bad) * float(loss["loss_good"])


def _dist_size(value: Any, path: str, mss: int) -> tuple[str, int]:
    """A size given as bytes or packets (pkts = MSS payload bytes): (canonical string, bytes)."""
    s = F.size(value, path)
    if s.kind == "bdp":
        raise SpecError(
            path, f'expected a size in bytes or packets such as "150KB" or "100pkts", got {describe(value)}'
        )
    assert isinstance(s.value, int)
    return format_size(s), s.value * mss if s.kind == "pkts" else s.value


def size_dist(value: Any, path: str, mss: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A transfer-size distribution table: (resolved table, engine dict)."""
    table = F.table(value, path)
    if "dist" not in table:
        raise SpecError(F.join(path, "dist"), f"required ({', '.join(SIZE_DISTS)})")
    dist = F.choice(table["dist"], F.join(path, "dist"), tuple(SIZE_DISTS), "size distribution")
    F.check_keys(table, path, SIZE_DISTS[dist])

    def need(key: str, example: str) -> Any:
        if key not in table:
            raise SpecError(F.join(path, key), f'required with dist = "{dist}" (e.g. {key} = {example})')
        return table[key]

    if dist == "surge":
        body = F.number(table.get("body", _SURGE.default("body")), F.join(path, "body"), 0.0, 1.0)
        mu = F.number(table.get("mu", _SURGE.default("mu")), F.join(path, "mu"), -1e3, 1e3)
        sigma = F.number(table.get("sigma", _SURGE.default("sigma")), F.join(path, "sigma"), 0.0, 100.0)
        tail_str, tail_min = _dist_size(table.get("tail_min", _SURGE.default("tail_min")), F.join(path, "tail_min"), mss)
        shape = F.number(
            table.get("tail_shape", _SURGE.default("tail_shape")), F.join(path, "tail_shape"), 0.0, 100.0, lo_open=True
        )
        resolved = {"dist": "surge", "body": body, "mu": mu, "sigma": sigma, "tail_min": tail_str, "tail_shape": shape}
        engine = {
            "kind": "surge",
            "body": body,
            "mu": mu,
            "sigma": sigma,
            "tail_min": float(tail_min),
            "tail_shape": shape,
        }
        return resolved, engine
    if dist == "pareto":
        shape = F.number(need("shape", "1.2"), F.join(path, "shape"), 0.0, 100.0, lo_open=True)
        if ("mean" in table) == ("min" in table):
            where = F.join(path, "min") if "min" in table else path
            raise SpecError(where, 'give exactly one of mean and min (e.g. mean = "100pkts")')
        if "mean" in table:
            if shape <= 1.0:
                raise SpecError(
                    F.join(path, "shape"),
                    f"must be greater than 1 when the mean is given (the mean is infinite), got {shape:g}",
                )
            mean_str, mean = _dist_size(table["mean"], F.join(path, "mean"), mss)
            resolved = {"dist": "pareto", "mean": mean_str, "shape": shape}
            k = mean * (shape - 1.0) / shape
        else:
            min_str, k_bytes = _dist_size(table["min"], F.join(path, "min"), mss)
            resolved = {"dist": "pareto", "min": min_str, "shape": shape}
            k = float(k_bytes)
        return resolved, {"kind": "pareto", "min": k, "shape": shape}
    if dist == "lognormal":
        mu = F.number(need("mu", "9.357"), F.join(path, "mu"), -1e3, 1e3)
        sigma = F.number(need("sigma", "1.328"), F.join(path, "sigma"), 0.0, 100.0)
        return {"dist": "lognormal", "mu": mu, "sigma": sigma}, {"kind": "lognormal", "mu": mu, "sigma": sigma}
    if dist == "fixed":
        size_str, size = _dist_size(need("size", '"10KB"'), F.join(path, "size"), mss)
        if size > MAX_TRANSFER_BYTES:
            raise SpecError(F.join(path, "size"), f"must be at most 1TB, got {describe(table['size'])}")
        return {"dist": "fixed", "size": size_str}, {"kind": "fixed", "bytes": size}
    mean_str, mean = _dist_size(need("mean", '"50KB"'), F.join(path, "mean"), mss)
    return {"dist": "exponential", "mean": mean_str}, {"kind": "exponential", "mean": float(mean)}


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _capped_pareto_mean(k: float, alpha: float, cap: float) -> float:
    """E[min(X, cap)] for X ~ Pareto(k, α)."""
    if k >= cap:
        return cap
    if alpha == 1.0:
        return k + k * math.log(cap / k)
    return k + k * (math.pow(cap / k, 1.0 - alpha) - 1.0) / (1.0 - alpha)


def _capped_lognormal_mean(mu: float, sigma: float, cap: float) -> float:
    """E[min(X, cap)] for ln X ~ Normal(μ, σ)."""
    if sigma == 0.0:
        return min(math.exp(mu), cap)
    z = (math.log(cap) - mu) / sigma
    return math.exp(mu + sigma * sigma / 2.0) * _phi(z - sigma) + cap * (1.0 - _phi(z))


def size_mean(engine_sizes: Mapping[str, Any]) -> float:
    """Mean transfer size in bytes of an engine size distribution, as the engine draws it.

    The engine caps each draw at 1 TB, so the mean is finite even for a
    Pareto shape ≤ 1 (and a little below the analytic mean for shapes just
    above 1: SURGE's 128.5 KB becomes about 109 KB).
    """
    cap = float(MAX_TRANSFER_BYTES)
    kind = engine_sizes["kind"]
    if kind == "fixed":
        return float(engine_sizes["bytes"])
    if kind == "exponential":
        return float(engine_sizes["mean"])
    if kind == "pareto":
        return _capped_pareto_mean(float(engine_sizes["min"]), float(engine_sizes["shape"]), cap)
    if kind == "lognormal":
        return _capped_lognormal_mean(float(engine_sizes["mu"]), float(engine_sizes["sigma"]), cap)
    body = float(engine_sizes["body"])
    return body * _capped_lognormal_mean(float(engine_sizes["mu"]), float(engine_sizes["sigma"]), cap) + (
        1.0 - body
    ) * _capped_pareto_mean(float(engine_sizes["tail_min"]), float(engine_sizes["tail_shape"]), cap)


def rtt_dist(value: Any, path: str) -> tuple[str | dict[str, Any], dict[str, Any]]:
    """A source's RTT: a time, or a distribution table. Returns (resolved, engine dict)."""
    if not isinstance(value, dict):
        rtt = F.positive_time(value, path)
        return format_time(rtt), {"kind": "fixed", "rtt_ns": rtt}
    if "dist" not in value:
        raise SpecError(F.join(path, "dist"), f"required ({', '.join(RTT_DISTS)})")
    dist = F.choice(value["dist"], F.join(path, "dist"), tuple(RTT_DISTS), "RTT distribution")
    F.check_keys(value, path, RTT_DISTS[dist])

    def need(key: str, example: str) -> Any:
        if key not in value:
            raise SpecError(F.join(path, key), f'required with dist = "{dist}" (e.g. {key} = "{example}")')
        return value[key]

    if dist == "fixed":
        rtt = F.positive_time(need("rtt", "50ms"), F.join(path, "rtt"))
        return format_time(rtt), {"kind": "fixed", "rtt_ns": rtt}
    if dist == "exponential":
        mean = F.positive_time(need("mean_one_way", "66ms"), F.join(path, "mean_one_way"))
        lo = F.time(value.get("min", "0s"), F.join(path, "min"))
        resolved = {"dist": "exponential", "mean_one_way": format_time(mean), "min": format_time(lo)}
        return resolved, {"kind": "exponential", "mean_one_way_ns": mean, "min_rtt_ns": lo}
    lo = F.positive_time(need("lo", "20ms"), F.join(path, "lo"))
    hi = F.time(need("hi", "200ms"), F.join(path, "hi"))
    if hi < lo:
        raise SpecError(F.join(path, "hi"), f"must be at least lo ({format_time(lo)}), got {describe(value['hi'])}")
    return {"dist": "uniform", "lo": format_time(lo), "hi": format_time(hi)}, {
        "kind": "uniform",
        "lo_ns": lo,
        "hi_ns": hi,
    }


def start_stop(table: Mapping[str, Any], path: str, duration_ns: int) -> tuple[int, int | None]:
    """``start`` (default 0 s) and ``stop`` (None: the end of the run) of a flow group or source, in ns."""
    start_ns = F.time(table.get("start", "0s"), F.join(path, "start"))
    if start_ns >= duration_ns:
        raise SpecError(
            F.join(path, "start"),
            f"must be before the end of the run (duration = {format_time(duration_ns)}), got {describe(table['start'])}",
        )
    stop_ns: int | None = None
    if "stop" in table:
        stop_ns = F.time(table["stop"], F.join(path, "stop"))
        if stop_ns <= start_ns:
            raise SpecError(
                F.join(path, "stop"), f"must be after start ({format_time(start_ns)}), got {describe(table['stop'])}"
            )
        if stop_ns > duration_ns:
            raise SpecError(
                F.join(path, "stop"),
                f"must be at most the duration ({format_time(duration_ns)}), got {describe(table['stop'])}",
            )
    return start_ns, stop_ns


def start_dist(value: Any, path: str, duration_ns: int) -> tuple[dict[str, Any], int, int]:
    """A distribution of start times, ``{ dist = "uniform", lo, hi }``: (resolved, lo ns, hi ns)."""
    table = F.table(value, path)
    if "dist" not in table:
        raise SpecError(F.join(path, "dist"), f"required ({', '.join(START_DISTS)})")
    dist = F.choice(table["dist"], F.join(path, "dist"), tuple(START_DISTS), "start distribution")
    F.check_keys(table, path, START_DISTS[dist])
    for key in ("lo", "hi"):
        if key not in table:
            raise SpecError(F.join(path, key), f'required with dist = "{dist}" (e.g. lo = "0s", hi = "2s")')
    lo = F.time(table["lo"], F.join(path, "lo"))
    hi = F.time(table["hi"], F.join(path, "hi"))
    if hi < lo:
        raise SpecError(F.join(path, "hi"), f"must be at least lo ({format_time(lo)}), got {describe(table['hi'])}")
    if hi >= duration_ns:
        raise SpecError(
            F.join(path, "hi"),
            f"must be before the end of the run (duration = {format_time(duration_ns)}), got {describe(table['hi'])}",
        )
    return {"dist": dist, "lo": format_time(lo), "hi": format_time(hi)}, lo, hi
