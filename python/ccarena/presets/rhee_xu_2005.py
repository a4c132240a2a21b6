"""Rhee and Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", PFLDnet 2005 (talk): A1-A4.

The talk's claims are on its summary slide (slide 24, "3.5 Evaluation Summary"): which of the
high-speed variants it evaluated (CUBIC, BIC, HSTCP, STCP, H-TCP and FAST) were friendly to
standard TCP (A1 in simulation, A2 on the testbed), fair between flows of different RTTs (A3)
and stable (A4). Each preset states that claim for what its experiment measures, runs every
variant the talk evaluated, and judges the claim on the quantity the talk plotted. CUBIC is the
2005 version as far as ccarena has its parameters (:data:`CUBIC_2005_PARAMS`); today's Linux CUBIC
runs beside it under its own name and is reported, not judged. FAST runs with small alphas, as the
talk says it did (:data:`FAST_SMALL_ALPHAS`); its Gbit/s alpha of 200 runs beside in A1 and A2,
reported, not judged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .common import MBPS, RHEE_XU, mean_where, records, second_half_s, share_curves
from .figures import curves, new_figure
from .measures import column, per_run, ratio, share, window_cov
from .registry import Part, Preset, Values

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign import Campaign

__all__ = [
    "A_SERIES",
    "CUBIC_2005",
    "CUBIC_2005_PARAMS",
    "CUBIC_LINUX",
    "FAIR_EXPONENT",
    "FAST_GBIT_ALPHA",
    "FAST_SMALL_ALPHAS",
    "GOOD_SHARE",
    "SEPARATE_SE",
    "SHORT_RTT_S",
    "a1_judge",
    "a2_judge",
    "a3_judge",
    "a4_judge",
    "algorithm",
]

CUBIC_2005 = "cubic-2005"
"""CUBIC as the talk ran it (February 2005, before Linux 2.6.13 shipped CUBIC v2.0): the run with
:data:`CUBIC_2005_PARAMS`."""

CUBIC_2005_PARAMS: dict[str, Any] = {
    "beta": 0.8,
    "hystart": False,
    "initial_ssthresh": 100,
    "max_increment": 16,
    "cnt_before_loss": 50,
    "reno_estimate_per_ack": True,
}
"""The 2005 CUBIC's parameters on ccarena's CUBIC (Linux ``tcp_cubic.c`` v2.3 code with v2.0's rules
switched in): window multiplier 819/1024 after a loss, no HyStart (added in Linux 2.6.29), initial
ssthresh 100 packets, the growth cap of at most 16 packets per RTT per 100 ms of minimum RTT
(``max_increment``), a fixed 2 % per RTT before the first loss (``cnt_before_loss``, v2.0's
``cnt = 50``, where v2.3 grows at least 5 %), and a Reno estimate that counts ACKs, not packets
(``reno_estimate_per_ack``). These are CUBIC v2.0's defaults and rules, the first Linux CUBIC (2.6.13,
August 2005; the code as in Linux 2.6.20's and 2.6.21's ``tcp_cubic.c``); v2.0 took the cap and the
initial ssthresh unchanged from BIC's Linux code (BIC's ``max_increment`` = 16 = Smax,
``initial_ssthresh`` = 100), and the talk presents CUBIC
as an enhanced BIC (slide 4) run on Linux (slide 8). v2.0's ``cube_rtt_scale`` scaling error
(2.6.13-2.6.18, found in 2006) is left out: an error of the kernel port, not part of the algorithm
the talk presents."""

CUBIC_LINUX = "cubic-linux"
"""Today's Linux CUBIC (multiplier 717/1024, HyStart): run beside the 2005 version, not judged."""

NOT_NAMED_FRIENDLY = ("bic", "highspeed", "scalable")
"""The variants the talk evaluated for TCP-friendliness and did not call friendly (slide 24 names
CUBIC and H-TCP, and says FAST depends on its alpha)."""

NOT_NAMED_FAIR = ("bic", "highspeed", "scalable", "htcp")
"""The variants the talk evaluated for RTT fairness and did not call fair (slide 24 names CUBIC
and FAST)."""

FAST_SMALL_ALPHAS = (10.0, 100.0)
"""The alphas (packets FAST keeps queued) FAST is judged at: the talk says its alpha was small
without giving it (slide 23: FAST's flows got less than standard TCP, which the talk puts down to
the small alpha; slide 24: FAST needs its alpha tuned). Small simulations are taken to use alpha 10-100,
against the 200 of FAST's 2004 Gbit/s experiments (Jin, Wei and Low, "FAST TCP: motivation,
architecture, algorithms, performance", IEEE INFOCOM 2004; ``ccarena list cc``: marked unconfirmed);
neither value was confirmed in a second source. Both ends are run and each FAST part must hold at
both, so that no part rests on one value chosen inside that range."""

FAST_GBIT_ALPHA = 200.0
"""ccarena's default alpha, the Gbit/s value of FAST's authors (``ccarena list cc``): run beside
the small alphas in A1 and A2, reported, not judged (the talk says its alpha was small)."""

FAST_SMALL = tuple(f"fast-{a:g}" for a in FAST_SMALL_ALPHAS)
"""FAST's names in the values at the judged alphas (:func:`algorithm`)."""

HIGH_SPEED = (CUBIC_2005, "bic", "highspeed", "scalable", "htcp", *FAST_SMALL)
"""Every high-speed variant the talk evaluated, CUBIC in its 2005 version and FAST at each small
alpha."""

NAMES = {
    CUBIC_2005: "CUBIC (2005)",
    CUBIC_LINUX: "CUBIC (Linux today)",
    "bic": "BIC",
    "highspeed": "HSTCP",
    "scalable": "STCP",
    "htcp": "H-TCP",
    **{f"fast-{a:g}": f"FAST (alpha {a:g})" for a in (*FAST_SMALL_ALPHAS, FAST_GBIT_ALPHA)},
}

SEPARATE_SE = 2.0
"""A ranking between two variants (A3, A4) holds only when the repeats separate them: the
difference of their means over repeats exceeds this many standard errors of the difference,
sqrt(s_a^2/n_a + s_b^2/n_b) (s: the sample standard deviation over repeats). Two standard errors
is the usual two-sided 95 % bound for a normal difference; with fewer than 2 repeats of either
variant the spread is unknown and the ranking does not hold (the quick form runs 2)."""

GOOD_SHARE = 0.4
"""Standard TCP's share of the two flows' throughput at or above which a high-speed variant's
friendliness counts as good: 80 % of a fair share (0.5), the fraction of its fair share at which
the fair-share definition of high-speed TCP evaluations says a flow has its share (delta = 0.2;
README, Metrics, ``convergence``). The talk gives no number. Below it standard TCP gets less than
two thirds of what the high-speed flow gets."""

SHORT_RTT_S = 0.05
"""RTTs below this are the talk's short-RTT networks (5 and 10 ms, slides 10 and 12-13), RTTs at
or above it the long ones (100 and 200 ms, slides 11 and 14-15)."""

FAIR_EXPONENT = 1.5
"""The largest exponent e in throughput ratio = (RTT ratio)^e for which RTT fairness counts as
good. Standard TCP's two analytic references are e = 1 (independent losses, Mathis et al.'s
x ∝ 1/(RTT√p)) and e = 2 (synchronised losses: each window grows T/RTT per period); CUBIC's
design target is linear RTT fairness, e = 1 (Ha, Rhee and Xu, 2008). A ratio whose exponent is
nearer 1 than 2 on the log scale (e ≤ 1.5, the geometric midpoint) is as fair as standard TCP at
its fairest. For comparison, the response-function argument of the BIC paper (Xu, Harfoush and
Rhee, INFOCOM 2004: e = 1/(1 - d) for a window w ∝ p^-d under synchronised loss) gives about 6
for HSTCP and no bound for STCP."""


# ---------------------------------------------------------------- shared helpers


def algorithm(cc: str, params: str | Mapping[str, Any] | None = None) -> str:
    """The name of a flow group's algorithm in the values: ccarena's name, except that CUBIC is
    :data:`CUBIC_2005` when its window multiplier is 0.8 (the 2005 value) and
    :data:`CUBIC_LINUX` otherwise, and FAST is ``fast-<alpha>`` (alpha in packets, default
    :data:`FAST_GBIT_ALPHA`)."""
    p = json.loads(params) if isinstance(params, str) and params else dict(params or {})
    if cc == "cubic":
        return CUBIC_2005 if p.get("beta") is not None and abs(float(p["beta"]) - 0.8) < 0.01 else CUBIC_LINUX
    if cc == "fast":
        return f"fast-{float(p.get('alpha', FAST_GBIT_ALPHA)):g}"
    return cc


def _algorithms(df: pd.DataFrame, i: int = 0) -> list[str]:
    """Flow group ``i``'s algorithm name (:func:`algorithm`) in every run of ``df``."""
    cc = column(df, f"flows[{i}].cc")
    try:
        params = column(df, f"flows[{i}].params")
    except KeyError:
        return [algorithm(v) for v in df[cc]]
    return [algorithm(a, p) for a, p in zip(df[cc], df[params], strict=True)]


def _name(alg: str) -> str:
    return NAMES.get(alg, alg)


def _order(algs: Iterable[str]) -> list[str]:
    """The algorithms in the order of :data:`NAMES` (the rest after, sorted)."""
    algs = set(algs)
    return [a for a in NAMES if a in algs] + sorted(algs - set(NAMES))


def _fmt(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.2f}"


def _rows(values: Mapping[str, Values], preset_id: str) -> list[dict[str, Any]]:
    return list(values[preset_id]["runs"])


def _distinct(rows: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    return sorted({r[key] for r in rows if r.get(key) is not None})


def _ge(a: float, b: float) -> bool:
    """a ≥ b, false when either is missing (NaN)."""
    return math.isfinite(a) and math.isfinite(b) and a >= b


def _mean_se(xs: Sequence[float]) -> tuple[float, float, int]:
    """Mean, squared standard error of the mean (s^2/n, s the sample standard deviation) and
    count of the finite values of ``xs``; the squared error is NaN below 2 values."""
    v = [x for x in xs if x is not None and math.isfinite(x)]
    n = len(v)
    if n == 0:
        return float("nan"), float("nan"), 0
    m = math.fsum(v) / n
    if n < 2:
        return m, float("nan"), n
    return m, math.fsum((x - m) ** 2 for x in v) / (n - 1) / n, n


def _separated_below(a: Sequence[float], b: Sequence[float]) -> bool:
    """The repeats ``a`` lie below the repeats ``b`` beyond their spread: mean(b) - mean(a) >
    :data:`SEPARATE_SE` · sqrt(se_a^2 + se_b^2), each with at least 2 finite repeats."""
    ma, va, _ = _mean_se(a)
    mb, vb, _ = _mean_se(b)
    if not all(math.isfinite(x) for x in (ma, va, mb, vb)):
        return False
    return mb - ma > SEPARATE_SE * math.sqrt(va + vb)


# ---------------------------------------------------------------- A1 and A2: TCP-friendliness


def _shares(c: Campaign) -> pd.DataFrame:
    """Per run: the high-speed flow's (flow 0) and standard TCP's (flow 1) mean rate over the
    second half of the run, standard TCP's share of the two (:func:`share`) and the algorithm."""
    df = per_run(c, t_from=second_half_s(c))
    df["tcp_share"] = [share(b, a + b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    df["alg"] = _algorithms(df)
    return df


def a1_measure(c: Campaign) -> Values:
    """Per run: algorithm, RTT, bottleneck rate, repeat, the two flows' rates and standard TCP's
    share (the quantity of slides 10-11)."""
    df = _shares(c)
    cols = {
        "alg": "alg",
        "rtt_s": "topology.rtt",
        "rate_bps": "topology.bottleneck.rate",
        "repeat": "repeat",
        "hs_bps": "rate_0",
        "tcp_bps": "rate_1",
        "tcp_share": "tcp_share",
    }
    order = ["alg", column(df, "topology.rtt"), column(df, "topology.bottleneck.rate"), "repeat"]
    return {"runs": records(df.sort_values(order), cols)}


def a1_figure(c: Campaign) -> Any:
    df = _shares(c)
    df["algorithm"] = [_name(a) for a in df["alg"]]
    df = df.set_index("alg").loc[_order(df["alg"])].reset_index()
    fig = share_curves(df, "standard TCP's share of throughput")
    rates = sorted(df[column(df, "topology.bottleneck.rate")].unique())
    for ax in fig.axes:
        ax.axhline(GOOD_SHARE, color="k", ls="--", lw=0.8)
        ax.axhline(0.5, color="k", ls=":", lw=0.8)
        ax.set_xticks([r * MBPS for r in rates], [f"{r * MBPS:g}" for r in rates])
        ax.minorticks_off()
    return fig


def _friendliness(rows: Sequence[Mapping[str, Any]], other: str, label: Callable[[Any], str]) -> list[Part]:
    """The parts of slide 24's friendliness claim on per-run records with keys ``alg``,
    ``rtt_s``, ``other`` (the second swept setting: bandwidth or background load) and
    ``tcp_share``; ``label`` formats a value of ``other``. Shares are means over repeats; a
    setting is one (RTT, ``other``) pair; "short" and "long" RTTs are split at
    :data:`SHORT_RTT_S`."""
    rtts = _distinct(rows, "rtt_s")
    short = [r for r in rtts if r < SHORT_RTT_S]
    long_ = [r for r in rtts if r >= SHORT_RTT_S]
    others = _distinct(rows, other)

    def at(alg: str, rtt: float, o: Any) -> float:
        return mean_where(rows, "tcp_share", alg=alg, rtt_s=rtt, **{other: o})

    def over(alg: str, rtt_set: Sequence[float]) -> float:
        """The mean share over the settings at the RTTs of ``rtt_set`` (each setting weighs one)."""
        xs = [at(alg, r, o) for r in rtt_set for o in others]
        xs = [x for x in xs if math.isfinite(x)]
        return math.fsum(xs) / len(xs) if xs else float("nan")

    def ms(rtt_set: Sequence[float]) -> str:
        return "/".join(f"{r * 1e3:g}" for r in rtt_set) + " ms"

    parts: list[Part] = []
    # 1-2: good friendliness at short RTT, at every setting.
    for alg in (CUBIC_2005, "htcp"):
        pts = [(r, o, at(alg, r, o)) for r in short for o in others]
        worst = min((s for *_, s in pts if math.isfinite(s)), default=float("nan"))
        ok = bool(pts) and all(math.isfinite(s) and s >= GOOD_SHARE for *_, s in pts)
        parts.append(
            Part(
                f"{_name(alg)} leaves standard TCP a good share (at least {GOOD_SHARE:g}) at short RTT",
                ok,
                f"standard TCP's share against {_name(alg)} at "
                + ", ".join(f"{r * 1e3:g} ms/{label(o)} {_fmt(s)}" for r, o, s in pts)
                + f" (lowest {_fmt(worst)})",
            )
        )

    # 3: CUBIC and H-TCP at least as friendly as each variant the talk did not call friendly, at
    # short RTT. The ranking a summary's naming implies is judged where the summary states the
    # named variants' property without qualification: here "especially on short RTT networks"
    # (and slide 5 speaks of short RTTs too), in A3 "under both short and long RTT paths". The
    # same ranking at long RTT is reported in part 4's numbers, not judged.
    def ranking(rtt_set: Sequence[float]) -> tuple[bool, str]:
        mean = {a: over(a, rtt_set) for a in (CUBIC_2005, "htcp", *NOT_NAMED_FRIENDLY)}
        linux = over(CUBIC_LINUX, rtt_set)
        ok = bool(rtt_set) and all(_ge(mean[a], mean[b]) for a in (CUBIC_2005, "htcp") for b in NOT_NAMED_FRIENDLY)
        text = ", ".join(f"{_name(a)} {_fmt(v)}" for a, v in mean.items()) + (
            f"; {_name(CUBIC_LINUX)} {_fmt(linux)}" if math.isfinite(linux) else ""
        )
        return ok, text

    ok, text = ranking(short)
    parts.append(
        Part(
            "CUBIC and H-TCP at least as friendly as BIC, HSTCP and STCP at short RTT",
            ok,
            f"mean share at {ms(short)}: {text} (Linux's CUBIC today not judged)",
        )
    )
    long_ok, long_text = ranking(long_)
    # 4: better at short RTT than at long.
    gap = {a: (over(a, short), over(a, long_)) for a in (CUBIC_2005, "htcp")}
    parts.append(
        Part(
            "CUBIC's and H-TCP's friendliness better at short than at long RTT",
            all(math.isfinite(s) and math.isfinite(lg) and s > lg for s, lg in gap.values()),
            "mean share "
            + ", ".join(
                f"{_name(a)} {_fmt(s)} at {ms(short)} vs {_fmt(lg)} at {ms(long_)}" for a, (s, lg) in gap.items()
            )
            + "; not judged (the talk stresses short RTTs where it names the friendly variants, slides 5 and 24, "
            "so the ranking its naming implies is judged there; at long RTT it would be ccarena's inference): "
            + f"the ranking at {ms(long_)}, mean share "
            + long_text
            + f" ({'CUBIC and H-TCP' if long_ok else 'not both CUBIC and H-TCP'} at least as friendly as BIC, "
            "HSTCP and STCP)",
        )
    )
    # 5: FAST with a small alpha gets less than standard TCP (slide 23), at every small alpha run.
    fast = {a: over(f"fast-{a:g}", rtts) for a in FAST_SMALL_ALPHAS}
    gbit = over(f"fast-{FAST_GBIT_ALPHA:g}", rtts)
    parts.append(
        Part(
            "FAST with a small alpha gets less throughput than standard TCP",
            all(math.isfinite(x) and x > 0.5 for x in fast.values()),
            "standard TCP's mean share against FAST over every setting (above 0.5: FAST gets less): "
            + ", ".join(f"alpha {a:g} {_fmt(x)}" for a, x in fast.items())
            + (
                f"; not judged: alpha {FAST_GBIT_ALPHA:g} (the Gbit/s value) {_fmt(gbit)}"
                if math.isfinite(gbit)
                else ""
            ),
        )
    )
    return parts


def a1_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 24's friendliness claim on the simulation (slides 10-11): five parts.

    1-2. CUBIC (2005) and H-TCP each leave standard TCP at least :data:`GOOD_SHARE` at the short
         RTT (10 ms) at every bandwidth (mean over repeats): good friendliness where the summary
         says it is best.
    3.   At short RTT, the mean share (over bandwidths) against CUBIC and against H-TCP is at
         least that against each of BIC, HSTCP and STCP, the variants the talk evaluated and did
         not call friendly (slide 5 warns that their growth can remain aggressive toward
         standard TCP at short RTTs). The same ranking at long RTT is reported in part 4's
         numbers and not judged: neither slide 5 nor slide 24 ranks the variants at long RTT.
         Slide 5's other case, low-speed networks, is not judged either: this part averages
         the shares over the bandwidths, and no part compares low bandwidths with high ones.
    4.   Friendliness is better at short RTT: for CUBIC and H-TCP the mean share at 10 ms
         exceeds that at 100 ms.
    5.   FAST with a small alpha gets less than standard TCP: its mean share over every setting
         exceeds 0.5 at each alpha of :data:`FAST_SMALL_ALPHAS` (slide 23 reports this for the
         friendliness tests and puts it down to the small alpha used; slide 24 concludes that
         FAST's alpha needs tuning). FAST at :data:`FAST_GBIT_ALPHA` is reported, not judged.
    """
    return _friendliness(_rows(values, "A1"), "rate_bps", lambda v: f"{v * MBPS:g} Mbit/s")


def _a2_table(c: Campaign) -> pd.DataFrame:
    df = _shares(c)
    rate = df["bottleneck.rate_bps"] if "bottleneck.rate_bps" in df.columns else 800e6
    df["hs_util"], df["tcp_util"] = df["rate_0"] / rate, df["rate_1"] / rate
    return df


def a2_measure(c: Campaign) -> Values:
    """Per run: algorithm, RTT, background load, repeat, each flow's utilisation of the link (the
    quantity of slides 12-15) and standard TCP's share of the two flows."""
    df = _a2_table(c)
    cols = {
        "alg": "alg",
        "rtt_s": "topology.rtt",
        "load": "background.web[0].load",
        "repeat": "repeat",
        "hs_util": "hs_util",
        "tcp_util": "tcp_util",
        "tcp_share": "tcp_share",
    }
    order = ["alg", column(df, "topology.rtt"), column(df, "background.web[0].load"), "repeat"]
    return {"runs": records(df.sort_values(order), cols)}


def a2_figure(c: Campaign) -> Any:
    df = _a2_table(c)
    rtt, load = column(df, "topology.rtt"), column(df, "background.web[0].load")
    algs = _order(df["alg"])
    loads = sorted(df[load].unique())
    rtts = sorted(df[rtt].unique())
    fig, axes = new_figure(len(rtts), width=4.2)
    width = 0.8 / max(1, len(loads))
    for ax, rv in zip(axes, rtts, strict=True):
        sub = df[df[rtt] == rv]
        for j, lv in enumerate(loads):
            xs = [i + (j - (len(loads) - 1) / 2) * width for i in range(len(algs))]
            g = sub[sub[load] == lv].groupby("alg")[["hs_util", "tcp_util"]].mean().reindex(algs)
            hatch = None if j == 0 else "//"
            ax.bar(xs, g["hs_util"], width, color="C0", hatch=hatch, label=f"high-speed, load {lv:g}")
            ax.bar(xs, g["tcp_util"], width, bottom=g["hs_util"], color="C1", hatch=hatch, label=f"TCP, load {lv:g}")
        ax.set_xticks(range(len(algs)), [_name(a) for a in algs], rotation=45, ha="right", fontsize=7)
        ax.set_title(f"RTT {rv * 1e3:g} ms")
        ax.set_ylim(0, 1)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("utilisation of the link")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    return fig


def a2_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 24's friendliness claim on the testbed (slides 12-15): the five parts of
    :func:`a1_judge`, with the settings (RTT, background load): short RTT is 5 and 10 ms, long
    100 and 200 ms, and every part is judged on standard TCP's share of the two long flows'
    throughput (the background takes the same from both). Slide 5's low-speed case is not
    judged: the link is 800 Mbit/s in every run."""
    return _friendliness(_rows(values, "A2"), "load", lambda v: f"load {v:g}")


# ---------------------------------------------------------------- A3: RTT fairness


def _a3_table(c: Campaign) -> pd.DataFrame:
    df = per_run(c, t_from=second_half_s(c))
    df["ratio"] = [ratio(a, b) for a, b in zip(df["rate_0"], df["rate_1"], strict=True)]
    df["rtt_short_s"] = df[column(df, "flows[0].rtt")]
    df["rtt_long_s"] = df[column(df, "flows[1].rtt")]
    df["rtt_ratio"] = df["rtt_long_s"] / df["rtt_short_s"]
    df["alg"] = _algorithms(df)
    return df


def a3_measure(c: Campaign) -> Values:
    """Per run: algorithm, the two flows' RTTs, repeat, their rates and the throughput ratio of
    the shorter-RTT flow over the longer-RTT one (slide 16's quantity)."""
    df = _a3_table(c)
    cols = {
        "alg": "alg",
        "rtt_short_s": "rtt_short_s",
        "rtt_long_s": "rtt_long_s",
        "repeat": "repeat",
        "short_bps": "rate_0",
        "long_bps": "rate_1",
        "ratio": "ratio",
    }
    return {"runs": records(df.sort_values(["alg", "rtt_short_s", "rtt_long_s", "repeat"]), cols)}


def a3_figure(c: Campaign) -> Any:
    df = _a3_table(c)
    df["algorithm"] = [_name(a) for a in df["alg"]]
    df = df.set_index("alg").loc[_order(df["alg"])].reset_index()
    fig = curves(
        df,
        "rtt_ratio",
        "ratio",
        "algorithm",
        xlabel="RTT ratio (longer / shorter)",
        ylabel="throughput ratio (short / long RTT)",
    )
    fig.set_size_inches(6.5, 4.5)
    ax = fig.axes[0]
    ax.set_yscale("log")
    ax.set_xscale("log")
    xs = sorted(df["rtt_ratio"].unique())
    for e, ls in ((1.0, ":"), (FAIR_EXPONENT, "--"), (2.0, ":")):
        ax.plot(xs, [x**e for x in xs], ls, color="k", lw=0.8)
    pairs = df.groupby("rtt_ratio")[["rtt_short_s", "rtt_long_s"]].first()
    ms = [(pairs.loc[x, "rtt_short_s"] * 1e3, pairs.loc[x, "rtt_long_s"] * 1e3) for x in xs]
    ax.set_xticks(xs, [f"{x:g}\n({a:g}/{b:g} ms)" for x, (a, b) in zip(xs, ms, strict=True)])
    ax.minorticks_off()
    fig.tight_layout()
    return fig


def _exponents(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, float, float], float]:
    """Per (algorithm, shorter RTT, longer RTT): the exponent e with throughput ratio = (RTT
    ratio)^e, the ratio being the geometric mean over repeats (a run in which either flow got
    nothing gives e = inf, unfair without bound; a pair of equal RTTs is left out)."""
    out: dict[tuple[str, float, float], float] = {}
    keys = {(r["alg"], r["rtt_short_s"], r["rtt_long_s"]) for r in rows}
    for alg, lo, hi in keys:
        if not hi > lo:
            continue
        rs = [r["ratio"] for r in rows if (r["alg"], r["rtt_short_s"], r["rtt_long_s"]) == (alg, lo, hi)]
        if any(x is None or not x > 0 for x in rs):
            out[(alg, lo, hi)] = math.inf
            continue
        out[(alg, lo, hi)] = math.fsum(math.log(x) for x in rs) / len(rs) / math.log(hi / lo)
    return out


def _abs_exponent_per_repeat(rows: Sequence[Mapping[str, Any]], alg: str) -> list[float]:
    """Per repeat of ``alg``: the mean over its pairs of RTTs of |e|, e = ln(throughput ratio) /
    ln(RTT ratio) in that repeat (inf when either flow got nothing; pairs of equal RTTs left
    out)."""
    by_rep: dict[Any, list[float]] = {}
    for r in rows:
        if r["alg"] != alg or not r["rtt_long_s"] > r["rtt_short_s"]:
            continue
        x = r["ratio"]
        e = abs(math.log(x)) / math.log(r["rtt_long_s"] / r["rtt_short_s"]) if x is not None and x > 0 else math.inf
        by_rep.setdefault(r["repeat"], []).append(e)
    return [math.fsum(v) / len(v) for _, v in sorted(by_rep.items())]


def _fairer(a: Sequence[float], b: Sequence[float]) -> bool:
    """Repeats ``a`` (mean |e| per repeat) are fairer than repeats ``b`` beyond their spread
    (:func:`_separated_below`); a repeat in which a flow got nothing (|e| = inf) makes its variant
    the less fair one: ``a`` then cannot be the fairer, and ``b`` is the less fair when ``a``
    has none."""
    if not a or not b or any(math.isinf(x) for x in a):
        return False
    if any(math.isinf(x) for x in b):
        return True
    return _separated_below(a, b)


def a3_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 24's RTT-fairness claim (setup slide 16): five parts, on e = ln(throughput
    ratio) / ln(RTT ratio) per pair of RTTs.

    1-4. CUBIC (2005) and FAST each have good RTT fairness, |e| ≤ :data:`FAIR_EXPONENT`, on
         short paths (every pair whose longer RTT is below 200 ms: 40 against 120 ms) and on
         long paths (every pair with a path of 200 ms or more: 120 and 40 against 240 ms), e
         taken on the geometric mean ratio over repeats; FAST's parts must hold at each alpha
         of :data:`FAST_SMALL_ALPHAS`.
    5.   The ranking the summary implies by naming only CUBIC and FAST (it names neither BIC,
         HSTCP, STCP nor H-TCP: their lower rank is ccarena's reading of that omission): per
         repeat, the mean |e| over the pairs; CUBIC's and FAST's (each small alpha) must lie
         below each of BIC's, HSTCP's, STCP's and H-TCP's with the repeats separated, i.e. the
         difference of the means over repeats exceeds :data:`SEPARATE_SE` standard errors of
         the difference (a ranking inside the repeats' spread does not hold).
    """
    rows = _rows(values, "A3")
    e = _exponents(rows)
    pairs = sorted({(lo, hi) for (_, lo, hi) in e})
    short = [p for p in pairs if p[1] < 0.2]
    long_ = [p for p in pairs if p[1] >= 0.2]

    def pair(p: tuple[float, float]) -> str:
        return f"{p[0] * 1e3:g}/{p[1] * 1e3:g} ms"

    def ratio_of(alg: str, p: tuple[float, float]) -> float:
        x = e.get((alg, *p), float("nan"))
        return (p[1] / p[0]) ** x if math.isfinite(x) else x

    parts: list[Part] = []
    for label, algs in (("CUBIC (2005)", (CUBIC_2005,)), ("FAST (small alpha)", FAST_SMALL)):
        for name, ps in (("short", short), ("long", long_)):
            xs = [(a, p, e.get((a, *p), float("nan"))) for a in algs for p in ps]
            ok = bool(xs) and all(math.isfinite(x) and abs(x) <= FAIR_EXPONENT for *_, x in xs)
            parts.append(
                Part(
                    f"{label} has good RTT fairness on {name} paths",
                    ok,
                    f"throughput ratio (exponent e, bound |e| ≤ {FAIR_EXPONENT:g}): "
                    + ", ".join(f"{_name(a)} {pair(p)} {_fmt(ratio_of(a, p))} (e {_fmt(x)})" for a, p, x in xs),
                )
            )

    per_rep = {a: _abs_exponent_per_repeat(rows, a) for a in (CUBIC_2005, *FAST_SMALL, *NOT_NAMED_FAIR, CUBIC_LINUX)}

    def show(a: str) -> str:
        m, v, n = _mean_se(per_rep[a])
        inf = sum(math.isinf(x) for x in per_rep[a])
        se = f" ± {math.sqrt(v):.2f}" if math.isfinite(v) else ""
        return f"{_name(a)} {_fmt(m)}{se} (n {n}{f', {inf} starved' if inf else ''})"

    named = (CUBIC_2005, *FAST_SMALL)
    ok = bool(pairs) and all(_fairer(per_rep[a], per_rep[b]) for a in named for b in NOT_NAMED_FAIR)
    unseparated = [
        f"{_name(a)}/{_name(b)}" for a in named for b in NOT_NAMED_FAIR if not _fairer(per_rep[a], per_rep[b])
    ]
    parts.append(
        Part(
            "CUBIC and FAST fairer than BIC, HSTCP, STCP and H-TCP",
            ok,
            "mean |e| per repeat over "
            + ", ".join(pair(p) for p in pairs)
            + " (mean ± standard error over repeats): "
            + ", ".join(show(a) for a in (*named, *NOT_NAMED_FAIR))
            + (f"; not fairer by {SEPARATE_SE:g} standard errors (named/other): " + ", ".join(unseparated)
               if unseparated else "")
            + (f"; not judged: {show(CUBIC_LINUX)}" if per_rep[CUBIC_LINUX] else ""),
        )
    )
    return parts


# ---------------------------------------------------------------- A4: stability


def _a4_table(c: Campaign) -> pd.DataFrame:
    """The coefficient of variation over the 1 s intervals of each run's second half: slow start
    and the first loss events left out (CUBIC of 2005, growing 2 % per RTT until its first loss,
    takes 60-80 s to reach it at 220 ms)."""
    runs = c.runs[c.runs["status"] == "ok"]
    df = runs.merge(window_cov(c, flows=[0, 1], t_from=second_half_s(c), window_s=1.0), on="run_id")
    df["alg"] = _algorithms(df)
    return df


def a4_measure(c: Campaign) -> Values:
    """Per run: algorithm, repeat and the coefficient of variation of the two high-speed flows'
    rates in 1 s intervals over the second half of the run (mean over the two flows; slide 20's
    quantity)."""
    df = _a4_table(c)
    return {"runs": records(df.sort_values(["alg", "repeat"]), {"alg": "alg", "repeat": "repeat", "cov": "cov"})}


def a4_figure(c: Campaign) -> Any:
    df = _a4_table(c)
    algs = _order(df["alg"])
    fig, axes = new_figure(1, width=6, height=4.2)
    ax = axes[0]
    for i, a in enumerate(algs):
        vals = df[df["alg"] == a]["cov"].tolist()
        ax.bar(i, sum(vals) / len(vals), color=f"C{i}")
        ax.plot([i] * len(vals), vals, "k.", ms=5)
    ax.set_xticks(range(len(algs)), [_name(a) for a in algs], rotation=30, ha="right")
    ax.set_ylabel("CoV of throughput (1 s)")
    ax.set_title("high-speed flows at 220 ms, coefficient of variation", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def a4_judge(values: Mapping[str, Values]) -> list[Part]:
    """Slide 24's stability claim on the simulation (slides 17-20): two parts, on the
    coefficient of variation (CoV) per run, compared across repeats.

    1. CUBIC was the most stable: CUBIC (2005)'s CoV lies below each other high-speed variant's
       the talk evaluated (BIC, HSTCP, STCP, H-TCP, and FAST at each alpha of
       :data:`FAST_SMALL_ALPHAS`) with the repeats separated: the difference of the means over
       repeats exceeds :data:`SEPARATE_SE` standard errors of the difference.
    2. H-TCP's stability problems (slide 19, which the authors mark as still to be confirmed
       with H-TCP's authors): H-TCP's CoV lies above the median of the high-speed variants'
       mean CoVs (FAST counted at each small alpha), i.e. it is among the less stable half (the
       median is the typical value, robust to one outlier), with the repeats separated: H-TCP's
       mean exceeds the median by more than :data:`SEPARATE_SE` of its standard errors.
    """
    rows = _rows(values, "A4")
    runs = {a: [r["cov"] for r in rows if r["alg"] == a] for a in (*HIGH_SPEED, CUBIC_LINUX)}
    stats = {a: _mean_se(v) for a, v in runs.items()}
    cv = {a: st[0] for a, st in stats.items()}
    rivals = [a for a in HIGH_SPEED if a != CUBIC_2005]
    best = all(_separated_below(runs[CUBIC_2005], runs[a]) for a in rivals)
    unseparated = [_name(a) for a in rivals if not _separated_below(runs[CUBIC_2005], runs[a])]
    means = sorted(cv[a] for a in HIGH_SPEED)
    k = len(means)
    median = (means[(k - 1) // 2] + means[k // 2]) / 2 if k and all(math.isfinite(x) for x in means) else float("nan")
    m_h, v_h, _ = stats["htcp"]
    htcp_ok = all(math.isfinite(x) for x in (m_h, v_h, median)) and m_h - median > SEPARATE_SE * math.sqrt(v_h)

    def show(a: str) -> str:
        m, v, n = stats[a]
        return f"{_name(a)} {m:.3f}" + (f" ± {math.sqrt(v):.3f}" if math.isfinite(v) else "") + f" (n {n})"

    listing = ", ".join(show(a) for a in HIGH_SPEED if math.isfinite(cv[a]))
    linux = f"; not judged: {show(CUBIC_LINUX)}" if math.isfinite(cv[CUBIC_LINUX]) else ""
    return [
        Part(
            "CUBIC the most stable of the high-speed variants",
            best,
            f"mean CoV (1 s) ± standard error over repeats: {listing}{linux}"
            + (f"; not below by {SEPARATE_SE:g} standard errors: " + ", ".join(unseparated) if unseparated else ""),
        ),
        Part(
            "H-TCP has stability problems",
            htcp_ok,
            f"H-TCP's CoV {show('htcp')} against the median {median:.3f} of the high-speed variants' means "
            f"(bound: median + {SEPARATE_SE:g} standard errors"
            + (
                f" = {median + SEPARATE_SE * math.sqrt(v_h):.3f})"
                if math.isfinite(v_h) and math.isfinite(median)
                else ")"
            ),
        ),
    ]


# ---------------------------------------------------------------- the presets


A_SERIES = [
    Preset(
        "A1",
        "TCP-friendliness against bandwidth (simulation)",
        RHEE_XU,
        "rhee-xu-2005/a1-friendliness-sim.toml",
        claim=(
            "Of the high-speed variants evaluated (CUBIC, BIC, HSTCP, STCP, H-TCP, FAST), CUBIC and H-TCP were "
            "friendly to standard TCP, most of all on short-RTT networks; the summary calls no other variant "
            "friendly, and the introduction warns that the growth of BIC, HSTCP and STCP can remain aggressive "
            "toward standard TCP, above all at short RTTs or low speeds; FAST's friendliness depends on tuning its "
            "alpha (with the small alpha used, FAST flows got less throughput than standard TCP)"
        ),
        where="slide 24 (3.5 Evaluation Summary); setup slides 10-11 (3.2 TCP Friendliness, NS simulation); "
        "FAST: slide 23; BIC, HSTCP and STCP: slide 5 (2. Introduction, BIC function)",
        cause=(
            "FAST: the share FAST leaves standard TCP falls as alpha grows, and the talk's small alpha is not given, "
            "so whether FAST gets less depends on a setting the paper leaves open (standard TCP's mean share 0.80 at "
            "alpha 10, 0.44 at 100, 0.32 at 200; 5 repeats)"
        ),
        figure=a1_figure,
        measure=a1_measure,
        judge=a1_judge,
        quick={
            "duration": "60s",
            "sweep.repeat": 1,
            "sweep.topology.bottleneck.rate": ["20Mbps", "200Mbps"],
        },
    ),
    Preset(
        "A2",
        "TCP-friendliness on the testbed: the utilisation split",
        RHEE_XU,
        "rhee-xu-2005/a2-friendliness-testbed.toml",
        testbed=True,
        claim=(
            "Of the high-speed variants evaluated, CUBIC and H-TCP were friendly to standard TCP, most of all on "
            "short-RTT networks (5 and 10 ms against 100 and 200 ms); the summary calls no other variant "
            "friendly, and the introduction warns that the growth of BIC, HSTCP and STCP can remain "
            "aggressive toward standard TCP, above all at short RTTs or low speeds; FAST's friendliness depends "
            "on tuning its alpha (with the small alpha used, FAST flows got less throughput than standard TCP)"
        ),
        where="slide 24 (3.5 Evaluation Summary); setup slides 8-9 and 12-15 (3.1 Testbed, 3.2 TCP "
        "Friendliness, Dummynet); FAST: slide 23; BIC, HSTCP and STCP: slide 5 (2. Introduction, BIC function)",
        cause=(
            "FAST: the share FAST leaves standard TCP falls as alpha grows, and the talk's small alpha is not given, "
            "so whether FAST gets less depends on a setting the paper leaves open (standard TCP's mean share 0.75 at "
            "alpha 10, 0.31 at 100, 0.22 at 200, over 5 repeats with the bottleneck's 1 ms of jitter, and 0.63, 0.29 "
            "and 0.20 without it, the preset's form until 2026-11-27; with the testbed's hosts 0.76, 0.30 and 0.20, "
            "and 0.68, 0.27 and 0.18 without the jitter)"
        ),
        figure=a2_figure,
        measure=a2_measure,
        judge=a2_judge,
        quick={
            "duration": "60s",
            "topology.bottleneck.rate": "200Mbps",
            "sweep.repeat": 1,
            "sweep.topology.rtt": ["10ms", "100ms"],
            "sweep.background.web[0].load": [0.1],
        },
    ),
    Preset(
        "A3",
        "RTT fairness: flows of 40, 120 and 240 ms",
        RHEE_XU,
        "rhee-xu-2005/a3-rtt-fairness.toml",
        testbed=True,
        claim="CUBIC and FAST achieved good RTT fairness, on short and on long RTT paths alike (the summary "
        "names neither BIC, HSTCP, STCP nor H-TCP here; that they were less fair is ccarena's reading of the "
        "omission)",
        where="slide 24 (3.5 Evaluation Summary); setup slide 16 (3.3 RTT Fairness, Dummynet)",
        cause=(
            "H-TCP's RTT scaling. H-TCP as its authors designed it (Leith and Shorten, PFLDnet 2004) and as Linux "
            "runs it by default scales its increase by the flow's minimum RTT over 100 ms, so that flows of different"
            " RTTs grow alike in time. With it, in the simulator, H-TCP's mean |e| over the 5 repeats is 0.80 ± 0.05:"
            " the repeats do not separate it from CUBIC (2005)'s 0.78 ± 0.08 or from FAST's 0.77 ± 0.07 at alpha 10 "
            "and 0.72 ± 0.10 at alpha 100 (differences under two standard errors of the difference); BIC 2.09, HSTCP "
            "2.68 and STCP 3.92 are clearly worse. With the testbed's hosts (`--backend host`: 1 Gbit/s NICs and "
            "Linux 2.6's 64 KB TSO bursts for the flows, background traffic still smooth) and the jitter the repeats "
            "separate H-TCP's 0.82 ± 0.05 from none of the three (CUBIC (2005) 0.75 ± 0.08, FAST 0.64 ± 0.11 and 0.67"
            " ± 0.09; without the jitter 0.81 ± 0.05 against 0.75 ± 0.03, 0.85 ± 0.15 and 0.74 ± 0.10). Without the "
            "scaling (`use_rtt_scaling = false`, 15 runs per form without the bottleneck's jitter, not the preset) "
            "H-TCP's |e| is 1.62 ± 0.05 (1.52 ± 0.03 with the testbed's hosts), and CUBIC and FAST at both alphas are"
            " fairer than it by more than two standard errors. The talk does not say whether its H-TCP scaled by RTT,"
            " and H-TCP being less fair is ccarena's reading of the summary's silence, not a measurement the talk "
            "reports. Without the 1 ms of jitter at the bottleneck (the preset's form until 2026-11-27) FAST at alpha"
            " 10 gave 1.14 ± 0.08, less fair than H-TCP's 0.87 ± 0.07 by 2.6 standard errors, with the same verdict: "
            "that 1.14 was the simulator's exact timing, not FAST's"
        ),
        figure=a3_figure,
        measure=a3_measure,
        judge=a3_judge,
        quick={
            "duration": "90s",
            "topology.bottleneck.rate": "200Mbps",
            "sweep.repeat": 2,
            "sweep.flows[0].rtt": ["40ms", "120ms"],
            "sweep.flows[1].rtt": ["120ms", "240ms"],
        },
    ),
    Preset(
        "A4",
        "Stability: coefficient of variation of throughput",
        RHEE_XU,
        "rhee-xu-2005/a4-stability.toml",
        claim="Among the high-speed variants evaluated, CUBIC was the most stable (its throughput had the lowest "
        "coefficient of variation); H-TCP had some stability problems, which the authors still meant to confirm "
        "with H-TCP's authors",
        where="slide 24 (3.5 Evaluation Summary); setup slides 17-20 (3.4 Stability, NS simulation); H-TCP: slide 19",
        cause=(
            "CUBIC (2005) ties with BIC and STCP: it is among the most stable, but not below them: CoV 0.132 ± 0.009 "
            "over 5 repeats against BIC's 0.124 ± 0.011 and STCP's 0.133 ± 0.008; it is below HSTCP's (0.168 ± "
            "0.015), H-TCP's (0.283 ± 0.037) and FAST's (0.272 ± 0.013 at alpha 10, 0.221 ± 0.003 at 100) by more "
            "than two standard errors. CUBIC (2005) and BIC back off alike, to 819/1024 of the window (STCP to 7/8). "
            "The talk's NS modules were not published with it, and why they gave CUBIC a lower CoV than BIC and STCP "
            "is not established. The window over each run's second half is the preset's second choice: from 50 s of "
            "150 s runs it measured CUBIC (2005)'s ramp to its first loss (2 % per RTT, v2.0's cnt = 50), CoV 0.264 ±"
            " 0.030, the most unstable after H-TCP and FAST at alpha 10; Linux's CUBIC today 0.137 ± 0.013 over the "
            "second half"
        ),
        figure=a4_figure,
        measure=a4_measure,
        judge=a4_judge,
        quick={"duration": "80s", "topology.bottleneck.rate": "500Mbps", "sweep.repeat": 2},
    ),
]
