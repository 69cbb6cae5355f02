"""`--confirm` on the main path: turn static candidates into verdicts.

`confirm_findings` picks the tools that have static findings and a contract (bundled library plus
configured `contracts/` dirs), or every contracted tool with `confirm_all`, checks them through the
benchmark's host, attaches the tool's verdict to each static finding (`properties["verdict"]`,
`["witness"]`: CONFORMS is shown, never hidden; UNTESTABLE is never a pass) and returns one TL2xx
finding per confirmed (or flaky) violation, each with a witness file.

Configuration, `[tool.toollint.confirm]`: ``adapter`` (agentdojo, toolkit, or a path to an adapter
file), ``python`` (the benchmark's interpreter), ``factory``/``sys_path``/``state``/``reset``/
``tools`` (toolkit adapter), ``options`` (extra adapter options), ``contract_dirs``, ``deadline``.
A contract's own ``adapter:`` block (e.g. ``{name: agentdojo, suite: banking}``) wins.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.contracts.loader import ContractError, bundled_library_dir, load_contracts
from toollint.contracts.model import Contract
from toollint.dynamic.checker import (
    CONFORMS,
    FLAKY,
    UNTESTABLE,
    VIOLATES,
    CheckOptions,
    ToolReport,
    check_group,
)
from toollint.dynamic.protocol import DEFAULT_DEADLINE, WorkerSpec
from toollint.dynamic.witness import sentence, write_witness

from toollint.files import display_path
from toollint.model import Finding
from toollint.settings import ConfirmSettings, Settings

DEFAULT_WITNESS_DIR = Path(".toollint") / "witnesses"
TOOLKIT_KEYS = ConfirmSettings.ADAPTER_KEYS
# Contract adapter keys that describe the tool, not the host: they must not split a suite's worker.
CONTRACT_ONLY_KEYS = ("name", "depends", "frame", "volatile", "derived", "suites")


@dataclass
class ConfirmRun:
    """Everything one `--confirm` pass produced, for reporters and the bench script."""

    reports: list[ToolReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    contract_errors: list[ContractError] = field(default_factory=list)
    startup_s: list[float] = field(default_factory=list)  # per worker started

    def counts(self) -> dict[str, int]:
        """Clause rows by verdict (contract clauses only; UNTESTABLE stays in the denominator)."""
        out = {CONFORMS: 0, VIOLATES: 0, UNTESTABLE: 0, FLAKY: 0}
        for r in self.reports:
            for row in r.clause_rows:
                out[row.verdict] = out.get(row.verdict, 0) + 1
        return out

    @property
    def probes(self) -> int:
        return sum(len(r.runs) for r in self.reports)


def worker_spec(contract: Contract, conf: ConfirmSettings | None = None, python: str | None = None,
                root: Path | None = None) -> WorkerSpec:
    """The host that serves a contract's tool: the contract's adapter block over the configuration."""
    conf = conf or ConfirmSettings()
    adapter_block = dict(contract.adapter)
    name = str(adapter_block.get("name") or conf.adapter
               or ("agentdojo" if contract.benchmark == "agentdojo" else "toolkit"))
    options: dict[str, Any] = dict(conf.options)
    options.update(conf.adapter_options())
    options.update({k: v for k, v in adapter_block.items() if k not in CONTRACT_ONLY_KEYS})
    if root is not None and "sys_path" in options:  # relative to the project (pyproject) root
        options["sys_path"] = [str((root / p).resolve()) for p in options["sys_path"]]
    return WorkerSpec(name, options, python=str(python or conf.python or sys.executable))


def run_confirm(contracts: Sequence[Contract], settings: Settings, *, python: str | None = None,
                witness_dir: Path | None = None, progress: Callable[[str], None] | None = None,
                deadline: float | None = None) -> ConfirmRun:
    """Check `contracts`, one warm host per adapter variant, and write a witness per violation."""
    conf = settings.confirm
    options = CheckOptions(deadline=float(deadline or conf.deadline or DEFAULT_DEADLINE), progress=progress)
    wdir = Path(witness_dir) if witness_dir is not None else (settings.project_root or Path.cwd()) / DEFAULT_WITNESS_DIR
    options.log_dir = wdir.parent / "logs"
    groups: dict[str, tuple[WorkerSpec, list[Contract]]] = {}
    for c in contracts:
        spec = worker_spec(c, conf, python, settings.project_root)
        key = json.dumps(spec.to_json(), sort_keys=True)
        groups.setdefault(key, (spec, []))[1].append(c)
    run = ConfirmRun()
    taken: set[Path] = set()
    # Groups are independent processes; run them side by side (start-up dominates the wall time).
    jobs = max(1, min(len(groups), int(conf.jobs or os.cpu_count() or 1)))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for reports in pool.map(lambda g: check_group(g[1], g[0], options), list(groups.values())):
            run.reports.extend(reports)
    run.startup_s = list(options.startups)
    for report in run.reports:
        for row in report.violations:
            write_witness(report, row, wdir, taken)
            run.findings.append(_finding(report, row))
    return run


def _finding(report: ToolReport, row: Any) -> Finding:
    meta = report.meta
    contract = report.contract
    return Finding(
        code=row.code,
        message=sentence(report, row),
        path=str(meta.get("file") or (contract.path if contract else "")),
        line=int(meta.get("line") or 1),
        tool=report.tool,
        properties={
            "verdict": row.verdict,
            "clause": row.clause_id,
            "witness": str(row.witness) if row.witness else None,
            "contract": str(contract.path) if contract else None,
            "tier": row.clause.provenance.tier if row.clause is not None else None,
            "confirmed": row.rerun,
        },
    )


def covers_file(contract: Contract, path: str) -> bool:
    """Whether `path` can be the file the contract's tool lives in: the same file name as the
    contract's `source.file`. (Only the name: a vendored or copied module still counts, while a
    project's own `tools.py` never picks up the bundled AgentDojo contract for `banking_client.py`.)"""
    return not contract.source.file or Path(path).name == Path(contract.source.file).name


def select_contracts(contracts: Iterable[Contract], findings: Iterable[Finding], confirm_all: bool,
                     linted: Sequence[str] | None = None) -> list[Contract]:
    """Contracts of tools with a static finding, or, with `confirm_all`, of every contracted tool in
    the linted files. A contract matches by tool name and by its source file, so a project's own
    `send_money` never picks up the bundled AgentDojo contract. `linted=None`: no file filter."""
    contracts = list(contracts)
    if confirm_all:
        if linted is None:
            return contracts
        return [c for c in contracts if any(covers_file(c, p) for p in linted)]
    flagged = [f for f in findings if f.tool]
    return [c for c in contracts
            if any(f.tool.rsplit(".", 1)[-1] == c.tool_name and covers_file(c, f.path)  # type: ignore[union-attr]
                   for f in flagged)]


def verdict_for(finding: Finding, report: ToolReport) -> tuple[str, str | None, str]:
    """The verdict a static finding gets: its argument's rows when it names one (TL103/TL104 carry
    `param`) and the contract covers that argument, else the tool's. Returns (verdict, witness, scope)."""
    param = finding.properties.get("param")
    rows = [r for r in report.rows if param and (
        r.clause_id == f"arg.{param}"
        or (r.kind == "eff" and r.clause is not None and r.clause.predicate is not None
            and param in r.clause.predicate.args_read))] if param else []
    if not any(r.clause_id == f"arg.{param}" for r in rows):
        rows = []
    if rows:
        bad = [r for r in rows if r.verdict in (VIOLATES, FLAKY)]
        if bad:
            verdict = VIOLATES if any(r.verdict == VIOLATES for r in bad) else FLAKY
            return verdict, next((str(r.witness) for r in bad if r.witness), None), "argument"
        scored = any(r.verdict == CONFORMS for r in rows)
        return (CONFORMS if scored else UNTESTABLE), None, "argument"
    witness = next((str(r.witness) for r in report.violations if r.witness), None)
    return report.verdict, witness, "tool"


def confirm_findings(findings: list[Finding], settings: Settings, *, confirm_all: bool = False,
                     python: str | None = None, contract_dirs: Sequence[Path | str] = (),
                     witness_dir: Path | None = None,
                     progress: Callable[[str], None] | None = None) -> list[Finding]:
    """Attach verdicts to `findings` (in place) and return the TL2xx findings of the checked tools.

    Contract-loading problems are returned as their TL3xx findings, so a broken contract is reported
    and the other tools are still checked.
    """
    return confirm(findings, settings, confirm_all=confirm_all, python=python, contract_dirs=contract_dirs,
                   witness_dir=witness_dir, progress=progress)[0]


def summary_lines(run: ConfirmRun) -> list[str]:
    """What a run decided, per tool verdict and per clause row: UNTESTABLE is counted and its tools
    named with the reason, never folded into the passes."""
    tools: dict[str, list[str]] = {CONFORMS: [], VIOLATES: [], UNTESTABLE: [], FLAKY: []}
    for r in run.reports:
        tools.setdefault(r.verdict, []).append(r.tool)
    rows = run.counts()
    per_tool = ", ".join(f"{len(tools[v])} {v}" for v in (VIOLATES, FLAKY, CONFORMS, UNTESTABLE))
    per_row = ", ".join(f"{rows[v]} {v}" for v in (VIOLATES, FLAKY, CONFORMS, UNTESTABLE))
    lines = [f"confirm: {len(run.reports)} tool(s): {per_tool}; clause rows: {per_row}"]
    by_reason: dict[str, list[str]] = {}
    for r in run.reports:
        if r.verdict == UNTESTABLE:
            reasons = sorted({row.reason for row in r.clause_rows if row.reason})
            why = r.error or ", ".join(reasons) or "no clause could be scored"
            by_reason.setdefault(why.replace(f"{r.tool}: ", "", 1), []).append(r.tool)
    for why, names in by_reason.items():  # one line per reason: a host that cannot start is one line
        lines.append(f"confirm: UNTESTABLE {', '.join(names)}: {why}")
    return lines


def confirm(findings: list[Finding], settings: Settings, *, confirm_all: bool = False,
            python: str | None = None, contract_dirs: Sequence[Path | str] = (),
            witness_dir: Path | None = None,
            progress: Callable[[str], None] | None = None,
            linted: Sequence[str] | None = None) -> tuple[list[Finding], ConfirmRun]:
    """`confirm_findings`, also returning the run itself (for its counts and per-tool verdicts).
    `linted`: the files the static pass read, which bound `confirm_all`."""
    dirs: list[Path | str] = [bundled_library_dir(), *settings.contract_dirs,
                              *settings.confirm.contract_dirs, *contract_dirs]
    if settings.project_root is not None:
        dirs = [p if Path(p).is_absolute() else settings.project_root / p for p in dirs]
    contracts, errors = load_contracts(dirs)
    chosen = select_contracts(contracts, findings, confirm_all, linted)
    run = run_confirm(chosen, settings, python=python, witness_dir=witness_dir, progress=progress)
    by_tool = {r.tool: r for r in run.reports}
    for f in findings:
        report = by_tool.get((f.tool or "").rsplit(".", 1)[-1])
        if report is None:
            continue
        verdict, witness, scope = verdict_for(f, report)
        f.properties["verdict"] = verdict
        f.properties["verdict_scope"] = scope
        if witness:
            f.properties["witness"] = witness
        if report.error:
            f.properties["verdict_detail"] = report.error
    out = list(run.findings)
    for e in errors:
        out.append(Finding(code=e.code, message=e.message, path=display_path(Path(e.path)), line=e.line, col=e.col))
    for report in run.reports:
        if report.error and report.contract is not None:
            # A host that cannot start is reported on the static findings (verdict_detail); a contract
            # naming a tool the benchmark does not have is a contract problem of its own.
            if "is not among" not in report.error:
                continue
            out.append(Finding(code="TL309", message=f"UNTESTABLE {report.tool}: {report.error}",
                               path=display_path(Path(report.contract.path)),
                               line=report.contract.line, tool=report.tool,
                               properties={"verdict": UNTESTABLE}))
    return out, run
