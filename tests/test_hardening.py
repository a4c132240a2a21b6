"""Bad days: values the engine cannot hold, runaway runs, Ctrl-C and SIGTERM, and a fuzz test.

Every case ends in exit 0 with a complete folder, or exit 2 (or 130/143 for
signals) with one ``error:`` line and no folder. The fuzz test runs 200
cases here; ``make fuzz`` runs 2000 (CCARENA_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from pathlib import Path
from typing import Any

import ccarena
import pytest
from ccarena import cli
from ccarena.spec import SpecError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
BASE = textwrap.dedent(
    """\
    name = "x"
    duration = "2s"

    [topology]
    rtt = "20ms"
    bottleneck = { rate = "10Mbps", buffer = "1bdp" }

    [[flows]]
    cc = "cubic"
    count = 2
    """
)


def one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if not line.startswith(("warning: ", "estimate: "))]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("topology.rtt=2e13ms", 'topology.rtt: must be at most 1000000s (11.6 days), got "2e13ms"'),
        ("duration=1e9s", 'duration: must be at most 1000000s (11.6 days), got "1e9s"'),
        ("topology.bottleneck.rate=20Tbps", 'topology.bottleneck.rate: must be at most 10Tbps, got "20Tbps"'),
        ("topology.bottleneck.buffer=2e9pkts", "topology.bottleneck.buffer: must be at most 1000000000 packets"),
    ],
)
def test_values_the_engine_cannot_hold_are_one_line_errors(tmp_path: Path, capsys: Any, override: str, message: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(BASE)
    assert cli.main(["run", str(path), "--set", override, "--out", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys.readouterr().err).startswith(f"error: {message}")
    assert not (tmp_path / "out").exists()


def test_implausible_values_run_with_one_warning_each() -> None:
    doc = tomllib.loads(BASE)
    doc["topology"]["bottleneck"]["buffer"] = "300bdp"
    doc["flows"][0]["rtt"] = "12s"
    spec = ccarena.load_spec(doc, duration="30s")
    assert spec.warnings == ("flows[0].rtt: 12s is above 10s", "topology.bottleneck.buffer: 300 BDP is above 100 BDP")
    slow = ccarena.load_spec(doc, set={"topology.bottleneck.rate": "500bps", "flows[0].rtt": "20ms"}, duration="30s")
    assert slow.warnings[0].startswith("topology.bottleneck.rate: 500bps is below 1kbps")


def test_dry_run_prints_the_estimate_and_runaways_are_refused(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "x.toml"
    path.write_text(BASE)
    assert cli.main(["run", str(path), "--dry-run", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    # 2 s of 10 Mbit/s in 1500-byte packets: 1667 packets; 3 x 20 trace rows.
    assert out.startswith("estimate: about 1,666 bottleneck packets, 60 trace rows, ")
    assert not (tmp_path / "o").exists()
    # A million seconds traced every millisecond: terabytes of trace rows.
    code = cli.main(["run", str(path), "--set", "duration=1e6s", "--set", "measure.interval=1ms", "--out", str(tmp_path / "o")])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert "this run would need about" in line and "--force" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_stop_a_long_run_within_2_s_and_leave_nothing(tmp_path: Path, sig: int, code: int) -> None:
    path = tmp_path / "x.toml"
    path.write_text(BASE.replace('"10Mbps"', '"1Gbps"').replace('duration = "2s"', 'duration = "3000s"'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccarena", "run", str(path), "--out", str(tmp_path / "out"), "--force"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(1.5)
    t0 = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 2.0
    assert proc.returncode == code
    assert one_error_line(err).endswith("(nothing half-written is left)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.toml"]


def test_the_core_reports_a_bad_configuration_as_a_spec_error() -> None:
    spec = ccarena.load_spec(tomllib.loads(BASE))
    bad = type(spec)({**spec.resolved}, {**spec.engine, "duration_ns": -1}, spec.flow_groups)
    with pytest.raises(SpecError) as e:
        ccarena.run(bad)
    assert str(e.value).startswith("experiment: the engine refused it")


# --- fuzz ---------------------------------------------------------------------------------------

_DOC = tomllib.loads(BASE)
_PATHS = [
    ("duration",), ("seed",), ("name",), ("topology", "rtt"), ("topology", "bottleneck", "rate"),
    ("topology", "bottleneck", "buffer"), ("topology", "bottleneck", "loss"), ("topology", "bottleneck", "qdisc"),
    ("flows", 0, "cc"), ("flows", 0, "count"), ("flows", 0, "start"), ("flows", 0, "params"),
    ("tcp", "mss"), ("tcp", "init_cwnd"), ("measure", "interval"), ("measure", "window"),
]  # fmt: skip
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-10, max_value=10),
    st.sampled_from([0, 100_001, 10**6, 2**63, 2**64, -(2**63), 2**70]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "0s", "-5ms", "1e400s", "2e13ms", "10Mbps", "0bps", "1Pbps", "1bps", "0.5bdp", "1e12B",
                     "100pkts", "abc", "1e-9s", "99999999999999999999s", "NaNms", "1 s", "∞", "reno", "cubik"]),
    st.lists(st.sampled_from(["1s", "2s", 3, "x"]), max_size=3),
    st.dictionaries(st.sampled_from(["dist", "lo", "hi", "beta", "model", "p"]), st.sampled_from(["uniform", "0s", "1s", 0.5, "periodic"]), max_size=3),
)  # fmt: skip


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = doc
    for p in path[:-1]:
        node = node.setdefault(p, {}) if isinstance(node, dict) else node[p]
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


@st.composite
def documents(draw: Any) -> str:
    import copy

    import tomli_w

    doc = copy.deepcopy(_DOC)
    for _ in range(draw(st.integers(1, 3))):
        _set(doc, draw(st.sampled_from(_PATHS)), draw(_VALUES))
    if draw(st.booleans()):
        doc[draw(st.sampled_from(["colour", "flows", "topology", "measure"]))] = draw(st.sampled_from([1, "x", [], {}]))
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError):
        text = BASE
    if draw(st.booleans()):  # damage the text
        i = draw(st.integers(0, max(len(text) - 1, 0)))
        text = text[:i] + draw(st.sampled_from(["", "=", "[", '"', "\n[[", "}", "\x00"])) + text[i + 1 :]
    return text


@settings(max_examples=int(os.environ.get("CCARENA_FUZZ_EXAMPLES", "200")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=documents())
def test_fuzzed_files_end_in_a_folder_or_one_error_line(tmp_path_factory: Any, text: str) -> None:
    tmp = tmp_path_factory.mktemp("fuzz")
    path = tmp / "f.toml"
    path.write_text(text, encoding="utf-8", errors="replace")
    out = tmp / "out"
    proc = _run_in_process(["run", str(path), "--out", str(out), "--no-figure", "--quiet", "--set", "duration=0.5s"])
    code, stdout, stderr = proc
    if code == 0:
        assert (out / "summary.json").is_file() and (out / "flows.parquet").is_file()
    else:
        assert code == 2, stderr
        one_error_line(stderr)
        assert not out.exists()


def _run_in_process(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = cli.main(argv)
    return code, o.getvalue(), e.getvalue()
