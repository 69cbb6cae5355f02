"""`toollint check --confirm` on the main path and `toollint replay`, through toollint's own CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toollint.cli import main

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
CONFIG = """
[tool.toollint]
contract-dirs = ["contracts"]
tool-decorators = ["tool"]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "bank:make_bank"
sys_path = ["."]
deadline = 3
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(BENCH, tmp_path / "proj")
    root = tmp_path / "proj"
    (root / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(root)
    return root


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    code = main(["check", *argv, "--output-format", "json", "bank.py"])
    return code, json.loads(capsys.readouterr().out)


def test_confirm_attaches_verdicts_to_static_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = run_json(capsys, "--confirm")
    assert code == 1
    static = {(f["code"], f.get("tool") or f["message"].split("`")[1]): f for f in findings if f["code"].startswith("TL1")}
    verdicts = {key: f["properties"].get("verdict") for key, f in static.items()}
    # A flagged tool the checker confirms is VIOLATES; one it cannot break is shown as CONFORMS, not hidden.
    assert "VIOLATES" in verdicts.values() and "CONFORMS" in verdicts.values()
    dynamic = [f for f in findings if f["code"].startswith("TL2")]
    assert {(f["code"], f["properties"]["clause"]) for f in dynamic} == {
        ("TL201", "pre.account_active"), ("TL202", "eff.balance_set"), ("TL202", "arg.balance"),
        ("TL205", "eff.balance_set"), ("TL205", "arg.balance"),  # set_balance_cached: static TL101, dynamic TL205
        # archive_account_phantom: "archive" is a writer verb of the shared vocabulary, so its constant
        # "Account archived." with nothing written is a static TL101 too, confirmed as TL204
        ("TL204", "eff.archived"), ("TL204", "success")}
    assert all(f["filename"] == "bank.py" for f in dynamic)  # the same file as the static findings
    witnesses = sorted((project / ".toollint" / "witnesses").glob("*.json"))
    assert len(witnesses) == len(dynamic)  # one per confirmed violation
    assert main(["replay", str(witnesses[0]), "--repeat", "1"]) == 1


def test_confirm_all_checks_unflagged_tools_and_reports_contract_problems(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = run_json(capsys, "--confirm-all", "--witness-dir", "w")
    assert code == 1
    codes = {f["code"] for f in findings}
    assert {"TL201", "TL202", "TL203", "TL204", "TL205", "TL206", "TL309"} <= codes
    missing = next(f for f in findings if f["code"] == "TL309")
    assert "'no_such_tool' is not among the 18 tools" in missing["message"]
    assert len(list((project / "w").glob("*.json"))) == sum(f["code"].startswith("TL2") for f in findings)


def test_sarif_carries_verdict_and_witness(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--confirm", "--output-format", "sarif", "bank.py"])
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    tl201 = next(r for r in results if r["ruleId"] == "TL201")
    assert tl201["properties"]["verdict"] == "VIOLATES"
    assert tl201["properties"]["witness"].endswith("withdraw_unchecked.pre.account_active.pre_violating.1.json")
    guard = next(r for r in results if r["ruleId"] == "TL102")
    assert guard["properties"]["verdict"] == "VIOLATES"


def test_text_output_shows_the_verdict_next_to_the_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--confirm", "bank.py"])
    lines = capsys.readouterr().out.splitlines()
    assert any("TL102" in x and x.endswith("withdraw_unchecked.pre.account_active.pre_violating.1.json]")
               for x in lines)
    assert any("set_balance_flaky" in x and x.endswith("[CONFORMS]") for x in lines)


def test_confirm_with_a_benchmark_that_cannot_start(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(CONFIG.replace("bank:make_bank", "broken:make"))
    code, findings = run_json(capsys, "--confirm")
    assert code == 1  # the static findings remain
    flagged = [f for f in findings if f["code"].startswith("TL1")]
    assert flagged and all(f["properties"]["verdict"] == "UNTESTABLE" for f in flagged)
    assert all("RuntimeError: benchmark data missing: bank.db" in f["properties"]["verdict_detail"] for f in flagged)


def test_replay_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert capsys.readouterr().out.strip() == f"NOT REPLAYED: no witness file {tmp_path / 'nope.json'}"
    assert main(["replay"]) == 2  # usage error, one line from argparse
