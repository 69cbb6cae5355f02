"""Issue 21: every TL1 premise is decided from evidence and carried in the finding; `--confidence`
selects; full, JSON and SARIF output say it; a low-confidence premise never gets a safe fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toollint.analysis.legality import project_root
from toollint.engine import lint_source
from toollint.evidence import Confidence, EvidenceKind
from toollint.fixes import fix_source
from toollint.settings import Settings

SHAPES = Path(__file__).parent / "fixtures" / "rules" / "evidence_shapes.py"

TOOLS = '''from typing import Annotated

from agentdojo.functions_runtime import Depends


def update_transaction(account: Annotated[dict, Depends("bank")], id: int, subject: str | None = None,
                       note: str | None = None) -> str:
    t = account["scheduled"][id]
    if subject:
        t["subject"] = subject
    if note:
        t["note"] = note
    return "Transaction updated."
'''


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A benchmark whose own task data passes subject="" (and nothing about note)."""
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tasks.json").write_text(json.dumps([{"call": "update_transaction", "subject": ""}]))
    return tmp_path


def _toollint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)


def test_full_output_says_the_premise_and_its_evidence_in_one_line(bench: Path) -> None:
    proc = _toollint(bench, "--output-format", "full", "tools.py")
    assert proc.returncode == 1, proc.stderr
    assert ('= premise (high confidence, data): "" is legal for subject: data/tasks.json has subject=""'
            in proc.stdout)
    assert "`note`" not in proc.stdout  # its "" rests on the type alone: low, left out by default


def test_confidence_low_adds_the_type_only_premises_and_high_keeps_the_data_one(bench: Path) -> None:
    low = _toollint(bench, "--confidence", "low", "tools.py").stdout
    assert "tools.py:9:8: TL104" in low and "tools.py:11:8: TL104" in low
    high = _toollint(bench, "--confidence", "high", "tools.py").stdout
    assert "tools.py:9:8: TL104" in high and "tools.py:11:8" not in high
    bad = _toollint(bench, "--confidence", "certain", "tools.py")
    assert bad.returncode == 2 and "invalid choice: 'certain'" in bad.stderr and "Traceback" not in bad.stderr


def test_confidence_is_a_configuration_key_too(bench: Path) -> None:
    (bench / "pyproject.toml").write_text('[tool.toollint]\nconfidence = "low"\n')
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "tools.py"], cwd=bench,
                          capture_output=True, text=True, check=False)
    assert "tools.py:11:8: TL104" in proc.stdout
    (bench / "pyproject.toml").write_text('[tool.toollint]\nconfidence = "sure"\n')
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "tools.py"], cwd=bench,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "must be one of low, medium, high" in proc.stderr


def test_json_and_sarif_carry_the_confidence_and_premises(bench: Path) -> None:
    data = json.loads(_toollint(bench, "--confidence", "low", "--output-format", "json", "tools.py").stdout)
    by_param = {f["evidence"]["parameter"]: f for f in data if f["code"] == "TL104"}
    assert by_param["subject"]["confidence"] == "high" and by_param["note"]["confidence"] == "low"
    kinds = [p["kind"] for p in by_param["subject"]["evidence"]["premises"]]
    assert kinds == ["code", "data"]
    assert by_param["subject"]["evidence"]["guard"] == "subject"
    sarif = json.loads(_toollint(bench, "--confidence", "low", "--output-format", "sarif", "tools.py").stdout)
    results = {r["properties"].get("param"): r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TL104"}
    assert results["subject"]["properties"]["confidence"] == "high" and results["subject"]["rank"] == 90.0
    assert results["note"]["properties"]["confidence"] == "low" and results["note"]["rank"] == 30.0
    assert any("data/tasks.json" in p for p in results["subject"]["properties"]["premises"])


def test_fix_never_applies_a_safe_fix_on_a_low_confidence_premise(bench: Path) -> None:
    source = TOOLS
    findings = lint_source(source, str(bench / "tools.py"), Settings(confidence="low")).findings
    by_param = {f.properties["param"]: f for f in findings if f.code == "TL104"}
    assert by_param["note"].confidence is Confidence.LOW and by_param["note"].fix is not None
    assert (
        not by_param["note"].fix.safe and by_param["subject"].fix is not None and by_param["subject"].fix.safe
    )
    outcome = fix_source(str(bench / "tools.py"), source, findings, unsafe=False)
    assert "if subject is not None:" in outcome.fixed and "    if note:\n" in outcome.fixed
    proc = _toollint(bench, "--confidence", "low", "--fix", "tools.py")
    fixed = (bench / "tools.py").read_text()
    assert "if subject is not None:" in fixed and "    if note:\n" in fixed, proc.stderr


def test_each_premise_names_its_evidence_kind() -> None:
    findings = lint_source(SHAPES.read_text(), str(SHAPES), Settings(confidence="low")).reported
    premise = {(f.code, f.line): f.evidence.deciding for f in findings if f.evidence is not None}
    assert premise[("TL104", 59)].kind is EvidenceKind.DOCSTRING  # "an empty string clears it"
    assert (
        premise[("TL104", 69)].kind is EvidenceKind.TYPE
        and "declares a format" in premise[("TL104", 69)].source
    )
    assert premise[("TL104", 40)].kind is EvidenceKind.SCHEMA  # a bool's False
    assert all(f.evidence is not None for f in findings), [f for f in findings if f.evidence is None]
    assert {f.evidence.parameter for f in findings if f.code in ("TL103", "TL104")} >= {
        "colour",
        "nights",
        "body",
    }


def test_messages_and_columns_of_the_missed_shapes() -> None:
    findings = {(f.line, f.col): f for f in lint_source(SHAPES.read_text(), str(SHAPES), Settings()).reported}
    refusal = findings[(220, 9)]
    assert refusal.message.endswith(
        "the write in `_insert` is not guaranteed: it can refuse (`return` at line 213) "
        "and its answer is ignored"
    )
    computed = findings[(246, 44)]
    assert computed.message == (
        "parameter `nights` of `update_stay` only feeds a computation; the record's own "
        "`bookings[*].nights` is never stored"
    )
    paired = findings[(273, 5)]
    assert paired.properties["paired_by"] == "record db.reservations[*]"
    assert paired.evidence is not None and paired.evidence.premises[0].kind is EvidenceKind.CODE


def test_data_is_looked_for_in_the_project_not_above_it(tmp_path: Path) -> None:
    pkg = tmp_path / "proj" / "src" / "bench" / "domains"
    pkg.mkdir(parents=True)
    for d in (pkg, pkg.parent):
        (d / "__init__.py").write_text("")
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    assert project_root(pkg) == tmp_path / "proj"
    loose = tmp_path / "scripts"
    loose.mkdir()
    assert project_root(loose) == loose


def test_unreadable_or_odd_data_files_cost_nothing_but_their_evidence(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "tasks.json").write_bytes(
        b'\xff\xfe\x00 not json {"subject": ""'
    )  # broken, not UTF-8
    (tmp_path / "data" / "big.yaml").mkdir()  # a folder named like a data file
    proc = _toollint(tmp_path, "--output-format", "full", "tools.py")
    assert "Traceback" not in proc.stderr and proc.returncode == 1
    assert 'data/tasks.json has subject=""' in proc.stdout  # the text around a broken byte still reads
