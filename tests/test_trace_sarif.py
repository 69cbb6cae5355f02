"""A confirmed TL2xx finding, traced: SARIF relatedLocations at the grader read sites, a codeFlow
tool -> field -> grader read, exposed-task counts per basis in its properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sarif import assert_valid_sarif

from toollint.model import Finding
from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.profiles.agentdojo.tasks import agentdojo_tasks
from toollint.reporters.sarif import SarifOptions, build_sarif
from toollint.trace.ledger import trace_findings

TOOL_FILE = "agentdojo/default_suites/v1/tools/banking_client.py"
CONTRACT = AGENTDOJO_CONTRACTS / "update_scheduled_transaction.yaml"


def _finding(clause: str, contract: Path = CONTRACT) -> Finding:
    return Finding("TL202", "amount=0 leaves the transaction unchanged", TOOL_FILE, 115,
                   tool="update_scheduled_transaction",
                   properties={"clause": clause, "contract": str(contract), "witness": "w/amount0.json"})


def test_traced_finding_in_sarif(agentdojo_src: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = agentdojo_src.parent
    monkeypatch.chdir(root)
    finding = _finding("arg.amount")
    ledger = trace_findings([finding], agentdojo_tasks(agentdojo_src, suites=("banking",), display_root=root))
    assert not ledger.problems
    assert finding.properties["trace"] == {
        "fields": ["bank_account.scheduled_transactions[*].amount"],
        "exposed_tasks": {"exact_field": 5, "whole_state_hash": 1, "collection_only": 0, "unresolved": 0},
        "exposed": 6, "traced": 16,
    }
    log = build_sarif([finding], SarifOptions(root=root))
    assert_valid_sarif(log)
    result = log["runs"][0]["results"][0]
    related = {
        (r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
        for r in result["relatedLocations"]
    }
    assert (
        "agentdojo/default_suites/v1/banking/user_tasks.py",
        120,
    ) in related  # UserTask2: t.amount == 1200
    assert ("agentdojo/default_suites/v1/banking/user_tasks.py", 385) in related  # UserTask10: pre == post
    threads = result["codeFlows"][0]["threadFlows"]
    # One thread per read site that decides a row's basis: 6 tasks, 6 distinct grader lines.
    assert len(threads) == 6
    ends = {(t["locations"][-1]["location"]["physicalLocation"]["artifactLocation"]["uri"],
             t["locations"][-1]["location"]["physicalLocation"]["region"]["startLine"]) for t in threads}
    assert ends <= related
    steps = [loc["location"] for loc in threads[0]["locations"]]
    assert [s["physicalLocation"]["artifactLocation"]["uri"] for s in steps] == [
        TOOL_FILE, TOOL_FILE, "agentdojo/default_suites/v1/banking/user_tasks.py"]
    assert "violates arg.amount" in steps[0]["message"]["text"]
    assert "code_flow" not in result["properties"]  # written as codeFlows, not repeated as a property
    assert result["properties"]["trace"]["exposed"] == 6


def test_findings_that_cannot_be_traced_are_reported_not_skipped(agentdojo_src: Path, tmp_path: Path) -> None:
    unknown_clause = _finding("eff.no_such_clause")
    no_contract = _finding("arg.amount", tmp_path / "missing.yaml")
    static = Finding("TL104", "truthiness", TOOL_FILE, 136)
    ledger = trace_findings(
        [unknown_clause, no_contract, static], agentdojo_tasks(agentdojo_src, suites=("banking",))
    )
    messages = [p.message for p in ledger.problems]
    assert len(messages) == 2
    assert messages[0].startswith("TL202: clause 'eff.no_such_clause' is not in ")
    assert messages[1].startswith("TL202: contract cannot be loaded, not traced: ")
    assert "trace" not in static.properties and not ledger.rows
