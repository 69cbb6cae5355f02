"""Every family's discovery patterns, compiled once per process (`all_patterns()`): the built-in
benchmark profiles' (`toollint/profiles/<name>/patterns.py`, for each name the registry data
`toollint/profiles/builtin.py` lists), the agent frameworks' (`toollint.analysis.frameworks`), and
third-party profiles' (`Profile.patterns`, through `toollint.plugins`). Applied together, in family
name order (the first family to name a marker gives it its family).

The profiles' files are run by path, not imported by name: importing them would run the profile
registry first (~40 ms a process that only lints), and the analysis sits below the profiles.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from toollint.analysis.frameworks import FRAMEWORKS
from toollint.analysis.patterns import CompiledPatterns, Patterns, compile_patterns
from toollint.plugins import profile_entry_points

PROFILES_DIR = Path(__file__).resolve().parents[1] / "profiles"


def builtin_benchmarks() -> tuple[str, ...]:
    """The registry data's `BENCHMARKS`: the built-in benchmark profiles' folder names."""
    found = getattr(_run_file("toollint.profiles.builtin", PROFILES_DIR / "builtin.py"), "BENCHMARKS", ())
    return tuple(name for name in found if isinstance(name, str))


def builtin_family_patterns() -> list[Patterns]:
    """The built-in benchmark profiles' and the frameworks' patterns, in family name order."""
    out = list(FRAMEWORKS)
    for name in builtin_benchmarks():
        path = PROFILES_DIR / name / "patterns.py"
        found = getattr(_run_file(f"toollint.profiles.{name}.patterns", path), "PATTERNS", None) \
            if path.is_file() else None
        if isinstance(found, Patterns):
            out.append(found if found.family else Patterns(family=name).merge(found))
    return sorted(out, key=lambda p: p.family)


def _run_file(module_name: str, path: Path) -> Any:
    """A module of the profiles package run from its file (or the imported module, when it is). It is
    not registered in `sys.modules`: an import of the profile later gets its own copy of the data."""
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plugin_family_patterns(known: set[str]) -> list[Patterns]:
    """`Profile.patterns` of third-party profiles (the `toollint.profiles` entry-point group)."""
    out: list[Patterns] = []
    for ep in profile_entry_points():
        try:
            profile = ep.load()
        except Exception:  # noqa: BLE001, S112 -- a broken plugin must not stop linting; it adds nothing
            continue
        patterns = getattr(profile, "patterns", None)
        name = str(getattr(profile, "name", ep.name))
        if isinstance(patterns, Patterns) and name not in known:
            out.append(patterns if patterns.family else Patterns(family=name).merge(patterns))
    return out


@lru_cache(maxsize=1)
def all_patterns() -> CompiledPatterns:
    """Every family's patterns (built-in first, then plugins), compiled once per process."""
    builtin = builtin_family_patterns()
    return compile_patterns([*builtin, *plugin_family_patterns({p.family for p in builtin})])
