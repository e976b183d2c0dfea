"""No circles in the package: every import of our own modules, function-level
ones included, read from the source. A module never imports one that imports
it back (however far round), and the parts of the package (engine, grading,
delivery, cli, server, ...) form layers: no part imports one that imports it
back, so each can be read, tested and replaced from the bottom up."""

from __future__ import annotations

import ast
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter

from tests.truth import ROOT

PACKAGE = ROOT / "trackgrade"


def _modules() -> dict[str, object]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path, modules) -> set[str]:
    """Our modules that `name` imports anywhere in its source; `from pkg import
    sub` counts as the submodule only."""
    own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            wanted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = own_package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in modules]
            wanted = subs + ([module] if len(subs) < len(node.names) else [])
        else:
            continue
        for target in wanted:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("trackgrade") and target != name:
                targets.add(target)
    return targets


def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cycle(graph) -> list[str] | None:
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        return error.args[1]
    return None


def test_no_module_imports_one_that_imports_it_back():
    assert _cycle(_graph()) is None


def test_the_parts_of_the_package_are_layers():
    parts = defaultdict(set)
    for module, targets in _graph().items():
        for target in targets:
            if _part(target) not in (_part(module), "trackgrade"):
                parts[_part(module)].add(_part(target))
    assert _cycle(parts) is None
