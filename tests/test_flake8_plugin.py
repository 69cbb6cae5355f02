"""The flake8 plugin reports exactly what `toollint check` reports, through real flake8."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toollint.flake8_plugin import ToollintChecker, reset_cache

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"
Row = tuple[str, int, int, str, str]


@pytest.fixture(autouse=True)
def _fresh_settings_cache() -> None:
    reset_cache()


def _flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _flake8_rows(cwd: Path, target: str, *args: str) -> list[Row]:
    proc = _flake8(
        cwd, "--select", "TL", "--format", "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s", *args, target
    )
    assert proc.returncode in (0, 1), proc.stderr
    rows = []
    for line in proc.stdout.splitlines():
        path, row, col, code, text = line.split("\t")
        rows.append((Path(path).as_posix().removeprefix("./"), int(row), int(col), code, text))
    return sorted(rows)


def _toollint_rows(cwd: Path, *targets: str) -> list[Row]:
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", "check", "--output-format", "json", *targets],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (
            Path(f["filename"]).as_posix(),
            f["location"]["row"],
            f["location"]["column"],
            f["code"],
            f["message"],
        )
        for f in json.loads(proc.stdout)
    )


def test_flake8_equals_toollint_check(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    shutil.copy(FIXTURE, tmp_path / "pkg" / "banking_tools.py")
    via_flake8 = _flake8_rows(tmp_path, "pkg/banking_tools.py")
    via_toollint = _toollint_rows(tmp_path, "pkg/banking_tools.py")
    assert via_flake8 == via_toollint
    assert {r[3] for r in via_flake8} == {"TL101", "TL102", "TL103", "TL104", "TL105"}


def test_flake8_honours_the_same_configuration_and_noqa(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nignore = ["TL105"]\n', encoding="utf-8")
    source = FIXTURE.read_text(encoding="utf-8").replace(
        "    if amount:\n", "    if amount:  # noqa: TL104\n"
    )
    (tmp_path / "tools.py").write_text(source, encoding="utf-8")
    via_flake8 = _flake8_rows(tmp_path, "tools.py")
    assert via_flake8 == _toollint_rows(tmp_path, "tools.py")
    codes = [r[3] for r in via_flake8]
    assert "TL105" not in codes and codes.count("TL104") == 1


def test_config_error_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toollint]\nselekt = ["TL1"]\n', encoding="utf-8")
    shutil.copy(FIXTURE, tmp_path / "tools.py")
    proc = _flake8(tmp_path, "--select", "TL", "tools.py")
    assert "Traceback" not in proc.stderr
    (message,) = [line for line in proc.stderr.splitlines() if "toollint" in line]
    assert "unknown key 'selekt'" in message and "using the default settings" in message
    assert "TL104" in proc.stdout  # still linted, with the defaults


def test_checker_protocol_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = FIXTURE.read_text(encoding="utf-8")
    checker = ToollintChecker(ast.parse(source), "tools.py", source.splitlines(keepends=True))
    assert checker.name == "toollint" and checker.version
    rows = list(checker.run())
    assert all(
        isinstance(line, int) and isinstance(col, int) and kind is ToollintChecker
        for line, col, _, kind in rows
    )
    by_code = {text.split(" ", 1)[0]: (line, col) for line, col, text, _ in rows}
    assert by_code["TL102"] == (26, 4)  # flake8 columns are 0-based
    assert all(text[:2] == "TL" and text[5] == " " for _, _, text, _ in rows)


def test_a_monorepo_gives_the_same_answer_as_the_cli_in_any_order(tmp_path: Path) -> None:
    """Each file is linted with its own nearest configuration, by flake8 and by `toollint check a b`
    and `toollint check b a` alike (the CLI used to read only the first target's)."""
    for name, ignored in (("a", "TL104"), ("b", "TL102")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(f'[tool.toollint]\nignore = ["{ignored}"]\n')
        shutil.copy(FIXTURE, tmp_path / name / "tools.py")
    via_flake8 = _flake8_rows(tmp_path, "a/tools.py", "b/tools.py")
    forward = _toollint_rows(tmp_path, "a", "b")
    backward = _toollint_rows(tmp_path, "b", "a")
    assert via_flake8 == forward == backward
    assert {r[3] for r in forward if r[0] == "a/tools.py"} == {"TL101", "TL102", "TL103", "TL105"}
    assert {r[3] for r in forward if r[0] == "b/tools.py"} == {"TL101", "TL103", "TL104", "TL105"}
