"""The package's imports point one way, and no modules import each other in a circle.

Layers, top to bottom (a package may import only packages on lower layers):

    cli                  the command line
    presets              the published experiments: campaign, report and figure
    report               HTML reports of runs and campaigns
    campaign, step       sweeps, repeats and the result store; a run steered step by step
    runner               ccarena.run and ccarena.compare
    backends, results    where runs happen; Result in memory and on disk
    analysis             metrics, tables, plots
    spec                 the experiment file
    _version             the version (from the compiled core)
    _core                the compiled engine

The package's own ``__init__.py`` only re-exports names lazily and is
imported by nobody inside the package. Imports are read from the source,
including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "python" / "ccarena"

LAYERS = {
    "cli": 9,
    "__main__": 10,
    "presets": 8,
    "report": 7,
    "campaign": 6,
    "runner": 5,
    "step": 6,
    "backends": 4,
    "results": 4,
    "analysis": 3,
    "spec": 2,
    "pycc": 1,
    "traces": 1,
    "_version": 1,
    "_core": 0,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of the ccarena modules ``path`` imports."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    modules = {_module_name(p) for p in PKG.rglob("*.py")} | {"ccarena._core"}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ccarena"):
                continue
            named = [f"{target}.{alias.name}" for alias in node.names]
            submodules = [n for n in named if n in modules]  # "from . import x" naming a module
            out.update(submodules if submodules else [target])
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ccarena"))
    return {m for m in out if m in modules and m != mod}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PKG.rglob("*.py")}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_package_has_a_layer() -> None:
    tops = {_top(m) for m in _graph()} - {"__init__"}
    assert tops <= set(LAYERS), f"packages without a layer: {sorted(tops - set(LAYERS))}"


def test_imports_point_down() -> None:
    upward = []
    for mod, deps in _graph().items():
        if mod == "ccarena":
            continue
        for dep in deps:
            a, b = _top(mod), _top(dep)
            if b == "__init__":
                upward.append(f"{mod} -> {dep} (the package's face re-exports; import the module itself)")
            elif a != b and LAYERS[b] >= LAYERS[a]:
                upward.append(f"{mod} -> {dep}")
    assert not upward, "imports that do not point down:\n" + "\n".join(sorted(upward))


def test_no_import_circles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            # A package's __init__ re-exporting its own modules is not a circle with them.
            if d.startswith(m + "."):
                continue
            if state.get(d) == 1:
                circles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)
