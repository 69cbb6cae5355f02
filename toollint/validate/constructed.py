"""Constructed paths (arm 4, the positive control), for the falsy class.

For a tool whose truth tests drop a legal falsy argument (`if amount:` before `t.amount = amount`,
the TL104 shape the dynamic half confirms as an Ignored Argument), every task whose gold path calls
the tool without such an argument gets a constructed path: its own ground-truth calls, with the
falsy value of that argument added to the call of the defective tool (one more legal update). The
task's own grader then scores the resulting environment twice, in the benchmark's venv: with the
published tool, and with a minimally fixed copy (`if amount:` -> `if amount is not None:`, written
into an overlay of the package). A task whose verdict differs between the two is one where the
grader's verdict depends on the defect: it rewards (or punishes) the defective behaviour and scores
the repair the other way. Ground truth and grading come from the benchmark's driver
(`toollint.validate.drivers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst as cst

from toollint.validate.harness import package_overlay
from toollint.validate.mutation import ModuleFacts

if TYPE_CHECKING:
    from toollint.validate.drivers import BenchmarkDriver

FALSY = {"int": 0, "float": 0.0, "bool": False, "str": ""}

@dataclass
class TruthTest:
    tool: str
    argument: str
    falsy: Any


@dataclass
class ConstructedPath:
    task: str
    tool: str
    argument: str
    falsy: Any
    calls: list[dict[str, Any]]
    gold_verdict: bool | None = None  # the unmodified gold path, published tool
    defective_verdict: bool | None = None  # the constructed path, published tool
    fixed_verdict: bool | None = None  # the constructed path, fixed tool
    errors: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return (self.defective_verdict is not None and self.fixed_verdict is not None
                and self.defective_verdict != self.fixed_verdict)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "tool": self.tool, "argument": self.argument, "falsy": self.falsy,
                "gold_verdict": self.gold_verdict, "defective_verdict": self.defective_verdict,
                "fixed_verdict": self.fixed_verdict, "verdict_changes_with_fix": self.changes,
                "errors": self.errors}


def truth_tests(source: str, path: str, module_name: str) -> list[TruthTest]:
    """`if arg:` on a tool argument of a falsy-legal type (int, float, bool, str)."""
    facts = ModuleFacts(source, path, module_name=module_name)
    out = []
    for t in facts.targets:
        if not t.is_tool:
            continue
        bases = {p.name: p.base for p in t.params}
        for s in facts.statements(t):
            if isinstance(s.node, cst.If) and isinstance(s.node.test, cst.Name):
                name = s.node.test.value
                if bases.get(name) in FALSY:
                    out.append(TruthTest(t.qualname, name, FALSY[bases[name]]))
    return out


def fixed_source(source: str, path: str, module_name: str, tool: str) -> str:
    """The minimal fix: every `if arg:` on a falsy-legal argument of `tool` becomes `if arg is not None:`."""
    facts = ModuleFacts(source, path, module_name=module_name)
    target = next(t for t in facts.targets if t.qualname == tool)
    bases = {p.name: p.base for p in target.params}
    edits = [
        facts.replace_node(s.node.test, f"{s.node.test.value} is not None")
        for s in facts.statements(target)
        if isinstance(s.node, cst.If)
        and isinstance(s.node.test, cst.Name)
        and bases.get(s.node.test.value) in FALSY
    ]
    return facts.apply(edits)


def constructed_paths(driver: BenchmarkDriver, python: str, package_dir: Path, module: str,
                      suite: str) -> list[ConstructedPath]:
    """Arm 4 for every truth-tested argument of every tool in one tool module of the benchmark."""
    path, module_name = driver.tool_module(package_dir, module)
    source = path.read_text(encoding="utf-8")
    tests = truth_tests(source, str(path), module_name)
    tasks = driver.ground_truth(python, suite)
    paths: list[ConstructedPath] = []
    for tt in tests:
        for task in tasks:
            calls = task["calls"]
            # Only where the gold call leaves the argument out: the path still does what the task
            # asks, plus one legal update the defective tool drops.
            if not any(c["function"] == tt.tool and tt.argument not in c["args"] for c in calls):
                continue
            built = [dict(c, args={**c["args"], tt.argument: tt.falsy})
                     if c["function"] == tt.tool and tt.argument not in c["args"] else c for c in calls]
            paths.append(ConstructedPath(task["task"], tt.tool, tt.argument, tt.falsy, built))
    if not paths:
        return []
    # one interpreter start (importing the benchmark costs seconds) for the gold and the constructed paths
    both = driver.grade(
        python,
        suite,
        [{"task": p.task, "calls": next(t["calls"] for t in tasks if t["task"] == p.task)} for p in paths]
        + [{"task": p.task, "calls": p.calls} for p in paths],
    )
    gold, defective = both[:len(paths)], both[len(paths):]
    by_tool: dict[str, list[int]] = {}
    for i, p in enumerate(paths):
        by_tool.setdefault(p.tool, []).append(i)
    fixed: list[dict[str, Any]] = [{} for _ in paths]
    for tool, idx in by_tool.items():
        with package_overlay(package_dir) as root:
            target = root / package_dir.name / path.relative_to(package_dir)
            target.write_text(fixed_source(source, str(path), module_name, tool), encoding="utf-8")
            graded = driver.grade(
                python, suite, [{"task": paths[i].task, "calls": paths[i].calls} for i in idx], root
            )
        for i, g in zip(idx, graded):
            fixed[i] = g
    for p, g, d, f in zip(paths, gold, defective, fixed):
        p.gold_verdict, p.defective_verdict, p.fixed_verdict = g["verdict"], d["verdict"], f.get("verdict")
        p.errors = sorted(set(g["errors"] + d["errors"] + f.get("errors", [])))
    return paths


def to_text(paths: Sequence[ConstructedPath]) -> str:
    lines = [("Constructed paths: gold calls + a legal falsy argument to the defective tool, graded with the "
             "published tool and with the minimal fix"),
             f"{'task':14} {'tool.argument=value':48} {'gold':>5} {'defective':>9} {'fixed':>5}  changes"]
    for p in paths:
        label = f"{p.tool}.{p.argument}={p.falsy!r}"
        lines.append(f"{p.task:14} {label[:48]:48} {p.gold_verdict!s:>5} {p.defective_verdict!s:>9} "
                     f"{p.fixed_verdict!s:>5}  {'YES' if p.changes else 'no'}")
    changed = sorted({p.task for p in paths if p.changes})
    lines.append(f"{len(changed)} task(s) whose verdict changes with the fix: {', '.join(changed) or 'none'}")
    return "\n".join(lines)
