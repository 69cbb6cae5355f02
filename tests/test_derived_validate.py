"""The mutation arm with derived oracles only (toollint/validate/derived.py), a sample on minibank:
the shapes a static rule flags are killed by the oracle their finding implies, a reset leak by the
check that needs no finding, and the negative controls get no derived flag. The full arm beside
authored contracts is `python bench/derived.py --mutation`."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.validate.derived import DerivedRunner, compare_arms, run_derived_arm, tabulate
from toollint.validate.harness import KILLED, overlay, run
from toollint.validate.subjects import minibank_subject

MINIBANK_DIR = Path(__file__).parent / "fixtures" / "mutation" / "minibank"
# A shape per derived oracle: a commented guard (TL102), a write gated on a truth test (TL104),
# state pinned in a module global (TL101: nothing written at all; a reset leak).
SAMPLE = ["comment-guard", "truthy-gate", "pin-state"]


@pytest.fixture(scope="module")
def arms() -> tuple[object, object]:
    subject = minibank_subject(MINIBANK_DIR)
    authored = run([subject], seed=3, budget=5, dynamic=True, operators=SAMPLE)
    derived = run_derived_arm([subject], seed=3, budget=5, operators=SAMPLE)
    return authored, derived


def test_derived_oracles_kill_what_their_findings_point_at(arms: tuple[object, object]) -> None:
    _, derived = arms
    outcome = {r.mutant.id: (r.dynamic.status, r.dynamic.violations) for r in derived.mutants}  # type: ignore[attr-defined]
    status, violations = outcome["bank:comment-guard:Bank.deposit:62:2"]
    assert status == KILLED and [(v["code"], v["clause"]) for v in violations] == [
        ("TL201", "pre.commented_guard_62")
    ]
    status, violations = outcome["bank:truthy-gate:Bank.update_account:141:0"]
    assert status == KILLED and {v["code"] for v in violations} == {"TL202"}
    # lock_account's commented `account_id not in self.accounts` guard becomes a precondition; the
    # mutant then fails with a KeyError. A refusal that is not the guard's own is not counted by
    # itself (an unrelated check before the guard's line may refuse the same way), but the call,
    # watched, passed the guard's line with the condition true and crashed after it: killed.
    status, violations = outcome["bank:comment-guard:Bank.lock_account:105:9"]
    assert status == KILLED and [(v["code"], v["clause"]) for v in violations] == [
        ("TL201", "pre.commented_guard_105")
    ]
    assert violations[0]["detail"] == (
        "passed the commented-out guard's line with its condition true, then crashed "
        "with KeyError, not the guard's ValueError"
    )
    # State pinned in a module global (`global _PINNED; _PINNED = ...`) is a write the analysis sees
    # (issue 22), so TL101 no longer says "nothing is written at all" and no derived oracle claims the
    # state must change: a reset leak is the authored contracts' to find (TL205), and they do.
    authored = {r.mutant.id: r.dynamic for r in arms[0].mutants}  # type: ignore[attr-defined]
    pinned = authored["bank:pin-state:Bank.transfer:79:1"]
    assert pinned.status == KILLED and {v["code"] for v in pinned.violations} == {"TL205"}


def test_negative_controls_are_clean_in_both_arms(arms: tuple[object, object]) -> None:
    authored, derived = arms
    table = tabulate(authored, derived)["subjects"]["minibank"]  # type: ignore[arg-type]
    assert table["controls"]["authored"] == 0 and table["controls"]["derived"] == 0
    assert table["controls"]["count"] > 0
    assert table["mutants"] == 5 and 0 < table["derived"] <= table["mutants"]
    # Every mutant of the sample is flagged statically (TL102, TL104, TL101 on the pinned state).
    assert 0 < table["derived_of_flagged"] <= table["flagged"] == table["mutants"]


def test_the_unmutated_original_gets_no_derived_violation() -> None:
    subject = minibank_subject(MINIBANK_DIR)
    with overlay(subject.host) as root:  # type: ignore[arg-type]
        runner = DerivedRunner(subject, root)
        runner.run_baseline()
    assert runner.baseline_rows == []
    assert set(runner.all_tools) >= {"Bank.deposit", "Bank.transfer"}


@pytest.mark.slow
def test_compare_arms_tabulates_both_on_the_same_mutants() -> None:
    table = compare_arms([minibank_subject(MINIBANK_DIR)], seed=3, budget=2)["subjects"]["minibank"]
    assert table["mutants"] == sum(c["mutants"] for c in table["classes"].values())
    assert all(
        c["authored"] <= c["mutants"] and c["derived"] <= c["mutants"] for c in table["classes"].values()
    )
