"""The quantities the papers' figures plot, computed from a campaign's traces.

Small pure functions, each with the definition it follows, and the
queries that feed them from a :class:`~ccarena.campaign.Campaign`
(``run_flows`` for per-flow means, ``flows`` for per-interval rates).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["cov", "flow_means", "jain", "per_run", "ratio", "share", "window_cov"]


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index (Jain, Chiu and Hawe, DEC-TR-301, 1984): (Σx)² / (n·Σx²); 1 when all are equal."""
    xs = [float(x) for x in xs]
    sq = math.fsum(x * x for x in xs)
    return math.fsum(xs) ** 2 / (len(xs) * sq) if xs and sq > 0 else float("nan")


def cov(xs: Sequence[float]) -> float:
    """Coefficient of variation: sample standard deviation over mean (the stability metric of
    Rhee and Xu, 2005, and of Leith, Shorten and McCullagh, 2007)."""
    xs = [float(x) for x in xs]
    if len(xs) < 2:
        return float("nan")
    m = math.fsum(xs) / len(xs)
    if m == 0:
        return float("nan")
    var = math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return math.sqrt(var) / m


def share(part: float, total: float) -> float:
    """A flow's share of what a set of flows got: part / total (the TCP-friendliness figure of
    Rhee and Xu, 2005: the standard TCP flow's fraction of the two flows' throughput)."""
    return float(part) / float(total) if total > 0 else float("nan")


def ratio(a: float, b: float) -> float:
    """Throughput ratio a / b (RTT fairness: the short-RTT flow's throughput over the long-RTT
    flow's, Rhee and Xu, 2005; Leith et al., 2007)."""
    return float(a) / float(b) if b > 0 else float("inf")


def flow_means(c: Campaign, t_from: float = 0.0, t_to: float | None = None) -> pd.DataFrame:
    """Per run and flow: mean rate at the bottleneck (bit/s) and mean cwnd (packets) over the
    intervals ending in (t_from, t_to], with the flow's group and algorithm."""
    upper = "" if t_to is None else f" AND time_s <= {float(t_to)}"
    return c.query(
        'SELECT run_id, flow, any_value("group") AS grp, any_value(cc) AS cc, avg(rate_bps) AS rate_bps, '
        f"avg(cwnd_pkts) AS cwnd_pkts FROM flows WHERE time_s > {float(t_from)}{upper} "
        "GROUP BY run_id, flow ORDER BY run_id, flow"
    )


def window_cov(
    c: Campaign, flows: Sequence[int] | None = None, t_from: float = 0.0, window_s: float = 1.0
) -> pd.DataFrame:
    """Per run: the mean over the chosen flows of the coefficient of variation of each flow's rate
    in consecutive windows of ``window_s`` seconds after ``t_from`` (column ``cov``)."""
    import pandas as pd

    where = "" if flows is None else f" AND flow IN ({', '.join(str(int(f)) for f in flows)})"
    df = c.query(
        f"SELECT run_id, flow, floor((time_s - 1e-9) / {float(window_s)}) AS w, avg(rate_bps) AS r FROM flows "
        f"WHERE time_s > {float(t_from)}{where} GROUP BY run_id, flow, w"
    )
    rows = []
    for run_id, sub in df.groupby("run_id"):
        per_flow = [cov(g.sort_values("w")["r"].tolist()) for _, g in sub.groupby("flow")]
        rows.append({"run_id": run_id, "cov": math.fsum(per_flow) / len(per_flow)})
    return pd.DataFrame(rows, columns=["run_id", "cov"])


def per_run(c: Campaign, t_from: float = 0.0, t_to: float | None = None) -> pd.DataFrame:
    """The catalogue's successful runs with each flow's mean rate and cwnd as columns
    ``rate_<flow>`` and ``cwnd_<flow>`` (bit/s and packets, over (t_from, t_to])."""
    runs = c.runs
    runs = runs[runs["status"] == "ok"].copy()
    fm = flow_means(c, t_from, t_to)
    rate = fm.pivot(index="run_id", columns="flow", values="rate_bps").add_prefix("rate_")
    cwnd = fm.pivot(index="run_id", columns="flow", values="cwnd_pkts").add_prefix("cwnd_")
    return runs.merge(rate, left_on="run_id", right_index=True).merge(cwnd, left_on="run_id", right_index=True)


def column(df: pd.DataFrame, name: str) -> Any:
    """A catalogue column by the swept path's prefix (``topology.rtt`` finds ``topology.rtt_s``)."""
    if name in df.columns:
        return name
    for col in df.columns:
        if col.startswith(name + "_") and col[len(name) + 1 :] in ("s", "bps", "bdp", "bytes", "pkts"):
            return col
    raise KeyError(f"no column for {name!r}")
