"""Typed settings: `[tool.toollint]` and its `confirm` and `trace` tables.

Each table is a dataclass whose fields *are* its schema: the key a field is read from (the field
name with `_` spelled as the table's separator, or `meta(key=...)`), its type (the annotation), and
an optional extra `meta(check=...)` (a positive deadline, a known reset mode). A new key is one
more field. `parse_table` reads any of them
from a TOML table: an unknown key is an error with "did you mean", a wrong type names the key and the
type it must have. `toollint.config` finds the files and resolves paths; nothing else reads a
table by hand.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, Union

from toollint.errors import ConfigError

T = TypeVar("T")
Check = Callable[[Any], "str | None"]  # a problem with an already well-typed value, or None


def meta(*, key: str | None = None, check: Check | None = None, selectors: bool = False) -> dict[str, Any]:
    """A settings field's metadata: its TOML key when not derived from the field name ("" for a field
    no table sets), an extra check, and whether its strings are rule selectors (`toollint.config`
    checks those against the registry)."""
    return {"key": key, "check": check, "selectors": selectors}


def _positive(value: Any) -> str | None:
    return None if value is None or value > 0 else "must be greater than 0"


_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
MIN_MEMORY = 64 << 20  # below this no interpreter starts: a number of MiB given as bytes, say


def parse_size(value: int | str) -> int:
    """Bytes from `1073741824`, `"1 GiB"`, `"512M"`, `"2GB"` (units are powers of 1024); ValueError
    saying what is wrong otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", value, re.IGNORECASE) \
        if isinstance(value, str) else None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif match is not None:
        size = int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()])
    else:
        raise ValueError('must be a size such as "2 GiB" or a number of bytes')
    if size < MIN_MEMORY:
        raise ValueError(f"must be at least {MIN_MEMORY >> 20} MiB (an interpreter needs that much to start)")
    return size


UNLIMITED = "unlimited"  # `max_memory = "unlimited"`: no cap on the host's memory


def _size(value: Any) -> str | None:
    if value is None or value == UNLIMITED:
        return None
    try:
        parse_size(value)
    except ValueError as exc:
        return str(exc)
    return None


def _non_empty(value: Any) -> str | None:
    return "must not be empty" if value == "" else None


CONFIDENCE_LEVELS = ("low", "medium", "high")


def _confidence(value: Any) -> str | None:
    return None if value in CONFIDENCE_LEVELS else f"must be one of {', '.join(CONFIDENCE_LEVELS)}"


def _references(value: Any) -> str | None:
    """`"pkg.mod:func"` / `"pkg.mod:Class.method"` entries: a module, a colon, a qualified name."""
    bad = [v for v in value or () if not re.fullmatch(r"[\w.]+:[A-Za-z_][\w.]*", v)]
    return (
        f'entries must look like "pkg.module:function" or "pkg.module:Class.method", not {bad[0]!r}'
        if bad
        else None
    )


def _one_of(*choices: str) -> Check:
    def check(value: Any) -> str | None:
        return (
            None if value is None or value in choices else f"must be one of {', '.join(map(repr, choices))}"
        )

    return check


@dataclass
class ConfirmSettings:
    """`[tool.toollint.confirm]`: how `--confirm` reaches the benchmark (docs/confirm.md)."""

    SEPARATOR: ClassVar[str] = "-"  # kebab-case as in every table; snake_case is accepted with a warning
    TABLE: ClassVar[str] = "[tool.toollint.confirm]"
    # Keys the toolkit adapter reads; passed to the host only when set.
    ADAPTER_KEYS: ClassVar[tuple[str, ...]] = (
        "factory",
        "sys_path",
        "state",
        "reset",
        "tools",
        "clock_modules",
        "classes",
        "load",
        "scenario",
        "tool_classes",
        "call",
    )

    adapter: str | None = None  # a benchmark profile's name, toolkit, or a path to an adapter file
    python: str | None = None  # the benchmark's interpreter (--python wins)
    # seconds per request before the worker is killed
    deadline: float | None = field(default=None, metadata=meta(check=_positive))
    # seconds for the host to start (interpreter, benchmark import, hello); default 120, at least deadline
    startup_deadline: float | None = field(default=None, metadata=meta(check=_positive))
    # a cap on the host's memory (address space, RLIMIT_AS): bytes, or a size such as "2 GiB"
    max_memory: int | str | None = field(default=None, metadata=meta(check=_size))
    jobs: int | None = field(default=None, metadata=meta(check=_positive))  # hosts run side by side
    contract_dirs: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)  # passed as is to the adapter
    factory: str | None = None
    sys_path: list[str] | None = None
    state: str | None = None
    reset: str | None = field(default=None, metadata=meta(check=_one_of("rebuild", "deepcopy")))
    tools: list[str] | None = None
    clock_modules: list[str] | None = None
    # Instead of a factory: toolkit classes built with no arguments, one instance each (API classes),
    # each then given `scenario` (default {}) by its loader method `load` (`_load_scenario`), if set.
    classes: list[str] | None = None
    load: str | None = None
    scenario: dict[str, Any] | None = None
    # Tools that are classes whose static method `call` (default `invoke`) takes the state first:
    # `Tool.invoke(data, ...)`; the state is what `factory` returns (a data loader).
    tool_classes: list[str] | None = None
    call: str | None = None

    def adapter_options(self) -> dict[str, Any]:
        """The toolkit-adapter keys that were set, for the host."""
        return {k: getattr(self, k) for k in self.ADAPTER_KEYS if getattr(self, k) is not None}


@dataclass
class TraceSettings:
    """`[tool.toollint.trace]`: the task sources `--ledger`/`--report` trace over (docs/trace.md)."""

    SEPARATOR: ClassVar[str] = "-"
    TABLE: ClassVar[str] = "[tool.toollint.trace]"

    # The package directory the benchmark profile's task enumerator reads, or true to find it with the
    # confirm python; the profile is `benchmark` in [tool.toollint], else the one whose package it is.
    package: str | bool | None = None
    version: str | None = None
    suites: list[str] = field(default_factory=list)
    task_files: list[str] = field(default_factory=list)
    toolkit: list[str] = field(default_factory=list)
    tasks: dict[str, str | list[str]] = field(
        default_factory=dict
    )  # task id -> "file.py:function" (or a list)
    state_params: dict[str, str] | None = None  # grader parameter -> canonical state prefix
    record_params: list[str] | None = None  # grader parameters holding the agent record


@dataclass
class Settings:
    """`[tool.toollint]` (the rules, files and tools a run covers) with its sub-tables, plus where
    it was read from. One `Settings` applies to the files below its configuration file."""

    SEPARATOR: ClassVar[str] = "-"
    TABLE: ClassVar[str] = "[tool.toollint]"

    select: list[str] = field(default_factory=lambda: ["TL1", "TL4", "TL9"], metadata=meta(selectors=True))
    ignore: list[str] = field(default_factory=list, metadata=meta(selectors=True))
    extend_select: list[str] = field(default_factory=list, metadata=meta(selectors=True))
    per_file_ignores: dict[str, list[str]] = field(
        default_factory=dict, metadata=meta(selectors=True)
    )  # glob: codes
    # The least confidence a finding's premise needs to be reported (docs/rules.md, "Confidence"): by
    # default a premise resting on a type or a name alone is left out.
    confidence: str = field(default="medium", metadata=meta(check=_confidence))
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True  # skip what .gitignore files ignore when walking directories
    tool_decorators: list[str] = field(default_factory=list)  # extra decorator names marking tools
    # "pkg.mod:Class.method" references
    tools: list[str] = field(default_factory=list, metadata=meta(check=_references))
    # "pkg.mod:Class": every public method is a tool
    tool_classes: list[str] = field(default_factory=list, metadata=meta(check=_references))
    state_roots: list[str] = field(
        default_factory=list
    )  # accessor calls and parameter names that reach state
    # grader functions no profile pattern finds: "pkg.mod:func" / "pkg.mod:Class.method"
    graders: list[str] = field(default_factory=list, metadata=meta(check=_references))
    contract_dirs: list[str] = field(
        default_factory=list
    )  # relative ones are resolved against the config file
    # The benchmark profile of dynamic runs (toollint.profiles); default: detected from the linted tree.
    # Checked against the registered profiles where a run picks its profile.
    benchmark: str | None = field(default=None, metadata=meta(check=_non_empty))
    # Where the results cache lives (relative to the configuration file's folder); default
    # `.toollint_cache` in the project root. Not part of what a cached result is keyed by.
    cache_dir: str | None = field(default=None, metadata=meta(check=_non_empty))
    confirm: ConfirmSettings = field(default_factory=ConfirmSettings)
    trace: TraceSettings = field(default_factory=TraceSettings)
    # Not keys: where the settings came from. SARIF paths and globs are relative to project_root.
    project_root: Path | None = field(default=None, metadata=meta(key=""))
    config_file: Path | None = field(default=None, metadata=meta(key=""))
    # Warnings about the file that do not stop a run (a snake_case key), said once by the run.
    notes: list[str] = field(default_factory=list, metadata=meta(key=""))

    def __post_init__(self) -> None:
        # Programs (tests, benches) may give the sub-tables as plain dicts; they are checked as a
        # configuration file's tables are.
        if isinstance(self.confirm, Mapping):
            self.confirm = parse_table(ConfirmSettings, self.confirm, "Settings(confirm=...):")
        if isinstance(self.trace, Mapping):
            self.trace = parse_table(TraceSettings, self.trace, "Settings(trace=...):")

    def tool_refs_for(self, module_name: str) -> set[str]:
        """Qualified names ("Class.method" or "function") configured as tools in this module."""
        return _refs_in(self.tools, module_name)

    def tool_classes_for(self, module_name: str) -> set[str]:
        """Class names configured in `tool-classes` that live in this module."""
        return _refs_in(self.tool_classes, module_name)

    def grader_refs_for(self, module_name: str) -> set[str]:
        """Qualified names configured in `graders` that live in this module."""
        return _refs_in(self.graders, module_name)


def _refs_in(refs: list[str], module_name: str) -> set[str]:
    """The qualified names of "pkg.mod:Qual" references whose module is `module_name`."""
    out = set()
    for ref in refs:
        mod, _, qual = ref.partition(":")
        if qual and (
            module_name == mod or module_name.endswith("." + mod) or mod.endswith("." + module_name)
        ):
            out.add(qual)
    return out


# --------------------------------------------------------------------------------------------------
# Reading a table


def table_keys(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The TOML keys of a settings class, each with its field."""
    out = {}
    for f in dataclasses.fields(cls):
        name = f.metadata.get("key")
        if name == "":  # not read from configuration
            continue
        out[name or f.name.replace("_", cls.SEPARATOR)] = f  # type: ignore[attr-defined]
    return out


def parse_table(cls: type[T], table: Mapping[str, Any], source: str, notes: list[str] | None = None) -> T:
    """An instance of the settings class `cls` from a TOML table; errors name `source` (the file)
    and the table: `'deadline' in /p/pyproject.toml [tool.toollint.confirm] must be a number`. Keys
    are kebab-case; a key spelt with `_` instead is read, and a warning saying so goes to `notes`."""
    where = f"{source} {cls.TABLE}"  # type: ignore[attr-defined]
    keys = table_keys(cls)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for name, value in table.items():
        f = keys.get(name)
        if f is None and isinstance(name, str) and (kebab := name.replace("_", "-")) in keys:
            if kebab in table:
                raise ConfigError(f"'{name}' and '{kebab}' in {where} are the same key; keep '{kebab}'")
            f = keys[kebab]
            if notes is not None:
                notes.append(f"'{name}' in {where} is spelt '{kebab}' (keys are kebab-case; "
                             f"the snake_case spelling is still read)")
        if f is None:
            raise ConfigError(f"unknown key '{name}' in {where}{_did_you_mean(str(name), keys, cls)}")
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            if not isinstance(value, Mapping):
                raise ConfigError(f"'{name}' in {where} must be a table, not {describe_value(value)}")
            values[f.name] = parse_table(tp, value, source, notes)  # type: ignore[arg-type]
            continue
        if not conforms(value, tp):
            raise ConfigError(_type_error(name, value, tp, where))
        check = f.metadata.get("check")
        problem = check(value) if check else None
        if problem:
            raise ConfigError(f"'{name}' in {where} {problem} (got {value!r})")
        values[f.name] = float(value) if tp in (float, float | None) and isinstance(value, int) else value
    return cls(**values)


def _type_error(name: str, value: Any, tp: Any, where: str) -> str:
    """The key (or, in a table of values, the entry) that has the wrong type, and what it must be."""
    if typing.get_origin(tp) is dict and isinstance(value, Mapping):
        value_tp = typing.get_args(tp)[1]
        for entry, item in value.items():
            if not conforms(item, value_tp):
                return (
                    f"'{name}.\"{entry}\"' in {where} must be {describe_type(value_tp)}, "
                    f"not {describe_value(item)}"
                )
    return f"'{name}' in {where} must be {describe_type(tp)}, not {describe_value(value)}"


def _did_you_mean(name: str, keys: Mapping[str, Any], cls: type) -> str:
    import difflib  # only a misspelt key pays for it

    spelled = name.replace("_" if cls.SEPARATOR == "-" else "-", cls.SEPARATOR)  # type: ignore[attr-defined]
    close = difflib.get_close_matches(spelled, list(keys), n=1, cutoff=0.6)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; known keys: {', '.join(keys)}"


def conforms(value: Any, tp: Any) -> bool:
    """Whether a TOML value has the annotated type (bool is not a number; an int is a float)."""
    if tp is Any:
        return True
    if tp is type(None):
        return value is None
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return any(conforms(value, arg) for arg in typing.get_args(tp))
    if origin is list:
        (item,) = typing.get_args(tp)
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if origin is dict:
        key_tp, value_tp = typing.get_args(tp)
        return isinstance(value, Mapping) and all(
            conforms(k, key_tp) and conforms(v, value_tp) for k, v in value.items()
        )
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, tp)


def describe_type(tp: Any) -> str:
    """`list[str]` as "a list of strings", for error messages."""
    if tp is Any:
        return "anything"
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(describe_type(a) for a in typing.get_args(tp) if a is not type(None))
    if origin is list:
        return f"a list of {_plural(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"a table of {_plural(typing.get_args(tp)[1])}"
    return {str: "a string", bool: "a boolean (true or false)", int: "an integer", float: "a number"}.get(
        tp, getattr(tp, "__name__", str(tp))
    )


def _plural(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_plural(a) for a in typing.get_args(tp) if a is not type(None))
    if origin is list:
        return f"lists of {_plural(typing.get_args(tp)[0])}"
    if origin is dict:
        return f"tables of {_plural(typing.get_args(tp)[1])}"
    return {str: "strings", bool: "booleans", int: "integers", float: "numbers"}.get(tp, "values")


def describe_value(value: Any) -> str:
    if isinstance(value, list):
        kinds = sorted({describe_value(v) for v in value})
        return f"a list holding {', '.join(kinds)}" if kinds else "an empty list"
    if isinstance(value, Mapping):
        return "a table"
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )
