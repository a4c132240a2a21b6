"""The published experiments: one :class:`Preset` per experiment ID, with its figure and its claim check.

Papers:

* A — Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk);
* B — Leith, Shorten and McCullagh, "Experimental evaluation of Cubic-TCP", PFLDnet 2007;
* C — Rhee, response to Leith et al.'s evaluation of CUBIC, 2007;
* D — Lee and Chuvpilo, "A simulation based comparison between HighSpeed TCP and XCP", 2002;
* E — Lin, "Cubic vs BBR in the cloud", 2024.
"""

from __future__ import annotations

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
    return curves(df, column(df, "topology.bottleneck.loss"), "rate_0", _cc(df), xlabel="random loss rate",
                  ylabel="throughput (Mbit/s)", scale_y=MBPS, logx=True)  # fmt: skip


def e1_check(c: Campaign) -> Check:
    df = per_run(c)
    loss = column(df, "topology.bottleneck.loss")
    hi, lo = df[loss].max(), df[loss].min()
    cubic, bbr = _mean(df, "rate_0", **{"flows[0].cc": "cubic", loss: hi}), _mean(df, "rate_0", **{"flows[0].cc": "bbr", loss: hi})
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
            ax.bar(i + (f - 0.5) * width, sub[f"rate_{f}"].mean() * MBPS, width, color=f"C{f}", label=f"flow {f}" if i == 0 else None)
        ax.text(i, max(sub["rate_0"].mean(), sub["rate_1"].mean()) * MBPS * 1.02, f"J={sub['jain_index'].mean():.3f}",
                ha="center", fontsize=8)  # fmt: skip
        labels.append(f"{ccv}\nloss {lv:g}")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("throughput (Mbit/s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def e2_check(c: Campaign) -> Check:
    df = per_run(c)
    js = {cc: float(sub["jain_index"].mean()) for cc, sub in df.groupby(_cc(df))}
    return Check(all(j >= 0.9 for j in js.values()), "mean Jain's index " + ", ".join(f"{k} {v:.3f}" for k, v in js.items()))


def e3_figure(c: Campaign) -> Any:
    df = per_run(c)
    loss, cc = column(df, "topology.bottleneck.loss"), _cc(df)
    fig, axes = new_figure(2, width=4.5, sharey=False)
    for ax, col, label, scale in ((axes[0], "rate_0", "throughput (kbit/s)", 1e-3), (axes[1], "cwnd_0", "mean cwnd (packets)", 1.0)):
        groups = list(df.groupby([cc, loss], sort=True))
        ax.bar(range(len(groups)), [sub[col].mean() * scale for _, sub in groups], color=[f"C{i // 2}" for i in range(len(groups))])
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
        + ", ".join(f"{k} {v:.0f}" for k, v in cwnd.items()) + " packets",
    )


E_SERIES = [
    Preset("E1", "CUBIC and BBR under random loss", LIN, "lin-2024/e1-random-loss.toml",
           "CUBIC collapses at 0.1 % random loss (20.5 Mbit/s, 4 % of BBR's 540), BBR barely moves",
           e1_figure, e1_check, quick={"duration": "15s", "sweep.repeat": 1, "sweep.topology.bottleneck.loss": [0.0001, 0.001]}),
    Preset("E2", "Two flows of the same algorithm", LIN, "lin-2024/e2-two-flows.toml",
           "two flows of the same algorithm share the link fairly (CUBIC with CUBIC, BBR with BBR)",
           e2_figure, e2_check, quick={"duration": "15s", "sweep.repeat": 1}),
    Preset("E3", "An application-limited 735 kbit/s stream", LIN, "lin-2024/e3-video-stream.toml",
           "neither algorithm changes the stream's throughput; cwnd stays small",
           e3_figure, e3_check, quick={"duration": "10s", "sweep.repeat": 1}),
]  # fmt: skip
PRESETS = [*E_SERIES]
