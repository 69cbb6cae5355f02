"""Finding and reading configuration: `[tool.toollint]` in `pyproject.toml`, per file.

Each file is linted with the settings of the nearest `pyproject.toml` above it that has a
`[tool.toollint]` table (as ruff does), so `toollint check a/ b/` and `toollint check b/ a/` agree
in a monorepo and the flake8 plugin, which sees one file at a time, agrees with both. A
`SettingsResolver` finds and loads each configuration file once and keeps the result by file.
`--config FILE` names one file for everything and `--isolated` ignores all configuration.

The settings of the run as a whole (the project root SARIF paths and baselines are relative to,
`[tool.toollint.confirm]`, `[tool.toollint.trace]`) are those of the configuration above the
targets' common directory (then the working directory), which does not depend on their order.

The schema itself (keys, types, checks) lives in `toollint.settings`; here: finding files, TOML
errors, rule selectors and paths relative to the configuration file.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from toollint import registry
from toollint.errors import ConfigError
from toollint.regular import read_regular
from toollint.settings import Settings, parse_table, table_keys

__all__ = [
    "ConfigError",
    "Settings",
    "SettingsOverride",
    "SettingsResolver",
    "find_config",
    "load_table",
    "resolve_settings",
    "settings_from_table",
]

KNOWN_KEYS = tuple(table_keys(Settings))


def _toml() -> ModuleType:
    """The TOML parser (tomllib; tomli before Python 3.11), imported by the run that parses a
    configuration file: most runs parse none (`--isolated`, no [tool.toollint] table above the
    files), and it is 3 ms of their start-up."""
    if sys.version_info >= (3, 11):
        import tomllib as toml
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as toml
    return toml


def _has_toollint_table(path: Path) -> bool:
    try:
        data = read_regular(path)
    except OSError:
        return False
    if b"toollint" not in data:  # most pyproject files: skip the TOML parse
        return False
    toml = _toml()
    try:
        return "toollint" in toml.loads(data.decode("utf-8")).get("tool", {})
    except (toml.TOMLDecodeError, UnicodeDecodeError, RecursionError):
        return True  # it mentions us: load it so the user sees the parse error


def config_above(directory: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.toollint] table in `directory` or above."""
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        # os.path.isfile: a folder toollint may not enter, or a name too long, has no configuration to read
        if os.path.isfile(candidate) and _has_toollint_table(candidate):
            return candidate
    return None


def _directory_of(path: str | Path) -> Path:
    absolute = Path(os.path.abspath(path))
    return absolute if os.path.isdir(absolute) else absolute.parent  # False for any OSError (a name too long)


def find_config(targets: Sequence[str | Path] = ()) -> Path | None:
    """The configuration of a run: the nearest one above the targets' common directory, else above
    the working directory."""
    starts = [common_directory(targets)] if targets else []
    starts.append(Path.cwd())
    for start in starts:
        found = config_above(start)
        if found is not None:
            return found
    return None


def common_directory(targets: Iterable[str | Path]) -> Path:
    directories = [str(_directory_of(t)) for t in targets]
    try:
        return Path(os.path.commonpath(directories)) if directories else Path.cwd()
    except ValueError:  # different drives
        return Path.cwd()


def load_table(path: Path) -> dict[str, Any]:
    """The [tool.toollint] table of a TOML file."""
    toml = _toml()
    try:
        data = toml.loads(read_regular(path).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise ConfigError(f"cannot read config file {path}: a value is nested too deeply to parse") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not valid UTF-8") from None
    except toml.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None
    table = data.get("tool", {}).get("toollint") if isinstance(data.get("tool"), dict) else None
    if table is None:
        raise ConfigError(f"no [tool.toollint] table in {path}")
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.toollint] in {path} must be a table")
    return table


def settings_from_table(table: dict[str, Any], path: Path) -> Settings:
    """Validate a [tool.toollint] table read from `path`; relative paths are made relative to it."""
    notes: list[str] = []
    try:
        settings = parse_table(Settings, table, str(path), notes)
    except RecursionError:
        raise ConfigError(f"a value in {path} {Settings.TABLE} is nested too deeply to check") from None
    settings.notes = notes
    where = f"{path} {Settings.TABLE}"
    if "select" in table and not settings.select and not settings.extend_select:
        raise ConfigError(
            f"'select' in {where} is empty, so no rule would run; remove it for the default rules "
            'or name the rules to run, e.g. select = ["TL1", "TL4"]'
        )
    for key_name, f in table_keys(Settings).items():
        if f.metadata.get("selectors") and key_name in table:
            value = getattr(settings, f.name)
            if isinstance(value, dict):
                for glob, codes in value.items():
                    _check_selectors(codes, f"'{key_name}.\"{glob}\"' in {where}")
            else:
                _check_selectors(value, f"'{key_name}' in {where}")
    root = path.parent
    settings.contract_dirs = [d if os.path.isabs(d) else str(root / d) for d in settings.contract_dirs]
    settings.project_root = root
    settings.config_file = path
    return settings


def _check_selectors(values: Iterable[str], what: str) -> None:
    for value in values:
        try:
            list(registry.expand([value]))
        except KeyError:
            raise ConfigError(f"unknown rule selector '{value}' in {what}") from None


def load_settings(path: Path) -> Settings:
    return settings_from_table(load_table(path), Path(os.path.abspath(path)))


@dataclass(frozen=True)
class SettingsOverride:
    """What the command line sets over every file's settings: `--select`, `--extend-select`,
    `--ignore`, `--no-respect-gitignore`, `--confidence`."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    respect_gitignore: bool | None = None
    confidence: str | None = None  # --confidence

    def apply(self, settings: Settings) -> Settings:
        """The settings with the command line applied over them. As in ruff, the command line is a
        layer after the configuration file: `--select` starts the selection afresh (the file's
        `select`, `extend-select` and `ignore` no longer apply) and `--extend-select` adds to what the
        file left enabled, so `--select TL101` wins over `ignore = ["TL101"]`; `--ignore` always
        removes. `per-file-ignores` still apply."""
        if self == SettingsOverride():
            return settings
        select, extend_select, ignore = (
            settings.select,
            settings.extend_select,
            [*settings.ignore, *self.ignore],
        )
        if self.select is not None or self.extend_select:
            select = list(self.select) if self.select is not None else _enabled(settings)
            extend_select, ignore = list(self.extend_select), list(self.ignore)
        return dataclasses.replace(
            settings,
            select=select,
            extend_select=extend_select,
            ignore=ignore,
            respect_gitignore=settings.respect_gitignore
            if self.respect_gitignore is None
            else self.respect_gitignore,
            confidence=self.confidence or settings.confidence,
        )


def _enabled(settings: Settings) -> list[str]:
    """The codes a configuration enables on its own (its selectors were checked when it was read)."""
    selected = set(registry.expand([*settings.select, *settings.extend_select]))
    return sorted(selected - set(registry.expand(settings.ignore)))


class SettingsResolver:
    """The settings for each file of a run, each configuration file read once.

    `config_file` (`--config`) gives every file the same settings; `isolated` gives every file the
    defaults. Settings are cached by configuration file (and which file applies, by directory), so a
    tree of thousands of files reads each pyproject.toml once."""

    def __init__(
        self,
        *,
        config_file: str | Path | None = None,
        isolated: bool = False,
        override: SettingsOverride | None = None,
    ) -> None:
        self.isolated = isolated
        self.override = override or SettingsOverride()
        self._fixed: Path | None = None
        if config_file is not None and not isolated:
            self._fixed = Path(os.path.abspath(config_file))
            if not os.path.isfile(self._fixed):
                what = "is not a regular file" if os.path.exists(self._fixed) else "not found"
                raise ConfigError(f"config file {what}: {config_file}")
        self._by_directory: dict[Path, Path | None] = {}
        self._by_config: dict[Path | None, Settings] = {}

    def config_for(self, path: str | Path) -> Path | None:
        """The configuration file that applies to a file or directory (None: the defaults)."""
        if self.isolated:
            return None
        if self._fixed is not None:
            return self._fixed
        return self._config_in(_directory_of(path))

    def _config_in(self, directory: Path) -> Path | None:
        """`config_above(directory)`, each folder looked at once in a run: a walk asks for every folder of
        a tree, and each one's answer is its own pyproject.toml's or its parent's."""
        if directory in self._by_directory:
            return self._by_directory[directory]
        candidate = directory / "pyproject.toml"
        if os.path.isfile(candidate) and _has_toollint_table(candidate):
            found: Path | None = candidate
        else:
            found = None if directory.parent == directory else self._config_in(directory.parent)
        self._by_directory[directory] = found
        return found

    def settings(
        self, config: Path | None, fallback: Callable[[ConfigError], Settings] | None = None
    ) -> Settings:
        """The settings of one configuration file (None: the defaults), with the overrides. A broken
        file raises ConfigError, unless `fallback` gives the settings to use (and keep) instead."""
        if config not in self._by_config:
            try:
                base = load_settings(config) if config is not None else Settings(project_root=Path.cwd())
            except ConfigError as exc:
                if fallback is None:
                    raise
                base = fallback(exc)
            self._by_config[config] = self.override.apply(base)
        return self._by_config[config]

    def notes(self) -> list[str]:
        """The warnings of every configuration read so far (a snake_case key), each once."""
        return list(dict.fromkeys(note for settings in self._by_config.values() for note in settings.notes))

    def for_path(
        self, path: str | Path, fallback: Callable[[ConfigError], Settings] | None = None
    ) -> Settings:
        return self.settings(self.config_for(path), fallback)

    def for_run(self, targets: Sequence[str | Path]) -> Settings:
        """The settings of the run as a whole (see the module docstring)."""
        if self.isolated:
            return self.settings(None)
        return self.settings(self._fixed or find_config(targets))


def resolve_settings(
    targets: Sequence[str | Path] = (),
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
) -> Settings:
    """The settings of a run: defaults, then the config file (found or given), unless isolated."""
    return SettingsResolver(config_file=config_file, isolated=isolated).for_run(targets)
