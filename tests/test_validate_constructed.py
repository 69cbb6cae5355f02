"""Constructed paths (arm 4): the minimal fix, the truth tests it targets, and the positive control
on AgentDojo banking (the task's own grader scores the published tool and the fixed copy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.validate.constructed import constructed_paths, fixed_source, to_text, truth_tests
from toollint.validate.drivers import driver_for

AGENTDOJO = driver_for("agentdojo")

TOOL = '''from typing import Annotated


class Depends:
    def __init__(self, name):
        self.name = name


def update(db: Annotated[dict, Depends("db")], id: int, amount: float | None = None,
           note: str | None = None, owner: object | None = None) -> str:
    row = db[id]
    if amount:
        row["amount"] = amount
    if note:
        row["note"] = note
    if owner:
        row["owner"] = owner
    return "updated"
'''


def test_truth_tests_are_the_falsy_legal_arguments_only() -> None:
    found = [(t.tool, t.argument, t.falsy) for t in truth_tests(TOOL, "m.py", "m")]
    assert found == [("update", "amount", 0.0), ("update", "note", "")]  # `owner` has no falsy value


def test_fixed_source_is_the_minimal_fix() -> None:
    fixed = fixed_source(TOOL, "m.py", "m", "update")
    assert "    if amount is not None:\n" in fixed and "    if note is not None:\n" in fixed
    assert "    if owner:\n" in fixed  # not a falsy-legal argument: left alone
    assert len(fixed.splitlines()) == len(TOOL.splitlines())
    namespace: dict[str, object] = {}
    exec(compile(fixed, "fixed", "exec"), namespace)  # noqa: S102 - our own fixture text
    db = {1: {"amount": 5.0, "note": "x"}}
    namespace["update"](db, 1, amount=0.0, note="")  # type: ignore[operator]
    assert db[1] == {"amount": 0.0, "note": ""}


def test_grading_with_a_missing_interpreter_is_one_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"^could not run /nonexistent/python"):
        AGENTDOJO.grade("/nonexistent/python", "banking", [])


def test_banking_graders_score_the_defect_and_the_fix_differently(agentdojo_python: Path,
                                                                  agentdojo_src: Path) -> None:
    paths = constructed_paths(AGENTDOJO, str(agentdojo_python), agentdojo_src, "banking_client", "banking")
    assert paths and {p.tool for p in paths} == {"update_scheduled_transaction"}
    for p in paths:
        assert p.gold_verdict is True, (p.task, p.errors)  # the unmodified gold path passes its grader
        call = next(c for c in p.calls if c["function"] == p.tool)
        assert call["args"][p.argument] == p.falsy
    # the positive control: some task's published verdict depends on the defect
    assert any(p.changes for p in paths)
    assert "verdict changes with the fix" in to_text(paths)
