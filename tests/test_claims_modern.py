"""The F series' judges (Copa, NSDI 2018; LEDBAT, RFC 6817; DualPI2 with TCP Prague, RFC 9332):
values that agree with each source's claim give "reproduced", and values that contradict one part
make that part fail (every check can fail). Pure Python: the values are built by hand in the shape
the presets' ``measure`` writes."""

from __future__ import annotations

from typing import Any

import pytest
from ccarena.presets import get
from claim_checks import fails as _fails

REPEATS = (0, 1, 2)


def _holds_all(preset_id: str, values: dict[str, Any]) -> None:
    v = get(preset_id).verdict(values)
    assert v.word == "reproduced", v.measured()
    assert all(p.holds for p in v.parts)


# ---------------------------------------------------------------- F1


def f1_values(
    competitive: dict[float, float] | None = None,
    fixed: dict[float, float] | None = None,
    vs_cubic: dict[float, float] | None = None,
) -> dict[str, Any]:
    """Copa's share against CUBIC by buffer: an even split with its competitive mode, 0.03
    with delta fixed; ``competitive`` and ``fixed`` replace a buffer's mean share. The
    CUBIC-against-CUBIC runs give the later CUBIC flow the rate it had against competitive-mode Copa,
    times ``vs_cubic``'s factor at a buffer (1 by default)."""
    rows = []
    for mode, given, default in (("competitive", competitive, 0.5), ("fixed", fixed, 0.03)):
        for b in (0.5, 1.0, 2.0, 4.0):
            s = (given or {}).get(b, default)
            for r in REPEATS:
                x = s + 0.01 * (r - 1)
                rows.append(
                    {
                        "mode": mode,
                        "buffer_bdp": b,
                        "repeat": r,
                        "copa_bps": x * 50e6,
                        "cubic_bps": (1 - x) * 50e6,
                        "copa_share": x,
                        "utilisation": 1.0,
                    }
                )
    for b in (0.5, 1.0, 2.0, 4.0):
        s = (competitive or {}).get(b, 0.5)
        for r in REPEATS:
            y = (1 - s - 0.01 * (r - 1)) * (vs_cubic or {}).get(b, 1.0)
            rows.append(
                {
                    "mode": "cubic",
                    "buffer_bdp": b,
                    "repeat": r,
                    "cubic0_bps": (1 - y) * 50e6,
                    "cubic_bps": y * 50e6,
                    "cubic0_share": 1 - y,
                    "utilisation": 1.0,
                }
            )
    return {"F1": {"window_s": [30.0, None], "runs": rows}}


def test_f1_agreeing_values_reproduce() -> None:
    _holds_all("F1", f1_values())


def test_f1_names_the_abstract_and_figure_10() -> None:
    parts = get("F1").verdict(f1_values()).parts
    assert len(parts) == 3 and all("(abstract)" in p.name for p in parts[:2])
    assert "(section 5.7, Figure 10)" in parts[2].name


def test_f1_cubic_gets_no_less_against_copa_when_its_rate_equals_that_against_cubic() -> None:
    """At every buffer CUBIC's rate against Copa equals its rate against CUBIC, even where Copa
    takes two thirds: the part compares with the CUBIC-against-CUBIC runs, not with an even split."""
    v = get("F1").verdict(f1_values(competitive={1.0: 0.64}))
    part = next(p for p in v.parts if "no less" in p.name)
    assert part.holds and "0.5: 1.00, 1: 1.00, 2: 1.00, 4: 1.00" in part.measured


def test_f1_fails_when_cubic_gets_less_against_copa_than_against_cubic() -> None:
    """CUBIC against Copa at 0.7 of its rate against CUBIC at one buffer fails the part."""
    _fails("F1", f1_values(vs_cubic={2.0: 1 / 0.7}), "no less against Copa")


def test_f1_values_without_cubic_against_cubic_runs_fail_that_part_only() -> None:
    """Values stored before the CUBIC-against-CUBIC runs were added: the part fails, saying why,
    and the other parts are judged as before."""
    values = f1_values()
    values["F1"]["runs"] = [r for r in values["F1"]["runs"] if r["mode"] != "cubic"]
    parts = get("F1").verdict(values).parts
    part = next(p for p in parts if "no less" in p.name)
    assert not part.holds and "no CUBIC-against-CUBIC runs to compare with" in part.measured
    assert all(p.holds for p in parts if p is not part)


@pytest.mark.parametrize("share", [0.2, 0.8])
def test_f1_fails_when_copa_is_starved_or_starves_cubic(share: float) -> None:
    _fails("F1", f1_values(competitive={4.0: share}), "co-exists well")


def test_f1_fails_when_fixed_delta_copa_holds_its_own() -> None:
    _fails("F1", f1_values(fixed={2.0: 0.3}), "delta fixed")


def test_f1_judges_fixed_delta_only_where_cubic_keeps_a_queue() -> None:
    """At 0.5 BDP CUBIC's backoff drains the queue: a larger share there is shown, not judged."""
    _holds_all("F1", f1_values(fixed={0.5: 0.4}))


def test_f1_without_the_competitive_runs_fails() -> None:
    values = f1_values()
    values["F1"]["runs"] = [r for r in values["F1"]["runs"] if r["mode"] != "competitive"]
    _fails("F1", values, "co-exists well")


# ---------------------------------------------------------------- F2


def f2_values(
    util: dict[float, float] | None = None,
    delay: dict[float, float] | None = None,
    shares: dict[float, float] | None = None,
    cubic: dict[float, float] | None = None,
) -> dict[str, Any]:
    """LEDBAT as RFC 6817 means it: alone it fills the link and keeps the queue at TARGET (or at the
    buffer's size below it); against Reno and against CUBIC it takes 0.3 where the buffer is below
    TARGET and 0.03 where the queue can exceed it, its share falling to 0.1 for good 20 s after the
    competitor starts. ``util``, ``delay`` (ms) and ``shares`` (against Reno; ``cubic`` against
    CUBIC) replace a buffer's mean."""
    rows = []
    for rival, given in (("reno", shares), ("cubic", cubic)):
        for b in (1.0, 2.0, 4.0, 8.0):
            u = (util or {}).get(b, 0.99)
            d = (delay or {}).get(b, min(b * 50.0 * 0.8, 98.0))
            s = (given or {}).get(b, 0.3 if b * 50 <= 100 else 0.03)
            for r in REPEATS:
                rows.append(
                    {
                        "buffer_bdp": b,
                        "rival": rival,
                        "repeat": r,
                        "alone_utilisation": u,
                        "alone_delay_ms": d + r - 1,
                        "ledbat_bps": s * 50e6,
                        "rival_bps": (1 - s) * 50e6,
                        "ledbat_share": s,
                        "utilisation": 1.0,
                        "yield_s": 20.0 if s <= 0.1 else None,
                    }
                )
    return {"F2": {"rtt_ms": 50.0, "windows_s": {"alone": [10, 30], "both": [50, 90]}, "runs": rows}}


def test_f2_agreeing_values_reproduce() -> None:
    _holds_all("F2", f2_values())


def test_f2_fails_when_alone_it_leaves_the_link_idle() -> None:
    _fails("F2", f2_values(util={4.0: 0.7}), "uses the available bandwidth")


def test_f2_fails_when_alone_it_fills_a_deep_buffer() -> None:
    _fails("F2", f2_values(delay={8.0: 380.0}), "limits the queueing delay")


def test_f2_fails_when_it_takes_more_than_standard_tcp() -> None:
    _fails("F2", f2_values(shares={1.0: 0.6}), "no more aggressive")


def test_f2_judges_aggressiveness_against_reno_not_cubic() -> None:
    """RFC 5681's standard TCP is the reference: more than CUBIC but not more than Reno holds (CUBIC's
    share is shown beside it), and stored records without Reno's runs cannot bear the part out."""
    v = get("F2").verdict(f2_values(cubic={1.0: 0.6}))
    part = next(p for p in v.parts if "no more aggressive" in p.name)
    assert part.holds and "against CUBIC: 1: 0.60" in part.measured
    old = f2_values()
    old["F2"]["runs"] = [
        {k: x for k, x in r.items() if k != "rival"} for r in old["F2"]["runs"] if r["rival"] == "cubic"
    ]
    _fails("F2", old, "no more aggressive")


def test_f2_fails_when_it_does_not_yield_above_target() -> None:
    _fails("F2", f2_values(shares={8.0: 0.3}), "yields")
    _fails("F2", f2_values(cubic={4.0: 0.3}), "yields")


def test_f2_judges_yielding_only_where_the_queue_can_exceed_target() -> None:
    """At 1 and 2 BDP (50 and 100 ms of queue) LEDBAT never sees more than TARGET: shown, not judged;
    how soon it yields is shown, not judged."""
    _holds_all("F2", f2_values(shares={1.0: 0.45, 2.0: 0.4}))
    part = next(p for p in get("F2").verdict(f2_values()).parts if "yields" in p.name)
    assert "against Reno 4: 20 s, 8: 20 s" in part.measured


# ---------------------------------------------------------------- F3


def f3_values(
    ratio: dict[float, float] | None = None,
    l_delay: dict[float, float] | None = None,
    c_delay: dict[float, float] | None = None,
) -> dict[str, Any]:
    """DualPI2 as RFC 9332 means it: Prague and CUBIC near an even split, the L queue at 0.1 ms and
    the C queue at 15 ms at every RTT; ``ratio``, ``l_delay`` and ``c_delay`` (ms) replace means."""
    rows = []
    for rtt in (5.0, 10.0, 20.0, 40.0):
        q = (ratio or {}).get(rtt, 1.1)
        for r in REPEATS:
            prague = 100e6 * q / (1 + q)
            rows.append(
                {
                    "rtt_ms": rtt,
                    "repeat": r,
                    "prague_bps": prague,
                    "cubic_bps": 100e6 - prague,
                    "ratio": q,
                    "utilisation": 1.0,
                    "l_delay_ms": (l_delay or {}).get(rtt, 0.1),
                    "l_delay_p99_ms": 0.5,
                    "c_delay_ms": (c_delay or {}).get(rtt, 15.0) + 0.5 * (r - 1),
                    "c_delay_p99_ms": 25.0,
                }
            )
    return {"F3": {"window_s": [30.0, None], "runs": rows}}


def test_f3_agreeing_values_reproduce() -> None:
    _holds_all("F3", f3_values())


@pytest.mark.parametrize("q", [0.4, 2.5])
def test_f3_fails_when_one_flow_gets_more_than_twice_the_other(q: float) -> None:
    _fails("F3", f3_values(ratio={20.0: q}), "roughly equal rates")


def test_f3_fails_when_the_l_queue_holds_a_millisecond() -> None:
    _fails("F3", f3_values(l_delay={40.0: 1.5}), "sub-millisecond")


@pytest.mark.parametrize("ms", [6.0, 30.0])
def test_f3_fails_when_the_classic_queue_misses_its_target(ms: float) -> None:
    _fails("F3", f3_values(c_delay={10.0: ms}), "15 ms target")


def test_f1_reports_the_mean_over_buffers_without_judging_it() -> None:
    """A mean inside the band does not save a buffer outside it (the band holds at every buffer)."""
    v = get("F1").verdict(f1_values(competitive={4.0: 0.22}))
    part = next(p for p in v.parts if "co-exists well" in p.name)
    assert not part.holds and "(not judged): 0.43" in part.measured


def test_f3_reports_the_rfc_models_classic_queue_beside_the_band() -> None:
    """RFC 9332 Appendix C.2 equation (8), 0.85 (R_b + 15 ms) - R_b: the RFC's own figures."""
    from ccarena.presets.modern import rfc_classic_queue_ms

    assert [round(rfc_classic_queue_ms(r), 2) for r in (5.0, 10.0, 20.0, 40.0)] == [12.0, 11.25, 9.75, 6.75]
    part = get("F3").verdict(f3_values()).parts[2]
    assert part.holds and "(not judged): 5: 12.0 ms, 10: 11.2 ms, 20: 9.8 ms, 40: 6.8 ms" in part.measured
