"""The package's structure (docs/architecture.md), read with `ast` from the source, not by importing.

Every import counts, at module level, inside functions (a lazy import is still a dependency) and
under `if TYPE_CHECKING:` (a type is still a dependency): no two modules may depend on each other,
directly or through others; every module sits on a floor and imports only its own floor and those
below; the folders of the dynamic half, the profiles and the host folders import each other in no
circle; a benchmark profile imports only the profile API, the discovery patterns and the contract
model; code that runs in the benchmark's interpreter (a `host/` folder) imports only the standard
library; nothing imports the CLI; one module draws the progress line.
"""

from __future__ import annotations

import ast
import fnmatch
import sys
from collections.abc import Iterator
from functools import lru_cache
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


@lru_cache(maxsize=1)
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


@lru_cache(maxsize=1)
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
    edges = [
        f"{a} -> {b} (line {line})" for a in component for b, line in sorted(graph[a].items()) if b in members
    ]
    return "; ".join(edges)


def test_the_graph_sees_the_imports_it_must() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert "toollint.engine" in graph["toollint.cli"] or "toollint.pipeline.check" in graph["toollint.cli"]
    # `from toollint.dynamic import derived as ...`: the module, not a name in the package
    assert "toollint.dynamic.derived" in graph["toollint.dynamic.confirm"]
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
    importers = sorted(
        m for m, targets in graph.items() if "toollint.cli" in targets and m != "toollint.__main__"
    )
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


# --- floors ---------------------------------------------------------------------------------------------

# Lowest first. A module is on the floor that names it exactly, else on the highest floor one of whose
# patterns matches it; a module in a `host/` folder is always on the host floor. The doc draws the same.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("host", ()),  # every `host/` folder: run inside the benchmark's interpreter
    (
        "base",
        (
            "toollint",
            "toollint.evidence",
            "toollint.errors",
            "toollint.settings",
            "toollint.model",
            "toollint.codes",
            "toollint.console",
            "toollint.atomic",
            "toollint.processes",
            "toollint.gitignore",
            "toollint.files",
            "toollint.fingerprint",
            "toollint.plugins",
            "toollint.regular",
            "toollint.memos",
            "toollint.sources",
            "toollint.facts",
        ),
    ),
    ("analysis", ("toollint.analysis", "toollint.analysis.*")),
    (
        "engine",
        (
            "toollint.context",
            "toollint.registry",
            "toollint.rules",
            "toollint.rules.*",
            "toollint.noqa",
            "toollint.config",
            "toollint.engine",
            "toollint.cache",
            "toollint.reporters",
            "toollint.reporters.*",
            "toollint.validate.mutation",
        ),
    ),
    ("contract model", ("toollint.contracts", "toollint.contracts.model")),
    ("profile API", ("toollint.profiles", "toollint.profiles.api", "toollint.profiles.builtin")),
    (
        "dynamic parts",
        (
            "toollint.contracts.*",
            "toollint.dynamic",
            "toollint.dynamic.*",
            "toollint.trace",
            "toollint.trace.*",
            "toollint.validate.*",
        ),
    ),
    ("benchmark profiles", ("toollint.profiles.*",)),
    (
        "front ends",
        (
            "toollint.cli",
            "toollint.__main__",
            "toollint.flake8_plugin",
            "toollint.baseline",
            "toollint.fixes",
            "toollint.add_noqa",
            "toollint.pipeline",
            "toollint.pipeline.*",
            "*.cli",
            "*.__main__",
            "toollint.trace.check",
            "toollint.validate",
        ),
    ),
)
FLOOR_NAMES = [name for name, _ in FLOORS]
# What a benchmark profile may import besides its own folder.
PROFILE_MAY_IMPORT = {"toollint.profiles.api", "toollint.analysis.patterns", "toollint.contracts.model"}
# A profile's host folder may import its benchmark (the profile's `import_markers`) and these of the
# benchmark's own dependencies.
BENCHMARK_DEPENDENCIES = {"pydantic", "pydantic_core", "loguru"}


def is_host(path: Path) -> bool:
    return "host" in path.parent.parts


def floor_of(module: str, path: Path) -> str | None:
    if is_host(path):
        return "host"
    for name, patterns in FLOORS:
        if module in patterns:
            return name
    for name, patterns in reversed(FLOORS):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns if "*" in p):
            return name
    return None


def test_every_module_is_on_a_floor() -> None:
    known = modules()
    assert [m for m, path in known.items() if floor_of(m, path) is None] == []
    assert floor_of("toollint.profiles.api", known["toollint.profiles.api"]) == "profile API"
    assert floor_of("toollint.trace.check", known["toollint.trace.check"]) == "front ends"
    assert floor_of("toollint.dynamic.host.jsondiff", known["toollint.dynamic.host.jsondiff"]) == "host"


def test_each_floor_imports_only_its_own_and_those_below() -> None:
    known = modules()
    graph = import_graph()
    def level(module: str) -> int:
        return FLOOR_NAMES.index(floor_of(module, known[module]) or "")

    upward = [f"{a} ({floor_of(a, known[a])}) -> {b} ({floor_of(b, known[b])}) line {line}"
              for a, targets in graph.items() for b, line in targets.items() if level(b) > level(a)]
    assert upward == []


def folder_graph() -> dict[str, dict[str, str]]:
    """Folder -> folder it imports -> one import that does it, for the folders of the dynamic half, the
    benchmark profiles and the host folders (the static core's folders are held by the floors). Front
    ends are left out: they import everything by design. The contract model counts apart from the
    contract tools it shares `contracts/` with: it sits below the profile API, they above."""
    known = modules()

    def unit(module: str) -> str | None:
        floor = floor_of(module, known[module])
        if floor == "front ends" or floor not in ("host", "contract model", "profile API", "dynamic parts",
                                                  "benchmark profiles"):
            return None
        folder = known[module].parent.relative_to(REPO).as_posix()
        return "contract model" if floor == "contract model" else folder

    graph: dict[str, dict[str, str]] = {}
    for a, targets in import_graph().items():
        ua = unit(a)
        if ua is None:
            continue
        graph.setdefault(ua, {})
        for b in targets:
            ub = unit(b)
            if ub is not None and ub != ua:
                graph[ua].setdefault(ub, f"{a} -> {b}")
                graph.setdefault(ub, {})
    return graph


def test_the_folder_graph_sees_the_folders() -> None:
    graph = folder_graph()
    assert {"dynamic", "dynamic/host", "contracts", "contracts/host", "toollint/trace", "toollint/validate",
            "toollint/profiles", "toollint/profiles/tau2", "toollint/profiles/tau2/host"} <= set(graph)
    assert "toollint/profiles" in graph["dynamic"] and "contract model" in graph["toollint/profiles"]


def test_no_folder_level_import_circles() -> None:
    graph = folder_graph()
    found = cycles({a: dict.fromkeys(targets, 0) for a, targets in graph.items()})
    assert not found, "folder circles: " + " | ".join(
        "; ".join(graph[a][b] for a in c for b in c if b in graph[a]) for c in found)


def test_benchmark_profiles_import_only_the_profile_api_the_patterns_and_the_contract_model() -> None:
    known = modules()
    graph = import_graph()
    found = []
    for module, targets in graph.items():
        if floor_of(module, known[module]) != "benchmark profiles":
            continue
        own = ".".join(module.split(".")[:3])  # toollint.profiles.<name>
        found += [f"{module} -> {t}" for t in targets if t not in PROFILE_MAY_IMPORT and t != own
                  and not t.startswith(own + ".")]
    assert found == []


def _optional(tree: ast.Module) -> set[int]:
    """Ids of imports inside a `try` whose handlers catch ImportError: optional, with a fallback."""
    caught = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            names = set()
            for handler in node.handlers:
                if handler.type is None:  # a bare `except:`
                    names.add("BaseException")
                    continue
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                names |= {k.id for k in kinds if isinstance(k, ast.Name)}
            if names & caught:
                out |= {id(n) for stmt in node.body for n in ast.walk(stmt)
                        if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def host_imports(path: Path) -> Iterator[tuple[str, int]]:
    """The top-level package of every import in a host-side file that is not optional."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    optional = _optional(tree)
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom):
            yield ".", node.lineno  # a relative import: the folder is loaded by path, not as a package


def host_folders() -> list[Path]:
    return sorted({p.parent for p in modules().values() if is_host(p)})


def test_host_folders_are_found() -> None:
    found = {d.relative_to(REPO).as_posix() for d in host_folders()}
    assert {"dynamic/host", "contracts/host", "toollint/profiles/tau2/host",
            "toollint/profiles/agentdojo/host"} <= found


@pytest.mark.parametrize("folder", [d.relative_to(REPO).as_posix() for d in host_folders()])
def test_host_folders_import_only_the_standard_library(folder: str) -> None:
    # A profile's host folder may import its benchmark too (the profile's `import_markers`).
    from toollint.profiles import all_profiles

    directory = REPO / folder
    allowed = {"__future__"}
    for profile in all_profiles():
        if directory.parent.name == profile.name and directory.is_relative_to(REPO / "toollint" / "profiles"):
            allowed |= {*profile.import_markers, *BENCHMARK_DEPENDENCIES}
    bad = [f"{path.name}:{line}: {root}" for path in sorted(directory.glob("*.py"))
           for root, line in host_imports(path)
           if root not in sys.stdlib_module_names and root not in allowed]
    assert bad == []


def test_an_optional_import_is_allowed_in_a_host_folder(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text("try:\n    import tomllib\nexcept ImportError:\n    tomllib = None\nimport yaml\n")
    assert list(host_imports(path)) == [("yaml", 5)]
    path.write_text("try:\n    import tomllib\nexcept (OSError, KeyError):\n    pass\n")
    assert list(host_imports(path)) == [("tomllib", 2)]
