"""``ccarena list cc``: the congestion-control algorithms and their parameters."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import EXIT_OK, EXIT_USAGE, error

__all__ = ["format_algorithms", "format_link_models", "format_qdiscs", "format_traces", "register"]


def register(sub: Any) -> None:
    """Adds ``list`` to the subcommands."""
    p = sub.add_parser(
        "list",
        help="list what ccarena offers: cc (congestion-control algorithms), qdisc (queue disciplines), "
        "links (link models and the sending host), traces (the delivery traces it ships)",
        description="List the congestion-control algorithms (cc) or the queue disciplines (qdisc) with "
        "their sources and parameters (name, type and range, default, meaning), the link models every link "
        "table takes and the sending host's keys (links), or the delivery traces ccarena ships (traces: "
        "name, rate, length and recipe; a link's trace = \"NAME\").",
    )
    p.add_argument("what", choices=["cc", "qdisc", "links", "traces"], metavar="cc|qdisc|links|traces",
                   help="cc: congestion-control algorithms; qdisc: queue disciplines; links: link models and "
                   "host; traces: shipped traces")
    p.add_argument("--cc-module", action="append", default=[], metavar="MODULE",
                   help="a module name or .py file registering algorithms written in Python; repeatable "
                   "(those of installed packages' ccarena.cc entry points are listed without it)")
    p.set_defaults(handler=list_command)


def _range(p: dict[str, Any]) -> str:
    kind = p["type"]
    if kind == "bool":
        return "bool"
    if kind == "choice":
        return "one of " + ", ".join(p.get("choices") or [])
    return f"{kind} in [{p.get('min')}, {p.get('max')}]"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def format_algorithms(algos: Sequence[dict[str, Any]], width: int = 100) -> str:
    """The text of ``ccarena list cc``."""
    blocks: list[str] = []
    for a in algos:
        lines = [f"{a['name']}: {a['summary']}"]
        if a.get("unconfirmed"):
            lines.append(
                "  [unconfirmed] a reference this implementation relies on is not confirmed by a second source"
            )
        lines.extend(textwrap.wrap(a["source"], width, initial_indent="  source: ", subsequent_indent="          "))
        lines.append(f"  default recovery: {a['default_recovery']}")
        params = a.get("params") or []
        if not params:
            lines.append("  parameters: none")
        else:
            lines.append("  parameters:")
            rows = [(p["name"], _range(p), _value(p["default"])) for p in params]
            w0 = max(len("name"), *(len(r[0]) for r in rows))
            w1 = max(len("type / range"), *(len(r[1]) for r in rows))
            lines.append(f"    {'name'.ljust(w0)}  {'type / range'.ljust(w1)}  default")
            for p, (name, rng, default) in zip(params, rows, strict=True):
                flag = "  [unconfirmed]" if "UNCONFIRMED" in p.get("doc", "") else ""
                lines.append(f"    {name.ljust(w0)}  {rng.ljust(w1)}  {default}{flag}")
                lines.extend(textwrap.wrap(p.get("doc", ""), width, initial_indent=" " * 8, subsequent_indent=" " * 8))
        blocks.append("\n".join(lines))
    footer = 'Set parameters per flow group, e.g. [[flows]] cc = "cubic"  params = { beta = 0.5 }'
    return "\n\n".join(blocks) + "\n\n" + footer


def format_qdiscs(qdiscs: Sequence[dict[str, Any]], width: int = 100) -> str:
    """The text of ``ccarena list qdisc``: each discipline, its source and its table's keys."""
    from ..spec.schema import qdisc_key, qdisc_unit

    blocks = []
    for q in qdiscs:
        lines = [f"{q['name']}: {q['summary']}"]
        lines += textwrap.wrap(q["source"], width, initial_indent="  source: ", subsequent_indent="          ")
        if not q["params"]:
            lines.append("  parameters: none")
        else:
            lines.append(f'  parameters (topology.bottleneck.{q["name"]} = {{ ... }} with qdisc = "{q["name"]}"):')
            for p in q["params"]:
                unit = qdisc_unit(p)
                default = p["default"]
                if unit == "time":
                    shown = f'"{default / 1e6:g}ms"'
                elif unit == "bytes":
                    shown = f'"{default}B"'
                else:
                    shown = _value(default)
                kind = unit or _range(p)
                lines.append(f"    {qdisc_key(p)}  {kind}  default {shown}")
                lines.extend(textwrap.wrap(p.get("doc", ""), width, initial_indent=" " * 8, subsequent_indent=" " * 8))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _field_lines(key: str, f: Any, indent: int, width: int) -> list[str]:
    """One key of a table: its name, type (range or choices) and default, then its meaning; a nested
    table's keys below it."""
    kind = f.type
    if f.choices and f.type == "choice":
        kind = "one of " + ", ".join(f.choices)
    elif f.lo is not None and f.hi is not None:
        kind = f"{f.type} in [{_number(f.lo)}, {_number(f.hi)}]"
    head = f"{' ' * indent}{key}  {kind}"
    if f.default is not None:
        head += f"  default {_value(f.default)}"
    if f.required:
        head += "  required"
    lines = [head]
    lines += textwrap.wrap(f.doc, width, initial_indent=" " * (indent + 4), subsequent_indent=" " * (indent + 4))
    if f.table is not None and f.type == "table":
        for k, sub in f.table.fields.items():
            lines += _field_lines(k, sub, indent + 4, width)
    return lines


def format_link_models(width: int = 100) -> str:
    """The text of ``ccarena list links``: the keys every link table takes beyond its rate, buffer and
    discipline (capacity over time, a trace, jitter, batching, policer, shaper), and the sending host's,
    from the experiment file's own schema."""
    from ..spec.schema import BOTTLENECK, HOST, LINK_MODEL_FIELDS

    lines = ["Link models: keys of any link table ([topology.bottleneck], topology.reverse, a parking lot's",
             "link and [[topology.hop]], [[topology.links]] and their reverse); an ideal link has none.", ""]
    for key in ("rate", "delay"):
        lines += _field_lines(key, BOTTLENECK.fields[key], 2, width)
    for key, f in LINK_MODEL_FIELDS.items():
        lines += _field_lines(key, f, 2, width)
    lines += [""] + textwrap.wrap(f"Sending host: host = {{ ... }} in [tcp] or a flow group: {HOST.doc}.", width)
    for key, f in HOST.fields.items():
        lines += _field_lines(key, f, 2, width)
    return "\n".join(lines)


def format_traces() -> str:
    """The text of ``ccarena list traces``: each shipped trace's name, own rate, period and recipe."""
    from ..spec.linkmodels import read_trace, shipped_traces
    from ..traces import mean_rate_bps

    lines = []
    for name, path in shipped_traces().items():
        times = read_trace(path, name)
        recipe = path.with_suffix(".md").read_text(encoding="utf-8").split("\n\n")[1] if path.with_suffix(".md").exists() else ""
        lines.append(f"{name}  {mean_rate_bps(times) / 1e6:.3f} Mbit/s, {len(times)} opportunities, period {times[-1]} ms")
        lines.append(f"  {' '.join(recipe.split())}")
        lines.append(f"  {path}")
    return "\n".join(lines)


def list_command(args: argparse.Namespace) -> int:
    """Runs ``ccarena list``."""
    from .. import _core

    if args.what == "qdisc":
        print(format_qdiscs(_core.qdisc_catalogue()))
    elif args.what == "traces":
        print(format_traces())
    elif args.what == "links":
        print(format_link_models())
    else:
        from ..pycc import EntryPointError, import_cc_modules, load_entry_points

        for m in args.cc_module:
            try:
                import_cc_modules([str(Path(m).absolute()) if m.endswith(".py") else m])
            except Exception as e:  # noqa: BLE001 - whatever the user's module raised, in one line
                error(f"--cc-module {m}: importing it failed: {type(e).__name__}: {' '.join(str(e).split())}")
                return EXIT_USAGE
        try:
            load_entry_points()
        except EntryPointError as e:
            error(str(e))
            return EXIT_USAGE
        print(format_algorithms(_core.cc_algorithms()))
    return EXIT_OK
