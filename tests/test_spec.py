"""Experiment files: defaults, overrides, and one clear error per mistake."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from ccarena import _core
from ccarena.spec import SpecError, apply_overrides, load_spec, parse_override_value, resolve

GOOD = """\
name = "good"
duration = "5s"

[topology]
rtt = "20ms"
bottleneck = { rate = "20Mbps", buffer = "1bdp" }

[[flows]]
cc = "reno"
count = 2

[[flows]]
cc = "cubic"
start = "1s"
params = { beta = 0.5 }
"""


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def minimal(**extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "duration": "5s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}],
    }
    d.update(extra)
    return d


def test_valid_file_resolves_with_defaults(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD))
    r = spec.resolved
    assert r["name"] == "good" and r["seed"] == 1 and r["duration"] == "5s"
    assert r["ccarena_version"]
    assert r["topology"]["bottleneck"] == {
        "rate": "20Mbps",
        "buffer": "1bdp",
        "qdisc": "droptail",
        "delay": "0s",
        "loss": 0.0,
    }
    assert r["topology"]["reverse"] == {"rate": "20Mbps", "buffer": "1bdp"}
    assert r["tcp"] == {"mss": 1448, "header": 52, "init_cwnd": 10, "pacing": False}
    assert r["measure"] == {
        "interval": "100ms",
        "trace": True,
        "average": "1s",
        "standard": ["reno", "newreno"],
        "convergence": {"delta": 0.2, "hold": "1s", "jain": 0.95},
    }
    reno, cubic = r["flows"]
    assert reno == {
        "cc": "reno",
        "count": 2,
        "start": "0s",
        "rtt": "20ms",
        "app": "bulk",
        "mss": 1448,
        "init_cwnd": 10,
        "pacing": False,
        "recovery": "prr",
        "sack_compression": True,
    }
    # Every CUBIC parameter is filled in, the given one kept.
    defaults = {p["name"]: p["default"] for a in _core.cc_algorithms() if a["name"] == "cubic" for p in a["params"]}
    assert cubic["params"] == {**defaults, "beta": 0.5}

    e = spec.engine
    assert e["seed"] == 1 and e["duration_ns"] == 5_000_000_000 and e["interval_ns"] == 100_000_000
    # 1 BDP = 20 Mbit/s * 20 ms / 8 / 1500 B = 33.3 -> 33 packets.
    assert e["bottleneck"] == {"rate_bps": 20_000_000, "delay_ns": 0, "buffer_pkts": 33, "loss": 0.0}
    assert e["reverse"]["buffer_pkts"] == 33
    assert [f["cc"] for f in e["flows"]] == ["reno", "reno", "cubic"]
    assert spec.flow_groups == (0, 0, 1)
    f2 = e["flows"][2]
    assert f2["start_ns"] == 1_000_000_000 and f2["stop_ns"] is None and f2["rtt_ns"] == 20_000_000
    assert f2["mss"] == 1448 and f2["header_bytes"] == 52 and f2["init_cwnd"] == 10
    assert f2["recovery"] == "prr" and f2["app"] == "bulk" and f2["params"]["beta"] == 0.5
    assert f2["sack_compression"] == {"nr": 44, "delay_ns": 1_000_000}  # today's Linux receivers


def test_resolved_spec_round_trips(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, GOOD))
    again = resolve(tomllib.loads(spec.to_toml()))
    assert again == spec


def test_recovery_defaults_to_the_algorithms_own() -> None:
    spec = load_spec(minimal(flows=[{"cc": "newreno"}, {"cc": "reno"}, {"cc": "reno", "recovery": "newreno"}]))
    assert [f["recovery"] for f in spec.engine["flows"]] == ["newreno", "prr", "newreno"]
    spec = load_spec(minimal(tcp={"recovery": "newreno"}))
    assert spec.engine["flows"][0]["recovery"] == "newreno"


def test_buffer_forms() -> None:
    spec = load_spec(minimal(topology={"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "64KB"}}))
    assert spec.engine["bottleneck"]["buffer_bytes"] == 64_000 and "buffer_pkts" not in spec.engine["bottleneck"]
    spec = load_spec(minimal(topology={"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "7pkts"}}))
    assert spec.engine["bottleneck"]["buffer_pkts"] == 7
    # A tiny BDP fraction is still one packet.
    spec = load_spec(minimal(topology={"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "0.001bdp"}}))
    assert spec.engine["bottleneck"]["buffer_pkts"] == 1
    # Without topology.rtt the BDP uses the largest flow RTT: 100 Mbit/s * 60 ms / 12000 bit = 500.
    spec = load_spec(
        {
            "duration": "5s",
            "topology": {"bottleneck": {"rate": "100Mbps", "buffer": "1bdp"}},
            "flows": [{"cc": "reno", "rtt": "20ms"}, {"cc": "reno", "rtt": "60ms"}],
        }
    )
    assert spec.engine["bottleneck"]["buffer_pkts"] == 500
    assert "rtt" not in spec.resolved["topology"]
    # The reverse link takes its own rate and buffer.
    spec = load_spec(
        minimal(
            topology={
                "rtt": "20ms",
                "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"},
                "reverse": {"rate": "10Mbps"},
            }
        )
    )
    assert spec.engine["reverse"]["rate_bps"] == 10_000_000 and spec.engine["reverse"]["buffer_pkts"] == 17


def test_apps_and_per_flow_tcp_overrides() -> None:
    spec = load_spec(
        minimal(
            tcp={"pacing": True, "rwnd": "1MB"},
            flows=[
                {"cc": "reno", "app": "fixed", "size": "10MB", "mss": 1000, "init_cwnd": 4},
                {"cc": "reno", "app": "rate", "rate": "735kbps", "pacing": False, "stop": "4s"},
            ],
        )
    )
    a, b = spec.engine["flows"]
    assert a["app"] == "fixed" and a["app_bytes"] == 10_000_000 and a["mss"] == 1000 and a["init_cwnd"] == 4
    assert a["pacing"] is True and a["rwnd_bytes"] == 1_000_000
    assert b["app"] == "rate" and b["app_rate_bps"] == 735_000 and b["pacing"] is False
    assert b["stop_ns"] == 4_000_000_000
    assert spec.resolved["flows"][0]["size"] == "10MB" and spec.resolved["flows"][1]["rate"] == "735kbps"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("3", 3),
        ("0.5", 0.5),
        ('"x"', "x"),
        ("100Mbps", "100Mbps"),
        ("reno", "reno"),
        ("{ beta = 0.5 }", {"beta": 0.5}),
        ('["a", "b"]', ["a", "b"]),
    ],
)
def test_override_values(text: str, value: Any) -> None:
    assert parse_override_value(text) == value


def test_set_overrides(tmp_path: Path) -> None:
    spec = load_spec(
        write(tmp_path, GOOD),
        set={
            "duration": "10s",
            "topology.bottleneck.rate": "50Mbps",
            "flows[0].cc": "cubic",
            "flows[1].params.beta": 0.6,
            "tcp.pacing": True,
            "measure.interval": "10ms",
        },
        seed=7,
    )
    e = spec.engine
    assert e["duration_ns"] == 10_000_000_000 and e["seed"] == 7 and e["interval_ns"] == 10_000_000
    assert e["bottleneck"]["rate_bps"] == 50_000_000
    assert [f["cc"] for f in e["flows"]] == ["cubic", "cubic", "cubic"]
    assert e["flows"][2]["params"]["beta"] == 0.6 and e["flows"][0]["params"]["beta"] != 0.6
    assert all(f["pacing"] for f in e["flows"])
    # Keyword overrides replace top-level keys.
    assert load_spec(write(tmp_path, GOOD), duration="3s").engine["duration_ns"] == 3_000_000_000


def test_set_errors_name_the_path() -> None:
    with pytest.raises(SpecError) as e:
        apply_overrides(minimal(), {"flows[5].cc": "reno"})
    assert e.value.path == "flows[5]"
    with pytest.raises(SpecError) as e:
        apply_overrides(minimal(), {"duration.x": 1})
    assert e.value.path == "duration"
    with pytest.raises(SpecError) as e:
        apply_overrides(minimal(), {"flows[0]..cc": 1})
    assert e.value.path == "flows[0]..cc"
    with pytest.raises(SpecError) as e:
        load_spec(minimal(), set={"flows[0].colour": "red"})
    assert str(e.value).startswith("flows[0].colour: unknown key (known: accecn, accecn_option, ack_path, app, cc, count,")


def test_spec_error_text() -> None:
    e = SpecError("flows[1].cc", "oops")
    assert str(e) == "flows[1].cc: oops" and e.path == "flows[1].cc" and e.message == "oops"


@pytest.mark.parametrize(
    ("extra", "path", "message"),
    [
        ({"seed": -1}, "seed", "expected an integer"),
        ({"seed": True}, "seed", "expected an integer"),
        ({"name": "a/b"}, "name", "expected letters"),
        ({"flows": []}, "flows", "at least one flow group is required"),
        ({"flows": [{"cc": "reno", "count": 0}]}, "flows[0].count", "expected an integer in [1,"),
        ({"flows": [{"cc": "reno", "stop": "0s", "start": "1s"}]}, "flows[0].stop", "must be after start"),
        ({"flows": [{"cc": "reno", "size": "1MB"}]}, "flows[0].size", 'only allowed with app = "fixed"'),
        ({"flows": [{"cc": "reno", "app": "rate"}]}, "flows[0].rate", 'required with app = "rate"'),
        ({"flows": [{"cc": "reno", "app": "video"}]}, "flows[0].app", 'unknown app "video" (known: bulk, fixed, rate)'),
        ({"flows": [{"cc": "reno", "recovery": "rack"}]}, "flows[0].recovery", "unknown recovery"),
        ({"flows": [{"cc": "reno", "rwnd": "100B"}]}, "flows[0].rwnd", "at least one MSS"),
        (
            {"flows": [{"cc": "reno", "params": {"x": [1]}}]},
            "flows[0].params.x",
            "expected a boolean, number or string",
        ),
        ({"flows": [{"cc": 3}]}, "flows[0].cc", "expected an algorithm name"),
        ({"tcp": {"mss": "1448"}}, "tcp.mss", "expected an integer"),
        ({"tcp": {"pacing": "yes"}}, "tcp.pacing", "expected true or false"),
        ({"measure": {"interval": "10s"}}, "measure.interval", "at most the duration"),
        ({"measure": {"trace": 1}}, "measure.trace", "expected true or false"),
    ],
)
def test_api_errors(extra: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(SpecError) as e:
        load_spec(minimal(**extra))
    assert e.value.path == path
    assert message in e.value.message


BAD_FILES: list[tuple[str, str, str]] = [
    (
        "missing-duration",
        """\
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        """,
        "duration: required",
    ),
    (
        "misspelt-key",
        """\
        durration = "5s"
        """,
        'durration: unknown key (did you mean "duration"?)',
    ),
    (
        "negative-rate",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "-5Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        """,
        'topology.bottleneck.rate: expected a rate such as "100Mbps", got "-5Mbps"',
    ),
    (
        "unknown-algorithm",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        [[flows]]
        cc = "cubik"
        """,
        'flows[1].cc: unknown algorithm "cubik" (did you mean "cubic"?)',
    ),
    (
        "unitless-rate",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = 100, buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        """,
        'topology.bottleneck.rate: expected a rate such as "100Mbps", got 100',
    ),
    (
        "bad-buffer",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "abc" }
        [[flows]]
        cc = "reno"
        """,
        'topology.bottleneck.buffer: expected a size such as "64KB", "100pkts" or "1bdp", got "abc"',
    ),
    (
        "zero-duration",
        """\
        duration = "0s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        """,
        "duration: must be greater than 0",
    ),
    (
        "toml-syntax",
        """\
        duration = "5s"
        [topology]
        rtt = 20ms
        """,
        "{file}: TOML syntax error at line 3",
    ),
    (
        "unknown-param",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "cubic"
        params = { gamma = 2 }
        """,
        'flows[0].params.gamma: unknown parameter "gamma" for cubic',
    ),
    (
        "wrong-param-type",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "cubic"
        params = { fast_convergence = "yes" }
        """,
        'flows[0].params.fast_convergence: expected true or false, got "yes"',
    ),
    (
        "start-after-duration",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        start = "6s"
        """,
        "flows[0].start: must be before the end of the run",
    ),
    (
        "fixed-without-size",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        app = "fixed"
        """,
        'flows[0].size: required with app = "fixed"',
    ),
    (
        "unknown-qdisc",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", qdisc = "blue" }
        [[flows]]
        cc = "reno"
        """,
        'topology.bottleneck.qdisc: unknown queue discipline "blue" (known: droptail, red, codel, pie, fq_codel, dualpi2, xcp)',
    ),
    (
        "zero-interval",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        [measure]
        interval = "0s"
        """,
        "measure.interval: must be at least 1ms",
    ),
    (
        "no-flows",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        """,
        "flows: at least one flow group is required",
    ),
    (
        "unknown-flow-key",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        colour = "red"
        """,
        "flows[0].colour: unknown key (known: accecn, accecn_option, ack_path, app, cc, count, ecn, every, host, init_cwnd, mss, pacing, params, path, rate, receive_window, receiver_accecn, recovery, reverse,",
    ),
    (
        "param-out-of-range",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "cubic"
        params = { beta = 1.5 }
        """,
        "flows[0].params.beta: expected a number in [0.1, 0.99], got 1.5",
    ),
    (
        "loss-out-of-range",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", loss = 1.0 }
        [[flows]]
        cc = "reno"
        """,
        "topology.bottleneck.loss: expected a probability in [0, 1), got 1.0",
    ),
    (
        "periodic-loss-zero",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", loss = { model = "periodic", p = 0.0 } }
        [[flows]]
        cc = "reno"
        """,
        "topology.bottleneck.loss.p: expected a number in (0, 1), got 0.0",
    ),
    (
        "periodic-loss-without-p",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", loss = { model = "periodic", period = 100 } }
        [[flows]]
        cc = "reno"
        """,
        "topology.bottleneck.loss.period: unknown key (known: model, p)",
    ),
    (
        "delay-longer-than-half-rtt",
        """\
        duration = "5s"
        [topology]
        rtt = "20ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", delay = "15ms" }
        [[flows]]
        cc = "reno"
        """,
        "topology.bottleneck.delay: must be at most half the smallest flow RTT (20ms), got 15ms",
    ),
    (
        "no-rtt",
        """\
        duration = "5s"
        [topology]
        bottleneck = { rate = "20Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "reno"
        rtt = "10ms"
        [[flows]]
        cc = "reno"
        """,
        "topology.rtt: required unless every flow group sets rtt (flows[1] does not)",
    ),
]


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccarena", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(("case", "text", "expected"), BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_bad_file_gives_one_error_line_and_no_output(tmp_path: Path, case: str, text: str, expected: str) -> None:
    f = write(tmp_path, text, name=f"{case}.toml")
    out = tmp_path / "out"
    p = run_cli(["run", f.name, "--out", str(out)], cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: " + expected.format(file=f.name)), lines[0]
    assert p.stdout == ""
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == [f.name]


def test_bad_file_without_out_creates_no_results_folder(tmp_path: Path) -> None:
    f = write(tmp_path, BAD_FILES[3][1])
    p = run_cli(["run", f.name], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("error: flows[1].cc: unknown algorithm")
    assert sorted(x.name for x in tmp_path.iterdir()) == [f.name]


def test_missing_file(tmp_path: Path) -> None:
    p = run_cli(["run", "nothere.toml"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == "error: nothere.toml: no such file\n"
    assert list(tmp_path.iterdir()) == []


def test_bad_set_on_the_command_line(tmp_path: Path) -> None:
    f = write(tmp_path, GOOD)
    p = run_cli(["run", f.name, "--set", "flows[1].cc=cubik"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == 'error: flows[1].cc: unknown algorithm "cubik" (did you mean "cubic"?)\n'
    p = run_cli(["run", f.name, "--set", "duration"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == "error: --set: expected PATH=VALUE, got 'duration'\n"
    p = run_cli(["run", f.name, "--set", "flows[0].params.beta=1.5", "--set", "flows[0].cc=cubic"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("error: flows[0].params.beta: expected a number in [0.1, 0.99], got 1.5")
    assert sorted(x.name for x in tmp_path.iterdir()) == [f.name]


def test_rate_based_algorithms_are_paced_by_default() -> None:
    base = {
        "duration": "10s",
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"}},
    }
    spec = load_spec({**base, "flows": [{"cc": "bbr"}, {"cc": "cubic"}, {"cc": "bbr", "pacing": False}]})
    assert [f["pacing"] for f in spec.engine["flows"]] == [True, False, False]
    spec = load_spec({**base, "tcp": {"pacing": True}, "flows": [{"cc": "cubic"}]})
    assert spec.engine["flows"][0]["pacing"] is True
