"""Background traffic: web and on-off sessions, UDP load, reverse flows, random loss, churn.

Each check compares the simulator with something independent of it: the
configured distribution (Kolmogorov-Smirnov), the configured rate or mean,
the stationary rate of the loss process, conservation, and determinism.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.integrate
import scipy.stats
from ccarena import cli, run
from ccarena.spec import SpecError, load_spec, size_mean

SURGE = {"body": 0.93, "mu": 9.357, "sigma": 1.328, "tail_min": 133_000.0, "tail_shape": 1.1}


def experiment(duration: str, rate: str = "100Mbps", rtt: str = "50ms", **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "duration": duration,
        "topology": {"rtt": rtt, "bottleneck": {"rate": rate, "buffer": "1bdp"}},
        "measure": {"trace": False},
    }
    d.update(extra)
    return d


def surge_cdf(x: Any, body: float, mu: float, sigma: float, tail_min: float, tail_shape: float) -> Any:
    """CDF of the SURGE mixture: lognormal body (of ln bytes) with probability body, else Pareto."""
    x = np.asarray(x, dtype=np.float64)
    lognormal = scipy.stats.norm.cdf((np.log(np.maximum(x, 1e-300)) - mu) / sigma)
    pareto = np.where(x >= tail_min, 1.0 - (tail_min / np.maximum(x, tail_min)) ** tail_shape, 0.0)
    return body * lognormal + (1.0 - body) * pareto


# ---------------------------------------------------------------------------
# Distributions and rates


def test_surge_sizes_match_the_configured_mixture() -> None:
    # 10 000 Poisson arrivals per second for 10.5 s: over 100 000 transfers.
    # Sizes are drawn at arrival, so how the transfers fare does not matter;
    # a large MSS keeps the packet count small.
    exp = experiment("10.5s", rate="100Gbps", rtt="100us", tcp={"mss": 65000}, background={"web": [{"rate": 10000.0}]})
    exp["topology"]["bottleneck"]["buffer"] = "2000pkts"
    r = run(exp)
    sizes = r.transfers["size_bytes"].to_numpy(np.float64)
    assert len(sizes) >= 100_000
    draws = sizes[:100_000]
    assert scipy.stats.kstest(draws, lambda x: surge_cdf(x, **SURGE)).pvalue > 0.01
    # The test has power: a mixture with one point less of body is rejected.
    wrong = dict(SURGE, body=0.92)
    assert scipy.stats.kstest(draws, lambda x: surge_cdf(x, **wrong)).pvalue < 0.01


def test_load_uses_the_mean_of_the_sizes_as_drawn() -> None:
    # E[min(X, 1 TB)] = ∫ P(X > x) dx over [0, 1 TB], integrated numerically in ln x.
    cap = 1e12

    def capped_mean(body: float, mu: float, sigma: float, tail_min: float, tail_shape: float) -> float:
        def integrand(u: float) -> float:
            x = math.exp(u)
            return float(1.0 - surge_cdf(x, body, mu, sigma, tail_min, tail_shape)) * x

        pieces = [-10.0, math.log(tail_min), 15.0, 20.0, math.log(cap)]
        return sum(scipy.integrate.quad(integrand, a, b, limit=200)[0] for a, b in itertools.pairwise(pieces))

    engine_surge = {"kind": "surge", **SURGE}
    assert size_mean(engine_surge) == pytest.approx(capped_mean(**SURGE), rel=1e-4)
    # SURGE's uncapped mean is 128.5 KB; 1 TB cap or not, the tail's draws above it weigh 19 KB.
    assert size_mean(engine_surge) == pytest.approx(109_306, rel=1e-3)
    # Pareto only (body 0): k = 1000 B, α = 1.2 has mean 6000 B uncapped, 5921 B capped.
    pareto = {"body": 0.0, "mu": 0.0, "sigma": 1.0, "tail_min": 1000.0, "tail_shape": 1.2}
    assert size_mean({"kind": "pareto", "min": 1000.0, "shape": 1.2}) == pytest.approx(capped_mean(**pareto), rel=1e-4)
    spec = load_spec(experiment("1s", background={"web": {"load": 0.2}}))
    assert spec.engine["tcp_sources"][0]["arrivals"]["rate"] == pytest.approx(0.2 * 100e6 / (8 * 109_306), rel=1e-3)


def test_offered_load_of_cbr_and_web_sources() -> None:
    # 20 % of 100 Mbit/s each, over 300 s. The web source uses SURGE's lognormal
    # body (finite variance): SURGE's Pareto tail (shape 1.1) makes one run's
    # realised load scatter far more than 5 % (see README, "Background traffic").
    r = run(
        experiment(
            "300s",
            background={
                "udp": [{"load": 0.2}],
                "web": [{"load": 0.2, "sizes": {"dist": "lognormal", "mu": 9.357, "sigma": 1.328}}],
            },
        )
    )
    src = {s["name"]: s for s in r.summary["sources"]}
    assert src["udp0"]["offered_bps"] == pytest.approx(20e6, rel=0.05)
    assert src["web0"]["offered_bps"] == pytest.approx(20e6, rel=0.05)
    assert src["web0"]["started"] > 20_000
    # At 40 % load almost everything arrives.
    assert src["udp0"]["achieved_bps"] == pytest.approx(src["udp0"]["offered_bps"], rel=0.01)
    assert src["web0"]["achieved_bps"] == pytest.approx(src["web0"]["offered_bps"], rel=0.01)


def test_mean_off_time_of_on_off_sessions() -> None:
    r = run(experiment("100s", rate="1Gbps", rtt="10ms", background={"onoff": [{"sessions": 200, "off": "500ms"}]}))
    tr = r.transfers
    assert tr["session"].notna().all()
    gaps = []
    for _, g in tr.sort_values(["session", "start_ns"]).groupby("session"):
        start = g["start_ns"].to_numpy(np.float64)
        done = start[:-1] + g["fct_ns"].to_numpy(np.float64)[:-1]
        gaps.append(start[1:] - done)  # completion to the session's next start
    off = np.concatenate(gaps) / 1e9
    assert len(off) > 20_000 and np.all(off >= 0)
    assert off.mean() == pytest.approx(0.5, rel=0.03)


def test_a_source_keeps_its_draws_when_another_is_added() -> None:
    web = {"rate": 50.0}
    alone = run(experiment("10s", background={"web": [web]}))
    more = run(experiment("10s", background={"web": [web], "udp": [{"load": 0.5, "pattern": "poisson"}]}))
    a, b = alone.transfers, more.transfers
    assert len(a) == len(b) > 300
    assert (a["size_bytes"].to_numpy() == b["size_bytes"].to_numpy()).all()
    assert (a["start_ns"].to_numpy() == b["start_ns"].to_numpy()).all()


# ---------------------------------------------------------------------------
# Loss, reverse traffic, churn


@pytest.mark.parametrize(
    ("forward", "reverse"),
    [
        (0.01, {"model": "gilbert", "p_gb": 0.01, "p_bg": 0.2, "loss_bad": 0.5}),
        ({"model": "gilbert", "p_gb": 0.002, "p_bg": 0.1}, {"model": "bernoulli", "p": 0.02}),
        ({"model": "periodic", "p": 0.004}, {"model": "periodic", "p": 0.01}),
    ],
    ids=["bernoulli-forward", "gilbert-forward", "periodic-forward"],
)
def test_random_loss_matches_its_stationary_rate(forward: Any, reverse: Any) -> None:
    def stationary(loss: Any) -> float:
        if not isinstance(loss, dict):
            return float(loss)
        if loss["model"] in ("bernoulli", "periodic"):
            return float(loss["p"])
        pi_bad = loss["p_gb"] / (loss["p_gb"] + loss["p_bg"])
        return pi_bad * loss.get("loss_bad", 1.0) + (1 - pi_bad) * loss.get("loss_good", 0.0)

    # 10^6 datagrams each way at half the link rate (no queue drops).
    exp = experiment(
        "24s",
        rate="1Gbps",
        rtt="10ms",
        background={"udp": [{"rate": "500Mbps"}, {"rate": "500Mbps", "direction": "reverse"}]},
    )
    exp["topology"]["bottleneck"]["loss"] = forward
    exp["topology"]["reverse"] = {"loss": reverse}
    s = run(exp).summary
    q = s["queue"]
    assert q["arrivals"] >= 1_000_000
    assert q["drops"] == q["random_drops"]
    assert q["random_drops"] / q["arrivals"] == pytest.approx(stationary(forward), rel=0.05)
    assert s["bottleneck"]["loss"] == pytest.approx(stationary(forward), rel=1e-6)
    sent = s["sources"][1]["offered_bytes"] // 1500
    assert q["reverse_drops"] / sent == pytest.approx(stationary(reverse), rel=0.05)


def test_reverse_bulk_flow_queues_acks_and_costs_utilisation() -> None:
    def exp(with_reverse: bool) -> dict[str, Any]:
        flows: list[dict[str, Any]] = [{"cc": "reno"}]
        if with_reverse:
            flows.append({"cc": "reno", "reverse": True})
        d = experiment("60s", rate="20Mbps", flows=flows)
        d["measure"] = {"trace": True}
        return d

    alone, both = run(exp(False)), run(exp(True))
    assert alone.summary["queue"]["reverse_delay_p99_ms"] == 0.0
    assert alone.queue["reverse_backlog_pkts"].max() == 0
    # The reverse flow's data fill the reverse queue the forward flow's ACKs cross.
    assert both.summary["queue"]["reverse_delay_p99_ms"] > 10.0
    assert both.queue["reverse_backlog_pkts"].max() > 0
    assert both.summary["utilization"] < alone.summary["utilization"] - 0.1
    assert both.summary["flows"][0]["goodput_bps"] < alone.summary["flows"][0]["goodput_bps"]


def test_churn_starts_flows_at_intervals() -> None:
    exp = experiment("20s", flows=[{"cc": "cubic", "count": 4, "start": "2s", "every": "3s", "stop": "15s"}])
    r = run(exp)
    assert [f["start_s"] for f in r.summary["flows"]] == [2.0, 5.0, 8.0, 11.0]
    assert all(f["end_s"] == 15.0 for f in r.summary["flows"])
    assert r.spec["flows"][0]["every"] == "3s"


# ---------------------------------------------------------------------------
# Scale, determinism


MEMORY_RUN = """
import json, resource, ccarena
r = ccarena.run({
    "duration": "300s",
    "topology": {"rtt": "50ms", "bottleneck": {"rate": "250Mbps", "buffer": "1bdp"}},
    "flows": [{"cc": "cubic"}],
    "background": {"web": [{"sessions": 200, "think": "1s", "direction": "both"}]},
    "measure": {"interval": "1s"},
})
# Peak RSS of this process. VmHWM starts afresh at exec; ru_maxrss would
# include the forking parent's (the test process's) peak.
try:
    with open("/proc/self/status") as f:
        rss_kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
except OSError:
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rss_kb": rss_kb, "summary": r.summary}))
"""


def test_many_short_flows_run_in_bounded_memory() -> None:
    p = subprocess.run([sys.executable, "-c", MEMORY_RUN], capture_output=True, text=True, check=True, timeout=300)
    out = json.loads(p.stdout)
    s = out["summary"]
    assert out["rss_kb"] < 500 * 1024, f"peak RSS {out['rss_kb'] / 1024:.0f} MB"
    assert s["transfers"]["count"] > 20_000
    # Slots are pooled: far fewer at once than transfers in all.
    assert s["engine"]["peak_flow_slots"] < 1_000
    c = s["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]


def busy_experiment() -> dict[str, Any]:
    return {
        "duration": "20s",
        "topology": {
            "rtt": "40ms",
            "bottleneck": {"rate": "50Mbps", "buffer": "1bdp", "loss": {"model": "gilbert", "p_gb": 1e-4, "p_bg": 0.3}},
        },
        "flows": [{"cc": "cubic"}, {"cc": "reno", "reverse": True, "start": "5s"}],
        "background": {
            "web": [
                {"load": 0.1, "bidirectional": True, "rtt": {"dist": "exponential", "mean_one_way": "30ms"}},
                {"sessions": 20, "think": "500ms", "sizes": {"dist": "exponential", "mean": "30KB"}},
            ],
            "onoff": [{"sessions": 5, "off": "2s", "rtt": {"dist": "uniform", "lo": "20ms", "hi": "100ms"}}],
            "udp": [{"rate": "5Mbps", "pattern": "poisson", "direction": "both"}],
        },
    }


def test_same_seed_same_bytes_other_seed_other_results(tmp_path: Path) -> None:
    files = ["spec.toml", "summary.json", "flows.parquet", "queue.parquet", "transfers.parquet"]
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        run(busy_experiment(), seed=seed, out=tmp_path / name, figure=False)
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    for f in ("summary.json", "transfers.parquet"):
        assert (tmp_path / "a" / f).read_bytes() != (tmp_path / "c" / f).read_bytes(), f
    # Rerunning the saved spec gives the same bytes too.
    again = run(tomllib.loads((tmp_path / "a" / "spec.toml").read_text()))
    assert again.summary == json.loads((tmp_path / "a" / "summary.json").read_text())
    assert len(again.transfers) == again.summary["transfers"]["count"] > 100


# ---------------------------------------------------------------------------
# The experiment file


def test_background_spec_resolves_and_round_trips() -> None:
    spec = load_spec(busy_experiment())
    r = spec.resolved
    web, sessions = r["background"]["web"]
    assert web["direction"] == "both" and "bidirectional" not in web
    assert sessions["sizes"] == {"dist": "exponential", "mean": "30KB"}
    assert r["background"]["onoff"][0]["size"] == {"dist": "pareto", "mean": "100pkts", "shape": 1.2}
    assert r["topology"]["bottleneck"]["loss"]["loss_bad"] == 1.0
    assert r["flows"][1]["reverse"] is True and "reverse" not in r["flows"][0]
    eng = spec.engine
    assert [s["name"] for s in eng["tcp_sources"]] == ["web0", "web1", "onoff0"]
    assert eng["tcp_sources"][2]["sizes"]["min"] == pytest.approx(100 * 1448 * 0.2 / 1.2)
    assert eng["tcp_sources"][0]["rtt"] == {"kind": "exponential", "mean_one_way_ns": 30_000_000, "min_rtt_ns": 0}
    assert eng["bottleneck"]["loss_model"]["kind"] == "gilbert"
    assert eng["flows"][1]["reverse"] is True
    again = load_spec(tomllib.loads(spec.to_toml()))
    assert again.resolved == r and again.engine == eng
    # A single [background.web] table is a list of one.
    one = load_spec(experiment("1s", background={"web": {"rate": 2.0}}))
    assert [w["name"] for w in one.resolved["background"]["web"]] == ["web0"]
    # Experiments without the new keys resolve as before.
    plain = load_spec(experiment("1s", flows=[{"cc": "reno"}])).resolved
    assert "background" not in plain and "loss" not in plain["topology"]["reverse"]


BASE = """\
duration = "5s"
[topology]
rtt = "20ms"
bottleneck = { rate = "20Mbps", buffer = "1bdp" }
"""


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            '[background.web]\nsessions = 2\ncolour = "red"\n',
            "background.web.colour: unknown key (known: ack_path, bidirectional, cc, direction,",
        ),
        (
            "[[background.web]]\nsessions = 2\nrate = 3.0\n",
            "background.web[0].rate: only one of sessions, rate and load may be given (sessions is also set)",
        ),
        ("[[background.web]]\nload = -0.2\n", "background.web[0].load: expected a number in (0, 100], got -0.2"),
        (
            '[[background.web]]\nrate = 1.0\nsizes = { dist = "weibull", mean = "10KB" }\n',
            'background.web[0].sizes.dist: unknown size distribution "weibull"',
        ),
        (
            "[[background.onoff]]\nsessions = 3\noff = 5\n",
            'background.onoff[0].off: expected a time such as "20ms", got 5',
        ),
        (
            '[[background.udp]]\nrate = "1Mbps"\nload = 0.5\n',
            "background.udp[0].load: only one of rate and load may be given",
        ),
        (
            '[[flows]]\ncc = "reno"\ncount = 3\nevery = "3s"\n',
            "flows[0].every: the last of the 3 flows would start at 6s",
        ),
        ("[background]\nftp = { count = 1 }\n", "background.ftp: unknown key (known: onoff, udp, web)"),
    ],
    ids=[
        "unknown-key",
        "sessions-and-rate",
        "negative-load",
        "unknown-dist",
        "unitless-off",
        "udp-both",
        "churn",
        "kind",
    ],
)
def test_background_mistakes_exit_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BASE + textwrap.dedent(extra))
    out = tmp_path / "out"
    assert cli.main(["run", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: " + expected), err
    assert not out.exists()


def test_gilbert_loss_needs_its_probabilities() -> None:
    exp = experiment("5s", flows=[{"cc": "reno"}])
    exp["topology"]["bottleneck"]["loss"] = {"model": "gilbert", "p_gb": 0.1}
    with pytest.raises(Exception, match=r"^topology\.bottleneck\.loss\.p_bg: required"):
        load_spec(exp)


# ---------------------------------------------------------------------------
# The sources' sending hosts


def hosted_web(host: dict[str, Any] | None) -> dict[str, Any]:
    """20 bidirectional web sessions of Pareto sizes (mean 100 packets) beside a Reno flow at 100 Mbit/s,
    their senders behind 1 Gbit/s NICs (``host``) or not; packets logged from 2 s to 10 s."""
    web: dict[str, Any] = {"sessions": 20, "think": "500ms", "bidirectional": True,
                           "sizes": {"dist": "pareto", "mean": "100pkts", "shape": 1.2}}  # fmt: skip
    if host is not None:
        web["host"] = host
    return experiment("10s", rtt="40ms", seed=1, flows=[{"cc": "reno"}], background={"web": [web]},
                      measure={"trace": False, "packets": ["2s", "10s"]})  # fmt: skip


def nic_gaps(packets: Any, link: str) -> np.ndarray:
    """For each background data packet arriving at ``link`` after the previous one of its transfer:
    the gap between their arrivals less the later one's time on a 1 Gbit/s wire, ns."""
    log = packets[(packets["event"] == "enqueue") & (packets["link"] == link) & packets["transfer"].notna()]
    log = log[log["direction"] == "data"].sort_values(["transfer", "time_ns"], kind="stable")
    t = log["time_ns"].to_numpy().astype(np.int64)
    wire_ns = log["size_bytes"].to_numpy().astype(np.int64) * 8  # at 1 Gbit/s, 1 bit per ns
    same = log["transfer"].to_numpy()[1:] == log["transfer"].to_numpy()[:-1]
    return (np.diff(t) - wire_ns[1:])[same]


def test_a_source_s_host_puts_its_transfers_behind_one_nic_per_direction(tmp_path: Path) -> None:
    """``host`` on a web source: its forward transfers share one access link (``access_web0``) and its
    reverse ones another (``access_web0_rev``), each at the NIC's rate. Every background data packet
    reaching the bottleneck crossed the forward one first, so no two of a transfer's packets arrive
    closer than one packet's time at 1 Gbit/s; without the host the initial window arrives at once.
    With TSO (the host's default) a 64 KB super-packet, 45 segments, lands in the host queue at once."""
    hosted = run(hosted_web({"nic": "1Gbps"}), out=tmp_path / "hosted", figure=False)
    smooth = run(hosted_web(None), out=tmp_path / "smooth", figure=False)
    links = {link["name"]: link for link in hosted.summary["links"]}
    assert {"access_web0", "access_web0_rev"} <= set(links)
    for name in ("access_web0", "access_web0_rev"):
        assert links[name]["rate_bps"] == 1e9 and links[name]["tx_bytes"] > 0, name
    assert hosted.packets is not None and smooth.packets is not None
    at_nic = hosted.packets[hosted.packets["link"] == "access_web0"]
    assert at_nic["flow"].isna().all() and (at_nic["direction"] == "data").all()
    gaps = nic_gaps(hosted.packets, "forward")
    assert len(gaps) > 1000 and gaps.min() >= 0
    assert nic_gaps(smooth.packets, "forward").min() < 0
    assert links["access_web0"]["max_backlog_pkts"] >= 44
    c = hosted.summary["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]


def test_a_source_s_host_resolves_and_its_mistakes_name_the_field() -> None:
    spec = load_spec(hosted_web({"nic": "1Gbps", "txqueuelen": 100}))
    src = spec.engine["tcp_sources"][0]
    assert src["access"] == {"rate_bps": 1_000_000_000, "queue_pkts": 100}
    assert src["tso"]["max_segs"] == 45
    assert spec.resolved["background"]["web"][0]["host"]["nic"] == "1Gbps"
    assert "host" not in load_spec(hosted_web(None)).resolved["background"]["web"][0]
    # A paced source sends segment by segment: an access link, no TSO.
    paced = hosted_web({"nic": "1Gbps"})
    paced["background"]["web"][0]["pacing"] = True
    assert "tso" not in load_spec(paced).engine["tcp_sources"][0]
    with pytest.raises(SpecError, match=re.escape("background.web[0].host.nic: required")):
        load_spec(hosted_web({"txqueuelen": 10}))
    with pytest.raises(SpecError, match=re.escape("background.web[0].host.colour: unknown key")):
        load_spec(hosted_web({"nic": "1Gbps", "colour": "red"}))
