"""Benchmark profiles: everything toollint knows about one benchmark family, in one folder.

A profile is data plus lazily imported parts. Outside `toollint/profiles/` no module names a
benchmark; the core asks the profiles instead:

- static discovery (`toollint.analysis`) reads each profile's `patterns`: which decorators,
  annotations, base classes, registration calls and declared metadata mark a tool, a writer, a
  state root, a grader. Linting applies the patterns of every profile, so a tree that mixes
  frameworks is still read whole;
- the dynamic half (`--confirm`, `toollint replay`, the tracer, `toollint validate`) picks *one*
  profile for a run: `benchmark = "NAME"` in `[tool.toollint]`, else the first whose `detect`
  markers the linted tree shows (what it imports, which files it contains). That profile names its
  host adapter (a stdlib-only file loaded by path inside the benchmark's interpreter), its bundled
  contracts, and the modules holding its task/grader enumerator and replay drivers, imported only
  when a run needs them.

Third parties add a profile through the `toollint.profiles` entry-point group: the entry point
names a `Profile` object.

This module is the registry and the type; each built-in profile is a sub-package
(`toollint/profiles/<name>/__init__.py` defines `PROFILE`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toollint.analysis.patterns import Patterns

HERE = Path(__file__).parent

# Built-in profiles, in detection order (the first whose markers match wins).
BUILTIN: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    """One benchmark family. Only `name` is required; every other part is optional."""

    name: str
    description: str = ""
    # -- picking the profile from a linted tree ---------------------------------------------------
    import_markers: tuple[str, ...] = ()  # top-level packages whose import identifies the family
    path_markers: tuple[str, ...] = ()  # relative paths (globs) whose presence identifies it
    # -- static: discovery data read by toollint.analysis (its types live there) ------------------
    patterns: Patterns | None = None  # the family's markers (its `patterns.py` defines them)
    # -- dynamic ---------------------------------------------------------------------------------
    adapter: Path | None = None  # host-side adapter file (stdlib + the benchmark only)
    contracts_dir: Path | None = None  # bundled contracts (one YAML file per tool)
    # "module:attr" references, imported only when a run needs them
    parts: dict[str, str] = field(default_factory=dict)

    def load_part(self, key: str) -> Any:
        """Import one lazily named part (`tasks`, `graders`, `replay`, `constructed`, ...)."""
        ref = self.parts.get(key)
        if ref is None:
            raise KeyError(f"profile {self.name!r} has no {key!r} part")
        module_name, _, attr = ref.partition(":")
        value: Any = importlib.import_module(module_name)
        for name in attr.split(".") if attr else ():
            value = getattr(value, name)
        return value


def builtin_profiles() -> list[Profile]:
    return [importlib.import_module(f"{__name__}.{name}").PROFILE for name in BUILTIN]
