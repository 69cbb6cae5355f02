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
    closing cancel keeps is not owed); its contract tests one (seats), which gets that clause's verdict.
    The other, which no clause tests, is not left UNCHECKED (issue 23): the derived round trip made from
    the finding runs in the same pipeline, and its verdict is the derived tier's, counted apart."""
    code = main(["check", "--confirm", "--output-format", "json", "airline.py"])
    findings = json.loads(capsys.readouterr().out)
    assert code == 1
    unpaired = {f["properties"]["field"]: f["properties"] for f in findings if f["code"] == "TL105"}
    assert {k: (v["verdict"], v["verdict_scope"], v["verdict_oracle"], v["clauses"])
            for k, v in unpaired.items()} == {
        "flights[*].available_seats": ("VIOLATES", "state", "authored", ["eff.seats_released"]),
        "users[*].balance": ("VIOLATES", "derived", "derived", ["eff.undoes_book_reservation_balance"]),
        # users[*].history is not flagged: a cancel that closes the reservation keeps its history (issue 21)
    }
    assert unpaired["flights[*].available_seats"]["witness"].endswith(
        "cancel_reservation.eff.seats_released.happy.1.json")
    assert unpaired["users[*].balance"]["witness"].endswith(
        "cancel_reservation.eff.undoes_book_reservation_balance.round_trip.1.json")
    confirmed = [(f["code"], f["properties"]["clause"], f["properties"]["oracle"], f["properties"]["tier"])
                 for f in findings if f["code"].startswith("TL2")]
    assert sorted(confirmed) == [
        ("TL203", "eff.seats_released", "authored", "agent-visible"),
        ("TL203", "eff.undoes_book_reservation_balance", "derived", "derived")]


def test_the_text_output_labels_the_derived_verdict(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--confirm", "airline.py"])
    captured = capsys.readouterr()
    lines = [x for x in captured.out.splitlines() if "TL105" in x]
    assert len(lines) == 2
    assert [x.rsplit(" [", 1)[1].split(":")[0] for x in lines if "users" in x] == ["derived VIOLATES"]
    assert any("flights[*].available_seats" in x and "[VIOLATES: " in x for x in lines)
    # Authored and derived rows are counted on lines of their own, never together.
    assert "confirm: 1 tool(s): 1 VIOLATES" in captured.err
    assert "confirm: derived oracles: 1 tool(s): 1 VIOLATES" in captured.err


LEFT_OUT = """left_out:
  - path: users[*].balance
    reason: the fare goes back to the card days later, not to the balance
    surface: {tier: agent-visible, kind: docstring, line: 56, quote: "Cancel an active reservation"}
"""


def test_a_field_the_contract_leaves_out_on_purpose_is_not_tested_and_says_why(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A contract that leaves a field out on purpose says so, with the surface that allows it: the
    finding ends LEFT_OUT with that reason, and no derived oracle calls the omission a defect."""
    contract = project / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + LEFT_OUT)
    code = main(["check", "--confirm", "--output-format", "json", "airline.py"])
    findings = json.loads(capsys.readouterr().out)
    assert code == 1
    unpaired = {f["properties"]["field"]: f["properties"] for f in findings if f["code"] == "TL105"}
    balance = unpaired["users[*].balance"]
    assert (balance["verdict"], balance["verdict_reason"], balance["clauses"]) == ("LEFT_OUT", "left_out", [])
    assert balance["verdict_detail"] == (
        "not tested: the configured contract cancel_reservation.yaml leaves users[*].balance out on "
        "purpose: the fare goes back to the card days later, not to the balance "
        '(airline.py:56: "Cancel an active reservation")')
    assert balance["left_out"]["surface"]["quote"] == "Cancel an active reservation"
    assert unpaired["flights[*].available_seats"]["verdict"] == "VIOLATES"
    confirmed = [f["properties"]["clause"] for f in findings if f["code"].startswith("TL2")]
    assert confirmed == ["eff.seats_released"]
    main(["check", "--confirm", "airline.py"])
    line = next(x for x in capsys.readouterr().out.splitlines() if "users[*].balance" in x)
    assert line.endswith("[LEFT_OUT: " + balance["verdict_detail"] + "]")


@pytest.mark.parametrize(("entry", "message"), [
    ("  - {reason: r, surface: {tier: agent-visible, kind: docstring, line: 56, quote: q}}",
     "left_out entry must name one field ('path') or one parameter ('arg'), not neither"),
    (("  - {path: 'users[*].balance', arg: seats, reason: r,\n"
      "     surface: {tier: author-specified, inferred: true}}"),
     "left_out 'users[*].balance' must name one field ('path') or one parameter ('arg'), not both"),
    ("  - {path: 'users[*].balance', reason: r, surface: {tier: agent-visible, kind: docstring}}",
     "agent-visible provenance of left_out 'users[*].balance''s surface needs 'line', 'quote'"),
    ("  - {path: 'users[0].balance', reason: r, surface: {tier: author-specified, inferred: true}}",
     "'users[0].balance' is not well-formed in left_out > [0] > path"),
    ("  - {path: 'users[*].balance', surface: {tier: author-specified, inferred: true}}",
     "missing required key 'reason' in left_out > [0]"),
    ("  - {arg: seats, reason: r, surface: {tier: derived, finding: TL105, line: 3, quote: q}}",
     "the surface of left_out 'args.seats' is a finding toollint derived; cite the benchmark's own text"),
])
def test_a_malformed_left_out_entry_is_a_contract_error(
    project: Path, capsys: pytest.CaptureFixture[str], entry: str, message: str
) -> None:
    contract = project / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + "left_out:\n" + entry + "\n")
    main(["contracts", "check", str(contract)])
    out = capsys.readouterr()
    assert message in out.out + out.err, out.out + out.err
    assert "TL301" in out.out + out.err or "TL306" in out.out + out.err


def test_a_left_out_surface_is_checked_against_the_cited_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The surface that allows leaving a field out is a citation like a clause's: its quote must be at
    the cited line (TL304), so a reason cannot rest on a text the benchmark does not have."""
    contract = project / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + LEFT_OUT)
    assert main(["contracts", "check", str(contract)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    text = contract.read_text()
    contract.write_text(text.replace('"Cancel an active reservation"', '"Refunds go to the card"'))
    main(["contracts", "check", str(contract)])
    out = capsys.readouterr().out
    assert ("TL304 [provenance-quote-mismatch] left_out users[*].balance: quote 'Refunds go to the card' "
            "not found at airline.py:56") in out, out


def test_a_left_out_parameter_the_tool_does_not_have_is_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = project / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + "left_out:\n  - {arg: refund_to, reason: r, surface: {tier: "
                        "agent-visible, kind: docstring, line: 56, quote: Cancel an active reservation}}\n")
    main(["contracts", "check", str(contract)])
    out = capsys.readouterr().out
    assert ("TL308 [unknown-state-path] left_out: 'args.refund_to' is not a parameter of cancel_reservation "
            "(parameters: reservation_id)") in out, out


def test_a_left_out_entry_matches_the_parameter_or_the_field_a_finding_names() -> None:
    """By parameter (TL103/TL104) or by state path (TL105, with or without the state root on either side,
    as clauses are matched); a finding about something else keeps its own end."""
    from toollint.contracts.model import Contract, LeftOut, Provenance, Source
    from toollint.dynamic.confirm import left_out_for

    surface = Provenance("agent-visible", line=3, quote="q", kind="docstring")
    contract = Contract("bank:Bank.update", "b", Source("bank.py"), (), Path("c.yaml"), left_out=(
        LeftOut("logged only", surface, arg="note"),
        LeftOut("deferred", surface, path="agent_db.users[*].cards")))
    by_param = left_out_for(_finding("TL103", param="note"), contract)
    by_path = left_out_for(_finding("TL105", field="db.users[*].cards"), contract)
    assert by_param is not None and by_param.reason == "logged only"
    assert by_path is not None and by_path.reason == "deferred"
    assert left_out_for(_finding("TL105", field="users[*].cards"), contract) is not None
    assert left_out_for(_finding("TL104", param="amount"), contract) is None
    assert left_out_for(_finding("TL105", field="db.users[*].balance"), contract) is None
    assert left_out_for(_finding("TL103", param="note"), None) is None
