"""Gold replay (arm 3): AgentDojo's ground-truth calls replayed through the adapter, and reach decided
by the very predicate of the confirmed clause."""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.loader import find_contract

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.validate.drivers import driver_for
from toollint.validate.replay import ConfirmedDefect, replay_suite, to_json, to_text

AGENTDOJO = driver_for("agentdojo")


def _defect(tool: str, clause_id: str) -> ConfirmedDefect:
    contract = find_contract(tool, [AGENTDOJO_CONTRACTS])
    assert contract is not None, f"the bundled library has no contract for {tool}"
    clause = contract.clause(clause_id)
    assert clause is not None and clause.predicate is not None
    return ConfirmedDefect(tool, clause, "TL202")


def test_gold_paths_call_the_defective_tool_but_never_pass_a_falsy_update(agentdojo_python: Path) -> None:
    """update_scheduled_transaction drops amount=0 and recurring=False; no gold solution passes those
    values, so no banking task reaches the defect (an honest zero, distinct from exposure)."""
    defects = [_defect("update_scheduled_transaction", "eff.amount_set"),
               _defect("update_scheduled_transaction", "eff.recurring_set")]
    (result,) = [replay_suite(AGENTDOJO, str(agentdojo_python), "banking", defects)]
    assert result.tasks == 16 and result.task_errors == {}  # every banking user task was replayed
    for reach in result.reaches:
        assert len(reach.tasks_calling) >= 2
        assert reach.tasks_reaching == [] and reach.unscored == []
    assert "update_scheduled_transaction eff.amount_set (TL202)" in to_text([result])
    assert to_json([result])[0]["defects"][0]["tasks_reaching"] == []


def test_a_missing_interpreter_is_one_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"^could not run /nonexistent/python: No such file"):
        AGENTDOJO.ground_truth("/nonexistent/python", "banking")
