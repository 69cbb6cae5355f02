"""A run that could test nothing never reads as a pass (issue 28, item 6): when every tool `--confirm`
probed ended UNTESTABLE and nothing else was found, `toollint check` says so instead of "All checks
passed!" and exits 5 (pytest's "no tests ran"), whatever --exit-zero or --quiet say."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toollint.cli import main
from toollint.errors import EXIT_FINDINGS, EXIT_NOTHING_TESTED

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
CONFIG = """
[tool.toollint]
contract-dirs = [{contracts}]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "bank:make_bank"
sys_path = ["."]
deadline = 1
"""


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *contracts: str) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(BENCH, root)
    (root / "pyproject.toml").write_text(
        CONFIG.format(contracts=", ".join(f"'contracts/{c}'" for c in contracts))
    )
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("extra", [[], ["--exit-zero", "-q"]])
def test_every_probed_tool_untestable_is_not_all_checks_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    project(tmp_path, monkeypatch, "hang.yaml")  # its only tool never answers within the deadline
    assert main(["check", "--confirm-all", "--select", "TL2,TL3", *extra, "bank.py"]) == EXIT_NOTHING_TESTED
    err = capsys.readouterr().err
    assert "All checks passed!" not in err
    assert (
        "Nothing could be tested: --confirm probed 1 tool and every one ended UNTESTABLE (the reasons are "
        "above); nothing was confirmed or refuted."
    ) in err


def test_a_run_that_tested_something_keeps_its_exit_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, monkeypatch, "hang.yaml", "set_balance_truthy.yaml")
    assert main(["check", "--confirm-all", "--select", "TL2,TL3", "bank.py"]) == EXIT_FINDINGS
    assert "Nothing could be tested" not in capsys.readouterr().err
