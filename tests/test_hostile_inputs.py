"""Hostile inputs and configuration (issue 28): a FIFO named as an input or inside a linted folder
is skipped with a warning within seconds; configuration and file-system problems are one clear
line and exit 2, never an internal error; a benchmark name, an empty selection and a malformed
tool reference are errors that say what to do. FIFOs are made in a temporary folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toollint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "tools.py")
    return tmp_path


def _toollint(
    cwd: Path, *args: str, prefix: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = subprocess.run([*prefix, sys.executable, "-m", "toollint", "check", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=30, check=False)
    return proc, time.monotonic() - began


def test_a_fifo_named_as_an_input_is_skipped_within_seconds(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    proc, took = _toollint(project, "pipe.py", "tools.py")
    assert took < 5
    assert "pipe.py: a FIFO (named pipe), not a regular file; skipped" in proc.stderr
    assert proc.returncode == 1 and "tools.py:" in proc.stdout  # the other file is linted


def test_fifos_inside_a_linted_folder_are_skipped_within_seconds(project: Path) -> None:
    (project / "pkg" / "deep").mkdir(parents=True)
    shutil.copy(FIXTURE, project / "pkg" / "more.py")
    os.mkfifo(project / "pkg" / "deep" / "pipe.py")
    os.mkfifo(project / "pkg" / ".gitignore")  # read by the walk
    os.mkfifo(project / "pkg" / "deep" / "pyproject.toml")  # read by the configuration lookup
    proc, took = _toollint(project, ".")
    assert took < 5
    assert "pkg/deep/pipe.py: a FIFO (named pipe), not a regular file; skipped" in proc.stderr
    assert proc.returncode == 1 and "pkg/more.py:" in proc.stdout and "internal error" not in proc.stderr


def test_a_fifo_as_config_file_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(project / "cfg.toml")
    assert main(["--config", "cfg.toml", "tools.py"]) == 2
    assert "config file is not a regular file: cfg.toml" in capsys.readouterr().err


def _config(project: Path, body: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.toollint]\n{body}\n")


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert sum("error:" in line for line in err.splitlines()) == 1, err  # one line says what is wrong
    return err


@pytest.mark.parametrize("depth", [600, 5000])
def test_a_deeply_nested_array_in_the_configuration(project: Path, capsys: pytest.CaptureFixture[str],
                                                    depth: int) -> None:
    _config(project, "select = " + "[" * depth + "]" * depth)
    err = _error(capsys, "tools.py")
    assert "pyproject.toml" in err and "nested too deeply" in err


def test_a_file_name_too_long_for_the_file_system(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(capsys, "a" * 300 + ".py")
    assert "file name too long" in err


def test_an_unreadable_subfolder_is_reported_not_an_internal_error(project: Path) -> None:
    (project / "sub").mkdir()
    shutil.copy(FIXTURE, project / "sub" / "hidden.py")
    shutil.copy(FIXTURE, project / "sub" / "hidden_too.py")
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:  # chmod does not stop root: run without the capabilities that bypass it
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: a folder cannot be made unreadable")
        prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    (project / "sub").chmod(0)
    try:
        for target in (".", "sub"):  # a folder the run cannot see into: an error of the run, exit 2
            proc, _ = _toollint(project, target, prefix=prefix)
            assert "internal error" not in proc.stderr, (target, proc.stderr)
            assert "sub:1:1: TL903 [io-error] cannot read: Permission denied" in proc.stdout, (
                target,
                proc.stdout,
            )
            assert (
                "error: sub: the folder could not be read (TL903); the files in it were not checked"
                in proc.stderr
            )
            assert proc.returncode == 2
        proc, _ = _toollint(project, "sub/hidden.py", prefix=prefix)  # a file: its TL903 finding
        assert "internal error" not in proc.stderr, proc.stderr
        assert "sub/hidden.py:1:1: TL903 [io-error] cannot read: Permission denied" in proc.stdout
        assert proc.returncode == 1
    finally:
        (project / "sub").chmod(0o755)


def test_an_unknown_benchmark_is_an_error_in_a_static_run(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(project, 'benchmark = "tua2"')
    err = _error(capsys, "tools.py")
    assert "unknown benchmark 'tua2'; did you mean 'tau2'?" in err and "pyproject.toml" in err


def test_an_empty_selection_is_an_error_that_says_what_to_do(project: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    _config(project, "select = []")
    err = _error(capsys, "tools.py")
    assert "'select'" in err and "is empty" in err and "remove it for the default rules" in err
    _config(project, 'select = []\nextend-select = ["TL104"]')  # something is still selected: fine
    assert main(["tools.py"]) == 1
    capsys.readouterr()
    (project / "pyproject.toml").unlink()
    assert main(["--select", "", "tools.py"]) == 2  # argparse's usage, then the one-line error
    assert "argument --select: names no rule" in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("key", ["tools", "tool-classes"])
def test_a_malformed_tool_reference_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    _config(project, f'{key} = ["::::"]')
    err = _error(capsys, "tools.py")
    assert f"'{key}'" in err and '"pkg.module:function"' in err and "'::::'" in err
