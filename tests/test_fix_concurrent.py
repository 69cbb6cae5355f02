"""`--fix` against another program saving the same files (issue 28): an editor-like writer saves
files in two chunks 3 ms apart while `toollint check --fix` runs; no save may be lost (the file ends
as the editor's text, fixed or not), a half-saved file is never fixed nor reported clean, and Ctrl-C
says how many files were already rewritten."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toollint.cli import main
from toollint.engine import lint_source
from toollint.fixes import fix_source
from toollint.settings import Settings

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"
FILES = 40
FIRST_SAVED = 1  # the writer saves files FIRST_SAVED.. as the fix step reaches each

# The editor: as soon as toollint has replaced file i-1 (its inode changes), it saves file i as
# editors without atomic saves do: truncate, write a first chunk, 3 ms later the rest. So each
# save races toollint's read of that very file.
WRITER = r"""
import os, sys, time
folder, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name = lambda i: os.path.join(folder, f"tools_{i:03d}.py")
inodes = {i: os.stat(name(i)).st_ino for i in range(count)}
open(os.path.join(folder, "writer.ready"), "w").close()  # toollint starts only now: no stale inodes
for i in range(first, count):
    deadline = time.monotonic() + (10 if i == first else 0.5)
    while time.monotonic() < deadline and os.stat(name(i - 1)).st_ino == inodes[i - 1]:
        time.sleep(0.0002)
    with open(os.path.join(folder, f"saved_{i:03d}.txt"), "rb") as f:
        text = f.read()
    # the first chunk ends at the middle line (odd files) or right after the tool (even: the first chunk
    # parses, has the fix, and is quick to lint: the worst case)
    cut = (
        text.rfind(b"\n", 0, len(text) // 2) + 1
        if i % 2
        else text.index(b"\n\n\n", text.index(b"def ")) + 3
    )
    with open(name(i), "wb") as out:
        out.write(text[:cut])
        out.flush()
        time.sleep(0.003)
        out.write(text[cut:])
"""

TOOL = """from typing import Annotated

from agentdojo.functions_runtime import Depends


def update_{i}(account: Annotated[dict, Depends("bank_account")], recurring: bool | None = None) -> str:
    \"\"\"Update whether the payment recurs.\"\"\"
    if recurring:
        account["recurring"] = recurring
    return "done"
"""


def _original(i: int) -> str:
    return TOOL.format(i=i)


def _saved_text(i: int) -> str:
    extra = "".join(f"\n\ndef helper_{i}_{n}(value=None):\n    return value\n" for n in range(10))
    return TOOL.format(i=i) + extra + f"\n# saved by the editor, file {i}\n"


def _fixed(text: str) -> str:
    return fix_source("t.py", text, lint_source(text, "t.py", Settings()).findings, unsafe=False).fixed


def _one_trial(folder: Path) -> list[str]:
    """Run --fix over FILES files while the writer saves the later ones; the files whose save was lost."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    for i in range(FILES):
        (folder / f"tools_{i:03d}.py").write_text(_original(i))
        (folder / f"saved_{i:03d}.txt").write_text(_saved_text(i))
    time.sleep(0.1)  # the files toollint starts from are settled
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(FIRST_SAVED), str(FILES)])
    ready = time.monotonic() + 60
    while not (folder / "writer.ready").exists() and time.monotonic() < ready:
        time.sleep(0.01)
    run = subprocess.run(
        [sys.executable, "-m", "toollint", "check", "--fix", "-q", "--isolated", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # Under load the writer may start after toollint replaced file FIRST_SAVED-1: it then waits out its
    # 10 s first deadline (and 0.5 s a file after), saves late, and the trial still counts.
    assert writer.wait(timeout=150) == 0
    assert "internal error" not in run.stderr, run.stderr
    # Not vacuous: toollint did rewrite files (a file it never fixes leaves the writer waiting out every
    # deadline, saving after toollint ended, and the trial passes without any race).
    assert (folder / "tools_000.py").read_text(encoding="utf-8") == _fixed(_original(0)) != _original(0)
    lost = []
    for i in range(FIRST_SAVED, FILES):
        saved = _saved_text(i)
        content = (folder / f"tools_{i:03d}.py").read_text(encoding="utf-8")
        if content not in (saved, _fixed(saved)):
            lost.append(f"tools_{i:03d}.py")
    return lost


# 20 trials is the slow run; one in the default run keeps a sample (a trial is ~30 s under load).
TRIALS = [pytest.param(1, id="1-trial"), pytest.param(20, id="20-trials", marks=pytest.mark.slow)]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("trials", TRIALS)
def test_a_chunked_concurrent_writer_loses_no_file(tmp_path: Path, trials: int) -> None:
    lost = {trial: _one_trial(tmp_path / f"trial{trial}") for trial in range(trials)}
    total = sum(map(len, lost.values()))
    assert total == 0, f"{total} of {trials * (FILES - FIRST_SAVED)} saves lost, in " \
                       f"{sum(map(bool, lost.values()))} of {trials} trials: {lost}"


def test_a_half_saved_file_is_left_alone_and_not_reported_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Linted whole; by the time --fix reads it, only its first half is there (and does not parse)."""
    monkeypatch.chdir(tmp_path)
    whole = FIXTURE.read_text(encoding="utf-8")
    half = whole[: len(whole) // 2]
    target = tmp_path / "tools.py"
    target.write_text(whole)
    from toollint import engine

    real = engine._lint_source

    def lint_then_half_save(*args: object, **kwargs: object) -> engine.FileResult:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        target.write_text(half)  # the editor truncated and wrote its first chunk
        return result

    monkeypatch.setattr(engine, "_lint_source", lint_then_half_save)
    code = main(["--fix", "tools.py"])
    captured = capsys.readouterr()
    assert code == 2
    assert "no longer parses (half-saved?); left alone" in captured.err
    assert "All checks passed" not in captured.out + captured.err
    assert target.read_text() == half  # not "fixed" over


@pytest.mark.usefixtures("ctrl_c_reaches_children")
def test_ctrl_c_during_fix_says_how_many_files_were_rewritten(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from fix_speed import many_guards

    source = many_guards(10).replace("account[\"records\"]", "(account or {})[\"records\"]")
    for i in range(300):
        (tmp_path / f"tools_{i:03d}.py").write_text(source)
    # Each file "just saved" (its mtime ahead of the clock): --fix reads it again SETTLE later before
    # fixing it, as any file that may be mid-save, so the rewrites are paced at >= 50 ms each, the fix
    # sleeping meanwhile. Unpaced, 300 rewrites took well under a second, and a test process the
    # scheduler woke too late sent its Ctrl-C only after the last one.
    ahead = time.time() + 3600
    for i in range(300):
        os.utime(tmp_path / f"tools_{i:03d}.py", (ahead, ahead))
    proc = subprocess.Popen(
        [sys.executable, "-m", "toollint", "check", "--fix", "--unsafe-fixes", "-q", "--isolated",
         "-j", "1", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = tmp_path / "tools_000.py"
    deadline = time.monotonic() + 120
    while first.read_text() == source and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.002)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    rewritten = sum((tmp_path / f"tools_{i:03d}.py").read_text() != source for i in range(300))
    assert 0 < rewritten < 300, err
    assert proc.returncode == 2
    said = [line for line in err.splitlines() if "--fix interrupted after rewriting" in line]
    assert said, err
    count = int(said[0].split("rewriting ")[1].split(" ")[0])
    assert count in (rewritten - 1, rewritten), (count, rewritten)  # a file replaced as the signal came


def test_a_save_that_lands_during_the_replace_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The narrowest window: the editor writes into the file just as the fix is renamed over it (its
    write goes to the old file, which no name points at any more); its text is put back."""
    from toollint import fixes

    target = tmp_path / "tools.py"
    linted = _original(1).encode()
    target.write_bytes(linted)
    time.sleep(fixes.SETTLE)
    real_write = fixes.atomic.write_bytes
    saved = _saved_text(1).encode()

    calls: list[bytes] = []

    def editor_saves_meanwhile(path: str | Path, data: bytes) -> None:
        calls.append(data)
        if len(calls) > 1:  # putting the editor's text back
            real_write(path, data)
            return
        with open(path, "r+b") as old:  # opened before the rename, as an editor holding the file
            real_write(path, data)
            old.write(saved)  # lands in the replaced file
            old.truncate()

    monkeypatch.setattr(fixes.atomic, "write_bytes", editor_saves_meanwhile)
    with pytest.raises(fixes.FixError, match="written by another program while it was being fixed"):
        fixes.write_fixed(str(target), linted, _fixed(_original(1)), "utf-8")
    monkeypatch.undo()
    assert target.read_bytes() == saved
    assert calls[1] == saved
