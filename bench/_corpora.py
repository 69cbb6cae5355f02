"""Cached venvs and the corpora shared by the tests and the bench scripts.

`tests/conftest.py` imports `ensure_venv`/`ensure_agentdojo_venv` from here, so the test fixtures and
`bench/speed.py` install and reuse the very same venv (agentdojo is never installed into toollint's
own environment).
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
import venv
from collections.abc import Sequence
from pathlib import Path

AGENTDOJO = "agentdojo==0.1.35"
CACHE = Path(os.environ.get("TOOLLINT_TEST_CACHE", Path.home() / ".cache" / "toollint-tests"))
STDLIB_PACKAGES = ("email", "json", "http")


class VenvError(RuntimeError):
    """A cached venv could not be created or its packages installed."""


def venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(name: str, requirements: Sequence[str], *, no_deps: bool = False) -> Path:
    """The interpreter of CACHE/name holding `requirements`, created and installed once (`no_deps`:
    the packages' own files only, for code that is read and never run)."""
    root = CACHE / name
    py = venv_python(root)
    marker = root / ".toollint-ready"
    wanted = "\n".join([*requirements, *(["--no-deps"] if no_deps else [])])
    if marker.exists() and py.exists() and marker.read_text() == wanted:
        return py
    root.parent.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", *(["--no-deps"] if no_deps else []), *requirements],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if proc.returncode != 0:
        raise VenvError(f"could not install {' '.join(requirements)} into {root}:\n{proc.stdout}\n{proc.stderr}")
    marker.write_text(wanted)
    return py


def ensure_agentdojo_venv() -> Path:
    return ensure_venv("venv-agentdojo-0.1.35", [AGENTDOJO])


def package_dir(python: Path, package: str) -> Path:
    """Where `package` is installed for that interpreter (nothing of it is imported here)."""
    out = subprocess.run(
        [str(python), "-c", f"import importlib.util, os; print(os.path.dirname(importlib.util.find_spec({package!r}).origin))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def stdlib_corpus() -> list[Path]:
    """The running interpreter's email, json and http packages."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [stdlib / name for name in STDLIB_PACKAGES]
