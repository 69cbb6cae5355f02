"""Shared fixtures. The real benchmark under test (agentdojo==0.1.35) is never installed into
toollint's own environment: it is hosted in a venv of its own, created once and cached."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

AGENTDOJO = "agentdojo==0.1.35"
CACHE = Path(os.environ.get("TOOLLINT_TEST_CACHE", Path.home() / ".cache" / "toollint-tests"))


def _venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _ensure_agentdojo_venv() -> Path:
    root = CACHE / "venv-agentdojo-0.1.35"
    py = _venv_python(root)
    marker = root / ".toollint-ready"
    if marker.exists() and py.exists():
        return py
    root.parent.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", AGENTDOJO],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0:
        pytest.fail(f"could not install {AGENTDOJO} into {root}:\n{proc.stdout}\n{proc.stderr}")
    marker.write_text(AGENTDOJO)
    return py


@pytest.fixture(scope="session")
def agentdojo_python() -> Path:
    """The interpreter of a venv holding agentdojo==0.1.35 and its dependencies."""
    return _ensure_agentdojo_venv()


@pytest.fixture(scope="session")
def agentdojo_src(agentdojo_python: Path) -> Path:
    """The installed `agentdojo` package directory (real third-party benchmark code)."""
    out = subprocess.run(
        [str(agentdojo_python), "-c", "import agentdojo, os; print(os.path.dirname(agentdojo.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def toollint_python() -> str:
    return sys.executable
