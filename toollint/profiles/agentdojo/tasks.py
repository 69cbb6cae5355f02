"""AgentDojo's task enumerator: every user task of a suite at a benchmark version, with its graders.

Read as syntax (nothing of the benchmark is imported): `default_suites/v*/<suite>/user_tasks.py`,
each task a class registered with `@task_suite.register_user_task` (version 1.0.0) or
`@task_suite.update_user_task(version)`; for a benchmark version the task is its latest definition at
or below that version, as AgentDojo's `get_version_compatible_items` does. Graders: `utility` and
`utility_from_traces`, whose `post_environment` is the live state, `pre_environment` the state before
the run, and `model_output`/`traces` the agent record. The suite's `task_suite.py` gives the names in
its `TOOLS` list and its `partial(DeepDiff, exclude_paths=[...])` whole-state diff helpers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toollint.profiles.api import (
    PRE_PREFIX,
    GraderRef,
    Problem,
    Task,
    TaskSet,
    display_path,
    module_constants,
    parse_deepdiff_path,
)

Version = tuple[int, ...]

STATE_PARAMS = {"post_environment": "", "pre_environment": PRE_PREFIX}
RECORD_PARAMS = ("model_output", "traces")
GRADERS = ("utility", "utility_from_traces")


def tasks(package_dir: Path, version: str | None = None, variants: Sequence[str] = (),
          display_root: Path | None = None) -> TaskSet:
    """The profile's `tasks` part: `agentdojo_tasks` over a package directory, the version as text
    (`1.2.2`, `v1_2_2`). ValueError (one line) for a directory that is not the package or a bad version."""
    if not (package_dir / "default_suites").is_dir():
        raise ValueError(f"{package_dir}: not an agentdojo package (no default_suites/)")
    try:
        parsed = parse_version(version) if version else None
    except ValueError:
        raise ValueError(f"--version {version!r} is not like 1.2.2") from None
    return agentdojo_tasks(package_dir, parsed, tuple(variants), display_root)


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
        out.problems.append(
            Problem(str(package_dir), 1, "not an AgentDojo package: no default_suites directory")
        )
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
            shown = display_path(tasks_file, shown_root)
            try:
                tree = ast.parse(tasks_file.read_text(encoding="utf-8"), filename=str(tasks_file))
            except SyntaxError as exc:
                out.problems.append(Problem(shown, exc.lineno or 1, f"task file does not parse: {exc.msg}"))
                continue
            except (OSError, UnicodeDecodeError) as exc:
                out.problems.append(Problem(shown, 1, f"task file cannot be read: {exc}"))
                continue
            constants = module_constants(tree)
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
        shown = display_path(tasks_file, shown_root)
        tools, exclusions = suite_info[suite]
        task = Task(
            f"{suite}/user_task_{number}",
            shown,
            node.lineno,
            suite=suite,
            version=version_text(chosen),
            tools=tools,
            diff_exclusions=exclusions,
        )
        own = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        graders = [g for g in GRADERS if g in own] or ["utility"]
        for g in graders:
            task.graders.append(GraderRef(tasks_file, f"{node.name}.{g}", STATE_PARAMS, RECORD_PARAMS, shown))
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
        problems.append(Problem(display_path(path, shown_root), getattr(exc, "lineno", 1) or 1,
                                f"suite file cannot be read, tools of suite {suite!r} unknown: {exc}"))
        return None, {}
    constants = module_constants(tree)
    tools: frozenset[str] | None = None
    exclusions: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
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
