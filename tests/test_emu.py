"""The emulation backend: real Linux TCP through ccarena's link emulator.

Each test checks the emulated run against something independent of the
emulator: the link's capacity and base RTT, one-way delays measured by the
kernel's receive timestamps, the receiving application's byte count, and
what is left on the machine after runs that end well, fail or are killed.

They need root and /dev/net/tun (CI runs as root) and are skipped without
them. Timing on a shared virtual machine has outliers that are not the
emulator's doing (the kernel here is not preemptible and other work shares
the two CPUs), so the timing checks give a run up to three attempts and
report every attempt when all fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ccarena
import numpy as np
import pytest
from ccarena.backends import emu as emulate
from ccarena.spec import SpecError

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "scenarios" / "quickstart.toml"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the emu backend needs root (namespaces, TUN devices)"),
    pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="the emu backend needs /dev/net/tun"),
]

MSS_RATE = 1448 / 1500
"""Payload share of a full-size packet (52 header bytes)."""


def experiment(rate: str, rtt: str, buffer: str, duration: str, **flow: Any) -> dict[str, Any]:
    return {
        "name": "emu-test",
        "duration": duration,
        "topology": {"rtt": rtt, "bottleneck": {"rate": rate, "buffer": buffer}},
        "flows": [{"cc": "cubic", **flow}],
        "measure": {"interval": "100ms"},
    }


def host_steal_ms() -> float:
    """CPU time the hypervisor has taken from this machine since boot, ms (all CPUs; /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return int(fields[8]) * 1000.0 / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


QUIET_STEAL_MS_PER_S = 20.0
"""A second with less stolen time than this (2 % of a CPU) counts as quiet."""


def wait_for_quiet_host(timeout_s: float = 15.0) -> None:
    """Waits (at most ``timeout_s``) for a second in which the hypervisor took
    little time from this machine. On a virtual machine whose host takes
    CPU time away, the emulator's deliveries are late by however long that
    lasts (a run's lateness follows the host's stolen time), which says
    nothing about the emulator; a timing check measured then is not one of
    its behaviour. After the timeout the attempt runs anyway."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = host_steal_ms()
        time.sleep(1.0)
        if host_steal_ms() - before < QUIET_STEAL_MS_PER_S:
            return


QUIET_ATTEMPT_STEAL_MS_PER_S = 5.0
"""An attempt during which the host stole less than this per second (of all
CPUs) judges the emulator; above it, a late delivery may be the host's.
(On this project's 2-core virtual machine, the 50 Mbit/s probe check passed
with 30-100 ms stolen in 8 s and failed from 80 ms on.)"""

ATTEMPTS_BUDGET_S = 60.0
"""Longest a check keeps starting attempts while its failures are all on a noisy host: about two
attempts with their waits. A host that stole time through both rarely quietens for a third, and
each more attempt only lengthens the suite (a skipped check says it was not judged, and why)."""

RETRIES_BUDGET_S = 120.0
"""Time the whole session may spend on attempts that follow one the host spoiled, over all checks;
once it is spent, a check whose attempt the host spoiled is skipped as not judged. It bounds what a
noisy host adds to the suite, whichever checks it falls on."""

_retries_s = 0.0


def attempts(n: int, check: Callable[[], None]) -> None:
    """Runs ``check`` until it passes, each time after waiting for a quiet
    host (``wait_for_quiet_host``). It fails after ``n`` failed attempts on a
    host that stayed quiet while they ran (QUIET_ATTEMPT_STEAL_MS_PER_S);
    an attempt the host stole more from says nothing about the emulator and
    is not counted, and when only such attempts fail until ATTEMPTS_BUDGET_S
    or the session's RETRIES_BUDGET_S runs out the test is skipped as not
    judged. Every message gives the time stolen while the attempt ran."""
    global _retries_s
    failures = []
    judged = 0
    deadline = time.monotonic() + ATTEMPTS_BUDGET_S
    while judged < n and time.monotonic() < deadline:
        after_spoiled = judged < len(failures)
        if after_spoiled and _retries_s >= RETRIES_BUDGET_S:
            break
        begun = time.monotonic()
        wait_for_quiet_host()
        stolen, started = host_steal_ms(), time.monotonic()
        try:
            check()
            return
        except AssertionError as e:
            took, secs = host_steal_ms() - stolen, time.monotonic() - started
            quiet = took <= QUIET_ATTEMPT_STEAL_MS_PER_S * secs
            judged += quiet
            failures.append(f"{e} (host stole {took:.0f} ms in {secs:.0f} s{'' if quiet else ': not judged'})")
        finally:
            if after_spoiled:
                _retries_s += time.monotonic() - begun
    report = "\n".join(f"  {i + 1}: {m}" for i, m in enumerate(failures))
    if judged >= n:
        pytest.fail(f"{judged} attempts on a quiet host failed:\n{report}")
    pytest.skip(f"not judged: the host stole time during every failed attempt ({judged} on a quiet host):\n{report}")


def nothing_left() -> dict[str, list[str]]:
    return emulate.leftovers()


def assert_clean() -> None:
    left = nothing_left()
    assert left == {"namespaces": [], "devices": [], "processes": []}, left


def cli(*args: str, **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ccarena", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def write(tmp: Path, exp: dict[str, Any]) -> Path:
    import tomli_w

    path = tmp / "exp.toml"
    path.write_text(tomli_w.dumps(exp))
    return path


def toml_value(v: Any) -> str:
    """``v`` as the right-hand side of a TOML assignment (what ``--set PATH=VALUE`` takes)."""
    import tomli_w

    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    return tomli_w.dumps({"v": v}).split("=", 1)[1].strip()


def wait_until_running(proc: subprocess.Popen[str], timeout: float = 20.0) -> None:
    """Until the run's emulator is up and its namespaces exist (then a little longer: traffic flows)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        left = nothing_left()
        if emulate.STATE_FILE.exists() and len(left["namespaces"]) == 2 and left["processes"]:
            time.sleep(1.0)
            return
        time.sleep(0.05)
    raise AssertionError("the run did not start")


# ---------------------------------------------------------------------------


def test_one_cubic_flow_fills_20mbps_and_sees_the_base_rtt(tmp_path: Path) -> None:
    """20 Mbit/s, 40 ms, one BDP of buffer: the link is full and RTTs span base to base + drain."""
    exp = experiment("20Mbps", "40ms", "1bdp", "15s")

    def check() -> None:
        out = tmp_path / f"r{len(list(tmp_path.iterdir()))}"
        r = ccarena.run(exp, backend="emu", out=out)
        f = r.summary["flows"][0]
        raw = r.raw
        assert raw is not None
        buffer_pkts = r.summary["bottleneck"]["buffer_pkts"]
        drain_ms = buffer_pkts * 1500 * 8 / 20e6 * 1e3  # 67 packets: 40.2 ms
        max_rtt_ms = raw["flows"][0]["rtt_max_us"] / 1e3
        msg = (
            f"goodput {f['goodput_bps'] / 1e6:.3f} Mbit/s, rtt min {f['rtt_min_ms']} ms max {max_rtt_ms} ms, "
            f"lateness p99 {r.summary['emu']['emulator']['delivery_lateness_us']['p99_us']} us"
        )
        assert f["goodput_bps"] >= 0.95 * 20e6 * MSS_RATE, msg
        assert abs(f["rtt_min_ms"] - 40.0) <= 1.0, msg
        assert max_rtt_ms <= 1.1 * (40.0 + drain_ms), msg
        # The result folder is the simulator's, plus what the kernel ran with.
        for name in ("spec.toml", "summary.json", "flows.parquet", "queue.parquet", "figure.png"):
            assert (out / name).stat().st_size > 0, name
        s = json.loads((out / "summary.json").read_text())
        assert s["backend"] == "emu"
        assert s["emu"]["kernel"]["release"] == os.uname().release
        assert s["emu"]["sysctls"]["net.ipv4.tcp_sack"] == "1"
        assert s["flows"][0]["cc"] == "cubic"
        df = r.flows
        assert {"rate_bps", "cwnd_pkts", "ssthresh_pkts", "srtt_us", "delivery_rate_bps", "retrans_pkts_total"} <= set(df)
        assert len(df) == 150
        # Per-interval bytes at the bottleneck add up to the flow's total, as in the simulator.
        assert int(df["bottleneck_bytes"].sum()) == f["bottleneck_bytes"]
        c = s["conservation"]
        assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]
        # Stalls (deliveries > 1 ms late, once per stretch) agree with the lateness measured.
        e = s["emu"]["emulator"]
        worst_us = max(e["delivery_lateness_us"]["max_us"], e["reverse_delivery_lateness_us"]["max_us"])
        st = e["stalls"]
        assert st["count"] > 0 or worst_us <= 1000.0, (st, worst_us)
        assert st["count"] == 0 or worst_us >= 1000.0, (st, worst_us)
        assert st["longest_ms"] <= worst_us / 1000 + 1e-3 and st["longest_ms"] <= st["total_ms"], (st, worst_us)
        assert st["total_ms"] <= st["count"] * worst_us / 1000 + 1e-3, (st, worst_us)

    attempts(3, check)
    assert_clean()


def test_emulator_adds_the_set_delay_at_50mbps_and_counts_what_the_receiver_reads() -> None:
    """A cubic flow fills 50 Mbit/s (the known load) for 6 s, then stops and drains.

    Kernel-stamped UDP probes in the ACK direction measure the one-way delay
    the emulator adds (setting + serialisation); the emulator's count of new
    payload bytes must equal what the receiving application read.
    """
    exp = experiment("50Mbps", "20ms", "1bdp", "8s", stop="6s")
    spec = emulate.load_spec(exp)

    def check() -> None:
        raw = emulate.emulate(spec, probe_hz=200)
        flow = raw["flows"][0]
        probes = raw["emu"]["probes"]
        e = raw["emu"]["emulator"]
        msg = f"probes {probes}, lateness {e['delivery_lateness_us']}, reverse {e['reverse_delivery_lateness_us']}"
        # The load: the link was full while the flow ran.
        queue_tx = raw["queue"]["tx_bytes"]
        assert queue_tx * 8 / 6.0 >= 0.9 * 50e6, f"{queue_tx * 8 / 6.0 / 1e6:.2f} Mbit/s"
        # Bytes: emulator (new payload delivered) = receiving application = sending application.
        assert flow["emu_payload_total"] == flow["goodput_bytes"] == flow["written_bytes"], flow
        assert probes["received"] >= 0.95 * probes["sent"] >= 0.95 * 1400, msg
        assert probes["excess_us"]["min"] >= 0.0, msg  # never faster than the setting
        assert probes["excess_us"]["p99"] <= 200.0, msg
        assert e["delivery_lateness_us"]["p99_us"] <= 200.0, msg
        assert e["reverse_delivery_lateness_us"]["p99_us"] <= 200.0, msg

    attempts(3, check)
    assert_clean()


def test_with_pauses_a_stall_delays_what_is_in_flight_and_nothing_comes_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """CCARENA_EMU_STALLS=pause: the 50 Mbit/s experiment with kernel-stamped probes.

    A stall pauses the whole path, so a probe on its way (one every 5 ms,
    10 ms on the line) is delayed by the longest pause; no probe arrives
    sooner than the setting, and bytes are conserved as without pauses.
    """
    from ccarena.backends.emu import config as emu_config

    monkeypatch.setattr(emu_config, "STALLS", "pause")
    spec = emulate.load_spec(experiment("50Mbps", "20ms", "1bdp", "8s", stop="6s"))
    raw = emulate.emulate(spec, probe_hz=200)
    flow = raw["flows"][0]
    probes = raw["emu"]["probes"]
    stalls = raw["emu"]["emulator"]["stalls"]
    msg = f"probes {probes}, stalls {stalls}"
    assert stalls["mode"] == "pause", msg  # as the emulator reports it
    assert flow["emu_payload_total"] == flow["goodput_bytes"] == flow["written_bytes"], flow
    c = raw["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"], c
    assert probes["received"] >= 0.95 * probes["sent"] >= 0.95 * 1400, msg
    assert probes["excess_us"]["min"] >= 0.0, msg
    assert probes["excess_us"]["max"] >= 1000.0 * stalls["longest_ms"] - 50.0, msg
    assert_clean()


def test_teardown_after_success_failure_signals_and_sigkill(tmp_path: Path) -> None:
    exp = write(tmp_path, experiment("10Mbps", "20ms", "1bdp", "6s"))

    # A normal run.
    p = cli("run", str(exp), "--backend", "emu", "--set", "duration=2s", "--out", str(tmp_path / "ok"), "--no-figure")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert "emu: Linux" in out
    assert_clean()

    # A failed run: its emulator dies in the middle.
    p = cli("run", str(exp), "--backend", "emu", "--out", str(tmp_path / "fail"))
    wait_until_running(p)
    state = json.loads(emulate.STATE_FILE.read_text())
    assert Path(f"/proc/{state['pid']}/comm").read_text().strip() == "ccarena-emu"
    os.kill(state["pid"], signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    assert err.startswith("error: emulation failed: the link emulator stopped"), err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "fail").exists()
    assert_clean()

    # SIGTERM and Ctrl-C (SIGINT) stop the run and tear everything down.
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        p = cli("run", str(exp), "--backend", "emu", "--out", str(tmp_path / f"sig{sig}"))
        wait_until_running(p)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        assert p.returncode == code, err
        assert not (tmp_path / f"sig{sig}").exists()
        assert_clean()

    # SIGKILL: nothing can run; the emulator dies with its parent, and the
    # next run removes the namespaces that are left.
    p = cli("run", str(exp), "--backend", "emu", "--out", str(tmp_path / "killed"))
    wait_until_running(p)
    p.kill()
    p.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while nothing_left()["processes"] and time.monotonic() < deadline:
        time.sleep(0.05)
    left = nothing_left()
    assert left["processes"] == [] and left["devices"] == [], left
    p = cli("run", str(exp), "--backend", "emu", "--set", "duration=1s", "--out", str(tmp_path / "next"), "--no-figure")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert_clean()


def test_what_the_kernel_cannot_run_fails_before_anything_starts(tmp_path: Path) -> None:
    exp = experiment("10Mbps", "20ms", "1bdp", "2s")
    kernel = emulate.kernel_algorithms()
    missing = next(a["name"] for a in ccarena.algorithms() if a["name"] not in kernel)
    cases = [
        ({"flows[0].cc": missing}, f'flows[0].cc: "{missing}" is not in this kernel (it offers: {", ".join(kernel)})'),
        ({"flows[0].params.beta": 0.5}, "flows[0].params.beta: the kernel's cubic runs with beta = 717/1024"),
        ({"flows[0].recovery": "newreno"}, "flows[0].recovery: the kernel always recovers with SACK, RACK and PRR"),
        ({"tcp.header": 60}, "tcp.header: the kernel's TCP/IPv4 headers are 52 bytes"),
        (
            {"topology.bottleneck.loss": {"model": "periodic", "p": 0.001}},
            "topology.bottleneck.loss: the emu backend supports a Bernoulli loss probability only",
        ),
    ]
    path = write(tmp_path, exp)
    for overrides, expected in cases:
        args = [f"--set={k}={toml_value(v)}" for k, v in overrides.items()]
        p = cli("run", str(path), "--backend", "emu", "--out", str(tmp_path / "never"), *args)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 2, err
        assert err.startswith(f"error: {expected}"), err
        assert len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "never").exists()
        with pytest.raises(SpecError):
            emulate.load_spec(exp, set=overrides)
    assert_clean()


def test_without_root_one_line_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(Run as root, the test pretends not to be: the check reads the effective user id.)"""
    from ccarena import cli as ccarena_cli

    path = write(tmp_path, experiment("10Mbps", "20ms", "1bdp", "2s"))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code = ccarena_cli.main(["run", str(path), "--backend", "emu", "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err == (
        "error: the emu backend needs root (it creates network namespaces and TUN devices); "
        "run it as root or with sudo\n"
    )
    assert not (tmp_path / "x").exists()
    assert_clean()


def test_an_algorithm_only_the_kernel_has_runs_without_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the simulator had BBR, the emulator still ran the kernel's."""
    monkeypatch.setattr(emulate.checks, "_sim_algorithms", lambda: {"reno", "cubic"})
    spec = emulate.load_spec(experiment("10Mbps", "20ms", "1bdp", "2s"), set={"flows[0].cc": "bbr"})
    assert spec.resolved["flows"][0]["cc"] == "bbr"
    assert spec.engine["flows"][0]["cc"] == "bbr"
    assert "params" not in spec.resolved["flows"][0]
    with pytest.raises(SpecError, match=r"flows\[0\]\.params: the kernel's bbr takes no per-flow parameters"):
        emulate.load_spec(
            experiment("10Mbps", "20ms", "1bdp", "2s"), set={"flows[0].cc": "bbr", "flows[0].params": {"x": 1}}
        )


def test_compare_runs_the_scaled_down_quickstart_in_both_backends(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    p = cli(
        "compare",
        str(QUICKSTART),
        "--set",
        "topology.bottleneck.rate=20Mbps",
        "--set",
        "duration=30s",
        "--out",
        str(out),
    )
    stdout, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    for name in (
        "compare.png",
        "compare.json",
        "compare.txt",
        "sim/summary.json",
        "emu/summary.json",
        "emu/figure.png",
    ):
        assert (out / name).stat().st_size > 0, name
    doc = json.loads((out / "compare.json").read_text())
    rows = doc["rows"]
    assert [r["quantity"] for r in rows].count("goodput") == 3
    assert {r["quantity"] for r in rows} == {"goodput", "mean RTT", "retransmits", "utilisation"}
    util = next(r for r in rows if r["quantity"] == "utilisation")
    # Two CUBIC flows fill the link in both backends; the Reno flow joins at 20 s.
    assert util["sim"] > 0.9 and util["emu"] > 0.9, util
    assert abs(util["rel"]) < 0.05, util
    assert "goodput (Mbit/s)" in stdout and "utilisation" in stdout
    emu = json.loads((out / "emu" / "summary.json").read_text())
    assert [f["cc"] for f in emu["flows"]] == ["cubic", "cubic", "reno"]
    assert emu["flows"][2]["start_s"] == 20.0
    assert_clean()


def test_compare_over_two_seeds_keeps_each_and_gives_their_means(tmp_path: Path) -> None:
    exp = experiment("20Mbps", "20ms", "1bdp", "3s", start={"dist": "uniform", "lo": "0s", "hi": "0.5s"})
    exp["seed"] = 7
    out = tmp_path / "cmp"
    seen: list[int] = []
    cmp = ccarena.compare(exp, out=out, figure=False, repeat=2, done=lambda c: seen.append(c.sim.summary["seed"]))
    assert seen == [7, 8] and cmp.seeds is not None and len(cmp.seeds) == 2
    top = json.loads((out / "compare.json").read_text())
    assert top["seeds"] == [7, 8]
    per_seed = []
    for seed in (7, 8):
        folder = out / f"seed-{seed}"
        for backend in ("sim", "emu"):
            assert json.loads((folder / backend / "summary.json").read_text())["seed"] == seed
        per_seed.append(json.loads((folder / "compare.json").read_text())["rows"])
    assert (out / "compare.txt").read_text().startswith("quantity")
    for i, row in enumerate(top["rows"]):
        for tag in ("sim", "emu"):
            values = [rows[i][tag] for rows in per_seed]
            assert row[f"{tag}_values"] == values, row
            known = [v for v in values if v is not None]
            if known:
                assert row[tag] == pytest.approx(sum(known) / len(known)), row
                assert (row[f"{tag}_min"], row[f"{tag}_max"]) == (min(known), max(known)), row
    # The flow's start is drawn from the seed: the two seeds' simulated runs differ.
    starts = [json.loads((out / f"seed-{s}" / "sim" / "summary.json").read_text())["flows"][0]["start_s"] for s in (7, 8)]
    assert starts[0] != starts[1], starts
    assert_clean()


def test_hystart_splits_two_cubic_flows_as_the_kernel_does() -> None:
    """Two CUBIC flows started together (100 Mbit/s, 50 ms, 1 BDP, 10 s).

    HyStart ends the second flow's slow start at about a third of the
    first flow's window (the first flow's queue reads as a delay increase),
    so the flows leave slow start unequal and share the link about 72:28
    over the first 10 s. The simulator must reproduce the kernel's split:
    each flow's largest cwnd within 10 % and the smaller flow's share of
    the bottleneck within 4 points.
    """
    exp = experiment("100Mbps", "50ms", "1bdp", "10s", count=2)
    sim = ccarena.run(exp)

    def split(r: ccarena.Result) -> tuple[list[float], float]:
        f = r.flows
        peaks = sorted(f[f["t_ns"] <= 3e9].groupby("flow")["cwnd_pkts"].max().tolist())
        per_flow = f.groupby("flow")["bottleneck_bytes"].sum()
        return peaks, float(per_flow.min() / per_flow.sum())

    sim_peaks, sim_share = split(sim)
    assert sim_share < 0.35, f"the simulated flows left slow start alike: {sim_peaks}, share {sim_share:.3f}"

    def check() -> None:
        emu_peaks, emu_share = split(ccarena.run(exp, backend="emu"))
        msg = f"peak cwnd sim {sim_peaks} kernel {emu_peaks}; smaller share sim {sim_share:.3f} kernel {emu_share:.3f}"
        for s, k in zip(sim_peaks, emu_peaks):
            assert abs(s / k - 1) <= 0.10, msg
        assert abs(sim_share - emu_share) <= 0.04, msg

    attempts(3, check)
    assert_clean()


def test_bbr_leaves_startup_when_the_kernel_does() -> None:
    """One BBR v1 flow (100 Mbit/s, 40 ms, 1 BDP), cwnd and pacing every 1 ms for 1 s.

    Startup paces at 2.89 × the bandwidth estimate and Drain at 1/2.89 of
    it, so the end of Startup is the first sample whose pacing rate falls
    below half the largest so far, counted from 0.1 s (before its first RTT
    sample the simulator paces the initial window at a nominal 1 ms RTT, as
    Linux does without a handshake sample). The kernel leaves Startup about
    0.62 s in (the 11th round trip); the simulator must leave within 40 ms
    (one round trip) of the kernel.
    """
    exp = experiment("100Mbps", "40ms", "1bdp", "1s", cc="bbr")
    exp["measure"]["interval"] = "1ms"

    def startup_end(r: ccarena.Result) -> float:
        rate = r.flows["pacing_rate_bps"].to_numpy()
        t = r.flows["t_ns"].to_numpy() / 1e9
        peak = 0.0
        for ti, x in zip(t, rate):
            if ti < 0.1:
                continue
            if peak > 0 and x < 0.5 * peak:
                return float(ti)
            peak = max(peak, x)
        raise AssertionError(f"never left Startup (largest pacing rate {peak / 1e6:.1f} Mbit/s)")

    sim_end = startup_end(ccarena.run(exp))
    assert 0.3 < sim_end < 0.9, sim_end

    def check() -> None:
        emu_end = startup_end(ccarena.run(exp, backend="emu"))
        assert abs(sim_end - emu_end) <= 0.040, f"Startup ends at {sim_end:.3f} s simulated, {emu_end:.3f} s in the kernel"

    attempts(3, check)
    assert_clean()


def test_bbr_enters_probe_rtt_under_random_loss_as_the_kernel_does() -> None:
    """One BBR v1 flow (100 Mbit/s, 40 ms, 1 BDP, 1 % random loss, 12 s).

    min_rtt is renewed only by a strictly lower sample, so about 10 s after
    its last renewal the flow drops to 4 packets for ProbeRTT even though
    the queue keeps emptying (with loss, rounds keep seeing the bare path).
    The simulator's min_rtt is set in the first round trip (ProbeRTT at
    ~10.05 s); the kernel's is renewed once more ~0.6 s in, by an RTT taken
    from the 1 ms TCP timestamp of an ACK that covers only retransmitted
    data (40.000 ms, below the 40.148 ms of its first samples), so it
    enters at ~10.7 s. Both must enter between 9.9 and 11 s, and their
    goodput over 1–12 s must agree within 2 points of the link's payload
    capacity (over 30 s: kernel 96.8 %, simulator 97.1 %).
    """
    exp = experiment("100Mbps", "40ms", "1bdp", "12s", cc="bbr")
    exp["topology"]["bottleneck"]["loss"] = 0.01
    exp["measure"]["interval"] = "10ms"

    def probe_rtt_and_goodput(r: ccarena.Result) -> tuple[float, float]:
        f = r.flows
        t = f["t_ns"].to_numpy() / 1e9
        cwnd = f["cwnd_pkts"].to_numpy()
        late = (t > 1.0) & (cwnd <= 4)
        assert late.any(), f"never at 4 packets after 1 s (smallest cwnd {cwnd[t > 1.0].min()})"
        delivered = f["delivered_bytes_total"].to_numpy()
        i = int(np.searchsorted(t, 1.0))
        goodput = (delivered[-1] - delivered[i]) * 8 / (t[-1] - t[i]) / (100e6 * MSS_RATE)
        return float(t[late][0]), float(goodput)

    sim_at, sim_goodput = probe_rtt_and_goodput(ccarena.run(exp))
    assert 9.9 <= sim_at <= 11.0, f"simulated ProbeRTT at {sim_at:.2f} s"

    def check() -> None:
        emu_at, emu_goodput = probe_rtt_and_goodput(ccarena.run(exp, backend="emu"))
        msg = f"ProbeRTT at {sim_at:.2f} s simulated, {emu_at:.2f} s in the kernel; goodput {sim_goodput:.3f} vs {emu_goodput:.3f}"
        assert 9.9 <= emu_at <= 11.0, msg
        assert abs(sim_goodput - emu_goodput) <= 0.02, msg

    attempts(3, check)
    assert_clean()


def aqm_experiment(bottleneck: dict[str, Any], ecn: bool) -> dict[str, Any]:
    """Two CUBIC flows, 20 Mbit/s, 40 ms, a 4-BDP buffer under the given discipline, 30 s."""
    return {
        "name": "emu-aqm",
        "duration": "30s",
        "topology": {"rtt": "40ms", "bottleneck": {"rate": "20Mbps", "buffer": "4bdp", **bottleneck}},
        "tcp": {"ecn": ecn},
        "flows": [{"cc": "cubic", "count": 2}],
    }


@pytest.mark.parametrize(
    ("bottleneck", "ecn", "signal"),
    [
        ({"qdisc": "codel", "codel": {"ecn": True}}, True, "marks"),
        ({"qdisc": "red", "red": {"min_th": 20, "max_th": 60, "max_p": 0.1}}, False, "drops"),
        ({"qdisc": "dualpi2"}, True, "marks"),
    ],
    ids=["codel-ecn", "red", "dualpi2"],
)
def test_kernel_and_simulator_agree_under_an_aqm(bottleneck: dict[str, Any], ecn: bool, signal: str) -> None:
    """The same discipline code in both backends, the kernel's own ECN (tcp_ecn through a route feature).

    Measured when written: CoDel+ECN marks 55 (sim) / 56 (kernel), no drop, no retransmission in
    either; RED drops 82 / 83, retransmissions 82 / 83; aggregate goodput within 0.8 %, mean RTT
    within 2.4 %. DualPI2 (classic ECN flows in its classic queue, marked with p'^2): marks 45 / 43,
    goodput 19.25 / 19.22 Mbit/s, mean RTT 54.3 / 55.0 ms, queueing delay p50 14.6 / 14.0 ms
    against its 15 ms target. The split between the two CUBIC flows varies from run to run (up to
    10 % apart), so the flows are compared in aggregate.
    """

    def check() -> None:
        c = ccarena.compare(aqm_experiment(bottleneck, ecn), figure=False)
        sim, emu = c.sim.summary, c.emu.summary
        goodput = [sum(f["goodput_bps"] for f in s["flows"]) for s in (sim, emu)]
        rtt = [np.mean([f["rtt_mean_ms"] for f in s["flows"]]) for s in (sim, emu)]
        n = [s["queue"][signal] for s in (sim, emu)]
        msg = f"goodput {goodput}, mean RTT {rtt}, {signal} {n}"
        assert abs(goodput[1] / goodput[0] - 1) < 0.05, msg
        assert abs(rtt[1] / rtt[0] - 1) < 0.10, msg
        assert min(n) > 10 and abs(n[1] / n[0] - 1) < 0.3, msg
        if ecn:
            for s in (sim, emu):
                assert s["queue"]["drops"] == 0, msg
                assert sum(f["retransmits"] for f in s["flows"]) == 0, msg

    attempts(2, check)
    assert_clean()


def test_reno_at_1gbps_through_tso_agrees_with_the_simulator() -> None:
    """1 Gbit/s, 20 ms, one BDP: the kernel's TCP hands over TSO super-packets, which the
    emulator splits into wire packets before the bottleneck, and the run matches the simulator.

    Measured when written (20 s): goodput 958.6 (sim) / 953.8 Mbit/s (kernel), mean RTT 25.28 /
    24.90 ms, retransmissions 3340 / 3371 (slow start's overshoot of the 1667-packet buffer);
    about 3.6 wire packets per read. Without socket buffers sized to the path the kernel's
    4 MB send buffer capped the window and no packet was lost.
    """
    exp = experiment("1Gbps", "20ms", "1bdp", "10s", cc="reno")

    def check() -> None:
        c = ccarena.compare(exp, figure=False)
        sim, emu = c.sim.summary, c.emu.summary
        e = emu["emu"]["emulator"]
        goodput = [s["flows"][0]["goodput_bps"] for s in (sim, emu)]
        rtt = [s["flows"][0]["rtt_mean_ms"] for s in (sim, emu)]
        retrans = [s["flows"][0]["retransmits"] for s in (sim, emu)]
        msg = (
            f"goodput {goodput}, mean RTT {rtt}, retransmits {retrans}, reads {e['packets_read']}, "
            f"wire packets {e['wire_packets']}, lateness p99 {e['delivery_lateness_us']['p99_us']} us"
        )
        assert emu["emu"]["offload"]["tso"] is True and emu["emu"]["offload"]["gso_max_size"] >= 16384, msg
        assert e["super_packets"] > 0 and e["wire_packets"] > 1.5 * e["packets_read"], msg
        assert e["bad_frames"] == 0, msg
        assert abs(goodput[1] / goodput[0] - 1) < 0.05, msg
        assert abs(rtt[1] / rtt[0] - 1) < 0.10, msg
        assert min(retrans) > 1000 and abs(retrans[1] / retrans[0] - 1) < 0.3, msg
        cons = emu["conservation"]
        assert cons["created"] == cons["delivered"] + cons["dropped"] + cons["queued"] + cons["in_flight"], msg

    attempts(2, check)
    assert_clean()


def reductions(t_s: np.ndarray, cwnd: np.ndarray) -> list[float]:
    """Times a window falls below 85 % of its largest in the 30 samples before, one per second at most."""
    out: list[float] = []
    for i in range(1, len(cwnd)):
        if cwnd[i] < 0.85 * cwnd[max(0, i - 30) : i].max() and (not out or t_s[i] - out[-1] > 1.0):
            out.append(float(t_s[i]))
    return out


def test_cubic_behind_todays_host_at_250mbps_agrees_with_the_kernel() -> None:
    """One CUBIC flow at 250 Mbit/s, 40 ms, 0.2 BDP, behind a 1 Gbit/s host of today's Linux
    (TSO autosizing, TCP Small Queues, and the receivers' SACK compression, all on by that era's
    default), 20 s: the cwnd trace and the summary against the kernel's.

    Tolerances: `ccarena compare`'s as the other comparisons here (goodput 5 %, mean RTT 10 %,
    retransmissions 30 %); the mean cwnd (goodput times RTT over the run) within the RTT's 10 %; the
    two window reductions (slow start's end and CUBIC's next congestion event) at the same times
    within the goodput's 5 %. Measured when written (three seeds, `ccarena compare --repeat 3`):
    goodput 185.20 (sim) / 173.98-184.22 Mbit/s (kernel), mean RTT 40.91 / 40.89-40.93 ms,
    retransmissions 320 / 287-342, mean cwnd 664 / 621-659 packets, reductions at 0.33 and 17.06 s /
    0.33 and 17.05-17.26 s. Without SACK compression in the simulator the kernel's second drop
    episode in the first recovery was missing and the simulator gave 233.95 Mbit/s.
    """
    exp = experiment("250Mbps", "40ms", "0.2bdp", "20s") | {
        "tcp": {"host": {"nic": "1Gbps", "era": "linux-today"}},
        "measure": {"interval": "10ms"},
    }

    def check() -> None:
        c = ccarena.compare(exp, figure=False)
        sim, emu = c.sim.summary, c.emu.summary
        goodput = [s["flows"][0]["goodput_bps"] for s in (sim, emu)]
        rtt = [s["flows"][0]["rtt_mean_ms"] for s in (sim, emu)]
        retrans = [s["flows"][0]["retransmits"] for s in (sim, emu)]
        traces = [r.flows for r in (c.sim, c.emu)]
        cwnd = [float(f["cwnd_pkts"].mean()) for f in traces]
        cuts = [reductions(f["t_ns"].to_numpy() / 1e9, f["cwnd_pkts"].to_numpy()) for f in traces]
        msg = f"goodput {goodput}, mean RTT {rtt}, retransmits {retrans}, mean cwnd {cwnd}, reductions {cuts}"
        assert abs(goodput[1] / goodput[0] - 1) < 0.05, msg
        assert abs(rtt[1] / rtt[0] - 1) < 0.10, msg
        assert min(retrans) > 100 and abs(retrans[1] / retrans[0] - 1) < 0.3, msg
        assert abs(cwnd[1] / cwnd[0] - 1) < 0.10, msg
        assert len(cuts[0]) == len(cuts[1]) == 2, msg
        assert all(abs(k / s - 1) < 0.05 for s, k in zip(cuts[0], cuts[1], strict=True)), msg

    attempts(2, check)
    assert_clean()


def test_the_packet_log_records_what_the_kernel_sends_through_the_bottleneck(tmp_path: Path) -> None:
    """``[measure] packets`` with ``--backend emu``: one Reno flow at 20 Mbit/s, 30 ms, a 20-packet
    buffer (slow start ends in drops and a fast recovery, and Reno's sawtooth drops again about 1.5 s
    later), the log on from 0.1 s to 2.5 s. The rows keep to the window, add up to the run's own queue
    trace over it (drops, and enqueues = dequeues + drops + the backlog's change), new data's sequence
    numbers increase, every segment delivered was dequeued at the bottleneck before, the kernel's
    super-packets are logged as segments, and the file has the simulator's schema (the same experiment
    run in the simulator)."""
    import pyarrow.parquet as pq

    lo_ns, hi_ns = 100_000_000, 2_500_000_000
    exp = {
        "name": "emu-packets",
        "duration": "3s",
        "topology": {"rtt": "30ms", "bottleneck": {"rate": "20Mbps", "buffer": "20pkts"}},
        "flows": [{"cc": "reno"}],
        "measure": {"interval": "100ms", "packets": ["100ms", "2500ms"]},
    }
    out = tmp_path / "emu"
    r = ccarena.run(exp, backend="emu", out=out, figure=False)
    table = pq.read_table(out / "packets.parquet")
    df = r.packets
    assert df is not None and len(df) == table.num_rows > 1000
    # The simulator's schema, column for column.
    sim = ccarena.run(exp, out=tmp_path / "sim", figure=False)
    sim_table = pq.read_table(tmp_path / "sim" / "packets.parquet")
    assert [(f.name, str(f.type)) for f in table.schema] == [(f.name, str(f.type)) for f in sim_table.schema]
    assert table.schema.remove_metadata() == sim_table.schema.remove_metadata()
    assert sim.packets is not None and len(sim.packets) > 0

    t = df["time_ns"].to_numpy(dtype=np.int64)
    assert t.min() >= lo_ns and t.max() < hi_ns
    assert set(df["link"].astype(str)) == {"forward", "reverse"}
    assert set(df["event"].astype(str)) >= {"enqueue", "dequeue", "drop", "deliver"}
    assert (df["flow"] == 0).all()
    fwd = df[df["link"].astype(str) == "forward"]
    ev = fwd["event"].astype(str)
    data = fwd[fwd["direction"].astype(str) == "data"]
    acks = df[df["direction"].astype(str) == "ack"]
    assert data["seq_bytes"].notna().all() and data["ack_bytes"].isna().all()
    assert acks["ack_bytes"].notna().all() and acks["seq_bytes"].isna().all()
    assert (acks["link"].astype(str) == "reverse").all()

    # Conservation against the run's own queue trace over the window (intervals of 100 ms).
    q = r.queue
    in_window = (q["t_ns"] > lo_ns) & (q["t_ns"] <= hi_ns)
    drops = int(q.loc[in_window, "drops_pkts"].sum())
    backlog = q.set_index("t_ns")["backlog_pkts"]
    n_enq, n_deq, n_drop = int((ev == "enqueue").sum()), int((ev == "dequeue").sum()), int((ev == "drop").sum())
    assert n_drop == drops > 0, (n_drop, drops)
    assert (fwd.loc[ev == "drop", "reason"].astype(str) == "overflow").all()
    assert n_enq == n_deq + n_drop + int(backlog[hi_ns]) - int(backlog[lo_ns]), (n_enq, n_deq, n_drop)

    # The kernel's segments, not its super-packets: at most one MSS, 52 bytes of headers.
    enq = data[data["event"].astype(str) == "enqueue"]
    full = enq[enq["payload_bytes"] > 0]
    assert full["payload_bytes"].max() <= 1448
    assert ((full["size_bytes"] - full["payload_bytes"]) == 52).all()
    # New data's sequence numbers increase; a retransmission starts below the highest sent.
    seq = full["seq_bytes"].to_numpy(dtype=np.int64)
    end = seq + full["payload_bytes"].to_numpy(dtype=np.int64)
    retrans = full["retransmission"].to_numpy(dtype=bool)
    high = np.maximum.accumulate(end)
    assert np.all(seq[1:][~retrans[1:]] >= high[:-1][~retrans[1:]])
    assert np.all(seq[1:][retrans[1:]] < high[:-1][retrans[1:]])
    assert retrans.sum() > 0 and retrans.sum() >= n_drop // 2, (retrans.sum(), n_drop)
    # Every segment delivered (once its dequeue can be in the window: 15 ms one way and margin) was
    # dequeued at the bottleneck before, and every ACK delivered to the sender covers data sent.
    dequeued: dict[int, int] = {}
    deq = data[data["event"].astype(str) == "dequeue"]
    for s, tt in zip(deq["seq_bytes"], deq["time_ns"], strict=True):
        dequeued.setdefault(int(s), int(tt))
    late_enough = data["time_ns"] >= lo_ns + 50_000_000
    delivered = data[(data["event"].astype(str) == "deliver") & (data["payload_bytes"] > 0) & late_enough]
    assert len(delivered) > 1000
    for s, tt in zip(delivered["seq_bytes"], delivered["time_ns"], strict=True):
        assert int(s) in dequeued and dequeued[int(s)] + 15_000_000 <= int(tt), (s, tt)
    assert int(acks["ack_bytes"].max()) <= int(high[-1])
    # The reverse link's rows add up too (up to the few ACKs queued at the window's ends).
    rev = df[df["link"].astype(str) == "reverse"]["event"].astype(str)
    assert (rev == "enqueue").sum() > 100
    assert abs(int((rev == "enqueue").sum()) - int((rev == "dequeue").sum()) - int((rev == "drop").sum())) <= 3
    assert_clean()
