"""The published experiments: every preset's file is valid and states its deviations, lists and
refuses cleanly, every quick preset runs, draws its figure and judges its claim, and the README's
table is what the stored full runs give."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest
from ccarena import cli
from ccarena.campaign import sweep
from ccarena.presets import PRESETS, VERDICTS, Part, PresetUnavailable, Verdict, get, reproduce
from ccarena.presets.measures import cov, jain, ratio, share
from ccarena.presets.registry import SCENARIOS, quick_document

PAPERS = (
    "rhee-xu-2005",
    "leith-2007",
    "rhee-2007",
    "lee-chuvpilo-2002",
    "lin-2024",
    "arun-2018",
    "rfc6817",
    "rfc9332",
)


def test_every_experiment_has_one_preset_file_with_its_citation() -> None:
    ids = [p.id for p in PRESETS]
    assert len(ids) == len(set(ids))
    expected = [
        f"{s}{i}" for s, n in (("A", 4), ("B", 7), ("C", 4), ("D", 7), ("E", 3), ("F", 3)) for i in range(1, n + 1)
    ]
    assert sorted(ids) == sorted(expected)
    for p in PRESETS:
        assert p.path.is_file(), p.path
        assert p.path.parent.name in PAPERS
        assert re.match(rf"{p.id.lower()}-", p.path.name), p.path.name
        head = p.path.read_text(encoding="utf-8").split("\nname")[0]
        assert head.startswith(f"# {p.id}."), p.path
        assert "left open" in head and "Figure" in head, p.path
        assert "# Deviations from the paper:" in head and p.deviations, p.path
        assert p.claim and p.where, p.id


def test_files_on_disk_are_all_registered() -> None:
    registered = {p.path for p in PRESETS}
    for paper in PAPERS:
        for f in (SCENARIOS / paper).glob("*.toml"):
            assert f in registered, f


def test_quick_overrides_replace_and_drop_swept_lists() -> None:
    raw = {"duration": "10s", "sweep": {"a.b": [1, 2], "c": [3, 4], "zip": [["a.b", "c"]], "repeat": 5}}
    out = quick_document(raw, {"duration": "2s", "sweep.repeat": 1, "sweep.a.b": None, "sweep.c": [4]})
    assert out == {"duration": "2s", "sweep": {"c": [4], "repeat": 1}}
    assert raw["sweep"]["repeat"] == 5


def test_measures() -> None:
    assert jain([1, 1, 1]) == pytest.approx(1.0)
    assert jain([1, 0]) == pytest.approx(0.5)
    assert cov([2, 2, 2]) == 0.0
    assert cov([1, 3]) == pytest.approx(2**0.5 / 2)
    assert share(1, 4) == 0.25 and ratio(3, 1) == 3.0


def test_list_shows_every_preset_and_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["reproduce", "--list", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    for p in PRESETS:
        line = next(ln for ln in out.splitlines() if ln.startswith(p.id + " "))
        assert str(p.count()) in line
        for need in p.missing():
            assert f"needs: {need}" in line or "needs:" in line
    from ccarena.presets.stored import stored_values, verdict

    values = stored_values(PRESETS)
    for p in PRESETS:
        line = next(ln for ln in out.splitlines() if ln.startswith(p.id + " "))
        v = verdict(p, values) if p.id in values else None
        assert line.split("  needs:")[0].endswith("  " + (v.word if v else "-")), line


def test_unknown_id_and_missing_feature_are_one_line_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["reproduce", "Z9"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    blocked = [p for p in PRESETS if p.missing()]
    if blocked:
        p = blocked[0]
        assert cli.main(["reproduce", p.id, "--quick", "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert f"{p.id} needs {p.missing()[0]}" in err
        assert not (tmp_path / "x").exists()
        with pytest.raises(PresetUnavailable):
            reproduce(p, quick=True, out=tmp_path / "y")


def test_without_the_scenarios_folder_one_line_says_where_to_find_it(tmp_path: Path) -> None:
    """Installed outside a checkout, presets name the folder they need (CCARENA_SCENARIOS)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CCARENA_SCENARIOS": str(tmp_path / "nowhere")}
    for args in (["--list"], ["D3", "--quick", "--out", str(tmp_path / "x")]):
        p = subprocess.run(
            [sys.executable, "-m", "ccarena", "reproduce", *args], env=env, capture_output=True, text=True, check=False
        )
        assert p.returncode == 2, p.stderr
        assert p.stderr.count("\n") == 1 and "CCARENA_SCENARIOS" in p.stderr, p.stderr
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every quick campaign, so that the sides of a dispute run once."""
    return tmp_path_factory.mktemp("quick")


@pytest.mark.parametrize("preset_id", [p.id for p in PRESETS])
def test_quick_preset_runs_draws_and_judges_its_claim(preset_id: str, quick_runs: Path) -> None:
    p = get(preset_id)
    missing = p.missing()
    if missing:
        pytest.skip(f"{p.id} needs {', '.join(missing)} (not in this ccarena yet)")
    r = reproduce(p, quick=True, jobs=2, out=quick_runs / p.id.lower())
    runs = r.campaign.runs
    assert (runs["status"] == "ok").all(), runs[runs["status"] != "ok"]["error"].tolist()
    for f in r.figures:
        assert f.is_file() and f.stat().st_size > 1000
    html = r.report.read_text(encoding="utf-8")
    assert escape(f"{p.id}: {p.title}") in html and "<svg" in html
    assert r.verdict.word in VERDICTS
    assert (r.verdict.word == "figure only") == (p.judge is None)
    assert all(part.measured for part in r.verdict.parts)
    assert (r.campaign.path / f"claim-{p.id.lower()}.json").is_file()
    assert escape(r.verdict.summary()) in html
    from ccarena.presets.disputes import dispute_of

    d = dispute_of(p.id)
    if d is not None:
        assert r.dispute and escape(r.dispute) in html
        assert set(r.values) == set(d.ids) and all((quick_runs / i.lower()).is_dir() for i in d.ids)


def _without(doc: dict, features: set[str]) -> dict:
    """The campaign without the swept values that name a missing feature (XCP's entries of a
    zipped algorithm/queue axis, RED's queue), so the rest of a blocked preset can be tried."""
    sw = doc.get("sweep", {})
    zips = sw.get("zip", [])
    for key, vals in list(sw.items()):
        if key == "zip" or not isinstance(vals, list):
            continue
        bad = {i for i, v in enumerate(vals) if isinstance(v, str) and v in features}
        for k in next((z for z in zips if key in z), [key]) if bad else []:
            sw[k] = [v for i, v in enumerate(sw[k]) if i not in bad]
    return doc


@pytest.mark.parametrize("preset_id", [p.id for p in PRESETS if p.needs])
def test_blocked_preset_runs_and_draws_without_the_missing_feature(preset_id: str, tmp_path: Path) -> None:
    """What a preset that needs XCP or RED can already do runs, and its figure and check code work
    on it (the check cannot agree without the feature's runs)."""
    p = get(preset_id)
    c = sweep(_without(p.document(quick=True), set(p.needs)), out=tmp_path / p.id, jobs=2)
    assert (c.runs["status"] == "ok").all()
    p.figure(c).savefig(tmp_path / "f.png")
    assert p.measure is not None and p.judge is not None
    verdict = p.verdict({p.id: p.measure(c)})
    assert verdict.parts and all(part.measured for part in verdict.parts)
    if p.missing():
        assert verdict.word != "reproduced"


@pytest.mark.parametrize("preset_id", ["E1", "E2", "E3"])
def test_e_series_fits_the_emulation_backend(preset_id: str) -> None:
    """Every run of the E series is one the emu backend accepts (rate, loss model, flows), on a
    kernel with cubic and bbr."""
    from ccarena.backends.emu.checks import check_spec, kernel_algorithms
    from ccarena.campaign.campaign import plan

    if not {"cubic", "bbr"} <= set(kernel_algorithms()):
        pytest.skip("this kernel lacks cubic or bbr")
    g, _ = plan(get(preset_id).document())
    for run in g.runs:
        check_spec(run.spec)


def test_testbed_presets_give_the_bottleneck_a_clock_tick_of_jitter() -> None:
    """The README's phase-effects rule: every preset whose paper ran on a testbed delays each packet
    at the bottleneck by up to 1 ms (uniform, order kept), its stand-in for the testbed's timing."""
    testbed = [p for p in PRESETS if p.testbed]
    assert {p.id for p in testbed} == {"A2", "A3", *(f"B{i}" for i in range(1, 8)), "C1", "C2", "C3", "C4"}
    for p in testbed:
        bottleneck = p.document()["topology"]["bottleneck"]
        assert bottleneck.get("jitter") == {"dist": "uniform", "max": "1ms"}, p.id


@pytest.mark.parametrize("preset_id", ["B5", "C3"])
def test_kernel_forms_fit_the_emulation_backend_with_the_26_cubic(
    preset_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B5's and C3's kernel forms run only CUBIC with Linux 2.6's settings (B5 at its two rates and
    five buffers once each, C3 at 250 Mbit/s at 2 and 5 % BDP four times each): the emulator accepts them when the kernel's tcp_cubic module parameters are
    819/1024, no HyStart and an initial ssthresh of 100, and refuses them with today's."""
    from ccarena.backends.emu import checks
    from ccarena.campaign.campaign import plan
    from ccarena.spec import SpecError

    if "cubic" not in set(checks.kernel_algorithms()):
        pytest.skip("this kernel lacks cubic")
    g, _ = plan(get(preset_id).document(backend="emu"))
    assert len(g.runs) == {"B5": 10, "C3": 8}[preset_id]
    assert {r.spec.resolved["flows"][0]["cc"] for r in g.runs} == {"cubic"}
    # The file's jitter stands in for a testbed's timing in the simulator; the kernel runs in real time.
    assert "jitter" in get(preset_id).document()["topology"]["bottleneck"]
    assert "jitter" not in get(preset_id).document(backend="emu")["topology"]["bottleneck"]

    def kernel(beta: int, hystart: int, initial_ssthresh: int) -> dict:
        return {
            "beta": (beta, lambda v: round(float(v) * 1024) == beta, f"{beta}/1024"),
            "hystart": (hystart, lambda x: bool(x) == bool(hystart), str(hystart)),
            "initial_ssthresh": (initial_ssthresh, lambda x: int(x) == initial_ssthresh, str(initial_ssthresh)),
        }

    monkeypatch.setattr(checks, "_cubic_module_params", lambda: kernel(819, 0, 100))
    for run in g.runs:
        checks.check_spec(run.spec)
    monkeypatch.setattr(checks, "_cubic_module_params", lambda: kernel(819, 0, 0))
    with pytest.raises(SpecError, match="params.initial_ssthresh"):
        checks.check_spec(g.runs[0].spec)
    monkeypatch.setattr(checks, "_cubic_module_params", lambda: kernel(717, 1, 0))
    with pytest.raises(SpecError, match="params.beta"):
        checks.check_spec(g.runs[0].spec)


def test_reproduce_command_writes_figure_and_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "e3"
    assert cli.main(["reproduce", "e3", "--quick", "--jobs", "1", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert (out / "figure-e3.png").is_file() and (out / "figure-e3.svg").is_file()
    assert "verdict: " in text and str(out / "report.html") in text
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index("E3: An application-limited") < html.index("<h2>", html.index("E3: An application-limited") + 1)


def test_verdict_words_follow_the_parts() -> None:
    yes, no = Part("a", True, "1"), Part("b", False, "2")
    assert Verdict.of([yes, yes]).word == "reproduced"
    v = Verdict.of([yes, no], "a stated cause")
    assert v.word == "partly"
    stated = "cause, as the preset states it from its full runs and the diagnostic runs it names"
    assert v.summary() == f"partly: does not hold: b ({stated}: a stated cause)"
    v = Verdict.of([no], "")
    assert v.word == "not reproduced" and "cause not established" in v.summary()
    assert Verdict.of([yes], "unused").cause == ""
    with pytest.raises(ValueError):
        Verdict("agrees")
    with pytest.raises(ValueError):
        Verdict.of([])


def test_the_readme_table_is_what_the_stored_full_runs_give() -> None:
    """The README's table of published experiments is written by `make reproduce-all` from the
    stored results (scenarios/<paper>/results/); each verdict is judged afresh from the stored
    values, so a changed judge or a hand edit shows here."""
    from ccarena.presets.stored import readme_section, readme_table

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert readme_section(readme) == readme_table(PRESETS)


def test_every_stored_result_names_its_run_and_judges() -> None:
    """A stored full run says which commit and date made it; a verdict that is not "reproduced"
    names its cause."""
    from ccarena.presets.stored import load, stored_values, verdict

    values = stored_values(PRESETS)
    for p in PRESETS:
        doc = load(p)
        if doc is None:
            continue
        assert doc["id"] == p.id and doc["commit"] and doc["date"] and doc["runs"] > 0
        v = verdict(p, values)
        if v is not None and v.word in ("partly", "not reproduced"):
            assert p.cause, f"{p.id}: {v.summary()}"


def _small_campaign(out: Path, repeat: int) -> object:
    doc = {
        "duration": "4s",
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "10Mbps", "buffer": "0.5bdp"}},
        "flows": [{"cc": "reno", "count": 2, "start": {"dist": "uniform", "lo": "0s", "hi": "1s"}}],
        "measure": {"interval": "100ms"},
        "sweep": {"repeat": repeat},
    }
    return sweep(doc, out=out, jobs=1, quiet=True)


def test_ensemble_band_stays_within_what_the_link_carries(tmp_path: Path) -> None:
    """With 5 repeats the ensemble draws the mean and its 95 % band, clipped to 0 and the link's
    10 Mbit/s; with 3 it draws every run under the mean and no band."""
    from ccarena.presets.figures import ensemble
    from matplotlib.collections import PolyCollection

    fig = ensemble(_small_campaign(tmp_path / "five", 5), "point", str, ylabel="Mbit/s")
    bands = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    ys = [y for b in bands for path in b.get_paths() for _, y in path.vertices]
    assert min(ys) >= 0.0 and max(ys) <= 10.0 + 1e-9
    fig = ensemble(_small_campaign(tmp_path / "three", 3), "point", str, ylabel="Mbit/s")
    assert not [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
    assert len(fig.axes[0].lines) == 2 * 3 + 2


def test_the_host_variant_puts_every_flow_of_a_testbed_preset_behind_a_1gbps_nic() -> None:
    """``--backend host`` reruns a testbed's preset in the simulator with its sending hosts: every
    run's flows get an access link at 1 Gbit/s and TSO (the unpaced ones); a simulation-only paper's
    preset has no host variant."""
    from ccarena.campaign.campaign import plan
    from ccarena.presets.registry import TESTBED_HOST
    from ccarena.presets.reproduce import PresetUnavailable, reproduce

    p = get("B5")
    assert p.testbed and p.document(backend="host")["tcp"]["host"] == TESTBED_HOST
    g, _ = plan(p.document(quick=True, backend="host"))
    for run in g.runs:
        flows = run.spec.engine["flows"]
        assert all(f["access"] == {"rate_bps": 1_000_000_000, "queue_pkts": 1000} for f in flows)
        assert all(("tso" in f) == (not f["pacing"]) for f in flows)
    plain, _ = plan(p.document(quick=True))
    assert all("access" not in f for run in plain.runs for f in run.spec.engine["flows"])
    assert not get("D1").testbed
    with pytest.raises(PresetUnavailable, match="D1 did not run on a testbed"):
        reproduce(get("D1"), quick=True, backend="host")


RECEIVERS_BEFORE_SACK_COMPRESSION = {"A", "B", "C", "D", "F1"}
"""Presets whose papers' receivers did not compress SACKs: ns-2's (A1, D), Linux 2.6 testbeds (A2-A4,
B, C) and Copa's (NSDI 2018, before Linux 4.18 brought SACK compression). The E series (Linux 6.x)
and F2/F3 (today's stacks) keep the default, today's Linux receivers."""


@pytest.mark.parametrize("preset_id", [p.id for p in PRESETS])
def test_receivers_compress_sacks_only_where_the_papers_did(preset_id: str) -> None:
    from ccarena.campaign.campaign import plan

    off = preset_id[0] in RECEIVERS_BEFORE_SACK_COMPRESSION or preset_id in RECEIVERS_BEFORE_SACK_COMPRESSION
    p = get(preset_id)
    # The host variant exists for testbed papers; the kernel form for B5, C3 and the E series.
    for backend in ("sim", *(("host",) if p.testbed else ()), *(("emu",) if p.kernel or preset_id[0] == "E" else ())):
        g, _ = plan(p.document(backend=backend))
        flows = [f for r in g.runs for f in r.spec.engine.flows]
        assert flows
        assert all((f.sack_compression is None) == off for f in flows), (preset_id, backend)
