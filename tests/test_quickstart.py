"""The README's quick start: scenarios/quickstart.toml runs end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quickstart_scenario_runs_and_writes_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "q"
    proc = subprocess.run(
        [sys.executable, "-m", "ccarena", "run", str(ROOT / "scenarios" / "quickstart.toml"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("spec.toml", "summary.json", "flows.parquet", "queue.parquet", "figure.png"):
        assert (out / name).stat().st_size > 0, name
    s = json.loads((out / "summary.json").read_text())
    assert [f["cc"] for f in s["flows"]] == ["cubic", "cubic", "reno"]
    # Two CUBIC flows saturate 100 Mbit/s with a BDP of buffer; Reno joins at 20 s.
    assert s["utilization"] > 0.95
    c = s["conservation"]
    assert c["created"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"]
    assert s["flows"][2]["start_s"] == 20.0
    assert "utilisation" in proc.stdout
