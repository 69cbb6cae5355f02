"""Paths through a benchmark, each run twice -- with the published tool and with a one-hunk fix --
and graded by the benchmark's own grader, with an independent predicate reported beside it.

Three uses, one mechanism (`run_two_arms`):

- gold replay: each task's own ground-truth calls. A gold call *reaches* a confirmed defect when the
  violated clause's trigger holds on it (a precondition false on the call, an effect clause false
  after it): reach, not exposure. A task whose verdict changes with the fix is one whose published
  score depends on the defect along its gold path;
- constructed paths: the gold calls with the defect's trigger added (a profile builds them: e.g.
  `suspend_line` before a `refuel_data`), so the published grader meets the defective behaviour;
- for each row, both arms, graded by the benchmark's own evaluator (the driver's `run_paths`) and by
  the contract clause evaluated on the watched call (the *independent predicate*): a clause a fix
  repairs separates the arms; a grader that scores both arms alike cannot see the defect.

The fix is applied to an overlay copy of the package (`Fix.apply`), never to the benchmark itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.profiles.api import Fix, FixError, PathRow, Watch

if TYPE_CHECKING:
    from toollint.profiles.api import PathDriver

__all__ = ["Fix", "FixError", "PathRow", "Watch"]  # the profile API's, used with the runs below

PUBLISHED, FIXED = "published", "fixed"
BATCH = 200  # rows per request to the benchmark's interpreter (each request has its own deadline)


@dataclass
class Arm:
    """One run of a path: the benchmark's reward and the clause's verdict on the watched call."""

    reward: float | None = None
    why: str = ""  # why there is no reward (not graded, not run)
    conforms: bool | None = None  # the independent predicate; None: not evaluated
    reached: bool = False  # the clause's trigger held on the watched call
    called: bool = False  # the watched call was made
    errors: list[str] = field(default_factory=list)

    @property
    def rewarded(self) -> bool:
        return self.reward is not None and self.reward >= 1.0

    def to_json(self) -> dict[str, Any]:
        return {"reward": self.reward, "why": self.why, "conforms": self.conforms, "reached": self.reached,
                "errors": self.errors}


def arm_from(answer: dict[str, Any]) -> Arm:
    """An `Arm` from the driver's answer for one row. The independent verdict of a precondition on a
    call that violates it: refused and the state unchanged; of any other clause: its predicate. Over
    several watched calls: reached if any reaches the trigger, conforming if all conform."""
    watched = answer.get("watched") or []
    at = {w.get("index") for w in watched}
    # a watched call's refusal is what the clause scores, not a failure of the path
    errors = [e for e in answer.get("errors") or [] if _index(e) not in at]
    arm = Arm(answer.get("reward"), str(answer.get("why") or ""), errors=errors)
    verdicts: list[bool | None] = []
    for w in watched:
        arm.called = True
        holds = w.get("holds")
        arm.reached = arm.reached or holds is False
        if w.get("kind") == "pre" and holds is False:
            verdicts.append(w.get("status") != "ok" and not w.get("state_changed"))
        else:
            verdicts.append(holds)
    if verdicts:
        arm.conforms = None if None in verdicts else all(verdicts)
    return arm


def _index(error: str) -> int | None:
    head = error.split(":", 1)[0]
    return int(head) if head.isdigit() else None


@dataclass
class TwoArmRow:
    row: PathRow
    published: Arm
    fixed: Arm

    @property
    def verdict_changes(self) -> bool:
        return (self.published.reward is not None and self.fixed.reward is not None
                and self.published.rewarded != self.fixed.rewarded)

    @property
    def fails_both(self) -> bool:
        return (self.published.reward is not None and self.fixed.reward is not None
                and not self.published.rewarded and not self.fixed.rewarded)

    @property
    def predicate_separates(self) -> bool:
        """The independent predicate condemns the published tool and passes the fix."""
        return self.published.conforms is False and self.fixed.conforms is True

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.row.kind,
            "task": self.row.task,
            "variant": self.row.variant,
            "tool": self.row.tool,
            "clause": self.row.watch.clause.id if self.row.watch else None,
            PUBLISHED: self.published.to_json(),
            FIXED: self.fixed.to_json(),
            "verdict_changes": self.verdict_changes,
            "fails_both_arms": self.fails_both,
            "predicate_separates": self.predicate_separates,
        }


@dataclass
class Figures:
    """Counts over the rows of one kind."""

    kind: str
    tool: str = ""
    rows: int = 0
    built: int = 0  # rows whose calls all ran (but the watched one, which may be refused): the rest below
    graded: int = 0  # both arms have a reward
    called: int = 0  # rows whose path makes the watched call
    reached: int = 0  # ... on which the clause's trigger held (published arm)
    rewarded_published: int = 0
    rewarded_fixed: int = 0
    verdict_changes: int = 0
    fails_both: int = 0
    predicate_separates: int = 0
    predicate_violated_published: int = 0
    predicate_violated_fixed: int = 0
    errors: int = 0  # rows with a failed call in either arm: not built as meant, counted nowhere else
    not_built: list[str] = field(default_factory=list)  # "task: the first failed call"

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "not_built": list(self.not_built)}


def figures(rows: Sequence[TwoArmRow], kind: str, tool: str | None = None) -> Figures:
    out = Figures(kind, tool or "")
    for r in rows:
        if r.row.kind != kind or (tool is not None and r.row.tool != tool):
            continue
        out.rows += 1
        if r.published.errors or r.fixed.errors:
            out.errors += 1
            out.not_built.append(f"{r.row.task}: {(r.published.errors or r.fixed.errors)[0][:160]}")
            continue
        out.built += 1
        out.graded += r.published.reward is not None and r.fixed.reward is not None
        out.called += r.published.called
        out.reached += r.published.reached
        out.rewarded_published += r.published.rewarded
        out.rewarded_fixed += r.fixed.rewarded
        out.verdict_changes += r.verdict_changes
        out.fails_both += r.fails_both
        out.predicate_separates += r.predicate_separates
        out.predicate_violated_published += r.published.conforms is False
        out.predicate_violated_fixed += r.fixed.conforms is False
    return out


@dataclass
class TwoArmRun:
    rows: list[TwoArmRow]
    elapsed_s: float
    arm_seconds: dict[str, float]

    def groups(self) -> list[tuple[str, str]]:
        """(kind, tool) in the order the rows come."""
        return list(dict.fromkeys((r.row.kind, r.row.tool) for r in self.rows))

    def figures(self, kind: str, tool: str) -> Figures:
        return figures(self.rows, kind, tool)

    def to_json(self) -> dict[str, Any]:
        return {"elapsed_s": round(self.elapsed_s, 2), "arm_seconds": self.arm_seconds,
                "figures": [self.figures(k, t).to_json() for k, t in self.groups()],
                "rows": [r.to_json() for r in self.rows]}


def run_two_arms(driver: PathDriver, python: str, rows: Sequence[PathRow], fixes: Sequence[Fix],
                 package_dir: Path, progress: Callable[[str], None] | None = None) -> TwoArmRun:
    """Every row with the published tools and with every fix applied (one overlay), graded by the
    driver's `run_paths`. The two arms run at once, each in an interpreter of its own."""
    from toollint.validate.harness import package_overlay

    start = time.perf_counter()
    answers: dict[str, list[dict[str, Any]]] = {}
    seconds: dict[str, float] = {}
    failures: list[BaseException] = []

    def arm(name: str, pythonpath: Path | None) -> None:
        began = time.perf_counter()
        try:
            answers[name] = _run_rows(driver, python, rows, pythonpath, progress, name)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failures.append(exc)
        seconds[name] = round(time.perf_counter() - began, 2)

    with package_overlay(package_dir) as root:
        for fix in fixes:
            fix.apply(root / package_dir.name, package_dir)
        threads = [
            threading.Thread(target=arm, args=(PUBLISHED, None)),
            threading.Thread(target=arm, args=(FIXED, root)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if failures:
        raise failures[0]
    out = [
        TwoArmRow(row, arm_from(p), arm_from(f))
        for row, p, f in zip(rows, answers[PUBLISHED], answers[FIXED])
    ]
    return TwoArmRun(out, time.perf_counter() - start, seconds)


def _run_rows(driver: PathDriver, python: str, rows: Sequence[PathRow], pythonpath: Path | None,
              progress: Callable[[str], None] | None, arm: str) -> list[dict[str, Any]]:
    by_variant: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_variant.setdefault(row.variant, []).append(i)
    out: list[dict[str, Any]] = [{} for _ in rows]
    with driver.path_runner(python, pythonpath) as run:
        for variant, index in by_variant.items():
            for start in range(0, len(index), BATCH):
                chunk = index[start:start + BATCH]
                for i, answer in zip(chunk, run(variant, [rows[i].request() for i in chunk])):
                    out[i] = answer
                if progress:
                    progress(f"{arm} {variant} {min(start + BATCH, len(index))}/{len(index)}")
    return out


def to_text(run: TwoArmRun) -> str:
    lines = [
        (
            f"{'paths':8} {'tool':20} {'rows':>5} {'built':>5} {'graded':>6} {'calls':>5} {'reach':>5} "
            f"{'rewarded pub/fix':>16} "
            f"{'changes':>7} {'fail both':>9} {'pred. separates':>15} {'errors':>6}"
        )
    ]
    for kind, tool in run.groups():
        f = run.figures(kind, tool)
        lines.append(
            f"{kind:8} {tool[:20]:20} {f.rows:5} {f.built:5} {f.graded:6} {f.called:5} {f.reached:5} "
            f"{f'{f.rewarded_published}/{f.rewarded_fixed}':>16} {f.verdict_changes:7} {f.fails_both:9} "
            f"{f.predicate_separates:15} {f.errors:6}"
        )
        lines += [f"{'':8} not built: {why}" for why in f.not_built[:3]]
    rate = len(run.rows) * 2 / run.elapsed_s if run.elapsed_s else 0.0
    lines.append(
        f"{len(run.rows)} paths x 2 arms = {len(run.rows) * 2} runs in {run.elapsed_s:.1f} s "
        f"({rate:.1f} runs/s; arms " + ", ".join(f"{k} {v:.1f} s" for k, v in run.arm_seconds.items()) + ")"
    )
    return "\n".join(lines)
