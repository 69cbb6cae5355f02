"""The lint and type checks CI runs (.ci/run): ruff on the checkout, and mypy on the installed package
(.ci/typecheck), where `rules/`, `contracts/` and `dynamic/` resolve at their `toollint.*` names, so
that no import of toollint's own modules is left to `Any`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
MYPY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_ci_runs_both_checks() -> None:
    steps = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ".venv/bin/ruff check ." in steps
    assert ".ci/typecheck" in steps
    assert "set -euo pipefail" in steps  # a failing check fails the run


def test_no_import_is_left_to_any_but_named_third_party_ones() -> None:
    # A blanket ignore_missing_imports turned every unresolved import, toollint's own included, into Any.
    assert "ignore_missing_imports" not in MYPY
    ignored = [m for o in MYPY.get("overrides", []) if o.get("ignore_missing_imports") for m in o["module"]]
    assert ignored and not any(m.split(".")[0] == "toollint" for m in ignored), ignored


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    done = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_on_the_installed_package_is_clean() -> None:
    if shutil.which("python3.11") is None:
        pytest.skip(".ci/typecheck builds its venv with python3.11, which is not on PATH")
    if not (ROOT / ".git").exists():
        pytest.skip(".ci/typecheck builds the wheel from the files git lists; this is not a git checkout")
    done = subprocess.run([str(ROOT / ".ci" / "typecheck")], capture_output=True, text=True, check=False,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert "Success: no issues found" in done.stdout
