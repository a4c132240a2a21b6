"""Messages that point at the fix (issue 31).

* a misspelt name or key gets "did you mean" (algorithms, queue disciplines,
  keys anywhere in the file, algorithm parameters, [sweep] keys, baselines);
* units are read whatever their case where that is unambiguous, and a wrong
  unit gets the list of units (tests/test_units.py checks the parsers alone);
* a campaign reports a mistake of its base file as the file's, not as the
  first point's;
* repeats of a scenario whose algorithm draws random numbers (BBR) are not
  said to be identical;
* the validator's work per flow group does not depend on the number of groups.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import ccarena
import pytest
from ccarena import _core
from ccarena.campaign.grid import grid, has_randomness
from ccarena.spec import SpecError, load_spec

CCARENA = [sys.executable, "-m", "ccarena"]


def base(**flow: Any) -> dict[str, Any]:
    return {
        "duration": "2s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "cubic", **flow}],
    }


def error(doc: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as e:
        load_spec(doc)
    return str(e.value)


# --- did you mean -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cc", "hint"),
    [
        ("cubik", '(did you mean "cubic"?)'),
        ("BBR", '(did you mean "bbr"?)'),
        ("Cubic", '(did you mean "cubic"?)'),
        ("bbr2", '(did you mean "bbr" or "bbr3"?)'),
    ],
)
def test_an_unknown_algorithm_gets_the_closest_names(cc: str, hint: str) -> None:
    assert error(base(cc=cc)) == f'flows[0].cc: unknown algorithm "{cc}" {hint}'


def test_an_unknown_algorithm_far_from_any_lists_them_all() -> None:
    names = ", ".join(a["name"] for a in _core.cc_algorithms())
    assert error(base(cc="foo")) == f'flows[0].cc: unknown algorithm "foo" (known: {names})'


def test_background_algorithms_get_the_hint_too() -> None:
    doc = base()
    doc["background"] = {"web": [{"sessions": 2, "cc": "renoo"}]}
    assert error(doc) == 'background.web[0].cc: unknown algorithm "renoo" (did you mean "reno" or "newreno"?)'


@pytest.mark.parametrize(
    ("qdisc", "hint"),
    [("fq-codel", '(did you mean "fq_codel"?)'), ("RED", '(did you mean "red"?)'), ("codell", '(did you mean "codel"?)')],
)
def test_an_unknown_queue_discipline_gets_the_closest_name(qdisc: str, hint: str) -> None:
    doc = base()
    doc["topology"]["bottleneck"]["qdisc"] = qdisc
    assert error(doc) == f'topology.bottleneck.qdisc: unknown queue discipline "{qdisc}" {hint}'


@pytest.mark.parametrize(
    ("where", "key", "message"),
    [
        ((), "durration", 'durration: unknown key (did you mean "duration"?)'),
        (("topology",), "rrt", 'topology.rrt: unknown key (did you mean "rtt"?)'),
        (("topology", "bottleneck"), "qdisk", 'topology.bottleneck.qdisk: unknown key (did you mean "qdisc"?)'),
        (("flows", 0), "strat", 'flows[0].strat: unknown key (did you mean "start"?)'),
        (("flows", 0), "Count", 'flows[0].Count: unknown key (did you mean "count"?)'),
        (("flows", 0, "params"), "betta", 'flows[0].params.betta: unknown parameter "betta" for cubic (did you mean "beta"?)'),
    ],
)
def test_a_misspelt_key_anywhere_gets_the_closest_key(where: tuple[Any, ...], key: str, message: str) -> None:
    doc = base(params={})
    node: Any = doc
    for p in where:
        node = node[p]
    node[key] = 1
    assert error(doc) == message


def test_a_misspelt_key_in_tcp_measure_and_background() -> None:
    doc = base()
    doc["tcp"] = {"init_cwin": 4}
    assert error(doc) == 'tcp.init_cwin: unknown key (did you mean "init_cwnd"?)'
    doc = base()
    doc["measure"] = {"intervall": "10ms"}
    assert error(doc) == 'measure.intervall: unknown key (did you mean "interval"?)'
    doc = base()
    doc["background"] = {"udp": [{"rate": "1Mbps", "patern": "cbr"}]}
    assert error(doc) == 'background.udp[0].patern: unknown key (did you mean "pattern"?)'


def test_an_unknown_key_far_from_any_still_lists_the_known_ones() -> None:
    assert error(base(colour="red")).startswith("flows[0].colour: unknown key (known: accecn, accecn_option, ack_path, app, cc, count,")


def test_an_algorithm_without_parameters_says_so() -> None:
    doc = base(params={"beta": 0.5})
    doc["flows"][0]["cc"] = "reno"
    assert error(doc) == 'flows[0].params.beta: unknown parameter "beta" for reno (it has none)'


# --- [sweep] keys and baselines -----------------------------------------------------------------

CAMPAIGN = """\
name = "c"
duration = "1s"
seed = 1

[topology]
rtt = "20ms"
bottleneck = {{ rate = "10Mbps", buffer = "1bdp" }}

[[flows]]
cc = "{cc}"

[[flows]]
cc = "reno"

[measure]
interval = "100ms"

[sweep]
{sweep}
"""


def campaign(tmp: Path, sweep: str, cc: str = "cubic") -> Path:
    path = tmp / "c.toml"
    path.write_text(CAMPAIGN.format(cc=cc, sweep=textwrap.dedent(sweep)))
    return path


def grid_error(path: Path) -> str:
    with pytest.raises(SpecError) as e:
        grid(ccarena.spec.read_toml(path))
    return str(e.value)


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ("repeats = 5\n", 'sweep.repeats: unknown key (did you mean "repeat"?)'),
        ("Repeat = 5\n", 'sweep.Repeat: unknown key (did you mean "repeat"?)'),
        ('zipp = [["topology.rtt"]]\n"topology.rtt" = ["10ms"]\n', 'sweep.zipp: unknown key (did you mean "zip"?)'),
        ('baselines = "reno"\n', 'sweep.baselines: unknown key (did you mean "baseline"?)'),
        ('"flow[0].cc" = ["bbr"]\n', 'sweep."flow[0].cc": unknown key "flow" (did you mean "flows"?)'),
        ('"topolgy.rtt" = ["10ms"]\n', 'sweep."topolgy.rtt": unknown key "topolgy" (did you mean "topology"?)'),
        ("colour = 5\n", 'sweep.colour: unknown key (known: zip, repeat, baseline, or a field path such as "flows[0].cc")'),
        ('baseline = "renoo"\n', 'sweep.baseline: unknown algorithm "renoo" (did you mean "reno" or "newreno"?)'),
    ],
)
def test_sweep_keys_get_the_closest_key(tmp_path: Path, sweep: str, message: str) -> None:
    assert grid_error(campaign(tmp_path, sweep)) == message


def test_the_sweep_command_says_it_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    path = campaign(tmp_path, "repeats = 5\n")
    out = tmp_path / "out"
    p = subprocess.run([*CCARENA, "sweep", str(path), "--out", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2
    assert p.stderr == 'error: sweep.repeats: unknown key (did you mean "repeat"?)\n'
    assert not out.exists()


def test_the_run_command_says_it_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(CAMPAIGN.format(cc="cubik", sweep="").replace("[sweep]\n", ""))
    out = tmp_path / "out"
    p = subprocess.run([*CCARENA, "run", str(path), "--out", str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2
    assert p.stderr == 'error: flows[0].cc: unknown algorithm "cubik" (did you mean "cubic"?)\n'
    assert not out.exists()


# --- units in files -----------------------------------------------------------------------------


def test_units_in_any_case_resolve_like_the_canonical_ones() -> None:
    doc = base(start="0.5S", rate="1MBIT", app="rate")
    doc["topology"] = {"rtt": "40MS", "bottleneck": {"rate": "100MBPS", "buffer": "1BDP"}}
    canonical = base(start="0.5s", rate="1Mbps", app="rate")
    canonical["topology"] = {"rtt": "40ms", "bottleneck": {"rate": "100Mbps", "buffer": "1bdp"}}
    assert load_spec(doc).engine == load_spec(canonical).engine
    doc["topology"]["bottleneck"]["rate"] = "100mbit"
    assert load_spec(doc).resolved["topology"]["bottleneck"]["rate"] == "100Mbps"


def test_a_wrong_unit_in_a_file_lists_the_units() -> None:
    doc = base()
    doc["topology"]["bottleneck"]["rate"] = "100 Mbit/s"
    assert error(doc) == (
        'topology.bottleneck.rate: expected a rate such as "100Mbps" '
        '(units: bps, kbps, Mbps, Gbps, Tbps, or bit, kbit, mbit, gbit), got "100 Mbit/s"'
    )
    doc = base()
    doc["topology"]["bottleneck"]["buffer"] = "64Mb"
    assert error(doc) == (
        'topology.bottleneck.buffer: expected a size such as "64KB", "100pkts" or "1bdp" '
        '(units: B, KB, MB, GB, KiB, MiB, GiB, pkts, bdp), got "64Mb"'
    )
    doc = base()
    doc["topology"]["bottleneck"]["rate"] = "10MBps"
    assert error(doc) == (
        'topology.bottleneck.rate: expected a rate in bits per second, got "10MBps" (bytes per second; write "80Mbps")'
    )


# --- base-file errors in a campaign -------------------------------------------------------------


def test_a_typo_in_the_base_file_is_the_files_error_not_the_first_points(tmp_path: Path) -> None:
    path = campaign(tmp_path, '"topology.bottleneck.buffer" = ["0.1bdp", "1bdp"]\n', cc="cubik")
    assert grid_error(path) == 'flows[0].cc: unknown algorithm "cubik" (did you mean "cubic"?)'
    text = path.read_text().replace('cc = "cubik"', 'cc = "cubic"').replace('duration = "1s"', 'duraton = "1s"')
    path.write_text(text)
    assert grid_error(path) == 'duraton: unknown key (did you mean "duration"?)'


def test_a_base_file_error_is_said_once_in_the_sweep_command(tmp_path: Path) -> None:
    path = campaign(tmp_path, '"topology.bottleneck.buffer" = ["0.1bdp", "1bdp"]\n', cc="cubik")
    p = subprocess.run([*CCARENA, "sweep", str(path), "--dry-run"], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2
    assert p.stderr == 'error: flows[0].cc: unknown algorithm "cubik" (did you mean "cubic"?)\n'


def test_an_error_at_a_swept_field_keeps_the_point(tmp_path: Path) -> None:
    path = campaign(tmp_path, '"flows[0].cc" = ["cubik", "reno"]\n')
    assert grid_error(path) == '[flows[0].cc = "cubik"] flows[0].cc: unknown algorithm "cubik" (did you mean "cubic"?)'
    path = campaign(tmp_path, '"topology.bottleneck" = [{ rate = "1Mbps", buffer = "1bdp", qdisk = "red" }]\n')
    assert grid_error(path).startswith('[topology.bottleneck = {"rate": "1Mbps", "buffer": "1bdp", "qdisk": "red"}] ')


def test_an_error_that_depends_on_the_swept_values_keeps_the_point(tmp_path: Path) -> None:
    # beta is a parameter of cubic, not of reno: the base file (reno) is wrong only at the reno points.
    path = campaign(tmp_path, '"flows[0].cc" = ["reno", "cubic"]\n', cc="reno")
    path.write_text(path.read_text().replace('cc = "reno"\n\n[[flows]]', 'cc = "reno"\nparams = { beta = 0.5 }\n\n[[flows]]', 1))
    assert grid_error(path) == (
        '[flows[0].cc = "reno"] flows[0].params.beta: unknown parameter "beta" for reno (it has none)'
    )


# --- repeats of algorithms that draw random numbers ---------------------------------------------


def test_the_registry_says_which_algorithms_draw_random_numbers() -> None:
    randomized = {a["name"] for a in _core.cc_algorithms() if a["randomized"]}
    assert randomized == {"bbr", "bbr3", "vivace"}  # each has a seed parameter: BBR's phases, Vivace's probe order


@pytest.mark.parametrize(
    ("flows", "qdisc", "random"),
    [
        (["bbr", "cubic"], "droptail", True),
        (["bbr3", "reno"], "droptail", True),
        (["cubic", "reno"], "droptail", False),
        (["cubic", "reno"], "red", True),
        (["cubic", "reno"], "pie", True),
        (["cubic", "reno"], "codel", False),
    ],
)
def test_has_randomness_counts_algorithms_and_coin_flipping_queues(flows: list[str], qdisc: str, random: bool) -> None:
    doc = base()
    doc["flows"] = [{"cc": cc} for cc in flows]
    doc["topology"]["bottleneck"]["qdisc"] = qdisc
    assert has_randomness(load_spec(doc)) is random


def test_a_sweep_names_the_points_whose_repeats_are_identical(tmp_path: Path) -> None:
    """Points of one sweep differ in what they draw: reno against reno draws nothing, bbr against reno
    does, and a reno baseline of the bbr point draws nothing again. The warning names the two fixed
    variants, not the bbr point, and the catalogue bears it out run by run."""
    path = campaign(tmp_path, '"flows[0].cc" = ["reno", "bbr"]\nrepeat = 2\nbaseline = "reno"\n')
    lines: list[str] = []
    c = ccarena.sweep(path, out=tmp_path / "o", jobs=1, log=lines.append)
    assert len(lines) == 1, lines
    warning = lines[0]
    assert warning.startswith("warning: sweep.repeat: 3 of 4 points (each baseline counted as a point) draw no random")
    assert 'flows[0].cc = "reno"; flows[0].cc = "reno", baseline reno; flows[0].cc = "bbr", baseline reno' in warning
    assert warning.endswith("baseline reno")
    runs = c.runs.assign(variant=lambda d: d["flows[0].cc"] + "/" + d["baseline"].fillna("-"))
    spread = {v: g["queue.tx_bytes"].nunique() for v, g in runs.groupby("variant")}
    assert spread == {"reno/-": 1, "reno/reno": 1, "bbr/reno": 1, "bbr/-": 2}


def test_bbr_against_cubic_repeats_differ_and_get_no_warning(tmp_path: Path) -> None:
    path = campaign(tmp_path, "repeat = 3\n", cc="bbr")
    path.write_text(path.read_text().replace('cc = "reno"', 'cc = "cubic"').replace('duration = "1s"', 'duration = "2s"'))
    lines: list[str] = []
    c = ccarena.sweep(path, out=tmp_path / "o", jobs=1, log=lines.append)
    assert lines == []
    runs = c.runs.sort_values("repeat")
    assert list(runs["status"]) == ["ok"] * 3
    assert runs["jain_index"].nunique() > 1 or runs["queue.tx_bytes"].nunique() > 1


def test_cubic_against_reno_without_randomness_still_warns(tmp_path: Path) -> None:
    path = campaign(tmp_path, "repeat = 2\n")
    lines: list[str] = []
    ccarena.sweep(path, out=tmp_path / "o", jobs=1, log=lines.append)
    assert len(lines) == 1 and lines[0].startswith("warning: sweep.repeat: 2 repeats of a scenario that draws no random")
    assert "bbr/bbr3" in lines[0]


# --- many flow groups ---------------------------------------------------------------------------


def test_warnings_name_the_right_group_among_many() -> None:
    doc = base()
    doc["flows"] = [{"cc": "reno", "count": 1 + i % 3, "rtt": "20ms"} for i in range(300)]
    doc["flows"][217]["rtt"] = "12s"
    doc["duration"] = "60s"
    spec = load_spec(doc)
    assert [w for w in spec.warnings if ".rtt:" in w] == ["flows[217].rtt: 12s is above 10s"]


def test_validating_leaves_the_document_alone() -> None:
    doc = base()
    before = copy.deepcopy(doc)
    load_spec(doc)
    assert doc == before
