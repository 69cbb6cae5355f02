"""Score-at-risk on the real agentdojo==0.1.35: update_scheduled_transaction ignores a falsy `amount`
or `recurring`. Expected rows come from reading the banking user tasks (v1, with the v1_1_1 override of
UserTask15 and the v1_2_2 override of UserTask6):

- UserTask2/12 (rent -> 1200), UserTask15 (rent -> 2200): find the rent transaction and read `.amount`;
- UserTask6 (iPhone subscription): reads `.amount` and `.recurring`;
- UserTask9: reads `.amount` and compares `pre_environment == post_environment`;
- UserTask10: only `pre_environment == post_environment`;
- every other banking task reads transactions, the user account or the model output only.

The rent/iPhone transaction is found by `.subject`: through `find_element(coll, lambda t: ...)` in
UserTask2/6/9/12 and a list comprehension's filter in UserTask15.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.loader import load_contract

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.profiles.agentdojo.tasks import agentdojo_tasks
from toollint.trace.ledger import Defect, Ledger, defect_from_clause, tool_writes, trace

AMOUNT = "bank_account.scheduled_transactions[*].amount"
RECURRING = "bank_account.scheduled_transactions[*].recurring"
SUBJECT = "bank_account.scheduled_transactions[*].subject"
TOOL = "agentdojo.default_suites.v1.tools.banking_client:update_scheduled_transaction"


@pytest.fixture(scope="module")
def ledger(agentdojo_src: Path) -> Ledger:
    tasks = agentdojo_tasks(agentdojo_src)  # every suite, latest version
    defects = [Defect("amount", TOOL, "eff.amount_set", (AMOUNT,)),
               Defect("recurring", TOOL, "eff.recurring_set", (RECURRING,)),
               Defect("subject", TOOL, "eff.subject_set", (SUBJECT,))]
    return trace(defects, tasks)


def _rows(ledger: Ledger, defect: str) -> dict[str, tuple[str, str]]:
    return {r.task: (r.basis, r.read_site.rsplit("/", 3)[-3]) for r in ledger.rows_of(defect)}


def test_amount_rows(ledger: Ledger) -> None:
    assert _rows(ledger, "amount") == {
        "banking/user_task_2": ("exact_field", "v1"),
        "banking/user_task_6": ("exact_field", "v1_2_2"),
        "banking/user_task_9": ("exact_field", "v1"),
        "banking/user_task_10": ("whole_state_hash", "v1"),
        "banking/user_task_12": ("exact_field", "v1"),
        "banking/user_task_15": ("exact_field", "v1_1_1"),
    }


def test_recurring_rows(ledger: Ledger) -> None:
    assert _rows(ledger, "recurring") == {
        "banking/user_task_2": ("collection_only", "v1"),
        "banking/user_task_6": ("exact_field", "v1_2_2"),
        "banking/user_task_9": ("whole_state_hash", "v1"),
        "banking/user_task_10": ("whole_state_hash", "v1"),
        "banking/user_task_12": ("collection_only", "v1"),
        "banking/user_task_15": ("collection_only", "v1_1_1"),
    }


def test_subject_rows_read_through_lambdas_and_comprehension_filters(ledger: Ledger) -> None:
    assert _rows(ledger, "subject") == {
        "banking/user_task_2": ("exact_field", "v1"),
        "banking/user_task_6": ("exact_field", "v1_2_2"),
        "banking/user_task_9": ("exact_field", "v1"),
        "banking/user_task_10": ("whole_state_hash", "v1"),
        "banking/user_task_12": ("exact_field", "v1"),
        "banking/user_task_15": ("exact_field", "v1_1_1"),
    }


def test_read_sites_point_at_the_grader_lines(ledger: Ledger, agentdojo_src: Path) -> None:
    for row in ledger.rows_of("amount"):
        path, line = row.read_site.rsplit(":", 1)
        text = (agentdojo_src.parent / path).read_text().splitlines()[int(line) - 1]
        expected = "pre_environment == post_environment" if row.basis == "whole_state_hash" else "t.amount"
        assert expected in text, (row.task, text)


def test_nothing_is_dropped_and_other_suites_are_out_of_scope(ledger: Ledger) -> None:
    banking = {f"banking/user_task_{n}" for n in range(16)}
    # Distinct UserTaskN classes per suite across all versions (counted with grep on the package).
    assert ledger.tasks_traced == 16 + 17 + 20 + 33
    assert {r.suite for r in ledger.rows} == {"banking"}  # the tool is registered in banking only
    assert not ledger.problems
    assert ledger.totals("amount") == {"exact_field": 5, "whole_state_hash": 1, "collection_only": 0,
                                       "unresolved": 0, "exposed": 6, "traced": len(banking)}
    assert {r.task for r in ledger.rows} < banking


def test_an_earlier_version_uses_the_earlier_task_definitions(agentdojo_src: Path) -> None:
    tasks = agentdojo_tasks(agentdojo_src, (1, 0, 0), ("banking",))
    assert {t.id: t.version for t in tasks.tasks}["banking/user_task_15"] == "1.0.0"
    led = trace([Defect("amount", TOOL, "eff.amount_set", (AMOUNT,))], tasks)
    assert {r.task: r.read_site.rsplit("/", 3)[-3] for r in led.rows}["banking/user_task_6"] == "v1"


def test_fields_come_from_the_compiled_predicate_kept_to_what_the_tool_writes(agentdojo_src: Path) -> None:
    contract = load_contract(AGENTDOJO_CONTRACTS / "update_scheduled_transaction.yaml")
    writes = tool_writes(agentdojo_src / contract.source.file, contract.qualname)
    assert writes.line > 0 and AMOUNT in writes.paths
    effects = contract.clauses_of("eff")
    # The predicate also reads the lookup key `.by(id=...)`; the tool never writes `id`, so it drops out.
    assert defect_from_clause(
        "d", contract.tool, contract.clause("eff.amount_set"), writes, effects
    ).fields == (AMOUNT,)
    assert defect_from_clause("d", contract.tool, contract.clause("arg.amount"), writes, effects).fields == (
        AMOUNT,
    )
    pre = defect_from_clause("d", contract.tool, contract.clause("pre.transaction_exists"), writes, effects)
    assert set(pre.fields) == writes.paths  # a precondition breach leaves the tool's whole write set wrong
