"""toollint as a flake8 plugin (`flake8.extension`, code prefix `TL`).

A thin front end over the same engine as `toollint check`: flake8 hands over the tree it parsed and
the file's lines, `engine.lint_tree` runs the enabled rules with the same `[tool.toollint]`
configuration (found from the file, as the CLI finds it) and toollint's own noqa handling, so the
codes, positions and messages are those `toollint check` prints. flake8 then applies its own
`--select`/`--extend-ignore` and `# noqa` on top. No flake8 internals are imported.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from toollint import __version__
from toollint.settings import Settings

_resolver: Any = None  # a toollint.config.SettingsResolver, made on first use
_warned: set[str] = set()


def settings_for(filename: str) -> Settings:
    """The settings `toollint check FILE` would use for this file: those of the nearest configuration
    file above it, resolved and cached by configuration file by the same resolver as the CLI's."""
    global _resolver
    from toollint.config import SettingsResolver

    if _resolver is None:
        _resolver = SettingsResolver()
    settings: Settings = _resolver.for_path(filename, fallback=_defaults_after)
    return settings


def _defaults_after(problem: Exception) -> Settings:
    # flake8 has no channel for a configuration error; say it once, in one line, and lint with the
    # defaults rather than fail every file with a traceback.
    if str(problem) not in _warned:
        _warned.add(str(problem))
        sys.stderr.write(f"toollint (flake8 plugin): {problem}; using the default settings\n")
    return Settings(project_root=Path.cwd())


def reset_cache() -> None:
    """Forget every configuration read (for tests, and long-lived flake8 servers after an edit)."""
    global _resolver
    _resolver = None
    _warned.clear()


class ToollintChecker:
    name = "toollint"
    version = __version__

    def __init__(self, tree: ast.Module, filename: str, lines: Sequence[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        from toollint.engine import SelectionError, lint_tree

        if self.filename in ("stdin", "-", None):
            path = "stdin"
            settings = settings_for(str(Path.cwd() / "stdin.py"))
        else:
            path = self.filename
            settings = settings_for(path)
        try:
            findings = lint_tree(self.tree, "".join(self.lines), path, settings, apply_noqa=True)
        except SelectionError as exc:
            sys.stderr.write(f"toollint (flake8 plugin): {exc}\n")
            return
        for f in findings:
            if not f.suppressed:
                # flake8 columns are 0-based; toollint's are 1-based code points.
                yield f.line, max(f.col - 1, 0), f"{f.code} {f.message}", type(self)
