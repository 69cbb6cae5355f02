"""`toollint trace`: score-at-risk for one defect, or for the TL2xx findings of a `--confirm` run.

    toollint trace --tool update_scheduled_transaction \
        --field 'bank_account.scheduled_transactions[*].amount' \
        --benchmark NAME --tasks path/to/package --ledger ledger.csv --report report.html
    toollint trace --contract update_scheduled_transaction.yaml --clause eff.amount_set \
        --benchmark NAME --tasks ...
    toollint trace --tasks tasks.json --toolkit tools.py --tool refuel_data --field 'db.lines[*].data_balance'

`--benchmark NAME --tasks DIR` hands DIR to that profile's task enumerator (`--NAME DIR` is the
same, for every profile that has one); without `--benchmark`, `--tasks FILE` are JSON task files.
With `--contract`/`--clause` the fields come from the clause's compiled predicate (kept to what the
tool writes when its source is found). Exit codes: 0 traced; 1 the trace means nothing (no task has
the tool in its environment, or no grader reads anything where the fields are), said in a warning;
2 usage error or nothing to trace.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toollint.model import Finding
from toollint.profiles import Profile, ProfileError, all_profiles, get_profile
from toollint.settings import TraceSettings
from toollint.trace.ledger import Defect, Ledger, ToolWrites, defect_from_clause, tool_writes, trace
from toollint.trace.readsites import BASES, ModuleCache
from toollint.trace.tasks import (
    TaskSet,
    configured_tasks,
    json_tasks,
    profile_tasks,
    toolkit_methods,
)

if TYPE_CHECKING:
    from toollint.trace.report_html import GraderAudit

EXIT_OK, EXIT_UNTRACED, EXIT_ERROR = 0, 1, 2


class TraceUsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="toollint trace", description="Which graded tasks a tool defect puts at risk."
    )
    what = p.add_argument_group("the defect")
    what.add_argument("--tool", help="the tool: a name, or pkg.module:function")
    what.add_argument("--clause", default="", help="the violated clause id")
    what.add_argument("--field", action="append", default=[], metavar="PATH",
                      help="a canonical state path the tool should have written (repeatable)")
    what.add_argument("--contract", type=Path, help="derive the fields from this contract's clause predicate")
    what.add_argument("--tool-file", type=Path, help="the tool's source, to keep fields to what it writes")
    src = p.add_argument_group("the tasks")
    src.add_argument("--benchmark", metavar="NAME",
                     help="the benchmark profile whose task enumerator reads --tasks (e.g. a package dir)")
    src.add_argument("--version", help="the benchmark version, e.g. 1.2.2 (default: the latest)")
    src.add_argument("--suite", action="append", default=[], help="suites (domains) to trace (default: all)")
    src.add_argument("--tasks", action="append", default=[], type=Path, metavar="PATH",
                     help="with --benchmark: what its enumerator reads; else a JSON task file")
    for profile in _enumerating_profiles():
        src.add_argument(
            f"--{profile.name}",
            dest="profile_tasks",
            action=_ProfileTasks,
            type=Path,
            metavar="DIR",
            default=[],
            help=f"same as --benchmark {profile.name} --tasks DIR",
        )
    src.add_argument("--toolkit", action="append", default=[], type=Path, metavar="FILE",
                     help="Python file whose classes hold the env-assertion methods")
    src.add_argument("--grader", action="append", default=[], metavar="ID=FILE:FUNC",
                     help="a configured task: its id and grader function")
    out = p.add_argument_group("output")
    out.add_argument("--ledger", type=Path, metavar="FILE", help="write the ledger as FILE.csv and FILE.json")
    out.add_argument("--report", type=Path, metavar="FILE", help="write a self-contained HTML report")
    out.add_argument("-q", "--quiet", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        tasks = collect_tasks(args)
        defect = defect_from_args(args, tasks)
    except TraceUsageError as exc:
        sys.stderr.write(f"toollint trace: error: {exc}\n")
        return EXIT_ERROR
    ledger = trace([defect], tasks, ModuleCache())
    for problem in ledger.problems:
        sys.stderr.write(f"toollint trace: warning: {problem}\n")
    for defect_id, reason in ledger.untraced.items():
        sys.stderr.write(f"toollint trace: warning: {defect_id}: nothing traced: {reason}\n")
    try:
        write_outputs(ledger, args.ledger, args.report)
    except TraceUsageError as exc:
        sys.stderr.write(f"toollint trace: error: {exc}\n")
        return EXIT_ERROR
    if not args.quiet:
        sys.stdout.write(summary(ledger))
    return EXIT_UNTRACED if ledger.untraced else EXIT_OK


def _enumerating_profiles() -> list[Profile]:
    return [p for p in all_profiles() if p.has_part("tasks")]


class _ProfileTasks(argparse.Action):
    """`--NAME DIR`: a (profile, dir) pair, as `--benchmark NAME --tasks DIR` gives."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        name = (option_string or "").removeprefix("--")
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), (name, values)])


def profile_sources(args: argparse.Namespace) -> list[tuple[Profile, Path]]:
    """(profile, path) for every task source its enumerator reads: `--NAME DIR` and `--benchmark`."""
    pairs: list[tuple[str, Path]] = list(getattr(args, "profile_tasks", []) or [])
    if args.benchmark:
        pairs += [(args.benchmark, t) for t in args.tasks]
    out = []
    for name, path in pairs:
        try:
            out.append((get_profile(name), path))
        except ProfileError as exc:
            raise TraceUsageError(f"--benchmark: {exc}") from None
    return out


def collect_tasks(args: argparse.Namespace) -> TaskSet:
    tasks = TaskSet()
    if args.benchmark and not args.tasks:
        raise TraceUsageError(f"--benchmark {args.benchmark} needs --tasks PATH (where its tasks are)")
    for profile, path in profile_sources(args):
        try:
            tasks.extend(profile_tasks(profile, path, args.version, tuple(args.suite)))
        except ValueError as exc:
            raise TraceUsageError(str(exc)) from None
    if args.tasks and not args.benchmark:
        tasks_problems: list = []
        methods = toolkit_methods(args.toolkit, ModuleCache(), tasks_problems)
        found = json_tasks(args.tasks, methods)
        found.problems[:0] = tasks_problems
        tasks.extend(found)
    if args.grader:
        mapping = {}
        for item in args.grader:
            task_id, sep, ref = item.partition("=")
            if not sep:
                raise TraceUsageError(f"--grader {item!r} is not ID=FILE:FUNCTION")
            mapping[task_id] = ref
        tasks.extend(configured_tasks(TraceSettings(tasks=mapping), Path.cwd()))
    if not tasks.tasks and not tasks.problems:
        raise TraceUsageError(
            "no tasks: give --benchmark NAME --tasks DIR, --tasks FILE or --grader ID=FILE:FUNC"
        )
    return tasks


def defect_from_args(args: argparse.Namespace, tasks: TaskSet | None = None) -> Defect:
    """The defect the options name; its paths in the snapshot's form the task set's profile gives."""
    tasks = tasks or TaskSet()
    if args.contract is not None:
        from toollint.contracts.loader import ContractError, load_contract

        try:
            contract = load_contract(args.contract)
        except (ContractError, OSError) as exc:
            raise TraceUsageError(f"{args.contract}: {exc}") from None
        clause = contract.clause(args.clause) if args.clause else None
        if clause is None:
            ids = ", ".join(c.id for c in contract.clauses)
            raise TraceUsageError(f"--clause {args.clause!r} is not in {args.contract} (clauses: {ids})")
        tool_file = args.tool_file or _tool_source(contract, tasks, profile_sources(args), args.toolkit)
        writes = tool_writes(tool_file, contract.qualname) if tool_file else ToolWrites()
        if tool_file is not None and not writes.line:
            raise TraceUsageError(f"{tool_file}: no tool {contract.qualname} in it (--tool-file)")
        writes = writes.canonical(tasks, contract.tool)
        try:
            defect = defect_from_clause(f"{contract.tool_name}:{clause.id}", contract.tool, clause, writes,
                                        contract.clauses_of("eff"), tool_file=str(tool_file or contract.path),
                                        tool_line=writes.line)
        except ValueError as exc:
            if args.field:
                defect = Defect(f"{contract.tool_name}:{clause.id}", contract.tool, clause.id, (),
                                str(tool_file or contract.path))
            else:
                raise TraceUsageError(f"{exc}; give --tool-file PATH (or --field PATH)") from None
        if args.field:
            defect = replace(defect, fields=tuple(tasks.canonical(contract.tool, args.field)), collections=())
        if not defect.fields:
            raise TraceUsageError(f"clause {clause.id} reads no state path; give --field")
        return defect
    if not args.tool or not args.field:
        raise TraceUsageError("give --tool and --field, or --contract and --clause")
    return Defect(f"{args.tool}:{args.clause or 'defect'}", args.tool, args.clause,
                  tuple(tasks.canonical(args.tool, args.field)), str(args.tool_file or ""))


def _tool_source(contract: Any, tasks: TaskSet, sources: Sequence[tuple[Profile, Path]],
                 toolkit: Sequence[Path] = ()) -> Path | None:
    """The contract's tool source: inside the benchmark package the tasks were read from, or the
    `--toolkit` file whose path ends in the contract's `source.file`."""
    if not contract.source.file:
        return None
    cited = Path(contract.source.file).parts
    for file in toolkit:
        if file.is_file() and file.resolve().parts[-len(cited):] == cited:
            return file
    if not contract.source.package:
        return None
    candidates = [tasks.package_dir] if tasks.package_dir is not None else []
    candidates += [path for profile, path in sources if profile.package == contract.source.package]
    for package in candidates:
        if package is not None and package.name == contract.source.package \
                and (package / contract.source.file).is_file():
            return package / contract.source.file
    for package in candidates:
        if package is not None and (package / contract.source.file).is_file():
            return package / contract.source.file
    return None


def write_outputs(ledger: Ledger, ledger_path: Path | None, report_path: Path | None,
                  findings: Sequence[Finding] = (), audit: GraderAudit | None = None) -> None:
    """Raises `TraceUsageError` (one line) when a file cannot be written. `audit`: the run's grader
    audit, a section of the report."""
    try:
        _write_outputs(ledger, ledger_path, report_path, findings, audit)
    except OSError as exc:
        raise TraceUsageError(f"cannot write {exc.filename or 'output'}: {exc.strerror or exc}") from None


def _write_outputs(ledger: Ledger, ledger_path: Path | None, report_path: Path | None,
                   findings: Sequence[Finding], audit: GraderAudit | None) -> None:
    from toollint import atomic

    if ledger_path is not None:
        ledger_path.parent.mkdir(parents=True, exist_ok=True)
        base = ledger_path.with_suffix("") if ledger_path.suffix in (".csv", ".json") else ledger_path
        atomic.write_text(base.with_name(base.name + ".csv"), ledger.csv_text())
        atomic.write_text(base.with_name(base.name + ".json"), json.dumps(ledger.to_json(), indent=2) + "\n")
    if report_path is not None:
        from toollint.trace.report_html import render_report

        report_path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(report_path, render_report(ledger, findings, audit))


def summary(ledger: Ledger) -> str:
    lines = []
    for d in ledger.defects:
        t = ledger.totals(d.id)
        per_basis = ", ".join(f"{t[b]} {b}" for b in BASES)
        if d.id in ledger.untraced:
            lines.append(f"{d.id}: nothing traced (see the warning)")
            continue
        line = f"{d.id}: {t['exposed']} of {t['traced']} tasks exposed ({per_basis})"
        if t["traced"] != ledger.tasks_traced:
            line += (
                f"; {ledger.tasks_traced - t['traced']} task(s) of environments without the tool not in scope"
            )
        lines.append(line)
    if ledger.ungrounded:
        lines.append(
            f"TL401 ungrounded-oracle: {len(ledger.ungrounded)} task(s) graded from the agent's calls only"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
