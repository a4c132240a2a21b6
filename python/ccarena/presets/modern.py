"""The arguments of today: F1-F3, three newer algorithms against CUBIC, each judged on its source's claim.

* F1 — Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the Internet",
  NSDI 2018: Copa's competitive mode against a buffer-filling CUBIC flow, across buffers;
* F2 — RFC 6817, LEDBAT: a scavenger that yields to standard TCP, across buffers below and above
  its 100 ms TARGET;
* F3 — RFC 9332, the DualQ Coupled AQM (DualPI2) with TCP Prague against CUBIC, across RTTs.

Each preset states the claim as its source makes it and where, marks what could not be read in
the source itself, and tests every part on quantities measured at the bottleneck: each flow's
rate there over a stated window, the queue's delay, the link's utilisation. The sources give no
numbers for these set-ups, so every threshold is a reading of the source's words ("co-exists
well", "yield", "about the same rate", "sub-millisecond"), fixed with its reason in the judge's
docstring before the campaign was run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.stats import mean_ci
from .common import mean_where, ok_runs, rounded
from .figures import MIN_REPEATS_FOR_CI, new_figure
from .measures import column, flow_means, share
from .registry import Part, Preset, Values

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = ["ARUN", "DUALQ", "F_SERIES", "LEDBAT"]

ARUN = (
    'V. Arun and H. Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the Internet", USENIX NSDI 2018'
)
LEDBAT = 'S. Shalunov, G. Hazel, J. Iyengar and M. Kuehlewind, "Low Extra Delay Background Transport (LEDBAT)", RFC 6817, 2012'
DUALQ = (
    'K. De Schepper, B. Briscoe and G. White, "Dual-Queue Coupled Active Queue Management (AQM) for Low Latency, '
    'Low Loss, and Scalable Throughput (L4S)", RFC 9332, 2023'
)

FAIR_LO, FAIR_HI = 1 / 3, 2 / 3
"""A two-flow split "about even": neither flow gets more than twice the other (share in [1/3, 2/3],
rate ratio in [1/2, 2])."""
SCAVENGER_SHARE = 0.1
"""A flow "gets low throughput" or "yields" when it gets at most a fifth of an even split's 0.5."""
TARGET_MS = 100.0
"""RFC 6817 section 2.5: LEDBAT's TARGET queueing delay."""
CLASSIC_TARGET_MS = 15.0
"""RFC 9332 Appendix A (and Linux's default): the PI2 controller's target queue delay."""


def _runs(c: Campaign, keys: Mapping[str, str]) -> pd.DataFrame:
    """The successful runs with the swept columns renamed (``keys``: new name → catalogue prefix)."""
    runs = ok_runs(c)
    cols = {column(runs, v): k for k, v in keys.items()}
    return runs[["run_id", "repeat", "bottleneck.rate_bps", *cols]].rename(
        columns={**cols, "bottleneck.rate_bps": "link_bps"}
    )


def _second_half(c: Campaign) -> float:
    """The start of the runs' second half, s (the window of F1 and F3, so the quick forms' shorter
    runs are measured the same way)."""
    return float(ok_runs(c)["duration_s"].iloc[0]) / 2


def _two_flows(c: Campaign, t_from: float, t_to: float | None = None) -> pd.DataFrame:
    """Per run: flow 0's and flow 1's mean rate at the bottleneck over (t_from, t_to], bit/s (0 for
    a flow that has not started)."""
    fm = flow_means(c, t_from, t_to)
    wide = fm.pivot(index="run_id", columns="flow", values="rate_bps").reindex(columns=[0, 1], fill_value=0.0)
    return wide.fillna(0.0).rename(columns={0: "rate0_bps", 1: "rate1_bps"}).reset_index()


def _dots(ax: Any, xs: Sequence[float], groups: Sequence[Sequence[float]], color: str, label: str) -> None:
    """A line through the means of ``groups`` at ``xs``; with 5 runs or more a point carries its
    95 % interval, with fewer every run is drawn as a dot."""
    ms, cis = [], []
    for x, vals in zip(xs, groups, strict=True):
        m, ci, n = mean_ci(list(vals)) if vals else (float("nan"), float("nan"), 0)
        ms.append(m)
        cis.append(ci if n >= MIN_REPEATS_FOR_CI and not math.isnan(ci) else 0.0)
        if n < MIN_REPEATS_FOR_CI:
            ax.plot([x] * len(vals), list(vals), ".", color=color, ms=5, alpha=0.7)
    ax.errorbar(xs, ms, yerr=cis, marker="o", capsize=3, color=color, label=label)


def _fmt(xs: Mapping[Any, float], unit: str = "", digits: int = 2) -> str:
    return ", ".join(f"{k:g}: {v:.{digits}f}{unit}" for k, v in xs.items())


# ---------------------------------------------------------------- F1: Copa against CUBIC


def _mode_switch(params: Any) -> bool:
    """Whether a run's Copa parameters (the catalogue's JSON text) leave the competitive mode on."""
    import json

    given = json.loads(params) if isinstance(params, str) and params else dict(params or {})
    return bool(given.get("mode_switch", True))


def _f1_table(c: Campaign) -> pd.DataFrame:
    runs = _runs(c, {"buffer_bdp": "topology.bottleneck.buffer", "params": "flows[0].params"})
    runs["mode"] = ["competitive" if _mode_switch(p) else "fixed" for p in runs["params"]]
    df = runs.drop(columns=["params"]).merge(_two_flows(c, _second_half(c)), on="run_id")
    df = df.rename(columns={"rate0_bps": "copa_bps", "rate1_bps": "cubic_bps"})
    df["copa_share"] = [share(a, a + b) for a, b in zip(df["copa_bps"], df["cubic_bps"], strict=True)]
    df["utilisation"] = (df["copa_bps"] + df["cubic_bps"]) / df["link_bps"]
    return df.sort_values(["mode", "buffer_bdp", "repeat"]).reset_index(drop=True)


def f1_measure(c: Campaign) -> Values:
    """Per run: Copa's mode setting ("competitive": the paper's Copa; "fixed": delta held at 0.5),
    the buffer (BDP), the repeat, each flow's mean rate at the bottleneck over the runs' second half
    (30-60 s; bit/s),
    Copa's share of the two, and the link's utilisation."""
    df = _f1_table(c)
    keys = ("mode", "buffer_bdp", "repeat", "copa_bps", "cubic_bps", "copa_share", "utilisation")
    return {"window_s": [_second_half(c), None], "runs": [rounded({k: r[k] for k in keys}) for _, r in df.iterrows()]}


def f1_figure(c: Campaign) -> Any:
    df = _f1_table(c)
    fig, axes = new_figure(1, width=5.5)
    ax = axes[0]
    buffers = sorted(df["buffer_bdp"].unique())
    xs = list(range(len(buffers)))
    ax.axhspan(FAIR_LO, FAIR_HI, color="0.9", label="within a factor 2 of an even split")
    for i, mode in enumerate(("competitive", "fixed")):
        sub = df[df["mode"] == mode]
        label = "Copa (competitive mode on)" if mode == "competitive" else "Copa, delta fixed at 0.5"
        _dots(ax, xs, [sub[sub["buffer_bdp"] == b]["copa_share"].tolist() for b in buffers], f"C{i}", label)
    ax.axhline(SCAVENGER_SHARE, color="k", lw=0.8, ls=":", label=f"{SCAVENGER_SHARE:g}: low throughput")
    ax.set_xticks(xs, [f"{b:g}" for b in buffers])
    ax.set_xlabel("buffer (BDP)")
    ax.set_ylabel("Copa's share of the two flows (second half)")
    ax.set_ylim(0, 1)
    ax.set_title("one Copa and one CUBIC flow, 50 Mbit/s, 40 ms", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def f1_judge(values: Mapping[str, Values]) -> list[Part]:
    """The abstract's two statements, on Copa's share of the two flows' rate at the bottleneck over
    30-60 s, averaged over the repeats at each buffer.

    * Copa co-exists well with Cubic: with its competitive mode, at every buffer Copa's share lies
      in [1/3, 2/3], neither flow getting more than twice the other. The paper gives no number in
      the abstract; an even split is 0.5, and a factor of two either way is the widest reading of
      "well" that still excludes starving CUBIC or being starved by it.
    * Like other delay-sensitive schemes, Copa without the third idea gets low throughput against
      buffer-fillers: with delta fixed at its default 0.5, at every buffer of 1 BDP or more (where
      CUBIC keeps a standing queue: after its backoff to 0.7 of the window at least 0.4 BDP
      stays queued) Copa's share is at most 0.1, a fifth of an even split. The 0.5-BDP runs,
      whose queue CUBIC's backoff drains, are shown, not judged.
    """
    rows = values["F1"]["runs"]
    buffers = sorted({float(r["buffer_bdp"]) for r in rows})
    comp = {b: mean_where(rows, "copa_share", mode="competitive", buffer_bdp=b) for b in buffers}
    fixed = {b: mean_where(rows, "copa_share", mode="fixed", buffer_bdp=b) for b in buffers}
    judged = [b for b in buffers if b >= 1.0]
    ok_comp = bool(comp) and all(FAIR_LO <= v <= FAIR_HI for v in comp.values())
    ok_fixed = bool(judged) and all(fixed[b] <= SCAVENGER_SHARE for b in judged)
    shown = ", ".join(f"{b:g} BDP {fixed[b]:.2f} (not judged)" for b in buffers if b < 1.0)
    return [
        Part(
            "with its competitive mode Copa co-exists well with CUBIC (abstract)",
            ok_comp,
            f"Copa's share by buffer (BDP): {_fmt(comp)} (threshold 1/3 to 2/3 at every buffer)",
        ),
        Part(
            "with delta fixed, Copa gets low throughput against a buffer-filler (abstract)",
            ok_fixed,
            f"Copa's share by buffer: {_fmt({b: fixed[b] for b in judged})} (threshold at most {SCAVENGER_SHARE:g} "
            f"at 1 BDP and more){'; ' + shown if shown else ''}",
        ),
    ]


# ---------------------------------------------------------------- F2: LEDBAT against CUBIC

F2_ALONE = (10.0, 30.0)
"""LEDBAT alone: after its slow start, before CUBIC joins at 30-31 s."""
F2_BOTH = (50.0, 90.0)
"""The two flows: from 19 s after CUBIC joins to the end."""


def _f2_table(c: Campaign) -> pd.DataFrame:
    runs = _runs(c, {"buffer_bdp": "topology.bottleneck.buffer"})
    alone = _two_flows(c, *F2_ALONE)[["run_id", "rate0_bps"]].rename(columns={"rate0_bps": "alone_bps"})
    both = _two_flows(c, *F2_BOTH).rename(columns={"rate0_bps": "ledbat_bps", "rate1_bps": "cubic_bps"})
    lo, hi = F2_ALONE
    q = c.query(
        "SELECT run_id, avg(backlog_bytes) AS backlog_bytes FROM queue "
        f"WHERE time_s > {lo} AND time_s <= {hi} GROUP BY run_id"
    )
    df = runs.merge(alone, on="run_id").merge(both, on="run_id").merge(q, on="run_id")
    df["alone_utilisation"] = df["alone_bps"] / df["link_bps"]
    # A FIFO on a constant-rate link: a packet arriving to find B bytes queued waits 8B/rate.
    df["alone_delay_ms"] = df["backlog_bytes"] * 8 / df["link_bps"] * 1e3
    df["ledbat_share"] = [share(a, a + b) for a, b in zip(df["ledbat_bps"], df["cubic_bps"], strict=True)]
    df["utilisation"] = (df["ledbat_bps"] + df["cubic_bps"]) / df["link_bps"]
    return df.sort_values(["buffer_bdp", "repeat"]).reset_index(drop=True)


def f2_measure(c: Campaign) -> Values:
    """Per run: the buffer (BDP) and its queueing delay when full (ms), the repeat; LEDBAT alone
    over 10-30 s: its utilisation of the link and the mean queueing delay (the mean backlog over
    the link's rate); the two flows over 50-90 s: each one's mean rate at the bottleneck (bit/s),
    LEDBAT's share and the utilisation."""
    df = _f2_table(c)
    rtt = float(c.run_flows["rtt_s"].iloc[0])
    keys = ("buffer_bdp", "repeat", "alone_utilisation", "alone_delay_ms", "ledbat_bps", "cubic_bps",
            "ledbat_share", "utilisation")  # fmt: skip
    return {
        "rtt_ms": rounded(rtt * 1e3),
        "windows_s": {"alone": list(F2_ALONE), "both": list(F2_BOTH)},
        "runs": [rounded({k: r[k] for k in keys}) for _, r in df.iterrows()],
    }


def f2_figure(c: Campaign) -> Any:
    df = _f2_table(c)
    buffers = sorted(df["buffer_bdp"].unique())
    xs = list(range(len(buffers)))
    fig, axes = new_figure(2, width=4.8, sharey=False)
    _dots(axes[0], xs, [df[df["buffer_bdp"] == b]["ledbat_share"].tolist() for b in buffers], "C0", "LEDBAT")
    axes[0].axhline(0.5, color="0.5", lw=0.8, ls="--", label="even split")
    axes[0].axhline(SCAVENGER_SHARE, color="k", lw=0.8, ls=":", label=f"{SCAVENGER_SHARE:g}: yields")
    axes[0].set_ylim(0, 1)
    axes[0].set_ylabel("LEDBAT's share against CUBIC (50-90 s)")
    _dots(axes[1], xs, [df[df["buffer_bdp"] == b]["alone_delay_ms"].tolist() for b in buffers], "C1", "LEDBAT alone")
    axes[1].axhline(TARGET_MS, color="k", lw=0.8, ls="--", label="TARGET 100 ms")
    axes[1].set_ylabel("mean queueing delay, LEDBAT alone (ms)")
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xticks(xs, [f"{b:g}" for b in buffers])
        ax.set_xlabel("buffer (BDP; 1 BDP = 50 ms of queue)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def f2_judge(values: Mapping[str, Values]) -> list[Part]:
    """The abstract's claims, with section 2.5's TARGET, on means over the repeats at each buffer.

    * LEDBAT uses the available bandwidth (alone): at every buffer, its utilisation over 10-30 s is
      at least 0.9. The RFC gives no number; 0.9 leaves a tenth for the window's swings (at 1 BDP
      LEDBAT, which cannot reach TARGET there, halves its window on loss like TCP).
    * LEDBAT limits the queueing delay it adds (alone): at every buffer, the mean queueing delay is
      at most 110 ms, TARGET (100 ms, which section 2.5 says it MUST NOT exceed) plus a tenth for
      the lag of its delay filter; at 4 and 8 BDP the buffer would allow 200 and 400 ms.
    * LEDBAT is no more aggressive than standard TCP: with CUBIC (50-90 s), at every buffer its
      share of the two flows is at most 0.5. CUBIC stands in for standard TCP; it is itself more
      aggressive than RFC 5681's Reno on this path, so this is the weaker test of the two.
    * LEDBAT yields in the presence of competing flows: at every buffer whose full queue exceeds
      TARGET (4 and 8 BDP: 200 and 400 ms), its share is at most 0.1, a fifth of an even split.
      Below TARGET (1 BDP) LEDBAT never sees the queueing delay it yields to, and at 2 BDP the full
      queue equals TARGET; these are shown, not judged.
    """
    v = values["F2"]
    rows = v["runs"]
    rtt_ms = float(v.get("rtt_ms") or 50.0)
    buffers = sorted({float(r["buffer_bdp"]) for r in rows})
    util = {b: mean_where(rows, "alone_utilisation", buffer_bdp=b) for b in buffers}
    delay = {b: mean_where(rows, "alone_delay_ms", buffer_bdp=b) for b in buffers}
    shares = {b: mean_where(rows, "ledbat_share", buffer_bdp=b) for b in buffers}
    deep = [b for b in buffers if b * rtt_ms > TARGET_MS]
    shallow = {b: shares[b] for b in buffers if b not in deep}
    return [
        Part(
            "alone, LEDBAT uses the available bandwidth (abstract)",
            bool(util) and all(x >= 0.9 for x in util.values()),
            f"utilisation by buffer (BDP): {_fmt(util)} (threshold 0.9)",
        ),
        Part(
            "alone, LEDBAT limits the queueing delay it adds to TARGET (abstract, 2.5)",
            bool(delay) and all(x <= 1.1 * TARGET_MS for x in delay.values()),
            f"mean queueing delay by buffer: {_fmt(delay, ' ms', 1)} (threshold {1.1 * TARGET_MS:g} ms; TARGET "
            f"{TARGET_MS:g} ms)",
        ),
        Part(
            "LEDBAT is no more aggressive than standard TCP (abstract)",
            bool(shares) and all(x <= 0.5 for x in shares.values()),
            f"LEDBAT's share against CUBIC by buffer: {_fmt(shares)} (threshold 0.5)",
        ),
        Part(
            "LEDBAT yields to a competing flow where the queue can exceed TARGET (abstract)",
            bool(deep) and all(shares[b] <= SCAVENGER_SHARE for b in deep),
            f"LEDBAT's share at buffers over TARGET: {_fmt({b: shares[b] for b in deep})} (threshold "
            f"{SCAVENGER_SHARE:g}); not judged: {_fmt(shallow) or 'none'}",
        ),
    ]


# ---------------------------------------------------------------- F3: Prague and CUBIC through DualPI2


def _f3_table(c: Campaign) -> pd.DataFrame:
    runs = _runs(c, {"rtt_s": "topology.rtt"})
    df = runs.merge(_two_flows(c, _second_half(c)), on="run_id").rename(
        columns={"rate0_bps": "prague_bps", "rate1_bps": "cubic_bps"}
    )
    q = c.query(
        "SELECT run_id, avg(dualpi2_l_delay_ms) AS l_delay_ms, quantile_cont(dualpi2_l_delay_ms, 0.99) AS "
        "l_delay_p99_ms, avg(dualpi2_c_delay_ms) AS c_delay_ms, quantile_cont(dualpi2_c_delay_ms, 0.99) AS "
        f"c_delay_p99_ms FROM queue WHERE time_s > {_second_half(c)} GROUP BY run_id"
    )
    df = df.merge(q, on="run_id")
    df["rtt_ms"] = df["rtt_s"] * 1e3
    df["ratio"] = df["prague_bps"] / df["cubic_bps"]
    df["utilisation"] = (df["prague_bps"] + df["cubic_bps"]) / df["link_bps"]
    return df.sort_values(["rtt_ms", "repeat"]).reset_index(drop=True)


def f3_measure(c: Campaign) -> Values:
    """Per run: the base RTT (ms), the repeat, each flow's mean rate at the bottleneck over the runs'
    second half (30-60 s; bit/s), Prague's over CUBIC's, the utilisation, and each queue's sojourn
    (the last packet to leave it, sampled every 10 ms) over the same window: mean and 99th
    percentile, ms."""
    df = _f3_table(c)
    keys = ("rtt_ms", "repeat", "prague_bps", "cubic_bps", "ratio", "utilisation", "l_delay_ms", "l_delay_p99_ms",
            "c_delay_ms", "c_delay_p99_ms")  # fmt: skip
    return {"window_s": [_second_half(c), None], "runs": [rounded({k: r[k] for k in keys}) for _, r in df.iterrows()]}


def f3_figure(c: Campaign) -> Any:
    df = _f3_table(c)
    rtts = sorted(df["rtt_ms"].unique())
    xs = list(range(len(rtts)))
    fig, axes = new_figure(2, width=4.8, sharey=False)
    ax = axes[0]
    ax.axhspan(0.5, 2.0, color="0.9", label="within a factor 2")
    _dots(ax, xs, [df[df["rtt_ms"] == r]["ratio"].tolist() for r in rtts], "C0", "Prague / CUBIC")
    ax.axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.set_ylabel("rate ratio at the bottleneck (second half)")
    ax = axes[1]
    _dots(ax, xs, [df[df["rtt_ms"] == r]["l_delay_ms"].tolist() for r in rtts], "C0", "L queue (Prague)")
    _dots(ax, xs, [df[df["rtt_ms"] == r]["c_delay_ms"].tolist() for r in rtts], "C1", "C queue (CUBIC)")
    ax.axhline(1.0, color="C0", lw=0.8, ls=":", label="1 ms")
    ax.axhline(CLASSIC_TARGET_MS, color="C1", lw=0.8, ls=":", label="15 ms target")
    ax.set_yscale("log")
    ax.set_ylabel("mean sojourn (ms)")
    for ax in axes:
        ax.set_xticks(xs, [f"{r:g}" for r in rtts])
        ax.set_xlabel("base RTT of both flows (ms)")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def f3_judge(values: Mapping[str, Values]) -> list[Part]:
    """The coupling's three aims, on means over the repeats at each base RTT (30-60 s).

    * Roughly equal rates at equal RTT (k = 2, section 2.1; "about the same rate"): at every RTT,
      Prague's rate over CUBIC's lies in [1/2, 2], neither flow getting more than twice the other
      (the same reading of "about even" as F1's). The RFC's k = 2 is itself approximate (window
      balance with Reno would need k = 1.64), and the Classic flow's RTT includes its 15 ms queue.
    * Sub-millisecond average queueing delay in the L queue: at every RTT, the L queue's mean
      sojourn is below 1 ms, the source's own bound.
    * The Classic queue held near its 15 ms target: at every RTT, the C queue's mean sojourn lies
      within 15 +- 5 ms. The PI controller integrates the error of the larger head age, so its
      mean sits at the target once settled; +-5 ms (a third of the target) allows for the
      difference between that input and the sojourn sampled here and for CUBIC's sawtooth.
    """
    rows = values["F3"]["runs"]
    rtts = sorted({float(r["rtt_ms"]) for r in rows})
    ratio = {r: mean_where(rows, "ratio", rtt_ms=r) for r in rtts}
    ldel = {r: mean_where(rows, "l_delay_ms", rtt_ms=r) for r in rtts}
    lp99 = {r: mean_where(rows, "l_delay_p99_ms", rtt_ms=r) for r in rtts}
    cdel = {r: mean_where(rows, "c_delay_ms", rtt_ms=r) for r in rtts}
    util = {r: mean_where(rows, "utilisation", rtt_ms=r) for r in rtts}
    return [
        Part(
            "Prague and CUBIC get roughly equal rates at equal RTT (2.1)",
            bool(ratio) and all(0.5 <= x <= 2.0 for x in ratio.values()),
            f"Prague / CUBIC by RTT (ms): {_fmt(ratio)} (threshold 1/2 to 2); utilisation {_fmt(util)}",
        ),
        Part(
            "the L4S queue keeps sub-millisecond average queueing delay (abstract)",
            bool(ldel) and all(x < 1.0 for x in ldel.values()),
            f"L queue mean sojourn by RTT: {_fmt(ldel, ' ms', 3)} (threshold below 1 ms); p99 (not judged) "
            f"{_fmt(lp99, ' ms', 2)}",
        ),
        Part(
            "the Classic queue is held near its 15 ms target (Appendix A)",
            bool(cdel) and all(abs(x - CLASSIC_TARGET_MS) <= 5.0 for x in cdel.values()),
            f"C queue mean sojourn by RTT: {_fmt(cdel, ' ms', 1)} (threshold 10 to 20 ms)",
        ),
    ]


F_SERIES = [
    Preset(
        "F1",
        "Copa against CUBIC across buffers",
        ARUN,
        "arun-2018/f1-copa-vs-cubic.toml",
        claim=(
            "When the bottleneck is shared with loss-based flows that fill up buffers, Copa, like other "
            "delay-sensitive schemes, achieves low throughput; detecting buffer-fillers from the delay's evolution "
            "and running AIMD on delta (its competitive mode), Copa co-exists well with Cubic"
        ),
        where=(
            "abstract (the body's section 2.2 and its TCP-coexistence evaluation were not read; the claim is "
            "stated from the abstract)"
        ),
        reported="no numbers in the abstract",
        cause=(
            "at 4 BDP CUBIC never lets the queue drain (its low point over 30-60 s was 357 packets, 86 ms, in the "
            "first repeat), so Copa's RTT_min, a minimum over 10 s, climbs with the standing queue (135 ms on average "
            "against the 40 ms path): Copa then measures a queue of 24 ms where 119 ms stand, its test finds the "
            "queue 'nearly empty' and returns to default mode 41 % of the time (7 % at 2 BDP), resetting delta to "
            "0.5 once an RTT has passed since its last competitive-mode loss, and its mean 1/delta was 19 against "
            "50-60 at 1-2 BDP; its window averaged 143 packets against CUBIC's 524 (figures over 30-60 s of the "
            "first repeat, from the flows' Copa columns)"
        ),
        figure=f1_figure,
        measure=f1_measure,
        judge=f1_judge,
        quick={"duration": "20s", "sweep.repeat": 1, "sweep.topology.bottleneck.buffer": ["0.5bdp", "2bdp"]},
    ),
    Preset(
        "F2",
        "LEDBAT against CUBIC across buffers",
        LEDBAT,
        "rfc6817/f2-ledbat-vs-cubic.toml",
        claim=(
            "LEDBAT seeks to use the available bandwidth while limiting the increase in queueing delay it causes "
            "(TARGET 100 ms), is no more aggressive than standard TCP congestion control, and yields in the presence "
            "of competing flows"
        ),
        where=(
            "abstract; section 2.5 for TARGET = 100 ms (the body was not re-read: TARGET as implementations quote "
            "section 2.5)"
        ),
        reported="TARGET 100 ms; no throughput numbers",
        cause=(
            "RFC 6817's decrease is linear, GAIN x (queueing delay / TARGET - 1) packets per RTT: about one packet "
            "per RTT at twice TARGET, 3-4 packets a second on this path, against windows of hundreds of packets. "
            "Alone at 8 BDP, slow start (ccarena's default; the RFC's pseudo-code has none) left a window of about "
            "1000 packets and 180-195 ms of queue, which shrank by 3.6 packets a second (1002 at 10 s, 948 at "
            "25 s). With CUBIC at 4 BDP (first repeat) the queue stood at 140-196 ms and LEDBAT's window went from 563 packets at "
            "30 s to 459 at 60 s, falling faster only at the losses both flows took; 20-60 s after CUBIC joined it "
            "still had 0.32 of the link (0.28 at 8 BDP)"
        ),
        figure=f2_figure,
        measure=f2_measure,
        judge=f2_judge,
        quick={"sweep.repeat": 1, "sweep.topology.bottleneck.buffer": ["1bdp", "4bdp"]},
    ),
    Preset(
        "F3",
        "TCP Prague against CUBIC through DualPI2 across RTTs",
        DUALQ,
        "rfc9332/f3-prague-vs-cubic-dualpi2.toml",
        claim=(
            "The coupling (k = 2) makes a scalable flow and a Classic flow run at about the same rate at equal RTT, "
            "the L4S queue keeps sub-millisecond average queueing delay, and the Classic queue is held near its "
            "15 ms target"
        ),
        where=(
            "section 2.1 (coupling), abstract and section 1 (L4S delay), Appendix A (15 ms target); only the first "
            "draft's abstract (draft-briscoe-aqm-dualq-coupled-00: 'about the same rate whether it uses DCTCP or "
            "TCP Reno/Cubic') was read, the RFC's text is stated as cited"
        ),
        reported="target 15 ms, k = 2; no rate numbers",
        cause=(
            "Prague's cuts come further apart than its rate law assumes: as in Linux, an echo that Prague's 25 ms "
            "rule refuses to act on still puts the connection in CWR, which ignores further echoes for a round. "
            "At 20 ms (one Prague and one CUBIC flow, 60 s, the run of tests/test_l4s.py) Prague entered CWR 1,789 "
            "times, every 34 ms, and a third of those entries brought no cut, so its cuts came 49 ms apart. The balance r = 2(1 - p) I / (T^2 alpha), with I the measured "
            "interval between cuts and T = 25 ms, gives about 68 and 32 Mbit/s (2.1); with a cut every 25 ms it "
            "would give 52 and 48 (1.09), the Classic flow's 34 ms smoothed RTT (its queue included) already "
            "counted. The effect is largest just below 25 ms, where a refused cut costs a whole round: 1.15, 1.62, "
            "2.29 and 1.66 at 5, 10, 20 and 40 ms"
        ),
        figure=f3_figure,
        measure=f3_measure,
        judge=f3_judge,
        quick={"duration": "20s", "sweep.repeat": 1, "sweep.topology.rtt": ["10ms", "40ms"]},
    ),
]
