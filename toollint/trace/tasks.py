"""Task enumerators: every graded task of a benchmark, with the graders that decide its verdict.

Three shapes, all read as syntax or data (nothing of the benchmark is imported):

- class-based tasks (AgentDojo): `default_suites/v*/<suite>/user_tasks.py`, each task a class
  registered with `@task_suite.register_user_task` (version 1.0.0) or
  `@task_suite.update_user_task(version)`; for a benchmark version the task is its latest definition at
  or below that version, as AgentDojo's `get_version_compatible_items` does. Graders: `utility` and
  `utility_from_traces`.
- JSON task files (tau2-bench shape): entries with `id` and `evaluation_criteria` holding
  `env_assertions` (`func_name` resolved to a method of the toolkit classes), `actions` (agent record)
  and `reward_basis` (`DB` = whole-database hash comparison). When `reward_basis` is given, only the
  criteria it lists count.
- configured: `[tool.toollint.trace] tasks = { "task id" = "path/to/file.py:Class.method" }`.

Problems (a file that does not parse, a grader that does not exist) become `Problem`s with one clear
line each; the task is kept, with a `missing` site, so it is traced as `unresolved` and never dropped.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toollint.settings import TraceSettings
from toollint.trace.readsites import (
    PRE_PREFIX,
    GraderError,
    ModuleCache,
    ReadSite,
    grader_sites,
    parse_deepdiff_path,
)

Version = tuple[int, ...]

AGENTDOJO_STATE = {"post_environment": "", "pre_environment": PRE_PREFIX}
AGENTDOJO_RECORD = ("model_output", "traces")
AGENTDOJO_GRADERS = ("utility", "utility_from_traces")
TOOLKIT_STATE = {"self": ""}  # tau2 toolkits: `self.db.users` is `db.users`, as for its tools


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class GraderRef:
    """A function whose reads decide (part of) a task's verdict."""

    file: Path
    qualname: str
    state_params: Mapping[str, str]
    record_params: tuple[str, ...] = ()
    display: str = ""  # the path shown in reports; the file path when empty


@dataclass
class Task:
    id: str
    source: str  # file that defines the task
    line: int
    graders: list[GraderRef] = field(default_factory=list)
    sites: list[ReadSite] = field(default_factory=list)  # sites the task itself declares (JSON criteria)
    suite: str = ""
    version: str = ""
    tools: frozenset[str] | None = None  # tool names of the task's environment; None when not known
    # whole-state diff helpers of the suite (`WorkspaceDeepDiff`) -> the paths they exclude
    diff_exclusions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class TaskSet:
    tasks: list[Task] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def extend(self, other: TaskSet) -> None:
        self.tasks += other.tasks
        self.problems += other.problems


def task_sites(task: Task, cache: ModuleCache, problems: list[Problem] | None = None) -> list[ReadSite]:
    """Every read site of a task's grading. A grader that cannot be read gives a `missing` site."""
    sites = list(task.sites)
    for ref in task.graders:
        try:
            found = grader_sites(cache, ref.file, ref.qualname, ref.state_params, ref.record_params,
                                 ref.display or str(ref.file))
            sites += [_with_exclusions(s, task.diff_exclusions) for s in found]
            cycles = sorted({s.detail for s in found if s.detail.endswith("(helper cycle)")})
            if cycles and problems is not None:
                problems.append(Problem(ref.display or str(ref.file), found[0].line if found else 1,
                                        f"task {task.id}: grader {ref.qualname} calls helpers in a cycle "
                                        f"({', '.join(cycles)}); what they read is traced as unresolved"))
        except GraderError as exc:
            if problems is not None:
                problems.append(Problem(ref.display or str(ref.file), exc.line,
                                        f"task {task.id}: grader {ref.qualname}: {exc}"))
            sites.append(ReadSite("missing", "", ref.display or str(ref.file), 1, 1, ref.qualname, "missing",
                                  str(exc)))
    return sites


def _with_exclusions(site: ReadSite, exclusions: Mapping[str, tuple[str, ...]]) -> ReadSite:
    if site.kind == "opaque" and site.path == "" and site.detail in exclusions:
        return replace(site, excluded=exclusions[site.detail])
    return site


# --- AgentDojo ---------------------------------------------------------------------------------------

_VERSION_DIR = re.compile(r"^v(\d+(?:_\d+)*)$")
_TASK_CLASS = re.compile(r"^UserTask(\d+)$")


def _dir_version(name: str) -> Version | None:
    m = _VERSION_DIR.match(name)
    if m is None:
        return None
    parts = tuple(int(x) for x in m.group(1).split("_"))
    return (parts + (0, 0, 0))[:3]


def version_text(v: Version) -> str:
    return ".".join(map(str, v))


def parse_version(text: str) -> Version:
    parts = tuple(int(x) for x in text.lstrip("v").replace("_", ".").split("."))
    return (parts + (0, 0, 0))[:3]


def agentdojo_tasks(
    package_dir: Path,
    version: Version | None = None,
    suites: Sequence[str] = (),
    display_root: Path | None = None,
) -> TaskSet:
    """The user tasks of an AgentDojo package (`.../agentdojo`) at `version` (default: the latest)."""
    out = TaskSet()
    suites_dir = package_dir / "default_suites"
    if not suites_dir.is_dir():
        out.problems.append(Problem(str(package_dir), 1, "not an AgentDojo package: no default_suites directory"))
        return out
    shown_root = display_root or package_dir.parent
    # (suite, task number) -> {version: (file, class node)}
    defs: dict[tuple[str, int], dict[Version, tuple[Path, ast.ClassDef]]] = {}
    for vdir in sorted(suites_dir.iterdir()):
        dir_version = _dir_version(vdir.name)
        if dir_version is None or not vdir.is_dir():
            continue
        for tasks_file in sorted(vdir.glob("*/user_tasks.py")):
            suite = tasks_file.parent.name
            if suites and suite not in suites:
                continue
            shown = _display(tasks_file, shown_root)
            try:
                tree = ast.parse(tasks_file.read_text(encoding="utf-8"), filename=str(tasks_file))
            except SyntaxError as exc:
                out.problems.append(Problem(shown, exc.lineno or 1, f"task file does not parse: {exc.msg}"))
                continue
            except (OSError, UnicodeDecodeError) as exc:
                out.problems.append(Problem(shown, 1, f"task file cannot be read: {exc}"))
                continue
            constants = _module_constants(tree)
            for node in tree.body:
                if not isinstance(node, ast.ClassDef):
                    continue
                registered = _registration(node, constants)
                m = _TASK_CLASS.match(node.name)
                if registered is None or m is None:
                    continue
                defs.setdefault((suite, int(m.group(1))), {})[registered] = (tasks_file, node)
    if not defs:
        return out
    target = version or max(v for versions in defs.values() for v in versions)
    suite_info = {suite: _suite_info(suites_dir, suite, out.problems, shown_root) for suite, _ in defs}
    for (suite, number), versions in sorted(defs.items()):
        compatible = [v for v in versions if v <= target]
        if not compatible:
            continue
        chosen = max(compatible)
        tasks_file, node = versions[chosen]
        shown = _display(tasks_file, shown_root)
        tools, exclusions = suite_info[suite]
        task = Task(f"{suite}/user_task_{number}", shown, node.lineno, suite=suite, version=version_text(chosen),
                    tools=tools, diff_exclusions=exclusions)
        own = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        graders = [g for g in AGENTDOJO_GRADERS if g in own] or ["utility"]
        for g in graders:
            task.graders.append(GraderRef(tasks_file, f"{node.name}.{g}", AGENTDOJO_STATE, AGENTDOJO_RECORD, shown))
        out.tasks.append(task)
    return out


def _suite_info(suites_dir: Path, suite: str, problems: list[Problem], shown_root: Path
                ) -> tuple[frozenset[str] | None, dict[str, tuple[str, ...]]]:
    """From the first version's `<suite>/task_suite.py`: the names in its `TOOLS` list, and its
    `X = partial(DeepDiff, exclude_paths=[...])` diff helpers with the paths they exclude."""
    path = next((p for p in sorted(suites_dir.glob(f"v*/{suite}/task_suite.py"))), None)
    if path is None:
        return None, {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(_display(path, shown_root), getattr(exc, "lineno", 1) or 1,
                                f"suite file cannot be read, tools of suite {suite!r} unknown: {exc}"))
        return None, {}
    constants = _module_constants(tree)
    tools: frozenset[str] | None = None
    exclusions: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        if name == "TOOLS" and isinstance(value, ast.List):
            tools = frozenset(e.id for e in value.elts if isinstance(e, ast.Name))
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "partial":
            for kw in value.keywords:
                if kw.arg == "exclude_paths":
                    raw = constants.get(kw.value.id) if isinstance(kw.value, ast.Name) else None
                    if raw is None:
                        try:
                            raw = ast.literal_eval(kw.value)
                        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                            raw = []
                    paths = (parse_deepdiff_path(x) for x in raw if isinstance(x, str))
                    exclusions[name] = tuple(p for p in paths if p is not None)
    return tools, exclusions


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def _registration(cls: ast.ClassDef, constants: Mapping[str, Any]) -> Version | None:
    """The version a task class is registered at, from its decorator; None if it is not a task."""
    for dec in cls.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "register_user_task":
            return (1, 0, 0)
        if name == "update_user_task" and isinstance(dec, ast.Call) and dec.args:
            arg = dec.args[0]
            value: Any = constants.get(arg.id) if isinstance(arg, ast.Name) else None
            if value is None:
                try:
                    value = ast.literal_eval(arg)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    return None
            if isinstance(value, tuple) and all(isinstance(x, int) for x in value):
                return (value + (0, 0, 0))[:3]
    return None


# --- JSON task files (tau2-bench shape) ----------------------------------------------------------------


def toolkit_methods(files: Iterable[Path], cache: ModuleCache, problems: list[Problem],
                    display_root: Path | None = None) -> dict[str, GraderRef]:
    """Methods of the toolkit classes by name: where `env_assertions` function names resolve."""
    out: dict[str, GraderRef] = {}
    for path in files:
        shown = _display(path, display_root) if display_root else str(path)
        try:
            mod = cache.module(path)
        except GraderError as exc:
            problems.append(Problem(shown, exc.line, f"toolkit file skipped: {exc}"))
            continue
        for cls, methods in mod.index.methods.items():
            for name in methods:
                out.setdefault(name, GraderRef(path, f"{cls}.{name}", TOOLKIT_STATE, (), shown))
        for name in mod.index.functions:
            out.setdefault(name, GraderRef(path, name, TOOLKIT_STATE, (), shown))
    return out


def json_tasks(task_files: Iterable[Path], methods: Mapping[str, GraderRef],
               display_root: Path | None = None) -> TaskSet:
    out = TaskSet()
    for path in task_files:
        shown = _display(path, display_root) if display_root else str(path)
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            out.problems.append(Problem(shown, exc.lineno, f"task file is not valid JSON: {exc.msg}"))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            out.problems.append(Problem(shown, 1, f"task file cannot be read: {exc}"))
            continue
        entries = data.get("tasks") if isinstance(data, dict) else data
        if not isinstance(entries, list):
            out.problems.append(Problem(shown, 1, "task file holds neither a list of tasks nor {\"tasks\": [...]}"))
            continue
        lines = _id_lines(text)
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or "id" not in entry:
                out.problems.append(Problem(shown, 1, f"entry {i} is not a task object with an \"id\""))
                continue
            out.tasks.append(_json_task(entry, shown, lines.get(str(entry["id"]), 1), methods, out.problems))
    return out


_ID_KEY = re.compile(r'"id"\s*:\s*"?([^",}\s]+)')


def _id_lines(text: str) -> dict[str, int]:
    """Line of each task id in the file, so ledger rows point into it."""
    out: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if '"id"' in line:
            for m in _ID_KEY.finditer(line):
                out.setdefault(m.group(1), lineno)
    return out


def _json_task(entry: dict[str, Any], shown: str, line: int, methods: Mapping[str, GraderRef],
               problems: list[Problem]) -> Task:
    task_id = str(entry["id"])
    task = Task(task_id, shown, line)
    criteria = entry.get("evaluation_criteria") or {}
    if not isinstance(criteria, dict):
        problems.append(Problem(shown, line, f"task {task_id}: evaluation_criteria is not an object"))
        task.sites.append(ReadSite("missing", "", shown, line, 1, task_id, "missing", "bad evaluation_criteria"))
        return task
    basis = criteria.get("reward_basis")

    def counts(name: str) -> bool:
        return not isinstance(basis, list) or name in basis

    if counts("DB") and isinstance(basis, list):
        task.sites.append(ReadSite("whole_state", "", shown, line, 1, task_id, "reward_basis", "DB"))
    if counts("ACTION"):
        for action in criteria.get("actions") or []:
            name = action.get("name", "?") if isinstance(action, dict) else "?"
            task.sites.append(ReadSite("record", "", shown, line, 1, task_id, "action", str(name)))
    if counts("COMMUNICATE") and criteria.get("communicate_info"):
        task.sites.append(ReadSite("record", "", shown, line, 1, task_id, "communicate", "final message"))
    if counts("ENV_ASSERTION"):
        for assertion in criteria.get("env_assertions") or []:
            func = assertion.get("func_name") if isinstance(assertion, dict) else None
            ref = methods.get(func) if isinstance(func, str) else None
            if ref is None:
                problems.append(Problem(shown, line, f"task {task_id}: env assertion {func!r} is not a method of "
                                                     "any toolkit class"))
                task.sites.append(ReadSite("missing", "", shown, line, 1, str(func), "missing",
                                           f"no grader function {func!r}"))
            else:
                task.graders.append(ref)
    return task


# --- configured ------------------------------------------------------------------------------------


def configured_tasks(config: TraceSettings, root: Path) -> TaskSet:
    """`[tool.toollint.trace] tasks = {id = "file.py:Qual.name"}`, with optional `state-params`
    (name -> canonical prefix; default: `post_environment`, `env`, `db`, `self` are the live state and
    `pre_environment` the state before the run)
    and `record-params` (default `["model_output", "traces", "messages"]`)."""
    out = TaskSet()
    mapping = config.tasks  # typed: toollint.settings checked it is a table of strings or lists
    state = config.state_params or {"post_environment": "", "pre_environment": PRE_PREFIX, "env": "",
                                    "db": "", "self": ""}
    record = tuple(config.record_params or ("model_output", "traces", "messages"))
    for task_id, ref in mapping.items():
        refs = [ref] if isinstance(ref, str) else ref
        task = Task(str(task_id), "[tool.toollint.trace]", 1)
        for one in refs if isinstance(refs, list) else []:
            file, sep, qual = str(one).rpartition(":")
            if not sep or not file or not qual:
                out.problems.append(Problem("[tool.toollint.trace]", 1,
                                            f"task {task_id}: {one!r} is not \"path/to/file.py:function\""))
                task.sites.append(ReadSite("missing", "", "[tool.toollint.trace]", 1, 1, str(one), "missing"))
                continue
            task.graders.append(GraderRef(root / file, qual, state, record, file))
        out.tasks.append(task)
    return out


# --- all sources of one run ------------------------------------------------------------------------


def locate_package(python: str, package: str = "agentdojo") -> Path | None:
    """The directory of `package` in another interpreter, found without importing it."""
    code = (f"import importlib.util, os; s = importlib.util.find_spec({package!r}); "
            "print(os.path.dirname(s.origin) if s and s.origin else '')")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return Path(text) if out.returncode == 0 and text else None


def tasks_from_config(config: TraceSettings, root: Path, python: str | None = None) -> TaskSet:
    """Every task source `[tool.toollint.trace]` names: `agentdojo` (a package dir, or true to find it
    with `python`), `version`, `suites`, `task-files` with `toolkit` files, and configured `tasks`."""
    out = TaskSet()
    cache = ModuleCache()
    agentdojo = config.agentdojo
    if agentdojo:
        package = (root / str(agentdojo)) if isinstance(agentdojo, str) else (
            locate_package(python) if python else None)
        if package is None:
            out.problems.append(Problem("[tool.toollint.trace]", 1, "agentdojo = true needs the benchmark's "
                                        "python ([tool.toollint.confirm] python) to find the package"))
        else:
            version = config.version
            out.extend(agentdojo_tasks(package, parse_version(str(version)) if version else None,
                                       tuple(config.suites)))
    task_files = [root / str(p) for p in config.task_files]
    if task_files:
        methods = toolkit_methods([root / str(p) for p in config.toolkit], cache, out.problems, root)
        out.extend(json_tasks(task_files, methods, root))
    if config.tasks:
        out.extend(configured_tasks(config, root))
    return out
