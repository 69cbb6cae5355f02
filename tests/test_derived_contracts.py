"""The `derived` tier in contract files: the schema and loader accept it only with the finding it
cites, the validator re-lints the cited line so an authored clause cannot claim the tier falsely,
and derived rows are told apart from authored ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.loader import parse_contract
from toollint.contracts.validator import validate

BANK = Path(__file__).parent / "fixtures" / "derived_bench" / "bank.py"
LINES = BANK.read_text().splitlines()


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(LINES, 1) if text in line)


GUARD = line_of('# if account.status != "active":  # expect: TL102 -> TL201')
LIMIT = line_of("if limit:  # expect: TL104")
RENAME = line_of("def rename(")


def contract(tmp_path: Path, clause: str, tool: str = "top_up") -> Path:
    path = tmp_path / f"{tool}.yaml"
    path.write_text(
        f"tool: bank:Bank.{tool}\nbenchmark: fixture\nsource: {{file: {BANK}}}\nclauses:\n{clause}"
    )
    return path


def guard_clause(line: int = GUARD, finding: str = "TL102", about: str = "if account.status != 'active':",
                 quote: str | None = None) -> str:
    quote = quote if quote is not None else LINES[line - 1].strip()
    return (f"  - id: pre.commented_guard\n"
            f"    predicate: pre.accounts[args.account_id].status == 'active'\n"
            f"    on_violation: {{raises: ValueError, message: Account must be active to top up}}\n"
            f"    provenance: {{tier: derived, finding: {finding}, about: \"{about}\", line: {line}, "
            f"quote: '{quote}'}}\n")


def test_a_derived_clause_citing_its_finding_loads_and_validates(tmp_path: Path) -> None:
    path = contract(tmp_path, guard_clause())
    loaded, errors = parse_contract(path)
    assert errors == [] and loaded is not None
    assert loaded.derived and loaded.clauses[0].derived
    assert loaded.clauses[0].provenance.finding == "TL102"
    assert loaded.clauses[0].on_violation.message == "Account must be active to top up"  # type: ignore[union-attr]
    assert validate([path]) == []


@pytest.mark.parametrize("clause, words", [
    # the quote is right, but toollint reports no TL104 on the guard's line
    (guard_clause(finding="TL104"), "tier derived claims a TL104 finding"),
    # a TL102 is there, but about another guard
    (guard_clause(about="if amount <= 0:"), "claims a TL102 finding about 'if amount <= 0:'"),
    # a line of the tool with no finding on it at all
    (guard_clause(line=GUARD + 3, quote=LINES[GUARD + 2].strip()), "but toollint reports none there"),
])
def test_an_authored_clause_cannot_claim_the_derived_tier(tmp_path: Path, clause: str, words: str) -> None:
    [finding] = validate([contract(tmp_path, clause)])
    assert finding.code == "TL306" and words in finding.message


def test_a_finding_on_another_tool_is_no_claim_for_this_one(tmp_path: Path) -> None:
    clause = guard_clause()
    [finding] = validate([contract(tmp_path, clause, tool="withdraw")])
    assert finding.code == "TL306" and "on withdraw" in finding.message


@pytest.mark.parametrize(
    "clause, words",
    [
        (
            (
                "  - id: arg.reason\n    falsy_legal: false\n"
                "    provenance: {tier: derived, line: 3, quote: x}\n"
            ),
            "derived provenance of 'arg.reason' needs 'finding'",
        ),
        (
            (
                "  - id: arg.reason\n    falsy_legal: false\n"
                "    provenance: {tier: agent-visible, kind: signature, line: 3, quote: x, finding: TL103}\n"
            ),
            "'finding' is only allowed in derived provenance",
        ),
        (
            (
                "  - id: pre.x\n    predicate: 'True'\n    round_trip: {do: a, undo: b}\n"
                "    provenance: {tier: derived, finding: TL105, line: 3, quote: x}\n"
            ),
            "'round_trip' is only allowed on eff clauses",
        ),
        (
            (
                "  - id: arg.reason\n    falsy_legal: false\n"
                "    provenance: {tier: derived, finding: TL201, line: 3, quote: x}\n"
            ),
            "is not well-formed",
        ),
    ],
)
def test_the_loader_says_what_a_derived_clause_lacks(tmp_path: Path, clause: str, words: str) -> None:
    _, errors = parse_contract(contract(tmp_path, clause, tool="rename"))
    assert any(words in e.message for e in errors), [e.message for e in errors]


def test_arg_and_round_trip_clauses_validate_against_their_findings(tmp_path: Path) -> None:
    arg = (f"  - id: arg.limit\n    falsy_legal: true\n"
           f"    provenance: {{tier: derived, finding: TL104, about: limit, line: {LIMIT}, "
           f"quote: '{LINES[LIMIT - 1].strip()}'}}\n")
    assert validate([contract(tmp_path, arg, tool="set_limit")]) == []
    release = line_of("def release_funds(")
    trip = (
        f"  - id: eff.undoes_hold_funds_balance\n"
        "    predicate: '[x0.balance for x0 in rows(post.accounts)] == "
        "[x0.balance for x0 in rows(pre.accounts)]'\n"
        f"    round_trip: {{do: hold_funds, undo: release_funds}}\n"
        f"    provenance: {{tier: derived, finding: TL105, about: 'accounts[*].balance', line: {release}, "
        f"quote: 'def release_funds(self, hold_id: str) -> str:'}}\n"
    )
    path = contract(tmp_path, trip, tool="release_funds")
    loaded, errors = parse_contract(path)
    assert errors == [] and loaded is not None
    assert loaded.clauses[0].round_trip is not None and loaded.clauses[0].round_trip.do == "hold_funds"
    assert validate([path]) == []
    # The same clause on a line the rule does not report is refused.
    moved = trip.replace(f"line: {release}", f"line: {RENAME}").replace(
        "def release_funds(self, hold_id: str) -> str:", LINES[RENAME - 1].strip())
    [finding] = validate([contract(tmp_path, moved, tool="release_funds")])
    assert finding.code == "TL306"
