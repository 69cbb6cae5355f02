"""Benchmark profiles: everything toollint knows about one benchmark family, in one folder.

A profile is data plus lazily imported parts. Outside `toollint/profiles/` no module names a
benchmark; the core asks the profiles instead:

- static discovery (`toollint.analysis`) reads each profile's `patterns`: which decorators,
  annotations, base classes, registration calls and declared metadata mark a tool, a writer, a
  state root, a grader. Linting applies the patterns of every profile, so a tree that mixes
  frameworks is still read whole;
- the dynamic half (`--confirm`, `toollint replay`, the tracer, `toollint validate`) picks *one*
  profile for a run (`select_profile`): `benchmark = "NAME"` in `[tool.toollint]`, else the profile
  whose `detect` markers the most linted files show (what they import, where they sit). That profile
  names its host adapter (a stdlib-only file loaded by path inside the benchmark's interpreter), its
  bundled contracts, and the modules holding its task/grader enumerator and replay drivers, imported
  only when a run needs them.

Third parties add a profile through the `toollint.profiles` entry-point group: the entry point
names a `Profile` object (or a callable returning one). A plugin that fails to load, or that takes
a built-in profile's name, is skipped and reported (`registry_problems`), never fatal.

The parts a generic module may ask for (`Profile.load_part(KEY)`), each optional:

| key | what it is | who asks |
|---|---|---|
| `tasks` | `tasks(package_dir, version=None, variants=()) -> toollint.trace.tasks.TaskSet`; raises `ValueError` (one line) for a directory that is not the benchmark or a bad version | `toollint trace`, the `--ledger` step |
| `state_schemas` | `state_schemas(python) -> {variant: JSON Schema}` of the environment, asked of the benchmark's interpreter | `toollint contracts check --python` (TL308) |
| `draft_hints` | `draft_hints(tool_file, rel, tool_name) -> {adapter option: value}` (e.g. the variant registering the tool) | `toollint contracts draft` |
| `validation` | an object implementing `toollint.validate.drivers.BenchmarkDriver` (subjects, gold replay, grading) | `toollint validate`, `bench/validate.py` |
| `host_options` | `host_options(linted_files) -> {adapter option: value}`: what the linted files imply for the profile's adapter (e.g. the checkout they lie in), under the configuration's and the contract's own options | `--confirm` |

This module is the registry and the type; each built-in profile is a sub-package
(`toollint/profiles/<name>/__init__.py` defines `PROFILE`).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import importlib.metadata
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toollint.analysis.patterns import Patterns
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext

HERE = Path(__file__).parent
ENTRY_POINT_GROUP = "toollint.profiles"

# Built-in profiles, in registry order (ties in detection go to the earlier one).
BUILTIN: tuple[str, ...] = ("agentdojo", "tau2", "medagentbench", "toolsandbox")

# Bounds on detection: it reads the head of each file, and at most this many files of a directory.
DETECT_HEAD_BYTES = 64 * 1024
DETECT_MAX_FILES = 5000


class ProfileError(Exception):
    """A profile that cannot be used: unknown name, missing part. The message is one line."""


@dataclass(frozen=True)
class Profile:
    """One benchmark family. Only `name` is required; every other part is optional."""

    name: str
    description: str = ""
    # -- picking the profile from a linted tree ---------------------------------------------------
    import_markers: tuple[str, ...] = ()  # top-level packages whose import identifies the family
    path_markers: tuple[str, ...] = ()  # fnmatch globs over a file's absolute posix path
    # -- static: discovery data read by toollint.analysis (its types live there) ------------------
    patterns: Patterns | None = None  # the family's markers (its `patterns.py` defines them)
    # -- dynamic (a path that does not exist counts as absent: a folder may be filled in stages) --
    adapter: Path | None = None  # host-side adapter file (stdlib + the benchmark only)
    contracts_dir: Path | None = None  # bundled contracts (one YAML file per tool)
    package: str | None = None  # the importable package its contracts cite (`source.package`)
    # The adapter option that names one variant of the benchmark (a suite, a domain); a contract may
    # list several under the plural (`<option>s`). Host groups, schemas and replay are per variant.
    variant_option: str | None = None
    # "module:attr" references, imported only when a run needs them
    parts: dict[str, str] = field(default_factory=dict)

    def load_part(self, key: str) -> Any:
        """Import one lazily named part (`tasks`, `state_schemas`, `validation`, ...)."""
        ref = self.parts.get(key)
        if ref is None:
            raise ProfileError(f"profile {self.name!r} has no {key!r} part")
        module_name, _, attr = ref.partition(":")
        value: Any = importlib.import_module(module_name)
        for name in attr.split(".") if attr else ():
            value = getattr(value, name)
        return value

    def has_part(self, key: str) -> bool:
        return key in self.parts

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


# --- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registry:
    profiles: tuple[Profile, ...]
    problems: tuple[str, ...]  # plugins skipped, one line each

    def names(self) -> list[str]:
        return [p.name for p in self.profiles]


def builtin_profiles() -> list[Profile]:
    return [importlib.import_module(f"{__name__}.{name}").PROFILE for name in BUILTIN]


def _entry_points() -> Iterable[Any]:
    try:
        return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # noqa: BLE001 - broken distribution metadata must not stop a lint run
        return ()


@lru_cache(maxsize=1)
def registry() -> Registry:
    """Built-in profiles, then every `toollint.profiles` entry point (cached; `reset_registry()`)."""
    profiles = builtin_profiles()
    problems: list[str] = []
    taken = {p.name for p in profiles}
    for ep in sorted(_entry_points(), key=lambda e: str(getattr(e, "name", ""))):
        where = f"entry point {getattr(ep, 'name', '?')!r} ({getattr(ep, 'value', '?')})"
        try:
            value = ep.load()
            if callable(value) and not isinstance(value, Profile):
                value = value()
        except Exception as exc:  # noqa: BLE001 - a third-party plugin's bug is reported, not raised
            problems.append(f"{where} failed to load: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(value, Profile):
            problems.append(f"{where} is a {type(value).__name__}, not a toollint Profile")
            continue
        if value.name in taken:
            problems.append(f"{where} names profile {value.name!r}, which is already registered; skipped")
            continue
        taken.add(value.name)
        profiles.append(value)
    return Registry(tuple(profiles), tuple(problems))


def reset_registry() -> None:
    """Forget the cached registry (tests that register plugins)."""
    registry.cache_clear()


def all_profiles() -> list[Profile]:
    return list(registry().profiles)


def registry_problems() -> list[str]:
    return list(registry().problems)


def find_profile(name: str | None) -> Profile | None:
    """The profile called `name`, or None (no error): for data that may name a non-profile benchmark."""
    if not name:
        return None
    return next((p for p in registry().profiles if p.name == name), None)


def get_profile(name: str) -> Profile:
    """The profile called `name`; ProfileError with a "did you mean" otherwise."""
    found = find_profile(name)
    if found is not None:
        return found
    raise ProfileError(unknown_profile_message(name))


def unknown_profile_message(name: str) -> str:
    names = registry().names()
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown benchmark {name!r}{hint} (profiles: {', '.join(names) or 'none'})"


def profile_for_package(package: str | None) -> Profile | None:
    """The profile whose contracts cite `package` (a contract's `source.package`)."""
    if not package:
        return None
    return next((p for p in registry().profiles if p.package == package), None)


def bundled_contract_dirs() -> list[Path]:
    """Every profile's bundled contract directory that exists, in registry order."""
    return [p.contracts_dir for p in registry().profiles if p.contracts_dir is not None and p.contracts_dir.is_dir()]


# --- picking the run's profile ------------------------------------------------------------------------


def _import_pattern(packages: Sequence[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(p) for p in packages)
    return re.compile(rf"^[ \t]*(?:from[ \t]+(?:{names})(?:\.[\w.]+)?[ \t]+import\b|import[ \t]+(?:{names})\b)",
                      re.MULTILINE)


def _python_files(paths: Iterable[str | Path]) -> Iterable[Path]:
    count = 0
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules"))
                for name in sorted(files):
                    if name.endswith(".py"):
                        count += 1
                        if count > DETECT_MAX_FILES:
                            return
                        yield Path(root) / name
        elif path.suffix == ".py" or path.is_file():
            count += 1
            if count > DETECT_MAX_FILES:
                return
            yield path


def detection_scores(paths: Iterable[str | Path], profiles: Sequence[Profile] | None = None) -> dict[str, int]:
    """Per profile, how many of the Python files under `paths` show one of its markers: an import of
    one of its `import_markers`, or an absolute path matching one of its `path_markers`."""
    profiles = list(profiles if profiles is not None else registry().profiles)
    patterns = {p.name: _import_pattern(p.import_markers) for p in profiles if p.import_markers}
    scores = {p.name: 0 for p in profiles}
    for file in _python_files(paths):
        where = Path(os.path.abspath(file)).as_posix()
        head: str | None = None
        for p in profiles:
            if any(fnmatch.fnmatchcase(where, glob) for glob in p.path_markers):
                scores[p.name] += 1
                continue
            pattern = patterns.get(p.name)
            if pattern is None:
                continue
            if head is None:
                try:
                    with open(file, "rb") as fh:
                        head = fh.read(DETECT_HEAD_BYTES).decode("utf-8", "replace")
                except OSError:
                    head = ""
            if pattern.search(head):
                scores[p.name] += 1
    return scores


def detect_profile(paths: Iterable[str | Path], profiles: Sequence[Profile] | None = None) -> Profile | None:
    """The profile the most files under `paths` show markers of (registry order breaks ties), or None."""
    profiles = list(profiles if profiles is not None else registry().profiles)
    scores = detection_scores(paths, profiles)
    best = max(profiles, key=lambda p: scores.get(p.name, 0), default=None)
    return best if best is not None and scores.get(best.name, 0) > 0 else None


def select_profile(benchmark: str | None, paths: Iterable[str | Path] = (), where: str = "") -> Profile | None:
    """The run's profile: the one `benchmark` names, else the one detected from `paths` (or None).

    An unknown `benchmark` is a ProfileError naming `where` it was set (a config file and key)."""
    if benchmark:
        found = find_profile(benchmark)
        if found is None:
            raise ProfileError(f"{where}: {unknown_profile_message(benchmark)}" if where
                               else unknown_profile_message(benchmark))
        return found
    return detect_profile(paths)


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """The first step of every `toollint check` run: `benchmark = "NAME"` must name a registered
    profile, in a static run too (which never picks one), so a typo is said, not silently kept."""
    from toollint.errors import ConfigError

    name, config = ctx.settings.benchmark, ctx.settings.config_file
    if name and find_profile(name) is None:
        where = f"'benchmark' in {config} [tool.toollint]" if config else "'benchmark' in [tool.toollint]"
        raise ConfigError(f"{where}: {unknown_profile_message(name)}")
    return result
