"""The profile API: the one module a benchmark profile imports, besides the analysis's discovery
patterns (`toollint.analysis.patterns`) and the contract model (`toollint.contracts.model`).

A profile (`toollint/profiles/<name>/`, listed in `toollint/profiles/builtin.py`, or a third party's
through the `toollint.profiles` entry-point group) is a `Profile`: data, plus optional parts, each a
typed loader a type checker follows (`tasks=_tasks` where `def _tasks() -> TaskEnumerator` imports the
profile's module only when a run needs it):

- `tasks`, a `TaskEnumerator`: `(package_dir, version=None, variants=(), display_root=None) ->
  TaskSet`; ValueError (one line) for a directory that is not the benchmark or a bad version. Asked by
  `toollint trace` and the `--ledger` step;
- `state_schemas`, a `StateSchemas`: `(python, services) -> {variant: JSON Schema}` of the
  environment, asked of the benchmark's interpreter by `toollint contracts check --python` (TL308);
- `draft_hints`, a `DraftHints`: `(tool_file, rel, tool_name) -> {adapter option: value}` (e.g. the
  variant registering the tool), for `toollint contracts draft`;
- `host_options`, a `HostOptions`: `(linted_files) -> {adapter option: value}` the linted files imply
  (e.g. the checkout they lie in), under the configuration's and the contract's own, for `--confirm`;
- `validation`, a `DriverFactory`: `(profile, services) -> BenchmarkDriver` (mutation subjects, gold
  replay, grading), for `toollint validate` and `bench/validate.py`.

The host adapter (`Profile.adapter`, a file in the profile's `host/` folder) runs inside the
benchmark's interpreter, where toollint is not importable: it cannot import this module, and
`HostAdapter` says what its `make_adapter(options, shims)` returns.

The generic halves (the tracer, the validation harness, the dynamic checker, the contract tools) take
the profile as an argument and hand its parts what they need (`Services`: the host gateway, the
contract loader); a profile never imports them. Below: the types a profile and the generic halves
exchange (read sites and state roots, tasks and task sets, problems; worker specs; mutation subjects,
path rows and fixes), the parts' protocols, and `Profile` itself.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from toollint.settings import Settings

if TYPE_CHECKING:
    from toollint.analysis.patterns import Patterns
    from toollint.contracts.model import Clause, Contract


class ProfileError(Exception):
    """A profile that cannot be used: unknown name, missing part. The message is one line."""


# --- read sites and state roots (the tracer's vocabulary) -------------------------------------------

PRE_PREFIX = "@pre"  # canonical prefix for the pre-run state: never written by the tool under test

SiteKind = Literal["state", "opaque", "whole_state", "record", "missing"]


@dataclass(frozen=True)
class ReadSite:
    """One place where grading reads something.

    kind: `state` a read of a state path; `opaque` state used whole (see `OpaqueUse`); `whole_state` a
    whole-database hash or comparison declared by the task (`reward_basis: DB`); `record` the agent
    record (its calls or final message), never state; `missing` a grader that could not be found or read.
    """

    kind: SiteKind
    path: str  # canonical state path; "" is the whole state
    file: str
    line: int
    col: int = 1
    grader: str = ""
    how: str = "read"  # read / compare / call / computed / deepdiff / reward_basis / action / signal / ...
    detail: str = ""  # the callee of an opaque call, the record parameter, why a grader is missing
    via: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()  # for whole-state diffs: paths the diff excludes
    source: str = ""  # the file on disk when `file` is a display path (SARIF needs the real one)
    # The part of the state the grader can see at all ("" all of it): an assertion of the user's
    # toolkit reads `user_db`, never the agent's database, even where its own reads cannot be resolved.
    scope: str = ""

    @property
    def live_state(self) -> bool:
        return self.kind in ("state", "opaque", "whole_state")

    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class StateRoots:
    """How one toolkit's code names the state, rewritten to the root its snapshot (and so every
    contract predicate) uses: a profile says so, e.g. an agent toolkit reads `self.db.lines`, which
    the snapshot holds at `agent_db.lines`. `rewrites` are (prefix, replacement) pairs, the first whose
    prefix matches wins; `root` is what the toolkit's whole state (`""`, `self`) becomes and the scope
    of everything it reads."""

    root: str
    rewrites: tuple[tuple[str, str], ...] = ()

    def rewrite(self, path: str) -> str:
        """A path someone typed in the code's form (`db.lines[*].x`), in the snapshot's; any other
        path is taken to be in the snapshot's form already and left as it is."""
        for prefix, replacement in self.rewrites:
            if is_under(path, prefix):
                return replacement + path[len(prefix):]
        return path

    def apply(self, path: str) -> str:
        """A path the toolkit's code reads or writes (everything under `self`), in the snapshot's form."""
        if path.startswith(PRE_PREFIX):
            rest = path[len(PRE_PREFIX):].lstrip(".")
            return PRE_PREFIX + "." + self.apply(rest) if rest else PRE_PREFIX + "." + self.root
        if path == "":
            return self.root
        for prefix, replacement in self.rewrites:
            if is_under(path, prefix):
                return replacement + path[len(prefix):]
        if is_under(path, self.root):
            return path
        return f"{self.root}.{path}"

    def site(self, site: ReadSite) -> ReadSite:
        """The site in canonical form, scoped to the root; agent-record sites are left as they are."""
        if site.kind == "record":
            return site
        return replace(site, path=self.apply(site.path) if site.kind != "missing" else site.path,
                       excluded=tuple(self.apply(e) for e in site.excluded), scope=self.root)


def is_under(path: str, prefix: str) -> bool:
    """`path` is `prefix` or lies below it (`a.b[*].c` is under `a.b` and under `a.b[*]`)."""
    if prefix == "":
        return True
    return path == prefix or (path.startswith(prefix) and path[len(prefix)] in ".[")


# DeepDiff path strings, as graders write them

_DEEPDIFF_STEP = re.compile(r"\.([A-Za-z_]\w*)|\[([^\]]*)\]")


def parse_deepdiff_path(text: str) -> str | None:
    """`root.calendar.events['7'].start_time` -> `calendar.events[*].start_time`; None if not a DeepDiff path.

    Attribute steps are fields; every `[...]` step selects an element (`[*]`). A `{}` in the text stands
    for an f-string placeholder."""
    if not text.startswith("root") or text == "root":
        return None
    rest = text[4:]
    parts: list[str] = []
    pos = 0
    while pos < len(rest):
        m = _DEEPDIFF_STEP.match(rest, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            parts.append(("." if parts else "") + m.group(1))
        else:
            parts.append("[*]")
        pos = m.end()
    return "".join(parts) if parts else None


# --- tasks (what a task enumerator returns) -------------------------------------------------------

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
    roots: StateRoots | None = None  # how its state paths map to the snapshot's root (a profile's)


@dataclass
class Task:
    id: str
    source: str  # file that defines the task
    line: int
    graders: list[GraderRef] = field(default_factory=list)
    sites: list[ReadSite] = field(default_factory=list)  # sites the task itself declares (JSON criteria)
    suite: str = ""
    version: str = ""
    # The tools of the task's environment (names, or `module:Class.method` references where names
    # repeat across domains); None when not known.
    tools: frozenset[str] | None = None
    # whole-state diff helpers of the suite (`WorkspaceDeepDiff`) -> the paths they exclude
    diff_exclusions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class TaskSet:
    tasks: list[Task] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # `module:Class.method` of a tool -> how its state paths map to the snapshot's root (the same
    # mapping its toolkit's graders got), so the tool's write set and the graders' reads meet.
    tool_roots: dict[str, StateRoots] = field(default_factory=dict)
    package_dir: Path | None = None  # the benchmark package the enumerator read, when there is one

    def extend(self, other: TaskSet) -> None:
        self.tasks += other.tasks
        self.problems += other.problems
        self.tool_roots.update(other.tool_roots)
        self.package_dir = self.package_dir or other.package_dir

    def roots_of(self, tool: str) -> StateRoots | None:
        """The roots of a tool given as `module:Class.method`, or by bare name when every tool of
        that name maps the same way."""
        if tool in self.tool_roots:
            return self.tool_roots[tool]
        if ":" in tool:
            return None
        found = {r for ref, r in self.tool_roots.items() if ref.rpartition(".")[2] == tool}
        return found.pop() if len(found) == 1 else None

    def canonical(self, tool: str, paths: Iterable[str]) -> list[str]:
        """Field paths given for `tool` in its code's form (`db.lines[*].x`), in the snapshot's form
        (`agent_db.lines[*].x`); paths in another form are left for the tracer to report."""
        roots = self.roots_of(tool)
        return [roots.rewrite(p) if roots is not None else p for p in paths]


# helpers shared by the enumerators


def display_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def parse_module(path: Path) -> ast.Module | str:
    """A benchmark's Python file as syntax, or why it cannot be read (one line, for a `Problem`)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        return f"does not parse: {exc.msg} (line {exc.lineno})"
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read: {exc}"


def package_module_file(package: Path, module: str, top: str) -> Path | None:
    """`top.a.b` -> `<package>/a/b.py` (or `a/b/__init__.py`), for `package` the directory of `top`."""
    parts = module.split(".")
    if parts[0] != top:
        return None
    base = package.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_constants(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return out


def read_task_file(path: Path, shown: str, problems: list[Problem]) -> tuple[str, Any] | None:
    """A task file's text and parsed JSON, or None with the reason added to `problems`."""
    try:
        text = path.read_text(encoding="utf-8")
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(shown, exc.lineno, f"task file is not valid JSON: {exc.msg}"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(shown, 1, f"task file cannot be read: {exc}"))
    return None


# --- the benchmark's interpreter ---------------------------------------------------------------------

@dataclass
class WorkerSpec:
    """Everything needed to start an identical worker again (for confirmation and replay)."""

    adapter: str  # a profile's name, a sibling adapter's (toolkit), a path to an adapter file, or "" (none)
    options: dict[str, Any] = field(default_factory=dict)
    python: str = sys.executable
    seed: int = 0
    env: dict[str, str] = field(default_factory=dict)  # extra environment variables
    cwd: str | None = None
    max_memory: int | None = None  # the host's address-space cap in bytes (`max_memory`); None: none

    def to_json(self) -> dict[str, Any]:
        out = {"adapter": self.adapter, "options": self.options, "python": self.python, "seed": self.seed}
        if self.max_memory:
            out["max_memory"] = self.max_memory
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerSpec:
        return cls(
            str(data["adapter"]),
            dict(data.get("options") or {}),
            str(data.get("python") or sys.executable),
            int(data.get("seed") or 0),
            max_memory=int(data.get("max_memory") or 0) or None,
        )


class GatewayError(RuntimeError):
    """The benchmark's interpreter could not answer; the message is one line."""


class Interpreter(Protocol):
    """A started interpreter of the benchmark with no adapter (`Services.interpreter`)."""

    def evaluate(self, expr: str, *, module: Path | str | None = None, names: dict[str, Any] | None = None,
                 failure: str = "") -> Any:
        """The JSON value of `expr` there; `module` (a host-side file) gives it its globals, `names` binds
        JSON values. GatewayError: `failure` (or the expression) and the cause."""
        ...


class Services(Protocol):
    """What toollint lends a profile's parts at run time (`toollint.dynamic.protocol.SERVICES`)."""

    @property
    def predicate_module(self) -> Path:
        """toollint's predicate module (stdlib only): a host-side helper loads it by path to score calls."""
        ...

    def evaluate(self, python: str, expr: str, *, module: Path | str | None = None,
                 names: dict[str, Any] | None = None, env: dict[str, str] | None = None, failure: str = "",
                 deadline: float | None = None) -> Any:
        """`Interpreter.evaluate` in an interpreter of its own (`env`: extra environment variables)."""
        ...

    def interpreter(self, python: str, *, env: dict[str, str] | None = None,
                    deadline: float | None = None) -> AbstractContextManager[Interpreter]:
        """A started plain interpreter, kept for several questions and closed on the way out."""
        ...

    def locate_package(self, python: str, package: str) -> Path | None:
        """Where `package` is installed for that interpreter (not imported), or None."""
        ...

    def load_contracts(self, directories: Sequence[Path]) -> list[Contract]:
        """The contracts in those directories (a profile's bundled library)."""
        ...


class HostAdapter(Protocol):
    """What a profile's host adapter's `make_adapter(options, shims)` returns, inside the benchmark's
    interpreter (`dynamic/host/host.py` calls it; the adapter cannot import this module, so this is the
    contract it is held to, not a base class: `tests/test_profiles.py` checks each adapter's methods).
    Every answer is JSON-ready data."""

    def hello(self) -> dict[str, Any]:
        """`{"adapter", "variant", "tools": [...], "capabilities": {...}}`."""
        ...

    def build(self, task_id: str | None) -> None:
        """A fresh environment of the variant the options name (of one task, when given)."""
        ...

    def snapshot(self) -> Any:
        """The environment's state (JSON already when the adapter sets `json_snapshots = True`)."""
        ...

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        """Call one tool the way the benchmark does: its reply, or its error (`error_type`, ...)."""
        ...

    def reset(self) -> None:
        """Back to a fresh environment."""
        ...


# --- validation (mutation subjects, paths, fixes) ------------------------------------------------------


class Mutated(Protocol):
    """A mutant, as a subject sees it: the tools whose behaviour it changes."""

    @property
    def tools(self) -> tuple[str, ...]: ...


@dataclass
class DynamicHost:
    """How to host a mutant of a subject: copy `package_dir` (the top-level package the module lives
    in) to a temp root, overwrite `relpath` inside it, and start a worker from `make_spec(root)`."""

    package_dir: Path
    relpath: Path  # the module file relative to package_dir's parent
    contracts: list[Contract]
    make_spec: Callable[[Path, Contract], WorkerSpec]  # overlay root, contract -> worker spec
    deadline: float = 30.0


@dataclass
class Subject:
    name: str
    path: Path
    module_name: str
    display: str = ""  # path shown in findings; the file path by default
    # Every finding the rules can make, at any confidence: the harness measures the rules' reach and
    # the oracles that check a low premise, not what a default run shows a maintainer.
    settings: Settings = field(default_factory=lambda: Settings(confidence="low"))
    host: DynamicHost | None = None
    clean: bool = False  # written to conform: every flag on the unmutated source is a false positive
    # The tool names the benchmark registers (None: every discovered tool is callable). A function no
    # registered tool reaches is dead code to the benchmark: its mutants are equivalent there.
    registered: frozenset[str] | None = None

    def reaches(self, m: Mutated) -> bool:
        return self.registered is None or any(t.rsplit(".", 1)[-1] in self.registered for t in m.tools)

    @property
    def shown(self) -> str:
        return self.display or str(self.path)


class FixError(ValueError):
    """A fix whose hunk does not match the file exactly once (the benchmark changed)."""


@dataclass(frozen=True)
class Fix:
    """One hunk: `old` (exactly once in `file`, relative to the package directory) becomes `new`."""

    tool: str  # the tool it repairs, `module:Class.method`
    file: str
    old: str
    new: str
    why: str = ""

    def fixed_source(self, package_dir: Path) -> str:
        path = package_dir / self.file
        text = path.read_text(encoding="utf-8")
        count = text.count(self.old)
        if count != 1:
            raise FixError(
                f"{path}: the fix for {self.tool} expects its hunk exactly once, found it {count} times"
            )
        return text.replace(self.old, self.new)

    def apply(self, overlay_package: Path, package_dir: Path) -> None:
        """Write the fixed file into an overlay copy of the package (never into `package_dir`)."""
        if overlay_package.resolve() == package_dir.resolve():
            raise FixError(f"refusing to patch the benchmark itself at {package_dir}")
        (overlay_package / self.file).write_text(self.fixed_source(package_dir), encoding="utf-8")


@dataclass
class Watch:
    """A call of a path to score against a contract clause (the independent predicate)."""

    clause: Clause

    def to_json(self) -> dict[str, Any]:
        return {"clause": self.clause.id, "kind": self.clause.kind, "predicate": self.clause.predicate_source}


@dataclass
class PathRow:
    """One path: `calls` as the driver runs them (`{"function", "args", ...}`), one of them watched."""

    kind: str  # gold, or the name of a constructed path (C1, C2, ...)
    task: str
    variant: str
    calls: list[dict[str, Any]]
    tool: str  # the defective tool's name
    watch: Watch | None = None

    def request(self) -> dict[str, Any]:
        calls = []
        for call in self.calls:
            call = dict(call)
            if call.pop("_watch", False) and self.watch is not None:
                call["watch"] = self.watch.to_json()
            calls.append(call)
        return {"task": self.task, "calls": calls}


# --- the parts ---------------------------------------------------------------------------------------


class TaskEnumerator(Protocol):
    """Every graded task of the benchmark at `package_dir`, read as syntax or data (nothing imported)."""

    def __call__(self, package_dir: Path, version: str | None = None, variants: Sequence[str] = (),
                 display_root: Path | None = None) -> TaskSet: ...


class StateSchemas(Protocol):
    """The environment's state JSON Schema per variant, asked of the benchmark's interpreter; empty when
    it cannot answer."""

    def __call__(self, python: str, services: Services) -> dict[str, Any]: ...


class DraftHints(Protocol):
    """What `contracts draft` writes into a draft's `adapter:` block for a tool (e.g. its variant)."""

    def __call__(self, tool_file: Path, rel: str, tool_name: str) -> dict[str, object]: ...


class HostOptions(Protocol):
    """The adapter options the linted files imply (e.g. the checkout they lie in)."""

    def __call__(self, linted: Sequence[str | Path]) -> dict[str, Any]: ...


class BenchmarkDriver(Protocol):
    """One benchmark family, for the validation harness. Failures are one-line exceptions:
    ValueError for bad input (a directory that is not the benchmark), RuntimeError for an
    interpreter that cannot answer."""

    label: str  # how messages name the benchmark
    # (tool module, variant) pairs the constructed-path positive control runs on (`bench/validate.py`)
    constructed_modules: tuple[tuple[str, str], ...]

    def check_package(self, package_dir: Path) -> str | None:
        """None when `package_dir` is the benchmark's package, else the one-line problem."""

    def registered_tools(self, python: str) -> frozenset[str]:
        """The tool names an agent can call, asked of the benchmark (ValueError when it cannot say)."""

    def subjects(self, package_dir: Path, python: str | None = None, modules: Sequence[str] | None = None,
                 registered: frozenset[str] | None = None) -> list[Subject]:
        """One mutation subject per tool module; hosted dynamically when `python` is given."""

    def variant_of(self, contract: Contract) -> str:
        """The variant (suite, domain) whose environment hosts a contract's tool."""

    def worker_spec(self, python: str, variant: str, env: dict[str, str] | None = None) -> WorkerSpec:
        """A host for one variant's environment."""

    def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
        """Each task's ground-truth calls: `{"task", "calls": [{"function", "args"}], "error"?}`."""

    def grade(self, python: str, variant: str, items: Sequence[dict[str, Any]],
              pythonpath: Path | None = None) -> list[dict[str, Any]]:
        """Each item's (`{"task", "calls"}`) verdict under the task's own grader: `{"verdict", "errors"}`;
        `pythonpath` puts an overlay of the package first."""

    def tool_module(self, package_dir: Path, module: str) -> tuple[Path, str]:
        """A tool module's file and its import name."""

    def for_package(self, package_dir: Path) -> BenchmarkDriver:
        """The driver bound to the benchmark at `package_dir` (a checkout, for a benchmark that is
        not installed); a driver for an installed package returns itself."""


class PathDriver(BenchmarkDriver, Protocol):
    """A driver that also runs whole paths (`toollint.validate.paths`): gold replay and constructed
    paths, each call with its requestor, graded by the benchmark's own evaluator."""

    def path_runner(self, python: str, pythonpath: Path | None = None
                    ) -> AbstractContextManager[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]]:
        """A warm interpreter (an overlay of the package first on its path when `pythonpath` is given)
        as `run(variant, rows)`: each row `{"task", "calls": [{"function", "args", "requestor"?,
        "alternatives"?, "args_from"?, "watch"?}]}` run and graded, answered `{"reward", "why",
        "errors", "watched": [{"kind", "status", "holds", "state_changed"}]}`."""


class GraderAuditDriver(BenchmarkDriver, Protocol):
    """A driver the grader audit (`toollint.validate.graders`) can run in full. Every method here is
    optional: the audit asks with `getattr` and says what it skipped without one.

    The audit's items to `grade` carry more keys a driver may honour: `"final": "gold" | "empty"` (the
    run's final answer: the task's own expected answer, or none); `"trace": true`, asking the answer
    for `"changed"` (per call: whether it changed the state), `"start_digest"` and `"digest"` (digests
    of the state as the task starts and as the run ends) and `"results"` (what each call returned), or
    `"trace": "final"` for `"digest"` alone;
    `"without_llm": true`, grading a task whose grader has an LLM-judge part on its other parts (the
    answer's `"unjudged"` names what was left out); `"verdict_only": true`, a run of which only the
    verdict is read unless it passes (then its digest and errors too): a driver may answer a run that
    certainly fails without the rest of its grading. `ground_truth`'s rows may say where
    each task is and which function grades it: `"source": {"file", "line"}`, `"grader": {"file",
    "line", "name"}`, and what the task asks (`"instruction"`: its prompt, the user's instructions)."""

    def audit_variants(self) -> list[str]:
        """The variants (suites, domains) a whole-benchmark audit covers."""

    def state_sample(self, python: str, variant: str) -> Any:
        """The variant's state (JSON) as its tasks start: where argument mutation harvests legal
        replacement values (another recipient, amount, date, title)."""


LayoutT = TypeVar("LayoutT")


class CheckoutDriver(Generic[LayoutT]):
    """The checkout half of a driver for a benchmark read from a checkout (not installed): `locate`
    (the profile's) reads a directory's layout or raises a one-line ValueError; `for_package` binds a
    driver of the same class to it. A profile's driver subclasses this and sets `locate`."""

    label = "benchmark"

    def __init__(self, profile: Profile, services: Services, layout: LayoutT | None = None) -> None:
        self.profile = profile
        self.services = services
        self.layout = layout

    @staticmethod
    def locate(path: Path) -> LayoutT:
        raise NotImplementedError

    def check_package(self, package_dir: Path) -> str | None:
        try:
            self.locate(package_dir)
        except ValueError as exc:
            return str(exc)
        return None

    def for_package(self, package_dir: Path) -> Any:
        return type(self)(self.profile, self.services, self.locate(package_dir))

    def _layout(self) -> LayoutT:
        if self.layout is None:
            raise ValueError(f"the {self.label} driver needs its checkout first (for_package)")
        return self.layout


class DriverFactory(Protocol):
    """A profile's `validation` part: its driver, given the profile and toollint's services."""

    def __call__(self, profile: Profile, services: Services) -> BenchmarkDriver: ...


# --- the profile ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """One benchmark family. Only `name` is required; every other part is optional."""

    name: str
    description: str = ""
    # -- picking the profile from a linted tree ---------------------------------------------------
    import_markers: tuple[str, ...] = ()  # top-level packages whose import identifies the family
    path_markers: tuple[str, ...] = ()  # fnmatch globs over a file's absolute posix path
    # -- static: discovery data read by toollint.analysis (its types live there) ------------------
    patterns: Patterns | None = None  # a third party's markers (a built-in's are its `patterns.py`)
    # -- dynamic (a path that does not exist counts as absent: a folder may be filled in stages) --
    adapter: Path | None = None  # host-side adapter file (stdlib + the benchmark only)
    contracts_dir: Path | None = None  # bundled contracts (one YAML file per tool)
    package: str | None = None  # the importable package its contracts cite (`source.package`)
    # The adapter option that names one variant of the benchmark (a suite, a domain); a contract may
    # list several under the plural (`<option>s`). Host groups, schemas and replay are per variant.
    variant_option: str | None = None
    # -- parts: loaders, each importing its module only when called ---------------------------------
    tasks: Callable[[], TaskEnumerator] | None = None
    state_schemas: Callable[[], StateSchemas] | None = None
    draft_hints: Callable[[], DraftHints] | None = None
    host_options: Callable[[], HostOptions] | None = None
    validation: Callable[[], DriverFactory] | None = None

    PARTS = ("tasks", "state_schemas", "draft_hints", "host_options", "validation")

    def part_names(self) -> list[str]:
        return [key for key in self.PARTS if getattr(self, key) is not None]

    def has_part(self, key: str) -> bool:
        return key in self.PARTS and getattr(self, key) is not None

    def _load(self, key: str, loader: Callable[[], Any] | None) -> Any:
        if loader is None:
            raise ProfileError(f"profile {self.name!r} has no {key!r} part")
        return loader()

    def task_enumerator(self) -> TaskEnumerator:
        return self._load("tasks", self.tasks)  # type: ignore[no-any-return]

    def state_schema_reader(self) -> StateSchemas:
        return self._load("state_schemas", self.state_schemas)  # type: ignore[no-any-return]

    def draft_hinter(self) -> DraftHints:
        return self._load("draft_hints", self.draft_hints)  # type: ignore[no-any-return]

    def host_option_reader(self) -> HostOptions:
        return self._load("host_options", self.host_options)  # type: ignore[no-any-return]

    def driver(self, services: Services) -> BenchmarkDriver:
        factory: DriverFactory = self._load("validation", self.validation)
        return factory(self, services)

    @property
    def adapter_file(self) -> Path | None:
        """The host adapter, when the profile has one on disk."""
        return self.adapter if self.adapter is not None and self.adapter.is_file() else None

    def variants_of(self, adapter_block: dict[str, Any]) -> list[str]:
        """The variants a contract's `adapter:` block names (`suite: x`, `suites: [x, y]`)."""
        if not self.variant_option:
            return []
        one = adapter_block.get(self.variant_option)
        many = adapter_block.get(self.variant_option + "s") or []
        found = [one] if isinstance(one, str) else []
        found += [v for v in many if isinstance(v, str) and v not in found] if isinstance(many, list) else []
        return found
