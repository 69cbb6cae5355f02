"""The glue for `toollint check --confirm --ledger F --report R`: a pipeline step tracing the
TL2xx findings of the run over the tasks `[tool.toollint.trace]` names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toollint.config import SettingsResolver, resolve_settings
from toollint.console import Console
from toollint.engine import FileResult, RunResult
from toollint.model import Finding
from toollint.pipeline import CheckOptions, StepContext, TraceOptions
from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.settings import Settings
from toollint.trace.check import check_step

BENCH = Path(__file__).parent / "fixtures" / "trace_bench"


def _ctx(
    settings: Settings, ledger: Path | None = None, report: Path | None = None, quiet: bool = False
) -> StepContext:
    options = CheckOptions(trace=TraceOptions(ledger=ledger, report=report))
    return StepContext(options, settings, SettingsResolver(), Console(quiet=quiet))


def test_confirmed_findings_are_traced_and_written(agentdojo_src: Path, tmp_path: Path) -> None:
    contract = AGENTDOJO_CONTRACTS / "update_scheduled_transaction.yaml"
    tool_file = str(agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py")
    confirmed = Finding("TL202", "amount=0 ignored", tool_file, 115, tool="update_scheduled_transaction",
                        properties={"clause": "eff.amount_set", "contract": str(contract)})
    static = Finding("TL104", "truthiness", tool_file, 136)
    result = RunResult([FileResult(tool_file, [static, confirmed])])
    settings = Settings(trace={"package": str(agentdojo_src), "suites": ["banking"]}, project_root=tmp_path)
    out = check_step(_ctx(settings, tmp_path / "ledger", tmp_path / "r.html", quiet=True), result)
    assert out is result and len(result.findings) == 2  # TL401 not selected: nothing added
    assert confirmed.properties["trace"]["exposed_tasks"] == {
        "exact_field": 5, "whole_state_hash": 1, "collection_only": 0, "unresolved": 0}
    data = json.loads((tmp_path / "ledger.json").read_text())
    assert {r["task"] for r in data["rows"]} == {f"banking/user_task_{n}" for n in (2, 6, 9, 10, 12, 15)}
    assert (tmp_path / "ledger.csv").read_text().count("\n") == 7
    assert "<svg" in (tmp_path / "r.html").read_text()


def test_without_ledger_or_report_the_step_does_nothing(tmp_path: Path) -> None:
    result = RunResult([FileResult("a.py", [Finding("TL202", "m", "a.py", 1)])])
    assert check_step(_ctx(Settings(trace={"package": "/nonexistent"})), result) is result
    assert "trace" not in result.findings[0].properties


def test_ungrounded_oracles_are_added_when_selected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = resolve_settings([str(BENCH)], config_file=str(BENCH / "pyproject.toml"))
    settings.extend_select = ["TL401"]
    result = RunResult([])
    check_step(_ctx(settings, tmp_path / "l.csv"), result)
    assert sorted((f.code, f.path, f.line) for f in result.findings) == [
        ("TL401", "graders.py", 17), ("TL401", "tasks.json", 11)]
    err = capsys.readouterr().err
    assert "no confirmed (TL2xx) finding to trace" in err
    assert "toollint: warning: trace: broken_tasks.json:3: task file is not valid JSON" in err


def test_check_confirm_ledger_report_end_to_end(agentdojo_python: Path, agentdojo_src: Path, tmp_path: Path,
                                                toollint_python: str) -> None:
    """`toollint check --confirm --ledger --report` on the real banking tools: the confirmed
    update_scheduled_transaction violations are traced to the banking tasks, and SARIF carries it."""
    import shutil
    import subprocess

    shutil.copy(agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py", tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toollint]\nbenchmark = "agentdojo"\n\n'
        f'[tool.toollint.confirm]\npython = "{agentdojo_python}"\n\n'
        '[tool.toollint.trace]\npackage = true\nsuites = ["banking"]\n'
    )
    proc = subprocess.run(
        [
            toollint_python,
            "-m",
            "toollint",
            "check",
            "banking_client.py",
            "--confirm",
            "--ledger",
            "out/ledger",
            "--report",
            "out/report.html",
            "--output-format",
            "sarif",
            "-o",
            "out.sarif",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads((tmp_path / "out" / "ledger.json").read_text())
    amount = next(d for d in data["defects"] if d["clause"] == "eff.amount_set")
    assert amount["totals"]["exact_field"] == 5 and amount["totals"]["whole_state_hash"] == 1
    results = json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    traced = [r for r in results if r["ruleId"].startswith("TL2") and "trace" in r["properties"]]
    assert traced and all(r["codeFlows"] and r["relatedLocations"] for r in traced)
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()
