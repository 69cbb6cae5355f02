"""The pipeline under `toollint check`: options -> settings -> lint -> steps -> report.

A *step* rewrites the run's result after linting (`--diff-base`/`--baseline`, `--fix`, `--confirm`,
`--ledger`): any callable `(ctx: StepContext, result: RunResult) -> RunResult`. It reads its own
options from `ctx.options`, the run's settings from `ctx.settings` (a file's own from
`ctx.resolver`), writes to the user through `ctx.console`, raises a `toollint.errors` error for a
problem that ends the run (exit 2), records one that does not in `ctx.errors` (the run goes on and
then exits 2), or raises `StopCheck` when it has written the run's whole output. The CLI keeps the
list of steps (`toollint.cli.CHECK_STEPS`); steps never import the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from toollint.pipeline.options import (
    AuditOptions,
    BaselineOptions,
    CheckOptions,
    ConfirmOptions,
    FixOptions,
    OutputOptions,
    TraceOptions,
)

if TYPE_CHECKING:
    from toollint.config import SettingsResolver
    from toollint.console import Console
    from toollint.engine import RunResult
    from toollint.model import Finding
    from toollint.settings import Settings
    from toollint.trace.report_html import GraderAudit

__all__ = [
    "AuditOptions",
    "BaselineOptions",
    "CheckOptions",
    "CheckStep",
    "ConfirmOptions",
    "FixOptions",
    "OutputOptions",
    "StepContext",
    "TraceOptions",
    "add_findings",
]


@dataclass
class StepContext:
    """What every step of one run shares."""

    options: CheckOptions
    settings: Settings  # the run's: project root, [tool.toollint.confirm], [tool.toollint.trace]
    resolver: SettingsResolver  # each file's own settings
    console: Console
    errors: list[str] = field(default_factory=list)  # problems that did not stop the run (exit 2)
    # Why a run that asked for testing (`--confirm`) could test nothing; it then never reads as a pass.
    untested: str | None = None
    # Lines said last, after the summary (where the report went, the tasks at risk): the end of a long
    # run is where its reader looks.
    closing: list[str] = field(default_factory=list)
    # What `--audit-graders` found, for the report's section (`--report`).
    grader_audit: GraderAudit | None = None

    def error(self, message: str) -> None:
        """A problem that does not stop the run: said now, and the run exits 2."""
        self.errors.append(message)
        self.console.error(message)


class CheckStep(Protocol):
    def __call__(self, ctx: StepContext, result: RunResult, /) -> RunResult: ...


def add_findings(result: RunResult, findings: Iterable[Finding]) -> None:
    """Findings a step made (`--confirm`'s TL2xx, `--audit-graders`' TL408-TL411) into the run's result,
    each with the file the run linted under the same path (shown as its static findings are), else a
    file of its own."""
    from toollint.engine import FileResult

    by_path = {r.path: r for r in result.files}
    resolved = {str(Path(r.path).resolve()): r for r in result.files}
    for f in findings:
        target = by_path.get(f.path) or resolved.get(str(Path(f.path).resolve()))
        if target is not None:
            f.path = target.path
        else:
            target = by_path[f.path] = FileResult(f.path)
            result.files.append(target)
        target.findings.append(f)
