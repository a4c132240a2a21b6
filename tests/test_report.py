"""``ccarena report``: the page opens in a real headless browser without errors, every figure
renders with a non-zero size, nothing is fetched, and the tables hold the run's and the
campaign's numbers.

The browser is Debian's chromium driven through chromedriver (``make browser-deps``
installs both); the test fails, rather than skips, when they are missing.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ccarena
import pytest
from ccarena.report.html import fmt

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("the report test needs chromium and chromedriver: run `make browser-deps` (root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1300,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, page: Path) -> dict[str, Any]:
    """Loads the page and returns what the checks need: console errors, figure sizes, fetches, table text."""
    browser.get(page.as_uri())
    facts = browser.execute_script(
        """
        const svgs = [...document.querySelectorAll('svg')].map(s => {
            const r = s.getBoundingClientRect(); return [r.width, r.height];
        });
        const tables = [...document.querySelectorAll('table')].map(t =>
            [...t.querySelectorAll('tr')].map(tr => [...tr.children].map(c => c.textContent)));
        return {svgs: svgs, tables: tables, fetched: performance.getEntriesByType('resource').length};
        """
    )
    facts["console"] = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    return dict(facts)


def _rows(facts: dict[str, Any]) -> dict[str, str]:
    """First column → second column over every two-column table."""
    return {r[0]: r[1] for t in facts["tables"] for r in t if len(r) == 2}


def test_a_run_report_renders_and_holds_summary_json(tmp_path: Path, browser: Any) -> None:
    run = ccarena.run(ROOT / "scenarios" / "quickstart.toml", duration="30s", out=tmp_path / "run", figure=False)
    out = subprocess.run([sys.executable, "-m", "ccarena", "report", str(run.path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    page = run.path / "report.html"
    text = page.read_text()
    assert "<script" not in text and 'src="http' not in text and "href=\"http" not in text
    facts = _open(browser, page)
    assert facts["console"] == []
    assert facts["fetched"] == 0
    assert len(facts["svgs"]) == 1 and all(w > 100 and h > 100 for w, h in facts["svgs"])
    rows = _rows(facts)
    summary = json.loads((run.path / "summary.json").read_text())
    for key in ("utilization", "jain_index", "queue.drops", "conservation.created"):
        value: Any = summary
        for part in key.split("."):
            value = value[part]
        assert rows[key] == fmt(value), key
    flows = next(t for t in facts["tables"] if t[0][:2] == ["flow", "group"])
    assert [r[0] for r in flows[1:]] == [str(f["flow"]) for f in summary["flows"]]


def test_a_campaign_report_renders_with_confidence_intervals(tmp_path: Path, browser: Any) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        (ROOT / "scenarios" / "quickstart.toml").read_text().replace('duration = "60s"', 'duration = "8s"')
        .replace('start = "20s"', 'start = "2s"').replace('qdisc = "droptail" }', 'qdisc = "droptail", loss = 0.001 }')
        + '\n[sweep]\n"topology.bottleneck.buffer" = ["0.5bdp", "1bdp"]\n"flows[1].cc" = ["reno", "cubic"]\nrepeat = 3\n'
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "ccarena", "sweep", str(path), "--out", str(tmp_path / "c"), "--quiet"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    page = tmp_path / "c" / "report.html"
    assert page.is_file(), "ccarena sweep writes the report at the end"
    facts = _open(browser, page)
    assert facts["console"] == []
    assert facts["fetched"] == 0
    # Against the buffer, the swept algorithm as lines: utilisation, Jain's index and the groups' shares;
    # and the ensemble time series.
    assert len(facts["svgs"]) == 4 and all(w > 100 and h > 100 for w, h in facts["svgs"])
    agg = ccarena.open(tmp_path / "c").aggregate()
    table = next(t for t in facts["tables"] if t[0][0] == "topology.bottleneck.buffer_bdp")
    assert len(table) == 1 + 4
    for (_, r), row in zip(agg.iterrows(), table[1:], strict=True):
        assert row[:2] == [fmt(r["topology.bottleneck.buffer_bdp"]), r["flows[1].cc"]]
        mean, ci = float(r["utilization_window_mean"]), float(r["utilization_window_ci"])
        assert not math.isnan(ci)
        assert row[4] == f"{mean:.6g} ± {ci:.3g}"
