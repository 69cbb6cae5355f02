"""Verdicts attach per clause: a static finding gets the verdict of the clauses that test it (by the
argument, the state paths or the guard it names, within the clause kinds its defect class can show),
never the tool's verdict pasted on every finding of the tool."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from toollint.contracts.loader import load_contract
from toollint.dynamic.checker import ClauseResult, ToolReport
from toollint.dynamic.confirm import UNCHECKED, clauses_testing, finding_kinds, path_tests, verdict_for
from toollint.rules.tl102_commented_guard import guard_evidence

from toollint.cli import main
from toollint.evidence import Evidence
from toollint.model import Finding

BENCH = Path(__file__).parent / "fixtures" / "verdict_bench"
CONFIG = """
[tool.toollint]
contract-dirs = ["contracts"]
tool-decorators = ["tool"]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "airline:make_airline"
sys-path = ["."]
"""
CONTRACT = """
tool: bank:Bank.update
benchmark: mybench
source: {file: bank.py}
clauses:
  - id: pre.exists
    predicate: pre.accounts.by(id=args.account_id) is not None
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: pre.active
    predicate: pre.accounts.by(id=args.account_id).status == 'active'
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: eff.amount_set
    predicate: post.accounts.by(id=args.account_id).amount == args.amount
    provenance: {tier: author-specified, inferred: true}
  - id: eff.note_set
    predicate: post.accounts.by(id=args.account_id).note == args.note
    provenance: {tier: author-specified, inferred: true}
  - id: arg.amount
    falsy_legal: true
    provenance: {tier: author-specified, inferred: true}
  - id: frame.others
    predicate: "[a for a in post.accounts if a.id != args.account_id] ==
      [a for a in pre.accounts if a.id != args.account_id]"
    provenance: {tier: author-specified, inferred: true}
  - id: success
    predicate: result == 'updated'
    provenance: {tier: author-specified, inferred: true}
"""


@pytest.fixture
def contract(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "update.yaml"
    path.write_text(CONTRACT)
    return load_contract(path)


def _finding(code: str, *, param: str | None = None, field: str | None = None, guard: str | None = None,
             **props: object) -> Finding:
    """A finding as its rule reports it: the parameter, state path or guard in its typed evidence."""
    evidence = Evidence(parameter=param, state_path=field) if guard is None \
        else guard_evidence(ast.parse(guard).body[0])
    return Finding(code, "m", "bank.py", 1, tool="Bank.update", properties=dict(props), evidence=evidence)


def test_the_clause_kinds_come_from_the_rules_defect_class() -> None:
    assert finding_kinds(_finding("TL102")) == ("pre",)  # Unenforced Precondition
    assert finding_kinds(_finding("TL103")) == ("arg", "eff")  # Ignored Argument
    assert finding_kinds(_finding("TL104")) == ("arg", "eff", "inv")  # Ignored Argument / Partial Effect
    assert finding_kinds(_finding("TL101")) == ("eff", "success")  # Phantom Effect
    assert finding_kinds(_finding("TL105")) == ("eff", "inv")  # Partial Effect
    assert set(finding_kinds(_finding("TL999"))) >= {"pre", "eff", "arg"}  # unknown rule: any clause


def test_an_argument_finding_is_tested_by_that_arguments_clauses(contract) -> None:  # type: ignore[no-untyped-def]
    assert clauses_testing(_finding("TL104", param="amount"), contract) == (["eff.amount_set", "arg.amount"],
                                                                           "argument")
    # `note` has no arg.* clause, but an effect reads it
    assert clauses_testing(_finding("TL103", param="note"), contract) == (["eff.note_set"], "argument")
    # nothing reads `owner`: no clause tests the finding (not the tool's verdict)
    assert clauses_testing(_finding("TL104", param="owner"), contract) == ([], "none")
    # the preconditions read account_id too, but a precondition cannot show an ignored argument
    assert clauses_testing(_finding("TL104", param="account_id"), contract) == (
        ["eff.amount_set", "eff.note_set"], "argument")


def test_a_field_finding_is_tested_by_the_clauses_reading_that_field(contract) -> None:  # type: ignore[no-untyped-def]
    assert clauses_testing(_finding("TL105", field="accounts[*].amount"), contract) == (
        ["eff.amount_set"],
        "state",
    )
    # the code's path may carry a state root the snapshot has not (`self.db` -> snapshot of db)
    assert clauses_testing(_finding("TL105", field="db.accounts[*].note"), contract) == (
        ["eff.note_set"],
        "state",
    )
    assert clauses_testing(_finding("TL105", field="accounts[*].owner"), contract) == ([], "none")
    # TL101 names the tool's writes: the effects reading them, and the success clause they vouch for
    assert clauses_testing(_finding("TL101", writes=["accounts[*].note"]), contract) == (
        ["eff.note_set", "success"], "state")
    # a write no clause reads: TL101 is about the reply as a whole, every effect and success clause
    assert clauses_testing(_finding("TL101", writes=["_CACHE"]), contract) == (
        ["eff.amount_set", "eff.note_set", "success"], "tool")


def test_a_commented_out_guard_is_tested_by_the_preconditions_it_mentions(contract) -> None:  # type: ignore[no-untyped-def]
    guard = "if acc.status != 'active':\n    raise ValueError('inactive')"
    assert clauses_testing(_finding("TL102", guard=guard), contract) == (["pre.active"], "guard")
    assert clauses_testing(_finding("TL102", guard="if account_id not in accounts:\n    raise KeyError"),
                           contract) == (["pre.exists", "pre.active"], "guard")
    # a guard naming nothing any precondition reads: every precondition
    assert clauses_testing(_finding("TL102", guard="assert ready"), contract) == (
        ["pre.exists", "pre.active"],
        "tool",
    )


@pytest.mark.parametrize(("read", "named", "tests"), [
    ("lines[*].status", "lines[*].status", True),
    ("lines[*].status", "db.lines[*].status", True),  # one leading state root
    ("db.lines[*].status", "lines[*].status", True),
    ("lines[*].status", "lines[*]", True),  # reads inside the named record
    ("lines[*]", "lines[*].status", True),  # compares whole records
    ("lines", "lines[*].status", False),  # only the collection (e.g. its length)
    ("lines[*].balance", "lines[*].status", False),
    ("flights[*].available_seats", "flights[*][*]", True),  # a computed key may be any field
    ("users[*].status", "lines[*].status", False),
    ("a.b.lines[*].status", "lines[*].status", False),  # more than one root apart
])
def test_path_tests(read: str, named: str, tests: bool) -> None:
    assert path_tests(read, named) is tests


def test_the_verdict_is_the_tested_clauses_not_the_tools(contract) -> None:  # type: ignore[no-untyped-def]
    rows = [ClauseResult("eff.amount_set", "eff", "VIOLATES", code="TL202", witness=Path("w/amount.json")),
            ClauseResult("eff.note_set", "eff", "CONFORMS"),
            ClauseResult("arg.amount", "arg", "VIOLATES", code="TL202", witness=Path("w/arg.json")),
            ClauseResult("pre.active", "pre", "UNTESTABLE", reason="no_observable_state")]
    report = ToolReport("update", contract, "VIOLATES", rows)
    assert verdict_for(_finding("TL104", param="amount"), report) == ("VIOLATES", "w/amount.json", "argument")
    assert verdict_for(_finding("TL103", param="note"), report) == ("CONFORMS", None, "argument")
    assert verdict_for(_finding("TL102", guard="if acc.status != 'active': raise X"), report) == (
        "UNTESTABLE", None, "guard")
    assert verdict_for(_finding("TL105", field="accounts[*].owner"), report) == (UNCHECKED, None, "none")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(BENCH, root)
    (root / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(root)
    return root


def test_three_unpaired_fields_one_tested_get_one_verdict(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: TL105 flags the fields `cancel_reservation` never touches (two: the history a
    closing cancel keeps is not owed); its contract tests one (seats). Only that finding is VIOLATES;
    the other says no clause tests it."""
    code = main(["check", "--confirm", "--output-format", "json", "airline.py"])
    findings = json.loads(capsys.readouterr().out)
    assert code == 1
    unpaired = {f["properties"]["field"]: f["properties"] for f in findings if f["code"] == "TL105"}
    assert {k: (v["verdict"], v["verdict_scope"], v["clauses"]) for k, v in unpaired.items()} == {
        "flights[*].available_seats": ("VIOLATES", "state", ["eff.seats_released"]),
        "users[*].balance": ("UNCHECKED", "none", []),
        # users[*].history is not flagged: a cancel that closes the reservation keeps its history (issue 21)
    }
    assert unpaired["flights[*].available_seats"]["witness"].endswith(
        "cancel_reservation.eff.seats_released.happy.1.json")
    assert "witness" not in unpaired["users[*].balance"]
    assert (
        unpaired["users[*].balance"]["verdict_detail"]
        == "no clause of cancel_reservation.yaml tests users[*].balance"
    )
    assert [(f["code"], f["properties"]["clause"]) for f in findings if f["code"].startswith("TL2")] == [
        ("TL203", "eff.seats_released")]


def test_the_text_output_says_which_findings_no_clause_tests(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--confirm", "airline.py"])
    lines = [x for x in capsys.readouterr().out.splitlines() if "TL105" in x]
    assert len(lines) == 2
    assert [x.rsplit(" [", 1)[1] for x in lines if "users" in x] == [
        "UNCHECKED: no clause of cancel_reservation.yaml tests users[*].balance]"]
    assert any("flights[*].available_seats" in x and "[VIOLATES: " in x for x in lines)
