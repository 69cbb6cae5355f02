"""Shared fixtures. The real benchmark under test (agentdojo==0.1.35) is never installed into
toollint's own environment: it is hosted in a venv of its own, created once and cached."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _corpora import AGENTDOJO, CACHE, VenvError, ensure_agentdojo_venv  # noqa: F401 - shared with bench/


def _ensure_agentdojo_venv() -> Path:
    try:
        return ensure_agentdojo_venv()
    except VenvError as exc:
        pytest.fail(str(exc))


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
