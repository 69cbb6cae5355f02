"""Gold replay (arm 3): do a benchmark's own ground-truth solutions ever *reach* a confirmed defect?

For every task of a variant (suite, domain), the benchmark's driver (`toollint.validate.drivers`)
gives the function calls that solve it. They are replayed, in order, through the profile's adapter
in the benchmark's own venv, in the environment the task builds. A call reaches a confirmed defect
when it goes to the defective tool and the contract clause the checker confirmed as violated is
false on that very call (the same compiled predicate, on the call's pre-state, post-state, effective
arguments and result): e.g. an update called with `recurring=False`, or a reservation called with
an `end_time` that is not what ends up stored. This is *reach*, not exposure: a task whose grader
reads the field (the tracer's exposure) but whose gold path never triggers the defect is not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.contracts import sandbox
from toollint.contracts.host.predicate import PredicateTypeError
from toollint.contracts.model import Clause, Contract
from toollint.dynamic.protocol import Worker, WorkerError

if TYPE_CHECKING:
    from toollint.validate.drivers import BenchmarkDriver

@dataclass(frozen=True)
class ConfirmedDefect:
    tool: str
    clause: Clause
    code: str

    @property
    def label(self) -> str:
        return f"{self.tool} {self.clause.id} ({self.code})"


@dataclass
class Reach:
    defect: ConfirmedDefect
    tasks_calling: list[str] = field(default_factory=list)  # tasks whose gold path calls the tool
    tasks_reaching: list[str] = field(default_factory=list)  # ... and trigger the violated clause
    witnesses: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> the reaching call
    unscored: list[str] = field(default_factory=list)  # calls on which the clause could not be evaluated

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.defect.tool, "clause": self.defect.clause.id, "code": self.defect.code,
                "tasks_calling": self.tasks_calling, "tasks_reaching": self.tasks_reaching,
                "witnesses": self.witnesses, "unscored": self.unscored}


@dataclass
class ReplayResult:
    suite: str
    tasks: int
    reaches: list[Reach]
    task_errors: dict[str, str]  # tasks whose ground truth could not be built or replayed


def _violated(clause: Clause, pre: Any, post: Any, args: dict[str, Any], result: Any) -> bool | None:
    """Is the confirmed clause false on this call? None when it cannot be evaluated here."""
    if clause.predicate is None:
        return None
    try:
        holds = sandbox.evaluate(clause.predicate, pre, post, args, result)
    except PredicateTypeError:
        return None
    return not holds


def replay_suite(driver: BenchmarkDriver, python: str, suite: str, defects: Sequence[ConfirmedDefect],
                 deadline: float = 30.0) -> ReplayResult:
    """Replay every task's gold calls in variant `suite` and check each confirmed defect of a tool on
    the path."""
    tasks = driver.ground_truth(python, suite)
    reaches = {d.label: Reach(d) for d in defects}
    errors = {t["task"]: t["error"] for t in tasks if t.get("error")}
    with Worker(driver.worker_spec(python, suite), deadline=deadline) as worker:
        worker.start()
        for task in tasks:
            if task.get("error"):
                continue
            try:
                worker.request("build", task_id=task["task"])
                for call in task["calls"]:
                    mine = [d for d in defects if d.tool == call["function"]]
                    pre = worker.request("snapshot")["state"] if mine else None
                    result = worker.request("call", tool=call["function"], args=call["args"])
                    if not mine:
                        continue
                    post = worker.request("snapshot")["state"]
                    args = result.get("effective_args") or call["args"]
                    for d in mine:
                        reach = reaches[d.label]
                        if task["task"] not in reach.tasks_calling:
                            reach.tasks_calling.append(task["task"])
                        if result.get("status") != "ok":
                            continue  # the defects replayed here all concern successful calls
                        hit = _violated(d.clause, pre, post, args, result.get("value"))
                        if hit is None:
                            reach.unscored.append(task["task"])
                        elif hit and task["task"] not in reach.tasks_reaching:
                            reach.tasks_reaching.append(task["task"])
                            reach.witnesses[task["task"]] = {"args": call["args"]}
            except WorkerError as exc:
                errors[task["task"]] = f"replay failed: {exc}"
                worker.start()
    return ReplayResult(suite, len(tasks), list(reaches.values()), errors)


def confirmed_defects(driver: BenchmarkDriver, contracts: Sequence[Contract], python: str,
                      deadline: float = 30.0) -> list[ConfirmedDefect]:
    """Run the dynamic checker on the unmutated benchmark and keep its confirmed clause violations."""
    from toollint.dynamic.checker import VIOLATES, CheckOptions, check_group

    by_suite: dict[str, list[Contract]] = {}
    for c in contracts:
        by_suite.setdefault(driver.variant_of(c), []).append(c)
    out: list[ConfirmedDefect] = []
    for suite, group in sorted(by_suite.items()):
        spec = driver.worker_spec(python, suite)
        for report in check_group(group, spec, CheckOptions(deadline=deadline, confirm=True)):
            for row in report.rows:
                # arg.* rows have no predicate to replay; the eff.* clause over the same argument does
                if row.verdict == VIOLATES and row.clause is not None and row.clause.predicate is not None \
                        and row.code:
                    out.append(ConfirmedDefect(report.tool, row.clause, row.code))
    return out


def to_text(results: Sequence[ReplayResult]) -> str:
    lines = [("Gold replay: ground-truth calls of every user task, replayed; reach = the confirmed clause is "
             "false on a gold call"), f"{'suite':10} {'defect':62} {'calling':>7} {'reaching':>8}"]
    for r in results:
        for reach in r.reaches:
            lines.append(f"{r.suite:10} {reach.defect.label[:62]:62} {len(reach.tasks_calling):7} "
                         f"{len(reach.tasks_reaching):8}" + (f"  {', '.join(reach.tasks_reaching)}"
                                                            if reach.tasks_reaching else ""))
        if r.task_errors:
            lines.append(f"{r.suite:10} {len(r.task_errors)} task(s) not replayed: "
                         + "; ".join(f"{k}: {v[:60]}" for k, v in sorted(r.task_errors.items())[:3]))
    return "\n".join(lines)


def to_json(results: Sequence[ReplayResult]) -> list[dict[str, Any]]:
    return [{"suite": r.suite, "tasks": r.tasks, "task_errors": r.task_errors,
             "defects": [x.to_json() for x in r.reaches]} for r in results]


def gold_replay(
    driver: BenchmarkDriver, python: str | Path, contracts: Sequence[Contract]
) -> list[ReplayResult]:
    """Arm 3 over every variant that has a confirmed defect."""
    defects = confirmed_defects(driver, contracts, str(python))
    suite_of = {c.tool_name: driver.variant_of(c) for c in contracts}
    by_suite: dict[str, list[ConfirmedDefect]] = {}
    for d in defects:
        by_suite.setdefault(suite_of[d.tool], []).append(d)
    return [replay_suite(driver, str(python), suite, ds) for suite, ds in sorted(by_suite.items())]
