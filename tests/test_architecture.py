"""The package's structure (docs/architecture.md), read with `ast` from the source, not by importing.

Every import counts, at module level, inside functions (a lazy import is still a dependency) and
under `if TYPE_CHECKING:` (a type is still a dependency): no two modules may depend on each other,
directly or through others; nothing imports the CLI; one module draws the progress line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The installed package `toollint` and the folders pyproject.toml maps into it.
PACKAGE_DIRS = {
    "toollint": REPO / "toollint",
    "toollint.rules": REPO / "rules",
    "toollint.contracts": REPO / "contracts",
    "toollint.dynamic": REPO / "dynamic",
}
SKIP = ("examples",)  # sample benchmark code, not toollint


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package, directory in PACKAGE_DIRS.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if any(p in SKIP for p in parts) or (package == "toollint" and parts[0] in ("rules", "contracts",
                                                                                       "dynamic")):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def imported_names(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """Every module name an import statement in the file refers to, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield module, node.lineno
            for alias in node.names:  # `from toollint import cli` imports the module toollint.cli
                yield f"{module}.{alias.name}", node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    known = modules()
    graph: dict[str, dict[str, int]] = {m: {} for m in known}
    for name, path in known.items():
        for target, line in imported_names(name, path):
            while target and target not in known:  # `toollint.x.func` -> the module toollint.x
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(targets))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    edges = [f"{a} -> {b} (line {line})" for a in component for b, line in sorted(graph[a].items()) if b in members]
    return "; ".join(edges)


def test_the_graph_sees_the_imports_it_must() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert "toollint.engine" in graph["toollint.cli"] or "toollint.pipeline.check" in graph["toollint.cli"]
    assert "toollint.dynamic.cli" in graph["toollint.cli"]  # `from toollint.dynamic import cli as ...`
    assert "toollint.model" in graph["toollint.context"]


def test_a_circle_is_found_when_there_is_one() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_circles() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import circles: " + " | ".join(describe(c, graph) for c in found)


def test_nothing_imports_the_cli() -> None:
    graph = import_graph()
    # `python -m toollint` runs the CLI; it is the one entry point besides the console script.
    importers = sorted(m for m, targets in graph.items() if "toollint.cli" in targets and m != "toollint.__main__")
    assert importers == [], f"{importers} import toollint.cli; errors live in toollint.errors"


@pytest.mark.parametrize("module", ["toollint.evidence", "toollint.errors"])
def test_leaf_modules_import_nothing_of_toollint(module: str) -> None:
    assert import_graph()[module] == {}


def test_the_finding_model_imports_only_its_evidence() -> None:
    assert set(import_graph()["toollint.model"]) == {"toollint.evidence"}


def test_one_progress_line() -> None:
    drawers = sorted(str(p.relative_to(REPO)) for p in modules().values()
                     if "\\r\\033[K" in p.read_text(encoding="utf-8"))
    assert drawers == ["toollint/console.py"]
