"""Writers that only write files (issue 28): every output option refuses a device, a FIFO or a
directory with a clear message and leaves it as it was, writes the paths of open streams
(`/dev/stdout`) directly, and never writes a report over a file being linted. Device nodes are made
with mknod/mkfifo in a temporary folder, never the machine's own /dev."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toollint import atomic
from toollint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"

# Every option of `toollint check` that writes a file (--ledger FILE writes FILE.csv and FILE.json).
OUTPUT_OPTIONS = ["-o", "--sarif-output", "--write-baseline", "--report", "--ledger"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "tools.py")
    return tmp_path


def _char_device(path: Path) -> None:
    """A node like /dev/null (1, 3), made here; a FIFO where mknod is not allowed."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        os.mkfifo(path)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


SPECIALS: dict[str, Callable[[Path], None]] = {"device": _char_device, "fifo": _fifo, "directory": _directory}


def _named(option: str, path: Path) -> Path:
    return path.with_name(path.name + ".csv") if option == "--ledger" else path


@pytest.mark.parametrize("kind", sorted(SPECIALS))
@pytest.mark.parametrize("option", OUTPUT_OPTIONS)
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(
    project: Path, capsys: pytest.CaptureFixture[str], option: str, kind: str
) -> None:
    target = project / "out"
    node = _named(option, target)
    SPECIALS[kind](node)
    before = os.lstat(node)
    code = main([option, str(target), "tools.py"])  # a FIFO would block a writer that opened it
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: {option} " in err and "not a regular file" in err, err
    after = os.lstat(node)  # the very node, not a regular file put where it was
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))
    assert not any(p.name.endswith(atomic.TEMP_SUFFIX) for p in project.iterdir())


@pytest.mark.parametrize("option", ["-o", "--sarif-output", "--write-baseline", "--report"])
def test_a_report_is_never_written_over_a_file_being_linted(
    project: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    before = (project / "tools.py").read_bytes()
    (project / "pkg").mkdir()
    shutil.copy(FIXTURE, project / "pkg" / "more.py")
    assert main([option, "tools.py", "tools.py"]) == 2
    assert "tools.py is tools.py, a file being linted; refusing to write over it" in capsys.readouterr().err
    # the same file under another spelling, inside a linted folder
    assert main([option, str(project / "pkg" / "." / "more.py"), "pkg"]) == 2
    assert "a file being linted" in capsys.readouterr().err
    assert (project / "tools.py").read_bytes() == before
    assert (project / "pkg" / "more.py").read_bytes() == before


def test_a_symlink_to_a_linted_file_is_refused_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "report.txt").symlink_to(project / "tools.py")
    before = (project / "tools.py").read_bytes()
    assert main(["-o", "report.txt", "tools.py"]) == 2
    assert "a file being linted" in capsys.readouterr().err
    assert (project / "tools.py").read_bytes() == before


def test_dev_stdout_is_written_where_stdout_stands(project: Path) -> None:
    """`-o /dev/stdout >> log` appends the report to log; the old writer replaced log with it."""
    log = project / "log.txt"
    log.write_text("earlier lines\n")
    with open(log, "a") as out:
        proc = subprocess.run(
            [sys.executable, "-m", "toollint", "check", "-q", "-o", "/dev/stdout", "tools.py"],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 1, proc.stderr
    text = log.read_text()
    assert text.startswith("earlier lines\n") and "tools.py:" in text and "TL104" in text


def test_stream_paths_are_written_directly_and_others_checked(tmp_path: Path) -> None:
    for path in ("/dev/stdout", "/dev/stderr", "/dev/null", "/dev/fd/1", "/proc/self/fd/2"):
        assert atomic.stream_path(path), path
    for path in ("/dev/zero", "/dev/stdout2", str(tmp_path / "dev" / "null"), "/dev/fd/x"):
        assert not atomic.stream_path(path), path
    atomic.check_target(tmp_path / "absent")  # fine: created by the write
    (tmp_path / "regular").write_text("x")
    atomic.check_target(tmp_path / "regular")
    with pytest.raises(atomic.NotAFileError, match="a directory, not a regular file"):
        atomic.write_text(tmp_path, "x")
    read_fd, write_fd = os.pipe()
    try:
        with atomic.atomic_text(f"/dev/fd/{write_fd}") as stream:  # process substitution, >(cat)
            stream.write("through the pipe\n")
        assert os.read(read_fd, 100) == b"through the pipe\n"
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_contracts_draft_output_refuses_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "contract.yaml"
    os.mkfifo(fifo)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "tools.py").write_text(
        'def refuel(gb: float) -> str:\n    """Add data."""\n    return "ok"\n'
    )
    code = main(["contracts", "draft", "pkg.tools:refuel", "--src", str(tmp_path), "-o", str(fifo)])
    assert code == 2
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
