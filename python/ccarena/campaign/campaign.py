"""A campaign: run a grid, keep its results, and ask them questions.

:func:`sweep` validates every run of a campaign file, then runs what the
store does not hold yet, on every core or on Dask, and returns a
:class:`Campaign`; :func:`open` reopens a campaign folder (or a single run's
folder) later.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..spec.document import load_document
from .catalogue import swept_columns, tables
from .execute import Outcome, Task, run_dask, run_local
from .grid import Grid, grid
from .store import Store, write_atomic

if TYPE_CHECKING:
    import pandas as pd

    from ..results import Result

__all__ = [
    "EXECUTORS",
    "HEADLINE",
    "Campaign",
    "CampaignInterrupted",
    "default_out",
    "estimate_packets",
    "open",
    "plan",
    "sweep",
]

HEADLINE = ("utilization_window", "jain_index")
"""The metrics ``ccarena results`` shows unless told otherwise: both over the measurement window."""
GROUP_HEADLINE = ("share_of_flows", "rate_ratio_vs_others")
"""The metrics of flow groups (and flows) shown unless told otherwise."""
LINK_HEADLINE = ("utilization_window", "drop_rate", "delay_p99_ms")
"""The metrics of links (networks: a parking lot, ``kind = "links"``) shown unless told otherwise."""
PER = ("run", "group", "flow", "link")
"""The levels of the catalogue: runs.parquet, run_groups.parquet, run_flows.parquet and, for
networks, run_links.parquet."""
TABLE_OF = {"run": "runs", "group": "run_groups", "flow": "run_flows", "link": "run_links"}
EXECUTORS = ("local", "dask")
CATALOGUE_EVERY_S = 2.0
"""The catalogue is rewritten at most this often while runs finish, and at the end."""


class CampaignInterrupted(Exception):
    """The campaign was stopped by Ctrl-C; the store holds every run that finished."""

    def __init__(self, path: Path, done: int, total: int) -> None:
        super().__init__(f"interrupted: {done} of {total} runs are in {path}")
        self.path, self.done, self.total = path, done, total


def plan(
    source: str | Path | Mapping[str, Any],
    *,
    set: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> tuple[Grid, dict[str, Any]]:
    """Resolves a campaign file: its grid (every run validated) and the header of its store."""
    raw, default_name = load_document(source, seed=seed, set=set)
    if isinstance(source, Mapping):
        path, text = None, json.dumps(dict(source), sort_keys=True, default=str)
    else:
        path, text = str(source), Path(source).read_text(encoding="utf-8")
    g = grid(raw, default_name=default_name)
    name = g.runs[0].spec.name
    fingerprint = hashlib.sha256(
        json.dumps([[r.run_id, r.spec.resolved] for r in g.runs], sort_keys=True, default=str).encode()
    ).hexdigest()
    document = {"name": name, **raw}
    base = {k: v for k, v in document.items() if k != "sweep"}
    header: dict[str, Any] = {
        "format": 2,
        "ccarena_version": __version__,
        "name": name,
        "fingerprint": fingerprint,
        "base_fingerprint": hashlib.sha256(
            json.dumps([base, __version__], sort_keys=True, default=str).encode()
        ).hexdigest(),
        "document": document,
        "source": text,
        "grid": g.describe(),
        "columns": {p: c for p, c in zip(g.paths, swept_columns(g), strict=True)},
    }
    if path is not None:
        header["file"] = path
    if set:
        header["overrides"] = dict(set)
    if seed is not None:
        header["seed"] = seed
    return g, header


def estimate_packets(g: Grid) -> int:
    """Data packets the runs would send at most: each run's bottleneck rate × duration / packet size."""
    total = 0
    for run in g.runs:
        eng = run.spec.engine
        packet_bits = 8 * (int(eng.flows[0].mss) + int(eng.flows[0].header_bytes)) if eng.flows else 12000
        total += int(eng.bottleneck.rate_bps) * int(eng.duration_ns) // (10**9 * packet_bits)
    return total


def default_out(name: str, base: Path = Path("results")) -> Path:
    """``results/NAME-campaign``: the same for the same file, so running it again resumes."""
    return base / f"{name}-campaign"


class _Progress:
    """One progress bar on a terminal (tqdm), one line per run otherwise, nothing when quiet."""

    def __init__(self, total: int, done: int, quiet: bool, stream: Any) -> None:
        self.total, self.done, self.failed = total, done, 0
        self.quiet, self.stream = quiet, stream
        self.bar: Any = None
        if not quiet and stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="run", file=stream, dynamic_ncols=True, smoothing=0.1)

    def update(self, o: Outcome) -> None:
        self.done += 1
        self.failed += 0 if o.ok else 1
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, refresh=False)
            self.bar.update(1)
        elif not self.quiet:
            status = "ok" if o.ok else f"FAILED: {o.error}"
            print(f"[{self.done}/{self.total}] {o.run_id} {status} ({o.wall_s:.2f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def sweep(
    source: str | Path | Mapping[str, Any],
    *,
    out: str | Path | None = None,
    jobs: int | None = None,
    set: Mapping[str, Any] | None = None,
    seed: int | None = None,
    backend: str = "sim",
    executor: str = "local",
    scheduler: str | None = None,
    figures: bool = False,
    retry_failed: bool = False,
    quiet: bool = True,
    log: Callable[[str], None] | None = None,
) -> Campaign:
    """Runs a campaign (an experiment file with an optional ``[sweep]``) and returns it.

    Every run is validated first (:class:`~ccarena.spec.SpecError` names the
    point and the field; nothing is written). Runs already in ``out`` are
    kept: the same call again finishes only the missing ones, and
    ``retry_failed`` reruns those that failed. A campaign grows in place:
    with the same base experiment (everything outside ``[sweep]``, the
    overrides, the seed and the ccarena version), more repeats, new values
    on an axis, another axis or a baseline keep every finished run and run
    only the new ones (run ids depend on a run's values, baseline and
    repeat alone). The folder's ``sweep.toml`` is the campaign as run, a
    file ``sweep`` takes again. ``jobs`` worker processes
    (default: one per core) run the rest, or a Dask cluster with
    ``executor="dask"`` (a LocalCluster, or ``scheduler``'s). The emulator
    (``backend="emu"``) runs one run at a time. Per-run figures only with
    ``figures``. ``quiet=False`` shows progress on standard error; ``log``
    receives warnings (default: standard error).

    Raises :class:`CampaignInterrupted` on Ctrl-C, after writing the catalogue.
    """
    say = log or (lambda line: print(line, file=sys.stderr))
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r} (known: {', '.join(EXECUTORS)})")
    started = time.time()
    g, header = plan(source, set=set, seed=seed)
    header["backend"] = backend
    for key in ("fingerprint", "base_fingerprint"):
        header[key] = hashlib.sha256((header[key] + backend).encode()).hexdigest()
    if g.repeat > 1 and g.fixed:
        say(_identical_repeats_warning(g))
    store = Store(out if out is not None else default_out(header["name"]))
    state = store.open_for(header)
    if state == "grown":
        kept = store.adopt({r.run_id for r in g.runs})
        if kept:
            say(f"note: {kept} finished runs in {store.root} are not in this grid: kept on disk, left out of the catalogue")
    jobs = max(1, jobs or os.cpu_count() or 1)
    if backend == "emu" and jobs > 1:
        say("note: the emu backend runs one run at a time (the emulator needs the machine to itself)")
        jobs = 1

    outcomes = _known_outcomes(store, g, retry_failed)
    todo = [r for r in g.runs if r.run_id not in outcomes]
    for r in todo:
        store.clear_failure(r.run_id)
    tasks = [Task(r.run_id, r.spec, str(store.run_dir(r.run_id)), figures, backend) for r in todo]
    progress = _Progress(len(g.runs), len(g.runs) - len(todo), quiet, sys.stderr)
    last_write = [time.monotonic()]

    def on_outcome(o: Outcome) -> None:
        if o.ok:
            outcomes[o.run_id] = ("ok", o.summary, o.wall_s)
        else:
            store.record_failure(o.run_id, o.error or "failed", o.wall_s)
            outcomes[o.run_id] = ("failed", o.error, o.wall_s)
        progress.update(o)
        if time.monotonic() - last_write[0] > CATALOGUE_EVERY_S:
            _write_catalogue(store, g, outcomes)
            last_write[0] = time.monotonic()

    try:
        if executor == "dask":
            run_dask(tasks, jobs, scheduler, on_outcome)
        else:
            run_local(tasks, jobs, on_outcome, in_process=backend == "emu", say=say)
    except KeyboardInterrupt:
        progress.close()
        _write_catalogue(store, g, outcomes)
        _record_session(store, backend, executor, jobs, started, sum(r.run_id in outcomes for r in todo))
        raise CampaignInterrupted(store.root, len(outcomes), len(g.runs)) from None
    progress.close()
    store.remove_leftovers()  # every worker is gone: what a killed one left half-written goes too
    _write_catalogue(store, g, outcomes)
    _record_session(store, backend, executor, jobs, started, len(todo))
    return Campaign(store.root)


SHOWN_FIXED = 3
"""Points named in the warning about identical repeats; the rest are counted."""


def _identical_repeats_warning(g: Grid) -> str:
    """One line for the points whose repeats give identical results (they draw no random numbers):
    the whole scenario, or which of its points."""
    from ..spec.fields import algorithms

    randomized = "/".join(name for name, a in algorithms().items() if a.get("randomized"))
    why = f"(no random loss, background traffic, start distribution, red/pie queue or {randomized} flow)"
    if not g.randomness:
        scenario = "a scenario that draws no random numbers"
        return f"warning: sweep.repeat: {g.repeat} repeats of {scenario} {why} give identical results"
    more = len(g.fixed) - SHOWN_FIXED
    named = "; ".join(g.fixed[:SHOWN_FIXED]) + (f"; and {more} more" if more > 0 else "")
    counted = " (each baseline counted as a point)" if g.baselines else ""
    return (
        f"warning: sweep.repeat: {len(g.fixed)} of {g.variants} points{counted} draw no random numbers {why}, so their "
        f"{g.repeat} repeats give identical results and an interval of zero width: {named}"
    )


def _record_session(store: Store, backend: str, executor: str, jobs: int, started: float, made: int) -> None:
    """Adds this call to the campaign's provenance.json: where, when, with what and how many runs it made.

    Kept apart from sweep.toml and the catalogue (which depend only on the
    file and its seed); one entry per call, so a campaign that was resumed
    or grown says where each part was made.
    """
    from ..results.provenance import provenance

    path = store.root / "provenance.json"
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = provenance(backend, started, time.time() - started, None)
    session = {k: now[k] for k in ("ccarena_version", "git_commit", "host", "cpu_model", "cpus", "platform",
                                   "python", "rustc", "command_line", "backend", "started_utc", "wall_s")}
    session.update({"executor": executor, "jobs": jobs, "runs_made": made})
    doc = {"sessions": [*doc.get("sessions", []), session]}
    write_atomic(path, (json.dumps(doc, indent=2) + "\n").encode())


def _known_outcomes(store: Store, g: Grid, retry_failed: bool) -> dict[str, tuple[str, Any, float | None]]:
    """Outcomes already in the store: finished runs, and failures unless they are to be retried."""
    ids = {r.run_id for r in g.runs}
    walls: dict[str, float | None] = {}
    if store.catalogue_file.is_file():
        import pyarrow.parquet as pq

        old = pq.read_table(store.catalogue_file, columns=["run_id", "wall_s"]).to_pydict()
        walls = dict(zip(old["run_id"], old["wall_s"], strict=True))
    out: dict[str, tuple[str, Any, float | None]] = {}
    for run_id in store.finished() & ids:
        wall = walls.get(run_id)
        if wall is None:
            prov = store.run_dir(run_id) / "provenance.json"
            wall = json.loads(prov.read_text(encoding="utf-8")).get("wall_s") if prov.is_file() else None
        out[run_id] = ("ok", store.summary(run_id), wall)
    if not retry_failed:
        for run_id, doc in store.failures().items():
            if run_id in ids and run_id not in out:
                out[run_id] = ("failed", doc.get("error"), doc.get("wall_s"))
    return out


def _write_catalogue(store: Store, g: Grid, outcomes: Mapping[str, tuple[str, Any, float | None]]) -> None:
    import io

    import pyarrow.parquet as pq

    runs, run_flows, run_groups, run_links = tables(g, outcomes)
    files = [(runs, store.catalogue_file), (run_flows, store.run_flows_file), (run_groups, store.run_groups_file)]
    if run_links.num_rows:
        files.append((run_links, store.run_links_file))
    for table, path in files:
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        write_atomic(path, buf.getvalue())


class Campaign:
    """A campaign's folder: its catalogue, aggregates, time series and SQL.

    * :attr:`runs` — the catalogue, one row per run (a pandas DataFrame);
    * :attr:`run_flows`, :attr:`run_groups` — per-flow and per-flow-group values of every run;
    * :meth:`aggregate` — per point (and group or flow): mean, 95 % confidence half width over repeats, n;
    * :meth:`plot` — a metric against a swept column, a line per algorithm or group, intervals over repeats;
    * :meth:`timeseries` — a per-interval column's mean and confidence band across repeats;
    * :meth:`query` — DuckDB SQL over the views ``runs``, ``run_flows``, ``run_groups``, ``flows``,
      ``queue`` and ``transfers`` (the last three span every run, keyed by ``run_id``);
    * :meth:`result` — one run as a :class:`ccarena.Result`.
    """

    def __init__(self, path: str | Path) -> None:
        self.store = Store(path)
        if not self.store.is_campaign():
            raise FileNotFoundError(f"{path}: not a campaign folder (no sweep.toml)")
        self.path = self.store.root
        self.header = self.store.header()

    def __repr__(self) -> str:
        return f"<Campaign {self.header.get('name')!r} at {self.path}: {self.header['grid']['runs']} runs>"

    @property
    def swept(self) -> list[str]:
        """The catalogue columns of the swept paths, in axis order."""
        return list(self.header.get("columns", {}).values())

    @property
    def runs(self) -> pd.DataFrame:
        """The catalogue (runs.parquet)."""
        import pyarrow.parquet as pq

        return pq.read_table(self.store.catalogue_file).to_pandas()

    @property
    def run_flows(self) -> pd.DataFrame:
        """Per-flow values of every run (run_flows.parquet): swept columns, group, cc, RTT and shares."""
        import pyarrow.parquet as pq

        return pq.read_table(self.store.run_flows_file).to_pandas()

    @property
    def run_groups(self) -> pd.DataFrame:
        """Per-flow-group values of every run (run_groups.parquet): rates, shares, ratio to the other groups."""
        import pyarrow.parquet as pq

        return pq.read_table(self.store.run_groups_file).to_pandas()

    @property
    def run_links(self) -> pd.DataFrame:
        """Per-link values of every run (run_links.parquet): one row per run per link, named by
        ``name``, with its utilisation, drops, marks and queueing delay; empty for the dumbbell."""
        import pandas as pd
        import pyarrow.parquet as pq

        if not self.store.run_links_file.is_file():
            return pd.DataFrame(columns=["run_id", "point", "repeat", "baseline", "name"])
        return pq.read_table(self.store.run_links_file).to_pandas()

    def result(self, run_id: str) -> Result:
        """One run's result folder."""
        from ..results import Result

        return Result.load(self.store.run_dir(run_id))

    def table(self, per: str = "run") -> pd.DataFrame:
        """The catalogue at one level: ``per="run"`` (runs.parquet), ``"group"``, ``"flow"`` or ``"link"``.

        Rows of failed runs are left out; every level carries ``run_id``,
        ``point``, ``repeat``, ``baseline`` and the swept columns.
        """
        if per not in PER:
            raise KeyError(f"per: expected one of {', '.join(PER)}, got {per!r}")
        runs = self.runs
        ok = runs[runs["status"] == "ok"]
        if per == "run":
            return ok.reset_index(drop=True)
        df = {"group": self.run_groups, "flow": self.run_flows, "link": self.run_links}[per]
        return df[df["run_id"].isin(set(ok["run_id"]))].reset_index(drop=True)

    def level_of(self, columns: Sequence[str]) -> str:
        """The coarsest level (run, group, flow, link) whose table has every one of ``columns``."""
        from ..spec.errors import did_you_mean

        known: dict[str, set[str]] = {}
        for per in PER:
            known[per] = set(self.table(per).columns)
            if all(c in known[per] for c in columns):
                return per
        every = set().union(*known.values())
        missing = next(c for c in columns if c not in every)
        raise KeyError(f"no column {missing!r} in runs, run_groups, run_flows or run_links{did_you_mean(missing, every)}")

    def aggregate(
        self,
        by: Sequence[str] | None = None,
        metrics: Sequence[str] | None = None,
        level: float = 0.95,
        per: str | None = None,
    ) -> pd.DataFrame:
        """Per group of rows: mean, confidence-interval half width and n of each metric, over repeats.

        ``per`` is the table: ``"run"`` (runs.parquet), ``"group"``
        (run_groups: one row per flow group of a run), ``"flow"``
        (run_flows) or ``"link"`` (run_links: one row per link of a
        network); by default the coarsest that has every column of ``by``
        and ``metrics``. ``by`` defaults to the swept columns and
        ``baseline`` (and ``group``, ``cc`` for groups; ``flow``, ``group``,
        ``cc`` for flows; ``name`` for links). Failed runs are left out.

        Each run counts once: rows of one run in one group of ``by`` (two
        CUBIC flows of a run, grouped by ``cc``) are first averaged, so
        ``<metric>_n`` is the number of runs. ``<metric>_mean`` is the mean
        over those runs, and ``<metric>_ci`` the half width of the
        ``level`` interval (Student t, n − 1 degrees of freedom) only when
        every run is a repeat of one point (same point and baseline) and
        n >= 2; otherwise NaN. ``points`` says how many points a row
        pools: when ``by`` leaves out a swept column the runs of its
        different values are not repeats, and no interval is given.
        """
        from ..analysis.stats import mean_ci
        from .figures import point_keys

        if metrics is None:
            names = list({"run": HEADLINE, "link": LINK_HEADLINE}.get(per or "run", GROUP_HEADLINE))
        else:
            names = list(metrics)
        chosen = per or self.level_of([*(by or []), *names])
        df = self.table(chosen)
        default_keys = {"run": [], "group": ["group", "cc"], "flow": ["flow", "group", "cc"], "link": ["name"]}[chosen]
        keys = list(by) if by is not None else [*self.swept, "baseline", *default_keys]
        from ..spec.errors import did_you_mean

        for m in [*keys, *names]:
            if m not in df.columns:
                raise KeyError(f"no column {m!r} in {TABLE_OF[chosen]}{did_you_mean(m, df.columns)}")
        import pandas as pd

        # One value per run and group of ``by``: the runs are the repeats, not the flows in them.
        per_run = df.groupby(list(dict.fromkeys([*keys, "run_id", "point", "baseline"])), dropna=False, sort=False)[names]
        per_run = per_run.mean().reset_index()
        rows = []
        groups = per_run.groupby(keys, dropna=False, sort=True) if keys else [((), per_run)]
        for key, sub in groups:
            key_t = key if isinstance(key, tuple) else (key,)
            row = dict(zip(keys, key_t, strict=True))
            points = len(point_keys(sub))
            row["points"] = points
            for m in names:
                mean, ci, n = mean_ci(sub[m].tolist(), level)
                row.update({f"{m}_mean": mean, f"{m}_ci": ci if points == 1 else float("nan"), f"{m}_n": n})
            rows.append(row)
        return pd.DataFrame(rows)

    def _connect(self) -> Any:
        import duckdb

        con = duckdb.connect()
        con.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet('{_sql_path(self.store.catalogue_file)}')")
        con.execute(f"CREATE VIEW run_flows AS SELECT * FROM read_parquet('{_sql_path(self.store.run_flows_file)}')")
        if self.store.run_groups_file.is_file():
            con.execute(f"CREATE VIEW run_groups AS SELECT * FROM read_parquet('{_sql_path(self.store.run_groups_file)}')")
        if self.store.run_links_file.is_file():
            con.execute(f"CREATE VIEW run_links AS SELECT * FROM read_parquet('{_sql_path(self.store.run_links_file)}')")
        # Only finished runs' folders: a run interrupted mid-write (its worker killed) leaves a hidden
        # temporary folder beside them, with files that may be cut short.
        finished = sorted(self.store.finished())
        for table in ("flows", "queue", "transfers"):
            files = [f for r in finished if (f := self.store.run_dir(r) / f"{table}.parquet").is_file()]
            if files:
                listed = ", ".join(f"'{_sql_path(f)}'" for f in files)
                con.execute(
                    f"CREATE VIEW {table} AS SELECT regexp_extract(filename, '([^/]+)/{table}[.]parquet$', 1) AS run_id, "
                    f"* EXCLUDE (filename) FROM read_parquet([{listed}], filename = true, union_by_name = true)"
                )
            else:
                con.execute(f"CREATE VIEW {table} AS SELECT NULL::VARCHAR AS run_id WHERE false")
        return con

    def query(self, sql: str) -> pd.DataFrame:
        """Runs DuckDB SQL over the campaign's views and returns the result as a DataFrame."""
        con = self._connect()
        try:
            return con.execute(sql).df()
        finally:
            con.close()

    def plot(
        self,
        y: str,
        x: str | None = None,
        hue: str | None = None,
        col: str | None = None,
        *,
        per: str | None = None,
        level: float = 0.95,
        size: tuple[float, float] | None = None,
        style: str | None = None,
        logx: bool = False,
        out: str | Path | None = None,
        dpi: int = 150,
        where: Mapping[str, Sequence[Any]] | None = None,
    ) -> Any:
        """``y`` against ``x``, a line per ``hue``, a panel per ``col``: a matplotlib Figure.

        The columns come from runs, run_groups, run_flows or run_links
        (``per``, by default the coarsest that has them all); ``x`` defaults
        to the first numeric swept column and ``hue`` to ``cc`` for groups
        and flows and to the link's ``name`` for links.
        Means carry ``level`` intervals only over >= 5 repeats of one point;
        otherwise the runs are drawn as dots. A swept column that is not
        drawn becomes the hue or the panels, never pseudo-repeats. Axes are
        in Mbit/s, ms, BDP as the columns' units say. ``out`` writes the
        figure (.png, .pdf or .svg); ``size`` is (width, height) in inches and
        ``style`` a matplotlib style name; ``where`` keeps the rows whose
        column takes one of the values given. E.g. BBR's share against buffer::

            c.plot("share_of_flows", x="topology.bottleneck.buffer_bdp", hue="cc", out="share.pdf")
        """
        from .figures import plot, save_figure

        fig = plot(self, y, x, hue, col, per=per, level=level, size=size, style=style, logx=logx, where=where)
        if out is not None:
            save_figure(fig, out, dpi=dpi)
        return fig

    def _repr_html_(self) -> str:
        """A notebook's view: the grid and the metrics per point with their intervals."""
        from .view import summary_html

        return summary_html(self, HEADLINE, GROUP_HEADLINE)

    def timeseries(
        self,
        column: str,
        *,
        table: str = "flows",
        by: Sequence[str] | None = None,
        level: float = 0.95,
        bounds: tuple[float | None, float | None] | None = None,
    ) -> pd.DataFrame:
        """Mean and confidence band of a per-interval column across repeats, at each time step.

        Grouped by point, baseline and (for ``flows``) flow, group and cc
        unless ``by`` says otherwise (catalogue columns or the table's own).
        Columns: the groups, ``time_s``, ``mean``, ``ci`` (half width,
        Student t; NaN below 2 runs), ``lo``, ``hi`` and ``n`` (runs). The
        band ``lo``–``hi`` is kept within what the quantity can take:
        ``bounds`` (low, high), by default 0 and none for quantities with a
        unit (``_bps``, ``_pkts``, ``_bytes``, ``_us``, ``_ms``, ``_s``) and
        the bottleneck's rate above for ``rate_bps``, the rate at the
        bottleneck. Only repeats of one point make an interval: grouping
        ``by`` fewer than the point pools different experiments.
        This is the ensemble figure of Leith, Shorten and McCullagh (PFLDnet 2007).
        """
        from ..analysis.stats import t_quantile

        default = ["point", "baseline", *(["flow", "group", "cc"] if table == "flows" else [])]
        keys = list(by) if by is not None else default
        cols = ", ".join(f'"{k}"' for k in keys)
        sql = (
            f'SELECT {cols}, t.time_s AS time_s, avg(t."{column}") AS mean, stddev_samp(t."{column}") AS sd, '
            f'count(t."{column}") AS n, max(runs."bottleneck.rate_bps") AS link_bps FROM {table} t '
            f"JOIN runs USING (run_id) WHERE runs.status = 'ok' "
            f"GROUP BY {cols}, t.time_s ORDER BY {cols}, t.time_s"
        )
        df = self.query(sql)
        p = 1.0 - (1.0 - level) / 2.0
        tq = {n: t_quantile(p, n - 1) for n in set(df["n"].tolist()) if n > 1}
        df["ci"] = [
            tq[n] * sd / (n**0.5) if n > 1 and sd == sd else float("nan")
            for n, sd in zip(df["n"].tolist(), df["sd"].tolist(), strict=True)
        ]
        low, high = bounds if bounds is not None else _natural_bounds(column)
        df["lo"] = df["mean"] - df["ci"]
        df["hi"] = df["mean"] + df["ci"]
        if low is not None:
            df["lo"] = df["lo"].clip(lower=low)
        if high is not None:
            df["hi"] = df["hi"].clip(upper=high)
        elif column == "rate_bps" and bounds is None:
            df["hi"] = df[["hi", "link_bps"]].min(axis=1, skipna=False)
        return df.drop(columns=["sd", "link_bps"])


NON_NEGATIVE = ("_bps", "_pkts", "_bytes", "_us", "_ms", "_s", "_total")
"""Per-interval columns that cannot be negative: those with a unit in the name."""


def _natural_bounds(column: str) -> tuple[float | None, float | None]:
    return (0.0 if column.endswith(NON_NEGATIVE) else None), None


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def open(path: str | Path) -> Campaign | Result:  # noqa: A001 - ccarena.open, as the API names it
    """Reopens a campaign folder (a :class:`Campaign`) or a single run's folder (a :class:`ccarena.Result`)."""
    p = Path(path)
    if (p / "sweep.toml").is_file():
        return Campaign(p)
    if (p / "summary.json").is_file():
        from ..results import Result

        return Result.load(p)
    raise FileNotFoundError(f"{p}: neither a campaign (sweep.toml) nor a run (summary.json)")
