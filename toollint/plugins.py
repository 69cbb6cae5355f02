"""The one reader of toollint's entry points: third-party benchmark profiles register in the
`toollint.profiles` group (the entry point names a `toollint.profiles.api.Profile`, or a callable
returning one). The analysis reads their discovery patterns and the profile registry the rest.

Only distributions whose `entry_points.txt` names the group are opened: `importlib.metadata.entry_points()`
reads every installed distribution's metadata, which costs a linter's whole start-up budget in a large
environment, and in the common case (no plugin) `importlib.metadata` is never imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Protocol

ENTRY_POINT_GROUP = "toollint.profiles"


class EntryPoint(Protocol):
    """What toollint uses of an `importlib.metadata.EntryPoint`."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str: ...

    def load(self) -> object: ...


def declaring_distributions() -> list[Path]:
    """The metadata folders of the distributions on `sys.path` that declare `toollint.profiles` entry
    points (their names carry their versions: the results cache keys on them)."""
    declaring: list[Path] = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                text = Path(entry or ".", name, "entry_points.txt").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if f"[{ENTRY_POINT_GROUP}]" in text:
                declaring.append(Path(entry or ".", name))
    return declaring


def profile_entry_points() -> list[EntryPoint]:
    """Entry points of the `toollint.profiles` group on `sys.path`, one per name (the first found)."""
    declaring = declaring_distributions()
    if not declaring:
        return []
    from importlib.metadata import PathDistribution

    found: list[EntryPoint] = []
    seen: set[str] = set()
    for path in declaring:
        try:
            points = PathDistribution(path).entry_points.select(group=ENTRY_POINT_GROUP)
        except Exception:  # noqa: BLE001, S112 - broken distribution metadata must not stop a lint run
            continue
        for ep in points:
            if ep.name not in seen:
                seen.add(ep.name)
                found.append(ep)
    return found
