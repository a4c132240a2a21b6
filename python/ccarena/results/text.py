"""The one-screen text summary of a run that ``ccarena run`` prints."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["format_summary"]


def _fmt(x: Any, spec: str, none: str = "-") -> str:
    if x is None:
        return none
    return format(x, spec)


def _mbps(bps: Any) -> str:
    return "-" if bps is None else f"{bps / 1e6:.2f}"


def _link_rate(table: Mapping[str, Any]) -> str:
    """A link's rate as spec.toml writes it: a rate, a schedule ("50Mbps, 10Mbps from 10s") or a trace."""
    rate = table["rate"]
    if isinstance(rate, list):
        rate = ", ".join(r if k == 0 else f"{r} from {t}" for k, (t, r) in enumerate(rate))
    if "trace" in table:
        rate = f"trace {Path(str(table['trace'])).name} ({rate})"
    return str(rate)


def format_summary(s: Mapping[str, Any], spec: Mapping[str, Any], engine_seconds: float | None = None) -> str:
    """The text summary printed by ``ccarena run``, from summary.json, spec.toml and the engine's wall time."""
    from ..spec.network import bottleneck_table

    bn = bottleneck_table(spec)
    rtt = spec["topology"].get("rtt")
    head = (
        f"{s['name']}  seed {s['seed']}  {s['duration_s']:g} s  {len(s['flows'])} flows  "
        f"bottleneck {_link_rate(bn)}, buffer {bn['buffer']}"
    )
    buf = s["bottleneck"].get("buffer_pkts")
    if buf is not None:
        head += f" ({buf} pkts)"
    if rtt:
        head += f", rtt {rtt}"
    lines = [head, ""]
    header = ("flow", "cc", "goodput", "at bottleneck", "retrans", "timeouts", "rtt p50", "rtt p99", "done at")
    units = ("", "", "Mbit/s", "Mbit/s", "pkts", "", "ms", "ms", "s")
    rows = [header, units]
    for f in s["flows"]:
        rows.append(
            (
                str(f["flow"]),
                f["cc"],
                _mbps(f["goodput_bps"]),
                _mbps(f["bottleneck_rate_bps"]),
                str(f["retransmits"]),
                str(f["timeouts"]),
                _fmt(f["rtt_p50_ms"], ".1f"),
                _fmt(f["rtt_p99_ms"], ".1f"),
                _fmt(f["completion_s"], ".3f"),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        numbers = [c.rjust(w) for c, w in zip(r[2:], widths[2:], strict=True)]
        cells = [r[0].rjust(widths[0]), r[1].ljust(widths[1]), *numbers]
        lines.append("  ".join(cells).rstrip())
    if len({(f["start_s"], f["end_s"]) for f in s["flows"]}) > 1:
        lines.append("(goodput and rate at the bottleneck over each flow's own time, from its start to its end)")
    lines.append("")
    util = _fmt(s["utilization"], ".3f")
    util2 = _fmt(s["utilization_second_half"], ".3f")
    lo, hi = s["jain_window_s"]
    lines.append(
        f"utilisation {util} (second half {util2})   "
        f"Jain index {_fmt(s['jain_index'], '.3f')} (rates at the bottleneck, {lo:g}-{hi:g} s)"
    )
    q = s["queue"]
    lines.append(
        f"queue: {q['drops']} drops ({q['random_drops']} random), delay mean {_fmt(q['delay_mean_ms'], '.2f')} ms, "
        f"p50 {_fmt(q['delay_p50_ms'], '.2f')} ms, p99 {_fmt(q['delay_p99_ms'], '.2f')} ms, "
        f"max backlog {q['max_backlog_pkts']} pkts"
    )
    for src in s.get("sources", ()):
        line = (
            f"background {src['name']} ({src['kind']}): offered {_mbps(src['offered_bps'])} Mbit/s, "
            f"achieved {_mbps(src['achieved_bps'])} Mbit/s"
        )
        if src["kind"] == "tcp":
            line += f", {src['started']} transfers started, {src['completed']} completed"
        lines.append(line)
    tr = s.get("transfers")
    if tr and tr["count"]:
        parts = [
            f"{c['size_class']} {c['completed']}/{c['count']} p50 {_fmt(c['fct_p50_s'], '.3f')}"
            for c in tr["size_classes"]
            if c["count"]
        ]
        lines.append(
            f"transfers: {tr['completed']}/{tr['count']} completed, FCT mean {_fmt(tr['fct_mean_s'], '.3f')} s, "
            f"p50 {_fmt(tr['fct_p50_s'], '.3f')} s, p95 {_fmt(tr['fct_p95_s'], '.3f')} s, "
            f"p99 {_fmt(tr['fct_p99_s'], '.3f')} s"
        )
        lines.append("  by size: " + ", ".join(parts) + " (completed/started, FCT p50 s)")
    secs = engine_seconds
    eng = s["engine"]
    if secs is not None and secs > 0:
        lines.append(
            f"engine: {eng['events']:,} events in {secs:.3f} s ({eng['events'] / secs / 1e6:.2f} M events/s, "
            f"{eng['bottleneck_data_packets'] / secs / 1e6:.2f} M bottleneck packets/s)"
        )
    else:
        lines.append(f"engine: {eng['events']:,} events, {eng['bottleneck_data_packets']:,} bottleneck packets")
    return "\n".join(lines)
