"""The catalogue of a campaign: one row per run, for joining and querying.

``runs.parquet`` columns, in order:

* ``run_id`` (the key of every table), ``point`` (index in the grid),
  ``repeat``, ``seed``, ``baseline`` (the baseline algorithm, or null for
  the point's own run);
* one typed column per swept path: quantities in base units with the unit
  in the name (``topology.bottleneck.rate_bps``, ``topology.rtt_s``,
  ``topology.bottleneck.buffer_bdp`` / ``_pkts`` / ``_bytes``), numbers and
  booleans as they are, anything else (names, mixed units) as strings
  under the path itself;
* with baselines, ``friendliness_vs_<baseline>``: the run's standard-TCP
  flows' rate over the measurement window divided by the same flows' rate in
  the baseline run of the same point and repeat (the tcpeval suite's loss
  L; 1 when the algorithm takes nothing from standard TCP);
* ``status`` (``ok`` or ``failed``), ``error`` (null when ok), ``wall_s``
  (wall-clock seconds of the run: the one column that differs between two
  campaigns of the same file);
* every scalar of the run's summary.json, nested keys joined with ``.``
  (``queue.drops``, ``transfers.fct_p50_s``) and list items indexed
  (``jain_window_s[0]``, ``sources[0].achieved_bps``), except the per-flow
  values, which go to ``run_flows.parquet`` and ``run_groups.parquet``.

``run_flows.parquet``: one row per run per flow, keyed by ``run_id``, with
``point``, ``repeat``, ``baseline``, the swept columns (as in runs.parquet),
the flow's values from summary.json (``flow``, ``group``, ``cc``,
``goodput_bps``, ``window_rate_bps``, …), its base RTT ``rtt_s``, and two
shares over the measurement window (``window_s`` in runs.parquet):
``share_of_link`` (its rate at the bottleneck over the link's rate) and
``share_of_flows`` (over the sum of every flow's rate at the bottleneck).

``run_groups.parquet``: one row per run per flow group (``[[flows]]``
table), keyed by ``run_id`` and ``group``, with the same head, ``cc``,
``flows`` (how many), ``rtt_s``, and over the measurement window: the
group's ``total_window_rate_bps``, ``total_goodput_bps``,
``total_retransmits`` and ``total_drops``, its mean ``rate_per_flow_bps``,
its ``share_of_link`` and ``share_of_flows`` (sums over its flows), and
``rate_ratio_vs_others``: its mean per-flow rate over the
mean per-flow rate of the flows of every other group (BBR's flows against
CUBIC's in a two-group run; null when the run has one group).

``run_links.parquet`` (a parking lot or a network of links): one row per
run per link, with the same head and the link's values of summary.json
(``name``, ``utilization_window``, ``drops``, ``delay_p99_ms``, …); the
dumbbell's runs have none.

Rows are in grid order (point, baseline, repeat), whatever order the runs
finished in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..spec.units import UnitError, parse_rate, parse_size, parse_time
from .grid import Grid, Run

__all__ = ["flatten", "group_rows", "run_flow_rows", "swept_columns", "tables"]

NS_PER_S = 1_000_000_000


def flatten(doc: Mapping[str, Any], prefix: str = "", skip: Sequence[str] = ("flows",)) -> dict[str, Any]:
    """Scalars of a nested document: ``{"a": {"b": 1}, "c": [2, 3]}`` → ``{"a.b": 1, "c[0]": 2, "c[1]": 3}``."""
    out: dict[str, Any] = {}

    def walk(v: Any, key: str) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                if not key and k in skip:
                    continue
                walk(x, f"{key}.{k}" if key else str(k))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, f"{key}[{i}]")
        else:
            out[key] = v

    walk(doc, prefix)
    return out


def _quantity(values: Sequence[Any]) -> tuple[str, list[Any]] | None:
    """(unit suffix, values in base units) when every value is the same kind of quantity string."""
    if not values or not all(isinstance(v, str) for v in values):
        return None
    for suffix, parse in (("_bps", parse_rate), ("_s", lambda v: parse_time(v) / NS_PER_S)):
        try:
            return suffix, [parse(v) for v in values]
        except UnitError:
            pass
    try:
        sizes = [parse_size(v) for v in values]
    except UnitError:
        return None
    kinds = {s.kind for s in sizes}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    return f"_{kind}", [float(s.value) if kind == "bdp" else int(s.value) for s in sizes]


def swept_columns(grid: Grid) -> dict[str, dict[int, Any]]:
    """Per swept path: its catalogue column name and each point's value in that column's type."""
    out: dict[str, dict[int, Any]] = {}
    for path in grid.paths:
        values = [dict(p)[path] for p in grid.points]
        quantity = _quantity(values)
        if quantity is not None:
            suffix, converted = quantity
            out[path + suffix] = dict(enumerate(converted))
        elif all(isinstance(v, bool) for v in values) or all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        ):
            out[path] = dict(enumerate(values))
        else:
            out[path] = {i: v if isinstance(v, str) else _json(v) for i, v in enumerate(values)}
    return out


def _json(v: Any) -> str:
    import json

    return json.dumps(v, sort_keys=True)


def run_flow_rows(run: Run, summary: Mapping[str, Any], swept: Mapping[str, Mapping[int, Any]]) -> list[dict[str, Any]]:
    """The run's per-flow values, one row per flow, with the swept columns, base RTT and shares."""
    head: dict[str, Any] = {"run_id": run.run_id, "point": run.point, "repeat": run.repeat, "baseline": run.baseline}
    head.update({name: by_point[run.point] for name, by_point in swept.items()})
    link = summary.get("bottleneck", {}).get("rate_bps")
    flows = summary.get("flows", [])
    total = sum(float(f["window_rate_bps"]) for f in flows if f.get("window_rate_bps") is not None)
    engine_flows = run.spec.engine.flows
    rows = []
    for f in flows:
        row = {**head, **flatten(f, skip=())}
        i = int(f.get("flow", -1))
        row["rtt_s"] = engine_flows[i].rtt_ns / NS_PER_S if 0 <= i < len(engine_flows) else None
        rate = f.get("window_rate_bps")
        row["share_of_link"] = float(rate) / float(link) if rate is not None and link else None
        row["share_of_flows"] = float(rate) / total if rate is not None and total > 0 else None
        rows.append(row)
    return rows


GROUP_SUMS = {
    "window_rate_bps": "total_window_rate_bps",
    "goodput_bps": "total_goodput_bps",
    "retransmits": "total_retransmits",
    "drops": "total_drops",
    "share_of_link": "share_of_link",
    "share_of_flows": "share_of_flows",
}
"""Per-flow columns a group's row sums over its flows, and the sum's name (``total_`` where the flow's
column has the same meaning per flow: ``goodput_bps`` stays a per-flow figure in every table)."""


def group_rows(flow_rows: Sequence[Mapping[str, Any]], head: Sequence[str]) -> list[dict[str, Any]]:
    """Rows of run_groups.parquet from a run's rows of run_flows (see the module's documentation)."""
    by_run: dict[Any, list[Mapping[str, Any]]] = {}
    for r in flow_rows:
        by_run.setdefault(r["run_id"], []).append(r)
    out: list[dict[str, Any]] = []
    for rows in by_run.values():
        groups: dict[int, list[Mapping[str, Any]]] = {}
        for r in rows:
            groups.setdefault(int(r["group"]), []).append(r)
        per_flow = {g: _mean([r.get("window_rate_bps") for r in rs]) for g, rs in groups.items()}
        for g, rs in sorted(groups.items()):
            row: dict[str, Any] = {k: rs[0].get(k) for k in head}
            rtts = {r.get("rtt_s") for r in rs}
            row.update({"group": g, "cc": rs[0].get("cc"), "flows": len(rs), "rtt_s": rtts.pop() if len(rtts) == 1 else None})
            for k, name in GROUP_SUMS.items():
                values = [r.get(k) for r in rs]
                row[name] = None if any(v is None for v in values) else sum(values)
            row["rate_per_flow_bps"] = per_flow[g]
            others = _mean([r.get("window_rate_bps") for h, o in groups.items() if h != g for r in o])
            mine = per_flow[g]
            row["rate_ratio_vs_others"] = mine / others if mine is not None and others else None
            out.append(row)
    return out


def _mean(values: Sequence[Any]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _column(name: str, values: list[Any]) -> Any:
    import pyarrow as pa

    if any(isinstance(v, float) for v in values) and all(
        v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values
    ):
        values = [None if v is None else float(v) for v in values]
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _table(rows: list[dict[str, Any]], first: Sequence[str]) -> Any:
    import pyarrow as pa

    names: dict[str, None] = dict.fromkeys(first)
    for r in rows:
        names.update(dict.fromkeys(r))
    return pa.table({n: _column(n, [r.get(n) for r in rows]) for n in names})


def tables(
    grid: Grid,
    outcomes: Mapping[str, tuple[str, Any, float | None]],
) -> tuple[Any, Any, Any, Any]:
    """(runs, run_flows, run_groups, run_links) tables for the runs that have an outcome.

    ``outcomes[run_id]`` is ``("ok", summary, wall_s)`` or ``("failed", error, wall_s)``.
    """
    swept = swept_columns(grid)
    head = ["run_id", "point", "repeat", "seed", "baseline", *swept, "status", "error", "wall_s"]
    rows: list[dict[str, Any]] = []
    flow_rows: list[dict[str, Any]] = []
    link_rows: list[dict[str, Any]] = []
    for run in _ordered(grid.runs, outcomes):
        status, payload, wall_s = outcomes[run.run_id]
        row: dict[str, Any] = {
            "run_id": run.run_id,
            "point": run.point,
            "repeat": run.repeat,
            "seed": run.seed,
            "baseline": run.baseline,
        }
        for name, by_point in swept.items():
            row[name] = by_point[run.point]
        row.update({"status": status, "error": None if status == "ok" else str(payload), "wall_s": wall_s})
        if status == "ok":
            # Keys in summary.json's order (sorted), whether the summary was read from it or is the one just
            # made: a resumed or grown campaign's tables are the same as a fresh one's, columns and all.
            payload = _sorted(payload)
            row.update({k: v for k, v in flatten(payload, skip=("flows", "links")).items() if k not in row})
            flow_rows += run_flow_rows(run, payload, swept)
            head_values = {k: row[k] for k in ("run_id", "point", "repeat", "baseline", *swept)}
            link_rows += [{**head_values, **flatten(link, skip=())} for link in payload.get("links", [])]
        rows.append(row)
    _add_baseline_friendliness(grid, outcomes, rows)
    flow_head = ["run_id", "point", "repeat", "baseline", *swept]
    return (
        _table(rows, head),
        _table(flow_rows, flow_head),
        _table(group_rows(flow_rows, flow_head), flow_head),
        _table(link_rows, flow_head),
    )


def _sorted(doc: Any) -> Any:
    """``doc`` with every mapping's keys sorted, as summary.json stores them."""
    if isinstance(doc, Mapping):
        return {k: _sorted(doc[k]) for k in sorted(doc)}
    if isinstance(doc, list):
        return [_sorted(v) for v in doc]
    return doc


def _standard_flows(summary: Mapping[str, Any]) -> list[int]:
    """The flows a run counts as standard TCP (as its friendliness says)."""
    fr = summary.get("friendliness") or {}
    flows = summary.get("flows", [])
    if "standard_groups" in fr:
        return [int(f["flow"]) for f in flows if int(f["group"]) in set(fr["standard_groups"])]
    names = set(fr.get("standard", ("reno", "newreno")))
    return [int(f["flow"]) for f in flows if f["cc"] in names]


def _window_rates(summary: Mapping[str, Any]) -> dict[int, float]:
    return {int(f["flow"]): float(f["window_rate_bps"]) for f in summary.get("flows", []) if f.get("window_rate_bps") is not None}


def _add_baseline_friendliness(
    grid: Grid, outcomes: Mapping[str, tuple[str, Any, float | None]], rows: list[dict[str, Any]]
) -> None:
    """``friendliness_vs_<baseline>`` of each run: its standard flows' rate over the same flows' rate in the baseline run."""
    from ..analysis.metrics import friendliness_vs_baseline

    by_key = {(r.point, r.repeat, r.baseline): r.run_id for r in grid.runs}
    for row in rows:
        if row["baseline"] is not None or row["status"] != "ok":
            continue
        summary = outcomes[row["run_id"]][1]
        for b in grid.baselines:
            base_id = by_key.get((row["point"], row["repeat"], b))
            base = outcomes.get(base_id) if base_id is not None else None
            value = None
            if base is not None and base[0] == "ok":
                value = friendliness_vs_baseline(_window_rates(summary), _window_rates(base[1]), _standard_flows(summary))
            row[f"friendliness_vs_{b}"] = value


def _ordered(runs: Iterable[Run], outcomes: Mapping[str, Any]) -> list[Run]:
    return sorted((r for r in runs if r.run_id in outcomes), key=lambda r: (r.point, r.baseline or "", r.repeat))
