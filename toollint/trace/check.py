"""The `toollint check` step for score-at-risk: `--ledger FILE` and `--report FILE` trace the TL2xx
findings that `--confirm` produced. Kept apart from `toollint.trace.cli` so that every check run,
which only needs the two options, does not import the tracer."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext


def add_check_options(parser: argparse.ArgumentParser) -> None:
    """`--ledger` / `--report` on `toollint check` (they trace the TL2xx findings `--confirm` produces)."""
    group = parser.add_argument_group("score at risk (traces the TL2xx findings of --confirm)")
    group.add_argument(
        "--ledger", type=Path, metavar="FILE", help="write the ledger as FILE.csv and FILE.json"
    )
    group.add_argument("--report", type=Path, metavar="FILE", help="write a self-contained HTML report")


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    """A `toollint.pipeline` step, after confirm: trace the confirmed findings over the tasks
    `[tool.toollint.trace]` names (none named: the tasks of the benchmark the linted files belong to,
    `linted_tasks`), attach the trace to them (SARIF), write the ledger and report, and
    add TL401 findings when TL401 is selected."""
    ledger_path, report_path = ctx.options.trace.ledger, ctx.options.trace.report
    if ledger_path is None and report_path is None:
        return result
    from toollint.engine import FileResult, Selection
    from toollint.errors import UsageError
    from toollint.trace.cli import TraceUsageError, write_outputs
    from toollint.trace.ledger import no_task_reason, trace_findings
    from toollint.trace.tasks import has_source, linted_tasks, tasks_from_config

    settings = ctx.settings
    root = settings.project_root or Path.cwd()
    python = ctx.options.confirm.python or settings.confirm.python
    if has_source(settings.trace):
        tasks = tasks_from_config(settings.trace, root, python=python, benchmark=settings.benchmark)
    else:  # nothing configured: the tasks of the benchmark the linted files belong to
        files = [r.path for r in result.files]
        tasks = linted_tasks(files, settings.trace, python, settings.benchmark, display_root=root)
    confirmed = [f for f in result.findings if f.code.startswith("TL2") and not f.suppressed]
    ledger = trace_findings(confirmed, tasks)
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
        write_outputs(ledger, ledger_path, report_path, confirmed)
    except TraceUsageError as exc:
        raise UsageError(str(exc)) from None
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
