"""`toollint check --show-settings` and `--show-files`: what a run would use, without linting (ruff's
options of the same names).

`--show-settings` prints, for the first file the targets give (or the first target), the configuration
file that applies and every key of its tables as resolved, in TOML with the command line applied, then
the codes that are enabled. `--show-files` prints each file a run would lint, one a line, as findings
would name it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from toollint.config import SettingsResolver
from toollint.console import Console, printable
from toollint.engine import Selection
from toollint.errors import EXIT_CLEAN, EXIT_ERROR, ToollintError
from toollint.files import FileSet, collect_files, display_path
from toollint.pipeline.options import CheckOptions
from toollint.settings import table_keys


def run_show(options: CheckOptions, console: Console, *, settings: bool, files: bool) -> int:
    """Print the settings and/or the files of a run; exit 0, or 2 when a target is missing or the
    configuration is broken."""
    try:
        resolver = SettingsResolver(config_file=options.config, isolated=options.isolated,
                                    override=options.overrides)
        targets = [p for p in options.paths if p != "-"] or [options.stdin_filename or "."]
        found = collect_files(targets, resolver.for_path, force_exclude=options.force_exclude)
        if files:
            cwd = Path.cwd()
            for path in found.files:
                print(printable(display_path(path, cwd)))
        if settings:
            first = found.files[0] if found.files else Path(targets[0])
            write_settings(first, resolver, sys.stdout)
        for note in resolver.notes():
            console.warn(note)
    except ToollintError as exc:
        console.error(str(exc))
        return EXIT_ERROR
    return _report_targets(found, console)


def _report_targets(found: FileSet, console: Console) -> int:
    for target in found.missing:
        console.error(f"{printable(target)}: no such file or directory")
    for target in found.no_python:
        console.warn(f"no Python files found under {printable(target)}")
    return EXIT_ERROR if found.missing else EXIT_CLEAN


def write_settings(path: Path, resolver: SettingsResolver, out: TextIO) -> None:
    config = resolver.config_for(path)
    resolved = resolver.settings(config)
    out.write(f"Resolved settings for: {printable(display_path(path))}\n")
    out.write(f"Settings path: {printable(str(config)) if config else '(none: the defaults)'}\n")
    _write_table(resolved, out)
    enabled = sorted(Selection.from_settings(resolved).enabled)
    out.write(f"\n# Enabled codes ({len(enabled)}): {', '.join(enabled)}\n")


def _write_table(settings: Any, out: TextIO) -> None:
    out.write(f"\n{settings.TABLE}\n")
    tables = []
    for key, f in table_keys(type(settings)).items():
        value = getattr(settings, f.name)
        if dataclasses.is_dataclass(value):
            tables.append(value)
        elif value is None:
            out.write(f"# {key}: not set\n")
        else:
            out.write(f"{key} = {toml_value(value)}\n")
    for table in tables:
        _write_table(table, out)


def toml_value(value: object) -> str:
    """A settings value in TOML (inline tables for tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, Path):
        return toml_value(str(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }" \
            if value else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


__all__ = ["run_show", "toml_value", "write_settings"]
