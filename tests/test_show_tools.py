"""`--show-tools`: every tool with whether it writes and why, every near-miss with why not, and a
run that finds no tool says so instead of looking like a clean run."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "discovery"


def test_show_tools_lists_tools_writers_and_near_misses(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--isolated", "--show-tools", str(FIXTURES / "mailkit" / "send.py"),
                 str(FIXTURES / "helpers_pkg" / "tools.py")])
    err = capsys.readouterr().err
    assert code == 1
    assert "SendMail._run [writes] writes `outbox` at line 9" in err
    assert "BankTools.rewrite_context [reads ] declared not to write by `mutates_state=False`" in err
    assert "Orphan._run [not a tool] `_run` of `Orphan`, whose bases (SomewhereElse)" in err
    assert "2 files, 4 tools (3 writers)" in err


def test_a_run_that_finds_no_tool_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain.py").write_text("def helper(x):\n    return x\n")
    assert main(["check", "--isolated", "--show-tools", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "no tools found" in err and "1 file, 0 tools (0 writers)" in err
