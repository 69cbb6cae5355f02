"""The grader audit's speed paths give the verdicts the slow paths give.

- A warm grader pools up to two interpreters and grades chunks on both at once (`graders.Pool`): the
  same findings as one interpreter, every interpreter started by the pool's own thread.
- A wrong run marked `verdict_only` may be answered without the rest of its grading when it certainly
  fails: tau2's host compares the records the run changed with the gold run's, on one environment kept
  at the task's initial state (`Start`, whose tables note what a run reaches: `Tracked`); tau-bench's
  host compares the changed records as `get_data_hash` reads them. On real tasks, each verdict equals the
  benchmark's own evaluator's, and the fast answers are there (`preflight`).

The whole-benchmark timings are `bench/grader_audit.py`'s.
"""

from __future__ import annotations

import contextlib
import importlib.util
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from toollint.dynamic.protocol import SERVICES

from toollint.profiles import builtin
from toollint.validate import graders
from toollint.validate.drivers import driver_for
from toollint.validate.graders import audit_variant, batch_grader, warm_grader

BENCH = Path(__file__).parent / "fixtures" / "audit_bench"
sys.path.insert(0, str(BENCH))

from audit_driver import PROFILE, MiniDriver

TAU2_HOST = Path(builtin.__file__).parent / "tau2" / "host" / "validation_host.py"


class PooledDriver(MiniDriver):
    """The fixture driver with a path runner: each runner notes the thread that started it and the
    chunks it graded."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.starters: list[threading.Thread] = []
        self.graded: list[int] = []

    @contextlib.contextmanager
    def path_runner(self, python: str, pythonpath: Path | None = None
                    ) -> Iterator[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]]:
        number = len(self.starters)
        self.starters.append(threading.current_thread())

        def run(variant: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
            self.graded.append(number)
            return [{**a, "reward": 1.0 if a["verdict"] else 0.0} for a in self.grade(python, variant, rows)]

        yield run


def _found(audit: graders.VariantAudit) -> set[tuple[str, str, str, str]]:
    return {(f.code, f.task, str(f.index), f.field) for f in audit.findings}


def test_a_pool_grades_chunks_on_two_interpreters_with_the_same_findings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    driver = PooledDriver(PROFILE, SERVICES, BENCH)
    alone = audit_variant(driver, sys.executable, "main", batch_grader(driver, sys.executable, "main"))
    monkeypatch.setattr(graders, "CHUNK", 2)
    with warm_grader(driver, sys.executable, "main", workers=2) as grade:
        pooled = audit_variant(driver, sys.executable, "main", grade)
    assert _found(pooled) == _found(alone) and pooled.findings
    assert (pooled.ablations, pooled.mutations, pooled.dropped_fields) == (
        alone.ablations, alone.mutations, alone.dropped_fields)
    assert len(driver.starters) == 2 and set(driver.graded) == {0, 1}
    assert all(t is threading.main_thread() for t in driver.starters)


def test_a_small_audit_starts_one_interpreter() -> None:
    driver = PooledDriver(PROFILE, SERVICES, BENCH)
    with warm_grader(driver, sys.executable, "main", workers=2) as grade:
        audit_variant(driver, sys.executable, "main", grade, tasks=["pay_rent"])
    assert len(driver.starters) == 1


def _tau2_host() -> Any:
    spec = importlib.util.spec_from_file_location("toollint_tau2_host_under_test", TAU2_HOST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tracked_table_notes_every_record_a_tool_can_reach() -> None:
    table = _tau2_host().Tracked({"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 3}})
    table["a"]["x"] = 9
    table.get("b")
    table["d"] = {"x": 4}
    assert table.reached() == {"a", "b", "d"}
    table.forget()
    assert table.reached() == set()
    for record in table.values():  # a tool that walks the table may have changed any record
        record["x"] += 0
    assert table.reached() == {"a", "b", "c", "d"}
    table.forget()
    plain = pickle.loads(pickle.dumps(table))
    assert type(plain) is dict and plain == dict(table)


def _verdicts_agree(driver: Any, python: str, variant: str, items: list[dict[str, Any]]
                    ) -> list[dict[str, Any]]:
    """The items graded in full and as `verdict_only`: the same verdicts; the fast answers."""
    full = driver.grade(python, variant, items)
    fast = driver.grade(python, variant, [{**i, "verdict_only": True} for i in items])
    assert [a["verdict"] for a in fast] == [a["verdict"] for a in full]
    return fast


def _wrong_runs(row: dict[str, Any], final: str = "gold") -> list[dict[str, Any]]:
    """The null run and each single-call ablation of a task, as the audit grades them."""
    calls = row["calls"]
    runs = [{"task": row["task"], "calls": [], "final": "empty", "trace": False, "without_llm": True}]
    runs += [{"task": row["task"], "calls": calls[:i] + calls[i + 1:], "final": final, "trace": "final",
              "without_llm": True} for i in range(len(calls))]
    return runs


def test_tau2_airline_verdict_only_answers_as_the_evaluator(tau2_checkout: Path, tau2_python: Path) -> None:
    """Task 7 cancels, modifies and books (three reservations): its null run and the ablations of its
    writes fail tau2's whole-database check, answered fast; an ablated read still passes, graded in full;
    a gold run changed in one field fails, fast too."""
    driver = driver_for("tau2").for_package(tau2_checkout)
    row = next(r for r in driver.ground_truth(str(tau2_python), "airline") if str(r["task"]) == "7")
    items = _wrong_runs(row)
    writes = [i for i, c in enumerate(row["calls"]) if c["function"].startswith(("cancel", "update", "book"))]
    changed = [dict(c) for c in row["calls"]]
    first = writes[0]
    changed[first] = {**changed[first], "args": {**changed[first]["args"], "reservation_id": "XXXXXX"}}
    items.append({"task": row["task"], "calls": changed, "final": "gold", "trace": "final",
                  "without_llm": True})
    fast = _verdicts_agree(driver, str(tau2_python), "airline", items)
    assert all(a.get("preflight") == "db" for a in [fast[0], *(fast[1 + i] for i in writes), fast[-1]])
    reads = [i for i in range(len(row["calls"])) if i not in writes]
    assert reads and all(not fast[1 + i].get("preflight") and fast[1 + i]["verdict"] for i in reads)


def test_taubench_airline_verdict_only_answers_as_calculate_reward(taubench_checkout: Path,
                                                                   taubench_python: Path) -> None:
    driver = driver_for("taubench").for_package(taubench_checkout)
    rows = driver.ground_truth(str(taubench_python), "airline")
    row = next(r for r in rows if 2 <= len(r["calls"]) <= 3 and not r.get("outputs"))
    fast = _verdicts_agree(driver, str(taubench_python), "airline", _wrong_runs(row))
    assert any(a.get("preflight") == "data" for a in fast)
