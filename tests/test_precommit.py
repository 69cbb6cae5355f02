"""The pre-commit hook, run by the real `pre-commit try-repo` against this repository.

try-repo installs toollint from a repository into pre-commit's own virtualenv, with its dependencies
from PyPI, so this test needs network access and takes most of a minute. It is pointed at a clone of
this repository's committed HEAD: with a clean repository try-repo installs once and reuses the
environment for the second run (a checkout with uncommitted changes gets a fresh shadow repository,
and a fresh install, on every call).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


def test_hook_definition_matches_ruff_pre_commit_style() -> None:
    (hook,) = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "toollint"
    assert hook["entry"] == "toollint check --force-exclude"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi"]
    assert hook["require_serial"] is True
    assert hook["args"] == []
    assert hook["minimum_pre_commit_version"]


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_try_repo_fails_on_a_defect_and_passes_once_fixed(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    project = tmp_path / "benchmark"
    project.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    _run([*git, "init", "-q"], project, env)
    shutil.copy(FIXTURE, project / "tools.py")
    _run([*git, "add", "tools.py"], project, env)
    _run([*git, "commit", "-q", "-m", "defective tools"], project, env)

    hook_repo = tmp_path / "toollint-head"
    cloned = _run(["git", "clone", "-q", str(REPO), str(hook_repo)], tmp_path, env)
    assert cloned.returncode == 0, cloned.stderr
    try_repo = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "toollint", "--all-files"]
    failing = _run(try_repo, project, env)
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "toollint" in output and "Failed" in output
    assert "tools.py:" in output and "TL104" in output

    # A tool file without the defects: the hook passes.
    (project / "tools.py").write_text(
        "def update(account: dict, amount: float | None = None) -> str:\n"
        '    """Update the amount."""\n'
        "    if amount is not None:\n"
        '        account["amount"] = amount\n'
        "    return f\"amount is {account['amount']}\"\n",
        encoding="utf-8",
    )
    _run([*git, "commit", "-q", "-am", "fixed"], project, env)
    passing = _run(try_repo, project, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
