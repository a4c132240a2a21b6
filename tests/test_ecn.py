"""ECN (RFC 3168) and DCTCP (RFC 8257) from the experiment file to the summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import ccarena
import pytest

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def codel_cubic(ecn: bool) -> dict[str, Any]:
    """Four CUBIC flows through CoDel with ECN marking on, 50 Mbit/s, 40 ms, a large buffer."""
    return {
        "duration": "20s",
        "topology": {
            "rtt": "40ms",
            "bottleneck": {"rate": "50Mbps", "buffer": "10bdp", "qdisc": "codel", "codel": {"ecn": True}},
        },
        "tcp": {"ecn": ecn},
        "flows": [{"cc": "cubic", "count": 4}],
    }


def test_dctcp_holds_the_step_marking_queue_near_k() -> None:
    """scenarios/dctcp.toml: the queue sits near K = 30 packets (0.36 ms at 1 Gbit/s), the link full, no drop."""
    r = ccarena.run(SCENARIOS / "dctcp.toml")
    s = r.summary
    k_ms = 30 * 1500 * 8 / 1e9 * 1e3
    assert s["utilization_second_half"] >= 0.99
    assert 0.5 * k_ms <= s["queue"]["delay_p50_ms"] <= 1.5 * k_ms
    assert s["queue"]["drops"] == 0 and s["queue"]["marks"] > 0
    for f in s["flows"]:
        assert f["retransmits"] == 0 and f["ecn_reductions"] > 100
    # The algorithm's alpha is traced per interval, between 0 and 1, and moves.
    alpha = r.flows["alpha"].to_numpy()
    assert 0.0 <= alpha.min() < alpha.max() <= 1.0
    # Reno with the same marks halves and idles the link.
    reno = ccarena.run(SCENARIOS / "dctcp.toml", set={"flows[0].cc": "reno", "tcp.ecn": True}).summary
    assert reno["utilization_second_half"] < s["utilization_second_half"] - 0.05


def test_ecn_turns_codel_drops_into_marks() -> None:
    """RFC 3168: with ECN the senders answer CoDel's marks, so nothing is dropped or retransmitted."""
    on = ccarena.run(codel_cubic(True)).summary
    off = ccarena.run(codel_cubic(False)).summary
    assert on["queue"]["drops"] == 0 and on["queue"]["marks"] > 0
    assert sum(f["retransmits"] for f in on["flows"]) == 0
    assert sum(f["ecn_reductions"] for f in on["flows"]) > 0
    assert off["queue"]["drops"] > 0 and sum(f["retransmits"] for f in off["flows"]) > 0
    assert all("ecn_reductions" not in f for f in off["flows"])
    assert 1.0 <= on["queue"]["delay_p50_ms"] <= 10.0  # CoDel's 5 ms target either way
    assert on["utilization_second_half"] >= off["utilization_second_half"] - 0.02


def test_ecn_is_resolved_per_group() -> None:
    doc = {
        "duration": "1s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
        "tcp": {"ecn": True},
        "flows": [{"cc": "cubic"}, {"cc": "reno", "ecn": False}, {"cc": "dctcp", "ecn": True}],
    }
    spec = ccarena.load_spec(doc)
    assert [f.get("ecn", False) for f in spec.resolved["flows"]] == [True, False, True]
    assert [f["ecn"] for f in spec.engine["flows"]] == [True, False, True]
    assert spec.resolved["tcp"]["ecn"] is True
    # Off by default, and then not written into spec.toml at all.
    plain = ccarena.load_spec({**doc, "tcp": {}, "flows": [{"cc": "cubic"}]})
    assert "ecn" not in plain.resolved["tcp"] and "ecn" not in plain.resolved["flows"][0]
    # DCTCP negotiates ECN whatever [tcp] says.
    assert ccarena.load_spec({**doc, "tcp": {"ecn": False}, "flows": [{"cc": "dctcp"}]}).engine["flows"][0]["ecn"]


@pytest.mark.parametrize(
    ("flows", "field"),
    [
        ([{"cc": "dctcp", "ecn": False}], "flows[0].ecn"),
        ([{"cc": "cubic", "ecn": "yes"}], "flows[0].ecn"),
    ],
)
def test_bad_ecn_is_one_line_naming_the_field(tmp_path: Path, flows: list[dict[str, Any]], field: str) -> None:
    doc = {
        "duration": "1s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
        "flows": flows,
    }
    with pytest.raises(ccarena.SpecError) as e:
        ccarena.load_spec(doc)
    assert e.value.path == field
    text = "\n".join(
        ['duration = "1s"', "[topology]", 'rtt = "20ms"', 'bottleneck = { rate = "10Mbps", buffer = "1bdp" }']
        + [f"[[flows]]\ncc = {f['cc']!r}\necn = {str(f['ecn']).lower() if isinstance(f['ecn'], bool) else repr(f['ecn'])}" for f in flows]
    ).replace("'", '"')
    (tmp_path / "x.toml").write_text(text + "\n")
    p = subprocess.run(
        [sys.executable, "-m", "ccarena", "run", "x.toml", "--out", "r"], cwd=tmp_path, capture_output=True, text=True
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"error: {field}:")
    assert not (tmp_path / "r").exists()


def test_dctcp_is_listed_with_its_parameters(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ccarena", "list", "cc"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert "dctcp" in out and "shift_g" in out
