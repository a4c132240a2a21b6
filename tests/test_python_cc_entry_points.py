"""Python algorithms declared by an installed package (entry points of the group ``ccarena.cc``).

A tiny package is written into a temporary folder with a ``.dist-info``
holding its ``entry_points.txt`` (nothing downloaded, nothing installed
outside that folder) and the folder is put on the path. Its algorithms
are then usable in experiments, sweeps and worker processes with no
``cc_module`` and no ``register_cc``; ``ccarena list cc`` lists them with
their file and parameters; an entry point that does not import, or whose
class is refused, is one line naming it, exit 2, nothing written. A
constructor that raises is found by the validation, before any folder.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest
from ccarena.pycc import python_algorithms
from ccarena.spec import SpecError

CCARENA = [sys.executable, "-m", "ccarena"]

PACKAGE = '''
"""Algorithms of a user's own package."""
import ccarena


class HalfReno:
    """Reno in Python, from an installed package."""

    params = [ccarena.Param("beta", float, 0.5, min=0.1, max=0.9, doc="window kept on loss")]

    def ssthresh(self, tp):
        return max(int(tp.snd_cwnd * self.beta), 2)


class Fussy:
    """Refuses a beta above 0.8 in its constructor."""

    params = [ccarena.Param("beta", float, 0.5, min=0.1, max=0.9)]

    def __init__(self, beta):
        if beta > 0.8:
            raise ValueError(f"beta {beta} is too large for me")
        self.beta = beta
'''

BROKEN_PARAMS = '''
class BadParams:
    params = [{"name": "gain", "type": list, "default": []}]
'''


def _site(root: Path, package: str, source: str, entry_points: dict[str, str]) -> Path:
    """A folder to put on the path holding ``package`` and its dist-info with ``entry_points``."""
    site = root / f"site-{package}"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(source)
    info = site / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[ccarena.cc]\n{lines}")
    return site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return _site(tmp_path, "ccdemo", PACKAGE, {"ep_half_reno": "ccdemo:HalfReno", "ep_fussy": "ccdemo:Fussy"})


@pytest.fixture
def on_path(site: Path) -> Iterator[Path]:
    """The package importable in this process, and forgotten afterwards."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    yield site
    sys.path.remove(str(site))
    sys.modules.pop("ccdemo", None)
    for name in python_algorithms():
        ccarena.unregister_cc(name)


def _cli(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([*CCARENA, *args], check=False, capture_output=True, text=True, timeout=300, env=env,
                          cwd=cwd)


def experiment(cc: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "duration": "3s",
        "seed": 5,
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "10Mbps", "buffer": "1bdp", "loss": 0.002}},
        "flows": [{"cc": cc, **({"params": params} if params else {})}],
        "measure": {"standard": [cc]},  # friendliness counts the algorithm itself as standard
    }


def _no_name(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _no_name(v) for k, v in x.items() if k not in ("cc", "standard")}
    if isinstance(x, list):
        return [_no_name(v) for v in x]
    return x


def test_an_entry_point_is_loaded_when_an_experiment_names_it(on_path: Path) -> None:
    assert "ep_half_reno" not in python_algorithms()  # nothing is imported before it is named
    spec = ccarena.load_spec(experiment("ep_half_reno", {"beta": 0.5}))
    assert spec.resolved["flows"][0]["params"] == {"beta": 0.5}
    assert "ep_half_reno" in python_algorithms() and "ep_fussy" not in python_algorithms()
    with pytest.raises(SpecError, match=r"flows\[0\]\.params\.beta.*\[0\.1, 0\.9\]"):
        ccarena.load_spec(experiment("ep_half_reno", {"beta": 2.0}))
    # Reno's halving written in Python gives the built-in Reno's run.
    a, b = ccarena.run(experiment("reno")), ccarena.run(experiment("ep_half_reno"))
    assert b.summary["flows"][0]["cc"] == "ep_half_reno"
    assert json.dumps(_no_name(a.summary), sort_keys=True) == json.dumps(_no_name(b.summary), sort_keys=True)


def test_an_entry_points_constructor_that_raises_is_a_validation_error(on_path: Path) -> None:
    assert ccarena.load_spec(experiment("ep_fussy", {"beta": 0.5})).resolved["flows"][0]["cc"] == "ep_fussy"
    with pytest.raises(SpecError) as info:
        ccarena.load_spec(experiment("ep_fussy", {"beta": 0.85}))
    assert info.value.path == "flows[0].cc"
    assert "ep_fussy" in str(info.value) and "too large" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("executor", ["processes", "dask"])
def test_a_sweep_with_worker_processes_runs_an_entry_point(site: Path, tmp_path: Path, executor: str) -> None:
    exp = tmp_path / "s.toml"
    exp.write_text(textwrap.dedent("""\
        name = "epsweep"
        duration = "2s"
        [topology]
        rtt = "40ms"
        bottleneck = { rate = "10Mbps", buffer = "1bdp", loss = 0.002 }
        [[flows]]
        cc = "reno"
        [sweep]
        "flows[0].cc" = ["reno", "ep_half_reno"]
        "topology.bottleneck.rate" = ["10Mbps", "20Mbps"]
        """))
    out = tmp_path / "camp"
    options = ["--executor", "dask"] if executor == "dask" else []
    p = _cli(["sweep", str(exp), "--out", str(out), "--jobs", "2", *options, "--quiet"], site, tmp_path)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out / "runs.parquet").to_pylist()
    assert len(rows) == 4 and all(r.get("status", "ok") == "ok" for r in rows), rows
    sums: dict[tuple[str, Any], dict[str, Any]] = {}
    for d in (out / "runs").iterdir():
        s = json.loads((d / "summary.json").read_text())
        sums[(s["flows"][0]["cc"], s["bottleneck"]["rate_bps"])] = s
    assert {k[0] for k in sums} == {"reno", "ep_half_reno"}
    for rate in {k[1] for k in sums}:
        a, b = (_no_name({k: v for k, v in sums[(cc, rate)].items() if k != "friendliness"})
                for cc in ("reno", "ep_half_reno"))
        assert a == b


def test_list_cc_shows_entry_points_with_file_and_parameters(site: Path, tmp_path: Path) -> None:
    p = _cli(["list", "cc"], site, tmp_path)
    assert p.returncode == 0, p.stderr
    assert "\ncubic:" in p.stdout  # beside the built-ins
    block = p.stdout.split("\nep_half_reno:", 1)[1].split("\n\n", 1)[0]
    assert str(site / "ccdemo" / "__init__.py") in block.replace("\n          ", "")  # the source file
    words = " ".join(block.split())
    assert 'entry point ccarena.cc "ep_half_reno" = "ccdemo:HalfReno" of package ccdemo 1.0' in words
    assert "beta float in [0.1, 0.9] 0.5 window kept on loss" in words
    assert "\nep_fussy:" in p.stdout


def test_an_entry_point_that_does_not_import_is_one_line(tmp_path: Path) -> None:
    site = _site(tmp_path, "ccgone", "import no_such_module_here\n", {"ep_gone": "ccgone:Algo"})
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent("""\
        duration = "2s"
        [topology]
        rtt = "40ms"
        bottleneck = { rate = "10Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "ep_gone"
        """))
    out = tmp_path / "out"
    p = _cli(["run", str(exp), "--out", str(out), "--quiet", "--no-figure"], site, tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "flows[0].cc" in lines[0] and '"ep_gone" = "ccgone:Algo"' in lines[0], lines[0]
    assert "ModuleNotFoundError" in lines[0] and "no_such_module_here" in lines[0], lines[0]
    assert not out.exists()
    p = _cli(["list", "cc"], site, tmp_path)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ep_gone" in lines[0] and "ModuleNotFoundError" in lines[0], p.stderr


def test_an_entry_point_whose_parameter_declaration_raises_is_one_line(tmp_path: Path) -> None:
    site = _site(tmp_path, "ccbad", BROKEN_PARAMS, {"ep_bad_params": "ccbad:BadParams"})
    exp = tmp_path / "e.toml"
    exp.write_text(textwrap.dedent("""\
        duration = "2s"
        [topology]
        rtt = "40ms"
        bottleneck = { rate = "10Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "ep_bad_params"
        """))
    out = tmp_path / "out"
    p = _cli(["run", str(exp), "--out", str(out), "--quiet", "--no-figure"], site, tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ep_bad_params" in lines[0] and "parameter declaration" in lines[0], p.stderr
    assert not out.exists()


def test_a_constructor_that_raises_stops_a_sweep_before_its_folder(site: Path, tmp_path: Path) -> None:
    exp = tmp_path / "s.toml"
    exp.write_text(textwrap.dedent("""\
        duration = "2s"
        [topology]
        rtt = "40ms"
        bottleneck = { rate = "10Mbps", buffer = "1bdp" }
        [[flows]]
        cc = "ep_fussy"
        [sweep]
        "flows[0].params.beta" = [0.5, 0.85]
        """))
    out = tmp_path / "camp"
    p = _cli(["sweep", str(exp), "--out", str(out), "--jobs", "2", "--quiet"], site, tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ep_fussy" in lines[0] and "too large" in lines[0], p.stderr
    assert "0.85" in lines[0]
    assert not out.exists()
