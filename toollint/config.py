"""`[tool.toollint]` in pyproject.toml, turned into `Settings`.

The file is found by walking up from the first target (then from the current directory) to the
first `pyproject.toml` that has a `[tool.toollint]` table; `--config FILE` names it instead and
`--isolated` ignores all configuration. Keys are kebab-case (`extend-select`, `per-file-ignores`);
the `confirm` and `trace` sub-tables are passed through unread for `--confirm` and the tracer.
Relative `contract-dirs` are resolved against the config file's directory. Unknown keys and wrong
types raise `ConfigError` with a one-line message naming the file and the key.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toollint import registry
from toollint.settings import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

LIST_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "exclude",
    "extend-exclude",
    "tool-decorators",
    "tools",
    "tool-classes",
    "state-roots",
    "contract-dirs",
)
TABLE_KEYS = ("confirm", "trace")
SELECTOR_KEYS = ("select", "ignore", "extend-select")
KNOWN_KEYS = (*LIST_KEYS, "per-file-ignores", *TABLE_KEYS)


class ConfigError(Exception):
    """A configuration problem, with a message fit for one line of output."""


def find_config(targets: Sequence[str | Path] = ()) -> Path | None:
    """The nearest pyproject.toml with a [tool.toollint] table above the first target or the CWD."""
    starts = [Path(targets[0])] if targets else []
    starts.append(Path.cwd())
    for start in starts:
        directory = Path(os.path.abspath(start))
        if not directory.is_dir():
            directory = directory.parent
        for candidate_dir in (directory, *directory.parents):
            candidate = candidate_dir / "pyproject.toml"
            if candidate.is_file() and _has_toollint_table(candidate):
                return candidate
    return None


def _has_toollint_table(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if b"toollint" not in data:  # most pyproject files: skip the TOML parse
        return False
    try:
        return "toollint" in tomllib.loads(data.decode("utf-8")).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True  # it mentions us: load it so the user sees the parse error


def load_table(path: Path) -> dict[str, Any]:
    """The [tool.toollint] table of a TOML file."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None
    table = data.get("tool", {}).get("toollint") if isinstance(data.get("tool"), dict) else None
    if table is None:
        raise ConfigError(f"no [tool.toollint] table in {path}")
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.toollint] in {path} must be a table")
    return table


def settings_from_table(table: dict[str, Any], path: Path, base: Settings | None = None) -> Settings:
    """Validate a [tool.toollint] table and apply it over `base` (default settings)."""
    settings = base or Settings()
    where = f"{path} [tool.toollint]"
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KNOWN_KEYS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(KNOWN_KEYS)}"
            raise ConfigError(f"unknown key '{key}' in {where}{hint}")
        field_name = key.replace("-", "_")
        if key in LIST_KEYS:
            values = _string_list(value, f"'{key}' in {where}")
            if key in SELECTOR_KEYS:
                _check_selectors(values, f"'{key}' in {where}")
            setattr(settings, field_name, values)
        elif key in TABLE_KEYS:
            if not isinstance(value, dict):
                raise ConfigError(f"'{key}' in {where} must be a table, not {_type(value)}")
            setattr(settings, field_name, dict(value))
        else:  # per-file-ignores
            if not isinstance(value, dict):
                raise ConfigError(f"'{key}' in {where} must be a table of glob = [codes], not {_type(value)}")
            settings.per_file_ignores = {}
            for glob, codes in value.items():
                what = f"'{key}.\"{glob}\"' in {where}"
                settings.per_file_ignores[str(glob)] = _check_selectors(_string_list(codes, what), what)
    root = path.parent
    settings.contract_dirs = [str(root / d) if not os.path.isabs(d) else d for d in settings.contract_dirs]
    settings.project_root = root
    settings.config_file = path
    return settings


def _check_selectors(values: list[str], what: str) -> list[str]:
    for value in values:
        try:
            list(registry.expand([value]))
        except KeyError:
            raise ConfigError(f"unknown rule selector '{value}' in {what}") from None
    return values


def _string_list(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of strings, not {_type(value)}")
    return list(value)


def _type(value: object) -> str:
    if isinstance(value, list):
        return "a list with non-string items"
    return {dict: "a table", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )


def resolve_settings(
    targets: Sequence[str | Path] = (),
    *,
    config_file: str | Path | None = None,
    isolated: bool = False,
) -> Settings:
    """Settings for a run: defaults, then the config file (found or given), unless isolated."""
    if isolated:
        return Settings(project_root=Path.cwd())
    path = Path(config_file) if config_file is not None else find_config(targets)
    if path is None:
        return Settings(project_root=Path.cwd())
    if config_file is not None and not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    return settings_from_table(load_table(path), Path(os.path.abspath(path)))
