"""Benchmark profiles: everything toollint knows about one benchmark family, in one folder.

A profile is data plus lazily imported parts, typed by the profile API (`toollint.profiles.api`, the
one module a profile imports besides the discovery patterns and the contract model). Outside
`toollint/profiles/` no module names a benchmark; the core asks the profiles instead:

- static discovery (`toollint.analysis`) reads each profile's `patterns.py`, beside the agent
  frameworks' patterns (`toollint.analysis.frameworks`): which decorators, annotations, base classes,
  registration calls and declared metadata mark a tool, a writer, a state root, a grader. Linting
  applies every family's patterns, so a tree that mixes frameworks is still read whole;
- the dynamic half (`--confirm`, `toollint replay`, the tracer, `toollint validate`) picks *one*
  profile for a run (`select_profile`): `benchmark = "NAME"` in `[tool.toollint]`, else the profile
  whose `detect` markers the most linted files show (what they import, where they sit). That profile
  names its host adapter (a stdlib-only file in its `host/` folder, loaded by path inside the
  benchmark's interpreter), its bundled contracts, and its parts (`toollint.profiles.api` lists them),
  imported only when a run needs them.

Registration is one mechanism: the built-in profiles are the folders `builtin.py` lists (data), and a
third party adds one through the `toollint.profiles` entry-point group (`toollint.plugins`, the one
reader): the entry point names a `Profile` object (or a callable returning one). A plugin that fails to
load, or that takes a built-in profile's name, is skipped and reported (`registry_problems`), never
fatal.

This module is the registry; each built-in profile is a sub-package (`toollint/profiles/<name>/__init__.py`
defines `PROFILE`).
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from toollint.plugins import EntryPoint, profile_entry_points
from toollint.profiles.api import Profile, ProfileError
from toollint.profiles.builtin import BENCHMARKS

__all__ = ["Profile", "ProfileError"]  # the profile API's, for the registry's callers

HERE = Path(__file__).parent

# Bounds on detection: it reads the head of each file, and at most this many files of a directory.
DETECT_HEAD_BYTES = 64 * 1024
DETECT_MAX_FILES = 5000


# --- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registry:
    profiles: tuple[Profile, ...]
    problems: tuple[str, ...]  # plugins skipped, one line each

    def names(self) -> list[str]:
        return [p.name for p in self.profiles]


def builtin_profiles() -> list[Profile]:
    return [importlib.import_module(f"{__name__}.{name}").PROFILE for name in BENCHMARKS]


def _entry_points() -> Iterable[EntryPoint]:
    return profile_entry_points()


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
    if name == NO_PROFILE:
        raise ProfileError(f'benchmark = "{NO_PROFILE}" uses no profile, and this needs one')
    raise ProfileError(unknown_profile_message(name))


# `benchmark = "none"`: the run uses no profile at all (no detection, no profile's adapter, hints or
# bundled contracts for derived oracles): a benchmark set up by hand or by `toollint confirm init`.
NO_PROFILE = "none"


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
    return [
        p.contracts_dir
        for p in registry().profiles
        if p.contracts_dir is not None and p.contracts_dir.is_dir()
    ]


# --- picking the run's profile ------------------------------------------------------------------------


def _import_pattern(packages: Sequence[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(p) for p in packages)
    return re.compile(
        rf"^[ \t]*(?:from[ \t]+(?:{names})(?:\.[\w.]+)?[ \t]+import\b|import[ \t]+(?:{names})\b)",
        re.MULTILINE,
    )


def _python_files(paths: Iterable[str | Path]) -> Iterable[Path]:
    count = 0
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(
                    d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")
                )
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


def detection_scores(
    paths: Iterable[str | Path], profiles: Sequence[Profile] | None = None
) -> dict[str, int]:
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


def select_profile(
    benchmark: str | None, paths: Iterable[str | Path] = (), where: str = ""
) -> Profile | None:
    """The run's profile: the one `benchmark` names, else the one detected from `paths` (or None).

    An unknown `benchmark` is a ProfileError naming `where` it was set (a config file and key)."""
    if benchmark == NO_PROFILE:
        return None
    if benchmark:
        found = find_profile(benchmark)
        if found is None:
            raise ProfileError(f"{where}: {unknown_profile_message(benchmark)}" if where
                               else unknown_profile_message(benchmark))
        return found
    return detect_profile(paths)
