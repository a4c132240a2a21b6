"""Lee and Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", MIT 6.829, 2002
(talk): D1-D7.

Each preset states the talk's claim as the slides make it and where, what they report in numbers,
measures the quantity the slides plot (utilisation, Jain's index, a flow's share, times in RTTs,
min-max fairness) into JSON values, and tests every part of the claim on them with thresholds fixed
in advance; each judge's docstring gives the reasons for its thresholds.

The talk ran ns-2; the campaigns use ns-2's TCP defaults where the talk gives none (1000-B packets,
initial window 1) and HighSpeed TCP in its RFC 3649 form; what ccarena cannot build as ns-2 did (a
receiver that ACKs every packet) is in each campaign file's "Deviations from the paper".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .common import LEE, MBPS, cc_col, ok_runs, records, rounded, second_half_s
from .figures import new_figure
from .measures import column, flow_means, jain, share
from .registry import Part, Preset, Values

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = [
    "D_SERIES",
    "convergence_rtts",
    "fill_time_rtts",
    "window_means",
]

RTT_S = 0.1
"""The talk's RTT (every D setup): times are counted in RTTs of 100 ms, the propagation RTT."""

NAMES = {"highspeed": "HighSpeed TCP", "reno": "TCP (Reno)", "xcp": "XCP"}

GOOD = 0.9
"""What "good" utilisation and "close to 1" fairness mean in D1, D2 and D6 (the talk gives no
number). Utilisation: 0.9 lies between the 0.75 that a window halving from the pipe to half of it
averages without a buffer and the full link that a 1-BDP buffer allows (a window halving from 2 BDP
stays at 1 BDP); Jain's index: for two flows 0.9 is a 2:1 split ((1 + 2)² / (2·(1 + 4)) = 0.9)."""


def _name(cc: str) -> str:
    return NAMES.get(cc, cc)


def _qdisc(df: pd.DataFrame) -> list[str]:
    """The bottleneck's queue of each run: the swept one, or the campaign's single one."""
    if "topology.bottleneck.qdisc" in df.columns:
        return [str(q) for q in df["topology.bottleneck.qdisc"]]
    if "queue.qdisc" in df.columns:
        return [str(q) for q in df["queue.qdisc"]]
    return ["droptail"] * len(df)


def _median(xs: Sequence[float | None]) -> float:
    """The median of ``xs``, None counting as infinitely long (a time not reached within the run)."""
    vals = [math.inf if x is None else float(x) for x in xs]
    return float(statistics.median(vals)) if vals else math.nan


def _fmt(x: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(x) else "never within the run" if math.isinf(x) else f"{x:.{digits}f}"


def _rtts(x: float) -> str:
    return "n/a" if math.isnan(x) else "not within the run" if math.isinf(x) else f"{x:.0f} RTTs"


def _means(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], value: str) -> dict[tuple[Any, ...], float]:
    """The mean of ``value`` over the records of each combination of ``keys`` (the repeats of a point)."""
    groups: dict[tuple[Any, ...], list[float]] = {}
    for r in rows:
        v = r.get(value)
        if v is None or not math.isfinite(float(v)):
            continue
        groups.setdefault(tuple(r[k] for k in keys), []).append(float(v))
    return {k: math.fsum(v) / len(v) for k, v in groups.items()}


def _lines(ax: Any, df: pd.DataFrame, x: str, y: str, series: str, scale_x: float = 1.0) -> None:
    """One line per value of ``series``: the mean of ``y`` over the runs at each ``x``, every run a dot."""
    for i, (s, sub) in enumerate(df.groupby(series, sort=False)):
        g = sub.groupby(x)[y].mean()
        ax.plot(g.index * scale_x, g.values, marker="o", color=f"C{i}", label=str(s))
        ax.plot(sub[x] * scale_x, sub[y], ".", color=f"C{i}", ms=4, alpha=0.6)


# D1 ---------------------------------------------------------------------------------------------


def d1_measure(c: Campaign) -> Values:
    """Per run: algorithm, queue, bottleneck rate (Mbit/s), RTT (ms), repeat, and the bottleneck's
    utilisation over the second half (``util``) and over the whole run from the first start
    (``util_whole``)."""
    df = ok_runs(c)
    df["qdisc"] = _qdisc(df)
    df["rate_mbps"] = df[column(df, "topology.bottleneck.rate")] * MBPS
    df["rtt_ms"] = df[column(df, "topology.rtt")] * 1e3
    return {
        "runs": records(
            df,
            {
                "cc": cc_col(df),
                "qdisc": "qdisc",
                "rate_mbps": "rate_mbps",
                "rtt_ms": "rtt_ms",
                "repeat": "repeat",
                "util": "utilization_second_half",
                "util_whole": "utilization",
            },
        )
    }


def d1_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 7 and slide 16: HighSpeed TCP and XCP both keep the bottleneck well used in high
    bandwidth-delay settings. One part per algorithm: its utilisation over the second half, the
    mean over the repeats of each point of both cuts, is at least :data:`GOOD` (0.9) at every point.

    The talk gives no number for "good"; 0.9 is explained at :data:`GOOD` (above the 0.75 of a
    halving sawtooth with no buffer, below the full link a 1-BDP buffer allows). TCP is not judged
    (the claim does not speak of it); its lowest mean is shown beside, because with the talk's 1-BDP
    buffer a working AIMD keeps the link full too, so the check tells these two algorithms from a
    failing one, not from TCP."""
    rows = values["D1"]["runs"]
    m = _means(rows, ("cc", "rate_mbps", "rtt_ms"), "util")
    tcp = {(r, t): v for (a, r, t), v in m.items() if a == "reno"}
    beside = ""
    if tcp:
        (r, t), low = min(tcp.items(), key=lambda kv: kv[1])
        beside = f"; not judged, standard TCP's lowest: {low:.3f} at {r:g} Mbit/s and {t:g} ms (a 1-BDP buffer)"
    parts = []
    for cc in ("highspeed", "xcp"):
        pts = {(r, t): v for (a, r, t), v in m.items() if a == cc}
        if not pts:
            parts.append(Part(f"{_name(cc)} keeps good utilisation at every bandwidth and RTT", False, "no runs"))
            continue
        (r, t), low = min(pts.items(), key=lambda kv: kv[1])
        parts.append(
            Part(
                f"{_name(cc)} keeps good utilisation (>= {GOOD}) at every bandwidth and RTT",
                low >= GOOD,
                f"lowest mean utilisation {low:.3f} at {r:g} Mbit/s and {t:g} ms over {len(pts)} points"
                + (beside if cc == "xcp" else ""),
            )
        )
    return parts


def d1_figure(c: Campaign) -> Any:
    df = ok_runs(c)
    df["algorithm"] = [_name(str(a)) for a in df[cc_col(df)]]
    rate, rtt = column(df, "topology.bottleneck.rate"), column(df, "topology.rtt")
    fig, axes = new_figure(2, width=5)
    cuts = (
        (axes[0], df[(df[rtt] - RTT_S).abs() < 1e-9], rate, MBPS, "bottleneck (Mbit/s), RTT 100 ms"),
        (axes[1], df[(df[rate] - 200e6).abs() < 1.0], rtt, 1e3, "RTT (ms), 200 Mbit/s"),
    )
    for ax, sub, x, scale, label in cuts:
        _lines(ax, sub, x, "utilization_second_half", "algorithm", scale)
        ax.axhline(GOOD, color="k", ls=":", lw=0.8)
        ax.set_xscale("log")
        ticks = sorted({float(v) * scale for v in sub[x]})
        ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
        ax.minorticks_off()
        ax.set_xlabel(label)
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("utilisation, second half")
    fig.tight_layout()
    return fig


# D2 ---------------------------------------------------------------------------------------------


def d2_measure(c: Campaign) -> Values:
    """Per run: algorithm, number of flows, repeat, and Jain's index of the flows' mean rates over
    the second half (summary.json ``jain_index``)."""
    df = ok_runs(c)
    return {
        "runs": records(
            df, {"cc": cc_col(df), "flows": column(df, "flows[0].count"), "repeat": "repeat", "jain": "jain_index"}
        )
    }


def d2_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 8 and slide 16: Jain's index ranks XCP > HighSpeed TCP > TCP, all close to 1.

    The ranking is tested on each algorithm's mean index over the figure's points (every flow count
    and repeat): the talk states it for the figure as a whole, and with all indices near 1 the gaps
    at one point are of the order of the spread between repeats. Each step of the ranking is a part
    (strictly greater). "Close to 1" is tested at every point: each algorithm's mean over the repeats
    at each flow count is at least :data:`GOOD` (0.9: no worse than a 2:1 split between two flows)."""
    rows = values["D2"]["runs"]
    overall = _means(rows, ("cc",), "jain")
    x, h, t = (overall.get((a,), math.nan) for a in ("xcp", "highspeed", "reno"))
    per = _means(rows, ("cc", "flows"), "jain")
    low = min(per.values()) if per else math.nan
    worst = [f"{_name(a)} n={n}: {v:.3f}" for (a, n), v in sorted(per.items()) if v < GOOD]
    return [
        Part("XCP's index above HighSpeed TCP's", x > h, f"means over all points: XCP {x:.4f}, HighSpeed TCP {h:.4f}"),
        Part("HighSpeed TCP's index above TCP's", h > t, f"means over all points: HighSpeed TCP {h:.4f}, TCP {t:.4f}"),
        Part(
            f"all three close to 1 (>= {GOOD} at every flow count)",
            bool(per) and low >= GOOD and {a for a, _ in per} >= {"xcp", "highspeed", "reno"},
            f"lowest mean index {low:.3f}" + (f"; below {GOOD}: " + ", ".join(worst) if worst else ""),
        ),
    ]


def d2_figure(c: Campaign) -> Any:
    df = ok_runs(c)
    df["algorithm"] = [_name(str(a)) for a in df[cc_col(df)]]
    fig, axes = new_figure(1, width=5.5)
    ax = axes[0]
    n = column(df, "flows[0].count")
    _lines(ax, df, n, "jain_index", "algorithm")
    ax.axhline(GOOD, color="k", ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ticks = sorted({int(v) for v in df[n]})
    ax.set_xticks(ticks, [str(v) for v in ticks])
    ax.minorticks_off()
    ax.set_xlabel("number of flows (200 Mbit/s, 100 ms)")
    ax.set_ylabel("Jain's fairness index, second half")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# D3 ---------------------------------------------------------------------------------------------

STARVED = 0.25
"""D3: a TCP flow is starved when it gets less than half of its fair share of the pair (0.5)."""


def _d3_table(c: Campaign) -> pd.DataFrame:
    runs = ok_runs(c)
    fm = flow_means(c, t_from=second_half_s(c))
    rate = fm.pivot(index="run_id", columns="flow", values="rate_bps").add_prefix("rate_")
    df = runs.merge(rate, left_on="run_id", right_index=True)
    df["pair"] = ["TCP + TCP" if b == "reno" else "HSTCP + TCP" for b in df["baseline"].fillna("")]
    df["rate_0_mbps"] = df["rate_0"] * MBPS
    df["rate_1_mbps"] = df["rate_1"] * MBPS
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    df["min_share"] = [share(min(a, b), a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    return df


def d3_measure(c: Campaign) -> Values:
    """Per run: the pair (HighSpeed TCP + TCP, or the baseline's TCP + TCP), repeat, each flow's
    mean rate over the second half (Mbit/s), the TCP flow's (flow 1's) share of the pair, and the
    smaller flow's share."""
    df = _d3_table(c)
    return {
        "runs": records(
            df,
            {
                "pair": "pair",
                "repeat": "repeat",
                "rate_0_mbps": "rate_0_mbps",
                "rate_1_mbps": "rate_1_mbps",
                "tcp_share": "tcp_share",
                "min_share": "min_share",
            },
        )
    }


def d3_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 9 and slide 16: at 50 Mbit/s a HighSpeed TCP flow starves a TCP flow; two TCP flows
    are fair to each other.

    Starved: the TCP flow's share of the pair's throughput, the mean over the repeats, is below
    :data:`STARVED` (0.25, half of its fair share). Fair: the smaller flow's share of a TCP pair,
    the mean over the repeats (per run, since the two flows are alike and the mean of one flow's
    share is 1/2 by symmetry), is at least 1/3, a split no worse than 2:1 (Jain's index >= 0.9,
    the "close to 1" of D2)."""
    rows = values["D3"]["runs"]
    hs = _means(rows, ("pair",), "tcp_share").get(("HSTCP + TCP",), math.nan)
    pair = _means(rows, ("pair",), "min_share").get(("TCP + TCP",), math.nan)
    return [
        Part(
            f"HighSpeed TCP starves a TCP flow at 50 Mbit/s (TCP's share < {STARVED})",
            hs < STARVED,
            f"TCP's share against HighSpeed TCP {_fmt(hs, 3)}",
        ),
        Part(
            "two TCP flows are fair to each other (smaller share >= 1/3)",
            pair >= 1 / 3,
            f"the smaller TCP flow's share of a TCP pair {_fmt(pair, 3)}",
        ),
    ]


def d3_figure(c: Campaign) -> Any:
    df = _d3_table(c)
    fig, axes = new_figure(1, width=5)
    ax = axes[0]
    pairs = ["HSTCP + TCP", "TCP + TCP"]
    for f, name in ((0, "flow 0 (HighSpeed TCP, or TCP in the pair)"), (1, "flow 1 (TCP)")):
        xs = [i + (f - 0.5) * 0.38 for i in range(2)]
        ax.bar(xs, [df[df["pair"] == p][f"rate_{f}_mbps"].mean() for p in pairs], 0.38, color=f"C{f}", label=name)
        for x, p in zip(xs, pairs, strict=True):
            v = df[df["pair"] == p][f"rate_{f}_mbps"].tolist()
            ax.plot([x] * len(v), v, "k.", ms=4)
    ax.set_xticks(range(2), pairs)
    ax.set_ylabel("throughput (Mbit/s), second half")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# D4 ---------------------------------------------------------------------------------------------

JOIN_S = 40.0
"""D4: the second flow joins at 40 s (slide 10)."""
CONV_WINDOW_S = 10.0
"""D4: rates are averaged over 10-s windows (100 RTTs) from the join."""
CONV_DELTA = 0.1
"""D4: converged means each flow within 10 % of the fair share (a 27.5/22.5 split of 50 Mbit/s at
worst); 20 % would call 30 vs 20 Mbit/s fair."""
CONV_HOLD = 10
"""D4: ... in ten windows in a row (100 s, 1000 RTTs)."""
D4_XCP_MAX = 170.0
"""D4: "very short" is at most a tenth of the shorter of the two long counts (1700 RTTs)."""
D4_COUNTS = (1700.0, 4000.0)
"""D4: the two long counts on slide 10, in RTTs."""
TOLERANCE = 2.0
"""D4, D5: the talk's counts are captions of its plots, each from one run, with a convergence (or
fetching) time it does not define; one run's time depends on the flows' phases, so a count is matched
within a factor of 2."""


def window_means(rates: pd.DataFrame, t0: float, window_s: float) -> list[list[float]]:
    """Each flow's mean rate in consecutive windows of ``window_s`` after ``t0``: a list per window
    (flows in order), only whole windows (every flow has as many samples as the first full window).
    ``rates``: columns flow, time_s, rate_bps; a sample at ``time_s`` covers the interval before it."""
    after = rates[rates["time_s"] > t0 + 1e-9].copy()
    if after.empty:
        return []
    after["w"] = ((after["time_s"] - t0 - 1e-9) // window_s).astype(int)
    counts = after.groupby(["w", "flow"])["rate_bps"].count().unstack("flow")
    means = after.groupby(["w", "flow"])["rate_bps"].mean().unstack("flow").sort_index()
    full = counts.max().max()
    out = []
    for w, row in means.iterrows():
        if row.isna().any() or (counts.loc[w] < full).any():
            continue
        out.append([float(v) for v in row.tolist()])
    return out


def convergence_rtts(
    windows: Sequence[Sequence[float]],
    window_s: float = CONV_WINDOW_S,
    delta: float = CONV_DELTA,
    hold: int = CONV_HOLD,
    rtt_s: float = RTT_S,
) -> tuple[float | None, float]:
    """Convergence to fairness after a join, in RTTs: the start of the first window from which each
    flow's mean rate is within ``delta`` of the fair share (the flows' mean) in ``hold`` windows in a
    row, counted from the join; None when no window qualifies. Also the largest time the windows can
    show (the horizon), in RTTs."""
    ok = []
    for w in windows:
        fair = math.fsum(w) / len(w) if w else 0.0
        ok.append(fair > 0 and all(abs(x / fair - 1.0) <= delta for x in w))
    horizon = max(0, len(ok) - hold) * window_s / rtt_s
    for k in range(len(ok) - hold + 1):
        if all(ok[k : k + hold]):
            return k * window_s / rtt_s, horizon
    return None, horizon


def _d4_runs(c: Campaign) -> list[tuple[pd.Series, pd.DataFrame, list[list[float]]]]:
    df = ok_runs(c)
    df = df.sort_values([cc_col(df), "repeat"])
    out = []
    for _, row in df.iterrows():
        fl = c.query(f"SELECT flow, time_s, rate_bps FROM flows WHERE run_id = '{row['run_id']}' ORDER BY flow, time_s")
        out.append((row, fl, window_means(fl, JOIN_S, CONV_WINDOW_S)))
    return out


def d4_measure(c: Campaign) -> Values:
    """Per run: algorithm, repeat, the convergence time after the join (RTTs; None when not within
    the run; :func:`convergence_rtts` with 10-s windows, 10 % and 100 s) and the horizon the run can
    show, with the definition's parameters."""
    cc = cc_col(ok_runs(c))
    runs = []
    for row, _, wins in _d4_runs(c):
        t, horizon = convergence_rtts(wins)
        runs.append({"cc": str(row[cc]), "repeat": int(row["repeat"]), "converged_rtts": t, "horizon_rtts": horizon})
    return rounded(
        {
            "runs": runs,
            "join_s": JOIN_S,
            "window_s": CONV_WINDOW_S,
            "delta": CONV_DELTA,
            "hold_windows": CONV_HOLD,
        }
    )


def _readings(h: float, t: float, counts: tuple[float, float], tol: float) -> list[str]:
    """Which assignments of the two reported counts to (HighSpeed TCP, TCP) the measured pair fits
    within a factor ``tol``: "A" gives HighSpeed TCP the first count, "B" the second."""
    lo, hi = counts

    def near(x: float, c: float) -> bool:
        return c / tol <= x <= c * tol

    out = []
    if near(h, lo) and near(t, hi):
        out.append(f"A (HighSpeed TCP {lo:.0f}, TCP {hi:.0f})")
    if near(h, hi) and near(t, lo):
        out.append(f"B (HighSpeed TCP {hi:.0f}, TCP {lo:.0f})")
    return out


def d4_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 10: after a flow joins, XCP converges to fairness very quickly, TCP and HighSpeed TCP
    take long: 4000 and 1700 RTTs.

    Each algorithm's time is the median over the repeats (a repeat that does not converge within the
    run counts as longer than any bound). XCP: at most :data:`D4_XCP_MAX` (170 RTTs, a tenth of the
    shorter count). The counts: which algorithm each belongs to is ambiguous in the text (the caption
    order gives TCP 4000 and HighSpeed TCP 1700; the bullet, that HighSpeed TCP may converge more
    slowly than TCP, fits the reverse), so the part holds when the pair (HighSpeed TCP, TCP) matches
    either assignment within a factor of :data:`TOLERANCE` (2: each count is a caption of one run,
    and the convergence time's definition is not the talk's); the result names the assignments it fits. That
    HighSpeed TCP may converge more slowly than TCP is said as a possibility, not a result, and is not
    tested; the result gives both medians."""
    rows = values["D4"]["runs"]
    med = {cc: _median([r["converged_rtts"] for r in rows if r["cc"] == cc]) for cc in ("xcp", "highspeed", "reno")}
    x, h, t = med["xcp"], med["highspeed"], med["reno"]
    fits = _readings(h, t, D4_COUNTS, TOLERANCE)
    per = "; ".join(
        f"{_name(cc)} " + ", ".join(_rtts(_median([r["converged_rtts"]])) for r in rows if r["cc"] == cc)
        for cc in ("xcp", "highspeed", "reno")
    )
    return [
        Part(
            f"XCP converges to fairness very quickly (<= {D4_XCP_MAX:.0f} RTTs)",
            x <= D4_XCP_MAX,
            f"XCP's median {_rtts(x)} (in steps of 100 RTTs, the 10-s windows; 0: fair from the first window)",
        ),
        Part(
            "HighSpeed TCP and TCP take 1700 and 4000 RTTs, in either order (within a factor 2)",
            bool(fits),
            f"medians: HighSpeed TCP {_rtts(h)}, TCP {_rtts(t)}; fits reading "
            + (" and ".join(fits) if fits else "neither A (HighSpeed TCP 1700, TCP 4000) nor B (4000, 1700)")
            + f"; per run: {per}",
        ),
    ]


def d4_figure(c: Campaign) -> Any:
    first = [(row, fl, wins) for row, fl, wins in _d4_runs(c) if int(row["repeat"]) == 0]
    cc = cc_col(ok_runs(c))
    fig, axes = new_figure(len(first), width=5.5)
    for ax, (row, fl, wins) in zip(axes, first, strict=True):
        t, _ = convergence_rtts(wins)
        for f, sub in fl.groupby("flow", sort=True):
            ax.plot(sub["time_s"], sub["rate_bps"] * MBPS, lw=0.4, alpha=0.5, color=f"C{int(f)}")
            xs = [JOIN_S + k * CONV_WINDOW_S for k in range(len(wins) + 1)]
            ys = [w[int(f)] * MBPS for w in wins]
            ax.stairs(ys, xs, baseline=None, color=f"C{int(f)}", lw=1.8, label=f"flow {int(f)}, 10-s means")
        if t is not None:
            ax.axvline(JOIN_S + t * RTT_S, color="k", ls="--", lw=0.9)
            title = f"{_name(str(row[cc]))}: within 10 % of the fair share\nfor 100 s from {t:.0f} RTTs after the join"
        else:
            title = f"{_name(str(row[cc]))}: not within 10 % of the fair share\nfor 100 s within the run"
        ax.axvline(JOIN_S, color="grey", ls=":", lw=0.8)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("rate at the bottleneck (Mbit/s)")
    fig.tight_layout()
    return fig


# D5 ---------------------------------------------------------------------------------------------

STOP_S = 100.0
"""D5: the second flow stops at 100 s (when the catalogue does not say)."""
FILL_LEVEL = 0.9
"""D5: the freed bandwidth is taken when the remaining flow carries 90 % of the link."""
D5_XCP_MAX = 10.0
"""D5: "immediately" is at most 10 RTTs (see :func:`d5_judge`)."""
D5_COUNT = 2550.0
"""D5: the count on slide 11, in RTTs."""


def fill_time_rtts(rates: pd.DataFrame, stop_s: float, link_bps: float, rtt_s: float = RTT_S) -> float | None:
    """Time from ``stop_s`` until the remaining flow's rate (one sample per interval) first reaches
    :data:`FILL_LEVEL` of the link, in RTTs; None if never within the trace."""
    after = rates[(rates["time_s"] > stop_s) & (rates["rate_bps"] >= FILL_LEVEL * link_bps)]
    return float(after["time_s"].min() - stop_s) / rtt_s if not after.empty else None


def _stop_s(row: pd.Series) -> float:
    v = row.get("responsiveness.events[0].stop_s")
    return float(v) if v is not None and not math.isnan(float(v)) else STOP_S


def _d5_runs(c: Campaign) -> list[tuple[pd.Series, pd.DataFrame, float | None]]:
    df = ok_runs(c)
    df = df.sort_values([cc_col(df), "repeat"])
    out = []
    for _, row in df.iterrows():
        fl = c.query(
            f"SELECT time_s, rate_bps FROM flows WHERE run_id = '{row['run_id']}' AND flow = 0 ORDER BY time_s"
        )
        out.append((row, fl, fill_time_rtts(fl, _stop_s(row), float(row["bottleneck.rate_bps"]))))
    return out


def d5_measure(c: Campaign) -> Values:
    """Per run: algorithm, repeat, the time from the stop until the remaining flow carries 90 % of
    the link (RTTs; None when not within the run) and the horizon the run can show (RTTs)."""
    cc = cc_col(ok_runs(c))
    runs = []
    for row, _, t in _d5_runs(c):
        horizon = (float(row["duration_s"]) - _stop_s(row)) / RTT_S
        runs.append({"cc": str(row[cc]), "repeat": int(row["repeat"]), "fill_rtts": t, "horizon_rtts": horizon})
    return rounded({"runs": runs, "level": FILL_LEVEL})


def d5_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 11: XCP takes suddenly freed bandwidth immediately; the caption's 2550 RTTs.

    Each algorithm's time is the median over the repeats (not reached within the run counts as
    longer than any bound). "Immediately" is at most :data:`D5_XCP_MAX` (10 RTTs): XCP's efficiency
    controller hands out 0.4 of the spare bandwidth per control interval (about an RTT), so a link
    half free is 90 % used after about 3 intervals, and 10 allows for the feedback's delay and the
    1-RTT sampling; it is also under 1/200 of 2550. The count: the slide's text does not tie 2550
    RTTs to HighSpeed TCP or to TCP (two captions under three labels; the bullet says HighSpeed TCP
    may rely on additive increase like TCP), so the part holds when either algorithm's time is
    within a factor of :data:`TOLERANCE` (2) of 2550 RTTs; the result says which. That HighSpeed
    TCP may, like TCP, rely on additive increase here is said as a possibility and is not tested."""
    rows = values["D5"]["runs"]
    med = {cc: _median([r["fill_rtts"] for r in rows if r["cc"] == cc]) for cc in ("xcp", "highspeed", "reno")}
    near = [cc for cc in ("highspeed", "reno") if D5_COUNT / TOLERANCE <= med[cc] <= D5_COUNT * TOLERANCE]
    return [
        Part(
            f"XCP takes the freed bandwidth immediately (<= {D5_XCP_MAX:.0f} RTTs)",
            med["xcp"] <= D5_XCP_MAX,
            f"XCP's median {_rtts(med['xcp'])} to {FILL_LEVEL:.0%} of the link",
        ),
        Part(
            "HighSpeed TCP or TCP takes about 2550 RTTs (within a factor 2)",
            bool(near),
            f"medians to {FILL_LEVEL:.0%} of the link: HighSpeed TCP {_rtts(med['highspeed'])}, "
            f"TCP {_rtts(med['reno'])}"
            + (f"; within the band: {', '.join(_name(cc) for cc in near)}" if near else "; neither in 1275-5100 RTTs"),
        ),
    ]


def d5_figure(c: Campaign) -> Any:
    fig, axes = new_figure(1, width=6.5)
    ax = axes[0]
    cc = cc_col(ok_runs(c))
    link = 0.0
    shown: list[float] = []
    for i, (row, fl, t) in enumerate(r for r in _d5_runs(c) if int(r[0]["repeat"]) == 0):
        if t is not None:
            shown.append(t)
        stop = _stop_s(row)
        link = float(row["bottleneck.rate_bps"])
        label = f"{_name(str(row[cc]))}: {FILL_LEVEL:.0%} after {_rtts(math.inf if t is None else t)}"
        ax.plot(fl["time_s"] - stop, fl["rate_bps"] * MBPS, color=f"C{i}", lw=0.7, label=label)
    if link:
        ax.axhline(FILL_LEVEL * link * MBPS, color="k", ls=":", lw=0.8)
    ax.set_xlim(-20, max([60.0] + [1.5 * t * RTT_S for t in shown]))
    ax.set_xlabel("time since the other flow stopped (s); 1 s = 10 RTTs")
    ax.set_ylabel("remaining flow's rate (Mbit/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# D6 ---------------------------------------------------------------------------------------------


def d6_measure(c: Campaign) -> Values:
    """Per run: algorithm, queue, buffer (fraction of the BDP), repeat, utilisation and Jain's
    index over the second half."""
    df = ok_runs(c)
    df["qdisc"] = _qdisc(df)
    return {
        "runs": records(
            df,
            {
                "cc": cc_col(df),
                "qdisc": "qdisc",
                "buffer_bdp": column(df, "topology.bottleneck.buffer"),
                "repeat": "repeat",
                "util": "utilization_second_half",
                "jain": "jain_index",
            },
        )
    }


def d6_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 13 and slide 16: with a buffer of 0.1 BDP, HighSpeed TCP and XCP both work well in
    utilisation and fairness, and XCP does better than HighSpeed TCP in both.

    Read at the smallest buffer (0.1 BDP), each value the mean over the repeats. "Well" is
    :data:`GOOD` for both utilisation and Jain's index (0.9, as in D1 and D2); HighSpeed TCP must
    meet it under DropTail and under RED, the two queues slide 13 ran it with (slide 12, the
    utilisation, names no queue; slide 6 gives RED and DropTail for the study). "XCP outperforms"
    is strictly above HighSpeed TCP under either queue (the talk gives no margin)."""
    rows = values["D6"]["runs"]
    small = min((r["buffer_bdp"] for r in rows), default=math.nan)
    at = [r for r in rows if r["buffer_bdp"] == small]
    u = _means(at, ("cc", "qdisc"), "util")
    j = _means(at, ("cc", "qdisc"), "jain")
    hs = sorted(k for k in u if k[0] == "highspeed")
    xu, xj = u.get(("xcp", "xcp"), math.nan), j.get(("xcp", "xcp"), math.nan)
    hu = {q: u[("highspeed", q)] for _, q in hs}
    hj = {q: j.get(("highspeed", q), math.nan) for _, q in hs}

    def listing(d: Mapping[str, float]) -> str:
        return ", ".join(f"{q} {v:.3f}" for q, v in d.items()) or "no runs"

    return [
        Part(
            f"HighSpeed TCP's utilisation good at {small:g} BDP (>= {GOOD}, DropTail and RED)",
            bool(hu) and all(v >= GOOD for v in hu.values()),
            f"HighSpeed TCP: {listing(hu)}",
        ),
        Part(
            f"HighSpeed TCP's fairness good at {small:g} BDP (Jain >= {GOOD}, DropTail and RED)",
            bool(hj) and all(v >= GOOD for v in hj.values()),
            f"HighSpeed TCP: {listing(hj)}",
        ),
        Part(
            f"XCP's utilisation and fairness good at {small:g} BDP (>= {GOOD})",
            xu >= GOOD and xj >= GOOD,
            f"XCP: utilisation {_fmt(xu, 3)}, Jain {_fmt(xj, 3)}",
        ),
        Part(
            "XCP's utilisation above HighSpeed TCP's",
            bool(hu) and all(xu > v for v in hu.values()),
            f"XCP {_fmt(xu, 4)}; HighSpeed TCP " + ", ".join(f"{q} {v:.4f}" for q, v in hu.items()),
        ),
        Part(
            "XCP's fairness above HighSpeed TCP's",
            bool(hj) and all(xj > v for v in hj.values()),
            f"XCP {_fmt(xj, 4)}; HighSpeed TCP " + ", ".join(f"{q} {v:.4f}" for q, v in hj.items()),
        ),
    ]


def d6_figure(c: Campaign) -> Any:
    df = ok_runs(c)
    df["algorithm"] = [f"{_name(str(a))} / {q}" for a, q in zip(df[cc_col(df)], _qdisc(df), strict=True)]
    buf = column(df, "topology.bottleneck.buffer")
    fig, axes = new_figure(2, width=5, sharey=False)
    panels = ((axes[0], "utilization_second_half", "utilisation"), (axes[1], "jain_index", "Jain's index"))
    for ax, col, label in panels:
        _lines(ax, df, buf, col, "algorithm")
        ax.axhline(GOOD, color="k", ls=":", lw=0.8)
        ax.set_xlabel("buffer (fraction of the BDP)")
        ax.set_ylabel(label + ", second half")
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# D7 ---------------------------------------------------------------------------------------------

D7_FACTOR = 2.0
"""D7: the degradation factor slide 14 reports for min-max fairness."""
D7_UTIL_DROP = 0.01
"""D7: the smallest utilisation drop counted as a degradation (see :func:`d7_judge`)."""


def _d7_table(c: Campaign) -> pd.DataFrame:
    import pandas as pd

    runs = ok_runs(c)
    fm = flow_means(c, t_from=second_half_s(c))
    fwd = fm[fm["grp"] == 0].groupby("run_id")["rate_bps"].agg(["sum", "min", "max", list])
    df = runs.merge(fwd, left_on="run_id", right_index=True)
    n = column(df, "flows[1].count")
    stop = column(df, "flows[1].stop") if any(col.startswith("flows[1].stop") for col in df.columns) else None
    df["reverse"] = [
        0 if stop is not None and float(s) < 1.0 else int(k)
        for k, s in zip(df[n], df[stop] if stop is not None else df[n], strict=True)
    ]
    df["util_fwd"] = df["sum"] / df["bottleneck.rate_bps"]
    df["minmax"] = df["min"] / df["max"]
    df["jain_fwd"] = [jain(x) for x in df["list"]]
    return pd.DataFrame(df)


def d7_measure(c: Campaign) -> Values:
    """Per run: the number of reverse flows (0 for the reverse flow stopped at 1 ms), repeat, and
    over the second half the forward flows' utilisation of the bottleneck (their rates' sum over
    its rate), min-max fairness (the smallest forward flow's mean rate over the largest's) and
    Jain's index of the forward flows."""
    df = _d7_table(c)
    return {
        "runs": records(
            df, {"reverse": "reverse", "repeat": "repeat", "util": "util_fwd", "minmax": "minmax", "jain": "jain_fwd"}
        )
    }


def d7_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 14: reverse flows lower HighSpeed TCP's min-max fairness, by a factor of 2, and its
    utilisation.

    Compared: the most reverse flows run (10, as many as forward) against none, each value the mean
    over the repeats. Fairness: the factor (min-max without / with) within a factor √2 of the
    reported 2, i.e. in [1.41, 2.83]: the lower end is the geometric middle between no change (1)
    and 2, so a factor nearer 2 than 1 counts, and the upper end is symmetric to it. Utilisation:
    lower with reverse flows by at least :data:`D7_UTIL_DROP` (0.01 of the link; the talk gives no
    size). Without reverse flows a 1-BDP DropTail buffer keeps the link full (a window halving from
    2 BDP stays at 1 BDP, see :data:`GOOD`), and the repeats without reverse flows agree to within
    0.001, so a drop of 0.01 is beyond the spread between repeats. ACK compression and out-of-phase
    queue synchronisation, which the slide notes as present, are not judged: the values measure
    neither."""
    rows = values["D7"]["runs"]
    mm = _means(rows, ("reverse",), "minmax")
    ut = _means(rows, ("reverse",), "util")
    top = max((k for (k,) in mm), default=0)
    m0, m1 = mm.get((0,), math.nan), mm.get((top,), math.nan)
    u0, u1 = ut.get((0,), math.nan), ut.get((top,), math.nan)
    factor = m0 / m1 if m1 > 0 else math.inf
    lo, hi = D7_FACTOR / math.sqrt(2), D7_FACTOR * math.sqrt(2)
    return [
        Part(
            f"reverse flows degrade min-max fairness by a factor of about 2 ({lo:.2f}-{hi:.2f})",
            top > 0 and lo <= factor <= hi,
            f"min-max without reverse flows {_fmt(m0, 3)}, with {top} {_fmt(m1, 3)}: factor {_fmt(factor, 2)}",
        ),
        Part(
            f"reverse flows degrade utilisation (by >= {D7_UTIL_DROP})",
            top > 0 and u0 - u1 >= D7_UTIL_DROP,
            f"forward utilisation without reverse flows {_fmt(u0, 3)}, with {top} {_fmt(u1, 3)}",
        ),
    ]


def d7_figure(c: Campaign) -> Any:
    df = _d7_table(c)
    df["algorithm"] = "HighSpeed TCP"
    fig, axes = new_figure(2, width=5, sharey=False)
    for ax, col, label in (
        (axes[0], "util_fwd", "forward utilisation"),
        (axes[1], "minmax", "min-max fairness (smallest / largest)"),
    ):
        _lines(ax, df, "reverse", col, "algorithm")
        ax.set_xlabel("reverse flows (10 forward flows), second half")
        ax.set_ylabel(label)
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# The presets ------------------------------------------------------------------------------------

_ONE = {"sweep.repeat": 1}

D_SERIES = [
    Preset(
        "D1",
        "Utilisation against bandwidth and RTT",
        LEE,
        "lee-chuvpilo-2002/d1-utilisation.toml",
        claim="where the bandwidth-delay product is large, HighSpeed TCP and XCP each keep the bottleneck well used, "
        "both as the bandwidth grows (at 100 ms) and as the RTT grows (at 200 Mbit/s)",
        where="slide 7 (Utilization) and slide 16 (Conclusion, first point)",
        figure=d1_figure,
        measure=d1_measure,
        judge=d1_judge,
        needs=("xcp",),
        quick={
            **_ONE,
            "duration": "60s",
            "sweep.topology.bottleneck.rate": ["100Mbps", "200Mbps"],
            "sweep.topology.rtt": ["100ms", "50ms"],
        },
    ),
    Preset(
        "D2",
        "Jain's index against the number of flows",
        LEE,
        "lee-chuvpilo-2002/d2-fairness-vs-flows.toml",
        claim="by Jain's index XCP is fairer than HighSpeed TCP, which is fairer than TCP, and all three are close "
        "to 1 (200 Mbit/s, 100 ms, over the numbers of flows tested)",
        where="slide 8 (Fairness (Jain's Index)) and slide 16 (Conclusion, second point)",
        figure=d2_figure,
        measure=d2_measure,
        judge=d2_judge,
        needs=("xcp",),
        quick={**_ONE, "duration": "100s", "sweep.flows[0].count": [2, 8]},
    ),
    Preset(
        "D3",
        "TCP-friendliness of HighSpeed TCP",
        LEE,
        "lee-chuvpilo-2002/d3-friendliness.toml",
        claim="even at a moderate bandwidth (50 Mbit/s) one HighSpeed TCP flow starves a competing TCP flow, while "
        "two TCP flows share the link fairly",
        where="slide 9 (TCP-friendliness) and slide 16 (Conclusion, third point)",
        figure=d3_figure,
        measure=d3_measure,
        judge=d3_judge,
        quick={"duration": "120s", "sweep.repeat": 2},
    ),
    Preset(
        "D4",
        "Convergence to fairness after a flow joins at 40 s",
        LEE,
        "lee-chuvpilo-2002/d4-convergence.toml",
        claim="after a second flow joins, XCP converges to fairness in a very short time while TCP and HighSpeed "
        "TCP take long, thousands of RTTs; HighSpeed TCP converges more slowly than XCP and may do so more "
        "slowly than TCP as well",
        where="slide 10 (Dynamics (Convergence to Fairness))",
        reported="XCP: very short; TCP and HighSpeed TCP: 4000 RTTs and 1700 RTTs (the captions in the order of "
        "the labels XCP, TCP, HighSpeed TCP as the text lists them; the bullet that HighSpeed TCP may be slower "
        "than TCP fits the reverse assignment, so the text leaves it ambiguous)",
        figure=d4_figure,
        measure=d4_measure,
        judge=d4_judge,
        needs=("xcp",),
        quick=_ONE,
    ),
    Preset(
        "D5",
        "Taking suddenly freed bandwidth",
        LEE,
        "lee-chuvpilo-2002/d5-freed-bandwidth.toml",
        claim="XCP takes suddenly freed bandwidth immediately, whereas HighSpeed TCP or TCP (the text does not "
        "say which) needs 2550 RTTs for it; HighSpeed TCP may, like TCP, depend on additive increase to take it",
        where="slide 11 (Dynamics (Fetching BW))",
        reported="XCP: immediately; 2550 RTTs (the slide's text gives the labels XCP, HighSpeed TCP, TCP and then "
        "two captions, 2550 RTTs first and 'immediately' second, and ties neither caption to an algorithm. "
        "'Immediately' is read as XCP's, since its routers' feedback grows with the spare bandwidth (slide 5) and "
        "the bullet puts HighSpeed TCP with TCP's additive increase; 2550 RTTs is then HighSpeed TCP's or TCP's, "
        "the text does not say which. The text mangles symbols elsewhere, e.g. the '=' of the setup lines is lost "
        "and the '>' of the conclusion reads 'gt', so a range such as 25-50 RTTs cannot be ruled out; judged as "
        "2550)",
        figure=d5_figure,
        measure=d5_measure,
        judge=d5_judge,
        cause="2550 RTTs cannot arise on the link the slide states as ccarena models it: at 50 Mbit/s and 100 ms a "
        "window of 601 packets (1000 B) fills the link, and additive increase of one packet per RTT gets there "
        "from any window in at most about 600 RTTs (HighSpeed TCP faster); 2550 RTTs at one packet per RTT would "
        "need a window deficit of 2550 packets, i.e. packets under 250 B. Measured medians to 90 % of the link: "
        "HighSpeed TCP 40 RTTs, TCP 128 RTTs, the remaining flow's window being near the pipe already when the "
        "other stops (1-BDP queue). Were the caption a range garbled by the transcript (25-50 RTTs), HighSpeed "
        "TCP's 40 RTTs would lie in it; that reading is not judged",
        needs=("xcp",),
        quick=_ONE,
    ),
    Preset(
        "D6",
        "Buffer size against utilisation and fairness, DropTail and RED",
        LEE,
        "lee-chuvpilo-2002/d6-buffer-size.toml",
        claim="a buffer as small as 0.1 BDP is enough for HighSpeed TCP and for XCP to reach good utilisation and "
        "good fairness, and XCP beats HighSpeed TCP on each of the two",
        where="slides 12-13 (Buffering (Utilization), Buffering (Fairness)) and slide 16 (Conclusion, fifth point)",
        figure=d6_figure,
        measure=d6_measure,
        judge=d6_judge,
        cause="HighSpeed TCP's utilisation at 0.1 BDP is 0.87 under DropTail and 0.75 under RED, below the 0.9 fixed "
        "in advance (the talk gives no number). Under DropTail ten flows of about 264 packets at overflow each cut "
        "by b(w) = 0.40 (about 105 packets); the 240-packet buffer absorbs two such cuts, so an overflow that makes "
        "three or more flows cut idles the link (0.92 at 0.2 BDP). RED with ns-2's default thresholds (5 and 15 "
        "packets, under 1 % of the 2404-packet BDP) holds the queue at about 2 packets (mean delay 0.09 ms), so its "
        "result is the same at every buffer size",
        needs=("red", "xcp"),
        quick={**_ONE, "duration": "100s", "sweep.topology.bottleneck.buffer": ["0.1bdp", "1bdp"]},
    ),
    Preset(
        "D7",
        "Reverse-direction flows",
        LEE,
        "lee-chuvpilo-2002/d7-reverse-traffic.toml",
        claim="traffic in the reverse direction halves the min-max fairness of HighSpeed TCP flows and also lowers "
        "their utilisation; in a separate point the slide notes that two phenomena described by Zhang et al., ACK "
        "compression and out-of-phase queue synchronisation, are present with reverse flows, without naming them "
        "as the cause of the drop",
        where="slide 14 (Effects of Reverse Flows)",
        reported="min-max fairness of HighSpeed TCP lowered by a factor of 2",
        figure=d7_figure,
        measure=d7_measure,
        judge=d7_judge,
        quick={
            **_ONE,
            "duration": "100s",
            "sweep.flows[1].count": [1, 10],
            "sweep.flows[1].start": ["0s", {"dist": "uniform", "lo": "0s", "hi": "5s"}],
            "sweep.flows[1].stop": ["1ms", "100s"],
        },
    ),
]
