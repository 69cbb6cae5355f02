"""Task enumerators: every graded task of a benchmark, with the graders that decide its verdict.

All read as syntax or data (nothing of the benchmark is imported):

- a benchmark profile's enumerator (its `tasks` part, `toollint.profiles`), for benchmarks whose
  tasks are code: e.g. task classes with grader methods, read from the benchmark's package dir;
- JSON task files (the `evaluation_criteria` shape): entries with `id` and `evaluation_criteria`
  holding `env_assertions` (`func_name` resolved to a method of the toolkit classes), `actions`
  (agent record) and `reward_basis` (`DB` = whole-database hash comparison). When `reward_basis` is
  given, only the criteria it lists count;
- configured: `[tool.toollint.trace] tasks = { "task id" = "path/to/file.py:Class.method" }`.

Problems (a file that does not parse, a grader that does not exist) become `Problem`s with one clear
line each; the task is kept, with a `missing` site, so it is traced as `unresolved` and never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toollint.profiles.api import (
    PRE_PREFIX,
    GraderRef,
    Problem,
    Profile,
    ReadSite,
    Task,
    TaskSet,
    display_path,
    read_task_file,
)
from toollint.settings import TraceSettings
from toollint.trace.readsites import GraderError, ModuleCache, grader_sites

TOOLKIT_STATE = {"self": ""}  # toolkit classes: `self.db.users` is `db.users`, as for their tools


def task_sites(task: Task, cache: ModuleCache, problems: list[Problem] | None = None) -> list[ReadSite]:
    """Every read site of a task's grading. A grader that cannot be read gives a `missing` site."""
    sites = list(task.sites)
    for ref in task.graders:
        try:
            found = grader_sites(cache, ref.file, ref.qualname, ref.state_params, ref.record_params,
                                 ref.display or str(ref.file), ref.roots)
            sites += [_with_exclusions(s, task.diff_exclusions) for s in found]
            cycles = sorted({s.detail for s in found if s.detail.endswith("(helper cycle)")})
            said = f"grader {ref.qualname} calls helpers in a cycle ({', '.join(cycles)})"
            # One warning per grader, naming the first task: a grader shared by every task says it once.
            if cycles and problems is not None and not any(said in p.message for p in problems):
                problems.append(Problem(ref.display or str(ref.file), found[0].line if found else 1,
                                        f"task {task.id}: {said}; what they read is traced as unresolved"))
        except GraderError as exc:
            if problems is not None:
                problems.append(Problem(ref.display or str(ref.file), exc.line,
                                        f"task {task.id}: grader {ref.qualname}: {exc}"))
            sites.append(ReadSite("missing", "", ref.display or str(ref.file), 1, 1, ref.qualname, "missing",
                                  str(exc), scope=ref.roots.root if ref.roots is not None else ""))
    return sites


def _with_exclusions(site: ReadSite, exclusions: Mapping[str, tuple[str, ...]]) -> ReadSite:
    if site.kind == "opaque" and site.path == "" and site.detail in exclusions:
        return replace(site, excluded=exclusions[site.detail])
    return site


# --- helpers shared by the enumerators (the profiles' too) ------------------------------------


# --- JSON task files (the evaluation_criteria shape) ---------------------------------------------------


def toolkit_methods(files: Iterable[Path], cache: ModuleCache, problems: list[Problem],
                    display_root: Path | None = None) -> dict[str, GraderRef]:
    """Methods of the toolkit classes by name: where `env_assertions` function names resolve."""
    out: dict[str, GraderRef] = {}
    for path in files:
        shown = display_path(path, display_root) if display_root else str(path)
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
        shown = display_path(path, display_root) if display_root else str(path)
        read = read_task_file(path, shown, out.problems)
        if read is None:
            continue
        text, data = read
        entries = data.get("tasks") if isinstance(data, dict) else data
        if not isinstance(entries, list):
            out.problems.append(
                Problem(shown, 1, 'task file holds neither a list of tasks nor {"tasks": [...]}')
            )
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
        task.sites.append(
            ReadSite("missing", "", shown, line, 1, task_id, "missing", "bad evaluation_criteria")
        )
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
                problems.append(
                    Problem(
                        shown,
                        line,
                        f"task {task_id}: env assertion {func!r} is not a method of any toolkit class",
                    )
                )
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


def profile_tasks(
    profile: Profile,
    package_dir: Path,
    version: str | None = None,
    variants: Sequence[str] = (),
    display_root: Path | None = None,
) -> TaskSet:
    """A profile's tasks from its package directory; ValueError (one line) when the directory is not
    the benchmark, the version is malformed or the profile has no task enumerator."""
    if not profile.has_part("tasks"):
        raise ValueError(f"profile {profile.name!r} has no task enumerator; give --tasks FILE or --grader")
    enumerate_tasks = profile.task_enumerator()
    return enumerate_tasks(package_dir, version=version, variants=tuple(variants), display_root=display_root)


def tasks_from_config(config: TraceSettings, root: Path, python: str | None = None,
                      benchmark: str | None = None) -> TaskSet:
    """Every task source `[tool.toollint.trace]` names: `package` (the directory a benchmark profile's
    task enumerator reads, or true to locate the profile's package with `python`) with `version` and
    `suites`; `task-files` with `toolkit` files; configured `tasks`. The profile is `benchmark` (the
    `[tool.toollint]` key), else the one whose package the directory is."""
    out = TaskSet()
    cache = ModuleCache()
    if config.package:
        found = _package_tasks(config, root, python, benchmark)
        if isinstance(found, str):
            out.problems.append(Problem("[tool.toollint.trace]", 1, found))
        else:
            out.extend(found)
    task_files = [root / str(p) for p in config.task_files]
    if task_files:
        methods = toolkit_methods([root / str(p) for p in config.toolkit], cache, out.problems, root)
        out.extend(json_tasks(task_files, methods, root))
    if config.tasks:
        out.extend(configured_tasks(config, root))
    return out


def _package_tasks(
    config: TraceSettings, root: Path, python: str | None, benchmark: str | None
) -> TaskSet | str:
    """The tasks of `package = ...`, or the one-line problem."""
    from toollint.dynamic.protocol import GatewayError, locate_package
    from toollint.profiles import ProfileError, get_profile, profile_for_package

    value = config.package
    named = Path(str(value)).name if isinstance(value, str) else None
    try:
        profile = get_profile(benchmark) if benchmark else profile_for_package(named)
    except ProfileError as exc:
        return str(exc)
    if profile is None:
        return f"package = {value!r}: say which benchmark it is (benchmark = \"NAME\" in [tool.toollint])"
    package: Path | None = root / value if isinstance(value, str) else None
    if package is None:
        if not python or not profile.package:
            return ("package = true needs the benchmark's python ([tool.toollint.confirm] python) to find "
                    "the package")
        try:
            package = locate_package(python, profile.package)
        except GatewayError as exc:
            return f"package = true: {exc}"
        if package is None:
            return f"package = true: {profile.package!r} is not installed for {python}"
    try:
        return profile_tasks(profile, package, config.version, tuple(config.suites))
    except ValueError as exc:
        return str(exc)


# --- with nothing configured: the benchmark the linted files are -------------------------------------

NO_SOURCE = "[tool.toollint.trace]"  # where a problem of the default task source points: where to fix it


def has_source(config: TraceSettings) -> bool:
    """Whether `[tool.toollint.trace]` names a task source of its own."""
    return bool(config.package or config.task_files or config.tasks)


def linted_tasks(linted: Sequence[str | Path], config: TraceSettings, python: str | None = None,
                 benchmark: str | None = None, display_root: Path | None = None) -> TaskSet:
    """With no task source configured: every task of the benchmark the linted files belong to. The run's
    profile (`benchmark`, else detected from the files) enumerates the tasks of the package directory
    the files lie in (the topmost ancestor named as the profile's package, holding `__init__.py`: a
    checkout's `src/<package>`), else of the package `python` has installed. Finding none is one problem
    saying why and what to set, and an empty task set."""
    from toollint.profiles import ProfileError, select_profile

    out = TaskSet()

    def nothing(why: str) -> TaskSet:
        out.problems.insert(0, Problem(NO_SOURCE, 1, why))
        return out

    try:
        profile = select_profile(benchmark, linted, where="[tool.toollint] benchmark")
    except ProfileError as exc:
        return nothing(str(exc))
    if profile is None:
        return nothing("the linted files are of no benchmark toollint has a profile for; name the tasks "
                       "in [tool.toollint.trace] (`task-files` and `toolkit`, or `tasks`; docs/trace.md)")
    if not profile.has_part("tasks") or not profile.package:
        return nothing(f"the {profile.name} profile does not enumerate tasks; name them in "
                       "[tool.toollint.trace] (`task-files` and `toolkit`, or `tasks`; docs/trace.md)")
    package = package_dir_of(profile.package, linted)
    if package is None:
        package = _installed(profile.package, python, out.problems)
    if package is None:
        where = f"is not installed for {python}" if python else "is not located without --python"
        return nothing(f"the linted files lie in no {profile.package!r} package directory and "
                       f"{profile.package!r} {where}; lint the benchmark's checkout, give --python P "
                       f"with {profile.package} installed, or set [tool.toollint.trace] "
                       f"package = \"path/to/{profile.package}\"")
    try:
        return profile_tasks(profile, package, config.version, tuple(config.suites), display_root)
    except ValueError as exc:
        return nothing(f"{exc}; set [tool.toollint.trace] package = \"path/to/{profile.package}\"")


def package_dir_of(package: str, linted: Sequence[str | Path]) -> Path | None:
    """The directory of the package `package` the first linted path lies in (the topmost ancestor of
    that name holding `__init__.py`, so a nested folder of the same name is not taken for it)."""
    for raw in linted:
        here = Path(raw).resolve()
        found = [p for p in (here, *here.parents) if p.name == package and (p / "__init__.py").is_file()]
        if found:
            return found[-1]
    return None


def _installed(package: str, python: str | None, problems: list[Problem]) -> Path | None:
    if not python:
        return None
    from toollint.dynamic.protocol import GatewayError, locate_package

    try:
        return locate_package(python, package)
    except GatewayError as exc:
        problems.append(Problem(NO_SOURCE, 1, f"{package} not located with {python}: {exc}"))
        return None
