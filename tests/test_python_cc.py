"""Congestion control written in Python (ccarena.register_cc, crates/py/src/pycc.rs).

The Python ports of Reno and CUBIC in examples/python_cc give the built-ins'
results bit for bit (summary.json and the flow trace, but for the algorithm's
name) over random loss, ECN marking (RED and CoDel), timeouts after a loss
burst and an app-limited flow; hooks a class leaves out run Rust's defaults;
a failing hook ends the run in one line; parameters are checked like the
built-ins'; a constructor or a parameter declaration that raises is one
line naming the algorithm, found by the validation; sweeps with worker
processes import the experiment's cc_module; the emulator refuses a Python
algorithm.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest
from ccarena.spec import SpecError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "python_cc"
CCARENA = [sys.executable, "-m", "ccarena"]


@pytest.fixture(scope="module", autouse=True)
def examples() -> Iterator[None]:
    sys.path.insert(0, str(EXAMPLES))
    import cubic  # noqa: F401 - registers py_cubic (and reno.py py_reno)
    import reno  # noqa: F401

    yield
    # Later test modules see the registry as a fresh process does.
    from ccarena.pycc import python_algorithms

    for name in python_algorithms():
        ccarena.unregister_cc(name)


def experiment(bottleneck: dict[str, Any], flows: list[dict[str, Any]], duration: str = "8s") -> dict[str, Any]:
    return {
        "duration": duration,
        "seed": 3,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp", **bottleneck}},
        "flows": flows,
        "measure": {"interval": "100ms"},
    }


SCENARIOS = {
    "random-loss": experiment({"loss": 0.002}, [{"cc": "X", "count": 2}]),
    "ecn-red": experiment(
        {"qdisc": "red", "red": {"min_th": 5, "max_th": 15, "max_p": 0.1, "ecn": True}},
        [{"cc": "X", "count": 2, "ecn": True}],
    ),
    "ecn-codel": experiment({"qdisc": "codel", "codel": {"ecn": True}}, [{"cc": "X", "count": 2, "ecn": True}]),
    "timeouts": experiment(
        {"loss": {"model": "gilbert", "p_gb": 0.0003, "p_bg": 0.01, "loss_bad": 1.0}}, [{"cc": "X", "count": 2}]
    ),
    "app-limited": experiment(
        {"loss": 0.001},
        [{"cc": "X", "app": "rate", "rate": "6Mbps"}, {"cc": "X", "start": "1s"}],
    ),
}
PAIRS = [("reno", "py_reno"), ("cubic", "py_cubic")]


def _with(spec: dict[str, Any], cc: str) -> dict[str, Any]:
    d = copy.deepcopy(spec)
    for g in d["flows"]:
        g["cc"] = cc
    d["measure"]["standard"] = [cc]  # friendliness counts the algorithm itself as standard
    return d


def _named_out(x: Any) -> Any:
    """summary.json without the algorithm's name (flows[].cc, friendliness.standard)."""
    if isinstance(x, dict):
        return {k: _named_out(v) for k, v in x.items() if k not in ("cc", "standard")}
    if isinstance(x, list):
        return [_named_out(v) for v in x]
    return x


@pytest.mark.parametrize(("builtin", "python"), PAIRS, ids=[p[0] for p in PAIRS])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_python_port_is_bit_identical(scenario: str, builtin: str, python: str) -> None:
    a = ccarena.run(_with(SCENARIOS[scenario], builtin))
    b = ccarena.run(_with(SCENARIOS[scenario], python))
    sa, sb = a.summary, b.summary
    assert json.dumps(_named_out(sa), sort_keys=True) == json.dumps(_named_out(sb), sort_keys=True)
    assert [f["cc"] for f in sb["flows"]] == [python] * len(sb["flows"])
    cols = [c for c in a.flows.columns if c not in ("cc", "run")]
    assert a.flows[cols].equals(b.flows[cols])
    # The scenario exercises what it is named after.
    if scenario == "timeouts":
        assert sum(f["timeouts"] for f in sa["flows"]) > 0
    if scenario.startswith("ecn"):
        assert sa["queue"]["marks"] > 0
    if scenario == "app-limited":
        assert sa["flows"][0]["goodput_bps"] < 6.1e6


class Nothing:
    """No hooks at all: Linux's defaults, which are Reno's."""

    name = "py_nothing"


def test_hooks_left_out_run_the_rust_defaults() -> None:
    ccarena.register_cc(Nothing)
    spec = SCENARIOS["random-loss"]
    a, b = ccarena.run(_with(spec, "reno")), ccarena.run(_with(spec, "py_nothing"))
    assert json.dumps(_named_out(a.summary), sort_keys=True) == json.dumps(_named_out(b.summary), sort_keys=True)


class Halver:
    name = "py_halver"
    params = (ccarena.Param("beta", float, 0.5, min=0.1, max=0.9, doc="window kept on loss"),)

    def ssthresh(self, tp: Any) -> int:
        return max(int(tp.snd_cwnd * self.beta), 2)


def test_parameters_are_declared_listed_and_checked() -> None:
    ccarena.register_cc(Halver)
    entry = {a["name"]: a for a in ccarena.algorithms()}["py_halver"]
    assert entry["params"] == [
        {"name": "beta", "doc": "window kept on loss", "type": "float", "min": 0.1, "max": 0.9, "default": 0.5}
    ]
    assert "test_python_cc.py" in entry["source"]
    ok = _with(SCENARIOS["random-loss"], "py_halver")
    ok["flows"][0]["params"] = {"beta": 0.7}
    assert ccarena.load_spec(ok).resolved["flows"][0]["params"] == {"beta": 0.7}
    bad = copy.deepcopy(ok)
    bad["flows"][0]["params"] = {"beta": 2.0}
    with pytest.raises(SpecError, match=r"flows\[0\]\.params\.beta.*\[0\.1, 0\.9\]"):
        ccarena.load_spec(bad)
    bad["flows"][0]["params"] = {"gamma": 1}
    with pytest.raises(SpecError, match="unknown parameter"):
        ccarena.load_spec(bad)
    r = ccarena.run(ok)
    assert r.summary["flows"][0]["cc"] == "py_halver"
    assert ccarena.unregister_cc("py_halver")
    with pytest.raises(SpecError, match="unknown algorithm"):
        ccarena.load_spec(ok)


def test_a_builtin_name_is_refused() -> None:
    class Impostor:
        name = "cubic"

    with pytest.raises(ValueError, match="built-in"):
        ccarena.register_cc(Impostor)


class Broken:
    name = "py_broken"

    def cong_avoid(self, tp: Any, acked: int) -> None:
        if tp.now_us > 500_000:
            raise ZeroDivisionError("the bug")
        tp.snd_cwnd += 0


def test_an_exception_in_a_hook_ends_the_run_in_one_line(tmp_path: Path) -> None:
    ccarena.register_cc(Broken)
    out = tmp_path / "deep" / "run"
    with pytest.raises(RuntimeError) as info:
        ccarena.run(_with(SCENARIOS["random-loss"], "py_broken"), out=out)
    line = str(info.value.args[0])
    assert "\n" not in line
    assert "py_broken" in line and "cong_avoid" in line and "ZeroDivisionError" in line and "simulated time 0.5" in line
    assert not out.exists()
    log = tmp_path / "deep" / "run.error.log"
    assert "Traceback" in log.read_text() and "the bug" in log.read_text()
    # The next run on this thread is not affected.
    assert ccarena.run(_with(SCENARIOS["random-loss"], "py_reno")).summary["flows"][0]["cc"] == "py_reno"


BROKEN_MODULE = '''
import ccarena

class Broken:
    name = "py_broken_cli"

    def ssthresh(self, tp):
        raise KeyError("oops")

ccarena.register_cc(Broken)
'''


def test_cli_run_exits_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken_cc.py").write_text(BROKEN_MODULE)
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent("""\
        duration = "5s"
        cc_module = "broken_cc.py"
        [topology]
        rtt = "40ms"
        bottleneck = { rate = "20Mbps", buffer = "1bdp", loss = 0.01 }
        [[flows]]
        cc = "py_broken_cli"
        """))
    out = tmp_path / "out"
    # The module's path is relative to the experiment file, not to the working directory.
    p = subprocess.run([*CCARENA, "run", str(exp), "--out", str(out), "--quiet", "--no-figure"],
                       check=False, capture_output=True, text=True, timeout=120, cwd="/")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "py_broken_cli" in lines[0] and "ssthresh" in lines[0], p.stderr
    assert not out.exists()
    assert "KeyError" in (tmp_path / "out.error.log").read_text()


FUSSY_MODULE = '''
import ccarena

class Fussy:
    name = "py_fussy"
    params = [ccarena.Param("beta", float, 0.5, min=0.1, max=0.9)]

    def __init__(self, beta):
        if beta > 0.8:
            raise ValueError("beta too large\\nfor me")
        self.beta = beta

class BadParams:
    name = "py_bad_params"
    params = [{"name": "gain", "type": list, "default": []}]

ccarena.register_cc(Fussy)
if WITH_BAD_PARAMS:
    ccarena.register_cc(BadParams)
'''


def _fussy_experiment(tmp_path: Path, beta: float, bad_params: bool = False) -> Path:
    (tmp_path / "fussy_cc.py").write_text(f"WITH_BAD_PARAMS = {bad_params}\n" + FUSSY_MODULE)
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent(f"""\
        duration = "2s"
        cc_module = "fussy_cc.py"
        [topology]
        rtt = "40ms"
        bottleneck = {{ rate = "20Mbps", buffer = "1bdp" }}
        [[flows]]
        cc = "reno"
        [[flows]]
        cc = "py_fussy"
        params = {{ beta = {beta} }}
        """))
    return exp


def test_a_constructor_that_raises_is_found_by_the_validation(tmp_path: Path) -> None:
    exp = _fussy_experiment(tmp_path, 0.85)
    with pytest.raises(SpecError) as info:
        ccarena.load_spec(exp)
    assert info.value.path == "flows[1].cc"
    assert "py_fussy" in str(info.value) and "beta=0.85" in str(info.value) and "ValueError" in str(info.value)
    assert "\n" not in str(info.value)
    assert ccarena.load_spec(_fussy_experiment(tmp_path, 0.5)).resolved["flows"][1]["params"] == {"beta": 0.5}
    exp = _fussy_experiment(tmp_path, 0.85)
    out = tmp_path / "out"
    p = subprocess.run([*CCARENA, "run", str(exp), "--out", str(out), "--quiet", "--no-figure"],
                       check=False, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "flows[1].cc" in lines[0] and "py_fussy" in lines[0], p.stderr
    assert "too large for me" in lines[0]
    assert not out.exists() and not (tmp_path / "out.error.log").exists()
    ccarena.unregister_cc("py_fussy")


def test_a_parameter_declaration_that_raises_names_the_algorithm(tmp_path: Path) -> None:
    class BadType:
        name = "py_bad_type"
        params = (ccarena.Param("gain", list, []),)

    class BadKey:
        name = "py_bad_key"
        params = ({"nme": "gain"},)

    for cls in (BadType, BadKey):
        with pytest.raises(ValueError, match=f"^{cls.name}: its parameter declaration"):
            ccarena.register_cc(cls)
        assert cls.name not in {a["name"] for a in ccarena.algorithms()}
    out = tmp_path / "out"
    exp = _fussy_experiment(tmp_path, 0.5, bad_params=True)
    p = subprocess.run([*CCARENA, "run", str(exp), "--out", str(out), "--quiet", "--no-figure"],
                       check=False, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cc_module" in lines[0] and "py_bad_params" in lines[0], p.stderr
    assert not out.exists()


def test_list_cc_shows_python_algorithms_with_their_file() -> None:
    p = subprocess.run([*CCARENA, "list", "cc", "--cc-module", str(EXAMPLES / "reno.py"),
                        "--cc-module", str(EXAMPLES / "cubic.py")],
                       check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "py_reno" in p.stdout and str(EXAMPLES / "reno.py") in p.stdout.replace("\n          ", "")
    assert "\ncubic:" in p.stdout  # beside the built-ins, with its parameters:
    assert "hystart_low_window" in p.stdout.split("\npy_cubic:", 1)[1].split("\n\n", 1)[0]
    p = subprocess.run([*CCARENA, "list", "cc", "--cc-module", "no_such_cc_module"],
                       check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "no_such_cc_module" in p.stderr and "ModuleNotFoundError" in p.stderr


def _campaign_file(tmp_path: Path) -> Path:
    """Rust Reno and Python Reno at two rates; the Python one's module named by cc_module."""
    exp = tmp_path / "s.toml"
    exp.write_text(textwrap.dedent(f"""\
        name = "pysweep"
        duration = "2s"
        cc_module = "{EXAMPLES / 'reno.py'}"
        [topology]
        rtt = "40ms"
        bottleneck = {{ rate = "10Mbps", buffer = "1bdp", loss = 0.002 }}
        [[flows]]
        cc = "py_reno"
        [sweep]
        "flows[0].cc" = ["reno", "py_reno"]
        "topology.bottleneck.rate" = ["10Mbps", "20Mbps"]
        """))
    return exp


def test_sweep_with_two_workers_imports_the_module(tmp_path: Path) -> None:
    _sweep_equals_rust(tmp_path, _campaign_file(tmp_path), ["--jobs", "2"])


def test_sweep_on_dask_workers_imports_the_module(tmp_path: Path) -> None:
    _sweep_equals_rust(tmp_path, _campaign_file(tmp_path), ["--jobs", "2", "--executor", "dask"])


def _sweep_equals_rust(tmp_path: Path, exp: Path, options: list[str]) -> None:
    """Runs the campaign with ``options`` and checks each Python Reno run equals its Rust Reno run."""
    out = tmp_path / "camp"
    p = subprocess.run([*CCARENA, "sweep", str(exp), "--out", str(out), *options, "--quiet"],
                       check=False, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "runs.parquet").to_pylist()
    assert len(rows) == 4 and all(r.get("status", "ok") == "ok" for r in rows), rows
    sums = {}
    for d in (out / "runs").iterdir():
        s = json.loads((d / "summary.json").read_text())
        sums[(s["flows"][0]["cc"], s["bottleneck"]["rate_bps"] if isinstance(s["bottleneck"], dict) else d.name)] = s
    for rate in {k[1] for k in sums}:
        a, b = sums[("reno", rate)], sums[("py_reno", rate)]
        for k in ("utilization", "jain_index", "queue", "conservation"):
            assert a[k] == b[k]


def test_the_emulator_refuses_a_python_algorithm() -> None:
    from ccarena.backends.emu.checks import load_spec as emu_load_spec

    with pytest.raises(SpecError, match=r'flows\[0\]\.cc.*"py_reno" is written in Python'):
        emu_load_spec(_with(SCENARIOS["random-loss"], "py_reno"))


def test_the_readme_algorithm_runs_and_is_short() -> None:
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = text.split("## Your own algorithm in Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) < 40
    scope: dict[str, Any] = {"print": lambda *a: None}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
    assert scope["r"].summary["flows"][0]["cc"] == "half_reno"
    assert 0.5 < scope["r"].summary["jain_index"] <= 1.0


def test_every_hook_crosses_and_changes_nothing_when_it_does_nothing() -> None:
    """A Reno that defines every hook (the extra ones read their arguments and leave
    everything as it was) runs the built-in Reno's run bit for bit."""
    from reno import PyReno

    calls: dict[str, int] = {}

    def seen(hook: str) -> None:
        calls[hook] = calls.get(hook, 0) + 1

    class Everything(PyReno):
        name = "py_everything"
        metric_names = ("acks",)

        def __init__(self) -> None:
            self.acks = 0

        def init(self, tp: Any) -> None:
            seen("init")

        def cong_control(self, tp: Any, rs: Any) -> bool:
            seen("cong_control")
            _ = (rs.delivered, rs.interval_us, rs.is_app_limited, rs.prior_in_flight)
            return False

        def pkts_acked(self, tp: Any, ack: Any) -> None:
            seen("pkts_acked")
            self.acks += ack.acked
            _ = (ack.rtt_us, ack.in_flight, ack.ece, ack.feedback, tp.srtt_us, tp.min_rtt_us)

        def set_state(self, tp: Any, new_state: int) -> None:
            seen("set_state")

        def cwnd_event(self, tp: Any, event: int, idle_us: int) -> None:
            seen("cwnd_event")

        def skb_marked_lost(self, tp: Any, rs: Any) -> None:
            seen("skb_marked_lost")

        def on_send(self, tp: Any, hdr: Any) -> None:
            seen("on_send")
            hdr.cwnd_bytes = hdr.cwnd_bytes

        def metrics(self) -> list[float]:
            return [float(self.acks)]

    ccarena.register_cc(Everything)
    spec = SCENARIOS["ecn-red"]
    a, b = ccarena.run(_with(spec, "reno")), ccarena.run(_with(spec, "py_everything"))
    assert json.dumps(_named_out(a.summary), sort_keys=True) == json.dumps(_named_out(b.summary), sort_keys=True)
    for hook in ("init", "cong_control", "pkts_acked", "set_state", "cwnd_event", "on_send"):
        assert calls.get(hook, 0) > 0, (hook, calls)
    assert b.flows["acks"].max() > 1000  # the metric reaches the trace


def test_a_stepped_run_stops_at_the_hook_that_raised_and_steps_like_one_run() -> None:
    ccarena.register_cc(Broken)
    sim = ccarena.Simulation(_with(SCENARIOS["random-loss"], "py_broken"))
    sim.run_until(0.4)  # before the bug
    with pytest.raises(RuntimeError) as info:
        sim.run_until(2.0)
    line = str(info.value.args[0])
    assert "py_broken" in line and "cong_avoid" in line and "simulated time 0.5" in line
    # A Python algorithm run in steps gives the run's own numbers.
    whole = ccarena.run(_with(SCENARIOS["random-loss"], "py_reno")).summary
    sim = ccarena.Simulation(_with(SCENARIOS["random-loss"], "py_reno"))
    while not sim.done:
        sim.step(0.37)
    assert sim.finish().summary == whole


class Dice:
    """Reno that draws its backoff from a generator seeded by the engine (tp.rng_seed)."""

    name = "py_dice"
    randomized = True

    def ssthresh(self, tp: Any) -> int:
        import random

        return max(int(tp.snd_cwnd * random.Random(tp.rng_seed + tp.delivered).uniform(0.4, 0.6)), 2)


def test_a_python_algorithm_that_draws_random_numbers_says_so_for_repeats() -> None:
    # Without randomness repeats of a scenario are identical, and the campaign says so; a Python
    # algorithm declares that it draws (class attribute randomized), as BBR does in the registry.
    from ccarena.campaign.grid import has_randomness

    ccarena.register_cc(Dice)
    ccarena.register_cc(Nothing)
    doc = experiment({}, [{"cc": "py_dice"}])
    assert has_randomness(ccarena.load_spec(doc))
    assert not has_randomness(ccarena.load_spec(experiment({}, [{"cc": "py_nothing"}])))
