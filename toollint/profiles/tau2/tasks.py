"""tau2-bench's task enumerator: every task of every domain, with the grader code that decides it.

Read as syntax and data (nothing of the benchmark is imported), from a tau2-bench checkout (or its
`src/tau2` package directory) and its data directory (`TAU2_DATA_DIR`, else the checkout's `data/`):

- domains: `tau2/domains/<domain>/environment.py`; its `get_environment()` builds the agent's toolkit
  (`tools = AirlineTools(db)`) and, in some domains, the user's (`user_tools = TelecomUserTools(...)`);
  the toolkit classes are found through the module's imports;
- tasks: `<domain>/<task id>`, from the domain's `*_TASK_SET_PATH` (`domains/<domain>/utils.py`, a
  path under the data directory), each task graded by its `evaluation_criteria` as `tau2.evaluator`
  does:
  - `env_assertions`: the toolkit method named `func_name`, of the toolkit `env_type` names (`assistant`:
    the agent's, reading the agent database; `user`: the user's, reading the user database), as
    `Environment.run_env_assertion` dispatches it;
  - `reward_basis: DB`: `EnvironmentEvaluator.calculate_reward`'s comparison of the agent-DB and user-DB
    hashes of the gold and the predicted environment: a whole-state hash, at that line of the evaluator;
  - `ACTION`, `COMMUNICATE`, `NL_ASSERTION`: the agent's calls, its messages, an LLM judge of the
    transcript: agent record, never state;
  only the criteria `reward_basis` lists count, as in the evaluator.

State paths are put in the form of the adapter's snapshot (`agent_db.*`, `user_db.*`), on both sides: a
toolkit method's `self.db.lines` is `agent_db.lines` in the agent's toolkit and `user_db....` in the
user's (`TaskSet.tool_roots` says the same of each tool, for its write set). Every task carries the
tools of its domain, so a defect of one domain never exposes another's tasks.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.analysis.patterns import compile_patterns, declared_writer
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
    read_task_file,
)
from toollint.profiles.tau2.patterns import PATTERNS

PACKAGE = "tau2"
_MARKERS = compile_patterns([PATTERNS])  # what a tool marker declares about writing
# `EnvFunctionCall.env_type` -> the environment attribute holding that toolkit, and its snapshot root
TOOLKITS = {"assistant": ("tools", "agent_db"), "user": ("user_tools", "user_db")}
TOOLKIT_STATE = {"self": ""}  # a toolkit method's `self.db.lines` is `db.lines` before the roots apply
EVALUATOR_ENV = Path("evaluator/evaluator_env.py")
RECORD_GRADERS = {  # reward type -> (file, class) of the evaluator that scores it from the agent record
    "ACTION": (Path("evaluator/evaluator_action.py"), "ActionEvaluator"),
    "COMMUNICATE": (Path("evaluator/evaluator_communicate.py"), "CommunicateEvaluator"),
    "NL_ASSERTION": (Path("evaluator/evaluator_nl_assertions.py"), "NLAssertionsEvaluator"),
}


@dataclass
class Toolkit:
    """One toolkit class of a domain, as `get_environment()` builds it."""

    env_type: str  # assistant / user
    cls: str
    file: Path
    module: str  # its import name, e.g. tau2.domains.telecom.tools
    tools: list[str] = field(default_factory=list)  # `@is_tool` methods
    methods: set[str] = field(default_factory=set)  # every method, the assertions among them

    @property
    def roots(self) -> StateRoots:
        root = TOOLKITS[self.env_type][1]
        return StateRoots(root, (("db", root),))

    def ref(self, tool: str) -> str:
        return f"{self.module}:{self.cls}.{tool}"


@dataclass
class Layout:
    checkout: Path
    package: Path  # .../src/tau2
    data: Path  # the data directory (holds tau2/domains/<domain>/...)


def tasks(package_dir: Path, version: str | None = None, variants: Sequence[str] = (),
          display_root: Path | None = None) -> TaskSet:
    """The profile's `tasks` part: every task of the domains `variants` names (default: all) of the
    tau2-bench checkout (or `tau2` package directory) at `package_dir`. ValueError (one line) for a
    directory that is neither, an unknown domain, or a version the checkout does not declare."""
    layout = locate(package_dir)
    if version:
        declared = _declared_version(layout.checkout)
        if declared is not None and declared != version:
            raise ValueError(f"--version {version}: the checkout at {layout.checkout} is tau2 {declared}")
    domains = domain_names(layout.package)
    unknown = [v for v in variants if v not in domains]
    if unknown:
        raise ValueError(f"unknown tau2 domain {unknown[0]!r} (domains: {', '.join(domains)})")
    shown_root = display_root or layout.checkout
    out = TaskSet(package_dir=layout.package)
    evaluator = _evaluator_sites(layout, shown_root, out.problems)
    for domain in variants or domains:
        out.extend(domain_tasks(layout, domain, shown_root, evaluator))
    return out


def locate(path: Path) -> Layout:
    if (path / "src" / PACKAGE / "domains").is_dir():
        checkout, package = path, path / "src" / PACKAGE
    elif (path / "domains").is_dir() and (path / "evaluator").is_dir():
        package = path
        checkout = path.parent.parent if path.parent.name == "src" else path.parent
    else:
        raise ValueError(
            f"{path}: not a tau2-bench checkout (no src/tau2/domains) or tau2 package (no domains/)"
        )
    env_data = os.environ.get("TAU2_DATA_DIR")  # where tau2 itself reads its data from
    data = Path(env_data) if env_data else checkout / "data"
    if not (data / PACKAGE / "domains").is_dir():
        raise ValueError(f"{data}: no tau2 data directory (no tau2/domains inside; set TAU2_DATA_DIR)")
    return Layout(checkout, package, data)


def domain_names(package: Path) -> list[str]:
    return sorted(p.parent.name for p in (package / "domains").glob("*/environment.py"))


def _declared_version(checkout: Path) -> str | None:
    import tomllib

    try:
        return str(
            tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
        )
    except (OSError, ValueError, KeyError):
        return None


# --- toolkits -------------------------------------------------------------------------------------


def toolkits(layout: Layout, domain: str, problems: list[Problem], shown_root: Path) -> dict[str, Toolkit]:
    """env_type -> the toolkit `get_environment()` of the domain builds for it."""
    env_file = layout.package / "domains" / domain / "environment.py"
    shown = display_path(env_file, shown_root)
    tree = parse_module(env_file)
    if isinstance(tree, str):
        problems.append(
            Problem(shown, 1, f"environment file {tree}; the {domain} tasks are traced as unresolved")
        )
        return {}
    imports: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            for alias in stmt.names:
                imports[alias.asname or alias.name] = stmt.module
    local = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    builder = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_environment"), None
    )
    if builder is None:
        problems.append(Problem(shown, 1, f"no get_environment() in the {domain} environment; its tasks are "
                                          "traced as unresolved"))
        return {}
    out: dict[str, Toolkit] = {}
    for node in ast.walk(builder):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
        ):
            continue
        env_type = next((t for t, (attr, _) in TOOLKITS.items() if attr == node.targets[0].id), None)
        if env_type is None:
            continue
        cls = node.value.func.id
        module = imports.get(cls) or (f"{PACKAGE}.domains.{domain}.environment" if cls in local else "")
        file = package_module_file(layout.package, module, PACKAGE) if module else None
        if file is None:
            problems.append(
                Problem(
                    shown,
                    node.lineno,
                    f"toolkit class {cls} of the {domain} domain not found "
                    f"(import {module or '?'}); its assertions are unresolved",
                )
            )
            continue
        kit = Toolkit(env_type, cls, file, module)
        _read_toolkit(kit, problems, shown_root)
        out[env_type] = kit
    return out


def _read_toolkit(kit: Toolkit, problems: list[Problem], shown_root: Path) -> None:
    tree = parse_module(kit.file)
    if isinstance(tree, str):
        problems.append(Problem(display_path(kit.file, shown_root), 1, f"toolkit file {tree}"))
        return
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    todo, seen = [kit.cls], set()
    while todo:  # the class and the base classes defined beside it
        name = todo.pop(0)
        node = classes.get(name)
        if node is None or name in seen:
            continue
        seen.add(name)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kit.methods.add(item.name)
                if (
                    any(_decorator_name(d) == "is_tool" for d in item.decorator_list)
                    and item.name not in kit.tools
                ):
                    kit.tools.append(item.name)
        todo += [b.id for b in node.bases if isinstance(b, ast.Name)]


def signal_tools(layout: Layout, domain: str) -> frozenset[str]:
    """The tools of a domain whose every marker says they change no state (`ToolType.GENERIC`,
    `mutates_state=False`): `transfer_to_human_agents` only signals, so a gold action of it leaves no
    state to read back. Read from the domain's modules, however `get_environment()` builds the
    toolkit (banking_knowledge's comes from a builder function, not a class)."""
    declared: dict[str, set[bool | None]] = {}
    for path in sorted((layout.package / "domains" / domain).glob("*.py")):
        tree = parse_module(path)
        if isinstance(tree, str):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for marker in node.decorator_list:
                    if _decorator_name(marker) in ("is_tool", "is_discoverable_tool"):
                        declared.setdefault(node.name, set()).add(declared_writer(marker, _MARKERS)[0])
    return frozenset(name for name, writes in declared.items() if writes == {False})


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


# --- the evaluator's reads -------------------------------------------------------------------------


@dataclass
class EvaluatorSites:
    """Where `tau2.evaluator` reads what each reward type scores."""

    db_hash: dict[str, ReadSite] = field(default_factory=dict)  # snapshot root -> its hash comparison
    record: dict[str, ReadSite] = field(
        default_factory=dict
    )  # reward type -> the evaluator reading the record


def _evaluator_sites(layout: Layout, shown_root: Path, problems: list[Problem]) -> EvaluatorSites:
    out = EvaluatorSites()
    path = layout.package / EVALUATOR_ENV
    shown = display_path(path, shown_root)
    tree = parse_module(path)
    method = _method(tree, "EnvironmentEvaluator", "calculate_reward") if not isinstance(tree, str) else None
    if method is not None:
        hashed: dict[str, str] = {}  # variable -> the root whose hash it holds
        for node in ast.walk(method):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Attribute):
                root = {"get_db_hash": "agent_db", "get_user_db_hash": "user_db"}.get(node.value.func.attr)
                for target in node.targets:
                    if root and isinstance(target, ast.Name):
                        hashed[target.id] = root
        for node in ast.walk(method):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
                sides = [node.left, *node.comparators]
                roots = {hashed.get(s.id) for s in sides if isinstance(s, ast.Name)}
                if len(roots) == 1 and None not in roots:
                    root = roots.pop()
                    assert root is not None
                    out.db_hash.setdefault(root, ReadSite(
                        "whole_state", root, shown, node.lineno, node.col_offset + 1,
                        "EnvironmentEvaluator.calculate_reward", "hash", f"{root} hash, gold vs predicted",
                        source=str(path.resolve()), scope=root))
    if set(out.db_hash) != {"agent_db", "user_db"}:
        problems.append(
            Problem(
                shown,
                1,
                "the evaluator's comparison of the gold and predicted database hashes "
                "was not found; tasks graded on DB are traced as unresolved",
            )
        )
    for reward, (rel, cls) in RECORD_GRADERS.items():
        file = layout.package / rel
        tree = parse_module(file)
        method = _method(tree, cls, "calculate_reward") if not isinstance(tree, str) else None
        line = method.lineno if method is not None else 1
        out.record[reward] = ReadSite("record", "", display_path(file, shown_root), line, 1,
                                      f"{cls}.calculate_reward", "action" if reward == "ACTION" else "record",
                                      reward.lower(), source=str(file.resolve()))
    return out


def _method(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    return None


# --- tasks --------------------------------------------------------------------------------------


def task_files(layout: Layout, domain: str) -> list[Path]:
    """The domain's task set, as its `utils.py` names it (`DATA_DIR / "tau2" / "domains" / ... /
    "tasks.json"`); a directory of task files is read file by file."""
    path = _task_set_path(layout, domain) or layout.data / PACKAGE / "domains" / domain / "tasks.json"
    if path.is_dir():
        return sorted(path.glob("*.json"))
    return [path]


def _task_set_path(layout: Layout, domain: str) -> Path | None:
    tree = parse_module(layout.package / "domains" / domain / "utils.py")
    if isinstance(tree, str):
        return None
    values: dict[str, Path] = {"DATA_DIR": layout.data}
    found = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _path_value(node.value, values)
            if value is not None:
                values[node.targets[0].id] = value
                if node.targets[0].id.endswith("_TASK_SET_PATH"):
                    found = value
    return found


def _path_value(node: ast.expr, values: dict[str, Path]) -> Path | None:
    """`DATA_DIR / "tau2" / "domains"` with known names and string constants; else None."""
    if isinstance(node, ast.Name):
        return values.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left = _path_value(node.left, values)
        right = node.right
        if left is not None and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return left / right.value
    return None


def domain_tasks(layout: Layout, domain: str, shown_root: Path, evaluator: EvaluatorSites) -> TaskSet:
    out = TaskSet(package_dir=layout.package)
    kits = toolkits(layout, domain, out.problems, shown_root)
    signals = signal_tools(layout, domain)
    tools = frozenset(kit.ref(t) for kit in kits.values() for t in kit.tools)
    for kit in kits.values():
        out.tool_roots.update({kit.ref(t): kit.roots for t in kit.tools})
    for path in task_files(layout, domain):
        shown = display_path(path, shown_root)
        read = read_task_file(path, shown, out.problems)
        if read is None:
            continue
        text, data = read
        entries = (
            data if isinstance(data, list) else [data] if isinstance(data, dict) and "id" in data else None
        )
        if entries is None:
            out.problems.append(Problem(shown, 1, "task file holds neither a task nor a list of tasks"))
            continue
        lines = _id_lines(text)
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or "id" not in entry:
                out.problems.append(Problem(shown, 1, f"entry {i} is not a task object with an \"id\""))
                continue
            # ids repeat across domains ("0" in airline and retail): qualified by the domain, as
            # AgentDojo's by suite
            task = Task(
                f"{domain}/{entry['id']}", shown, lines.get(str(entry["id"]), 1), suite=domain, tools=tools
            )
            _criteria(task, entry, domain, kits, evaluator, out.problems, shown_root, signals)
            out.tasks.append(task)
    return out


def _id_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith('"id":'):
            value = stripped[5:].strip().rstrip(",").strip('"')
            out.setdefault(value, lineno)
    return out


def _criteria(task: Task, entry: dict[str, Any], domain: str, kits: dict[str, Toolkit],
              evaluator: EvaluatorSites, problems: list[Problem], shown_root: Path,
              signals: frozenset[str] = frozenset()) -> None:
    criteria = entry.get("evaluation_criteria")
    if criteria is None:
        return  # the evaluator rewards a task without criteria 1.0, from nothing
    if not isinstance(criteria, dict):
        problems.append(
            Problem(task.source, task.line, f"task {task.id}: evaluation_criteria is not an object")
        )
        task.sites.append(ReadSite("missing", "", task.source, task.line, 1, task.id, "missing",
                                   "bad evaluation_criteria"))
        return
    basis = criteria.get("reward_basis")
    basis = basis if isinstance(basis, list) else ["DB", "COMMUNICATE"]  # the Task model's default
    if "DB" in basis:
        for root in ("agent_db", "user_db") if "user" in kits else ("agent_db",):
            site = evaluator.db_hash.get(root)
            task.sites.append(
                site
                if site is not None
                else ReadSite(
                    "missing",
                    "",
                    task.source,
                    task.line,
                    1,
                    task.id,
                    "missing",
                    "no DB hash comparison",
                    scope=root,
                )
            )
    if "ENV_ASSERTION" in basis:
        for assertion in criteria.get("env_assertions") or []:
            if not isinstance(assertion, dict):
                continue
            env_type = str(assertion.get("env_type") or "assistant")
            func = assertion.get("func_name")
            kit = kits.get(env_type)
            if kit is None or not isinstance(func, str) or func not in kit.methods:
                where = f"the {domain} {env_type} toolkit" + (f" ({kit.cls})" if kit else " (none)")
                problems.append(
                    Problem(
                        task.source,
                        task.line,
                        f"task {task.id}: env assertion {func!r} is not a method of {where}",
                    )
                )
                root = TOOLKITS.get(env_type, ("", ""))[1]
                task.sites.append(ReadSite("missing", "", task.source, task.line, 1, str(func), "missing",
                                           f"no {env_type} assertion {func!r}", scope=root))
                continue
            task.graders.append(GraderRef(kit.file, f"{kit.cls}.{func}", TOOLKIT_STATE, (),
                                          display_path(kit.file, shown_root), kit.roots))
    for reward in ("ACTION", "COMMUNICATE", "NL_ASSERTION"):
        site = evaluator.record.get(reward)
        if reward in basis and site is not None:
            if reward == "ACTION":
                for action in criteria.get("actions") or []:
                    name = action.get("name", "?") if isinstance(action, dict) else "?"
                    task.sites.append(
                        ReadSite(
                            site.kind,
                            "",
                            site.file,
                            site.line,
                            1,
                            site.grader,
                            "signal" if name in signals else "action",  # a signal is no write to check
                            str(name),
                            source=site.source,
                        )
                    )
            else:
                task.sites.append(site)
