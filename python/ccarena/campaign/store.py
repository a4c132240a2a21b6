"""The result store of a campaign: a folder that survives being killed.

::

    DIR/sweep.toml          the file as given, the overrides, the resolved grid, the ccarena version
    DIR/runs/<run-id>/      one ordinary result folder per finished run (written whole, then renamed)
    DIR/failed/<run-id>.json  the error of a run that failed
    DIR/runs.parquet        the catalogue: one row per run (see catalogue.py)
    DIR/run_flows.parquet   one row per run per flow: the per-flow values of summary.json

Everything a finished run leaves is on disk before it counts as finished,
and each file is replaced atomically (written beside it, then renamed), so
at any moment, even after ``kill -9``, the folder holds whole runs and the
catalogue can be rebuilt from them. Running the same campaign again skips
the runs whose folders exist and removes what an interrupted run left
(hidden ``.tmp-`` folders).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import tomli_w

from ..results.store import make_temp_dir
from ..spec import SpecError

__all__ = ["Store"]

FORMAT = 1
"""Version of the store layout."""


def write_atomic(path: Path, data: bytes) -> None:
    """Writes ``path`` whole or not at all (a temporary sibling renamed over it)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Store:
    """A campaign's folder (see the module's documentation)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs_dir = self.root / "runs"
        self.failed_dir = self.root / "failed"
        self.sweep_file = self.root / "sweep.toml"
        self.catalogue_file = self.root / "runs.parquet"
        self.run_flows_file = self.root / "run_flows.parquet"

    def is_campaign(self) -> bool:
        """Whether the folder holds a campaign."""
        return self.sweep_file.is_file()

    def header(self) -> dict[str, Any]:
        """The content of sweep.toml."""
        import tomllib

        with open(self.sweep_file, "rb") as f:
            return tomllib.load(f)

    def open_for(self, header: dict[str, Any]) -> bool:
        """Creates the store with ``header`` as sweep.toml, or checks an existing one holds the same campaign.

        Returns True when the campaign already existed (a resume). A folder
        that is not a campaign, or holds another one, is a :class:`SpecError`
        naming ``--out``: nothing a user made is touched.
        """
        if self.root.exists() or self.root.is_symlink():
            if not self.is_campaign():
                raise SpecError("--out", f"{self.root} exists and is not a campaign folder (choose another)")
            old = self.header()
            if old.get("fingerprint") != header["fingerprint"]:
                raise SpecError(
                    "--out",
                    f"{self.root} holds another campaign (its file, overrides or ccarena version differ); "
                    "choose another folder",
                )
            self._remove_leftovers()
            return True
        self.root.parent.mkdir(parents=True, exist_ok=True)
        tmp = make_temp_dir(self.root.parent, self.root.name)
        try:
            (tmp / "runs").mkdir()
            (tmp / "failed").mkdir()
            (tmp / "sweep.toml").write_text(tomli_w.dumps(header), encoding="utf-8")
            os.rename(tmp, self.root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return False

    def _remove_leftovers(self) -> None:
        """Hidden temporary folders and files of runs that were interrupted."""
        for parent in (self.runs_dir, self.root, self.failed_dir):
            if not parent.is_dir():
                continue
            for p in parent.iterdir():
                if p.name.startswith(".") and ".tmp-" in p.name:
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)

    def run_dir(self, run_id: str) -> Path:
        """Where run ``run_id``'s result folder goes."""
        return self.runs_dir / run_id

    def finished(self) -> set[str]:
        """Run ids whose result folders exist (a folder is only ever there whole)."""
        if not self.runs_dir.is_dir():
            return set()
        return {p.name for p in self.runs_dir.iterdir() if not p.name.startswith(".") and p.is_dir()}

    def failures(self) -> dict[str, dict[str, Any]]:
        """The recorded failures: run id → {"error": ..., "wall_s": ...}."""
        out: dict[str, dict[str, Any]] = {}
        if not self.failed_dir.is_dir():
            return out
        for p in sorted(self.failed_dir.glob("*.json")):
            if not p.name.startswith("."):
                out[p.stem] = json.loads(p.read_text(encoding="utf-8"))
        return out

    def record_failure(self, run_id: str, error: str, wall_s: float) -> None:
        """Writes failed/<run-id>.json."""
        doc = {"error": error, "wall_s": wall_s}
        write_atomic(self.failed_dir / f"{run_id}.json", (json.dumps(doc, indent=2) + "\n").encode())

    def clear_failure(self, run_id: str) -> None:
        """Forgets a failure (before the run is tried again)."""
        (self.failed_dir / f"{run_id}.json").unlink(missing_ok=True)

    def summary(self, run_id: str) -> dict[str, Any]:
        """A finished run's summary.json."""
        with open(self.run_dir(run_id) / "summary.json", encoding="utf-8") as f:
            doc: dict[str, Any] = json.load(f)
        return doc
