"""The `toollint check` step for score-at-risk: `--ledger FILE` and `--report FILE` trace the TL2xx
findings that `--confirm` produced. Kept apart from `toollint.trace.cli` so that a check run given
either option imports the tracer only when it traces (the options: `toollint.pipeline.options`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext
    from toollint.trace.ledger import Ledger
    from toollint.trace.report_html import GraderAudit


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """A `toollint.pipeline` step, after confirm: trace the confirmed findings over the tasks
    `[tool.toollint.trace]` names (none named: the tasks of the benchmark the linted files belong to,
    `linted_tasks`), attach the trace to them (SARIF), write the ledger and report, and
    add TL401 findings when TL401 is selected."""
    ledger_path, report_path = ctx.options.trace.ledger, ctx.options.trace.report
    if ledger_path is None and report_path is None:
        return result
    if report_path is not None and ledger_path is None and ctx.grader_audit is not None \
            and not ctx.options.confirm.requested:  # a grader audit and nothing confirmed to trace
        _write_audit_page(report_path, ctx.grader_audit)
        ctx.closing.append(f"report: {report_path}")
        return result
    from toollint.engine import FileResult, Selection
    from toollint.errors import UsageError
    from toollint.trace.cli import TraceUsageError, write_outputs
    from toollint.trace.ledger import no_task_reason, trace_findings
    from toollint.trace.tasks import has_source, linted_tasks, tasks_from_config

    settings = ctx.settings
    root = settings.project_root or Path.cwd()
    python = ctx.options.confirm.python or settings.confirm.python
    progress = ctx.console.progress("trace")
    if has_source(settings.trace):
        progress.status("reading the tasks [tool.toollint.trace] names")
        tasks = tasks_from_config(settings.trace, root, python=python, benchmark=settings.benchmark)
    else:  # nothing configured: the tasks of the benchmark the linted files belong to
        progress.status("enumerating the graded tasks of the benchmark the linted files lie in")
        files = [r.path for r in result.files]
        tasks = linted_tasks(files, settings.trace, python, settings.benchmark, display_root=root)
    confirmed = [f for f in result.findings if f.code.startswith("TL2") and not f.suppressed]
    progress.status(f"tracing {len(confirmed)} confirmed finding(s) over {len(tasks.tasks)} task(s)")
    ledger = trace_findings(confirmed, tasks)
    progress.done()  # before the warnings, which would otherwise land on the progress line
    if not confirmed:
        ctx.console.warn("--ledger/--report: no confirmed (TL2xx) finding to trace")
    if not tasks.tasks:  # said once, not once per defect
        ctx.console.warn(f"trace: {no_task_reason(tasks)}")
    said = tasks.problems[:1] if not tasks.tasks else []
    for problem in ledger.problems:
        if problem not in said:
            ctx.console.warn(f"trace: {problem}")
    for defect_id, reason in ledger.untraced.items() if tasks.tasks else ():
        ctx.console.warn(f"trace: {defect_id}: nothing traced: {reason}")
    try:
        write_outputs(ledger, ledger_path, report_path, [f for f in result.findings if not f.suppressed],
                      audit=ctx.grader_audit)
    except TraceUsageError as exc:
        raise UsageError(str(exc)) from None
    ctx.closing += closing_lines(ledger, ledger_path, report_path)
    if "TL401" in Selection.from_settings(settings).enabled:
        by_path = {r.path: r for r in result.files}
        # the static rule already reported the graders it linted, at the same line: once is enough
        linted = {(os.path.realpath(f.path), f.line) for f in result.findings if f.code == "TL401"}
        for finding in ledger.ungrounded:
            if (os.path.realpath(root / finding.path), finding.line) in linted or \
                    (os.path.realpath(finding.path), finding.line) in linted:
                continue
            target = by_path.get(finding.path)
            if target is None:
                target = by_path[finding.path] = FileResult(finding.path)
                result.files.append(target)
            target.findings.append(finding)
    return result


def _write_audit_page(path: Path, audit: GraderAudit) -> None:
    from toollint import atomic
    from toollint.errors import UsageError
    from toollint.trace.report_html import grader_audit_page

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, grader_audit_page(audit))
    except OSError as exc:
        raise UsageError(f"cannot write {exc.filename or path}: {exc.strerror or exc}") from None


def closing_lines(ledger: Ledger, ledger_path: Path | None, report_path: Path | None) -> list[str]:
    """What the run's last lines say: the tasks at risk by basis (authored contracts and derived
    oracles apart, never summed), then where the report and ledger went."""
    from toollint.trace.readsites import BASES

    lines = []
    oracles = sorted({d.oracle for d in ledger.defects})
    for oracle in oracles or ["authored"]:
        risk = ledger.tasks_at_risk(oracle if len(oracles) > 1 else None)
        defects = sum(1 for d in ledger.defects if d.oracle == oracle)
        apart = "derived oracles" if oracle == "derived" else "authored contracts"
        by = f" ({apart})" if len(oracles) > 1 else ""
        lines.append(f"at risk{by}: {risk['exposed']} of {ledger.tasks_traced} graded task(s) from {defects} "
                     f"confirmed defect(s): " + ", ".join(f"{risk[b]} {b}" for b in BASES))
    if report_path is not None:
        lines.append(f"report: {report_path}")
    if ledger_path is not None:
        base = ledger_path.with_suffix("") if ledger_path.suffix in (".csv", ".json") else ledger_path
        lines.append(f"ledger: {base.with_name(base.name + '.csv')}, {base.with_name(base.name + '.json')}")
    return lines
