"""From a campaign to the paper's figure: per-group tables, honest statistics, plots, growing campaigns."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import ccarena
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CCARENA = [sys.executable, "-m", "ccarena"]

T_975 = {2: 4.302653, 4: 2.776445}
"""Two-sided 95 % Student t quantiles for 2 and 4 degrees of freedom (any statistics table)."""

BASE = """\
name = "share"
duration = "3s"
seed = 3

[topology]
rtt = "20ms"
bottleneck = {{ rate = "10Mbps", buffer = "1bdp", loss = 0.002 }}

[[flows]]
cc = "bbr"
pacing = true

[[flows]]
cc = "cubic"
count = {cubics}

[measure]
interval = "100ms"

[sweep]
"topology.bottleneck.buffer" = {buffers}
repeat = {repeat}
"""


def campaign_file(tmp: Path, *, buffers: str = '["0.5bdp", "2bdp"]', repeat: int = 3, cubics: int = 2) -> Path:
    path = tmp / "share.toml"
    path.write_text(BASE.format(buffers=buffers, repeat=repeat, cubics=cubics))
    return path


@pytest.fixture(scope="module")
def camp(tmp_path_factory: pytest.TempPathFactory) -> ccarena.Campaign:
    tmp = tmp_path_factory.mktemp("share")
    return ccarena.sweep(campaign_file(tmp), out=tmp / "c", jobs=2)


def test_flow_and_group_tables_carry_the_swept_columns_and_shares_that_add_up(camp: ccarena.Campaign) -> None:
    runs, flows, groups = camp.runs.set_index("run_id"), camp.run_flows, camp.run_groups
    assert len(flows) == 6 * 3 and len(groups) == 6 * 2
    for table in (flows, groups):
        assert {"topology.bottleneck.buffer_bdp", "point", "repeat", "baseline", "cc", "rtt_s"} <= set(table.columns)
        assert (table["topology.bottleneck.buffer_bdp"] == table["run_id"].map(runs["topology.bottleneck.buffer_bdp"])).all()
    assert set(flows["rtt_s"]) == {0.02}
    for run_id, f in flows.groupby("run_id"):
        # Shares of what all flows got sum to one; shares of the link to the window's utilisation
        # (every flow runs through the whole window, so its window rate is its bytes there over the window).
        assert f["share_of_flows"].sum() == pytest.approx(1.0, abs=1e-9)
        assert f["share_of_link"].sum() == pytest.approx(runs.loc[run_id, "utilization_window"], abs=2e-3)
        g = groups[groups["run_id"] == run_id].set_index("group")
        assert g.loc[1, "flows"] == 2 and g.loc[1, "cc"] == "cubic"
        assert g.loc[1, "total_window_rate_bps"] == f.loc[f["group"] == 1, "window_rate_bps"].sum()
        bbr = float(f.loc[f["group"] == 0, "window_rate_bps"].iloc[0])
        cubic = float(f.loc[f["group"] == 1, "window_rate_bps"].mean())
        assert g.loc[0, "rate_ratio_vs_others"] == pytest.approx(bbr / cubic)
        assert g.loc[0, "rate_ratio_vs_others"] * g.loc[1, "rate_ratio_vs_others"] == pytest.approx(1.0)


def test_aggregate_counts_runs_not_flows_and_gives_intervals_only_over_repeats_of_a_point(camp: ccarena.Campaign) -> None:
    flows = camp.run_flows
    agg = camp.aggregate(by=["topology.bottleneck.buffer_bdp", "cc"], metrics=["goodput_bps"])
    assert set(agg["goodput_bps_n"]) == {3} and set(agg["points"]) == {1}
    for _, row in agg.iterrows():
        sub = flows[(flows["topology.bottleneck.buffer_bdp"] == row["topology.bottleneck.buffer_bdp"])
                    & (flows["cc"] == row["cc"])]
        per_run = sub.groupby("run_id")["goodput_bps"].mean().tolist()  # two CUBIC flows of a run: one value
        assert len(per_run) == 3
        assert row["goodput_bps_mean"] == pytest.approx(statistics.mean(per_run))
        assert row["goodput_bps_ci"] == pytest.approx(T_975[2] * statistics.stdev(per_run) / math.sqrt(3), rel=1e-5)
    pooled = camp.aggregate(by=["cc"], metrics=["share_of_flows"])
    assert list(pooled["points"]) == [2, 2] and set(pooled["share_of_flows_n"]) == {6}
    assert pooled["share_of_flows_ci"].isna().all(), "runs at different buffers are not repeats"
    assert pooled["share_of_flows_mean"].sum() == pytest.approx(1.0)
    with pytest.raises(KeyError, match='did you mean "utilization"'):
        camp.aggregate(metrics=["utilisation"])


def test_results_by_algorithm_is_one_command_and_a_typo_gets_a_suggestion(camp: ccarena.Campaign) -> None:
    out = subprocess.run([*CCARENA, "results", str(camp.path), "--metric", "share_of_flows",
                          "--by", "topology.bottleneck.buffer_bdp", "--by", "cc"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["topology.bottleneck.buffer_bdp", "cc", "n", "share_of_flows"]
    assert len(lines) == 1 + 4 and all("±" in line for line in lines[1:])
    pooled = subprocess.run([*CCARENA, "results", str(camp.path), "--by", "cc"], capture_output=True, text=True, check=False)
    assert pooled.returncode == 0 and "pool several points" in pooled.stdout
    assert "±" not in pooled.stdout
    bad = subprocess.run([*CCARENA, "results", str(camp.path), "--by", "topology.bottleneck.buffer"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and 'did you mean "topology.bottleneck.buffer_bdp"' in bad.stderr


def _series(fig: object) -> dict[str, tuple[list[tuple[float, float]], list[float]]]:
    """Per legend label: the (x, mean) drawn and the error bars' half widths."""
    out = {}
    for ax in fig.axes:  # type: ignore[attr-defined]
        for c in ax.containers:
            xy = [tuple(p) for p in c.lines[0].get_xydata()]
            bars = c.lines[2][0].get_segments() if c.lines[2] else []
            half = [(seg[1][1] - seg[0][1]) / 2 for seg in bars] or [0.0] * len(xy)
            out[f"{ax.get_title()}|{c.get_label()}"] = (xy, half)
    return out


def test_plot_draws_runs_below_five_repeats_and_never_pools_another_swept_column(camp: ccarena.Campaign) -> None:
    fig = camp.plot("share_of_flows", x="topology.bottleneck.buffer_bdp", hue="cc")
    drawn = _series(fig)
    assert set(drawn) == {"|bbr", "|cubic"}
    groups = camp.run_groups
    for cc in ("bbr", "cubic"):
        xy, half = drawn[f"|{cc}"]
        want = groups[groups["cc"] == cc].groupby("topology.bottleneck.buffer_bdp")["share_of_flows"].mean()
        assert [x for x, _ in xy] == list(want.index) and [m for _, m in xy] == pytest.approx(list(want.values))
        assert half == [0.0, 0.0], "3 repeats: no interval"
    dots = sorted(y for line in fig.axes[0].lines if line.get_linestyle() == "None" for y in line.get_ydata())
    assert dots == pytest.approx(sorted(groups["share_of_flows"]))
    # Drawn against the repeat number, the swept buffer becomes the hue: its runs are not repeats.
    fig = camp.plot("jain_index", x="repeat")
    assert sorted(_series(fig)) == ["|buffer = 0.5 BDP", "|buffer = 2 BDP"]
    with pytest.raises(KeyError, match="did you mean"):
        camp.plot("share_of_flow")


def test_five_repeats_of_a_point_carry_a_t_interval_and_vector_output_is_written(tmp_path: Path) -> None:
    c = ccarena.sweep(campaign_file(tmp_path, buffers='["1bdp"]', repeat=5, cubics=1), out=tmp_path / "c", jobs=2)
    assert c.aggregate(per="group")["share_of_flows_n"].tolist() == [5, 5]
    fig_dir = tmp_path / "f"
    for suffix in ("pdf", "svg", "png"):
        out = subprocess.run([*CCARENA, "plot", str(c.path), "--y", "utilization_window", "--x", "repeat",
                              "--out", str(fig_dir / f"u.{suffix}")], capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr
    assert (fig_dir / "u.pdf").read_bytes()[:5] == b"%PDF-" and b"<svg" in (fig_dir / "u.svg").read_bytes()[:500]
    again = subprocess.run([*CCARENA, "plot", str(c.path), "--y", "utilization_window", "--out",
                            str(fig_dir / "u.pdf")], capture_output=True, text=True, check=False)
    assert again.returncode == 2 and "exists" in again.stderr, "a file the user has is not replaced without --force"
    from ccarena.campaign.figures import plot

    groups = c.run_groups
    fig = plot(c, "rate_per_flow_bps", x="cc", hue=None, per="group")
    (xy, half), = _series(fig).values()
    for (_, mean), h, cc in zip(xy, half, sorted(set(groups["cc"])), strict=True):
        values = (groups.loc[groups["cc"] == cc, "rate_per_flow_bps"] / 1e6).tolist()
        assert mean == pytest.approx(statistics.mean(values))
        assert h == pytest.approx(T_975[4] * statistics.stdev(values) / math.sqrt(5), rel=1e-5)
    assert fig.axes[0].get_ylabel() == "rate per flow (Mbit/s)"


def test_the_report_draws_the_numbers_of_a_campaign_with_known_values(tmp_path: Path) -> None:
    from ccarena.report.campaign import campaign_sections, metric_figures

    c = ccarena.sweep(campaign_file(tmp_path, buffers='["0.5bdp", "1bdp", "2bdp"]', repeat=5, cubics=1),
                      out=tmp_path / "c", jobs=2)
    # Replace the measured utilisation by known values: point p, repeat r -> 0.5 + 0.1 p + 0.01 r^2.
    table = pq.read_table(c.store.catalogue_file)
    rows = table.to_pylist()
    known = [0.5 + 0.1 * r["point"] + 0.01 * r["repeat"] ** 2 for r in rows]
    i = table.column_names.index("utilization_window")
    pq.write_table(table.set_column(i, "utilization_window", pa.array(known)), c.store.catalogue_file)
    figs = {cap: fig for fig, cap in metric_figures(c)}
    (xy, half), = _series(figs["utilization_window against topology.bottleneck.buffer_bdp"]).values()
    per_point = [[0.5 + 0.1 * p + 0.01 * r**2 for r in range(5)] for p in range(3)]
    assert [m for _, m in xy] == pytest.approx([statistics.mean(v) for v in per_point])
    assert half == pytest.approx([T_975[4] * statistics.stdev(v) / math.sqrt(5) for v in per_point], rel=1e-5)
    _, sections = campaign_sections(c.path)
    html = dict(sections)["Metrics per point"]
    for v in per_point:
        assert f"{statistics.mean(v):.6g} ± {T_975[4] * statistics.stdev(v) / math.sqrt(5):.3g}" in html
    # The ensemble band stays within what a rate can be: 0 to the link's 10 Mbit/s.
    ts = c.timeseries("rate_bps")
    assert (ts["lo"] >= 0).all() and (ts["hi"] <= 10e6).all() and (ts["mean"] - ts["ci"] < 0).any()
    assert set(ts["cc"]) == {"bbr", "cubic"}
    prov = json.loads((c.path / "provenance.json").read_text())["sessions"]
    assert len(prov) == 1 and prov[0]["runs_made"] == 15 and prov[0]["command_line"]
    from ccarena.report.campaign import flow_names

    assert flow_names(c) == {0: "group 0: bbr (flow 0)", 1: "group 1: cubic (flow 1)"}


def test_a_campaign_grows_keeping_every_finished_run(tmp_path: Path) -> None:
    path = campaign_file(tmp_path, buffers='["0.5bdp"]', repeat=2, cubics=1)
    small = ccarena.sweep(path, out=tmp_path / "c", jobs=2)
    first = {p.name: p.stat().st_mtime_ns for p in small.store.runs_dir.iterdir()}
    assert sorted(first) == sorted(small.runs["run_id"])
    # More repeats (past 10: the ids' repeat digits widen) and a new buffer, through the folder's own sweep.toml.
    grown = ccarena.sweep(tmp_path / "c" / "sweep.toml", out=tmp_path / "c", jobs=2,
                          set={"sweep.repeat": 11, 'sweep."topology.bottleneck.buffer"': ["0.5bdp", "2bdp"]})
    assert len(grown.runs) == 22
    made = json.loads((grown.path / "provenance.json").read_text())["sessions"]
    assert [s["runs_made"] for s in made] == [2, 20]
    kept = {p.name: p.stat().st_mtime_ns for p in grown.store.runs_dir.iterdir()}
    for old, mtime in first.items():
        new = old[: old.rindex("-r")] + f"-r{int(old.rsplit('-r', 1)[1]):02d}"
        assert kept[new] == mtime, "finished runs are kept, not run again"
    # The grown campaign holds exactly what one campaign of the final grid would.
    fresh = ccarena.sweep(path, out=tmp_path / "fresh", jobs=2,
                          set={"sweep.repeat": 11, 'sweep."topology.bottleneck.buffer"': ["0.5bdp", "2bdp"]})
    for a, b in ((grown.runs, fresh.runs), (grown.run_groups, fresh.run_groups)):
        assert a.drop(columns=["wall_s"], errors="ignore").equals(b.drop(columns=["wall_s"], errors="ignore"))
    # Running the folder's sweep.toml again finds everything done; another base experiment is refused.
    out = subprocess.run([*CCARENA, "sweep", str(grown.path / "sweep.toml"), "--out", str(grown.path), "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads((grown.path / "provenance.json").read_text())["sessions"][-1]["runs_made"] == 0
    other = subprocess.run([*CCARENA, "sweep", str(path), "--out", str(grown.path), "--set", "duration=4s"],
                           capture_output=True, text=True, check=False)
    assert other.returncode == 2 and "holds another campaign" in other.stderr
    assert len(ccarena.open(grown.path).runs) == 22


def test_notebooks_show_a_campaign_and_a_run(camp: ccarena.Campaign) -> None:
    html = camp._repr_html_()
    assert "share_of_flows (mean ± 95% CI)" in html and "utilization_window (mean ± 95% CI)" in html
    run = camp.result(camp.runs["run_id"][0])
    html = run._repr_html_()
    assert "<svg" in html and "jain_index" in html and "cubic" in html


V2_0 = "max_increment = 16, cnt_before_loss = 50, reno_estimate_per_ack = true"


def test_a_swept_table_of_parameters_labels_its_lines_and_panels_within_the_figure(tmp_path: Path) -> None:
    # B2's shape: the buffer as x, two zipped tables of CUBIC parameters as line and panel; each label
    # is a whole table. Drawn with warnings as errors, matplotlib's "tight layout not applied" (axes
    # pushed off the figure by a long title or legend) fails the test.
    path = tmp_path / "params.toml"
    path.write_text(
        BASE.format(buffers='["0.5bdp", "2bdp", "0.5bdp", "2bdp"]', repeat=1, cubics=1)
        + '"flows[1].params" = [\n'
        + f"  {{ beta = 0.8, hystart = false, initial_ssthresh = 100, {V2_0}, fast_convergence = false }},\n" * 2
        + f"  {{ beta = 0.5, hystart = false, initial_ssthresh = 100, {V2_0} }},\n" * 2
        + "]\n"
        + '"flows[1].rtt" = ["20ms", "20ms", "40ms", "40ms"]\n'
        + 'zip = [["topology.bottleneck.buffer", "flows[1].params", "flows[1].rtt"]]\n'
    )
    c = ccarena.sweep(path, out=tmp_path / "c", jobs=2)
    import warnings

    from ccarena.report.campaign import metric_figures

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figs = metric_figures(c)
    assert figs
    for fig, _ in figs:
        texts = [ax.get_title() for ax in fig.axes] + [
            t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()
        ]
        assert any("max increment" in t or "max_increment" in t for t in texts), texts
        # A flow group's field keeps its group: the other group runs other parameters.
        assert any(t.startswith("flows[1].params = {") for t in texts), texts
        assert all(len(line) <= 40 for t in texts for line in t.splitlines() if "{" in t or "}" in t), texts


def test_bar_labels_never_run_into_each_other_or_off_the_figure() -> None:
    # B4's five groups: each variant at each buffer, named in full
    import pandas as pd
    from ccarena.presets.common import bars

    names = ["CUBIC 2.6, 20 % BDP", "CUBIC 2.6, 100 % BDP", "H-TCP, 20 % BDP", "H-TCP, 100 % BDP"]
    names.append("CUBIC (Linux today), 20 % BDP")
    df = pd.DataFrame([{"variant": n, "cov": 0.1 + 0.01 * i} for i, n in enumerate(names) for _ in range(3)])
    fig = bars(df, "variant", "cov", "CoV of the flows' rate (10 s windows)")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].get_xticklabels()]
    assert len(boxes) == 5
    for a, b in zip(boxes, boxes[1:]):
        assert a.x1 < b.x0, "neighbouring labels overlap"
    width = fig.get_size_inches()[0] * fig.dpi
    assert boxes[0].x0 >= 0 and boxes[-1].x1 <= width
