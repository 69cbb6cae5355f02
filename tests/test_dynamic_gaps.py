"""Checker gaps the mutation harness found (docs/validation.md, "What the survivors say"), each on a
defective tool of tests/fixtures/dynamic_bench/gaps.py beside a conforming twin: a legal call that
raises an undeclared error, a precondition refused with another error than declared, a guard only a
negative number reaches, and one only two optional arguments omitted together reach."""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.checker import ToolReport
from toollint.dynamic.confirm import ConfirmRun, run_confirm
from toollint.dynamic.replay import replay

from toollint.settings import Settings

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"


SETTINGS = Settings(confirm={"adapter": "toolkit", "factory": "gaps:make_ledger", "sys_path": [str(BENCH)],
                             "deadline": 5})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    found, errors = load_contracts([BENCH / "gap_contracts"])
    assert errors == []
    return run_confirm(found, SETTINGS, witness_dir=tmp_path_factory.mktemp("witnesses"))


def by_tool(run: ConfirmRun) -> dict[str, ToolReport]:
    return {r.tool: r for r in run.reports}


def test_exact_verdict_table(run: ConfirmRun) -> None:
    table = {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in run.reports}
    assert table == {
        "close_account": ("CONFORMS", {}),
        "close_account_crashing": ("VIOLATES", {"eff.status_closed": "TL203"}),
        "freeze_account": ("CONFORMS", {}),
        "freeze_account_keyerror": ("VIOLATES", {"pre.account_exists": "TL201"}),
        "charge_fee": ("CONFORMS", {}),
        "charge_fee_unchecked": ("VIOLATES", {"pre.fee_not_negative": "TL201"}),
        "update_account": ("CONFORMS", {}),
        "update_account_unchecked": ("VIOLATES", {"pre.something_to_update": "TL201"}),
    }
    assert all(row.rerun and row.rerun["agrees"] for r in run.reports for row in r.violations)


def test_a_legal_call_that_raises_fails_its_effect_as_a_partial_effect(run: ConfirmRun) -> None:
    row = next(r for r in by_tool(run)["close_account_crashing"].rows if r.clause_id == "eff.status_closed")
    assert row.run is not None and row.run.status == "tool_error" and row.run.pres_hold
    assert "raised KeyError" in row.detail and "legal" in row.detail


def test_a_refusal_with_another_error_than_declared_is_an_unenforced_precondition(run: ConfirmRun) -> None:
    row = next(r for r in by_tool(run)["freeze_account_keyerror"].rows if r.clause_id == "pre.account_exists")
    assert row.run is not None and row.run.result["error_type"] == "KeyError"
    assert "KeyError" in row.detail and "declares ValueError" in row.detail
    assert not row.run.changes  # refused and unchanged: the error type alone is the violation


def test_negative_and_joint_none_probes_reach_their_guards(run: ConfirmRun) -> None:
    fee = next(r for r in by_tool(run)["charge_fee_unchecked"].violations)
    assert fee.run is not None and fee.run.args["fee"] < 0
    update = next(r for r in by_tool(run)["update_account_unchecked"].violations)
    assert (
        update.run is not None and update.run.args["owner"] is None and update.run.args["overdraft"] is None
    )
    # The conforming twins refuse those same calls with the declared error.
    for tool, clause in (
        ("charge_fee", "pre.fee_not_negative"),
        ("update_account", "pre.something_to_update"),
    ):
        row = next(r for r in by_tool(run)[tool].rows if r.clause_id == clause)
        assert (row.verdict, row.scored) == ("CONFORMS", 1), (tool, row.detail)


def test_sentences_say_what_was_raised(run: ConfirmRun) -> None:
    messages = {f.properties["clause"] + "@" + (f.tool or ""): f.message for f in run.findings}
    crash = messages["eff.status_closed@close_account_crashing"]
    assert "close_account_crashing(account_id='A1') raised KeyError ('A0') on a legal call, so " \
           "eff.status_closed is false" in crash
    wrong = messages["pre.account_exists@freeze_account_keyerror"]
    assert "raised KeyError, not the declared ValueError, when pre.account_exists was false" in wrong


def test_a_legal_call_that_raises_replays_as_still_violating(run: ConfirmRun) -> None:
    f = next(f for f in run.findings if f.tool == "close_account_crashing")
    outcome = replay(f.properties["witness"], repeat=1, settings=SETTINGS)
    assert outcome.code == 1 and outcome.sentence.startswith("STILL VIOLATES eff.status_closed (TL203)")
