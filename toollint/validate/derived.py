"""The mutation arm with derived oracles only, beside the authored contracts.

`DerivedRunner` is the harness's dynamic runner (`harness.run(..., runner=DerivedRunner)`) with no
contract at all: each mutant's tools get the oracles their own static findings on the mutant imply
(`toollint.dynamic.derived`), and every affected tool at least the reset check, which needs no
finding. The original is checked the same way (its findings, its oracles) for the baseline, so a
kill is a derived violation the original does not have, exactly as for authored contracts; the
negative controls (semantics-preserving rewrites, and minibank's conforming original) must get no
derived violation either.

`compare_arms` runs both arms on the same mutants and tabulates dynamic kills per defect class
(`bench/derived.py --mutation` prints it for minibank and a benchmark profile's tool modules).
"""

from __future__ import annotations

import ast
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toollint.dynamic.checker import CheckOptions, ToolReport, check_group
from toollint.dynamic.derived import (
    DerivedCheck,
    DerivedTool,
    Hooks,
    derivable,
    derive_tools,
)
from toollint.dynamic.protocol import WorkerSpec
from toollint.engine import lint_source
from toollint.validate.harness import (
    KILLED,
    NOT_RUN,
    SURVIVED,
    DynamicOutcome,
    DynamicRunner,
    Subject,
    ValidationRun,
    _behaviour,
    _legal_errors,
    _violation_rows,
    _wrong_errors,
    run,
)
from toollint.validate.mutation import Mutant


class DerivedRunner(DynamicRunner):
    """Hosts the original and each mutant of a subject, with derived oracles in place of contracts."""

    def __init__(self, subject: Subject, root: Path) -> None:
        super().__init__(subject, root)
        # Inside the overlay, so the derived contracts go with it (a temporary directory of their own was
        # never removed: one left behind per arm run).
        self.work = root / ".toollint-derived"
        self.all_tools = _tools_of(self.original)

    def _derived_reports(self, source: str, tools: Sequence[str]) -> list[ToolReport]:
        """Derive the oracles of `tools` from `source`'s own findings and check them with `source`
        written into the overlay."""
        assert self.host is not None
        self.target.write_text(source, encoding="utf-8")
        for cache in self.target.parent.glob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
        try:
            wanted = {t.rsplit(".", 1)[-1] for t in tools}
            findings = [f for f in lint_source(source, str(self.target), self.subject.settings,
                                               self.subject.module_name).reported
                        if derivable(f) and str(f.tool).rsplit(".", 1)[-1] in wanted]
            derived = derive_tools(findings, read=lambda _path: source)
            have = {t.name for t in derived}
            for qualname in tools:
                if qualname.rsplit(".", 1)[-1] not in have:
                    bare = _reset_only(str(self.target), qualname, source)
                    if bare is not None:
                        derived.append(bare)
            groups: dict[str, tuple[WorkerSpec, list[DerivedCheck]]] = {}
            for i, tool in enumerate(derived):
                check = DerivedCheck(tool, self.work / f"{i}-{tool.name}.yaml")
                spec = self.host.make_spec(self.root, tool.skeleton(check.path))
                groups.setdefault(repr(sorted(spec.options.items())), (spec, []))[1].append(check)
            reports: list[ToolReport] = []
            for spec, checks in groups.values():
                options = CheckOptions(deadline=self.host.deadline, confirm=True, derived=Hooks())
                reports.extend(check_group([c.clause_set() for c in checks], spec, options))
            return reports
        finally:
            self.target.write_text(self.original, encoding="utf-8")

    def run_baseline(self, tools: Sequence[str] | None = None) -> None:
        self.record_baseline(self._derived_reports(self.original,
                                                   list(tools) if tools is not None else self.all_tools))

    def outcome(self, m: Mutant) -> DynamicOutcome:
        if m.static_only:
            return DynamicOutcome(NOT_RUN, "static-only shape: behaves like the original at run time")
        start = time.perf_counter()
        reports = self._derived_reports(m.source, m.tools)
        if not reports:
            return DynamicOutcome(NOT_RUN, "no tool to derive an oracle for: " + ", ".join(m.tools))
        _keys, rows, flaky = _violation_rows(reports)
        fresh = [r for r in rows if self.is_new(r)]
        masked = sorted({f"{r['tool']}:{r['clause']}" for r in rows if r not in fresh})
        behaviour = _behaviour(reports)
        same = [k for k, v in behaviour.items() if self.baseline_behaviour.get(k) == v]
        unchanged = len(same) if behaviour and len(same) == len(behaviour) else None
        covering = [f"{r.tool}:{row.clause_id}" for r in reports for row in r.clause_rows]
        why = "; ".join(f"{r['tool']} {r['clause']} ({r['code']})" for r in fresh[:4])
        return DynamicOutcome(
            KILLED if fresh else SURVIVED,
            why,
            fresh,
            flaky,
            covering,
            masked,
            _legal_errors(reports),
            _wrong_errors(reports),
            time.perf_counter() - start,
            unchanged,
        )


def _tools_of(source: str) -> list[str]:
    """Every tool the shared analysis finds in the module (qualified names)."""
    from toollint.analysis import analyze_module

    try:
        return [t.qualname for t in analyze_module(ast.parse(source)).tools]
    except SyntaxError:
        return []


def _reset_only(path: str, qualname: str, source: str) -> DerivedTool | None:
    """A tool with no finding: no clause to derive, and still the reset check, which needs none."""
    from toollint.dynamic.derived import _tool

    return _tool(path, qualname, lambda _path: source)


def run_derived_arm(
    subjects: Sequence[Subject],
    *,
    seed: int = 0,
    budget: int | None = None,
    operators: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
) -> ValidationRun:
    """The harness's mutation arm and controls with `DerivedRunner` as the dynamic half."""
    return run(subjects, seed=seed, budget=budget, dynamic=True, operators=operators, tools=tools,
               runner=DerivedRunner)


def tabulate(authored: ValidationRun, derived: ValidationRun) -> dict[str, Any]:
    """Per subject and defect class: mutants the benchmark can reach that the dynamic half can run,
    and how many each arm's dynamic half killed; of them, those a static rule flags and how many of
    those the derived oracles confirm (a derived oracle exists only where a finding is); negative-
    control flags per arm."""
    out: dict[str, Any] = {"subjects": {}}
    derived_by_id = {(r.subject, r.mutant.id): r for r in derived.mutants}
    for name in dict.fromkeys(r.subject for r in authored.mutants):
        classes: dict[str, dict[str, int]] = {}
        for r in authored.mutants:
            if r.subject != name or r.unreachable or r.mutant.static_only:
                continue
            d = derived_by_id.get((name, r.mutant.id))
            row = classes.setdefault(r.mutant.defect_class, {"mutants": 0, "authored": 0, "derived": 0,
                                                             "flagged": 0, "derived_of_flagged": 0})
            derived_kill = d is not None and d.dynamic.status == KILLED
            row["mutants"] += 1
            row["authored"] += r.dynamic.status == KILLED
            row["derived"] += derived_kill
            # The derived oracles' own ground: mutants a static rule flags (a finding the original lacks).
            row["flagged"] += r.static.killed
            row["derived_of_flagged"] += r.static.killed and derived_kill
        flags = {arm: sum(len(c.false_positives) for c in run_.controls if c.subject == name)
                 for arm, run_ in (("authored", authored), ("derived", derived))}
        out["subjects"][name] = {
            "classes": classes,
            "mutants": sum(c["mutants"] for c in classes.values()),
            "authored": sum(c["authored"] for c in classes.values()),
            "derived": sum(c["derived"] for c in classes.values()),
            "flagged": sum(c["flagged"] for c in classes.values()),
            "derived_of_flagged": sum(c["derived_of_flagged"] for c in classes.values()),
            "controls": {**flags, "count": sum(1 for c in authored.controls if c.subject == name)},
            "authored_s": sum(r.dynamic.elapsed_s for r in authored.mutants if r.subject == name),
            "derived_s": sum(r.dynamic.elapsed_s for r in derived.mutants if r.subject == name),
            "derived_survivors": sorted(r.mutant.id for r in derived.mutants
                                        if r.subject == name and r.dynamic.status == SURVIVED),
        }
    return out


def compare_arms(subjects: Sequence[Subject], *, budget: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Both arms on the same mutants of `subjects`, tabulated side by side (`tabulate`)."""
    authored = run(subjects, seed=seed, budget=budget, dynamic=True)
    derived = run_derived_arm(subjects, seed=seed, budget=budget)
    return tabulate(authored, derived)
