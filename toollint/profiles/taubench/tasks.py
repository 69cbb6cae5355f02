"""tau-bench's task enumerator: every task of a domain's split, graded by `Env.calculate_reward`.

Read as syntax (nothing of the benchmark is imported), from a tau-bench checkout (or its `tau_bench`
package directory):

- domains: `tau_bench/envs/<domain>/env.py`, whose environment class picks the task list by split
  (`match task_split: case "test": from tau_bench.envs.airline.tasks_test import TASKS as tasks`);
- tasks: the `Task(...)` entries of that list, in order; a task's id is `<variant>/<index>` (the index
  is what `Env.reset(task_index)` takes), its variant the domain (`airline`: the test split) or
  `domain/split` (`retail/train`);
- the grader: `Env.calculate_reward` (`tau_bench/envs/base.py`), for every task: a hash of the whole
  database (`data`) against the gold actions' replay, and, when the task lists `outputs`, a search of the
  agent's answers (`respond` actions: agent record);
- the tools: the `Tool` classes of the domain's `tools/__init__.py` (`ALL_TOOLS`), as
  `tau_bench.envs.<domain>.tools.<module>:<Class>.invoke` and by the name an agent calls them
  (`cancel_reservation`), whose `data` is the grader's `self.data`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toollint.profiles.api import (
    GraderRef,
    Problem,
    ReadSite,
    StateRoots,
    Task,
    TaskSet,
    display_path,
    package_module_file,
    parse_module,
)

PACKAGE = "tau_bench"
GRADER = "Env.calculate_reward"
GRADER_FILE = Path("envs/base.py")
STATE = "data"  # the environment's database: `Env.data`, every tool's `data` parameter
GRADER_STATE = {"self": ""}  # `self.data` is `data`
DEFAULT_SPLIT = "test"


@dataclass(frozen=True)
class Layout:
    checkout: Path  # the folder holding `tau_bench/` (what goes on sys.path)
    package: Path  # .../tau_bench


def locate(path: Path) -> Layout:
    """The checkout at `path` (or the `tau_bench` package directory); ValueError (one line) otherwise."""
    if (path / PACKAGE / "envs" / "base.py").is_file():
        return Layout(path.resolve(), (path / PACKAGE).resolve())
    if path.name == PACKAGE and (path / "envs" / "base.py").is_file():
        return Layout(path.resolve().parent, path.resolve())
    raise ValueError(f"{path}: not a tau-bench checkout (no tau_bench/envs/base.py) or tau_bench package")


def domain_names(package: Path) -> list[str]:
    return sorted(p.parent.name for p in (package / "envs").glob("*/env.py"))


def tasks(package_dir: Path, version: str | None = None, variants: Sequence[str] = (),
          display_root: Path | None = None) -> TaskSet:
    """The profile's `tasks` part: every task of the variants named (default: each domain's test split)
    of the tau-bench checkout at `package_dir`. ValueError (one line) for a directory that is not one, an
    unknown domain or split, or a version other than the checkout's (`setup.py`)."""
    layout = locate(package_dir)
    if version:
        declared = _declared_version(layout.checkout)
        if declared is not None and declared != version:
            raise ValueError(
                f"--version {version}: the checkout at {layout.checkout} is tau-bench {declared}"
            )
    domains = domain_names(layout.package)
    shown_root = display_root or layout.checkout
    out = TaskSet(package_dir=layout.package)
    grader = _grader_sites(layout, shown_root)
    roots = tool_roots(layout.package, domains)
    for variant in variants or domains:
        domain, _, split = variant.partition("/")
        if domain not in domains:
            raise ValueError(f"unknown tau-bench domain {domain!r} (domains: {', '.join(domains)})")
        out.extend(domain_tasks(layout, domain, split or DEFAULT_SPLIT, shown_root, grader, roots))
    return out


def _declared_version(checkout: Path) -> str | None:
    try:
        text = (checkout / "setup.py").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = re.search(r"""\bversion\s*=\s*["']([^"']+)""", text)
    return found.group(1) if found else None


@dataclass(frozen=True)
class GraderSites:
    """Where `Env.calculate_reward` hashes the database and searches the agent's answers."""

    file: Path
    shown: str
    hash_line: int
    outputs_line: int


def _grader_sites(layout: Layout, shown_root: Path) -> GraderSites:
    path = layout.package / GRADER_FILE
    tree = parse_module(path)
    hash_line = outputs_line = 1
    if not isinstance(tree, str):
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Env"), None)
        fn = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "calculate_reward"),
                  None) if cls is not None else None
        if fn is not None:
            hash_line = outputs_line = fn.lineno
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "get_data_hash" and hash_line == fn.lineno):
                    hash_line = node.lineno
                if isinstance(node, ast.Attribute) and node.attr == "outputs" and outputs_line == fn.lineno:
                    outputs_line = node.lineno
    return GraderSites(path, display_path(path, shown_root), hash_line, outputs_line)


def _split_lists(env_file: Path) -> dict[str, tuple[str, str]]:
    """split -> (module, list name) from the environment's `match task_split:` cases."""
    tree = parse_module(env_file)
    out: dict[str, tuple[str, str]] = {}
    if isinstance(tree, str):
        return out
    for node in ast.walk(tree):
        if not isinstance(node, ast.Match):
            continue
        for case in node.cases:
            pattern = case.pattern
            if not (isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant)):
                continue
            for stmt in case.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module and len(stmt.names) == 1:
                    out[str(pattern.value.value)] = (stmt.module, stmt.names[0].name)
    return out


def domain_tools(package: Path, domain: str) -> dict[str, str]:
    """`module:Class.invoke` -> the name an agent calls it by (its `get_info()`'s function name, else the
    class name), for the classes the domain's `ALL_TOOLS` lists."""
    tools_dir = package / "envs" / domain / "tools"
    tree = parse_module(tools_dir / "__init__.py")
    if isinstance(tree, str):
        return {}
    imported: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 1:
            for alias in stmt.names:
                imported[alias.asname or alias.name] = stmt.module
    listed: list[str] = []
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ALL_TOOLS"
                                                 for t in stmt.targets)
                and isinstance(stmt.value, ast.List)):
            listed = [e.id for e in stmt.value.elts if isinstance(e, ast.Name)]
    base = f"{PACKAGE}.envs.{domain}.tools"
    return {f"{base}.{imported[c]}:{c}.invoke": _agent_name(tools_dir / f"{imported[c]}.py", c)
            for c in listed if c in imported}


def _agent_name(file: Path, cls: str) -> str:
    """`"function": {"name": ...}` in the class's `get_info()`."""
    tree = parse_module(file)
    node = None if isinstance(tree, str) else next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    for inner in ast.walk(node) if node is not None else ():
        if not isinstance(inner, ast.Dict):
            continue
        for key, value in zip(inner.keys, inner.values):
            if isinstance(key, ast.Constant) and key.value == "function" and isinstance(value, ast.Dict):
                for k, v in zip(value.keys, value.values):
                    if isinstance(k, ast.Constant) and k.value == "name" and isinstance(v, ast.Constant):
                        return str(v.value)
    return cls


def tool_roots(package: Path, domains: Sequence[str]) -> StateRoots:
    """A tool's `data["reservations"]` is `data.reservations`; a path typed as the tool's code reads it
    (`reservations[*].status`) is rewritten the same way, for every top-level key a domain's
    `load_data()` returns (one mapping for all domains: a tool name repeats across them)."""
    keys: set[str] = set()
    for domain in domains:
        tree = parse_module(package / "envs" / domain / "data" / "__init__.py")
        fn = None if isinstance(tree, str) else next(
            (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "load_data"), None)
        for node in ast.walk(fn) if fn is not None else ():
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
                keys |= {k.value for k in node.value.keys
                         if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return StateRoots(STATE, tuple((k, f"{STATE}.{k}") for k in sorted(keys)))


def domain_tasks(layout: Layout, domain: str, split: str, shown_root: Path, grader: GraderSites,
                 roots: StateRoots) -> TaskSet:
    out = TaskSet(package_dir=layout.package)
    env_file = layout.package / "envs" / domain / "env.py"
    splits = _split_lists(env_file)
    if split not in splits:
        known = ", ".join(sorted(splits))
        raise ValueError(f"unknown tau-bench split {split!r} of {domain} (splits: {known})")
    module, name = splits[split]
    variant = domain if split == DEFAULT_SPLIT else f"{domain}/{split}"
    tools = domain_tools(layout.package, domain)
    # a tool by reference or by the name an agent calls it (a name repeats across domains: same roots)
    names = frozenset(tools) | frozenset(tools.values())
    out.tool_roots.update({ref: roots for ref in names})
    file = package_module_file(layout.package, module, PACKAGE)
    if file is None:
        out.problems.append(Problem(display_path(env_file, shown_root), 1,
                                    f"the {split} tasks' module {module} is not in the checkout"))
        return out
    shown = display_path(file, shown_root)
    tree = parse_module(file)
    if isinstance(tree, str):
        out.problems.append(Problem(shown, 1, f"task file {tree}; the {variant} tasks cannot be listed"))
        return out
    entries = next((stmt.value.elts for stmt in tree.body
                    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List)
                    and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)), None)
    if entries is None:
        out.problems.append(Problem(shown, 1, f"no list {name} of tasks in {shown}"))
        return out
    ref = GraderRef(grader.file, GRADER, GRADER_STATE, (), grader.shown)
    for index, entry in enumerate(entries):
        task = Task(f"{variant}/{index}", shown, entry.lineno, [ref], suite=variant, tools=names)
        task.sites.append(ReadSite("whole_state", STATE, grader.shown, grader.hash_line, 1, GRADER, "hash",
                                   "data hash, gold vs predicted", source=str(grader.file), scope=STATE))
        if _outputs(entry):
            task.sites.append(ReadSite("record", "", grader.shown, grader.outputs_line, 1, GRADER, "record",
                                       "outputs", source=str(grader.file)))
        out.tasks.append(task)
    return out


def _outputs(entry: ast.expr) -> bool:
    """The task lists outputs its reward searches the agent's answers for (`Task(outputs=[...])`)."""
    if not isinstance(entry, ast.Call):
        return False
    value = next((k.value for k in entry.keywords if k.arg == "outputs"), None)
    return not (isinstance(value, ast.List) and not value.elts)
