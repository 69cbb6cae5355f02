"""The `toollint check --audit-graders` step: the grader audit (`toollint.validate.audit`, the same
code `toollint audit-graders` runs) over the benchmark tree given as PATH, in the same run.

Its findings (TL408-TL411) join the run's, so every reporter shows them and the exit code counts them;
a TL410 on an argument a TL103 or TL202 of the run says the tool drops is joined to it (one sentence
in each format); the per-suite table is said on stderr, and `--report` gets a "Grader audit" section
(`ctx.grader_audit`, which the trace step renders). After `--confirm` (its TL202 findings are joined
too) and before the trace step.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from toollint.errors import UsageError

if TYPE_CHECKING:
    from toollint.engine import RunResult
    from toollint.pipeline import StepContext


def check_step(ctx: StepContext, result: RunResult) -> RunResult:
    if not ctx.options.audit.graders:
        return result
    from toollint.dynamic.confirm import witness_dir_of
    from toollint.engine import Selection
    from toollint.files import display_path
    from toollint.pipeline import add_findings
    from toollint.trace.report_html import GraderAudit
    from toollint.validate.audit import AuditRequest, run_audit, summary_table
    from toollint.validate.graders import KIND_CODES, kinds_selected

    python = ctx.options.confirm.python or ctx.settings.confirm.python
    if not python:
        raise UsageError("--audit-graders: name the benchmark's interpreter with --python PY (or 'python' in "
                         "[tool.toollint.confirm])")
    trees = list(dict.fromkeys(p for p in ctx.options.paths if os.path.isdir(p)))
    if not trees:
        raise UsageError("--audit-graders: give the benchmark's tree (a directory) as PATH")
    enabled = Selection.from_settings(ctx.settings).enabled
    kinds = kinds_selected(enabled)  # --select TL408 (or TL411): the null runs only
    if not kinds:
        codes = ", ".join(sorted(code for given in KIND_CODES.values() for code in given))
        ctx.console.warn(f"--audit-graders: the selection leaves out {codes}; "
                         "nothing to audit")
        return result
    witness_dir = witness_dir_of(ctx.settings, ctx.options.confirm.witness_dir) / "grader-audit"
    static = result.reported
    progress = ctx.console.progress("audit-graders")
    sections = []
    for tree in trees:
        request = AuditRequest(Path(tree), python, ctx.settings.benchmark, kinds=kinds,
                               witness_dir=witness_dir)
        try:
            run = run_audit(request, static=static, progress=progress.status)
        except ValueError as exc:  # bad input: the run stops here, as a usage error
            progress.done()
            raise UsageError(f"--audit-graders: {exc}") from None
        except RuntimeError as exc:  # the benchmark's interpreter failed: said, the rest is still reported
            progress.done()
            ctx.error(f"--audit-graders: {tree}: {exc}")
            continue
        progress.done()
        ctx.console.note(summary_table(run.audits))
        shown = [f for f in run.findings if f.code in enabled]
        sections.append(run.section())
        for f in shown:
            f.path = display_path(Path(f.path))  # as the run's other findings show theirs
        add_findings(result, shown)
        said, seen = len(run.unnoticed), len(run.seen_dropped)
        ctx.closing.append(
            f"grader audit ({run.benchmark}): {sum(a.audited for a in run.audits)} task(s) audited, "
            f"{sum(a.vacuous for a in run.audits)} vacuous, {sum(a.unchecked_effects for a in run.audits)} "
            f"unchecked effect(s), {sum(a.unchecked_fields for a in run.audits)} unchecked field(s), "
            f"{sum(a.do_nothing for a in run.audits)} do-nothing pass(es)"
            + (f", {said} on an argument the tool drops (TL103/TL202)" if said else "")
            + (f"; {seen} TL103/TL202 argument(s) it saw dropped" if seen else ""))
    ctx.grader_audit = GraderAudit(", ".join(s.benchmark for s in sections),
                                   tuple(r for s in sections for r in s.rows),
                                   tuple(f for s in sections for f in s.findings if f.code in enabled),
                                   tuple(d for s in sections for d in s.seen_dropped))
    return result

