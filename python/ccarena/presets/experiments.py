"""The published experiments: one :class:`Preset` per experiment ID, with its figure and its claim check.

Papers:

* A — Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk);
* B — Leith, Shorten and McCullagh, "Experimental evaluation of Cubic-TCP", PFLDnet 2007;
* C — Rhee, response to Leith et al.'s evaluation of CUBIC, 2007;
* D — Lee and Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", 2002;
* E — Lin, "Cubic vs BBR in the cloud", 2024.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

from .figures import curves, new_figure, traces
from .measures import column, jain, per_run, ratio, share, window_cov
from .registry import Check, Preset

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["PRESETS"]

RHEE_XU = 'I. Rhee and L. Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk)'
LEITH = 'D. J. Leith, R. N. Shorten and G. McCullagh, "Experimental evaluation of Cubic-TCP", PFLDnet 2007'
RHEE = "I. Rhee, response to Leith, Shorten and McCullagh's evaluation of CUBIC, 2007"
LEE = 'S. Lee and M. Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", 2002'
LIN = 'Lin, "Cubic vs BBR in the cloud", 2024'

MBPS = 1e-6


def _mean(df: pd.DataFrame, col: str, **where: Any) -> float:
    sel = df
    for k, v in where.items():
        c = column(df, k)
        sel = sel[sel[c] == v]
    if sel.empty:
        raise KeyError(f"no runs with {where}")
    return float(sel[col].mean())


def _cc(df: pd.DataFrame, i: int = 0) -> str:
    return column(df, f"flows[{i}].cc")


# ---------------------------------------------------------------- E: Lin 2024


def e1_figure(c: Campaign) -> Any:
    df = per_run(c)
    return curves(
        df,
        column(df, "topology.bottleneck.loss"),
        "rate_0",
        _cc(df),
        xlabel="random loss rate",
        ylabel="throughput (Mbit/s)",
        scale_y=MBPS,
        logx=True,
    )


def e1_check(c: Campaign) -> Check:
    df = per_run(c)
    loss = column(df, "topology.bottleneck.loss")
    hi, lo = df[loss].max(), df[loss].min()
    cubic, bbr = (
        _mean(df, "rate_0", **{"flows[0].cc": "cubic", loss: hi}),
        _mean(df, "rate_0", **{"flows[0].cc": "bbr", loss: hi}),
    )
    bbr_lo = _mean(df, "rate_0", **{"flows[0].cc": "bbr", loss: lo})
    r = cubic / bbr
    return Check(
        r < 0.30 and bbr >= 0.8 * bbr_lo,
        f"at {hi:g} loss CUBIC {cubic * MBPS:.1f} Mbit/s = {100 * r:.0f} % of BBR's {bbr * MBPS:.1f} Mbit/s "
        f"(paper: 20.5 / 540 = 4 %); BBR at {lo:g} loss {bbr_lo * MBPS:.1f} Mbit/s",
    )


def e2_figure(c: Campaign) -> Any:
    df = per_run(c)
    loss, cc = column(df, "topology.bottleneck.loss"), _cc(df)
    fig, axes = new_figure(1, width=6)
    ax = axes[0]
    labels, width = [], 0.38
    for i, ((lv, ccv), sub) in enumerate(df.groupby([loss, cc], sort=True)):
        for f in (0, 1):
            ax.bar(
                i + (f - 0.5) * width,
                sub[f"rate_{f}"].mean() * MBPS,
                width,
                color=f"C{f}",
                label=f"flow {f}" if i == 0 else None,
            )
        ax.text(
            i,
            max(sub["rate_0"].mean(), sub["rate_1"].mean()) * MBPS * 1.02,
            f"J={sub['jain_index'].mean():.3f}",
            ha="center",
            fontsize=8,
        )
        labels.append(f"{ccv}\nloss {lv:g}")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("throughput (Mbit/s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def e2_check(c: Campaign) -> Check:
    df = per_run(c)
    js = {cc: float(sub["jain_index"].mean()) for cc, sub in df.groupby(_cc(df))}
    return Check(
        all(j >= 0.9 for j in js.values()), "mean Jain's index " + ", ".join(f"{k} {v:.3f}" for k, v in js.items())
    )


def e3_figure(c: Campaign) -> Any:
    df = per_run(c)
    loss, cc = column(df, "topology.bottleneck.loss"), _cc(df)
    fig, axes = new_figure(2, width=4.5, sharey=False)
    for ax, col, label, scale in (
        (axes[0], "rate_0", "throughput (kbit/s)", 1e-3),
        (axes[1], "cwnd_0", "mean cwnd (packets)", 1.0),
    ):
        groups = list(df.groupby([cc, loss], sort=True))
        ax.bar(
            range(len(groups)),
            [sub[col].mean() * scale for _, sub in groups],
            color=[f"C{i // 2}" for i in range(len(groups))],
        )
        ax.set_xticks(range(len(groups)), [f"{k[0]}\nloss {k[1]:g}" for k, _ in groups])
        ax.set_ylabel(label)
    axes[0].axhline(735, color="k", lw=0.8, ls="--")
    fig.tight_layout()
    return fig


def e3_check(c: Campaign) -> Check:
    """Goodput within 5 % of 735 kbit/s; mean cwnd at most twice the initial window (20 packets,
    against a BDP of 417 packets at 250 Mbit/s and 20 ms)."""
    df = per_run(c, t_from=1.0)
    good = c.run_flows.set_index("run_id")["goodput_bps"]
    err = float(((good.loc[df["run_id"]] - 735e3).abs() / 735e3).max())
    cwnd = {cc: float(sub["cwnd_0"].max()) for cc, sub in df.groupby(_cc(df))}
    return Check(
        err < 0.05 and max(cwnd.values()) <= 20,
        f"goodput within {100 * err:.1f} % of 735 kbit/s; largest mean cwnd "
        + ", ".join(f"{k} {v:.0f}" for k, v in cwnd.items())
        + " packets",
    )


E_SERIES = [
    Preset(
        "E1",
        "CUBIC and BBR under random loss",
        LIN,
        "lin-2024/e1-random-loss.toml",
        "CUBIC collapses at 0.1 % random loss (20.5 Mbit/s, 4 % of BBR's 540), BBR barely moves",
        e1_figure,
        e1_check,
        quick={"duration": "15s", "sweep.repeat": 1, "sweep.topology.bottleneck.loss": [0.0001, 0.001]},
    ),
    Preset(
        "E2",
        "Two flows of the same algorithm",
        LIN,
        "lin-2024/e2-two-flows.toml",
        "two flows of the same algorithm share the link fairly (CUBIC with CUBIC, BBR with BBR)",
        e2_figure,
        e2_check,
        quick={"duration": "15s", "sweep.repeat": 1},
    ),
    Preset(
        "E3",
        "An application-limited 735 kbit/s stream",
        LIN,
        "lin-2024/e3-video-stream.toml",
        "neither algorithm changes the stream's throughput; cwnd stays small",
        e3_figure,
        e3_check,
        quick={"duration": "10s", "sweep.repeat": 1},
    ),
]


# ---------------------------------------------------------------- B: Leith, Shorten and McCullagh 2007


def _percent_bdp(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["buffer_pct"] = df[column(df, "topology.bottleneck.buffer")] * 100
    return df


def b1_figure(c: Campaign) -> Any:
    df = _percent_bdp(c.runs[c.runs["status"] == "ok"])
    rate = column(df, "topology.bottleneck.rate")
    return curves(
        df,
        "buffer_pct",
        "utilization",
        _cc(df),
        panels=rate,
        xlabel="buffer (% of BDP)",
        ylabel="utilisation (mean over RTTs and loads)",
        logx=True,
        panel_title=lambda v: f"{v / 1e6:g} Mbit/s",
    )


def _fc_label(v: Any) -> str:
    return "fast convergence on" if bool(v) else "fast convergence off"


def _late_over_early(c: Campaign, t_from: float) -> dict[Any, tuple[float, int]]:
    """Per fast-convergence setting: mean over repeats of the late flow's rate over the early
    flow's in (t_from, end], and the number of runs."""
    df = per_run(c, t_from=t_from)
    fc = column(df, "flows[0].params.fast_convergence")
    return {v: (float((sub["rate_1"] / sub["rate_0"]).mean()), len(sub)) for v, sub in df.groupby(fc)}


def _ensemble_panels(c: Campaign, key: str, label: Any) -> list[tuple[str, pd.DataFrame]]:
    runs = c.runs
    col = column(runs, key)
    points = runs.drop_duplicates("point").set_index("point")[col]
    ts = c.timeseries("rate_bps")
    return [(label(points[pt]), sub) for pt, sub in ts.groupby("point", sort=True)]


def b2_figure(c: Campaign) -> Any:
    return traces(
        _ensemble_panels(c, "flows[0].params.fast_convergence", _fc_label),
        ylabel="throughput (Mbit/s), mean of runs, 95 % band",
        band=True,
    )


def b2_check(c: Campaign) -> Check:
    dur = float(c.runs["duration_s"].iloc[0])
    r = _late_over_early(c, t_from=dur * 0.75)
    on, off = r[True], r[False]
    return Check(
        on[0] > off[0],
        f"late/early flow throughput over the last quarter: {on[0]:.2f} with fast convergence, "
        f"{off[0]:.2f} without ({on[1]} runs each)",
    )


def _first_repeat_traces(c: Campaign, label: Any, key: str | None = None) -> list[tuple[str, pd.DataFrame]]:
    runs = c.runs[(c.runs["status"] == "ok") & (c.runs["repeat"] == 0)]
    out = []
    for _, row in runs.iterrows():
        fl = c.query(f"SELECT flow, time_s, rate_bps AS mean FROM flows WHERE run_id = '{row['run_id']}'")
        out.append((label(row[column(runs, key)]) if key else label(row), fl))
    return out


def _window_spread(c: Campaign, t_from: float, window_s: float) -> pd.DataFrame:
    """Per run and window of ``window_s`` seconds after ``t_from``: Jain's index of the flows' mean rates."""
    import pandas as pd

    df = c.query(
        f"SELECT run_id, flow, floor((time_s - 1e-9) / {window_s}) AS w, avg(rate_bps) AS r FROM flows "
        f"WHERE time_s > {t_from} GROUP BY run_id, flow, w"
    )
    rows = [{"run_id": k[0], "w": k[1], "jain": jain(sub["r"].tolist())} for k, sub in df.groupby(["run_id", "w"])]
    return pd.DataFrame(rows)


def b3_figure(c: Campaign) -> Any:
    return traces(
        _first_repeat_traces(c, lambda row: f"3 CUBIC flows, repeat 0 (seed {row['seed']})"),
        ylabel="throughput (Mbit/s), 1 s intervals",
    )


def b3_check(c: Campaign) -> Check:
    """Prolonged unfairness: some 50 s window after the first 50 s where Jain's index of the three
    flows is below 0.9 (one flow with about twice another's rate), in most runs."""
    w = _window_spread(c, 50.0, 50.0)
    per_run_min = w.groupby("run_id")["jain"].min()
    frac = float((per_run_min < 0.9).mean())
    return Check(
        frac >= 0.5,
        f"lowest Jain's index over 50 s windows per run: {', '.join(f'{v:.2f}' for v in per_run_min)}; "
        f"{100 * frac:.0f} % of runs below 0.9",
    )


def b4_values(c: Campaign) -> pd.DataFrame:
    runs = c.runs[c.runs["status"] == "ok"]
    return runs.merge(window_cov(c, t_from=50.0, window_s=10.0), on="run_id")


def b4_figure(c: Campaign) -> Any:
    df = b4_values(c)
    return _bars(df, _cc(df), "cov", "coefficient of variation of throughput (10 s windows)")


def _bars(df: pd.DataFrame, key: str, col: str, ylabel: str, scale: float = 1.0) -> Any:
    from ..analysis.stats import mean_ci

    fig, axes = new_figure(1, width=4.5)
    ax = axes[0]
    groups = list(df.groupby(key, sort=False))
    stats = [mean_ci([v * scale for v in sub[col].tolist()]) for _, sub in groups]
    ax.bar(
        range(len(groups)),
        [m for m, _, _ in stats],
        yerr=[0 if math.isnan(ci) else ci for _, ci, _ in stats],
        capsize=4,
        color=[f"C{i}" for i in range(len(groups))],
    )
    ax.set_xticks(range(len(groups)), [str(k) for k, _ in groups])
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def b4_check(c: Campaign) -> Check:
    df = b4_values(c)
    cv = {k: float(sub["cov"].mean()) for k, sub in df.groupby(_cc(df))}
    return Check(
        cv["cubic"] > cv["htcp"], f"mean CoV over 10 s windows: CUBIC {cv['cubic']:.3f}, H-TCP {cv['htcp']:.3f}"
    )


def b5_figure(c: Campaign) -> Any:
    df = _percent_bdp(c.runs[c.runs["status"] == "ok"])
    return curves(
        df,
        "buffer_pct",
        "utilization_second_half",
        _cc(df),
        panels=column(df, "topology.bottleneck.rate"),
        xlabel="buffer (% of BDP)",
        ylabel="link utilisation",
        logx=True,
        ylim=(0, 1.05),
        panel_title=lambda v: f"{v / 1e6:g} Mbit/s, RTT 100 ms",
    )


def _util_by_buffer(c: Campaign, cc: str, rate_bps: float) -> dict[float, float]:
    df = c.runs[c.runs["status"] == "ok"]
    sel = df[(df[column(df, "flows[0].cc")] == cc) & (df[column(df, "topology.bottleneck.rate")] == rate_bps)]
    return {
        float(b): float(sub["utilization_second_half"].mean())
        for b, sub in sel.groupby(column(df, "topology.bottleneck.buffer"))
    }


def b5_check(c: Campaign) -> Check:
    """At 250 Mbit/s CUBIC's utilisation rises with the buffer: the largest buffer's exceeds the
    smallest's by at least 5 points, and never falls by more than 2 points from one buffer to the next."""
    u = _util_by_buffer(c, "cubic", 250e6)
    vals = [u[b] for b in sorted(u)]
    rises = vals[-1] - vals[0] >= 0.05 and all(b >= a - 0.02 for a, b in itertools.pairwise(vals))
    small = [v for b, v in u.items() if b < 0.3]
    caveat = (
        f"no fall to about 50 %: at most {1 - min(small):.0%} below full utilisation under 30 % of the BDP"
        if small and min(small) > 0.6
        else ""
    )
    return Check(
        rises,
        "CUBIC at 250 Mbit/s: "
        + ", ".join(f"{100 * b:g} % BDP → {v:.2f}" for b, v in sorted(u.items()))
        + " (paper: about 0.5 below 30 % BDP)",
        caveat,
    )


def _buffer(col: str, v: float) -> str:
    """A buffer value for a label: KB for a byte column, the fraction of the BDP otherwise."""
    return f"{v / 1000:g} KB" if col.endswith("_bytes") else f"{v:g} BDP"


def _rtt_ratio_table(c: Campaign, t_from: float) -> pd.DataFrame:
    df = per_run(c, t_from=t_from)
    df["ratio"] = [ratio(a, b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    df["order"] = ["short RTT first" if s == 0 else "long RTT first" for s in df[column(df, "flows[0].start")]]
    df["buffer_kb"] = df[column(df, "topology.bottleneck.buffer")]
    return df


def _rtt_ratio_figure(df: pd.DataFrame, buffer_col: str, cc_col: str, ylabel: str) -> Any:
    fig, axes = new_figure(df[buffer_col].nunique(), width=5)
    for ax, (bv, sub) in zip(axes, df.groupby(buffer_col, sort=True), strict=True):
        ccs = list(dict.fromkeys(sub[cc_col]))
        orders = ["short RTT first", "long RTT first"]
        w = 0.8 / len(ccs)
        for i, cc in enumerate(ccs):
            vals = [sub[(sub[cc_col] == cc) & (sub["order"] == o)]["ratio"].mean() for o in orders]
            ax.bar([j + (i - (len(ccs) - 1) / 2) * w for j in range(len(orders))], vals, w, label=cc, color=f"C{i}")
        ax.set_xticks(range(len(orders)), orders)
        ax.set_yscale("log")
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_title(f"buffer {_buffer(buffer_col, bv)}")
        ax.legend(fontsize=8)
    axes[0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def b6_table(c: Campaign) -> pd.DataFrame:
    dur = float(c.runs["duration_s"].iloc[0])
    df = _rtt_ratio_table(c, dur / 2)
    buf = column(df, "topology.bottleneck.buffer")
    df["buffer"] = [f"{v:g} B" if "bytes" in buf else f"{v:g}" for v in df[buf]]
    return df


def b6_figure(c: Campaign) -> Any:
    df = b6_table(c)
    return _rtt_ratio_figure(
        df, column(df, "topology.bottleneck.buffer"), _cc(df), "throughput 16 ms flow / 160 ms flow (second half)"
    )


def b6_check(c: Campaign) -> Check:
    """The outcome depends on the start order: for CUBIC, at some buffer the two orders' ratios
    differ by a factor of at least 1.5."""
    df = b6_table(c)
    cc, buf = _cc(df), column(df, "topology.bottleneck.buffer")
    factors = {}
    for b, sub in df[df[cc] == "cubic"].groupby(buf):
        a = float(sub[sub["order"] == "short RTT first"]["ratio"].mean())
        z = float(sub[sub["order"] == "long RTT first"]["ratio"].mean())
        factors[b] = (a, z, max(a, z) / min(a, z))
    return Check(
        max(f for _, _, f in factors.values()) >= 1.5,
        "CUBIC, ratio 16 ms / 160 ms flow with 16 ms first vs 160 ms first: "
        + "; ".join(f"buffer {_buffer(buf, b)}: {a:.2f} vs {z:.2f}" for b, (a, z, _) in factors.items()),
    )


def b7_figure(c: Campaign) -> Any:
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    return curves(
        df,
        column(df, "topology.bottleneck.rate"),
        "tcp_share",
        _cc(df),
        panels=column(df, "topology.rtt"),
        xlabel="bottleneck (Mbit/s)",
        ylabel="standard TCP's share (0.5 = fair)",
        scale_x=MBPS,
        logx=True,
        ylim=(0, 1.0),
        panel_title=lambda v: f"RTT {v * 1e3:g} ms",
    )


def b7_check(c: Campaign) -> Check:
    """CUBIC is TCP-friendly at low BDP (standard TCP's share ≥ 0.35 at 10 Mbit/s and 16 ms) and
    leaves standard TCP more than Scalable TCP does at the largest BDP."""
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    rate, rtt, cc = column(df, "topology.bottleneck.rate"), column(df, "topology.rtt"), _cc(df)
    low = df[(df[rate] == df[rate].min()) & (df[rtt] == df[rtt].min())]
    high = df[(df[rate] == df[rate].max()) & (df[rtt] == df[rtt].max())]
    s_low = float(low[low[cc] == "cubic"]["tcp_share"].mean())
    s_cubic = float(high[high[cc] == "cubic"]["tcp_share"].mean())
    s_stcp = float(high[high[cc] == "scalable"]["tcp_share"].mean())
    return Check(
        s_low >= 0.35 and s_cubic > s_stcp,
        f"standard TCP's share against CUBIC {s_low:.2f} at the smallest BDP, {s_cubic:.2f} at the largest "
        f"(against Scalable TCP there: {s_stcp:.2f})",
    )


B_SERIES = [
    Preset(
        "B1",
        "The test grid (standard TCP measured at every point)",
        LEITH,
        "leith-2007/b1-grid.toml",
        "the grid itself: every algorithm's utilisation and fairness across bandwidth, RTT, buffer and load, "
        "with standard TCP as the reference",
        b1_figure,
        None,
        quick={
            "duration": "30s",
            "sweep.topology.bottleneck.rate": ["10Mbps", "250Mbps"],
            "sweep.topology.rtt": ["100ms"],
            "sweep.topology.bottleneck.buffer": ["0.02bdp", "0.2bdp", "1bdp"],
            "sweep.background.web[0].sessions": [50],
            "sweep.background.web[0].sizes.mean": ["10pkts"],
        },
    ),
    Preset(
        "B2",
        "Convergence of two CUBIC flows, with and without fast convergence",
        LEITH,
        "leith-2007/b2-convergence.toml",
        "the second CUBIC flow takes a long time to reach the first's rate; fast convergence speeds this up",
        b2_figure,
        b2_check,
        quick={"duration": "120s", "flows[1].start": "30s", "sweep.repeat": 3},
    ),
    Preset(
        "B3",
        "Prolonged unfairness between three CUBIC flows",
        LEITH,
        "leith-2007/b3-prolonged-unfairness.toml",
        "with on-off background traffic, CUBIC flows hold unequal shares for hundreds of seconds",
        b3_figure,
        b3_check,
        quick={"duration": "150s", "sweep.repeat": 2},
        expected=False,
    ),
    Preset(
        "B4",
        "The cost of missing a drop: CUBIC and H-TCP",
        LEITH,
        "leith-2007/b4-missed-drop.toml",
        "CUBIC's throughput varies more than H-TCP's (a flow that misses a drop stays ahead for long)",
        b4_figure,
        b4_check,
        quick={"duration": "300s", "sweep.repeat": 2},
    ),
    Preset(
        "B5",
        "Link utilisation against buffer size",
        LEITH,
        "leith-2007/b5-utilisation-vs-buffer.toml",
        "at 250 Mbit/s CUBIC's utilisation falls to about 50 % below 30 % of the BDP, and rises with the buffer",
        b5_figure,
        b5_check,
        quick={
            "duration": "60s",
            "sweep.repeat": 1,
            "sweep.flows[0].cc": ["cubic"],
            "sweep.topology.bottleneck.buffer": ["0.02bdp", "0.1bdp", "0.3bdp", "1bdp"],
        },
    ),
    Preset(
        "B6",
        "RTT unfairness depends on the start order",
        LEITH,
        "leith-2007/b6-rtt-unfairness.toml",
        "the throughput split between a 16 ms and a 160 ms flow depends on which started first",
        b6_figure,
        b6_check,
        quick={"duration": "120s"},
        expected=False,
    ),
    Preset(
        "B7",
        "Friendliness to one standard TCP flow",
        LEITH,
        "leith-2007/b7-friendliness.toml",
        "one new-protocol flow against one standard TCP flow: how much standard TCP keeps",
        b7_figure,
        b7_check,
        quick={"duration": "60s", "sweep.repeat": 1, "sweep.flows[0].cc": ["cubic", "scalable"]},
    ),
]


# ---------------------------------------------------------------- A: Rhee and Xu 2005


def _tcp_share(c: Campaign) -> pd.DataFrame:
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    return df


def a1_figure(c: Campaign) -> Any:
    df = _tcp_share(c)
    return curves(
        df,
        column(df, "topology.bottleneck.rate"),
        "tcp_share",
        _cc(df),
        panels=column(df, "topology.rtt"),
        xlabel="bottleneck (Mbit/s)",
        ylabel="standard TCP's share of throughput",
        scale_x=MBPS,
        logx=True,
        ylim=(0, 1.0),
        panel_title=lambda v: f"RTT {v * 1e3:g} ms",
    )


def _friendlier(df: pd.DataFrame, keys: list[str], a: str, b: str) -> tuple[bool, list[str]]:
    """Whether standard TCP keeps more against ``a`` than against ``b`` at every point of ``keys``."""
    cc = _cc(df)
    ok, notes = True, []
    for k, sub in df.groupby(keys, sort=True):
        sa = float(sub[sub[cc] == a]["tcp_share"].mean())
        sb = float(sub[sub[cc] == b]["tcp_share"].mean())
        ok &= sa > sb
        kt = k if isinstance(k, tuple) else (k,)
        notes.append(f"{'/'.join(f'{v:g}' for v in kt)}: {sa:.2f} vs {sb:.2f}")
    return ok, notes


def _kinder_than_cubic(df: pd.DataFrame, rtt: str) -> str:
    """The algorithms that leave standard TCP more than CUBIC does at the largest RTT (mean over
    the other swept values), as a caveat; empty if none."""
    far = df[df[rtt] == df[rtt].max()].groupby(_cc(df))["tcp_share"].mean()
    kinder = {k: v for k, v in far.items() if k != "cubic" and v > far.get("cubic", 1.0)}
    if not kinder:
        return ""
    others = ", ".join(f"{k} ({v:.2f})" for k, v in sorted(kinder.items()))
    return f"at RTT {df[rtt].max() * 1e3:g} ms standard TCP keeps more against {others} than against CUBIC ({far['cubic']:.2f})"


def a1_check(c: Campaign) -> Check:
    """Standard TCP keeps more against CUBIC than against Scalable TCP at every bandwidth and RTT,
    and about a fair share (≥ 0.35) at the smallest BDP."""
    df = _tcp_share(c)
    rate, rtt = column(df, "topology.bottleneck.rate"), column(df, "topology.rtt")
    ok, notes = _friendlier(df, [rtt, rate], "cubic", "scalable")
    low = df[(df[rate] == df[rate].min()) & (df[rtt] == df[rtt].min()) & (df[_cc(df)] == "cubic")]["tcp_share"].mean()
    caveat = _kinder_than_cubic(df, rtt)
    return Check(
        ok and low >= 0.35,
        "standard TCP's share against CUBIC vs Scalable TCP (RTT s/rate bit/s): "
        + "; ".join(notes)
        + f"; against CUBIC at the smallest BDP {low:.2f}",
        caveat,
    )


def a2_figure(c: Campaign) -> Any:
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    rate = df["bottleneck.rate_bps"] if "bottleneck.rate_bps" in df.columns else 800e6
    df["hs_util"], df["tcp_util"] = df["rate_0"] / rate, df["rate_1"] / rate
    rtt, load, cc = column(df, "topology.rtt"), column(df, "background.web[0].load"), _cc(df)
    fig, axes = new_figure(df[cc].nunique(), width=3.6)
    for ax, (ccv, sub) in zip(axes, df.groupby(cc, sort=False), strict=True):
        for lv, ls in zip(sorted(sub[load].unique()), ("-", "--", ":"), strict=False):
            g = sub[sub[load] == lv].groupby(rtt, sort=True)[["hs_util", "tcp_util"]].mean()
            ax.plot(g.index * 1e3, g["hs_util"], ls, color="C0", marker="o", label=f"{ccv}, load {lv:g}")
            ax.plot(g.index * 1e3, g["tcp_util"], ls, color="C1", marker="s", label=f"standard TCP, load {lv:g}")
        ax.set_xscale("log")
        ax.set_xlabel("RTT (ms)")
        ax.set_title(str(ccv))
        ax.set_ylim(0, 1)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("utilisation of the link")
    fig.tight_layout()
    return fig


def a2_check(c: Campaign) -> Check:
    """Standard TCP keeps more against CUBIC than against Scalable TCP at every RTT and load."""
    df = _tcp_share(c)
    ok, notes = _friendlier(df, [column(df, "topology.rtt"), column(df, "background.web[0].load")], "cubic", "scalable")
    caveat = _kinder_than_cubic(df, column(df, "topology.rtt"))
    return Check(ok, "standard TCP's share against CUBIC vs Scalable TCP (RTT s/load): " + "; ".join(notes), caveat)


def _a3_table(c: Campaign) -> pd.DataFrame:
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    df["ratio"] = [ratio(a, b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    df["rtt_ratio"] = df[column(df, "flows[1].rtt")] / 0.040
    return df


def a3_figure(c: Campaign) -> Any:
    df = _a3_table(c)
    fig = curves(
        df,
        "rtt_ratio",
        "ratio",
        _cc(df),
        xlabel="RTT ratio (long / 40 ms)",
        ylabel="throughput ratio (40 ms flow / long-RTT flow)",
    )
    fig.axes[0].set_yscale("log")
    return fig


def a3_check(c: Campaign) -> Check:
    """At the largest RTT ratio CUBIC's throughput ratio is smaller (fairer) than HSTCP's and STCP's."""
    df = _a3_table(c)
    top = df[df["rtt_ratio"] == df["rtt_ratio"].max()]
    r = {k: float(sub["ratio"].mean()) for k, sub in top.groupby(_cc(df))}
    ok = all(r["cubic"] < r[o] for o in ("highspeed", "scalable") if o in r)
    return Check(
        ok,
        f"throughput ratio at RTT ratio {top['rtt_ratio'].max():g}: "
        + ", ".join(f"{k} {v:.2f}" for k, v in sorted(r.items())),
    )


def a4_values(c: Campaign) -> pd.DataFrame:
    runs = c.runs[c.runs["status"] == "ok"]
    return runs.merge(window_cov(c, flows=[0, 1], t_from=50.0, window_s=1.0), on="run_id")


def a4_figure(c: Campaign) -> Any:
    df = a4_values(c)
    return _bars(df, _cc(df), "cov", "CoV of the high-speed flows' throughput (1 s)")


def a4_check(c: Campaign) -> Check:
    """CUBIC's throughput varies less than BIC's and Scalable TCP's."""
    df = a4_values(c)
    cv = {k: float(sub["cov"].mean()) for k, sub in df.groupby(_cc(df))}
    ok = all(cv["cubic"] < cv[o] for o in ("bic", "scalable") if o in cv)
    return Check(ok, "mean CoV (1 s): " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(cv.items())))


A_SERIES = [
    Preset(
        "A1",
        "TCP-friendliness against bandwidth (simulation)",
        RHEE_XU,
        "rhee-xu-2005/a1-friendliness-sim.toml",
        "CUBIC leaves standard TCP a larger share than the other high-speed protocols, close to fair at small BDP",
        a1_figure,
        a1_check,
        quick={
            "duration": "60s",
            "sweep.repeat": 1,
            "sweep.topology.bottleneck.rate": ["20Mbps", "200Mbps"],
            "sweep.flows[0].cc": ["cubic", "scalable"],
        },
    ),
    Preset(
        "A2",
        "TCP-friendliness on the testbed: the utilisation split",
        RHEE_XU,
        "rhee-xu-2005/a2-friendliness-testbed.toml",
        "with CUBIC the standard TCP flow keeps a larger part of the link than with the other high-speed protocols",
        a2_figure,
        a2_check,
        quick={
            "duration": "60s",
            "topology.bottleneck.rate": "200Mbps",
            "sweep.repeat": 1,
            "sweep.topology.rtt": ["10ms", "100ms"],
            "sweep.background.web[0].load": [0.1],
            "sweep.flows[0].cc": ["cubic", "scalable"],
        },
    ),
    Preset(
        "A3",
        "RTT fairness: 40 ms against 40, 120 and 240 ms",
        RHEE_XU,
        "rhee-xu-2005/a3-rtt-fairness.toml",
        "CUBIC's throughput ratio grows roughly linearly with the RTT ratio, fairer than HSTCP and STCP",
        a3_figure,
        a3_check,
        quick={
            "duration": "90s",
            "topology.bottleneck.rate": "200Mbps",
            "sweep.repeat": 1,
            "sweep.flows[1].rtt": ["40ms", "240ms"],
            "sweep.flows[0].cc": ["cubic", "highspeed", "scalable"],
            "sweep.flows[1].cc": ["cubic", "highspeed", "scalable"],
        },
    ),
    Preset(
        "A4",
        "Stability: coefficient of variation of throughput",
        RHEE_XU,
        "rhee-xu-2005/a4-stability.toml",
        "CUBIC's throughput is more stable (lower coefficient of variation) than BIC's and STCP's",
        a4_figure,
        a4_check,
        quick={
            "duration": "80s",
            "topology.bottleneck.rate": "500Mbps",
            "sweep.repeat": 1,
            "sweep.flows[0].cc": ["cubic", "bic", "scalable"],
        },
        expected=False,
    ),
]


# ---------------------------------------------------------------- C: Rhee 2007


def c1_check(c: Campaign) -> Check:
    """The flows converge: with fast convergence the late flow's mean rate over the last quarter
    is at least 70 % of the first flow's."""
    dur = float(c.runs["duration_s"].iloc[0])
    r = _late_over_early(c, t_from=dur * 0.75)
    without = f", {r[False][0]:.2f} without" if False in r else ""
    return Check(
        r[True][0] >= 0.7,
        f"late/early flow throughput over the last quarter: {r[True][0]:.2f} with fast "
        f"convergence{without} ({r[True][1]} runs each)",
    )


def c2_figure(c: Campaign) -> Any:
    run = c.runs[(c.runs["status"] == "ok")].sort_values("repeat").iloc[0]["run_id"]
    fl = c.query(f"SELECT flow, time_s, cwnd_pkts, rate_bps FROM flows WHERE run_id = '{run}'")
    fig, axes = new_figure(2, width=5.5, sharey=False)
    for f, sub in fl.groupby("flow"):
        axes[0].plot(sub["time_s"], sub["cwnd_pkts"], lw=0.8, label=f"flow {f}")
        axes[1].plot(sub["time_s"], sub["rate_bps"] * MBPS, lw=0.8, label=f"flow {f}")
    axes[0].set_ylabel("cwnd (packets)")
    axes[1].set_ylabel("rate at the bottleneck (Mbit/s)")
    for ax, t in zip(axes, ("cwnd at the sender", "rate at the router"), strict=True):
        ax.set_xlabel("time (s)")
        ax.set_title(t, fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def c2_check(c: Campaign) -> Check:
    """Rhee's claim: the cwnds differ while the rates do not. Over the last 100 s, per run, the
    late/early ratio of mean cwnds against that of mean rates; agreement when the rates are
    within 10 % of each other while the cwnds differ by more than 10 %."""
    dur = float(c.runs["duration_s"].iloc[0])
    df = per_run(c, t_from=dur - 100)
    rc = (df["cwnd_1"] / df["cwnd_0"]).tolist()
    rr = (df["rate_1"] / df["rate_0"]).tolist()
    agree = sum(1 for a, b in zip(rc, rr, strict=True) if abs(1 - b) < 0.1 and abs(1 - a) > 0.1)
    return Check(
        agree * 2 > len(rc),
        "late/early ratio of mean cwnd vs of mean rate per run: "
        + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(rc, rr, strict=True)),
    )


def c3_figure(c: Campaign) -> Any:
    df = _percent_bdp(per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2))
    df["long_lived"] = (df["rate_0"] + df["rate_1"]) / df["bottleneck.rate_bps"]
    fig = curves(
        df,
        "buffer_pct",
        "utilization_second_half",
        _cc(df),
        xlabel="buffer (% of BDP)",
        ylabel="link utilisation (dashed: long-lived flows only)",
        ylim=(0, 1.05),
    )
    ax = fig.axes[0]
    for i, (_, sub) in enumerate(df.groupby(_cc(df), sort=False)):
        g = sub.groupby("buffer_pct")["long_lived"].mean()
        ax.plot(g.index, g.values, "--", color=f"C{i}")
    return fig


def c3_check(c: Campaign) -> Check:
    """CUBIC's utilisation stays at or above 80 % at every buffer up to 30 % of the BDP."""
    df = c.runs[c.runs["status"] == "ok"]
    buf = column(df, "topology.bottleneck.buffer")
    u = {float(b): float(sub["utilization_second_half"].mean()) for b, sub in df[df[_cc(df)] == "cubic"].groupby(buf)}
    return Check(
        min(u.values()) >= 0.8, "CUBIC: " + ", ".join(f"{100 * b:g} % BDP → {v:.2f}" for b, v in sorted(u.items()))
    )


def c4_figure(c: Campaign) -> Any:
    df = b6_table(c)
    return _rtt_ratio_figure(
        df, column(df, "topology.bottleneck.buffer"), _cc(df), "throughput 16 ms flow / 162 ms NewReno flow"
    )


def c4_check(c: Campaign) -> Check:
    """CUBIC at 16 ms takes no more from the 162 ms NewReno flow than NewReno would: its ratio is
    at most 1.5 times NewReno's in every start order and buffer."""
    df = b6_table(c)
    cc, buf = _cc(df), column(df, "topology.bottleneck.buffer")
    ok, notes = True, []
    for (b, o), sub in df.groupby([buf, "order"]):
        rc = float(sub[sub[cc] == "cubic"]["ratio"].mean())
        rn = float(sub[sub[cc] == "newreno"]["ratio"].mean())
        ok &= rc <= 1.5 * rn
        notes.append(f"{_buffer(buf, b)}, {o}: CUBIC {rc:.2f}, NewReno {rn:.2f}")
    return Check(ok, "ratio 16 ms / 162 ms flow: " + "; ".join(notes))


C_SERIES = [
    Preset(
        "C1",
        "Convergence with SURGE background traffic",
        RHEE,
        "rhee-2007/c1-convergence-surge.toml",
        "with realistic multiplexing two CUBIC flows converge to a fair share",
        b2_figure,
        c1_check,
        quick={
            "duration": "250s",
            "flows[1].start": "50s",
            "sweep.repeat": 2,
            "sweep.flows[0].params.fast_convergence": [True],
            "sweep.flows[1].params.fast_convergence": [True],
        },
    ),
    Preset(
        "C2",
        "cwnd and rate at the router, side by side",
        RHEE,
        "rhee-2007/c2-cwnd-vs-rate.toml",
        "with a large buffer the flows' cwnds can differ while their rates at the router do not",
        c2_figure,
        c2_check,
        quick={"duration": "120s", "flows[1].start": "30s", "sweep.repeat": 2},
        expected=False,
    ),
    Preset(
        "C3",
        "Small-buffer utilisation at 250 Mbit/s with background traffic",
        RHEE,
        "rhee-2007/c3-small-buffer-utilisation.toml",
        "CUBIC's utilisation at small buffers stays high (no fall to about 50 %)",
        c3_figure,
        c3_check,
        quick={
            "duration": "60s",
            "sweep.repeat": 1,
            "sweep.topology.bottleneck.buffer": ["0.02bdp", "0.1bdp", "0.3bdp"],
        },
        expected=False,
    ),
    Preset(
        "C4",
        "RTT fairness at a tiny BDP (13 KB and 26 KB buffers)",
        RHEE,
        "rhee-2007/c4-rtt-fairness-tiny-bdp.toml",
        "CUBIC at 16 ms is no less fair to a 162 ms NewReno flow than NewReno is",
        c4_figure,
        c4_check,
        quick={"duration": "120s"},
    ),
]


# ---------------------------------------------------------------- D: Lee and Chuvpilo 2002


def _algo(df: pd.DataFrame) -> list[str]:
    """Algorithm and queue as one label: "highspeed/droptail", "xcp/xcp"."""
    q = (
        column(df, "topology.bottleneck.qdisc")
        if any(c.startswith("topology.bottleneck.qdisc") for c in df.columns)
        else None
    )
    cc = _cc(df)
    return [f"{a}/{b}" if q else str(a) for a, b in zip(df[cc], df[q] if q else df[cc], strict=True)]


def _ok_runs(c: Campaign) -> pd.DataFrame:
    return c.runs[c.runs["status"] == "ok"].copy()


def d1_figure(c: Campaign) -> Any:
    df = _ok_runs(c)
    df["algorithm"] = _algo(df)
    rate, rtt = column(df, "topology.bottleneck.rate"), column(df, "topology.rtt")
    fig, axes = new_figure(2, width=5)
    cuts = (
        (axes[0], df[df[rtt] == 0.1], rate, MBPS, "bottleneck (Mbit/s), RTT 100 ms"),
        (axes[1], df[df[rate] == 200e6], rtt, 1e3, "RTT (ms), 200 Mbit/s"),
    )
    for ax, sub, x, scale, label in cuts:
        for i, (a, s) in enumerate(sub.groupby("algorithm", sort=False)):
            g = s.groupby(x)["utilization_second_half"].mean()
            ax.plot(g.index * scale, g.values, marker="o", color=f"C{i}", label=a)
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("utilisation")
    fig.tight_layout()
    return fig


def d1_check(c: Campaign) -> Check:
    """XCP's utilisation stays at or above 0.95 at every bandwidth and RTT, and within a point of TCP's or above."""
    df = _ok_runs(c)
    cc = _cc(df)
    u = {a: float(s["utilization_second_half"].min()) for a, s in df.groupby(cc)}
    return Check(
        u.get("xcp", 0) >= 0.95 and u.get("xcp", 0) >= u.get("reno", 1) - 0.01,
        "lowest utilisation over the grid: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(u.items())),
    )


def d2_figure(c: Campaign) -> Any:
    df = _ok_runs(c)
    return curves(
        df,
        column(df, "flows[0].count"),
        "jain_index",
        _cc(df),
        xlabel="number of flows",
        ylabel="Jain's fairness index",
        logx=True,
        ylim=(0, 1.05),
    )


def d2_check(c: Campaign) -> Check:
    """XCP's Jain's index stays at or above 0.95 for every number of flows, and at or above HighSpeed TCP's."""
    df = _ok_runs(c)
    n, cc = column(df, "flows[0].count"), _cc(df)
    j = {(a, k): float(s["jain_index"].mean()) for (a, k), s in df.groupby([cc, n])}
    xcp = [v for (a, _), v in j.items() if a == "xcp"]
    ok = (
        bool(xcp) and min(xcp) >= 0.95 and all(j[("xcp", k)] >= j[("highspeed", k)] for (a, k) in j if a == "highspeed")
    )
    return Check(ok, "Jain's index: " + "; ".join(f"{a} n={k}: {v:.2f}" for (a, k), v in sorted(j.items())))


def _d3_table(c: Campaign) -> pd.DataFrame:
    df = per_run(c, t_from=float(c.runs["duration_s"].iloc[0]) / 2)
    df["pair"] = ["TCP + TCP" if b == "reno" else "HSTCP + TCP" for b in df["baseline"]]
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    return df


def d3_figure(c: Campaign) -> Any:
    df = _d3_table(c)
    fig, axes = new_figure(1, width=5)
    ax = axes[0]
    pairs = ["HSTCP + TCP", "TCP + TCP"]
    for f, name in ((0, "flow 0 (HSTCP, or TCP in the baseline)"), (1, "flow 1 (TCP)")):
        ax.bar(
            [i + (f - 0.5) * 0.38 for i in range(2)],
            [df[df["pair"] == p][f"rate_{f}"].mean() * MBPS for p in pairs],
            0.38,
            color=f"C{f}",
            label=name,
        )
    ax.set_xticks(range(2), pairs)
    ax.set_ylabel("throughput (Mbit/s), second half")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def d3_check(c: Campaign) -> Check:
    """HighSpeed TCP is not TCP-friendly at 50 Mbit/s and 100 ms (417 packets, above its
    Low_Window of 38): TCP keeps less than 40 % against it, and 35-65 % against another TCP flow."""
    df = _d3_table(c)
    hs = float(df[df["pair"] == "HSTCP + TCP"]["tcp_share"].mean())
    tcp = float(df[df["pair"] == "TCP + TCP"]["tcp_share"].mean())
    return Check(hs < 0.4 and 0.35 <= tcp <= 0.65, f"TCP's share against HighSpeed TCP {hs:.2f}, against TCP {tcp:.2f}")


def convergence_rtts(
    rates: pd.DataFrame, join_s: float, rtt_s: float, window_s: float = 10.0, level: float = 0.95
) -> float:
    """Convergence time after a flow joins at ``join_s``, in RTTs: the start of the first
    ``window_s`` window after the join from which Jain's index of the flows' mean rates in every
    window stays at or above ``level`` (Lee and Chuvpilo, 2002, count it in RTTs); with no such
    window, the time from the join to the end. ``rates``: columns flow, time_s, rate_bps."""
    after = rates[rates["time_s"] > join_s].copy()
    after["w"] = ((after["time_s"] - join_s - 1e-9) // window_s).astype(int)
    per_w = after.groupby(["w", "flow"])["rate_bps"].mean().unstack("flow").sort_index()
    fair = [jain(row.tolist()) >= level for _, row in per_w.iterrows()]
    first = len(fair)
    for i in range(len(fair) - 1, -1, -1):
        if not fair[i]:
            break
        first = i
    return first * window_s / rtt_s


def _d4_times(c: Campaign) -> dict[str, float]:
    df = _ok_runs(c)
    out = {}
    for _, row in df.iterrows():
        fl = c.query(f"SELECT flow, time_s, rate_bps FROM flows WHERE run_id = '{row['run_id']}'")
        out[str(row[_cc(df)])] = convergence_rtts(fl, 40.0, 0.1)
    return out


def d4_figure(c: Campaign) -> Any:
    df = _ok_runs(c)
    times = _d4_times(c)
    panels = []
    for _, row in df.iterrows():
        fl = c.query(f"SELECT flow, time_s, rate_bps AS mean FROM flows WHERE run_id = '{row['run_id']}'")
        cc = str(row[_cc(df)])
        panels.append((f"{cc}: converged {times[cc]:.0f} RTTs after the join", fl))
    fig = traces(panels, ylabel="rate at the bottleneck (Mbit/s)")
    for ax, (_, row) in zip(fig.axes, df.iterrows(), strict=True):
        ax.axvline(40 + times[str(row[_cc(df)])] * 0.1, color="k", ls="--", lw=0.8)
    return fig


def d4_check(c: Campaign) -> Check:
    """XCP converges in less than a fifth of the RTTs HighSpeed TCP and TCP need (paper: 1700 and 4000 RTTs)."""
    t = _d4_times(c)
    ok = "xcp" in t and all(t["xcp"] < 0.2 * t[o] for o in ("highspeed", "reno") if o in t)
    return Check(ok, "convergence after the join: " + ", ".join(f"{k} {v:.0f} RTTs" for k, v in sorted(t.items())))


def fill_time_rtts(rates: pd.DataFrame, stop_s: float, link_bps: float, rtt_s: float, level: float = 0.9) -> float:
    """Time from ``stop_s`` until the remaining flow's rate first reaches ``level`` of the link, in
    RTTs (how fast freed bandwidth is taken, Lee and Chuvpilo, 2002); infinity if never."""
    after = rates[(rates["time_s"] > stop_s) & (rates["rate_bps"] >= level * link_bps)]
    return float(after["time_s"].min() - stop_s) / rtt_s if not after.empty else float("inf")


def _d5_series(c: Campaign) -> list[tuple[str, pd.DataFrame, float]]:
    df = _ok_runs(c)
    out = []
    for _, row in df.iterrows():
        fl = c.query(f"SELECT flow, time_s, rate_bps FROM flows WHERE run_id = '{row['run_id']}' AND flow = 0")
        out.append((str(row[_cc(df)]), fl, fill_time_rtts(fl, 100.0, float(row["bottleneck.rate_bps"]), 0.1)))
    return out


def d5_figure(c: Campaign) -> Any:
    fig, axes = new_figure(1, width=6.5)
    for i, (cc, fl, t) in enumerate(_d5_series(c)):
        axes[0].plot(
            fl["time_s"] - 100.0, fl["rate_bps"] * MBPS, color=f"C{i}", lw=0.9, label=f"{cc}: 90 % after {t:.0f} RTTs"
        )
    axes[0].set_xlim(-20, None)
    axes[0].set_xlabel("time since the other flow stopped (s)")
    axes[0].set_ylabel("remaining flow's rate (Mbit/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def d5_check(c: Campaign) -> Check:
    """XCP reaches 90 % of the link in less than a fifth of the RTTs HighSpeed TCP and TCP need."""
    t = {cc: v for cc, _, v in _d5_series(c)}
    ok = "xcp" in t and all(t["xcp"] < 0.2 * t[o] for o in ("highspeed", "reno") if o in t)
    return Check(
        ok, "time to 90 % of the link after the stop: " + ", ".join(f"{k} {v:.0f} RTTs" for k, v in sorted(t.items()))
    )


def d6_figure(c: Campaign) -> Any:
    df = _ok_runs(c)
    df["algorithm"] = _algo(df)
    buf = column(df, "topology.bottleneck.buffer")
    fig, axes = new_figure(2, width=5, sharey=False)
    for ax, col, label in (
        (axes[0], "utilization_second_half", "utilisation"),
        (axes[1], "jain_index", "Jain's index"),
    ):
        for i, (a, s) in enumerate(df.groupby("algorithm", sort=False)):
            g = s.groupby(buf)[col].mean()
            ax.plot(g.index, g.values, marker="o", color=f"C{i}", label=a)
        ax.set_xlabel("buffer (fraction of BDP)")
        ax.set_ylabel(label)
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def d6_check(c: Campaign) -> Check:
    """At the smallest buffer (0.1 BDP) XCP keeps utilisation at or above 0.9 and at least
    HighSpeed TCP's under DropTail."""
    df = _ok_runs(c)
    df["algorithm"] = _algo(df)
    buf = column(df, "topology.bottleneck.buffer")
    small = df[df[buf] == df[buf].min()]
    u = {a: float(s["utilization_second_half"].mean()) for a, s in small.groupby("algorithm")}
    x, h = u.get("xcp/xcp", 0.0), u.get("highspeed/droptail", 1.0)
    return Check(
        x >= 0.9 and x >= h,
        f"utilisation at {df[buf].min():g} BDP: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(u.items())),
    )


def _d7_table(c: Campaign) -> pd.DataFrame:
    import pandas as pd

    fm = c.query(
        f'SELECT run_id, flow, any_value("group") AS grp, avg(rate_bps) AS r FROM flows '
        f"WHERE time_s > {float(c.runs['duration_s'].iloc[0]) / 2} GROUP BY run_id, flow"
    )
    fwd = fm[fm["grp"] == 0].groupby("run_id")["r"].agg(["sum", "min", "max"])
    df = _ok_runs(c).merge(fwd, left_on="run_id", right_index=True)
    df["fwd_util"] = df["sum"] / df["bottleneck.rate_bps"]
    df["minmax"] = df["min"] / df["max"]
    return pd.DataFrame(df)


def d7_figure(c: Campaign) -> Any:
    df = _d7_table(c)
    n, cc = column(df, "flows[1].count"), _cc(df)
    fig, axes = new_figure(2, width=5, sharey=False)
    for ax, col, label in (
        (axes[0], "fwd_util", "forward utilisation"),
        (axes[1], "minmax", "min-max fairness (min / max)"),
    ):
        for i, (a, s) in enumerate(df.groupby(cc, sort=False)):
            g = s.groupby(n)[col].mean()
            ax.plot(g.index, g.values, marker="o", color=f"C{i}", label=str(a))
        ax.set_xlabel("reverse flows")
        ax.set_ylabel(label)
        ax.set_ylim(0, 1.05)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def d7_check(c: Campaign) -> Check:
    """With the most reverse flows, XCP's forward utilisation and min-max fairness are at least
    HighSpeed TCP's and TCP's."""
    df = _d7_table(c)
    n, cc = column(df, "flows[1].count"), _cc(df)
    top = df[df[n] == df[n].max()]
    v = {a: (float(s["fwd_util"].mean()), float(s["minmax"].mean())) for a, s in top.groupby(cc)}
    x = v.get("xcp", (0.0, 0.0))
    ok = all(x[0] >= u and x[1] >= m for a, (u, m) in v.items() if a != "xcp")
    return Check(
        ok,
        f"with {df[n].max()} reverse flows, utilisation / min-max: "
        + ", ".join(f"{a} {u:.2f} / {m:.2f}" for a, (u, m) in sorted(v.items())),
    )


_XCP_QUICK = {"sweep.repeat": 1}

D_SERIES = [
    Preset(
        "D1",
        "Utilisation against bandwidth and RTT",
        LEE,
        "lee-chuvpilo-2002/d1-utilisation.toml",
        "XCP keeps the link nearly fully used at every bandwidth and RTT; HighSpeed TCP and TCP fall at large BDP",
        d1_figure,
        d1_check,
        needs=("xcp",),
        quick={
            **_XCP_QUICK,
            "duration": "60s",
            "sweep.topology.bottleneck.rate": ["100Mbps", "200Mbps"],
            "sweep.topology.rtt": ["50ms", "100ms"],
        },
    ),
    Preset(
        "D2",
        "Jain's index against the number of flows",
        LEE,
        "lee-chuvpilo-2002/d2-fairness-vs-flows.toml",
        "XCP stays fair (Jain's index near 1) for any number of flows, HighSpeed TCP less so",
        d2_figure,
        d2_check,
        needs=("xcp",),
        quick={**_XCP_QUICK, "duration": "60s", "sweep.flows[0].count": [2, 16]},
    ),
    Preset(
        "D3",
        "TCP-friendliness of HighSpeed TCP",
        LEE,
        "lee-chuvpilo-2002/d3-friendliness.toml",
        "one HighSpeed TCP flow takes more than its share from a TCP flow; two TCP flows share fairly",
        d3_figure,
        d3_check,
        quick={"duration": "120s", "sweep.repeat": 2},
    ),
    Preset(
        "D4",
        "Convergence after a flow joins at 40 s",
        LEE,
        "lee-chuvpilo-2002/d4-convergence.toml",
        "about 1700 RTTs for HighSpeed TCP and 4000 for TCP to converge, very few for XCP",
        d4_figure,
        d4_check,
        needs=("xcp",),
        quick={"duration": "200s"},
    ),
    Preset(
        "D5",
        "Taking suddenly freed bandwidth",
        LEE,
        "lee-chuvpilo-2002/d5-freed-bandwidth.toml",
        "XCP takes freed bandwidth at once, HighSpeed TCP and TCP slowly",
        d5_figure,
        d5_check,
        needs=("xcp",),
        quick={"duration": "200s"},
        expected=False,
    ),
    Preset(
        "D6",
        "Buffer size against utilisation and fairness, DropTail and RED",
        LEE,
        "lee-chuvpilo-2002/d6-buffer-size.toml",
        "XCP keeps high utilisation and fairness down to 0.1 BDP; HighSpeed TCP loses utilisation with small buffers",
        d6_figure,
        d6_check,
        needs=("red", "xcp"),
        quick={**_XCP_QUICK, "duration": "60s", "sweep.topology.bottleneck.buffer": ["0.1bdp", "1bdp"]},
    ),
    Preset(
        "D7",
        "Reverse-direction flows",
        LEE,
        "lee-chuvpilo-2002/d7-reverse-traffic.toml",
        "reverse traffic (ACK compression, synchronisation) degrades HighSpeed TCP's and TCP's utilisation and "
        "min-max fairness; XCP is unaffected",
        d7_figure,
        d7_check,
        needs=("xcp",),
        quick={**_XCP_QUICK, "duration": "60s", "sweep.flows[1].count": [1, 10]},
    ),
]

PRESETS = [*A_SERIES, *B_SERIES, *C_SERIES, *D_SERIES, *E_SERIES]
