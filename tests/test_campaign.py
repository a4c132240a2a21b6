"""Campaigns: the grid, its seeds and baselines, the store, resuming after kill -9, Ctrl-C, executors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest
from ccarena import cli
from ccarena.campaign.grid import derive_seed, grid
from ccarena.spec import SpecError
from test_reproducible import folder_digests

CCARENA = [sys.executable, "-m", "ccarena"]

BASE = """\
name = "grid"
duration = "{duration}"
seed = 4

[topology]
rtt = "20ms"
bottleneck = {{ rate = "{rate}", buffer = "1bdp", loss = {loss} }}

[[flows]]
cc = "cubic"

[[flows]]
cc = "reno"
rtt = "40ms"

[measure]
interval = "100ms"
"""


def write(
    tmp: Path, sweep: str, *, duration: str = "1s", rate: str = "10Mbps", loss: float = 0.002, name: str = "c.toml"
) -> Path:
    path = tmp / name
    path.write_text(BASE.format(duration=duration, rate=rate, loss=loss) + "\n[sweep]\n" + textwrap.dedent(sweep))
    return path


def catalogue(folder: Path) -> list[dict[str, Any]]:
    """The catalogue's rows without the wall times (the one column that may differ)."""
    rows = pq.read_table(folder / "runs.parquet").to_pylist()
    for r in rows:
        r.pop("wall_s")
    return rows


# --- the grid -----------------------------------------------------------------------------------


def test_the_grid_is_the_product_of_the_axes_with_zipped_paths_together(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        "topology.bottleneck.rate" = ["5Mbps", "10Mbps", "20Mbps"]
        "topology.rtt" = ["10ms", "30ms"]
        "flows[1].rtt" = ["20ms", "60ms"]
        "flows[0].cc" = ["cubic", "htcp"]
        zip = [["topology.rtt", "flows[1].rtt"]]
        """,
    )
    g = grid(ccarena.spec.read_toml(path))
    assert g.paths == ("topology.bottleneck.rate", "topology.rtt", "flows[1].rtt", "flows[0].cc")
    assert len(g.points) == 3 * 2 * 2 and len(g.runs) == 12
    # The first axis varies slowest; the zipped paths move together.
    assert [dict(p)["topology.bottleneck.rate"] for p in g.points[:4]] == ["5Mbps"] * 4
    pairs = {(dict(p)["topology.rtt"], dict(p)["flows[1].rtt"]) for p in g.points}
    assert pairs == {("10ms", "20ms"), ("30ms", "60ms")}
    run = g.runs[5]
    eng = run.spec.engine
    values = dict(run.values)
    assert eng["bottleneck"]["rate_bps"] == {"5Mbps": 5e6, "10Mbps": 1e7, "20Mbps": 2e7}[values["topology.bottleneck.rate"]]
    assert eng["flows"][0]["cc"] == values["flows[0].cc"]
    assert eng["flows"][1]["rtt_ns"] == {"20ms": 20_000_000, "60ms": 60_000_000}[values["flows[1].rtt"]]


def test_repeats_use_the_same_seeds_at_every_point_and_baselines_replace_every_algorithm(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        "flows[0].cc" = ["cubic", "bbr"]
        "flows[0].params" = [{ beta = 0.5 }, {}]
        zip = [["flows[0].cc", "flows[0].params"]]
        repeat = 3
        baseline = ["reno", "newreno"]
        """,
    )
    g = grid(ccarena.spec.read_toml(path))
    assert len(g.runs) == 2 * 3 * 3
    seeds = {}
    for run in g.runs:
        seeds.setdefault((run.point, run.baseline), []).append(run.seed)
        assert run.spec.seed == run.seed
    assert {tuple(s) for s in seeds.values()} == {(4, derive_seed(4, 1), derive_seed(4, 2))}
    assert len({4, derive_seed(4, 1), derive_seed(4, 2), derive_seed(5, 1)}) == 4
    for run in g.runs:
        ccs = [f["cc"] for f in run.spec.resolved["flows"]]
        if run.baseline is None:
            assert ccs == [dict(run.values)["flows[0].cc"], "reno"]
        else:
            assert ccs == [run.baseline, run.baseline]
            assert all(f.get("params", {}) == {} or run.baseline != "cubic" for f in run.spec.resolved["flows"])
    ids = [r.run_id for r in g.runs]
    assert len(set(ids)) == len(ids)
    # Ids come from the values, not the order: reordering the list keeps them.
    swapped = ccarena.spec.read_toml(path)
    swapped["sweep"]["flows[0].cc"] = ["bbr", "cubic"]
    swapped["sweep"]["flows[0].params"] = [{}, {"beta": 0.5}]
    assert {r.run_id for r in grid(swapped).runs} == set(ids)


def test_a_bad_value_names_the_point_and_the_field_and_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    path = write(tmp_path, '"topology.bottleneck.rate" = ["10Mbps", "0Mbps"]\n')
    with pytest.raises(SpecError) as e:
        grid(ccarena.spec.read_toml(path))
    assert str(e.value).startswith('[topology.bottleneck.rate = "0Mbps"] topology.bottleneck.rate: must be greater than 0')
    out = tmp_path / "out"
    assert cli.main(["sweep", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('error: [topology.bottleneck.rate = "0Mbps"]')
    assert not out.exists()


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ('"topology.bottleneck.rate" = "10Mbps"\n', "expected a non-empty list"),
        ('"flows[0].cc" = ["cubic"]\nrepeat = 0\n', "sweep.repeat: expected an integer"),
        ('"a" = [1]\n"b" = [1, 2]\nzip = [["a", "b"]]\n', "zipped paths need lists of the same length"),
        ('"a" = [1]\nzip = [["a", "c"]]\n', "is not a swept path"),
        ('"flows[0].cc" = ["cubic"]\nbaseline = 3\n', "sweep.baseline"),
        ('"flows[0].cc" = ["cubik"]\n', 'flows[0].cc: unknown algorithm "cubik"'),
    ],
)
def test_bad_sweep_tables_are_one_line_errors(tmp_path: Path, sweep: str, message: str) -> None:
    path = write(tmp_path, sweep)
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        grid(ccarena.spec.read_toml(path))


def test_dry_run_counts_points_runs_and_work(tmp_path: Path) -> None:
    path = write(tmp_path, '"topology.bottleneck.buffer" = ["0.1bdp", "1bdp"]\nrepeat = 5\nbaseline = "reno"\n')
    out = subprocess.run([*CCARENA, "sweep", str(path), "--dry-run"], capture_output=True, text=True, check=True)
    assert "2 points x 5 repeats x (1 + 1 baselines) = 20 runs" in out.stdout
    assert "swept columns: topology.bottleneck.buffer_bdp" in out.stdout
    # 20 runs of 1 s at 10 Mbit/s in 1500-byte packets: 833 packets each.
    assert "about 16,660 simulated data packets" in out.stdout
    assert not (tmp_path / "results").exists()


def test_repeats_of_a_scenario_without_randomness_warn_once(tmp_path: Path) -> None:
    path = write(tmp_path, '"flows[0].cc" = ["cubic"]\nrepeat = 2\n')
    text = path.read_text().replace("loss = 0.002", "loss = 0.0")
    assert text != path.read_text()
    path.write_text(text)
    lines: list[str] = []
    ccarena.sweep(path, out=tmp_path / "o", jobs=1, log=lines.append)
    assert len(lines) == 1 and lines[0].startswith("warning: sweep.repeat: 2 repeats")
    # `ccarena results` says what its zero-width intervals are.
    out = subprocess.run([*CCARENA, "results", str(tmp_path / "o")], capture_output=True, text=True, check=True)
    assert "± 0.0000" in out.stdout
    assert out.stdout.splitlines()[-1].startswith("note: an interval of 0 (utilization_window, jain_index) is a point")
    from ccarena.report import write_report

    page = write_report(tmp_path / "o").read_text()
    assert '<p class="note">An interval of 0 (utilization_window, jain_index) is a point whose repeats' in page
    lines.clear()
    path.write_text(text.replace('cc = "reno"\n', 'cc = "reno"\nstart = { dist = "uniform", lo = "0s", hi = "0.5s" }\n'))
    ccarena.sweep(path, out=tmp_path / "o2", jobs=1, log=lines.append)
    assert lines == []


def test_start_times_drawn_from_the_seed(tmp_path: Path) -> None:
    doc = ccarena.spec.read_toml(write(tmp_path, '"seed" = [1]\n'))
    del doc["sweep"]
    doc["flows"][1].update(count=50, start={"dist": "uniform", "lo": "1s", "hi": "2s"})
    doc["duration"] = "3s"
    a = ccarena.load_spec(doc, seed=1).engine["flows"][1:]
    b = ccarena.load_spec(doc, seed=1).engine["flows"][1:]
    c = ccarena.load_spec(doc, seed=2).engine["flows"][1:]
    starts = [f["start_ns"] for f in a]
    assert starts == [f["start_ns"] for f in b]
    assert starts != [f["start_ns"] for f in c]
    assert all(1_000_000_000 <= s <= 2_000_000_000 for s in starts)
    assert len(set(starts)) == 50
    # Uniform: the mean of 50 draws on [1 s, 2 s] is within 4 standard errors of 1.5 s.
    mean = sum(starts) / 50 / 1e9
    assert abs(mean - 1.5) < 4 * (1 / 12) ** 0.5 / 50**0.5
    spec = ccarena.load_spec(doc, seed=1)
    assert spec.resolved["flows"][1]["start"] == {"dist": "uniform", "lo": "1s", "hi": "2s"}
    with pytest.raises(SpecError, match=r"flows\[1\]\.start\.hi: must be before the end of the run"):
        ccarena.load_spec({**doc, "duration": "2s"})


# --- the store and the executors ----------------------------------------------------------------


SWEEP = """\
"topology.bottleneck.buffer" = ["0.5bdp", "1bdp"]
"flows[0].cc" = ["cubic", "bbr"]
repeat = 2
baseline = "reno"
"""


def test_a_campaign_catalogue_and_its_queries(tmp_path: Path) -> None:
    c = ccarena.sweep(write(tmp_path, SWEEP), out=tmp_path / "c", jobs=2)
    runs = c.runs
    assert len(runs) == 16 and set(runs["status"]) == {"ok"}
    assert list(runs.columns[:9]) == [
        "run_id", "point", "repeat", "seed", "baseline",
        "topology.bottleneck.buffer_bdp", "flows[0].cc", "status", "error",
    ]  # fmt: skip
    assert sorted(set(runs["topology.bottleneck.buffer_bdp"])) == [0.5, 1.0]
    assert set(runs["baseline"].dropna()) == {"reno"} and runs["baseline"].isna().sum() == 8
    # Every scalar of summary.json is a column, with the run's own value.
    one = runs.iloc[3]
    summary = json.loads((tmp_path / "c" / "runs" / one["run_id"] / "summary.json").read_text())
    assert one["utilization"] == summary["utilization"] and one["queue.drops"] == summary["queue"]["drops"]
    assert one["jain_window_s[1]"] == summary["jain_window_s"][1]
    flows = c.run_flows
    assert len(flows) == 32 and set(flows.columns) >= {"run_id", "flow", "cc", "goodput_bps"}
    # SQL over every run's traces, each row keyed by its run.
    q = c.query("SELECT run_id, count(*) AS n FROM flows GROUP BY run_id ORDER BY run_id")
    assert len(q) == 16 and set(q["n"]) == {2 * 10}
    agg = c.aggregate()
    assert len(agg) == 8 and set(agg["utilization_window_n"]) == {2}
    ts = c.timeseries("rate_bps")
    assert len(ts) == 8 * 2 * 10 and set(ts["n"]) == {2}
    row = ts.iloc[0]
    assert row["lo"] <= row["mean"] <= row["hi"]
    # ccarena.open reopens either a campaign or a run.
    assert isinstance(ccarena.open(tmp_path / "c"), ccarena.Campaign)
    assert isinstance(ccarena.open(tmp_path / "c" / "runs" / one["run_id"]), ccarena.Result)


def test_a_half_written_run_folder_is_never_read_and_a_finished_sweep_removes_it(tmp_path: Path) -> None:
    """A worker killed mid-write leaves a hidden folder with cut-short tables; readers skip it."""
    path = write(tmp_path, '"topology.bottleneck.buffer" = ["0.5bdp", "1bdp"]\n')
    c = ccarena.sweep(path, out=tmp_path / "c", jobs=1)
    torn = tmp_path / "c" / "runs" / ".0123456789-r0.tmp-deadbeef"
    torn.mkdir()
    for table in ("flows", "queue", "transfers"):
        (torn / f"{table}.parquet").write_bytes(b"PAR1")  # too short to be Parquet: reading it raises
    assert len(c.query("SELECT DISTINCT run_id FROM flows")) == 2
    assert len(c.timeseries("rate_bps")) > 0
    ccarena.sweep(path, out=tmp_path / "c", jobs=1)
    assert not torn.exists()


def test_results_command_prints_means_with_confidence_intervals(tmp_path: Path) -> None:
    ccarena.sweep(write(tmp_path, SWEEP), out=tmp_path / "c", jobs=2)
    out = subprocess.run([*CCARENA, "results", str(tmp_path / "c")], capture_output=True, text=True, check=True)
    lines = [line for line in out.stdout.strip().splitlines() if not line.startswith("note: ")]
    assert lines[0].split() == ["topology.bottleneck.buffer_bdp", "flows[0].cc", "baseline", "n", "utilization_window", "jain_index"]
    assert len(lines) == 9 and all("±" in line for line in lines[1:])
    csv = subprocess.run(
        [*CCARENA, "results", str(tmp_path / "c"), "--metric", "queue.drops", "--by", "flows[0].cc", "--csv"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert csv.splitlines()[0] == "flows[0].cc,points,queue.drops_mean,queue.drops_ci,queue.drops_n"
    # Each row pools the two buffers (and the baseline): not repeats, so no interval.
    assert len(csv.splitlines()) == 3 and all(line.split(",")[1] == "4" and line.split(",")[3] == ""
                                              for line in csv.splitlines()[1:])
    sql = subprocess.run(
        [*CCARENA, "results", str(tmp_path / "c"), "--sql", "SELECT count(*) AS n FROM runs", "--csv"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert sql.splitlines() == ["n", "16"]
    bad = subprocess.run([*CCARENA, "results", str(tmp_path / "c"), "--metric", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --metric/--by: ")


def _run_folders(folder: Path) -> dict[str, dict[str, str]]:
    return {p.name: folder_digests(p) for p in sorted((folder / "runs").iterdir())}


def test_any_jobs_and_the_dask_executor_give_identical_runs(tmp_path: Path) -> None:
    path = write(tmp_path, SWEEP)
    one = ccarena.sweep(path, out=tmp_path / "j1", jobs=1)
    two = ccarena.sweep(path, out=tmp_path / "j2", jobs=2)
    dask = ccarena.sweep(path, out=tmp_path / "dask", jobs=2, executor="dask")
    assert _run_folders(one.path) == _run_folders(two.path) == _run_folders(dask.path)
    assert catalogue(one.path) == catalogue(two.path) == catalogue(dask.path)
    # A run of the campaign is the run `ccarena run` makes of the same point and seed.
    row = one.runs.iloc[0]
    doc = ccarena.spec.read_toml(path)
    del doc["sweep"]
    point = {"topology.bottleneck.buffer": "0.5bdp", "flows[0].cc": row["flows[0].cc"]}
    spec = ccarena.load_spec(doc, seed=int(row["seed"]), set=point, name="grid")
    alone = ccarena.run(spec, out=tmp_path / "alone", figure=False)
    assert folder_digests(alone.path) == folder_digests(one.path / "runs" / row["run_id"])


def test_resume_after_kill_9_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, '"topology.bottleneck.buffer" = ["0.5bdp", "1bdp", "2bdp"]\nrepeat = 4\n', duration="4s", rate="200Mbps", loss=0.0)
    whole = ccarena.sweep(path, out=tmp_path / "whole", jobs=2)
    out = tmp_path / "killed"
    cmd = [*CCARENA, "sweep", str(path), "--out", str(out), "--jobs", "2", "--quiet"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = [p for p in (out / "runs").glob("*") if not p.name.startswith(".")] if (out / "runs").exists() else []
        if len(done) >= 3:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished_before = {p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")}
    assert 3 <= len(finished_before) < 12, "the kill should land in the middle of the campaign"
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")], "leftovers were not removed"
    assert catalogue(out) == catalogue(whole.path)
    assert _run_folders(out) == _run_folders(whole.path)


def test_ctrl_c_stops_within_2_s_keeps_finished_runs_and_says_how_to_resume(tmp_path: Path) -> None:
    path = write(tmp_path, '"topology.bottleneck.buffer" = ["0.5bdp", "1bdp"]\nrepeat = 10\n', duration="30s", rate="1Gbps", loss=0.0)
    out = tmp_path / "c"
    proc = subprocess.Popen(
        [*CCARENA, "sweep", str(path), "--out", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (out / "runs").exists():
        time.sleep(0.05)
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 2.0
    assert proc.returncode == 130
    assert "to finish the rest" in err and "--out" in err
    assert (out / "runs.parquet").exists()
    done = {p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")}
    assert {r["run_id"] for r in catalogue(out)} == done


def test_a_killed_workers_runs_are_run_again_alone_and_all_finish(tmp_path: Path) -> None:
    """A worker killed from outside (the out-of-memory killer, say) costs no run."""
    path = write(tmp_path, '"topology.bottleneck.buffer" = ["0.5bdp", "1bdp"]\nrepeat = 3\n', duration="20s", rate="1Gbps", loss=0.0)
    out = tmp_path / "c"
    proc = subprocess.Popen(
        [*CCARENA, "sweep", str(path), "--out", str(out), "--jobs", "2", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        # The workers are the children of the fork server, itself a child of the campaign.
        for server in _children(proc.pid):
            if "forkserver" in _cmdline(server):
                victim = next(iter(_children(server)), None)
        time.sleep(0.05)
    assert victim is not None
    time.sleep(0.3)
    os.kill(victim, signal.SIGKILL)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "warning: a worker process died" in err and "run again, one at a time" in err, err
    runs = ccarena.open(out).runs
    assert len(runs) == 6 and set(runs["status"]) == {"ok"}
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")], "the killed worker's leftovers stay"


def _crash_on_c(task: Any) -> Any:
    """A stand-in for execute: run "c" kills its worker, the others take 0.3 s."""
    from ccarena.campaign.execute import Outcome

    if task.run_id == "c":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.3)
    return Outcome(task.run_id, True, {}, None, 0.3)


def test_a_run_that_kills_its_worker_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """a and b run first (two workers); c dies at once while d runs beside it and
    e waits: d and e are run again, alone, and finish; c, alone again, dies again
    and is the one failure."""
    import multiprocessing

    from ccarena.campaign import execute as ex

    monkeypatch.setattr(ex, "execute", _crash_on_c)
    monkeypatch.setattr(ex, "_context", lambda: multiprocessing.get_context("fork"))
    tasks = [ex.Task(name, None, "", False, "sim") for name in "abcdef"]  # type: ignore[arg-type]
    outcomes: dict[str, Any] = {}
    said: list[str] = []
    ex.run_local(tasks, 2, lambda o: outcomes.__setitem__(o.run_id, o), say=said.append)
    assert sorted(outcomes) == list("abcdef")
    assert {k for k, o in outcomes.items() if not o.ok} == {"c"}
    assert "worker process died running it" in (outcomes["c"].error or "")
    assert len(said) == 1 and said[0].startswith("warning: a worker process died")


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def test_an_existing_folder_of_another_campaign_is_never_touched(tmp_path: Path, capsys: Any) -> None:
    path = write(tmp_path, '"flows[0].cc" = ["cubic"]\n')
    ccarena.sweep(path, out=tmp_path / "c", jobs=1)
    before = _run_folders(tmp_path / "c")
    # Another experiment outside [sweep] (a longer run) is another campaign: refused, nothing touched.
    other = write(tmp_path, '"flows[0].cc" = ["cubic"]\n', duration="2s", name="other.toml")
    assert cli.main(["sweep", str(other), "--out", str(tmp_path / "c")]) == 2
    assert "holds another campaign" in capsys.readouterr().err
    assert _run_folders(tmp_path / "c") == before
    # The same experiment with another sweep value grows the campaign: its finished run is kept as it was.
    grown = write(tmp_path, '"flows[0].cc" = ["bbr"]\n', name="grown.toml")
    assert cli.main(["sweep", str(grown), "--out", str(tmp_path / "c")]) == 0
    assert "not in this grid: kept on disk" in capsys.readouterr().err
    after = _run_folders(tmp_path / "c")
    assert len(after) == 2 and all(after[k] == v for k, v in before.items())
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    assert cli.main(["sweep", str(path), "--out", str(tmp_path / "mine")]) == 2
    assert (tmp_path / "mine" / "notes.txt").read_text() == "mine"
