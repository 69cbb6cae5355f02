"""What `check --confirm` tells the user beyond the findings: a count of verdicts in which
UNTESTABLE tools are counted and named (never shown as passes), and a warning when the selection
leaves no static finding to pick tools from."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_dynamic_cli import BENCH, CONFIG

from toollint.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(BENCH, root)
    (root / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(root)
    return root


def test_confirm_all_counts_and_names_untestable_tools(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--confirm-all", "--witness-dir", "w", "bank.py"])
    err = capsys.readouterr().err
    head = next(line for line in err.splitlines() if line.startswith("confirm: ") and "tool(s)" in line)
    counts = {
        v: int(n) for n, v in re.findall(r"(\d+) (VIOLATES|FLAKY|CONFORMS|UNTESTABLE)", head.split(";")[0])
    }
    total = int(re.search(r"confirm: (\d+) tool", head).group(1))  # type: ignore[union-attr]
    assert sum(counts.values()) == total and counts["UNTESTABLE"] >= 1
    named = [n for names in re.findall(r"^confirm: UNTESTABLE ([\w, ]+): .+", err, re.MULTILINE)
             for n in names.split(", ")]
    assert len(named) == counts["UNTESTABLE"]
    assert "hang" in named  # the tool that times out is untestable, and says so
    # the bundled AgentDojo contracts are not this project's: --confirm-all keeps to the linted files
    assert "send_money" not in err


def test_confirm_warns_when_the_selection_flags_no_tool(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--confirm", "--select", "TL2", "bank.py"])
    assert "no static (TL1xx) finding selects a tool to probe" in capsys.readouterr().err


def test_a_projects_own_tool_never_takes_a_bundled_contract_of_the_same_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "own_bank.py").write_text(
        "from typing import Annotated\n"
        "def send_money(account: Annotated[dict, Depends('bank_account')], recipient: str, "
        "note: str) -> str:\n"
        "    account['transactions'].append(recipient)\n"
        "    return 'sent'\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--confirm", "--output-format", "json", "own_bank.py"]) == 1
    out = capsys.readouterr()
    assert "no contract covers the tools checked" in out.err
    assert '"verdict"' not in out.out  # the TL103 finding stays unconfirmed rather than borrowing AgentDojo's
