"""The mutation arm and the negative controls: run toollint's two halves on injected defects.

A *subject* is one tool module: its file, the module name the linter should see, and optionally how
to host it for the dynamic half (contracts, and a worker spec built around an overlay directory that
shadows the installed package). For each mutant:

- static: `toollint.engine.lint_source` on the mutant and on the original; the mutant is killed when
  a finding appears on one of the tools the mutation affects (or inside the mutated function) that
  the original did not have. Findings are compared by (code, tool, message with digits removed), as
  a multiset, so a second TL104 on the same tool counts and moved line numbers do not.
- dynamic: the mutated file is written into a private copy of its package, which is put first on the
  worker's import path, and `toollint.dynamic.checker.check_group` probes every affected tool that
  has a contract. Killed when a tool reports a VIOLATES row (confirmed by a re-run) that the original
  did not have. FLAKY rows are reported, never counted as kills.

Negative controls are the unmutated module and semantics-preserving rewrites of it: every new static
finding on a rewrite, and every VIOLATES on a tool of the fixture benchmark (clean by construction), is
a false positive, reported by name.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.engine import lint_source
from toollint.model import Finding
from toollint.profiles.api import DynamicHost, Subject
from toollint.validate.mutation import (
    FRAME_VIOLATION,
    IGNORED_ARGUMENT,
    PARTIAL_EFFECT,
    PHANTOM_EFFECT,
    RESET_LEAK,
    UNENFORCED_PRECONDITION,
    Mutant,
    controls,
    mutants,
    sample,
)

if TYPE_CHECKING:
    from toollint.contracts.model import Contract
    from toollint.profiles.api import WorkerSpec

KILLED, SURVIVED, NOT_RUN = "killed", "survived", "not-run"


@dataclass
class StaticOutcome:
    killed: bool
    new: list[Finding]  # findings the original did not have, on the affected tools


@dataclass
class DynamicOutcome:
    status: str  # KILLED, SURVIVED or NOT_RUN
    why: str = ""  # for NOT_RUN: no contract, no host; for KILLED: the violating rows
    violations: list[dict[str, Any]] = field(default_factory=list)
    flaky: list[dict[str, Any]] = field(default_factory=list)
    covering: list[str] = field(default_factory=list)  # contract clauses that cover the mutation
    masked: list[str] = field(default_factory=list)  # violated clauses the original already violates
    legal_errors: list[str] = field(default_factory=list)  # legal calls that raised (never scored)
    wrong_errors: list[str] = field(default_factory=list)  # refused, but with an undeclared exception
    elapsed_s: float = 0.0
    # Every probe behaved exactly as on the original (same reply, same state change): the number of
    # such calls; None when some call differed or nothing ran.
    indistinguishable: int | None = None


@dataclass
class MutantResult:
    subject: str
    mutant: Mutant
    static: StaticOutcome
    dynamic: DynamicOutcome
    unreachable: bool = False  # no tool the benchmark registers runs the mutated code

    @property
    def killed(self) -> bool:
        return self.static.killed or self.dynamic.status == KILLED

    def explanation(self) -> str:
        """Why a survivor survived, in the terms of the paper's diagnosis."""
        if self.unreachable:
            return (f"unreachable: the benchmark registers no tool that runs {self.mutant.function} "
                    f"({', '.join(self.mutant.tools)}), so no agent can call it; not counted in the rates")
        if self.killed:
            return ""
        if self.mutant.static_only:
            return "static-only shape: no rule matched it, and no probe can tell it apart at run time"
        if self.dynamic.status == NOT_RUN:
            return f"no static rule matched; dynamic not run ({self.dynamic.why})"
        if self.dynamic.indistinguishable:
            # No clause could fail: the probes never made the mutated code behave differently.
            return (
                f"no probe tells it apart: all {self.dynamic.indistinguishable} calls gave the original's "
                "reply and state change (an equivalent mutant, or one only an unprobed input reaches)"
            )
        if self.dynamic.masked:
            return (f"masked: the original already violates {', '.join(self.dynamic.masked[:3])}, "
                    "so the mutation adds no new violation")
        if self.dynamic.covering and self.dynamic.legal_errors:
            return (
                f"checker gap: a legal call raised ({self.dynamic.legal_errors[0]}) and every effect clause "
                f"still held on it; clause(s) {', '.join(self.dynamic.covering)} cover the mutation"
            )
        if self.dynamic.covering and self.dynamic.wrong_errors:
            return (f"checker gap: the violating call was refused with another error than declared "
                    f"({self.dynamic.wrong_errors[0]}), yet no precondition row was violated")
        if self.dynamic.covering:
            return (f"checker gap: clause(s) {', '.join(self.dynamic.covering)} cover it, "
                    "but no probe revealed it")
        return "no covering clause in the contract"

    def to_json(self) -> dict[str, Any]:
        m = self.mutant
        return {
            "subject": self.subject,
            "id": m.id,
            "operator": m.operator,
            "class": m.defect_class,
            "function": m.function,
            "tools": list(m.tools),
            "line": m.line,
            "description": m.description,
            "static_only": m.static_only,
            "killed_by_static": self.static.killed,
            "static_findings": [_finding_json(f) for f in self.static.new],
            "dynamic": self.dynamic.status,
            "dynamic_detail": self.dynamic.why,
            "dynamic_violations": self.dynamic.violations,
            "dynamic_flaky": self.dynamic.flaky,
            "covering_clauses": self.dynamic.covering,
            "masked_by_original": self.dynamic.masked,
            "legal_calls_that_raised": self.dynamic.legal_errors,
            "refused_with_undeclared_error": self.dynamic.wrong_errors,
            "indistinguishable_calls": self.dynamic.indistinguishable,
            "killed": self.killed,
            "unreachable": self.unreachable,
            "explanation": self.explanation(),
        }


def _dynamic_flag(row: dict[str, Any]) -> dict[str, Any]:
    """A VIOLATES row in the shape of a static finding (no line: it is a verdict on a call)."""
    return {
        "code": row["code"],
        "tool": row["tool"],
        "line": None,
        "message": f"{row['clause']}: {row['detail']}",
    }


def _finding_json(f: Finding) -> dict[str, Any]:
    return {"code": f.code, "tool": f.tool, "line": f.line, "message": f.message}


# -- static half ----------------------------------------------------------------------------------


def _key(f: Finding) -> tuple[str, str | None, str]:
    return f.code, f.tool, re.sub(r"\d+", "#", f.message)


def lint(subject: Subject, source: str) -> list[Finding]:
    return [f for f in lint_source(source, subject.shown, subject.settings, subject.module_name).reported
            if not f.code.startswith("TL9")]


def new_findings(baseline: Sequence[Finding], findings: Sequence[Finding]) -> list[Finding]:
    """Findings beyond the baseline's, compared as a multiset of (code, tool, message sans digits)."""
    left = Counter(_key(f) for f in baseline)
    out = []
    for f in findings:
        k = _key(f)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(f)
    return out


def _function_span(source: str, qualname: str) -> tuple[int, int] | None:
    import ast

    tree = ast.parse(source)
    parts = qualname.split(".")
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in parts:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body  # type: ignore[attr-defined]
    assert node is not None
    return node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]


def static_outcome(subject: Subject, baseline: Sequence[Finding], m: Mutant) -> StaticOutcome:
    new = new_findings(baseline, lint(subject, m.source))
    span = _function_span(m.source, m.function)
    tools = set(m.tools) | {m.function}

    def on_target(f: Finding) -> bool:
        if f.tool is not None and (f.tool in tools or f.tool.rsplit(".", 1)[-1] in tools):
            return True
        return span is not None and span[0] <= f.line <= span[1]

    hits = [f for f in new if on_target(f)]
    return StaticOutcome(bool(hits), hits)


# -- dynamic half ---------------------------------------------------------------------------------


@contextmanager
def package_overlay(package_dir: Path) -> Iterator[Path]:
    """A temp root holding a private copy of a package; put the root first on the import path."""
    with tempfile.TemporaryDirectory(prefix="toollint-overlay-") as tmp:
        root = Path(tmp)
        shutil.copytree(
            package_dir, root / package_dir.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        yield root


@contextmanager
def overlay(host: DynamicHost) -> Iterator[Path]:
    """A private copy of the subject's package; the caller writes mutants into it."""
    with package_overlay(host.package_dir) as root:
        yield root


def _contract_covers(contract: Contract, m: Mutant) -> list[str]:
    """Clauses of a contract that speak to what the mutation breaks (the paper's "covering clause")."""
    kinds = {
        UNENFORCED_PRECONDITION: ("pre",),
        PARTIAL_EFFECT: ("eff",),
        PHANTOM_EFFECT: ("eff",),
        FRAME_VIOLATION: ("frame", "inv"),
        RESET_LEAK: ("eff", "inv"),
    }
    out = []
    for c in contract.counted_clauses:
        if m.defect_class == IGNORED_ARGUMENT and m.argument:
            reads = re.search(
                rf"\bargs\s*(\.\s*{m.argument}\b|\[\s*['\"]{m.argument}['\"])", c.predicate_source or ""
            )
            if c.arg == m.argument or (c.kind == "eff" and reads):
                out.append(c.id)
        elif c.kind in kinds.get(m.defect_class, ()):
            out.append(c.id)
    if m.defect_class == FRAME_VIOLATION and contract.adapter.get("frame"):
        out.append("adapter.frame")
    return out


def _violation_rows(reports: Sequence[Any]) -> tuple[set[tuple[str, str, str]], list[dict[str, Any]],
                                                      list[dict[str, Any]]]:
    from toollint.dynamic.checker import FLAKY, VIOLATES

    keys: set[tuple[str, str, str]] = set()
    violations, flaky = [], []
    for r in reports:
        for row in r.rows:
            entry = {"tool": r.tool, "clause": row.clause_id, "code": row.code, "detail": row.detail[:300],
                     "failing_calls": sorted(row.failing_calls)}
            if row.verdict == VIOLATES:
                keys.add((r.tool, row.clause_id, row.code or ""))
                violations.append(entry)
            elif row.verdict == FLAKY:
                flaky.append(entry)
        if r.error:
            flaky.append({"tool": r.tool, "clause": None, "code": None, "detail": f"not checked: {r.error}"})
    return keys, violations, flaky


def _behaviour(reports: Sequence[Any]) -> dict[tuple[str, str], str]:
    """(tool, call) -> what the call did: its status, reply and state change. Two runs with equal
    behaviour on every call are indistinguishable to any clause."""
    out = {}
    for r in reports:
        for run in r.runs:
            reply = {
                k: v for k, v in run.result.items() if k not in ("agent_view", "elapsed_ms", "elapsed_s")
            }
            out[(r.tool, run.probe.key())] = json.dumps(
                [run.status, reply, run.outcome_key()], sort_keys=True, default=str
            )
    return out


def _legal_errors(reports: Sequence[Any]) -> list[str]:
    """Happy-path probes (every precondition declared true) that ended in an error."""
    out = []
    for r in reports:
        for run in r.runs:
            if run.probe.kind == "happy" and run.status in ("tool_error", "crash"):
                err = run.result.get("error_type") or run.status
                out.append(f"{r.tool}: {err}: {str(run.result.get('error_message') or '')[:80]}")
    return out


def _wrong_errors(reports: Sequence[Any]) -> list[str]:
    """Precondition-violating probes refused with another exception than the contract declares."""
    out = []
    for r in reports:
        for run in r.runs:
            clause = r.contract.clause(run.probe.clause) if r.contract and run.probe.clause else None
            declared = clause.on_violation.raises if clause and clause.on_violation else None
            raised = run.result.get("error_type")
            if run.probe.kind == "pre_violating" and declared and raised and raised != declared:
                out.append(f"{r.tool} {run.probe.clause}: raised {raised}, declared {declared}")
    return out


def check_dynamic(host: DynamicHost, root: Path, contracts: Sequence[Contract]) -> list[Any]:
    """Probe `contracts` against the package copy at `root`, one worker per adapter variant."""
    from toollint.dynamic.checker import CheckOptions, check_group

    groups: dict[str, list[Contract]] = {}
    specs: dict[str, WorkerSpec] = {}
    for c in contracts:
        spec = host.make_spec(root, c)
        key = repr(sorted(spec.options.items()))
        groups.setdefault(key, []).append(c)
        specs[key] = spec
    reports: list[Any] = []
    for key, group in groups.items():
        reports.extend(check_group(group, specs[key], CheckOptions(deadline=host.deadline, confirm=True)))
    return reports


class DynamicRunner:
    """Hosts the original and each mutant of one subject in an overlay, and scores kills."""

    def __init__(self, subject: Subject, root: Path) -> None:
        assert subject.host is not None
        self.subject = subject
        self.host = subject.host
        self.root = root
        self.target = root / self.host.relpath
        self.original = self.target.read_text(encoding="utf-8")
        self.baseline: dict[str, set[tuple[str, str, str]]] = {}
        self.baseline_rows: list[dict[str, Any]] = []
        # (tool, clause, code) -> the calls the original already fails it on
        self.baseline_calls: dict[tuple[str, str, str], set[str]] = {}
        self.baseline_behaviour: dict[tuple[str, str], str] = {}

    def contracts_for(self, tools: Sequence[str]) -> list[Contract]:
        names = {t.rsplit(".", 1)[-1] for t in tools}
        return [c for c in self.host.contracts if c.tool_name in names]

    def _run(self, source: str, contracts: Sequence[Contract]) -> list[Any]:
        self.target.write_text(source, encoding="utf-8")
        for cache in self.target.parent.glob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)  # never let a stale .pyc stand in for the mutant
        try:
            return check_dynamic(self.host, self.root, contracts)
        finally:
            self.target.write_text(self.original, encoding="utf-8")

    def run_baseline(self, tools: Sequence[str] | None = None) -> None:
        """Violations of the unmutated module (of `tools`' contracts, or all): not kills when they recur."""
        self.record_baseline(
            self._run(self.original, self.contracts_for(tools) if tools is not None else self.host.contracts))

    def record_baseline(self, reports: Sequence[Any]) -> None:
        keys, rows, _ = _violation_rows(reports)
        self.baseline_behaviour = _behaviour(reports)
        for tool, clause, code in keys:
            self.baseline.setdefault(tool, set()).add((tool, clause, code))
        for r in rows:
            self.baseline_calls.setdefault((r["tool"], r["clause"], r["code"] or ""), set()).update(
                r["failing_calls"]
            )
        self.baseline_rows = rows

    def is_new(self, row: dict[str, Any]) -> bool:
        """A violation the original does not have: a new (clause, code), or a known one that now fails
        on a call the original passed (strong mutation: the mutant's behaviour differs on that call).
        An original that already violates the clause on other calls no longer masks the mutation."""
        key = (row["tool"], row["clause"], row["code"] or "")
        if key not in self.baseline.get(row["tool"], set()):
            return True
        return bool(set(row["failing_calls"]) - self.baseline_calls.get(key, set()))

    def outcome(self, m: Mutant) -> DynamicOutcome:
        if m.static_only:
            return DynamicOutcome(NOT_RUN, "static-only shape: behaves like the original at run time")
        contracts = self.contracts_for(m.tools)
        if not contracts:
            return DynamicOutcome(NOT_RUN, "no contract for " + ", ".join(m.tools))
        covering = [f"{c.tool_name}:{cid}" for c in contracts for cid in _contract_covers(c, m)]
        start = time.perf_counter()
        reports = self._run(m.source, contracts)
        _keys, rows, flaky = _violation_rows(reports)
        fresh = [r for r in rows if self.is_new(r)]
        masked = sorted({f"{r['tool']}:{r['clause']}" for r in rows if r not in fresh})
        status = KILLED if fresh else SURVIVED
        behaviour = _behaviour(reports)
        same = [k for k, v in behaviour.items() if self.baseline_behaviour.get(k) == v]
        unchanged = len(same) if behaviour and len(same) == len(behaviour) else None
        why = "; ".join(f"{r['tool']} {r['clause']} ({r['code']})" for r in fresh[:4])
        return DynamicOutcome(status, why, fresh, flaky, covering, masked, _legal_errors(reports),
                              _wrong_errors(reports), time.perf_counter() - start, unchanged)


# -- the arms ---------------------------------------------------------------------------------------


@dataclass
class ControlResult:
    subject: str
    control: Mutant | None  # None: the unmutated module itself
    false_positives: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        c = self.control
        return {
            "subject": self.subject,
            "control": c.operator if c else "unmutated",
            "id": c.id if c else f"{self.subject}:unmutated",
            "function": c.function if c else None,
            "description": c.description if c else "the original module",
            "false_positives": self.false_positives,
        }


@dataclass
class ValidationRun:
    seed: int
    budget: int | None
    dynamic: bool
    mutants: list[MutantResult] = field(default_factory=list)
    controls: list[ControlResult] = field(default_factory=list)
    baseline: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict
    )  # subject -> flags on the original
    generated: dict[str, int] = field(default_factory=dict)  # subject -> mutants before sampling
    elapsed_s: float = 0.0
    host_starts: dict[str, Any] = field(default_factory=dict)  # forked / cold host starts (dynamic half)


def run(
    subjects: Sequence[Subject],
    *,
    seed: int = 0,
    budget: int | None = None,
    dynamic: bool = False,
    operators: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    warm: bool = True,
    jobs: int = 1,
    runner: Callable[[Subject, Path], DynamicRunner] | None = None,
) -> ValidationRun:
    """The mutation arm and the negative controls over every subject. `budget` is per subject;
    `operators` and `tools` (qualified names) narrow what is mutated; `runner` makes the dynamic
    half's runner (`DynamicRunner`: the subject's contracts; `toollint.validate.derived`: oracles
    derived from each mutant's own static findings). With `warm` (the default) the
    dynamic half forks its hosts from a pre-imported interpreter (`toollint.dynamic.forkserver`)
    instead of starting and importing the benchmark for every mutant. With `jobs` > 1, that many
    subjects' dynamic halves run at once (each has its own overlay, so its mutants stay one at a time);
    the results are the same, in the same order."""
    from toollint.dynamic.forkserver import MAX_ZYGOTES, warm_hosts

    with warm_hosts(enabled=warm and dynamic, max_zygotes=MAX_ZYGOTES * max(1, jobs)) as pool:
        out = _run(subjects, seed, budget, dynamic, operators, tools, progress, max(1, jobs), runner)
    out.host_starts = {
        "forked": pool.stats.forks,
        "cold": pool.stats.cold,
        "zygotes": pool.stats.zygotes,
        "zygote_start_s": round(pool.stats.zygote_start_s, 2),
        "fallbacks": pool.stats.fallbacks[:5],
    }
    return out


@dataclass
class _SubjectPlan:
    """One subject's static half, done before any dynamic work: what the dynamic half then runs."""

    subject: Subject
    chosen: list[Mutant]
    statics: list[Any]
    controls: list[ControlResult]
    mutants: list[MutantResult] = field(default_factory=list)
    dynamic_controls: list[ControlResult] = field(default_factory=list)  # the clean original's flags


def _run(subjects: Sequence[Subject], seed: int, budget: int | None, dynamic: bool,
         operators: Sequence[str] | None, tools: Sequence[str] | None,
         progress: Callable[[str], None] | None, jobs: int = 1,
         runner: Callable[[Subject, Path], DynamicRunner] | None = None) -> ValidationRun:
    start = time.perf_counter()
    out = ValidationRun(seed, budget, dynamic)
    plans: list[_SubjectPlan] = []
    for subject in subjects:  # the static half, in this thread (the linter's caches are not shared)
        source = subject.path.read_text(encoding="utf-8")
        all_mutants = mutants(source, subject.shown, operators, tools, settings=subject.settings,
                                       module_name=subject.module_name)
        out.generated[subject.name] = len(all_mutants)
        chosen = sample(all_mutants, budget, seed)
        baseline = lint(subject, source)
        out.baseline[subject.name] = [_finding_json(f) for f in baseline]
        rewrites = controls(source, subject.shown, settings=subject.settings,
                                     module_name=subject.module_name)
        control_results = []
        for c in rewrites:
            if tools is not None and not set(c.tools) & set(tools):
                continue
            fps = [_finding_json(f) for f in new_findings(baseline, lint(subject, c.source))]
            control_results.append(ControlResult(subject.name, c, fps))
        plans.append(_SubjectPlan(subject, chosen, [static_outcome(subject, baseline, m) for m in chosen],
                                  control_results))
        if subject.clean:
            plans[-1].dynamic_controls.append(ControlResult(subject.name, None, out.baseline[subject.name]))

    def dynamic_half(plan: _SubjectPlan) -> None:
        subject = plan.subject
        if not (dynamic and subject.host is not None):
            why = "no dynamic host for this subject" if subject.host is None else "dynamic half not requested"
            plan.mutants = [
                MutantResult(subject.name, m, st, DynamicOutcome(NOT_RUN, why), not subject.reaches(m))
                for m, st in zip(plan.chosen, plan.statics)
            ]
            return
        with overlay(subject.host) as root:
            dyn = (runner or DynamicRunner)(subject, root)
            affected = {t for m in plan.chosen for t in m.tools} | {t for c in plan.controls if c.control
                                                                    for t in c.control.tools}
            dyn.run_baseline(sorted(affected) if tools is not None else None)
            if subject.clean and dyn.baseline_rows:
                plan.dynamic_controls.append(ControlResult(subject.name, None, [_dynamic_flag(r)
                                                                                for r in dyn.baseline_rows]))
            for cr in plan.controls:  # a rewrite that the probes tell apart is a false alarm too
                assert cr.control is not None
                if progress:
                    progress(cr.control.id)
                flagged = dyn.outcome(cr.control)
                cr.false_positives.extend(_dynamic_flag(r) for r in flagged.violations)
            for m, st in zip(plan.chosen, plan.statics):
                if progress:
                    progress(m.id)
                plan.mutants.append(MutantResult(subject.name, m, st, dyn.outcome(m), not subject.reaches(m)))

    if jobs > 1 and dynamic and len(plans) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=jobs) as pool:  # the work is in the hosts; threads wait on pipes
            for done in [pool.submit(dynamic_half, plan) for plan in plans]:
                done.result()
    else:
        for plan in plans:
            dynamic_half(plan)
    for plan in plans:  # in subject order, whatever order they finished in
        out.controls.extend(plan.dynamic_controls[:1])
        out.controls.extend(plan.controls)
        out.controls.extend(plan.dynamic_controls[1:])
        out.mutants.extend(plan.mutants)
    out.elapsed_s = time.perf_counter() - start
    return out
