"""The result store of a campaign: a folder that survives being killed.

::

    DIR/sweep.toml          the campaign as run (its file with the overrides and seed applied): runnable
    DIR/campaign.json       the file as given, the overrides, the resolved grid, the ccarena version, fingerprints
    DIR/provenance.json     where, when and with what each call of ``sweep`` made its runs
    DIR/runs/<run-id>/      one ordinary result folder per finished run (written whole, then renamed)
    DIR/failed/<run-id>.json  the error of a run that failed
    DIR/runs.parquet        the catalogue: one row per run (see catalogue.py)
    DIR/run_flows.parquet   one row per run per flow: the per-flow values of summary.json
    DIR/run_groups.parquet  one row per run per flow group: its rate, shares and ratio to the other groups
    DIR/run_links.parquet   one row per run per link (networks only): utilisation, drops, marks, delay

Everything a finished run leaves is on disk before it counts as finished,
and each file is replaced atomically (written beside it, then renamed), so
at any moment, even after ``kill -9``, the folder holds whole runs and the
catalogue can be rebuilt from them. Running the same campaign again skips
the runs whose folders exist and removes what an interrupted run left
(hidden ``.tmp-`` folders); a campaign that finishes removes what its
killed workers left. Readers look only at finished runs' folders.
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

FORMAT = 2
"""Version of the store layout (1: sweep.toml held what campaign.json holds, and was not runnable)."""


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
        self.header_file = self.root / "campaign.json"
        self.catalogue_file = self.root / "runs.parquet"
        self.run_flows_file = self.root / "run_flows.parquet"
        self.run_groups_file = self.root / "run_groups.parquet"
        self.run_links_file = self.root / "run_links.parquet"

    def is_campaign(self) -> bool:
        """Whether the folder holds a campaign."""
        return self.sweep_file.is_file()

    def header(self) -> dict[str, Any]:
        """The campaign's description (campaign.json; sweep.toml in folders of format 1)."""
        if self.header_file.is_file():
            doc: dict[str, Any] = json.loads(self.header_file.read_text(encoding="utf-8"))
            return doc
        import tomllib

        with open(self.sweep_file, "rb") as f:
            return tomllib.load(f)

    def open_for(self, header: dict[str, Any]) -> str:
        """Creates the store for ``header``, or checks that an existing one holds this campaign or a part of it.

        Returns ``"new"``, ``"resumed"`` (the same grid) or ``"grown"`` (the
        same base experiment, another grid: the description is rewritten and
        every finished run kept). A folder that is not a campaign, or holds
        another one, is a :class:`SpecError` naming ``--out``: nothing a user
        made is touched.
        """
        if self.root.exists() or self.root.is_symlink():
            if not self.is_campaign():
                raise SpecError("--out", f"{self.root} exists and is not a campaign folder (choose another)")
            old = self.header()
            if old.get("fingerprint") == header["fingerprint"]:
                self.remove_leftovers()
                return "resumed"
            if old.get("base_fingerprint") != header["base_fingerprint"]:
                raise SpecError(
                    "--out",
                    f"{self.root} holds another campaign (its experiment outside [sweep], overrides, seed or ccarena "
                    "version differ; a campaign grows only by [sweep]); choose another folder",
                )
            self.remove_leftovers()
            self._describe(self.root, header)
            return "grown"
        self.root.parent.mkdir(parents=True, exist_ok=True)
        tmp = make_temp_dir(self.root.parent, self.root.name)
        try:
            (tmp / "runs").mkdir()
            (tmp / "failed").mkdir()
            self._describe(tmp, header)
            os.rename(tmp, self.root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return "new"

    @staticmethod
    def _describe(folder: Path, header: dict[str, Any]) -> None:
        """Writes campaign.json and the runnable sweep.toml into ``folder``."""
        meta = {k: v for k, v in header.items() if k != "document"}
        write_atomic(folder / "campaign.json", (json.dumps(meta, indent=2, default=str) + "\n").encode())
        text = (
            "# The campaign of this folder as it was run (its file with the overrides and seed applied).\n"
            "# Run it again, or grow it by editing [sweep]: ccarena sweep THIS_FILE --out THIS_FOLDER\n"
            + tomli_w.dumps(header["document"])
        )
        write_atomic(folder / "sweep.toml", text.encode("utf-8"))

    def adopt(self, ids: set[str]) -> int:
        """Renames finished runs whose ids differ from ``ids`` only in the repeat's digits; returns how many
        finished runs are left outside ``ids``.

        Run ids end in ``-r<repeat>`` padded to the width of the largest
        repeat, so going from 10 to 100 repeats turns ``-r3`` into ``-r03``.
        """
        def key(run_id: str) -> tuple[str, int] | None:
            head, sep, rep = run_id.rpartition("-r")
            return (head, int(rep)) if sep and rep.isdigit() else None

        wanted = {k: i for i in ids if (k := key(i)) is not None}
        outside = 0
        for old in sorted(self.finished() - ids):
            k = key(old)
            new = wanted.get(k) if k is not None else None
            if new is None or self.run_dir(new).exists():
                outside += 1
                continue
            os.rename(self.run_dir(old), self.run_dir(new))
        for old, doc in self.failures().items():
            k = key(old)
            new = wanted.get(k) if k is not None else None
            if old not in ids and new is not None:
                self.record_failure(new, doc.get("error", "failed"), doc.get("wall_s", 0.0))
                self.clear_failure(old)
        return outside

    def remove_leftovers(self) -> None:
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
