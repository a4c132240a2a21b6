"""Lin, "Cubic vs BBR in the cloud", CSE 222A project report, 2024: E1-E3.

Each preset states the report's claim as the report makes it and where, what the report gives in
numbers, and tests every part of the claim on the quantity the report used: iperf3's throughput
(payload delivered over the run, ccarena's goodput) and RTT (the sender's smoothed RTT sampled at
intervals, as iperf3 reads it from TCP_INFO), and the cwnd that ``ss`` samples.

The report's link rate is unknown (an EC2 path on which BBR reached 503-570 Mbit/s); the campaigns
run at 250 Mbit/s (the deviations are in the campaign files). What scales with the link (BBR's
throughput) is therefore judged as a ratio, and what does not (CUBIC's throughput under random loss,
set by the loss rate and the RTT) in Mbit/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci
from .common import LIN, MBPS, cc_col, mean_where, ok_runs, records
from .figures import MIN_REPEATS_FOR_CI, new_figure
from .measures import column, jain
from .registry import Part, Preset, Values

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["E_SERIES"]

ALGORITHMS = ("cubic", "bbr")
LOW_LOSS, MID_LOSS, HIGH_LOSS = 5e-5, 1e-4, 1e-3
"""The random loss rates of the report's section 5.3: 0.005 %, 0.01 % and 0.1 %."""

STREAM_BPS = 735e3
"""The video stream's throughput in the report's section 5.6, bit/s."""

PAPER_E1 = {
    "cubic": {0.0: 78.6, LOW_LOSS: 73.4, MID_LOSS: 71.3, HIGH_LOSS: 20.5},
    "bbr": {0.0: 503.0, LOW_LOSS: 570.0, MID_LOSS: 553.0, HIGH_LOSS: 540.0},
}
"""Throughput in Mbit/s by loss rate (0: section 5.2, no loss added; the rest: section 5.3)."""
PAPER_RTT_MS = {"cubic": 23.336, "bbr": 21.030}
"""Mean RTT without added loss, section 5.2."""
PAPER_E2 = {"cubic": (38.8, 50.9), "bbr": (277.0, 273.0)}
"""The two transfers' throughputs in Mbit/s, section 5.4."""


def _loss_label(loss: float) -> str:
    return "0" if loss == 0 else f"{loss * 100:g} %"


def _per_flow(c: Campaign) -> pd.DataFrame:
    """Per successful run and flow: the algorithm (``cc``), the random loss rate (``loss``), the
    repeat, the goodput (payload delivered in order over the flow's time, bit/s), the retransmitted
    packets, the mean of the smoothed RTT sampled at the end of every interval (``srtt_ms``, as
    iperf3 averages ``tcpi_rtt``), and the mean cwnd over the intervals (``cwnd_pkts``, as ``ss``
    samples it)."""
    runs = ok_runs(c)
    loss, cc = column(runs, "topology.bottleneck.loss"), cc_col(runs)
    runs = runs[["run_id", "repeat", loss, cc]].rename(columns={loss: "loss", cc: "cc"})
    sampled = c.query(
        "SELECT run_id, flow, avg(srtt_us) / 1000.0 AS srtt_ms, avg(cwnd_pkts) AS cwnd_pkts FROM flows "
        "GROUP BY run_id, flow"
    )
    flows = c.run_flows[["run_id", "flow", "goodput_bps", "retransmits"]]
    df = runs.merge(flows, on="run_id").merge(sampled, on=["run_id", "flow"])
    return df.sort_values(["cc", "loss", "repeat", "flow"]).reset_index(drop=True)


def _mean(rows: Sequence[Mapping[str, Any]], key: str, cc: str, loss: float) -> float:
    """The mean of ``key`` over the runs of algorithm ``cc`` at random loss ``loss`` (NaN if none)."""
    return mean_where(rows, key, cc=cc, loss=loss)


def _draw(ax: Any, xs: Sequence[float], groups: Sequence[Sequence[float]], color: str, label: str) -> None:
    """A line through the means of ``groups`` at ``xs``: with at least 5 runs a point carries its 95 %
    interval, with fewer every run is drawn as a dot."""
    ms, cis = [], []
    for x, vals in zip(xs, groups, strict=True):
        m, ci, n = mean_ci(list(vals))
        ms.append(m)
        cis.append(ci if n >= MIN_REPEATS_FOR_CI and not math.isnan(ci) else 0.0)
        if n < MIN_REPEATS_FOR_CI:
            ax.plot([x] * len(vals), vals, ".", color=color, ms=4, alpha=0.6)
    ax.errorbar(xs, ms, yerr=cis, marker="o", capsize=3, color=color, label=label)


# ---------------------------------------------------------------- E1: bulk transfer, with and without random loss


def e1_measure(c: Campaign) -> Values:
    """Per run of the one bulk flow: algorithm, loss rate, repeat, goodput (bit/s) and mean sampled
    smoothed RTT (ms); and the link's rate (bit/s)."""
    df = _per_flow(c)
    df = df[df["flow"] == 0]
    return {
        "link_bps": float(ok_runs(c)["bottleneck.rate_bps"].iloc[0]),
        "runs": records(
            df, {"cc": "cc", "loss": "loss", "repeat": "repeat", "goodput_bps": "goodput_bps", "srtt_ms": "srtt_ms"}
        ),
    }


def e1_figure(c: Campaign) -> Any:
    df = _per_flow(c)
    df = df[df["flow"] == 0]
    losses = sorted(df["loss"].unique())
    fig, axes = new_figure(2, width=4.8, sharey=False)
    for i, cc in enumerate(ALGORITHMS):
        sub = df[df["cc"] == cc]
        xs = [float(k) for k in range(len(losses))]
        color = f"C{i}"
        _draw(axes[0], xs, [(sub[sub["loss"] == lv]["goodput_bps"] * MBPS).tolist() for lv in losses], color, cc)
        _draw(axes[1], xs, [sub[sub["loss"] == lv]["srtt_ms"].tolist() for lv in losses], color, cc)
        paper = [(k, PAPER_E1[cc][lv]) for k, lv in enumerate(losses) if lv in PAPER_E1[cc]]
        axes[0].plot([k for k, _ in paper], [v for _, v in paper], "s", mfc="none", color=color, label=f"{cc} (paper)")
        axes[1].plot([0], [PAPER_RTT_MS[cc]], "s", mfc="none", color=color, label=f"{cc} (paper, no loss added)")
    for ax in axes:
        ax.set_xticks(range(len(losses)), [_loss_label(lv) for lv in losses])
        ax.set_xlabel("random loss added")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("throughput (Mbit/s)")
    axes[1].set_ylabel("mean smoothed RTT (ms)")
    fig.tight_layout()
    return fig


def e1_judge(values: Mapping[str, Values]) -> list[Part]:
    """The parts of sections 5.2, 5.3 and 6, each on the runs' mean goodput or RTT.

    * Without added loss BBR's throughput is several times CUBIC's: BBR / CUBIC >= 2. The report has
      503 / 78.6 = 6.4; with BBR's rate scaled to the 250 Mbit/s link (BBR fills the link, CUBIC's
      rate was held by the report's path and does not scale: loss-limited, as assumed when the bound
      was fixed; the preset's cause finds the limit in the path, not in the added loss) the report's
      numbers would give about 233 / 78.6 = 3.0 (233 Mbit/s being BBR's goodput on this link in the
      stored runs). 2 is below that by more than the path's own variation (BBR, which the added loss
      barely touches, gave 503 to 570 Mbit/s across the report's settings, +-6 %), and still "much
      better". The report itself puts the ratio at nearly seven (5.2); the bound is lower because
      this link, slower than the report's path, caps BBR's side of the ratio and not CUBIC's.
    * Without added loss CUBIC's RTT is above BBR's: by at least 1 ms. The report has 23.3 against
      21.0 ms (+2.3 ms); 1 ms, 5 % of the 20 ms base RTT, is under half of that, so a difference of
      the report's size passes and one of a few per cent of the base RTT does not.
    * CUBIC's throughput falls with random loss: at 0.1 % at most half of its throughput at
      0.005 %. The report has 20.5 / 73.4 = 0.28; a flow limited by loss alone falls as 1/sqrt(p),
      sqrt(0.005 / 0.1) = 0.22.
    * BBR's throughput barely changes: at 0.1 % at least 90 % of its throughput at 0.005 %. The
      report has 540 / 570 = 0.95; 0.9 leaves room for the path's own variation seen in BBR's
      throughput across the report's settings (503 to 570 Mbit/s, +-6 %).
    * CUBIC is much more sensitive to loss than BBR: CUBIC's fraction kept (0.1 % over 0.005 %) at
      most half of BBR's. The report has 0.28 against 0.95, a ratio of 0.30. All ratios are free of
      the link's rate.

    The report also shows these facts in cwnd (5.1: CUBIC's much smaller than BBR's; 5.3: added
    loss lowers CUBIC's); a bulk flow's cwnd is its rate times its RTT, and the report's RTTs
    differ by 10 %, so the throughput parts carry them; cwnd itself is not judged (the campaign
    file's deviations say why).
    """
    rows = values["E1"]["runs"]
    tp = {(cc, lv): _mean(rows, "goodput_bps", cc, lv) for cc in ALGORITHMS for lv in (0.0, LOW_LOSS, HIGH_LOSS)}
    rtt = {cc: _mean(rows, "srtt_ms", cc, 0.0) for cc in ALGORITHMS}
    base_ratio = tp["bbr", 0.0] / tp["cubic", 0.0]
    kept = {cc: tp[cc, HIGH_LOSS] / tp[cc, LOW_LOSS] for cc in ALGORITHMS}
    relative = kept["cubic"] / kept["bbr"]

    def mbps(cc: str, lv: float) -> str:
        return f"{tp[cc, lv] * MBPS:.1f}"

    return [
        Part(
            "without added loss BBR's throughput is several times CUBIC's (5.2)",
            base_ratio >= 2.0,
            f"BBR {mbps('bbr', 0.0)} / CUBIC {mbps('cubic', 0.0)} Mbit/s = {base_ratio:.2f} (threshold 2; paper "
            "503 / 78.6 = 6.4, about 3.0 at this link)",
        ),
        Part(
            "without added loss CUBIC's RTT is above BBR's (5.2)",
            rtt["cubic"] - rtt["bbr"] >= 1.0,
            f"CUBIC {rtt['cubic']:.2f} ms, BBR {rtt['bbr']:.2f} ms: {rtt['cubic'] - rtt['bbr']:+.2f} ms (threshold "
            "+1 ms; paper 23.34 and 21.03 ms, +2.3 ms)",
        ),
        Part(
            "CUBIC's throughput falls with random loss (5.3)",
            kept["cubic"] <= 0.5,
            f"CUBIC {mbps('cubic', LOW_LOSS)} Mbit/s at 0.005 %, {mbps('cubic', HIGH_LOSS)} at 0.1 %: "
            f"{kept['cubic']:.2f} kept (threshold 0.5; paper 73.4 and 20.5 Mbit/s, 0.28; Mathis' formula gives 22 "
            "Mbit/s at 0.1 % and 20 ms once the window has come down from slow start)",
        ),
        Part(
            "BBR's throughput barely changes with random loss (5.3)",
            kept["bbr"] >= 0.9,
            f"BBR {mbps('bbr', LOW_LOSS)} Mbit/s at 0.005 %, {mbps('bbr', HIGH_LOSS)} at 0.1 %: {kept['bbr']:.2f} "
            "kept (threshold 0.9; paper 570 and 540 Mbit/s, 0.95)",
        ),
        Part(
            "CUBIC is much more sensitive to random loss than BBR (5.3, 6)",
            relative <= 0.5,
            f"CUBIC's fraction kept over BBR's {relative:.2f} (threshold 0.5; paper 0.28 / 0.95 = 0.30); at 0.1 % "
            f"CUBIC gets {tp['cubic', HIGH_LOSS] / tp['bbr', HIGH_LOSS]:.0%} of BBR's throughput",
        ),
    ]


# ---------------------------------------------------------------- E2: two flows of one algorithm


def _e2_table(c: Campaign) -> pd.DataFrame:
    """Per run: the two flows' goodputs (bit/s), the smaller over the larger, and Jain's index of
    the two."""
    import pandas as pd

    df = _per_flow(c)
    rows = []
    for run_id, sub in df.groupby("run_id", sort=False):
        rates = sub.sort_values("flow")["goodput_bps"].tolist()
        first = sub.iloc[0]
        rows.append(
            {
                "cc": first["cc"],
                "loss": first["loss"],
                "repeat": first["repeat"],
                "goodput0_bps": rates[0],
                "goodput1_bps": rates[1],
                "min_over_max": min(rates) / max(rates) if max(rates) > 0 else float("nan"),
                "jain": jain(rates),
            }
        )
    return pd.DataFrame(rows).sort_values(["cc", "loss", "repeat"]).reset_index(drop=True)


def e2_measure(c: Campaign) -> Values:
    """Per run: algorithm, loss rate, repeat, each flow's goodput (bit/s), the smaller goodput over
    the larger, and Jain's index of the two."""
    df = _e2_table(c)
    return {"runs": records(df, {k: k for k in df.columns})}


def e2_figure(c: Campaign) -> Any:
    df = _e2_table(c)
    fig, axes = new_figure(1, width=6.5)
    ax = axes[0]
    labels, width = [], 0.38
    for i, ((lv, ccv), sub) in enumerate(df.groupby(["loss", "cc"], sort=True)):
        for f in (0, 1):
            vals, x = (sub[f"goodput{f}_bps"] * MBPS).tolist(), i + (f - 0.5) * width
            ax.bar(x, sum(vals) / len(vals), width, color=f"C{f}", label=f"flow {f}" if i == 0 else None)
            ax.plot([x] * len(vals), vals, "k.", ms=3)
        top = max(sub["goodput0_bps"].max(), sub["goodput1_bps"].max()) * MBPS
        paper = f"\npaper {min(PAPER_E2[ccv]) / max(PAPER_E2[ccv]):.2f}" if lv == 0 and ccv in PAPER_E2 else ""
        ax.text(i, top * 1.02, f"ratio {sub['min_over_max'].mean():.2f}{paper}", ha="center", fontsize=7)
        labels.append(f"{ccv}\nloss {_loss_label(lv)}")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("two flows started together; ratio = smaller / larger", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def e2_judge(values: Mapping[str, Values]) -> list[Part]:
    """The parts of sections 5.4 and 6 at the report's setting (no loss added), on the per-run ratio
    of the smaller flow's goodput to the larger's, averaged over the repeats (1 is an even share).

    The ratio rather than Jain's index: for two flows Jain's index is (1 + r)^2 / (2 (1 + r^2)) of
    the ratio r, which squeezes the report's contrast (CUBIC 38.8 / 50.9 = 0.76, Jain 0.98; BBR
    273 / 277 = 0.99, Jain 1.00) into its last two digits.

    * Two BBR flows share almost equally: ratio >= 0.9 (Jain >= 0.997). The report has 0.99; 0.9
      allows a 10 % difference, about seven times the report's 1.4 % (273 against 277 Mbit/s), for
      the spread between runs.
    * BBR is much fairer than CUBIC: BBR's ratio exceeds CUBIC's by at least 0.1. The report's gap
      is 0.99 - 0.76 = 0.22; 0.1 is under half of it, so a gap of the report's size passes and a
      gap of a few per cent of the larger flow's rate does not.

    The runs with 0.01 % loss (the report's path evidently lost packets of its own, E1) are named
    in the numbers, not judged.
    """
    rows = values["E2"]["runs"]
    r = {cc: mean_where(rows, "min_over_max", cc=cc, loss=0.0) for cc in ALGORITHMS}
    j = {cc: mean_where(rows, "jain", cc=cc, loss=0.0) for cc in ALGORITHMS}
    lossy = {cc: mean_where(rows, "min_over_max", cc=cc, loss=MID_LOSS) for cc in ALGORITHMS}
    aside = ""
    if not any(math.isnan(v) for v in lossy.values()):
        aside = f"; at 0.01 % loss (not judged) CUBIC {lossy['cubic']:.2f}, BBR {lossy['bbr']:.2f}"

    def flows(cc: str) -> str:
        a, b = (mean_where(rows, f"goodput{f}_bps", cc=cc, loss=0.0) * MBPS for f in (0, 1))
        return f"{a:.1f} and {b:.1f} Mbit/s"

    return [
        Part(
            "two BBR flows share the path almost equally (5.4)",
            r["bbr"] >= 0.9,
            f"BBR {flows('bbr')}, ratio {r['bbr']:.3f}, Jain {j['bbr']:.4f} (threshold 0.9; paper 277 and 273 "
            "Mbit/s, 0.99)",
        ),
        Part(
            "BBR is much fairer than CUBIC (5.4, 6)",
            r["bbr"] - r["cubic"] >= 0.1,
            f"ratio BBR {r['bbr']:.3f} against CUBIC {r['cubic']:.3f} ({flows('cubic')}, Jain {j['cubic']:.4f}): "
            f"gap {r['bbr'] - r['cubic']:+.3f} (threshold +0.1; paper 0.99 against 0.76, +0.22){aside}",
        ),
    ]


# ---------------------------------------------------------------- E3: a 735 kbit/s video stream


def e3_measure(c: Campaign) -> Values:
    """Per run of the stream: algorithm, loss rate, repeat, goodput (bit/s), mean cwnd (packets),
    mean sampled smoothed RTT (ms) and retransmitted packets."""
    df = _per_flow(c)
    df = df[df["flow"] == 0]
    keys = ("cc", "loss", "repeat", "goodput_bps", "cwnd_pkts", "srtt_ms", "retransmits")
    return {"stream_bps": STREAM_BPS, "runs": records(df, {k: k for k in keys})}


def e3_figure(c: Campaign) -> Any:
    df = _per_flow(c)
    df = df[df["flow"] == 0]
    losses = sorted(df["loss"].unique())
    fig, axes = new_figure(2, width=4.8, sharey=False)
    for i, cc in enumerate(ALGORITHMS):
        sub = df[df["cc"] == cc]
        xs = [k + (i - 0.5) * 0.1 for k in range(len(losses))]
        color = f"C{i}"
        _draw(axes[0], xs, [(sub[sub["loss"] == lv]["goodput_bps"] * 1e-3).tolist() for lv in losses], color, cc)
        _draw(axes[1], xs, [sub[sub["loss"] == lv]["cwnd_pkts"].tolist() for lv in losses], color, cc)
    axes[0].axhline(STREAM_BPS * 1e-3, color="k", lw=0.8, ls="--", label="paper: 735 kbit/s, either")
    for ax in axes:
        ax.set_xticks(range(len(losses)), [_loss_label(lv) for lv in losses])
        ax.set_xlabel("random loss added")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("throughput (kbit/s)")
    axes[1].set_ylabel("mean cwnd (packets)")
    axes[1].set_ylim(bottom=0)
    fig.tight_layout()
    return fig


def e3_judge(values: Mapping[str, Values]) -> list[Part]:
    """The parts of sections 5.5-5.7 and 6, on the runs' mean goodput and mean cwnd.

    * Either protocol carries the stream at its 735 kbit/s (5.6): at loss 0 each algorithm's goodput
      within 2 % of 735 kbit/s. The report gives 735.0 for both; the run's last RTT of data (0.1 %
      of 17.5 s) is still in flight at its end, and a gap of more than 2 % would show in the
      report's four digits.
    * cwnd stays small whichever the protocol (5.5, 6: the application's demand, not the protocol,
      sets it): at loss 0 each algorithm's mean cwnd at most 20 packets, twice Linux's initial
      window, so the two protocols' cwnds lie within 20 packets of each other, under 5 % of the BDP
      (417 packets), the scale on which a bulk flow's cwnd differs between them (5.1). The report's
      Figure 5 has no numbers in the text; the stream needs 1.3 packets per 20 ms RTT.
    * The throughput does not change with random loss (5.7): at every loss rate run, each
      algorithm's goodput at least 95 % of its goodput without loss ("does not change much").
    * CUBIC's cwnd does not decrease with packet loss (5.7): at every loss rate run, CUBIC's mean
      cwnd at least 90 % of its mean without loss: one packet of Linux's initial window of 10.

    The last two hold only if the algorithms' runs with loss lost packets at all (a retransmission
    in at least one of them): at 0.1 % a 17.5-s stream of 1,100 packets loses none one time in three.
    """
    v = values["E3"]
    rows, stream = v["runs"], float(v.get("stream_bps", STREAM_BPS))
    losses = sorted({float(r["loss"]) for r in rows if float(r["loss"]) > 0})
    good = {(cc, lv): _mean(rows, "goodput_bps", cc, lv) for cc in ALGORITHMS for lv in [0.0, *losses]}
    cwnd = {(cc, lv): _mean(rows, "cwnd_pkts", cc, lv) for cc in ALGORITHMS for lv in [0.0, *losses]}
    off = {cc: abs(good[cc, 0.0] - stream) / stream for cc in ALGORITHMS}
    kept = {(cc, lv): good[cc, lv] / good[cc, 0.0] for cc in ALGORITHMS for lv in losses}
    cwnd_kept = {lv: cwnd["cubic", lv] / cwnd["cubic", 0.0] for lv in losses}
    worst = min(kept.values(), default=float("nan"))
    worst_cwnd = min(cwnd_kept.values(), default=float("nan"))

    lost = {lv: sum(int(r.get("retransmits") or 0) for r in rows if float(r["loss"]) == lv) for lv in losses}
    hit = {
        cc: any(int(r.get("retransmits") or 0) > 0 for r in rows if r["cc"] == cc and float(r["loss"]) > 0)
        for cc in ALGORITHMS
    }
    runs_at = {lv: sum(1 for r in rows if float(r["loss"]) == lv) for lv in losses}
    lost_text = ", ".join(f"{_loss_label(lv)} {lost[lv]} in {runs_at[lv]} runs" for lv in losses)
    kept_text = ", ".join(f"{cc} {_loss_label(lv)} {x:.3f}" for (cc, lv), x in kept.items())
    cwnd_text = ", ".join(f"{_loss_label(lv)} {x:.2f}" for lv, x in cwnd_kept.items())

    return [
        Part(
            "either protocol carries the stream at its 735 kbit/s (5.6)",
            all(x <= 0.02 for x in off.values()),
            f"goodput CUBIC {good['cubic', 0.0] * 1e-3:.1f}, BBR {good['bbr', 0.0] * 1e-3:.1f} kbit/s "
            f"(off by {off['cubic']:.1%} and {off['bbr']:.1%}; threshold 2 %; paper 735.0 for either)",
        ),
        Part(
            "cwnd stays small whichever the protocol (5.5, 6)",
            all(cwnd[cc, 0.0] <= 20 for cc in ALGORITHMS),
            f"mean cwnd CUBIC {cwnd['cubic', 0.0]:.1f}, BBR {cwnd['bbr', 0.0]:.1f} packets (threshold 20; BDP 417)",
        ),
        Part(
            "the stream's throughput does not change with random loss (5.7)",
            all(hit.values()) and worst >= 0.95,
            f"goodput over its loss-free value: {kept_text} (threshold 0.95); packets retransmitted: {lost_text}",
        ),
        Part(
            "CUBIC's cwnd does not decrease with random loss (5.7)",
            hit["cubic"] and worst_cwnd >= 0.9,
            f"CUBIC's mean cwnd {cwnd['cubic', 0.0]:.1f} packets without loss; over that: {cwnd_text} "
            f"(threshold 0.9){'' if hit['cubic'] else '; CUBIC lost no packet: not tested'}",
        ),
    ]


E_SERIES = [
    Preset(
        "E1",
        "CUBIC and BBR under random loss",
        LIN,
        "lin-2024/e1-random-loss.toml",
        claim=(
            "On the cloud path without added loss BBR's bulk throughput is nearly seven times CUBIC's (5.2) and its "
            "RTT is lower; with random loss added, CUBIC's throughput drops steeply once the loss reaches 0.1 % (to "
            "about a quarter of what it gets at 0.005 %) while BBR's hardly changes: CUBIC is much more sensitive to "
            "loss than BBR"
        ),
        where="sections 5.2 (iperf3 network analysis), 5.3 (behaviour under packet loss) and 6 (conclusion)",
        reported=(
            "5 runs without added loss: CUBIC 78.6 Mbit/s and 23.336 ms RTT, BBR 503 Mbit/s and 21.030 ms; at 0.005, "
            "0.01 and 0.1 % loss: CUBIC 73.4, 71.3, 20.5 Mbit/s, BBR 570, 553, 540 Mbit/s"
        ),
        cause=(
            "the report's path, which it does not describe beyond two EC2 hosts with 20 ms added at the sender. "
            "Linux's own CUBIC and BBR, run through ccarena's emulator at the report's RTT, fill the 250 Mbit/s link "
            "alike (233 and 233 Mbit/s), as ccarena's model does, so what held the report's CUBIC near 75 Mbit/s lies"
            " in its path or hosts, not in the algorithm. It is not loss at the report's own rates: with 0.005 % and "
            "0.01 % added ccarena's CUBIC still gets 221 and 165 Mbit/s (means of 5 three-second runs; the kernel 220"
            " and 164), about 3 and 2.3 times the report's 73.4 and 71.3, because a 3-s transfer ends before losses "
            "this rare shape it. Nor is it delay jitter ending HyStart's slow start early: with up to 5 ms of uniform"
            " per-packet jitter CUBIC still gets 225 Mbit/s without loss. A token-bucket policer gives the report's "
            "shape (not the preset; 5 runs per point): at 600 Mbit/s, about BBR's highest rate in the report, with a "
            "64 KB bucket on a 1 Gbit/s link, CUBIC gets 53, 52, 48 and 27 Mbit/s without loss and at 0.005, 0.01 and"
            " 0.1 % in the simulator (35, 27, 27 and 24 on the kernel through the emulator) against the report's "
            "78.6, 73.4, 71.3 and 20.5, while BBR keeps 534-537 (kernel 482-491; report 503-570); buckets of 256 KB "
            "and 1 MB let CUBIC reach 217 and 451 Mbit/s without loss. A policer leaves no queue, so it does not give"
            " CUBIC the report's 2.3 ms higher RTT (0.2-0.4 ms on the kernel). EC2 limits each instance's network "
            "bandwidth, but the report neither says its path was policed nor gives a rate or bucket, so the policer "
            "is a candidate, and the cause is a path ccarena cannot rebuild from the report"
        ),
        figure=e1_figure,
        measure=e1_measure,
        judge=e1_judge,
        quick={"sweep.repeat": 2, "sweep.topology.bottleneck.loss": [0.0, LOW_LOSS, HIGH_LOSS]},
    ),
    Preset(
        "E2",
        "Two flows of the same algorithm",
        LIN,
        "lin-2024/e2-two-flows.toml",
        claim=(
            "Two simultaneous bulk transfers of BBR split the path almost evenly, two of CUBIC less evenly: BBR is "
            "much fairer than CUBIC"
        ),
        where="sections 5.4 (fairness in iperf3) and 6 (conclusion)",
        reported="CUBIC 38.8 and 50.9 Mbit/s; BBR 277 and 273 Mbit/s",
        figure=e2_figure,
        measure=e2_measure,
        judge=e2_judge,
        quick={"sweep.repeat": 2, "sweep.topology.bottleneck.loss": [0.0]},
    ),
    Preset(
        "E3",
        "An application-limited 735 kbit/s stream",
        LIN,
        "lin-2024/e3-video-stream.toml",
        claim=(
            "A 735 kbit/s video stream gets the same throughput under CUBIC and under BBR, its cwnd is held small by "
            "the application's demand whichever the protocol, and neither its throughput nor CUBIC's cwnd is "
            "affected by packet loss"
        ),
        where="sections 5.5-5.7 (FFmpeg: cwnd, throughput, behaviour under packet loss) and 6 (conclusion)",
        reported="735.0 kbit/s under either algorithm; RTT 22.13 ms; completion 17.82 s",
        cause=(
            "a loss cuts CUBIC's cwnd to 0.7 of itself (10 to 7 packets) and an application-limited flow's cwnd "
            "does not grow back (Linux grows it only while cwnd-limited): in the runs that lost a packet CUBIC's "
            "mean cwnd was 6.6-8.5 packets against 10, and the kernel's through the emulator 6.2-8.4; runs without "
            "a loss keep 10. The report does not give its video runs' loss rates; a 17.5-s stream of 1,100 packets "
            "at 0.005-0.01 % mostly loses none"
        ),
        figure=e3_figure,
        measure=e3_measure,
        judge=e3_judge,
        quick={"sweep.repeat": 3, "sweep.topology.bottleneck.loss": [0.0, HIGH_LOSS]},
    ),
]
