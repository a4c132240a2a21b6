"""The engine configuration defined once, in Rust: its JSON Schema, Python's typed view of it, and the
refusal of a misspelt key naming its path (crates/sim/src/config_form.rs, python/ccarena/spec/engine.py)."""

from __future__ import annotations

import copy
import json
import pickle
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ccarena
import pytest
from ccarena import _core
from ccarena.analysis.capacity import capacity_bits
from ccarena.backends.emu import checks as emu_checks
from ccarena.backends.emu import config as emu_config
from ccarena.backends.estimate import estimate
from ccarena.campaign.grid import grid
from ccarena.presets import PRESETS
from ccarena.results.packets import link_names
from ccarena.spec import Spec, SpecError
from ccarena.spec.engine import EngineConfig, engine_fields, engine_schema
from ccarena.spec.limits import warnings
from ccarena.spec.linkmodels import trace_notes

ROOT = Path(__file__).resolve().parent.parent


def quickstart() -> Spec:
    return ccarena.load_spec(tomllib.loads((ROOT / "scenarios" / "quickstart.toml").read_text()))


def preset_specs() -> Iterator[tuple[str, Spec]]:
    """Every run of every preset's quick form, resolved (nothing runs)."""
    for p in PRESETS:
        for run in grid(p.document(quick=True)).runs:
            yield f"{p.id}/{run.run_id}", run.spec


def walk(view: EngineConfig) -> Iterator[str]:
    """Every field the configuration holds, read as an attribute, tables and lists of tables within."""
    for key in view:
        value = getattr(view, key)
        yield key
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, EngineConfig):
                yield from walk(v)


def schema_field_names() -> set[str]:
    """Every field name the schema defines, at any depth."""
    names: set[str] = set(engine_fields(engine_schema()))
    for node in engine_schema()["$defs"].values():
        names |= set(engine_fields(node))
    return names


def test_every_field_python_writes_and_reads_is_in_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The presets' resolved configurations: every field they hold reads as an attribute (so every
    key Python writes is one the engine defines), and every reader of the configuration in the
    package (estimates, warnings, trace notes, link names, capacities, the emulator's plan, file
    and checks) runs on them reading only fields of the schema."""
    read: set[str] = set()
    original = EngineConfig.__getattr__

    def recording(self: EngineConfig, name: str) -> Any:
        value = original(self, name)
        read.add(name)
        return value

    monkeypatch.setattr(EngineConfig, "__getattr__", recording)
    written: set[str] = set()
    specs = dict(preset_specs())
    assert len(specs) > 50
    for spec in specs.values():
        written |= set(walk(spec.engine))
        estimate(spec)
        trace_notes(spec.engine)
        link_names(spec)
        warnings(spec.resolved, spec.engine)
        for link in (spec.engine.bottleneck, spec.engine.reverse):
            capacity_bits(link, 0, spec.engine.duration_ns)
        try:
            emu_checks.check_spec(spec)
        except SpecError:
            pass  # refused (XCP, RED, a loss model…): the refusal read the fields it names
        plan = emu_config._plan(spec)
        emu_config.socket_buffer_max(plan)
        assert json.loads(emu_config._emulator_config(plan))["engine"] == spec.engine
    # The summary's readers: one short run of a dumbbell and one of a parking lot.
    lot = {
        "name": "lot",
        "duration": "1s",
        "topology": {"kind": "parking_lot", "hops": 2, "link": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"}},
        "flows": [{"cc": "reno"}, {"cc": "reno", "path": ["hop2"]}],
    }
    dumbbell = {
        "name": "dumbbell",
        "duration": "1s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp", "qdisc": "codel"}},
        "flows": [{"cc": "cubic"}, {"cc": "reno", "ecn": True}],
    }
    for doc in (dumbbell, lot):
        ccarena.run(ccarena.load_spec(doc))
    fields = schema_field_names()
    assert read <= fields and written <= fields
    assert {"rate_bps", "duration_ns", "interval_ns", "flows", "rtt_ns", "network", "names", "routes", "model"} <= read


def test_an_unknown_field_is_an_attribute_error_naming_it() -> None:
    e = quickstart().engine
    assert e.bottleneck.rate_bps == e["bottleneck"]["rate_bps"] > 0
    assert e.flows[1].cc == e["flows"][1]["cc"]
    assert e.network is None and e.tcp_sources == [] and e.flows[0].ecn is False  # absent: the schema's default
    with pytest.raises(AttributeError, match=r"^engine\.bottleneck\.rate: not a field of the engine configuration$"):
        _ = e.bottleneck.rate
    with pytest.raises(AttributeError, match=r"^engine\.flows\[1\]\.recovry: not a field"):
        _ = e.flows[1].recovry


def test_the_view_is_read_only_and_survives_pickling() -> None:
    spec = quickstart()
    with pytest.raises(TypeError, match="read-only"):
        spec.engine["seed"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError, match="read-only"):
        spec.engine.seed = 2
    with pytest.raises(TypeError):
        spec.engine.flows[0].params["beta"] = 0.5  # type: ignore[index]
    for again in (pickle.loads(pickle.dumps(spec)), copy.deepcopy(spec)):
        assert isinstance(again.engine, EngineConfig) and again.engine == spec.engine
        assert again.engine.flows[0].cc == spec.engine.flows[0].cc


def test_the_schema_is_the_engines() -> None:
    schema = json.loads(_core.engine_schema())
    assert set(schema["required"]) == {"seed", "duration_ns", "interval_ns", "trace", "bottleneck", "reverse", "flows"}
    assert schema["additionalProperties"] is False
    kinds = {v["properties"]["kind"]["const"] for v in schema["$defs"]["QdiscConfig"]["oneOf"]}
    assert kinds == {q["name"] for q in _core.qdisc_catalogue()}
    link = engine_fields(schema["$defs"]["LinkConfig"])
    assert {"rate_bps", "delay_ns", "buffer_pkts", "buffer_bytes", "loss", "loss_model", "qdisc", "model"} == set(link)


def bad(mutate: Any) -> str:
    """The engine's refusal of the quick-start configuration after ``mutate``, as a hand-made dict."""
    engine = copy.deepcopy(quickstart().engine.to_dict())
    mutate(engine)
    with pytest.raises(ValueError) as e:
        _core.simulate(engine)
    message = str(e.value)
    assert "\n" not in message, message
    return message


def test_a_misspelt_key_is_refused_in_one_line_naming_its_path() -> None:
    msg = bad(lambda e: e["flows"][1].update(recovry="prr"))
    assert msg.startswith("flows[1].recovry: unknown field `recovry`, expected one of"), msg
    assert bad(lambda e: e["flows"][0].update(recovery="reno")) == (
        "flows[0].recovery: unknown variant `reno`, expected `prr` or `newreno`"
    )
    assert bad(lambda e: e["bottleneck"].update(buffer_bytes=1000)) == (
        "bottleneck: exactly one of buffer_pkts and buffer_bytes must be given"
    )
    assert bad(lambda e: e["bottleneck"].update(qdisc={"kind": "codel", "target_ns": 0})).startswith(
        "bottleneck.qdisc: target_ns: expected an integer in (0, "
    )
    assert bad(lambda e: e["reverse"].update(loss_model={"kind": "gilbert", "p_gb": 0.1})) == (
        "reverse.loss_model: missing field `p_bg`"
    )
    assert bad(lambda e: e.pop("seed")) == "missing field `seed`"
    assert bad(lambda e: e.update(colour=1)).startswith("colour: unknown field `colour`")


def test_the_run_names_the_experiments_field_for_an_engine_refusal() -> None:
    spec = quickstart()
    flows = [dict(f) for f in spec.engine.to_dict()["flows"]]
    flows[1]["recovery"] = "reno"
    broken = Spec(spec.resolved, EngineConfig({**spec.engine, "flows": flows}), spec.flow_groups)
    with pytest.raises(SpecError) as e:
        ccarena.run(broken)
    assert e.value.path == f"flows[{spec.flow_groups[1]}].recovery", str(e.value)
    assert "unknown variant `reno`" in str(e.value)
