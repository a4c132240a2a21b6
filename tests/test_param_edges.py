"""Every numeric parameter of every queue discipline and every algorithm, at its edges, through ``ccarena run``.

The parameters and their ranges are read from the engine's own tables
(``_core.qdisc_catalogue()`` and ``_core.cc_algorithms()``), so a parameter
added there is walked here with no change to this file. For each one the
values 0, the minimum, the maximum (the last value inside an open bound) and
the first value outside each bound are run on a tiny experiment (0.2 s at
10 Mbit/s, a few milliseconds each). Whether a value is inside is decided
here from the table's numbers, not by asking the engine. Inside: exit 0 and
a summary.json. Outside: exit 2, one ``error:`` line naming the parameter,
raised by the validation (not left to the engine), and nothing written.

The engine's own refusal is the backstop: with the validation bypassed, a
refused value still ends as one line naming the file's field, exit 2,
nothing written, and in a campaign as a failed run with that message.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from ccarena import _core, cli
from ccarena.campaign.execute import Task, execute
from ccarena.spec import load_spec, topology
from ccarena.spec.schema import qdisc_key

BASE = textwrap.dedent(
    """\
    name = "edge"
    duration = "0.2s"

    [topology]
    rtt = "10ms"
    bottleneck = { rate = "10Mbps", buffer = "10pkts" }

    [[flows]]
    cc = "reno"
    """
)

Param = dict[str, Any]


def _step(x: float, to: float, integer: bool) -> float:
    """The next value after ``x`` towards ``to``: ±1 for integers, the adjacent float otherwise."""
    if integer:
        return x + (1 if to > x else -1)
    return math.nextafter(x, to)


def _inside(p: Param, x: float) -> bool:
    lo, hi = p["min"], p["max"]
    above = x > lo or (x == lo and not p.get("min_open", False))
    below = x < hi or (x == hi and not p.get("max_open", False))
    return above and below


def _edges(p: Param) -> list[tuple[float, bool]]:
    """0, the first and last values inside, and the first outside each bound: (value, inside)."""
    integer = p["type"] == "int"
    lo, hi = p["min"], p["max"]
    first = _step(lo, hi, integer) if p.get("min_open") else lo
    last = _step(hi, lo, integer) if p.get("max_open") else hi
    values = dict.fromkeys([0, first, last, _step(first, -math.inf, integer), _step(last, math.inf, integer)])
    return [(int(x) if integer else float(x), _inside(p, x)) for x in values]


def _written(p: Param, x: float) -> Any:
    """The value as the experiment file writes it."""
    unit = p.get("unit")
    if unit == "ns":
        return f"{int(x)}ns"
    if unit == "bytes":
        return f"{int(x)}B"
    return x


def _cases() -> list[Any]:
    cases = []
    for q in _core.qdisc_catalogue():
        params = {p["name"]: p for p in q["params"]}
        for p in params.values():
            if p["type"] not in ("int", "float"):
                continue
            for x, inside in _edges(p):
                table = {qdisc_key(p): _written(p, x)}
                if inside:
                    # Keep the relations (RED's max_th > min_th) with the other parameter at its far end.
                    for other in params.values():
                        if other.get("exceeds") == p["name"]:
                            table[qdisc_key(other)] = _written(other, other["max"])
                    if p.get("exceeds"):
                        other = params[p["exceeds"]]
                        table[qdisc_key(other)] = _written(other, other["min"])
                bottleneck = {"qdisc": q["name"], q["name"]: table}
                field = f"topology.bottleneck.{q['name']}.{qdisc_key(p)}"
                case = ({"bottleneck": bottleneck}, field, inside)
                cases.append(pytest.param(*case, id=f"{q['name']}.{p['name']}={x!r}"))
    for a in _core.cc_algorithms():
        for p in a["params"]:
            if p["type"] not in ("int", "float"):
                continue
            for x, inside in _edges(p):
                case = ({"cc": a["name"], "params": {p["name"]: x}}, f"flows[0].params.{p['name']}", inside)
                cases.append(pytest.param(*case, id=f"{a['name']}.{p['name']}={x!r}"))
    return cases


def _experiment(change: dict[str, Any]) -> str:
    import tomllib

    doc = tomllib.loads(BASE)
    if "bottleneck" in change:
        doc["topology"]["bottleneck"].update(change["bottleneck"])
    else:
        doc["flows"][0].update(change)
    return tomli_w.dumps(doc)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


CASES = _cases()


def test_every_numeric_parameter_is_walked() -> None:
    # Every discipline with numbers and every algorithm with numbers contributes cases.
    walked = {c.id.split(".")[0] for c in CASES}
    with_numbers = {
        q["name"] for q in _core.qdisc_catalogue() if any(p["type"] in ("int", "float") for p in q["params"])
    }
    with_numbers |= {
        a["name"] for a in _core.cc_algorithms() if any(p["type"] in ("int", "float") for p in a["params"])
    }
    assert walked == with_numbers
    assert {"fq_codel", "red", "pie", "cubic", "bbr"} <= walked
    assert sum(1 for c in CASES if not c.values[2]) >= 2 * 60


@pytest.mark.parametrize(("change", "field", "inside"), CASES)
def test_parameter_edge_through_ccarena_run(tmp_path: Path, capsys: Any, change: Any, field: str, inside: bool) -> None:
    path = tmp_path / "x.toml"
    path.write_text(_experiment(change))
    out = tmp_path / "out"
    code = cli.main(["run", str(path), "--out", str(out), "--no-figure", "--quiet"])
    err = capsys.readouterr().err
    if inside:
        assert code == 0, err
        assert (out / "summary.json").is_file()
        return
    assert code == 2, err
    line = one_error_line(err)
    assert line.startswith(f"error: {field}: "), line
    # The validation refused it, with the engine's ranges; the engine never saw it.
    assert "refused by the engine" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.toml"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        # The fuzzer's find: it passed the validation, and the engine's refusal escaped as a traceback.
        (
            'fq_codel = { interval = "0s" }',
            'topology.bottleneck.fq_codel.interval: expected a time in (0s, 10000s], got "0s"',
        ),
        (
            'pie = { tupdate = "999ns" }',
            'topology.bottleneck.pie.tupdate: expected a time in [1us, 10000s], got "999ns"',
        ),
        ('codel = { mtu = "0B" }', 'topology.bottleneck.codel.mtu: expected a size in [1B, 1MB], got "0B"'),
        ("red = { max_p = 1.5 }", "topology.bottleneck.red.max_p: expected a number in [0, 1], got 1.5"),
        ("fq_codel = { flows = 0 }", "topology.bottleneck.fq_codel.flows: expected an integer in [1, 65536], got 0"),
        # RED's relation, named where the user wrote the value.
        ("red = { max_th = 3 }", "topology.bottleneck.red.max_th: must exceed min_th (5.0), got 3.0"),
        ("red = { min_th = 20 }", "topology.bottleneck.red.min_th: must be below max_th (15.0, its default), got 20.0"),
    ],
)
def test_messages(tmp_path: Path, capsys: Any, table: str, message: str) -> None:
    kind = table.split(" ")[0]
    path = tmp_path / "x.toml"
    path.write_text(BASE.replace('buffer = "10pkts" }', f'buffer = "10pkts", qdisc = "{kind}", {table} }}'))
    assert cli.main(["run", str(path), "--no-figure", "--quiet"]) == 2
    assert one_error_line(capsys.readouterr().err) == f"error: {message}"


def _without_validation(monkeypatch: Any) -> None:
    """Lets every discipline parameter through as written (integers stand for times and sizes)."""
    monkeypatch.setattr(topology, "_qdisc_value", lambda value, p, path: value)


def test_an_engine_refusal_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    _without_validation(monkeypatch)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "x.toml"
    path.write_text(
        BASE.replace('buffer = "10pkts" }', 'buffer = "10pkts", qdisc = "fq_codel", fq_codel = { interval = 0 } }')
    )
    # No --out: the default folder, results/edge-seed1, and results/ itself are not left behind.
    assert cli.main(["run", str(path), "--no-figure", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("error: topology.bottleneck.fq_codel.interval: expected an integer in (0, "), line
    assert line.endswith("got 0 (refused by the engine)"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.toml"]


def test_a_campaign_run_the_engine_refuses_fails_with_that_message(tmp_path: Path, monkeypatch: Any) -> None:
    _without_validation(monkeypatch)
    doc = BASE.replace('buffer = "10pkts" }', 'buffer = "10pkts", qdisc = "codel", codel = { target = 0 } }')
    import tomllib

    spec = load_spec(tomllib.loads(doc))
    out = tmp_path / "store" / "run-1"
    outcome = execute(Task("run-1", spec, str(out), False, "sim"))
    assert not outcome.ok and outcome.summary is None
    assert outcome.error == (
        "SpecError: topology.bottleneck.codel.target: expected an integer in (0, 10000000000000], got 0 (refused by the engine)"
    )
    assert not (tmp_path / "store").exists()
