"""Ensemble statistics: means with Student-t confidence intervals.

A campaign repeats every point of its grid; :func:`mean_ci` gives the mean
of the repeats with a two-sided confidence interval from Student's t
distribution with n − 1 degrees of freedom: ``mean ± t(1 − α/2, n − 1) ·
s / √n``, s the sample standard deviation. :func:`t_quantile` gives the t
quantile without SciPy: exact tabulated values for the 95 % interval up to
30 degrees of freedom, and beyond them the Cornish–Fisher expansion of t in
terms of the normal quantile (Abramowitz & Stegun 26.7.5), which is
accurate to better than 1e-5 there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mean_ci", "normal_quantile", "t_quantile"]

_T975 = (
    12.706204736174698, 4.302652729749464, 3.182446305284263, 2.7764451051977934, 2.5705818356363146,
    2.4469118511449692, 2.3646242515927844, 2.306004135204166, 2.2621571628540993, 2.2281388519649385,
    2.200985160082949, 2.1788128296672284, 2.1603686564610127, 2.1447866879169273, 2.131449545559323,
    2.1199052992210112, 2.1098155778331806, 2.10092204024096, 2.093024054408263, 2.0859634472658364,
    2.079613844727662, 2.0738730679040147, 2.0686576104190406, 2.0638985616280205, 2.059538552753294,
    2.055529438642871, 2.0518305164802833, 2.048407141795244, 2.045229642132703, 2.0422724563012373,
)  # fmt: skip
"""t(0.975, df) for df = 1 … 30, to double precision."""


def normal_quantile(p: float) -> float:
    """The standard normal quantile Φ⁻¹(p), by bisection on ``erfc`` (to ~1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability in (0, 1) is needed, got {p}")
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2.0


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile for probability ``p`` and ``df`` ≥ 1 degrees of freedom.

    ``t_quantile(0.975, 9)`` = 2.2622 (the 95 % interval of 10 samples).
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if abs(p - 0.975) < 1e-15 and df <= len(_T975):
        return _T975[df - 1]
    if df <= len(_T975):
        raise ValueError("t quantiles other than 0.975 need more than 30 degrees of freedom")
    z = normal_quantile(p)
    n = float(df)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160.0
    return z + g1 / n + g2 / n**2 + g3 / n**3 + g4 / n**4


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, int]:
    """(mean, half width of the ``level`` confidence interval, n) of finite values.

    No values give (NaN, NaN, 0); one value gives its value and a NaN half
    width (a single run says nothing about the spread). Non-finite values
    (a metric a run could not compute) are left out.
    """
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, 0
    mean = math.fsum(xs) / n
    if n == 1:
        return mean, math.nan, 1
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    return mean, t_quantile(1.0 - (1.0 - level) / 2.0, n - 1) * math.sqrt(var / n), n
