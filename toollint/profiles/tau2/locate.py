"""Where the tau2-bench checkout is, and which domains it has: read from the linted files, so the
host adapter confirms exactly the code that was linted, with no configuration.

A checkout is a directory holding `src/tau2/` and a `pyproject.toml` naming the project `tau2`; its
domains are the folders `src/tau2/domains/<name>/` with an `environment.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

PROJECT_NAME = re.compile(r'^\s*name\s*=\s*["\']tau2["\']', re.MULTILINE)


def checkout_of(path: str | Path) -> Path | None:
    """The tau2-bench checkout a file or directory lies in (or is), else None."""
    here = Path(path).resolve()
    for base in (here, *here.parents):
        if (base / "src" / "tau2" / "__init__.py").is_file() and _names_tau2(base / "pyproject.toml"):
            return base
    return None


def _names_tau2(pyproject: Path) -> bool:
    try:
        return bool(PROJECT_NAME.search(pyproject.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def checkouts(paths: Iterable[str | Path]) -> list[Path]:
    """The distinct checkouts the paths lie in, in the order first seen."""
    out: list[Path] = []
    for p in paths:
        found = checkout_of(p)
        if found is not None and found not in out:
            out.append(found)
    return out


def domains(root: Path) -> list[str]:
    """The domains a checkout defines (`src/tau2/domains/<name>/environment.py`)."""
    base = root / "src" / "tau2" / "domains"
    return sorted(p.parent.name for p in base.glob("*/environment.py"))


def host_options(linted: Sequence[str | Path]) -> dict[str, Any]:
    """Adapter options the linted files imply: the checkout they lie in (`root`). None found: no
    option, and the adapter uses an installed `tau2` with its own data directory."""
    found = checkouts(linted)
    return {"root": str(found[0])} if found else {}
