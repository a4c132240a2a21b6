"""Whole runs through the simulator: the Python API, the command line, saved folders, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import ccarena
import numpy as np
import pytest
from ccarena.analysis import plots
from ccarena.results import ResultExistsError

SUMMARY_KEYS = {
    "format_version",
    "utilization",
    "utilization_second_half",
    "jain_index",
    "duration_s",
    "seed",
    "flows",
    "queue",
    "conservation",
    "engine",
}
FLOW_KEYS = {
    "flow",
    "cc",
    "group",
    "goodput_bps",
    "bottleneck_rate_bps",
    "retransmits",
    "timeouts",
    "rtt_p50_ms",
    "rtt_p99_ms",
    "rtt_min_ms",
    "completion_s",
}
QUEUE_KEYS = {"drops", "random_drops", "delay_p50_ms", "delay_p99_ms", "delay_mean_ms", "max_backlog_pkts"}
TRACE_COLUMNS = {
    "t_ns",
    "time_s",
    "flow",
    "group",
    "cc",
    "bottleneck_bytes",
    "rate_bps",
    "cwnd_pkts",
    "ssthresh_pkts",
    "srtt_us",
    "inflight_pkts",
    "pacing_rate_bps",
    "delivered_bytes_total",
    "retrans_pkts_total",
}
FILES = [
    "figure.png",
    "flows.parquet",
    "provenance.json",
    "queue.parquet",
    "spec.toml",
    "summary.json",
    "transfers.parquet",
]


def two_renos(**extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "two-renos",
        "duration": "5s",
        "topology": {"rtt": "20ms", "bottleneck": {"rate": "20Mbps", "buffer": "1bdp"}},
        "flows": [{"cc": "reno", "count": 2}],
    }
    d.update(extra)
    return d


EXPERIMENT = """\
name = "mixed"
duration = "4s"
seed = 3

[topology]
rtt = "20ms"
bottleneck = { rate = "20Mbps", buffer = "1bdp", loss = 0.01 }

[[flows]]
cc = "cubic"

[[flows]]
cc = "reno"
start = "1s"
"""


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ccarena", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_run_from_a_dict() -> None:
    r = ccarena.run(two_renos())
    s = r.summary
    assert set(s) >= SUMMARY_KEYS
    assert s["duration_s"] == 5.0 and s["seed"] == 1 and s["format_version"] == ccarena.FORMAT_VERSION
    assert len(s["flows"]) == 2
    for f in s["flows"]:
        assert set(f) >= FLOW_KEYS
        assert f["cc"] == "reno" and f["group"] == 0 and f["completion_s"] is None
        assert 0 < f["goodput_bps"] <= f["bottleneck_rate_bps"] <= 20e6
        assert 0 < f["rtt_min_ms"] <= f["rtt_p50_ms"] <= f["rtt_p99_ms"]
    assert set(s["queue"]) >= QUEUE_KEYS
    assert "engine_seconds" not in s["engine"]
    # Two bulk flows fill the link, and share it.
    assert 0.8 < s["utilization"] <= 1.0 + 1e-9
    assert 0.8 < s["utilization_second_half"] <= 1.0 + 1e-9
    assert 0.5 < s["jain_index"] <= 1.0
    c = s["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]

    df = r.flows
    assert set(df.columns) >= TRACE_COLUMNS
    assert len(df) == 2 * 50
    assert sorted(df["flow"].unique().tolist()) == [0, 1]
    assert np.allclose(df["time_s"], df["t_ns"] / 1e9)
    # The trace adds up to the per-flow totals, and the rate is bytes per interval.
    per_flow = df.groupby("flow")["bottleneck_bytes"].sum()
    assert per_flow.tolist() == [f["bottleneck_bytes"] for f in s["flows"]]
    assert np.allclose(df["rate_bps"], df["bottleneck_bytes"] * 8 / 0.1)
    assert r.queue["tx_bytes"].sum() == s["queue"]["tx_bytes"]
    assert {"t_ns", "time_s", "backlog_bytes", "backlog_pkts", "drops_pkts", "tx_bytes"} <= set(r.queue.columns)
    assert r.spec["flows"][0]["cc"] == "reno" and r.raw is not None


def test_algorithm_internals_have_named_columns() -> None:
    r = ccarena.run(two_renos(flows=[{"cc": "cubic"}, {"cc": "reno"}]), duration="2s")
    df = r.flows
    names = [str(n) for n in r.raw["flows"][0]["metric_names"] if n] if r.raw else []
    assert names, "cubic reports its internals"
    for name in names:
        assert name in df.columns
        assert df.loc[df["flow"] == 1, name].isna().all()
        assert df.loc[df["flow"] == 0, name].notna().any()


def test_fixed_transfer_completes() -> None:
    r = ccarena.run(two_renos(flows=[{"cc": "reno", "app": "fixed", "size": "1MB"}]))
    f = r.summary["flows"][0]
    assert f["completion_s"] is not None and 0 < f["completion_s"] < 5
    assert f["goodput_bytes"] == 1_000_000


def test_per_flow_rates_are_over_each_flows_own_time_and_the_table_says_so() -> None:
    # The reno flow starts 2 s into a 4-s run: its rates are its bytes over its 2 s, and the
    # printed table says what the rates are over once the flows' times differ.
    late = ccarena.run(two_renos(duration="4s", flows=[{"cc": "reno"}, {"cc": "reno", "start": "2s"}]))
    f = late.summary["flows"][1]
    assert (f["start_s"], f["end_s"]) == (2.0, 4.0)
    assert f["goodput_bps"] == pytest.approx(f["goodput_bytes"] * 8 / 2.0, rel=1e-6)
    assert f["bottleneck_rate_bps"] == pytest.approx(f["bottleneck_bytes"] * 8 / 2.0, rel=1e-6)
    assert "over each flow's own time" in late.summary_text()
    assert "over each flow's own time" not in ccarena.run(two_renos()).summary_text()


def test_cli_run_writes_a_complete_folder(tmp_path: Path) -> None:
    exp = tmp_path / "mixed.toml"
    exp.write_text(EXPERIMENT)
    out = tmp_path / "res"
    p = cli(["run", exp.name, "--out", str(out)], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in out.iterdir()) == FILES
    assert f"results: {out}" in p.stdout
    assert "utilisation" in p.stdout and "Jain index" in p.stdout and "events/s" in p.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["name"] == "mixed" and summary["seed"] == 3
    assert [f["cc"] for f in summary["flows"]] == ["cubic", "reno"]
    # No temporary folder is left next to the result.
    assert sorted(x.name for x in tmp_path.iterdir()) == ["mixed.toml", "res"]

    loaded = ccarena.Result.load(out)
    assert loaded.summary == summary
    assert loaded.spec["name"] == "mixed"
    # 40 intervals of flow 0 and 30 of flow 1, which starts at 1 s (no rows before a flow starts).
    assert len(loaded.flows) == 40 + 30 and set(loaded.flows.columns) >= TRACE_COLUMNS

    # Default folder name: results/<name>-seed<seed>, then -2.
    p = cli(["run", exp.name, "--no-figure"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    p = cli(["run", exp.name, "--no-figure"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "results").iterdir()) == ["mixed-seed3", "mixed-seed3-2"]
    assert "figure.png" not in [x.name for x in (tmp_path / "results" / "mixed-seed3").iterdir()]


def test_rerunning_the_saved_spec_is_byte_identical(tmp_path: Path) -> None:
    exp = tmp_path / "mixed.toml"
    exp.write_text(EXPERIMENT)
    assert cli(["run", exp.name, "--out", "a"], cwd=tmp_path).returncode == 0
    p = cli(["run", "a/spec.toml", "--out", "b"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for name in ["spec.toml", "summary.json", "flows.parquet", "queue.parquet"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name

    # Another seed draws other random losses.
    p = cli(["run", exp.name, "--seed", "4", "--out", "c", "--no-figure"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    c = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert c["seed"] == 4
    assert a["queue"]["random_drops"] > 0 and c["queue"]["random_drops"] > 0
    assert a["flows"] != c["flows"]
    assert (tmp_path / "a" / "flows.parquet").read_bytes() != (tmp_path / "c" / "flows.parquet").read_bytes()


def test_existing_output_folder_is_refused_and_untouched(tmp_path: Path) -> None:
    exp = tmp_path / "mixed.toml"
    exp.write_text(EXPERIMENT)
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("precious")
    p = cli(["run", exp.name, "--out", "taken"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == "error: taken: already exists (ccarena never overwrites results; choose another folder)\n"
    assert [x.name for x in out.iterdir()] == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "precious"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["mixed.toml", "taken"]

    with pytest.raises(ResultExistsError):
        ccarena.run(two_renos(), out=out)
    r = ccarena.run(two_renos(duration="1s"))
    with pytest.raises(ResultExistsError):
        r.save(out)
    assert [x.name for x in out.iterdir()] == ["mine.txt"]


def test_a_failed_save_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("figure failed")

    monkeypatch.setattr(plots, "save", broken)
    with pytest.raises(RuntimeError, match="figure failed"):
        ccarena.run(two_renos(duration="1s"), out=tmp_path / "res")
    assert list(tmp_path.iterdir()) == []


def test_plot_registry() -> None:
    r = ccarena.run(two_renos(duration="1s"))
    assert {"overview", "rate", "cwnd", "queue"} <= set(plots.PLOTS)
    fig = r.plot("overview")
    assert len(fig.axes) == 3
    assert fig.axes[0].get_ylabel().startswith("rate at bottleneck")
    legend = fig.axes[0].get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:2] == ["flow 0 (reno)", "flow 1 (reno)"]
    with pytest.raises(KeyError, match="unknown plot"):
        r.plot("nope")


def test_list_cc(tmp_path: Path) -> None:
    p = cli(["list", "cc"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for a in ccarena.algorithms():
        assert f"{a['name']}: {a['summary']}" in p.stdout
        assert f"default recovery: {a['default_recovery']}" in p.stdout
        for param in a["params"]:
            assert param["name"] in p.stdout


def test_help(tmp_path: Path) -> None:
    for args in (["--help"], ["run", "--help"], ["list", "--help"]):
        p = cli(args, cwd=tmp_path)
        assert p.returncode == 0 and p.stdout.startswith("usage: ccarena"), args
    assert "--set PATH=VALUE" in cli(["run", "--help"], cwd=tmp_path).stdout


def test_a_queue_discipline_from_the_file_reaches_the_engine() -> None:
    """CoDel (RFC 8289, target 5 ms) keeps the queueing delay near its target where DropTail fills 4 BDP."""
    path = Path(__file__).resolve().parent.parent / "scenarios" / "codel.toml"
    codel = ccarena.run(path, duration="20s")
    doc = ccarena.spec.read_toml(path)
    del doc["topology"]["bottleneck"]["codel"]
    tail = ccarena.run(doc, duration="20s", set={"topology.bottleneck.qdisc": "droptail"})
    q = codel.summary["queue"]
    assert q["qdisc"] == "codel" and 1.0 <= q["delay_p50_ms"] <= 10.0
    assert tail.summary["queue"]["delay_p50_ms"] > 40.0  # 4 BDP of 40 ms fill to well above CoDel's target
    assert {"marks", "codel_dropping", "codel_count"} <= set(codel.queue.columns)
    assert codel.spec["topology"]["bottleneck"]["codel"]["target"] == "5ms"


def test_xcp_from_the_file_fills_the_link_with_an_empty_queue() -> None:
    """XCP (Katabi, Handley & Rohrs 2002): senders cc = "xcp" through qdisc = "xcp" at 100 Mbit/s, 100 ms."""
    doc = {
        "duration": "30s",
        "topology": {"rtt": "100ms", "bottleneck": {"rate": "100Mbps", "buffer": "1bdp", "qdisc": "xcp"}},
        "flows": [{"cc": "xcp", "count": 2}],
    }
    s = ccarena.run(doc).summary
    assert s["utilization_second_half"] >= 0.95 and s["jain_index"] >= 0.99
    assert s["queue"]["delay_p50_ms"] < 5.0  # near-empty: a 1-BDP buffer would give up to 100 ms
    assert ccarena.load_spec(doc).resolved["topology"]["bottleneck"]["xcp"]["alpha"] == 0.4


def test_the_emulator_line_warns_of_late_deliveries_and_notes_stalls() -> None:
    """What `ccarena run --backend emu` prints under its table, from summary.json's emu section."""
    from ccarena.cli.run import LATENESS_WARN_US, emu_line

    def summary(p99_us: float, stalls: int, mode: str = "catch-up") -> dict[str, Any]:
        late = {"p50_us": 12.0, "p99_us": p99_us, "max_us": 900.0 + 4000.0 * stalls}
        return {
            "duration_s": 20.0,
            "emu": {
                "kernel": {"release": "6.1.0"},
                "emulator": {
                    "realtime": True,
                    "delivery_lateness_us": late,
                    "reverse_delivery_lateness_us": dict(late, p99_us=20.0),
                    "stalls": {
                        "count": stalls,
                        "total_ms": 6.25 * stalls,
                        "longest_ms": 4.9 if stalls else 0.0,
                        "mode": mode,
                    },
                },
            }
        }

    calm = emu_line(summary(150.0, 0))
    assert calm == (
        "emu: Linux 6.1.0, emulator real-time, delivery lateness p99 150 us (data), 20 us (ACKs)"
    ), calm
    late = emu_line(summary(LATENESS_WARN_US + 50, 0)).splitlines()
    assert len(late) == 2 and late[1].startswith("warning: the emulator delivered late (p99 0.25 ms > 200 us)")
    stalled = emu_line(summary(150.0, 3)).splitlines()
    assert len(stalled) == 2
    assert stalled[1].startswith(
        "note: the emulator stalled 3 times for more than 1 ms (longest 4.9 ms, 18.8 ms in all, 0.09% of the run;"
    ), stalled[1]
    assert "BBR" in stalled[1] and "CCARENA_EMU_STALLS=pause" in stalled[1]
    paused = emu_line(summary(150.0, 3, "pause")).splitlines()
    assert paused[1].startswith(stalled[1].split("):")[0]) and "the path was paused for each" in paused[1], paused


def test_a_comparison_over_seeds_gives_means_ranges_and_the_difference_of_the_means() -> None:
    from ccarena.analysis.comparison import differences, format_table, over_seeds

    def summary(goodputs: list[float], rtts: list[float | None], util: float) -> dict[str, Any]:
        flows = [
            {"flow": i, "cc": "cubic", "goodput_bps": g * 1e6, "rtt_mean_ms": r, "retransmits": 10 * i}
            for i, (g, r) in enumerate(zip(goodputs, rtts, strict=True))
        ]
        return {"flows": flows, "utilization": util}

    seeds = [
        differences(summary([10.0, 20.0], [30.0, 40.0], 0.9), summary([11.0, 18.0], [33.0, None], 0.8)),
        differences(summary([12.0, 20.0], [30.0, 40.0], 0.9), summary([15.0, 22.0], [36.0, None], 1.0)),
    ]
    rows = over_seeds(seeds)
    assert [(r["quantity"], r["flow"]) for r in rows] == [(r["quantity"], r["flow"]) for r in seeds[0]]
    g0 = rows[0]
    assert (g0["sim"], g0["sim_min"], g0["sim_max"], g0["sim_values"]) == (11.0, 10.0, 12.0, [10.0, 12.0])
    assert (g0["emu"], g0["emu_min"], g0["emu_max"]) == (13.0, 11.0, 15.0)
    assert g0["diff"] == 2.0 and g0["rel"] == pytest.approx(2.0 / 11.0)
    rtt1 = next(r for r in rows if r["quantity"] == "mean RTT" and r["flow"] == "1")
    assert rtt1["emu"] is None and rtt1["emu_min"] is None and rtt1["diff"] is None
    util = rows[-1]
    assert util["emu"] == pytest.approx(0.9) and util["rel"] == pytest.approx(0.0)
    text = format_table(rows).splitlines()
    assert text[0].split() == ["quantity", "flow", "cc", "sim", "mean", "sim", "range", "emu", "mean", "emu", "range", "emu-sim", "rel"]
    assert text[1].split() == ["goodput", "(Mbit/s)", "0", "cubic", "11.00", "10.00..12.00", "13.00", "11.00..15.00", "+2.00", "+18.2%"]
    with pytest.raises(ValueError, match="no tables"):
        over_seeds([])
