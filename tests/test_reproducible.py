"""Same file + same seed = the same result files, across changes that must not move a number.

The digests in tests/data/result_digests.json were first taken before the
Python package was reorganised (commit d080fa9), which left them unchanged;
they were retaken for result format 2, which added metrics to summary.json
and spec.toml, renamed three columns and removed rows of flows before they
start, with every earlier number unchanged; and rhee2007_surge's for the
simulator no longer reducing ssthresh on a timeout inside the window of a
recovery it already reduced for (Linux tcp_enter_loss; crates/sim/src/tcp/
sender.rs, on_rto), which moved that run's second flow from 30 to 13
retransmissions; and spec.toml's for CUBIC's resolved parameters gaining
max_increment = 0 (CUBIC v2.0's growth cap, off), every result file
unchanged; and for the receivers' SACK compression becoming the default (as
today's Linux receivers do): quickstart's results moved, while the two 2007
files turn it off as their testbeds' receivers had it, so only their spec.toml
changed; and spec.toml's for CUBIC's resolved parameters gaining
cnt_before_loss = 0 and reno_estimate_per_ack = false (CUBIC v2.0's growth
before the first loss and its Reno estimate counting ACKs, both off), every
result file unchanged. A change that alters any number
in summary.json or any value, name or type of a Parquet column fails here;
a change meant to alter results must update the digests and say why.

Parquet files are compared by content (column names, types and values), not
by bytes, so that a newer pyarrow writing different file metadata does not
count as a change of results.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import ccarena
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
DIGESTS = json.loads((Path(__file__).parent / "data" / "result_digests.json").read_text())

CASES: dict[str, tuple[str, dict[str, Any], int | None]] = {
    "quickstart": ("quickstart.toml", {}, None),
    "rhee2007_surge_20s": ("rhee2007_surge.toml", {"duration": "20s", "flows[1].start": "5s"}, None),
    "leith2007_convergence_20s_seed3": ("leith2007_convergence.toml", {"duration": "20s", "flows[1].start": "5s"}, 3),
}


def _table_digest(path: Path) -> str:
    t = pq.read_table(path)
    h = hashlib.sha256()
    for name in t.column_names:
        col = t.column(name).combine_chunks()
        h.update(name.encode())
        h.update(str(col.type).encode())
        h.update(json.dumps(col.to_pylist(), default=str).encode())
    return h.hexdigest()


def folder_digests(folder: Path) -> dict[str, str]:
    """sha256 of spec.toml and summary.json bytes, and of each Parquet table's content.

    provenance.json (host, wall time) is left out: it is the one file that differs.
    """
    out = {}
    for f in sorted(folder.iterdir()):
        if f.name == "provenance.json":
            continue
        if f.suffix == ".parquet":
            out[f.name] = _table_digest(f)
        elif f.suffix in (".json", ".toml"):
            out[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_results_match_the_stored_digests(case: str, tmp_path: Path) -> None:
    file, overrides, seed = CASES[case]
    ccarena.run(ROOT / "scenarios" / file, set=overrides, seed=seed, out=tmp_path / "r", figure=False)
    assert folder_digests(tmp_path / "r") == DIGESTS[case]
