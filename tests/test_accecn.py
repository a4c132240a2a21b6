"""AccECN (RFC 9768) and TCP Prague from the experiment file to the engine, and the emu backend's refusal
of algorithms no Linux kernel module provides."""

from __future__ import annotations

from typing import Any

import ccarena
import pytest
from ccarena.backends import emu as emulate
from ccarena.spec import SpecError


def doc(**flow: Any) -> dict[str, Any]:
    """Two seconds of one flow group through RED marking with ECN, 50 Mbit/s, 20 ms."""
    return {
        "duration": "2s",
        "topology": {
            "rtt": "20ms",
            "bottleneck": {
                "rate": "50Mbps",
                "buffer": "2bdp",
                "qdisc": "red",
                "red": {
                    "min_th": 10,
                    "max_th": 11,
                    "max_p": 1.0,
                    "wq": 1.0,
                    "gentle": False,
                    "harddrop": False,
                    "ecn": True,
                },
            },
        },
        "flows": [{"cc": "reno", **flow}],
    }


def test_accecn_is_off_by_default_and_then_not_written() -> None:
    spec = ccarena.load_spec(doc())
    for table in (spec.resolved["tcp"], spec.resolved["flows"][0], spec.engine["flows"][0]):
        assert not {"accecn", "receiver_accecn", "accecn_option"} & set(table)


def test_accecn_is_resolved_per_group_and_implies_ecn() -> None:
    d = doc(accecn=True)
    d["flows"].append({"cc": "cubic", "receiver_accecn": False, "accecn_option": False})
    spec = ccarena.load_spec(d)
    first, second = spec.resolved["flows"]
    assert first["accecn"] is True and first["ecn"] is True
    assert second["receiver_accecn"] is False and second["accecn_option"] is False
    assert "accecn" not in second
    e = spec.engine["flows"]
    assert (e[0]["ecn"], e[0]["accecn"]) == (True, True)
    assert (e[1]["receiver_accecn"], e[1]["accecn_option"]) == (False, False)
    # From [tcp] for every group.
    tcp = ccarena.load_spec({**doc(), "tcp": {"accecn": True}})
    assert tcp.resolved["tcp"]["accecn"] is True and tcp.engine["flows"][0]["accecn"] is True


def test_prague_offers_accecn_whatever_tcp_says() -> None:
    spec = ccarena.load_spec({**doc(cc="prague"), "tcp": {"accecn": False}})
    f = spec.resolved["flows"][0]
    assert (f["ecn"], f["accecn"], f["pacing"]) == (True, True, True)


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        ({"cc": "prague", "accecn": False}, "flows[0].accecn: prague needs AccECN; leave accecn out or set it to true"),
        (
            {"accecn": True, "ecn": False},
            "flows[0].ecn: accecn = true is ECN feedback; leave ecn out or set it to true",
        ),
        ({"accecn": "yes"}, "flows[0].accecn: expected true or false"),
        ({"receiver_accecn": 1}, "flows[0].receiver_accecn: expected true or false"),
    ],
)
def test_bad_accecn_settings_are_refused_in_one_line(flow: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as e:
        ccarena.load_spec(doc(**flow))
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)


def test_accecn_counts_every_mark_and_the_fallback_is_classic_ecn() -> None:
    """Through the whole front end: with AccECN Reno answers the marks without a loss; against a receiver
    without AccECN the run is exactly the classic ECN run."""
    accecn = ccarena.run(doc(accecn=True)).summary
    assert accecn["queue"]["marks"] > 0 and accecn["queue"]["drops"] == 0
    assert accecn["flows"][0]["ecn_reductions"] > 0
    classic = ccarena.run(doc(ecn=True)).summary
    fallback = ccarena.run(doc(accecn=True, receiver_accecn=False)).summary
    assert fallback["queue"] == classic["queue"] and fallback["flows"] == classic["flows"]


def test_prague_runs_and_lists_its_parameters() -> None:
    info = next(a for a in ccarena.algorithms() if a["name"] == "prague")
    assert info["needs_ecn"] and info["needs_accecn"] and info["needs_pacing"]
    assert [p["name"] for p in info["params"]] == ["shift_g", "rtt_scaling", "rtt_target_us", "rtt_transition"]
    r = ccarena.run(doc(cc="prague"))
    s = r.summary
    assert s["queue"]["marks"] > 0 and s["queue"]["drops"] == 0
    alpha = r.flows["alpha"].to_numpy()
    assert 0.0 <= alpha.min() and alpha.max() <= 1.0


@pytest.mark.parametrize("cc", ["copa", "vivace", "ledbat", "prague"])
def test_emu_refuses_algorithms_without_a_kernel_module(cc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Linux module for these (Prague lives out of tree, in L4STeam/linux): the emu backend refuses them
    in one line naming the field, before anything starts (no root needed to check)."""
    kernel = ["reno", "cubic", "bbr", "dctcp"]
    monkeypatch.setattr(emulate.checks, "kernel_algorithms", lambda: kernel)
    d = doc(cc=cc)
    d["topology"]["bottleneck"].pop("red")
    d["topology"]["bottleneck"]["qdisc"] = "droptail"
    with pytest.raises(SpecError) as e:
        emulate.load_spec(d)
    assert str(e.value) == (
        f'flows[0].cc: "{cc}" is not in this kernel (it offers: reno, cubic, bbr, dctcp); '
        "the emu backend runs the kernel's algorithms"
    )
