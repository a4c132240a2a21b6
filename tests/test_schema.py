"""``ccarena schema``: the JSON Schema agrees with the validator.

Every scenario file validates against the schema; a key the validator
rejects as unknown, anywhere in the file, is rejected by the schema too;
and each algorithm's parameters are checked by name and type.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import ccarena
import jsonschema
import pytest
from ccarena.spec import SpecError, json_schema, resolve

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.toml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json_schema(ccarena.algorithms())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _load(path: Path) -> dict[str, Any]:
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    doc.pop("sweep", None)  # a campaign's grid is not part of one experiment
    return doc


def test_the_command_prints_the_schema() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ccarena", "schema"], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == json_schema(ccarena.algorithms())


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_scenario_validates(path: Path, validator: jsonschema.Draft7Validator) -> None:
    errors = [e.message for e in validator.iter_errors(_load(path))]
    assert not errors


def test_a_resolved_experiment_validates(validator: jsonschema.Draft7Validator) -> None:
    spec = ccarena.load_spec(ROOT / "scenarios" / "rhee2007_surge.toml")
    assert not list(validator.iter_errors(spec.resolved))


def _tables(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every table in a document (lists of tables included)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(doc, dict):
        out.append(path)
        for k, v in doc.items():
            out += _tables(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _tables(v, (*path, i))
    return out


def _with_key(doc: dict[str, Any], where: tuple[Any, ...], key: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node: Any = out
    for p in where:
        node = node[p]
    node[key] = "x"
    return out


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_unknown_keys_are_rejected_by_both(path: Path, validator: jsonschema.Draft7Validator) -> None:
    doc = _load(path)
    checked = 0
    for where in _tables(doc):
        if where and where[-1] == "params":
            continue  # algorithm parameters: checked per algorithm below
        bad = _with_key(doc, where, "colour")
        with pytest.raises(SpecError, match="unknown key"):
            resolve(bad)
        assert list(validator.iter_errors(bad)), f"the schema accepts an unknown key in {where}"
        checked += 1
    assert checked >= 4


def test_unknown_and_mistyped_parameters_are_rejected_by_both(validator: jsonschema.Draft7Validator) -> None:
    base = _load(ROOT / "scenarios" / "quickstart.toml")
    for params in ({"fast_convergence": "yes"}, {"no_such_parameter": 1}):
        bad = copy.deepcopy(base)
        bad["flows"][0]["params"] = params
        with pytest.raises(SpecError):
            resolve(bad)
        assert list(validator.iter_errors(bad)), params
    good = copy.deepcopy(base)
    good["flows"][0]["params"] = {"fast_convergence": False, "beta": 0.7}
    resolve(good)
    assert not list(validator.iter_errors(good))


def test_algorithm_and_discipline_names_come_from_the_engine(validator: jsonschema.Draft7Validator) -> None:
    from ccarena import _core

    schema = json_schema(ccarena.algorithms())
    flow = schema["properties"]["flows"]["items"]["properties"]
    assert flow["cc"]["enum"] == [a["name"] for a in _core.cc_algorithms()]
    bottleneck = schema["properties"]["topology"]["properties"]["bottleneck"]["properties"]
    assert bottleneck["qdisc"]["enum"] == [q["name"] for q in _core.qdisc_catalogue()]
    web = schema["properties"]["background"]["properties"]["web"]["anyOf"][0]["properties"]
    assert web["cc"]["enum"] == flow["cc"]["enum"]
    assert json_schema()["properties"]["flows"]["items"]["properties"]["cc"]["enum"] == flow["cc"]["enum"]


def test_a_good_and_a_bad_file_against_the_schema(validator: jsonschema.Draft7Validator) -> None:
    good = _load(ROOT / "scenarios" / "quickstart.toml")
    good["topology"]["bottleneck"]["qdisc"] = "fq_codel"
    good["flows"][0]["cc"] = "bbr3"
    good["topology"]["bottleneck"]["rate"] = "100MBPS"  # units in any case, as the validator reads them
    good["topology"]["rtt"] = "50MS"
    resolve(good)
    assert not list(validator.iter_errors(good))
    for where, value in ((("flows", 0, "cc"), "cubik"), (("flows", 0, "cc"), "BBR"),
                         (("topology", "bottleneck", "qdisc"), "fq-codel"),
                         (("topology", "bottleneck", "rate"), "100MBps")):
        bad = copy.deepcopy(good)
        node: Any = bad
        for p in where[:-1]:
            node = node[p]
        node[where[-1]] = value
        with pytest.raises(SpecError):
            resolve(bad)
        assert list(validator.iter_errors(bad)), (where, value)


def test_a_campaigns_baseline_is_an_algorithm_name(validator: jsonschema.Draft7Validator) -> None:
    doc = _load(ROOT / "scenarios" / "quickstart.toml")
    assert not list(validator.iter_errors({**doc, "sweep": {"baseline": ["reno", "cubic"], "repeat": 2}}))
    assert list(validator.iter_errors({**doc, "sweep": {"baseline": "renoo"}}))
